//===- Elements.h - tensor elements as scalar registers ---------*- C++ -*-===//
//
// Converts between a tensor's memory format (f32 float, f64 double, bf16/f16
// uint16 bits, i64/index int64, i32 int32, i1 one byte) and the register form
// of a Scalar: floats as doubles already rounded to their type, integers as
// int64 wrapped to their width (i1 as 0 or 1, i32 sign-extended).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_ELEMENTS_H
#define ZERO_RUNTIME_HOST_ELEMENTS_H

#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::host {

/// Rounds a double to the float type `type` (exact for f64).
inline double roundFloat(double value, DType type) {
  switch (type) {
  case DType::F32:
    return static_cast<double>(static_cast<float>(value));
  case DType::BF16:
    return bf16ToFloat(roundToBF16(value));
  case DType::F16:
    return f16ToDouble(roundToF16(value));
  default:
    return value;
  }
}

/// Wraps an integer to the width of `type` in register form.
inline int64_t wrapInt(int64_t value, DType type) {
  switch (type) {
  case DType::I1:
    return value & 1;
  case DType::I32:
    return static_cast<int32_t>(static_cast<uint32_t>(value));
  default:
    return value;
  }
}

/// A register's value in the canonical form of `type`.
inline Scalar canonicalize(Scalar value, DType type) {
  if (isFloat(type))
    value.f = roundFloat(value.f, type);
  else
    value.i = wrapInt(value.i, type);
  return value;
}

inline Scalar loadElement(const void *data, DType type, int64_t index) {
  Scalar value{};
  switch (type) {
  case DType::F32:
    value.f = static_cast<const float *>(data)[index];
    break;
  case DType::F64:
    value.f = static_cast<const double *>(data)[index];
    break;
  case DType::BF16:
    value.f = bf16ToFloat(static_cast<const uint16_t *>(data)[index]);
    break;
  case DType::F16:
    value.f = f16ToDouble(static_cast<const uint16_t *>(data)[index]);
    break;
  case DType::I64:
  case DType::Index:
    value.i = static_cast<const int64_t *>(data)[index];
    break;
  case DType::I32:
    value.i = static_cast<const int32_t *>(data)[index];
    break;
  case DType::I1:
    value.i = static_cast<const uint8_t *>(data)[index] != 0;
    break;
  }
  return value;
}

/// Stores a register that is already in the canonical form of `type`.
inline void storeElement(void *data, DType type, int64_t index, Scalar value) {
  switch (type) {
  case DType::F32:
    static_cast<float *>(data)[index] = static_cast<float>(value.f);
    break;
  case DType::F64:
    static_cast<double *>(data)[index] = value.f;
    break;
  case DType::BF16: // exact: the value is a bf16 already
    static_cast<uint16_t *>(data)[index] =
        floatToBF16(static_cast<float>(value.f));
    break;
  case DType::F16:
    static_cast<uint16_t *>(data)[index] = roundToF16(value.f);
    break;
  case DType::I64:
  case DType::Index:
    static_cast<int64_t *>(data)[index] = value.i;
    break;
  case DType::I32:
    static_cast<int32_t *>(data)[index] = static_cast<int32_t>(value.i);
    break;
  case DType::I1:
    static_cast<uint8_t *>(data)[index] = static_cast<uint8_t>(value.i & 1);
    break;
  }
}

/// Converts elements [begin, begin + count) of a float tensor to f32 (f64
/// rounds), and back (rounding to the tensor's type).
void loadFloats(const void *data, DType type, int64_t begin, int64_t count,
                float *out);
void storeFloats(void *data, DType type, int64_t begin, int64_t count,
                 const float *in);

/// Loads `count` elements into registers: element `offsets[k]` when
/// `offsets` is given, else element `start + k`.
void loadColumn(const void *data, DType type, const int64_t *offsets,
                int64_t start, int64_t count, Scalar *out);
/// Stores `count` canonical registers, addressed like loadColumn.
void storeColumn(void *data, DType type, const int64_t *offsets, int64_t start,
                 int64_t count, const Scalar *in);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_ELEMENTS_H
