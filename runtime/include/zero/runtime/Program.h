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
#include <optional>
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

/// The blocks (and f32 scales) of n elements quantized in blocks of
/// `blockSize` consecutive elements, the last possibly shorter
/// (docs/Runtime.md, "Block quantization").
inline int64_t getNumBlocks(int64_t n, int64_t blockSize) {
  return (n + blockSize - 1) / blockSize;
}

/// The bytes of n quantized values of `bits` (4 or 8) bits.
inline int64_t getQuantizedBytes(int64_t n, int bits) {
  return (n * bits + 7) / 8;
}

/// The bytes of the f32 scales of n elements' blocks: where their quantized
/// values start in their packed bytes.
inline int64_t getPackedScaleBytes(int64_t n, int64_t blockSize) {
  return 4 * getNumBlocks(n, blockSize);
}

/// The bytes of n elements packed as one operand of a quantized collective:
/// the f32 scales of their blocks, then their quantized values
/// (docs/ScheduleFormat.md, "Quantized all-gathers").
inline int64_t getPackedBytes(int64_t n, int bits, int64_t blockSize) {
  return getPackedScaleBytes(n, blockSize) + getQuantizedBytes(n, bits);
}

/// How a tensor value is stored block-quantized (its `quantized`, version
/// 3: a frozen parameter under ZeRO++'s zero_quantized_nontrainable_weights).
struct QuantizedStorage {
  int64_t bits = 8;
  int64_t blockSize = 1;

  bool operator==(const QuantizedStorage &other) const {
    return bits == other.bits && blockSize == other.blockSize;
  }
  bool operator!=(const QuantizedStorage &other) const {
    return !(*this == other);
  }
};

struct ValueInfo {
  int64_t id = -1;
  bool isTensor = false;
  DType dtype = DType::F32;
  std::vector<int64_t> shape; // tensors only
  int64_t numel = 1;          // product of shape; 1 for scalars
  int64_t buffer = -1;        // tensors only: index into the buffer table
  std::string name;           // the SSA name, for messages
  /// Set when the tensor's bytes are its elements packed block-quantized
  /// (getPackedBytes) instead of `dtype` elements.
  std::optional<QuantizedStorage> quantized;

  /// Bytes of a tensor in memory: its elements, or their packed quantized
  /// form. The decoder refuses more than kMaxScheduleSize (2^50) elements,
  /// so this does not overflow.
  int64_t bytes() const {
    return quantized ? getPackedBytes(numel, static_cast<int>(quantized->bits),
                                      quantized->blockSize)
                     : numel * getDTypeWidth(dtype);
  }
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

/// The elements of float tensor `value` as fp32 from its bytes `stored`
/// (value.bytes() of them): dequantized and rounded to its dtype where it is
/// stored quantized.
std::vector<float> loadValueFloats(const ValueInfo &value, const void *stored);
/// The inverse: `values` (value.numel of them) rounded to the value's dtype
/// into `stored` (value.bytes()), then block-quantized where it is stored
/// quantized, so that the packed bytes are those of the dtype's elements.
void storeValueFloats(const float *values, const ValueInfo &value,
                      void *stored);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_PROGRAM_H
