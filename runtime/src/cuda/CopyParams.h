//===- CopyParams.h - a strided copy as its kernels take it -----*- C++ -*-===//
//
// Plain data, shared by the planner (CopyPlan.h, host C++) and the kernels
// (CopyKernels.cuh), which a test also compiles for the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_COPYPARAMS_H
#define ZERO_RUNTIME_CUDA_COPYPARAMS_H

#include <cstdint>

namespace zero::runtime::cuda {

/// Threads of a strided copy kernel's block.
constexpr int kCopyThreads = 256;
/// Dimensions a copy may have once contiguous ones are merged.
constexpr int kMaxCopyRank = 8;
/// The transpose's tiles (kTransposeTile square) and the thread rows of its
/// blocks (kTransposeTile threads each).
constexpr int kTransposeTile = 32;
constexpr int kTransposeRows = 8;

/// dst[i . dstStrides] = src[i . srcStrides] for every index i of `sizes`
/// (strides in elements of the copy's width).
struct CopyParams {
  char *dst;
  const char *src;
  int rank;
  int64_t numel;
  int64_t sizes[kMaxCopyRank];
  int64_t dstStrides[kMaxCopyRank];
  int64_t srcStrides[kMaxCopyRank];
};

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_COPYPARAMS_H
