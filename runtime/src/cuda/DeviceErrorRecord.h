//===- DeviceErrorRecord.h - the device's error record ----------*- C++ -*-===//
//
// Plain data (no CUDA header), for the host's DeviceErrors (CudaOps.h) and
// the kernels that raise an error (DeviceErrors.cuh).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_DEVICEERRORRECORD_H
#define ZERO_RUNTIME_CUDA_DEVICEERRORRECORD_H

#include <cstdint>

namespace zero::runtime::cuda {

/// One word in device memory that the first failing kernel claims (an index
/// out of range, a step below 1); Device::synchronize turns it into the
/// message the host gives at the same place.
struct DeviceErrorRecord {
  unsigned long long flag; // 0: no error; claimed with atomicCAS
  int32_t site;            // DeviceErrors::addSite
  int32_t dim;
  long long value;
  long long step;
};

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_DEVICEERRORRECORD_H
