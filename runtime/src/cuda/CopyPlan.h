//===- CopyPlan.h - how the CUDA backend runs a strided copy ----*- C++ -*-===//
//
// DataMovement.cu's planner (its file comment says why each kind): one
// strided copy, dst[dstOffset + i . ds] = src[srcOffset + i . ss], as
// nothing, one cudaMemcpyAsync, the tiled transpose or the grid-stride
// kernel (CopyKernels.cuh), with its element width, index type and launch
// shape. Plain C++, so that CopyKernelsOnCpuTest runs the plans and kernels
// on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_COPYPLAN_H
#define ZERO_RUNTIME_CUDA_COPYPLAN_H

#include "CopyParams.h"
#include "CudaOps.h"

#include <string>
#include <vector>

namespace zero::runtime::cuda {

/// A copy as the planner left it: for Memcpy, params.numel elements of
/// `width` bytes from params.src to params.dst.
struct CopyPlan {
  CopyKind kind = CopyKind::Empty;
  int width = 1;
  bool index32 = false;
  CopyParams params{};
};

/// Plans dst[dstOffset + i . ds] = src[srcOffset + i . ss] over `shape`
/// (strides and offsets in elements of `width` bytes); the grid-stride
/// kernel moves the widest elements the copy and the addresses allow. An
/// error (prefixed with `where`) for more than kMaxCopyRank dimensions
/// left once contiguous ones are merged.
StatusOr<CopyPlan> planCopy(const std::string &where, char *dst,
                            const char *src, const std::vector<int64_t> &shape,
                            const std::vector<int64_t> &dstStrides,
                            const std::vector<int64_t> &srcStrides,
                            int64_t dstOffset, int64_t srcOffset,
                            int64_t width);

/// The grid and block a Transpose or Generic plan's kernel runs on.
struct CopyLaunch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
};
CopyLaunch getCopyLaunch(const CopyPlan &plan);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_COPYPLAN_H
