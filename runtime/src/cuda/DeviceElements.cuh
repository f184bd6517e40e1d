//===- DeviceElements.cuh - tensor elements on the GPU ---------*- CUDA -*-===//
//
// The device side of host/Elements.h and host/ScalarOps.cpp's conversions:
// a tensor element in memory (f32, f64, bf16/f16 bits, i64/index, i32, i1
// byte) to and from the register form of a Scalar (floats as doubles
// already rounded to their type, integers as int64 wrapped to their width),
// and the casts linalg.fill, linalg.copy and the matmul fallback apply.
// Rounding from double is a single round-to-nearest-even (cvt.rn from f64),
// so these agree with the host bit for bit; NaNs stay NaN but may differ in
// sign or payload.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_DEVICEELEMENTS_CUH
#define ZERO_RUNTIME_CUDA_DEVICEELEMENTS_CUH

#include "CudaOps.h"

#include "zero/runtime/Program.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace zero::runtime::cuda {

__host__ __device__ constexpr bool isFloatType(DType type) {
  return type == DType::F32 || type == DType::F64 || type == DType::BF16 ||
         type == DType::F16;
}

__host__ __device__ constexpr int bitWidthOf(DType type) {
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

__host__ __device__ constexpr int byteWidthOf(DType type) {
  return type == DType::I1 ? 1 : bitWidthOf(type) / 8;
}

__device__ __forceinline__ double bf16BitsToDouble(uint16_t bits) {
  return static_cast<double>(
      __uint_as_float(static_cast<uint32_t>(bits) << 16));
}
__device__ __forceinline__ double f16BitsToDouble(uint16_t bits) {
  return static_cast<double>(__half2float(__ushort_as_half(bits)));
}
__device__ __forceinline__ uint16_t doubleToBF16Bits(double value) {
  return __bfloat16_as_ushort(__double2bfloat16(value));
}
__device__ __forceinline__ uint16_t doubleToF16Bits(double value) {
  return __half_as_ushort(__double2half(value));
}

/// Rounds a double to the float type `type` (exact for f64).
__device__ __forceinline__ double roundFloat(double value, DType type) {
  switch (type) {
  case DType::F32:
    return static_cast<double>(__double2float_rn(value));
  case DType::BF16:
    return bf16BitsToDouble(doubleToBF16Bits(value));
  case DType::F16:
    return f16BitsToDouble(doubleToF16Bits(value));
  default:
    return value;
  }
}

/// Wraps an integer to the width of `type` in register form.
__device__ __forceinline__ long long wrapInt(long long value, DType type) {
  switch (type) {
  case DType::I1:
    return value & 1;
  case DType::I32:
    return static_cast<int32_t>(static_cast<uint32_t>(value));
  default:
    return value;
  }
}

/// The signed value of a canonical integer register (i1 true is -1).
__device__ __forceinline__ long long toSigned(long long value, DType type) {
  return type == DType::I1 ? -(value & 1) : value;
}

__device__ __forceinline__ unsigned long long toUnsigned(long long value,
                                                         DType type) {
  switch (type) {
  case DType::I1:
    return static_cast<unsigned long long>(value & 1);
  case DType::I32:
    return static_cast<uint32_t>(value);
  default:
    return static_cast<unsigned long long>(value);
  }
}

/// fptosi saturates (LLVM leaves it undefined; the host saturates).
__device__ __forceinline__ long long floatToSigned(double value, int width) {
  if (isnan(value))
    return 0;
  const double truncated = trunc(value);
  const double lo = -ldexp(1.0, width - 1);
  const double hi = ldexp(1.0, width - 1); // exclusive
  if (truncated <= lo)
    return width == 64 ? INT64_MIN : static_cast<long long>(lo);
  if (truncated >= hi)
    return width == 64 ? INT64_MAX : static_cast<long long>(hi) - 1;
  return static_cast<long long>(truncated);
}

__device__ __forceinline__ unsigned long long floatToUnsigned(double value,
                                                              int width) {
  if (isnan(value) || value <= 0)
    return 0;
  const double truncated = trunc(value);
  const double hi = ldexp(1.0, width); // exclusive
  if (truncated >= hi)
    return width == 64 ? UINT64_MAX : (1ull << width) - 1;
  return static_cast<unsigned long long>(truncated);
}

__device__ __forceinline__ Scalar loadElement(const void *data, DType type,
                                              int64_t index) {
  Scalar value;
  value.i = 0;
  switch (type) {
  case DType::F32:
    value.f = static_cast<const float *>(data)[index];
    break;
  case DType::F64:
    value.f = static_cast<const double *>(data)[index];
    break;
  case DType::BF16:
    value.f = bf16BitsToDouble(static_cast<const uint16_t *>(data)[index]);
    break;
  case DType::F16:
    value.f = f16BitsToDouble(static_cast<const uint16_t *>(data)[index]);
    break;
  case DType::I64:
  case DType::Index:
    value.i = static_cast<const long long *>(data)[index];
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

/// The memory bits (the low byteWidthOf(type) bytes) of a canonical
/// register.
__device__ __forceinline__ uint64_t elementBits(Scalar value, DType type) {
  switch (type) {
  case DType::F32:
    return __float_as_uint(__double2float_rn(value.f));
  case DType::F64:
    return static_cast<uint64_t>(__double_as_longlong(value.f));
  case DType::BF16:
    return doubleToBF16Bits(value.f);
  case DType::F16:
    return doubleToF16Bits(value.f);
  case DType::I32:
    return static_cast<uint32_t>(value.i);
  case DType::I1:
    return static_cast<uint64_t>(value.i & 1);
  default:
    return static_cast<uint64_t>(value.i);
  }
}

/// Stores a register that is already in the canonical form of `type`.
__device__ __forceinline__ void storeElement(void *data, DType type,
                                             int64_t index, Scalar value) {
  switch (type) {
  case DType::F32:
    static_cast<float *>(data)[index] = __double2float_rn(value.f);
    break;
  case DType::F64:
    static_cast<double *>(data)[index] = value.f;
    break;
  case DType::BF16:
    static_cast<uint16_t *>(data)[index] = doubleToBF16Bits(value.f);
    break;
  case DType::F16:
    static_cast<uint16_t *>(data)[index] = doubleToF16Bits(value.f);
    break;
  case DType::I64:
  case DType::Index:
    static_cast<long long *>(data)[index] = value.i;
    break;
  case DType::I32:
    static_cast<int32_t *>(data)[index] = static_cast<int32_t>(value.i);
    break;
  case DType::I1:
    static_cast<uint8_t *>(data)[index] = static_cast<uint8_t>(value.i & 1);
    break;
  }
}

/// host castScalar: linalg's implicit casts (signed integers), used by
/// linalg.fill, linalg.copy and the matmul fallback.
__device__ __forceinline__ Scalar castScalar(Scalar value, DType from,
                                             DType to) {
  Scalar result;
  if (isFloatType(from) && isFloatType(to)) {
    result.f = roundFloat(value.f, to);
  } else if (isFloatType(from)) {
    result.i = wrapInt(floatToSigned(value.f, bitWidthOf(to)), to);
  } else if (isFloatType(to)) {
    const long long x = toSigned(value.i, from);
    // The host rounds int64 -> f32 directly, other types through double.
    result.f = to == DType::F32 ? static_cast<double>(__ll2float_rn(x))
                                : roundFloat(__ll2double_rn(x), to);
  } else {
    result.i = wrapInt(toSigned(value.i, from), to);
  }
  return result;
}

/// Claims the device error record for the first failing thread.
__device__ __forceinline__ void raiseDeviceError(DeviceErrorRecord *record,
                                                 int32_t site, int32_t dim,
                                                 long long value,
                                                 long long step) {
  if (atomicCAS(&record->flag, 0ull, 1ull) == 0ull) {
    record->site = site;
    record->dim = dim;
    record->value = value;
    record->step = step;
    __threadfence_system();
  }
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_DEVICEELEMENTS_CUH
