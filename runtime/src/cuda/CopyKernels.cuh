//===- CopyKernels.cuh - the strided copy kernels ---------------*- CUDA
//-*-===//
//
// The kernels of DataMovement.cu's strided copies (CopyPlan.h plans them):
// a grid-stride kernel that decomposes the linear index, and a transpose of
// the two innermost dimensions through 32 x 32 tiles in shared memory; and
// of its linalg.copy between dtypes, the host's castScalar per element.
// Device code only, with no CUDA header: nvcc compiles it in
// DataMovement.cu, and CopyKernelsOnCpuTest compiles it with the host
// compiler and runs it on the CPU (runtime/test/cuda/KernelsOnCpu.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_COPYKERNELS_CUH
#define ZERO_RUNTIME_CUDA_COPYKERNELS_CUH

#include "CopyParams.h"
#include "ops/Elements.h"

namespace zero::runtime::cuda {

/// dst[i . dstStrides] = src[i . srcStrides] for every index i of `sizes`,
/// elements of type E, index math in I (32 bits when every offset fits).
template <typename E, typename I>
__global__ void __launch_bounds__(kCopyThreads)
    stridedCopyKernel(CopyParams p) {
  E *dst = reinterpret_cast<E *>(p.dst);
  const E *src = reinterpret_cast<const E *>(p.src);
  const I numel = static_cast<I>(p.numel);
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += stride) {
    I rest = i, d = 0, s = 0;
#pragma unroll
    for (int k = kMaxCopyRank - 1; k >= 0; --k) {
      if (k >= p.rank)
        continue;
      const I size = static_cast<I>(p.sizes[k]);
      const I index = rest % size;
      rest /= size;
      d += index * static_cast<I>(p.dstStrides[k]);
      s += index * static_cast<I>(p.srcStrides[k]);
    }
    dst[d] = src[s];
  }
}

/// dst[outer + r * rowStride + c] = src[outer' + r + c * colStride] for the
/// two innermost dimensions (rows, cols), through a shared-memory tile; the
/// outer dimensions (rank - 2 of them) are walked by blockIdx.z. Blocks of
/// kTransposeTile x kTransposeRows threads (CopyPlan.h's getCopyLaunch).
template <typename E>
__global__ void __launch_bounds__(kTransposeTile *kTransposeRows)
    transposeKernel(CopyParams p) {
  constexpr int kTile = kTransposeTile;
  __shared__ E tile[kTile][kTile + 1];
  E *dst = reinterpret_cast<E *>(p.dst);
  const E *src = reinterpret_cast<const E *>(p.src);
  const int r = p.rank;
  const int64_t rows = p.sizes[r - 2], cols = p.sizes[r - 1];
  const int64_t rowStride = p.dstStrides[r - 2]; // dst stride of a row
  const int64_t colStride = p.srcStrides[r - 1]; // src stride of a column
  const int64_t rowBase = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t colBase = static_cast<int64_t>(blockIdx.x) * kTile;
  int64_t outerCount = 1;
  for (int k = 0; k < r - 2; ++k)
    outerCount *= p.sizes[k];
  for (int64_t outer = blockIdx.z; outer < outerCount; outer += gridDim.z) {
    int64_t rest = outer, d = 0, s = 0;
    for (int k = r - 3; k >= 0; --k) {
      const int64_t index = rest % p.sizes[k];
      rest /= p.sizes[k];
      d += index * p.dstStrides[k];
      s += index * p.srcStrides[k];
    }
    // Read along rows (contiguous in src), one column per thread row.
    for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
      const int64_t row = rowBase + threadIdx.x, col = colBase + j;
      if (row < rows && col < cols)
        tile[j][threadIdx.x] = src[s + row + col * colStride];
    }
    __syncthreads();
    // Write along columns (contiguous in dst).
    for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
      const int64_t row = rowBase + j, col = colBase + threadIdx.x;
      if (row < rows && col < cols)
        dst[d + row * rowStride + col] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

/// dst[i] = src[i] cast from `from` to `to`, as host castScalar does.
__global__ void castKernel(void *dst, DType to, const void *src, DType from,
                           int64_t numel) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel;
       i += int64_t(gridDim.x) * blockDim.x)
    ops::storeElement(
        dst, to, i, ops::castScalar(ops::loadElement(src, from, i), from, to));
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_COPYKERNELS_CUH
