//===- QuantizeParams.h - the block quantizer's launch shapes ---*- C++ -*-===//
//
// Plain C++, shared by Quantize.cu and its kernels (QuantizeKernels.cuh),
// which a test also compiles for the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_QUANTIZEPARAMS_H
#define ZERO_RUNTIME_CUDA_QUANTIZEPARAMS_H

#include <cstdint>

namespace zero::runtime::cuda {

/// The threads of a block of every quantizer kernel.
constexpr int kQuantizeThreads = 256;
static_assert((kQuantizeThreads & (kQuantizeThreads - 1)) == 0,
              "the absmax tree halves kQuantizeThreads down to 1");

/// quantizeKernel's blocks for `numBlocks` quantization blocks: one each,
/// up to a grid the blocks then stride over.
inline unsigned getQuantizeGrid(int64_t numBlocks) {
  constexpr int64_t kMaxGrid = 1 << 20;
  return static_cast<unsigned>(numBlocks < kMaxGrid ? numBlocks : kMaxGrid);
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_QUANTIZEPARAMS_H
