//===- DeviceErrors.cuh - raising the device's error ------------*- CUDA
//-*-===//
//
// Device code with no CUDA header (tests compile it for the CPU too,
// runtime/test/cuda/KernelsOnCpu.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_DEVICEERRORS_CUH
#define ZERO_RUNTIME_CUDA_DEVICEERRORS_CUH

#include "DeviceErrorRecord.h"

namespace zero::runtime::cuda {

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

#endif // ZERO_RUNTIME_CUDA_DEVICEERRORS_CUH
