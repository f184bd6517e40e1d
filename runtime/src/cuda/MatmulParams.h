//===- MatmulParams.h - a GEMM as cuBLAS and the fallback take it -*- C++
//-*-===//
//
// Plain C++, shared by Matmul.cu, its fallback kernel (MatmulKernels.cuh)
// and the tests that run both on the CPU: the sizes and layout of a checked
// matmul (Gemm.h's one reading), the fallback kernel's parameters, and the
// arguments of the cuBLAS call that computes the row-major product.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_MATMULPARAMS_H
#define ZERO_RUNTIME_CUDA_MATMULPARAMS_H

#include "Gemm.h"

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::cuda {

/// Per batch, C[m][n] += sum_k A[m][k] B[k][n]; A stored [k, m] when
/// transposeA, B [n, k] when transposeB.
struct MatmulShape {
  int64_t batch, m, n, k;
  bool transposeA, transposeB;
};

inline MatmulShape getMatmulShape(const GemmShape &gemm) {
  return {gemm.batch,
          gemm.m,
          gemm.n,
          gemm.k,
          gemm.layout.transposeA,
          gemm.layout.transposeB};
}

/// The fallback kernel's parameters.
struct FallbackParams {
  const void *a;
  const void *b;
  void *c; // the result, already holding C
  DType aType, bType, cType;
  MatmulShape shape;
};

/// The arguments of cublasGemmStridedBatchedEx (or any column-major BLAS
/// gemm, batch by batch) that compute a row-major GEMM: cuBLAS is
/// column-major, so C^T = B^T A^T is computed, gemm(n, m, k) with B as the
/// first operand, each matrix read with its row length as leading dimension
/// and no data moved; an operand stored transposed is read with op T.
struct BlasGemmCall {
  bool transposeFirst, transposeSecond; // op(B), op(A)
  int64_t m, n, k;                      // of the column-major product
  int64_t firstLd, firstStride;         // B
  int64_t secondLd, secondStride;       // A
  int64_t resultLd, resultStride;       // C
  int64_t batch;
};

inline BlasGemmCall getBlasGemmCall(const MatmulShape &s) {
  BlasGemmCall call;
  call.transposeFirst = s.transposeB;
  call.transposeSecond = s.transposeA;
  call.m = s.n;
  call.n = s.m;
  call.k = s.k;
  call.firstLd = s.transposeB ? s.k : s.n;
  call.firstStride = s.k * s.n;
  call.secondLd = s.transposeA ? s.m : s.k;
  call.secondStride = s.m * s.k;
  call.resultLd = s.n;
  call.resultStride = s.m * s.n;
  call.batch = s.batch;
  return call;
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_MATMULPARAMS_H
