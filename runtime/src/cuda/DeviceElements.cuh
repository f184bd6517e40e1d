//===- DeviceElements.cuh - tensor elements on the GPU ---------*- CUDA -*-===//
//
// The kernels' view of ops/Elements.h (the element conversions and casts the
// host backend compiles too), and the device's error record.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_DEVICEELEMENTS_CUH
#define ZERO_RUNTIME_CUDA_DEVICEELEMENTS_CUH

#include "CudaOps.h"
#include "DeviceErrors.cuh"

#include "ops/Elements.h"

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::cuda {

using ops::bitWidthOf;
using ops::castScalar;
using ops::elementBits;
using ops::floatToSigned;
using ops::floatToUnsigned;
using ops::isFloatType;
using ops::loadElement;
using ops::roundFloat;
using ops::storeElement;
using ops::toSigned;
using ops::toUnsigned;
using ops::wrapInt;

__host__ __device__ constexpr int byteWidthOf(DType type) {
  return type == DType::I1 ? 1 : bitWidthOf(type) / 8;
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_DEVICEELEMENTS_CUH
