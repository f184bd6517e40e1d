//===- GridStride.h - the grids of grid-stride kernels ----------*- C++ -*-===//
//
// Plain C++ (no CUDA header), for the launches and for the tests that run
// kernels on the CPU (runtime/test/cuda/KernelsOnCpu.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_GRIDSTRIDE_H
#define ZERO_RUNTIME_CUDA_GRIDSTRIDE_H

#include <cstdint>

namespace zero::runtime::cuda {

/// Blocks of `threads` for a grid-stride loop over `n` items (n > 0).
inline unsigned gridFor(int64_t n, int threads) {
  constexpr int64_t kMaxBlocks = 1 << 16; // grid-stride beyond this
  int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_GRIDSTRIDE_H
