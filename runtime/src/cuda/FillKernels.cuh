//===- FillKernels.cuh - filling tensor memory with one element -*- CUDA
//-*-===//
//
// The kernel of linalg.fill, tensor.splat, splat constants and the byte
// patterns of enqueueFillPattern (TensorOps.cu): each thread computes the
// element's bits once (from a register, cast as host castScalar does, or
// bits encoded at prepare) and stores them 16 bytes at a time. Device code
// with no CUDA header: nvcc compiles it in TensorOps.cu, and
// FillKernelsOnCpuTest with the host compiler for the CPU
// (runtime/test/cuda/KernelsOnCpu.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_FILLKERNELS_CUH
#define ZERO_RUNTIME_CUDA_FILLKERNELS_CUH

#include "FillParams.h"
#include "ops/Elements.h"

#include <cstdint>

namespace zero::runtime::cuda {

__device__ __forceinline__ uint64_t replicate(uint64_t bits, int width) {
  switch (width) {
  case 1:
    bits &= 0xffu;
    bits |= bits << 8;
    [[fallthrough]];
  case 2:
    bits &= 0xffffu;
    bits |= bits << 16;
    [[fallthrough]];
  case 4:
    bits &= 0xffffffffu;
    bits |= bits << 32;
    [[fallthrough]];
  default:
    return bits;
  }
}

__device__ __forceinline__ void storeBits(char *p, int width, uint64_t bits) {
  switch (width) {
  case 1:
    *reinterpret_cast<uint8_t *>(p) = static_cast<uint8_t>(bits);
    return;
  case 2:
    *reinterpret_cast<uint16_t *>(p) = static_cast<uint16_t>(bits);
    return;
  case 4:
    *reinterpret_cast<uint32_t *>(p) = static_cast<uint32_t>(bits);
    return;
  default:
    *reinterpret_cast<uint64_t *>(p) = bits;
    return;
  }
}

/// Sets `bytes` at `dst` (aligned to `width`) to the element of `source`:
/// an unaligned head and tail element by element, the rest in 16-byte stores
/// (16 is a multiple of every width, so the pattern stays in phase).
__global__ void fillKernel(char *dst, int64_t bytes, int width,
                           FillSource source) {
  uint64_t bits = source.bits;
  if (source.reg)
    bits = ops::elementBits(
        ops::castScalar(*source.reg, source.from, source.to), source.to);
  const uint64_t pattern = replicate(bits, width);
  const int64_t misalign =
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & 15);
  int64_t head = misalign ? 16 - misalign : 0;
  if (head > bytes)
    head = bytes;
  const int64_t body = (bytes - head) & ~int64_t(15);
  const int64_t tail = bytes - head - body;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i * width < head; i += stride)
    storeBits(dst + i * width, width, bits);
  const uint4 vector = make_uint4(
      static_cast<uint32_t>(pattern), static_cast<uint32_t>(pattern >> 32),
      static_cast<uint32_t>(pattern), static_cast<uint32_t>(pattern >> 32));
  uint4 *chunks = reinterpret_cast<uint4 *>(dst + head);
  for (int64_t i = first; i < body / 16; i += stride)
    chunks[i] = vector;
  char *end = dst + head + body;
  for (int64_t i = first; i * width < tail; i += stride)
    storeBits(end + i * width, width, bits);
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_FILLKERNELS_CUH
