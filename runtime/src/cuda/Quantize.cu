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

#include "QuantizeKernels.cuh"

namespace zero::runtime::cuda {

namespace {

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
  const unsigned grid = getQuantizeGrid(numBlocks);
  clearStaleError();
  ZERO_RETURN_IF_ERROR(dispatchType(type, [&](auto as) {
    quantizeKernel<decltype(as)::value><<<grid, kQuantizeThreads, 0, stream>>>(
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
        <<<gridFor(n, kQuantizeThreads), kQuantizeThreads, 0, stream>>>(
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
  accumulateKernel<<<gridFor(n, kQuantizeThreads), kQuantizeThreads, 0,
                     stream>>>(static_cast<const uint8_t *>(values), scales, n,
                               bits, blockSize, sums);
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
        <<<gridFor(n, kQuantizeThreads), kQuantizeThreads, 0, stream>>>(
            sums, n, divisor, out);
  }));
  return launched();
}

} // namespace zero::runtime::cuda
