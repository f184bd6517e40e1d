//===- FillParams.h - a fill as its kernel takes it -------------*- C++ -*-===//
//
// Plain C++, shared by TensorOps.cu's launches and the kernel
// (FillKernels.cuh), which a test also compiles for the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_FILLPARAMS_H
#define ZERO_RUNTIME_CUDA_FILLPARAMS_H

#include "GridStride.h"

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::cuda {

constexpr int kFillThreads = 256;

/// Where a fill's element comes from.
struct FillSource {
  const Scalar *reg; // null: `bits` holds the element
  DType from, to;
  uint64_t bits;
};

/// The blocks fillKernel runs `bytes` on: a thread per 16 bytes.
inline unsigned getFillBlocks(int64_t bytes) {
  return gridFor((bytes + 15) / 16, kFillThreads);
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_FILLPARAMS_H
