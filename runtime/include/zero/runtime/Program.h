//===- Program.h - values, frames and compute ops of a schedule -*- C++ -*-===//
//
// The pieces of a loaded schedule (docs/ScheduleFormat.md) that the executor
// and the compute kernels share: element types, the table of values, the
// frame holding a rank's tensors and scalar registers during a step, and the
// interface of a compute op prepared from one instruction.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_PROGRAM_H
#define ZERO_RUNTIME_PROGRAM_H

#include "zero/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace zero::runtime {

/// Element types of the schedule ("f32", "bf16", ...).
enum class DType { F32, F64, BF16, F16, I64, I32, I1, Index };

/// Parses a schedule dtype name; an error names `path` and the bad name.
StatusOr<DType> parseDType(std::string_view name, const std::string &path);
const char *getDTypeName(DType type);
/// Bytes of one element in memory (i1: 1, index: 8).
int64_t getDTypeWidth(DType type);
bool isFloat(DType type);

/// A scalar register. Floats of every width are held as double, already
/// rounded to their type; integers (i1, i32, i64, index) as int64.
union Scalar {
  double f;
  int64_t i;
};

struct ValueInfo {
  int64_t id = -1;
  bool isTensor = false;
  DType dtype = DType::F32;
  std::vector<int64_t> shape; // tensors only
  int64_t numel = 1;          // product of shape; 1 for scalars
  int64_t buffer = -1;        // tensors only: index into the buffer table
  std::string name;           // the SSA name, for messages
};

/// Every value of the schedule by id (ids are dense: 0 .. size-1).
class ValueTable {
public:
  /// Null when `id` is not a value of the schedule.
  const ValueInfo *lookup(int64_t id) const {
    return id >= 0 && id < static_cast<int64_t>(values.size()) &&
                   values[id].id == id
               ? &values[id]
               : nullptr;
  }
  std::vector<ValueInfo> values;
};

/// A tensor resolved to memory.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::F32;
  const std::vector<int64_t> *shape = nullptr;
  int64_t numel = 0;
};

/// The state of one rank while a step runs: where each tensor value lives
/// (its buffer's offset in the arena of its space) and the scalar registers.
/// Owned by the executor; compute ops only read and write through it.
class Frame {
public:
  virtual ~Frame() = default;
  virtual TensorRef tensor(int64_t id) = 0;
  virtual Scalar &scalar(int64_t id) = 0;
  virtual int rank() const = 0;
  virtual int worldSize() const = 0;
};

/// One compute instruction, checked and prepared once at load time and run
/// once per step.
class ComputeOp {
public:
  virtual ~ComputeOp() = default;
  virtual Status run(Frame &frame) = 0;
};

/// Prepares the compute instruction `instruction` (an element of
/// `instructions.compute` whose "op" is not "record", "wait" or "free"):
/// checks its op name, operand and result kinds, dtypes, shapes and
/// op-specific fields (docs/ScheduleFormat.md, "Compute ops"), including its
/// body, against `values`. An error names `path` (for example
/// "instructions.compute[12]") and the field, and the instruction's "loc".
StatusOr<std::unique_ptr<ComputeOp>>
prepareComputeOp(const nlohmann::json &instruction, const std::string &path,
                 const ValueTable &values);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_PROGRAM_H
