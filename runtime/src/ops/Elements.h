//===- Elements.h - tensor elements as scalar registers ---------*- C++ -*-===//
//
// ElementMath.h by element type: converts between a tensor's memory format
// (f32 float, f64 double, bf16/f16 uint16 bits, i64/index int64, i32 int32,
// i1 one byte) and the register form of a Scalar, and applies linalg's
// implicit casts. The host backend and the CUDA backend's .cu files both use
// these (ZERO_HD), so an element is read, rounded and written one way.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_ELEMENTS_H
#define ZERO_RUNTIME_OPS_ELEMENTS_H

#include "ElementMath.h"

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::ops {

ZERO_HD constexpr bool isFloatType(DType type) {
  return type == DType::F32 || type == DType::F64 || type == DType::BF16 ||
         type == DType::F16;
}

/// The bits of a register's value: 1 (i1), 16, 32 or 64 (i64, index, f64).
ZERO_HD constexpr int bitWidthOf(DType type) {
  switch (type) {
  case DType::I1:
    return 1;
  case DType::BF16:
  case DType::F16:
    return 16;
  case DType::F32:
  case DType::I32:
    return 32;
  default:
    return 64;
  }
}

/// Rounds a double to the float type `type` (exact for f64).
ZERO_HD_INLINE double roundFloat(double value, DType type) {
  switch (type) {
  case DType::F32:
    return roundF32(value);
  case DType::BF16:
    return roundBF16(value);
  case DType::F16:
    return roundF16(value);
  default:
    return value;
  }
}

/// Wraps an integer to the width of `type` in register form.
ZERO_HD_INLINE long long wrapInt(long long value, DType type) {
  return wrapInt(value, bitWidthOf(type));
}

/// A register's value in the canonical form of `type`.
ZERO_HD_INLINE Scalar canonicalize(Scalar value, DType type) {
  if (isFloatType(type))
    value.f = roundFloat(value.f, type);
  else
    value.i = wrapInt(value.i, type);
  return value;
}

ZERO_HD_INLINE Scalar loadElement(const void *data, DType type,
                                  int64_t index) {
  Scalar value;
  value.i = 0;
  switch (type) {
  case DType::F32:
    value.f = loadF32(static_cast<const float *>(data), index);
    break;
  case DType::F64:
    value.f = loadF64(static_cast<const double *>(data), index);
    break;
  case DType::BF16:
    value.f = loadBF16(static_cast<const unsigned short *>(data), index);
    break;
  case DType::F16:
    value.f = loadF16(static_cast<const unsigned short *>(data), index);
    break;
  case DType::I64:
  case DType::Index:
    value.i = loadI64(static_cast<const long long *>(data), index);
    break;
  case DType::I32:
    value.i = loadI32(static_cast<const int *>(data), index);
    break;
  case DType::I1:
    value.i = loadI1(static_cast<const unsigned char *>(data), index);
    break;
  }
  return value;
}

/// Stores a register that is already in the canonical form of `type`.
ZERO_HD_INLINE void storeElement(void *data, DType type, int64_t index,
                                 Scalar value) {
  switch (type) {
  case DType::F32:
    storeF32(static_cast<float *>(data), index, value.f);
    break;
  case DType::F64:
    storeF64(static_cast<double *>(data), index, value.f);
    break;
  case DType::BF16:
    storeBF16(static_cast<unsigned short *>(data), index, value.f);
    break;
  case DType::F16:
    storeF16(static_cast<unsigned short *>(data), index, value.f);
    break;
  case DType::I64:
  case DType::Index:
    storeI64(static_cast<long long *>(data), index, value.i);
    break;
  case DType::I32:
    storeI32(static_cast<int *>(data), index, value.i);
    break;
  case DType::I1:
    storeI1(static_cast<unsigned char *>(data), index, value.i);
    break;
  }
}

/// Whether element `index` of a float tensor is an infinity or a NaN: all
/// its exponent bits set (zero.any_nonfinite). Read as bits, so that no
/// conversion and no compiler's floating-point mode can change the answer.
ZERO_HD_INLINE bool isNonFiniteElement(const void *data, DType type,
                                       int64_t index) {
  switch (type) {
  case DType::F32:
    return (static_cast<const uint32_t *>(data)[index] & 0x7f800000u) ==
           0x7f800000u;
  case DType::F64:
    return (static_cast<const uint64_t *>(data)[index] &
            0x7ff0000000000000ull) == 0x7ff0000000000000ull;
  case DType::BF16:
    return (static_cast<const uint16_t *>(data)[index] & 0x7f80u) == 0x7f80u;
  case DType::F16:
    return (static_cast<const uint16_t *>(data)[index] & 0x7c00u) == 0x7c00u;
  default:
    return false;
  }
}

/// The memory bits (the low bitWidthOf(type) bits, i1 a byte) of a
/// canonical register.
ZERO_HD_INLINE uint64_t elementBits(Scalar value, DType type) {
  switch (type) {
  case DType::F32:
    return bitsOfFloat(static_cast<float>(value.f));
  case DType::F64:
    return bitsOfDouble(value.f);
  case DType::BF16:
    return narrowF32ToBF16(static_cast<float>(value.f));
  case DType::F16:
    return narrowToF16(value.f);
  case DType::I32:
    return static_cast<uint32_t>(value.i);
  case DType::I1:
    return static_cast<uint64_t>(value.i & 1);
  default:
    return static_cast<uint64_t>(value.i);
  }
}

/// A signed integer's float value of `type`: f32 rounds once from the
/// integer, the other types from its double.
ZERO_HD_INLINE double signedToFloat(long long x, DType type) {
  return type == DType::F32
             ? static_cast<double>(static_cast<float>(x))
             : roundFloat(static_cast<double>(x), type);
}
ZERO_HD_INLINE double unsignedToFloat(unsigned long long x, DType type) {
  return type == DType::F32
             ? static_cast<double>(static_cast<float>(x))
             : roundFloat(static_cast<double>(x), type);
}

/// Converts a register of type `from` to `to` the way linalg's implicit
/// casts do (signed integers): linalg.fill, linalg.copy and the matmuls.
ZERO_HD_INLINE Scalar castScalar(Scalar value, DType from, DType to) {
  Scalar result;
  result.i = 0;
  if (isFloatType(from) && isFloatType(to))
    result.f = roundFloat(value.f, to);
  else if (isFloatType(from))
    result.i = wrapInt(floatToSigned(value.f, bitWidthOf(to)), to);
  else if (isFloatType(to))
    result.f = signedToFloat(toSigned(value.i, bitWidthOf(from)), to);
  else
    result.i = wrapInt(toSigned(value.i, bitWidthOf(from)), to);
  return result;
}

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_ELEMENTS_H
