//===- DeviceElements.cuh - tensor elements on the GPU ---------*- CUDA -*-===//
//
// The kernels' view of ops/Elements.h (the element conversions and casts the
// host backend compiles too), and the device's error record.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_DEVICEELEMENTS_CUH
#define ZERO_RUNTIME_CUDA_DEVICEELEMENTS_CUH

#include "CudaOps.h"

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
