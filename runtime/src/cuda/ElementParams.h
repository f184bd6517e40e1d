//===- ElementParams.h - tensor.extract as its kernel takes it --*- C++ -*-===//
//
// Plain C++, shared by TensorOps.cu and its kernel (ElementKernels.cuh),
// which a test also compiles for the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_ELEMENTPARAMS_H
#define ZERO_RUNTIME_CUDA_ELEMENTPARAMS_H

#include "DeviceErrorRecord.h"

#include "zero/runtime/Program.h"

#include <cstdint>
#include <vector>

namespace zero::runtime::cuda {

/// tensor.extract's parameters; its table in device memory holds, per
/// dimension, its size, its row-major stride and the register of its index.
struct ExtractParams {
  const void *tensor;
  DType type;
  int rank;
  const int64_t *table; // sizes, then strides, then index registers
  int64_t result;
  DeviceErrorRecord *errors;
  int32_t site;
  long long step;
};

/// The table of an extract from a tensor of `shape` at the index registers
/// `indices`.
std::vector<int64_t> getExtractTable(const std::vector<int64_t> &shape,
                                     const std::vector<int64_t> &indices);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_ELEMENTPARAMS_H
