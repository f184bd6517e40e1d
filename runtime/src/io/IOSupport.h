//===- IOSupport.h - shared pieces of the IO units --------------*- C++ -*-===//
//
// Private to runtime/src/io: errno to Status, and the host's byte order (the
// file formats are little-endian).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SRC_IO_IOSUPPORT_H
#define ZERO_RUNTIME_SRC_IO_IOSUPPORT_H

#include "zero/runtime/Status.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace zero::runtime::io {

/// A failed open, from errno: "<path>: <what>: <strerror>", not-found for a
/// missing file. Reads errno before anything can change it.
inline Status openError(const std::string &path, const char *what) {
  int error = errno;
  return Status(
      error == ENOENT ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
      path + ": " + what + ": " + std::strerror(error), __FILE__, __LINE__);
}

/// A failed file system call, from `error` (an errno value): "<path>:
/// <what>: <strerror>", resource-exhausted for a full disk or quota,
/// not-found for a missing file.
inline Status errnoError(const std::string &path, const std::string &what,
                         int error) {
  StatusCode code = error == ENOSPC || error == EDQUOT
                        ? StatusCode::kResourceExhausted
                    : error == ENOENT ? StatusCode::kNotFound
                                      : StatusCode::kInvalidArgument;
  return Status(code, path + ": " + what + ": " + std::strerror(error),
                __FILE__, __LINE__);
}

/// A failed write, flush or close, from errno (set to 0 before the call;
/// stdio does not always set it): resource-exhausted for a full disk or
/// quota.
inline Status writeError(const std::string &path, const char *what) {
  int error = errno ? errno : EIO;
  return Status(error == ENOSPC || error == EDQUOT || error == EFBIG
                    ? StatusCode::kResourceExhausted
                    : StatusCode::kUnavailable,
                path + ": " + what + ": " + std::strerror(error), __FILE__,
                __LINE__);
}

inline bool hostIsLittleEndian() {
  const uint32_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

} // namespace zero::runtime::io

#endif // ZERO_RUNTIME_SRC_IO_IOSUPPORT_H
