//===- ElementKernels.cuh - kernels of single elements ----------*- CUDA
//-*-===//
//
// TensorOps.cu's kernels between registers and tensor elements, each the
// host's element function (ops/Elements.h): tensor.from_elements from
// registers, and tensor.extract into a register, its indices checked
// against the tensor and one out of range raised through the device error
// record. Device code with no CUDA header: nvcc compiles it in
// TensorOps.cu, and ElementKernelsOnCpuTest with the host compiler for the
// CPU (runtime/test/cuda/KernelsOnCpu.h), against the host's step.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_ELEMENTKERNELS_CUH
#define ZERO_RUNTIME_CUDA_ELEMENTKERNELS_CUH

#include "DeviceErrors.cuh"
#include "ElementParams.h"
#include "ops/Elements.h"

#include <cstdint>

namespace zero::runtime::cuda {

/// dst[i] = the register ids[i].
__global__ void fromElementsKernel(void *dst, DType type, int64_t numel,
                                   const int64_t *ids,
                                   const Scalar *registers) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel;
       i += int64_t(gridDim.x) * blockDim.x)
    ops::storeElement(dst, type, i, registers[ids[i]]);
}

/// One thread: the element at the index registers into the result
/// register, or the first index out of range raised (the register kept).
__global__ void extractKernel(Scalar *registers, ExtractParams p) {
  int64_t offset = 0;
  const int64_t *sizes = p.table, *strides = p.table + p.rank,
                *indices = p.table + 2 * p.rank;
  for (int d = 0; d < p.rank; ++d) {
    const long long index = registers[indices[d]].i;
    if (index < 0 || index >= sizes[d]) {
      raiseDeviceError(p.errors, p.site, d, index, p.step);
      return;
    }
    offset += index * strides[d];
  }
  registers[p.result] = ops::loadElement(p.tensor, p.type, offset);
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_ELEMENTKERNELS_CUH
