//===- MatmulKernels.cuh - the GEMM fallback kernel -------------*- CUDA
//-*-===//
//
// Matmul.cu's kernel for the GEMMs cuBLAS does not take (mixed operand
// types, integers), with the host's exact semantics (host/Linalg.cpp,
// runElementwise): the operands cast to C's type, c = round(c + round(a *
// b)) with k in increasing order, integers wrapping. Device code with no
// CUDA header: nvcc compiles it in Matmul.cu, and MatmulOnCpuTest with the
// host compiler for the CPU (runtime/test/cuda/KernelsOnCpu.h), against the
// host bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_MATMULKERNELS_CUH
#define ZERO_RUNTIME_CUDA_MATMULKERNELS_CUH

#include "MatmulParams.h"
#include "ops/Elements.h"

#include <cstdint>

namespace zero::runtime::cuda {

/// One thread per element of C, k in increasing order: the host's loop.
__global__ void matmulFallbackKernel(FallbackParams p) {
  const int64_t m = p.shape.m, n = p.shape.n, k = p.shape.k;
  const int64_t total = p.shape.batch * m * n;
  const DType ct = p.cType;
  const bool floats = ops::isFloatType(ct);
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       index < total; index += int64_t(gridDim.x) * blockDim.x) {
    const int64_t batch = index / (m * n);
    const int64_t i = (index / n) % m, j = index % n;
    // A[i][q] and B[q][j], each possibly stored transposed.
    const int64_t aBase = batch * m * k, bBase = batch * k * n;
    const int64_t aStep = p.shape.transposeA ? m : 1;
    const int64_t bStep = p.shape.transposeB ? 1 : n;
    const int64_t aRow = aBase + (p.shape.transposeA ? i : i * k);
    const int64_t bCol = bBase + (p.shape.transposeB ? j * k : j);
    Scalar acc = ops::loadElement(p.c, ct, index);
    for (int64_t q = 0; q < k; ++q) {
      const Scalar x = ops::castScalar(
          ops::loadElement(p.a, p.aType, aRow + q * aStep), p.aType, ct);
      const Scalar y = ops::castScalar(
          ops::loadElement(p.b, p.bType, bCol + q * bStep), p.bType, ct);
      if (floats) {
        acc.f = ops::roundFloat(
            __dadd_rn(acc.f, ops::roundFloat(__dmul_rn(x.f, y.f), ct)), ct);
      } else {
        const unsigned long long product =
            static_cast<unsigned long long>(x.i) *
            static_cast<unsigned long long>(y.i);
        const long long term =
            ops::wrapInt(static_cast<long long>(product), ct);
        acc.i = ops::wrapInt(
            static_cast<long long>(static_cast<unsigned long long>(acc.i) +
                                   static_cast<unsigned long long>(term)),
            ct);
      }
    }
    ops::storeElement(p.c, ct, index, acc);
  }
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_MATMULKERNELS_CUH
