//===- Program.h - element types and values of a schedule -------*- C++ -*-===//
//
// The pieces of a loaded schedule (docs/ScheduleFormat.md) that the decoder,
// the executor and every backend share: element types, scalar registers and
// the table of values.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_PROGRAM_H
#define ZERO_RUNTIME_PROGRAM_H

#include "zero/runtime/Status.h"

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

  /// Bytes of a tensor's elements in memory. The decoder refuses more than
  /// kMaxScheduleSize (2^50) elements, so this does not overflow.
  int64_t bytes() const { return numel * getDTypeWidth(dtype); }
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

  int64_t bytes() const { return numel * getDTypeWidth(dtype); }
};

/// dst[offset + i] = values[i] in the tensor's float type, bf16 and f16
/// rounded to nearest even.
void storeFloats(const float *values, int64_t count, TensorRef dst,
                 int64_t offset = 0);
/// The first `count` elements of a float tensor as fp32.
std::vector<float> loadFloats(TensorRef src, int64_t count);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_PROGRAM_H
