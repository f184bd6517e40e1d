//===- OpContext.h - checking one instruction of a schedule -----*- C++ -*-===//
//
// Checks one decoded instruction (or one op of a body) and turns every
// problem into a Status that names the JSON path, the field and the source
// location, for example
//   instructions.compute[12].operands[1]: expected a tensor, got scalar value
//   4 (%x) at model.mlir:3:4
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_OPCONTEXT_H
#define ZERO_RUNTIME_OPS_OPCONTEXT_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Status.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace zero::runtime::ops {

/// "[4, 8]".
std::string formatShape(const std::vector<int64_t> &shape);
/// "value 17 (%mapped_6)".
std::string describeValue(const ValueInfo &value);
int64_t getNumel(const std::vector<int64_t> &shape);

/// Where an op is, kept to report errors found while it runs (a data-dependent
/// index, a step count): "<path>[.<field>]: <message> at <loc>".
struct OpSite {
  std::string path;
  std::string loc;
  Status error(StatusCode code, const std::string &field,
               const std::string &message) const;
};

class OpContext {
public:
  /// `op` may be null for what is not an op (a body's yield), which `what`
  /// then names in messages.
  OpContext(const OpRecord *op, std::string path, std::string loc,
            const ValueTable &values, std::string what = "")
      : op_(op), path_(std::move(path)), loc_(std::move(loc)), values_(values),
        what_(std::move(what)) {}

  const OpRecord &op() const { return *op_; }
  const OpFields &fields() const { return op_->fields; }
  const std::string &path() const { return path_; }
  const std::string &loc() const { return loc_; }
  const ValueTable &values() const { return values_; }
  /// The op name ("linalg.matmul"), or what the object is.
  std::string name() const;

  /// "<path>[.<field>]: <message> at <loc>" as an InvalidArgument Status.
  Status error(const std::string &field, const std::string &message) const;
  OpSite site() const { return {path_, loc_}; }

  /// The values listed under "operands" or "results".
  StatusOr<std::vector<const ValueInfo *>> getValues(const char *key) const;
  Status expectCount(const char *key,
                     const std::vector<const ValueInfo *> &list,
                     size_t count) const;
  Status expectTensor(const char *key, size_t index,
                      const ValueInfo &value) const;
  Status expectScalar(const char *key, size_t index,
                      const ValueInfo &value) const;
  Status expectDType(const char *key, size_t index, const ValueInfo &value,
                     DType dtype) const;
  Status expectShape(const char *key, size_t index, const ValueInfo &value,
                     const std::vector<int64_t> &shape) const;

  // The op's decoded fields by name (the decoder checked their presence and
  // kinds against OpSet.h).
  StatusOr<int64_t> getInt(const char *key) const;
  StatusOr<double> getNumber(const char *key) const;
  StatusOr<bool> getBool(const char *key) const;
  StatusOr<std::string> getString(const char *key) const;
  StatusOr<std::vector<int64_t>> getIntList(const char *key) const;
  StatusOr<std::vector<std::vector<int64_t>>>
  getIntListList(const char *key) const;
  /// `list` must be a permutation of 0 .. size-1 (`what` names it).
  Status expectPermutation(const char *key,
                           const std::vector<int64_t> &list) const;

private:
  /// The field named `key` of the op, or an error naming it.
  StatusOr<Field> getField(const char *key) const;

  const OpRecord *op_;
  std::string path_;
  std::string loc_;
  const ValueTable &values_;
  std::string what_;
};

/// The operands and results of an instruction, each defined.
struct OpValues {
  std::vector<const ValueInfo *> operands;
  std::vector<const ValueInfo *> results;
};
StatusOr<OpValues> getOpValues(const OpContext &ctx);

/// Declares `const OpValues &var` or returns the error.
#define ZERO_ASSIGN_VALUES(var, ctx)                                           \
  StatusOr<::zero::runtime::ops::OpValues> var##OrError =                     \
      ::zero::runtime::ops::getOpValues(ctx);                                  \
  if (!var##OrError.isOk())                                                    \
    return var##OrError.status();                                              \
  const ::zero::runtime::ops::OpValues &var = *var##OrError

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_OPCONTEXT_H
