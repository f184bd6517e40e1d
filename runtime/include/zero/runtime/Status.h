//===- Status.h - errors as values ------------------------------*- C++ -*-===//
//
// Library code never prints or exits: every fallible call returns a Status
// (or a StatusOr<T>) that carries a message and the source position where the
// error arose. Tools decide how to report it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_STATUS_H
#define ZERO_RUNTIME_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace zero::runtime {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument, // malformed input: schedule, data, checkpoint
  kNotFound,        // a file or a named entry that is missing
  kOutOfRange,      // a value outside what the input allows
  kResourceExhausted, // memory, disk
  kFailedPrecondition, // inputs that disagree with each other
  kUnavailable,     // a peer rank or device that stopped answering
  kInternal,
};

const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message, const char *file = nullptr,
         int line = 0)
      : code_(code), message_(std::move(message)), file_(file), line_(line) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  const char *file() const { return file_; }
  int line() const { return line_; }

  /// "<code>: <message> (<file>:<line>)".
  std::string toString() const;

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  const char *file_ = nullptr;
  int line_ = 0;
};

/// A value or the error that prevented it.
template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(Status status) : status_(std::move(status)) {}
  StatusOr(T value) : value_(std::move(value)) {}

  bool isOk() const { return status_.isOk(); }
  const Status &status() const { return status_; }
  T &value() { return *value_; }
  const T &value() const { return *value_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  Status status_;
  std::optional<T> value_;
};

} // namespace zero::runtime

#define ZERO_ERROR(code, message)                                              \
  ::zero::runtime::Status(::zero::runtime::StatusCode::code, (message),        \
                          __FILE__, __LINE__)

#define ZERO_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::zero::runtime::Status zeroStatus_ = (expr);                              \
    if (!zeroStatus_.isOk())                                                   \
      return zeroStatus_;                                                      \
  } while (false)

#endif // ZERO_RUNTIME_STATUS_H
