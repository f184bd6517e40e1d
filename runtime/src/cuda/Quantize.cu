//===- Quantize.cu - the block quantizer of the quantized collectives -----===//
//
// The CUDA device's Device::quantizeBlocks and its inverses (qwZ's packed
// parameter blocks, qgZ's int4 hops): kernels of the host quantizer's
// element math (ops/QuantizeMath.h, the same functions), so that both
// backends write the same bytes. Quantizing is one thread block per
// quantization block: the block's absmax by a tree of maxima (exact in any
// order), then each thread's levels; int4 levels are written a byte, two
// elements, per thread, so that no two threads share a byte. The others are
// one thread per element.
//
// Elements are read and written at their width (the plan aligns tensors to
// it); scales are f32 bytes at any alignment, as the packed blocks place
// them. 16-bit elements go through ElementMath.h's conversions, the host's.
//
//===----------------------------------------------------------------------===//

#include "CudaOps.h"

#include "ops/QuantizeMath.h"

#include "ops/ElementMath.h"

namespace zero::runtime::cuda {

namespace {

using namespace quantize;

constexpr int kThreads = 256;
static_assert((kThreads & (kThreads - 1)) == 0,
              "the absmax tree halves kThreads down to 1");

template <DType type> __device__ float loadElement(const void *in, int64_t i) {
  if constexpr (type == DType::F32)
    return static_cast<const float *>(in)[i];
  else if constexpr (type == DType::BF16)
    return ops::widenBF16(static_cast<const uint16_t *>(in)[i]);
  else
    return ops::widenF16(static_cast<const uint16_t *>(in)[i]);
}

template <DType type>
__device__ void storeElement(void *out, int64_t i, float value) {
  if constexpr (type == DType::F32) {
    static_cast<float *>(out)[i] = value;
  } else if constexpr (type == DType::BF16) {
    static_cast<uint16_t *>(out)[i] = ops::narrowF32ToBF16(value);
  } else {
    static_cast<uint16_t *>(out)[i] = ops::narrowF32ToF16(value);
  }
}

// Launched with kThreads threads: the shared array and the tree assume it.
template <DType type>
__global__ void __launch_bounds__(kThreads)
    quantizeKernel(const void *in, int64_t n, int bits, int64_t blockSize,
                   int64_t numBlocks, uint8_t *values, void *scales) {
  __shared__ float partial[kThreads];
  const int maxLevel = getMaxLevel(bits);
  for (int64_t block = blockIdx.x; block < numBlocks; block += gridDim.x) {
    const int64_t begin = block * blockSize;
    const int64_t end = begin + blockSize < n ? begin + blockSize : n;
    float absmax = 0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
      absmax = maxMagnitude(absmax, getMagnitude(loadElement<type>(in, i)));
    partial[threadIdx.x] = absmax;
    __syncthreads();
    for (unsigned half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half)
        partial[threadIdx.x] =
            maxMagnitude(partial[threadIdx.x], partial[threadIdx.x + half]);
      __syncthreads();
    }
    const float scale = getScale(partial[0], maxLevel);
    if (threadIdx.x == 0)
      storeScale(scales, block, scale);
    if (bits == 8) {
      for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
        values[i] = static_cast<uint8_t>(static_cast<int8_t>(
            getLevel(loadElement<type>(in, i), scale, maxLevel)));
    } else {
      // Blocks start at even elements (blockSize is even for 4 bits); the
      // odd half of a last odd element is 0, as the host leaves it.
      for (int64_t pair = begin / 2 + threadIdx.x; 2 * pair < end;
           pair += blockDim.x) {
        const int64_t i = 2 * pair;
        const int even = getLevel(loadElement<type>(in, i), scale, maxLevel);
        const int odd =
            i + 1 < end ? getLevel(loadElement<type>(in, i + 1), scale, maxLevel)
                        : 0;
        values[pair] = packLevels(even, odd);
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
    storeElement<type>(out, i,
                       dequantizeLevel(loadLevel(values, i, bits),
                                       loadScale(scales, i / blockSize)));
}

__global__ void accumulateKernel(const uint8_t *values, const void *scales,
                                 int64_t n, int bits, int64_t blockSize,
                                 float *sums) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    sums[i] =
        addToSum(sums[i], dequantizeLevel(loadLevel(values, i, bits),
                                          loadScale(scales, i / blockSize)));
}

template <DType type>
__global__ void roundSumsKernel(const float *sums, int64_t n, int64_t divisor,
                                void *out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    storeElement<type>(out, i, divideSum(sums[i], divisor));
}

/// Calls `fn` with the float type as a compile-time constant.
template <typename Fn> Status dispatchType(DType type, Fn &&fn) {
  switch (type) {
  case DType::F32:
    fn(std::integral_constant<DType, DType::F32>());
    break;
  case DType::BF16:
    fn(std::integral_constant<DType, DType::BF16>());
    break;
  case DType::F16:
    fn(std::integral_constant<DType, DType::F16>());
    break;
  default:
    return ZERO_ERROR(kInvalidArgument,
                      "the block quantizer takes f32, bf16 or f16 elements");
  }
  return Status::ok();
}

/// The quantizer's preconditions (Quantize.h), and elements at `elements`
/// aligned to the width of `type` (null: none to check).
Status checkQuantization(int bits, int64_t blockSize, DType type,
                         const void *elements) {
  if (!(bits == 4 || bits == 8) || blockSize < 1 ||
      (bits == 4 && blockSize % 2 != 0))
    return ZERO_ERROR(kInvalidArgument,
                      "block quantization of " + std::to_string(bits) +
                          " bits in blocks of " + std::to_string(blockSize));
  if (elements && reinterpret_cast<uintptr_t>(elements) %
                          static_cast<uintptr_t>(getDTypeWidth(type)) !=
                      0)
    return ZERO_ERROR(kInternal, "the block quantizer's elements are not "
                                 "aligned to their width");
  return Status::ok();
}

Status launched() {
  ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::ok();
}

} // namespace

Status enqueueQuantizeBlocks(const void *in, DType type, int64_t n, int bits,
                             int64_t blockSize, void *values, void *scales,
                             cudaStream_t stream) {
  ZERO_RETURN_IF_ERROR(checkQuantization(bits, blockSize, type, in));
  if (n <= 0)
    return Status::ok();
  const int64_t numBlocks = getNumBlocks(n, blockSize);
  const unsigned grid =
      static_cast<unsigned>(numBlocks < (1 << 20) ? numBlocks : (1 << 20));
  clearStaleError();
  ZERO_RETURN_IF_ERROR(dispatchType(type, [&](auto as) {
    quantizeKernel<decltype(as)::value><<<grid, kThreads, 0, stream>>>(
        in, n, bits, blockSize, numBlocks, static_cast<uint8_t *>(values),
        scales);
  }));
  return launched();
}

Status enqueueDequantizeBlocks(const void *values, const void *scales,
                               int64_t n, int bits, int64_t blockSize,
                               DType type, void *out, cudaStream_t stream) {
  ZERO_RETURN_IF_ERROR(checkQuantization(bits, blockSize, type, out));
  if (n <= 0)
    return Status::ok();
  clearStaleError();
  ZERO_RETURN_IF_ERROR(dispatchType(type, [&](auto as) {
    dequantizeKernel<decltype(as)::value>
        <<<gridFor(n, kThreads), kThreads, 0, stream>>>(
            static_cast<const uint8_t *>(values), scales, n, bits, blockSize,
            out);
  }));
  return launched();
}

Status enqueueAccumulateDequantized(const void *values, const void *scales,
                                    int64_t n, int bits, int64_t blockSize,
                                    float *sums, cudaStream_t stream) {
  ZERO_RETURN_IF_ERROR(checkQuantization(bits, blockSize, DType::F32, sums));
  if (n <= 0)
    return Status::ok();
  clearStaleError();
  accumulateKernel<<<gridFor(n, kThreads), kThreads, 0, stream>>>(
      static_cast<const uint8_t *>(values), scales, n, bits, blockSize, sums);
  return launched();
}

Status enqueueRoundSums(const float *sums, int64_t n, int64_t divisor,
                        DType type, void *out, cudaStream_t stream) {
  ZERO_RETURN_IF_ERROR(checkQuantization(8, 1, type, out));
  ZERO_RETURN_IF_ERROR(checkQuantization(8, 1, DType::F32, sums));
  if (n <= 0)
    return Status::ok();
  clearStaleError();
  ZERO_RETURN_IF_ERROR(dispatchType(type, [&](auto as) {
    roundSumsKernel<decltype(as)::value>
        <<<gridFor(n, kThreads), kThreads, 0, stream>>>(sums, n, divisor, out);
  }));
  return launched();
}

} // namespace zero::runtime::cuda
