//===- QuantizeKernels.cuh - the block quantizer's kernels ------*- CUDA
//-*-===//
//
// The kernels of Quantize.cu (its file comment says how they divide the
// work), of the host quantizer's element math (ops/QuantizeMath.h) and
// element conversions (ops/ElementMath.h). Device code with no CUDA header:
// nvcc compiles it in Quantize.cu, and QuantizeKernelsOnCpuTest with the
// host compiler for the CPU (runtime/test/cuda/KernelsOnCpu.h), against
// the host quantizer's bytes.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_QUANTIZEKERNELS_CUH
#define ZERO_RUNTIME_CUDA_QUANTIZEKERNELS_CUH

#include "QuantizeParams.h"
#include "ops/ElementMath.h"
#include "ops/QuantizeMath.h"

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::cuda {

template <DType type>
__device__ float loadQuantizedElement(const void *in, int64_t i) {
  if constexpr (type == DType::F32)
    return static_cast<const float *>(in)[i];
  else if constexpr (type == DType::BF16)
    return ops::widenBF16(static_cast<const uint16_t *>(in)[i]);
  else
    return ops::widenF16(static_cast<const uint16_t *>(in)[i]);
}

template <DType type>
__device__ void storeQuantizedElement(void *out, int64_t i, float value) {
  if constexpr (type == DType::F32) {
    static_cast<float *>(out)[i] = value;
  } else if constexpr (type == DType::BF16) {
    static_cast<uint16_t *>(out)[i] = ops::narrowF32ToBF16(value);
  } else {
    static_cast<uint16_t *>(out)[i] = ops::narrowF32ToF16(value);
  }
}

// Launched with kQuantizeThreads threads: the shared array and the tree
// assume it.
template <DType type>
__global__ void __launch_bounds__(kQuantizeThreads)
    quantizeKernel(const void *in, int64_t n, int bits, int64_t blockSize,
                   int64_t numBlocks, uint8_t *values, void *scales) {
  __shared__ float partial[kQuantizeThreads];
  const int maxLevel = quantize::getMaxLevel(bits);
  for (int64_t block = blockIdx.x; block < numBlocks; block += gridDim.x) {
    const int64_t begin = block * blockSize;
    const int64_t end = begin + blockSize < n ? begin + blockSize : n;
    float absmax = 0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
      absmax = quantize::maxMagnitude(
          absmax, quantize::getMagnitude(loadQuantizedElement<type>(in, i)));
    partial[threadIdx.x] = absmax;
    __syncthreads();
    for (unsigned half = kQuantizeThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half)
        partial[threadIdx.x] = quantize::maxMagnitude(
            partial[threadIdx.x], partial[threadIdx.x + half]);
      __syncthreads();
    }
    const float scale = quantize::getScale(partial[0], maxLevel);
    if (threadIdx.x == 0)
      quantize::storeScale(scales, block, scale);
    if (bits == 8) {
      for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
        values[i] = static_cast<uint8_t>(static_cast<int8_t>(quantize::getLevel(
            loadQuantizedElement<type>(in, i), scale, maxLevel)));
    } else {
      // Blocks start at even elements (blockSize is even for 4 bits); the
      // odd half of a last odd element is 0, as the host leaves it.
      for (int64_t pair = begin / 2 + threadIdx.x; 2 * pair < end;
           pair += blockDim.x) {
        const int64_t i = 2 * pair;
        const int even = quantize::getLevel(loadQuantizedElement<type>(in, i),
                                            scale, maxLevel);
        const int odd =
            i + 1 < end
                ? quantize::getLevel(loadQuantizedElement<type>(in, i + 1),
                                     scale, maxLevel)
                : 0;
        values[pair] = quantize::packLevels(even, odd);
      }
    }
    __syncthreads(); // partial is the next block's
  }
}

template <DType type>
__global__ void dequantizeKernel(const uint8_t *values, const void *scales,
                                 int64_t n, int bits, int64_t blockSize,
                                 void *out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    storeQuantizedElement<type>(
        out, i,
        quantize::dequantizeLevel(quantize::loadLevel(values, i, bits),
                                  quantize::loadScale(scales, i / blockSize)));
}

__global__ void accumulateKernel(const uint8_t *values, const void *scales,
                                 int64_t n, int bits, int64_t blockSize,
                                 float *sums) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    sums[i] = quantize::addToSum(
        sums[i],
        quantize::dequantizeLevel(quantize::loadLevel(values, i, bits),
                                  quantize::loadScale(scales, i / blockSize)));
}

template <DType type>
__global__ void roundSumsKernel(const float *sums, int64_t n, int64_t divisor,
                                void *out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    storeQuantizedElement<type>(out, i, quantize::divideSum(sums[i], divisor));
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_QUANTIZEKERNELS_CUH
