// Diagnostic: which cuBLAS paths round a bf16/f16 C += A B more than once.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#define CK(x) do { auto e = (x); if ((int)e) { printf("%s:%d err %d\n", __FILE__, __LINE__, (int)e); return 1; } } while (0)
template <class T> float toF(T v);
template <> float toF(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> float toF(__half v) { return __half2float(v); }
template <class T> T fromF(float v);
template <> __nv_bfloat16 fromF(float v) { return __float2bfloat16_rn(v); }
template <> __half fromF(float v) { return __float2half_rn(v); }
int m = 64, k = 128, n = 32;
template <class T>
double report(const char *what, const std::vector<T> &d, const std::vector<double> &exact, double ulpBits) {
  double worst = 0; int bad = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    double e = exact[i], g = toF(d[i]);
    double ulp = std::ldexp(1.0, std::ilogb(std::fabs(e) > 0 ? e : 1.0) - (int)ulpBits);
    double err = std::fabs(g - e) / ulp;
    worst = std::max(worst, err); bad += err > 0.5001;
  }
  printf("  %-60s worst %.3f ulp, %d of %zu not correctly rounded\n", what, worst, bad, d.size());
  return worst;
}
template <class T>
int runType(cudaDataType_t dt, const char *name, double mant) {
  printf("%s m%d k%d n%d (row-major C[m,n] += A[m,k] B[k,n])\n", name, m, k, n);
  std::mt19937_64 rng(7); std::normal_distribution<float> nd;
  std::vector<T> A(m * k), B(k * n), C(m * n);
  for (auto &x : A) x = fromF<T>(nd(rng));
  for (auto &x : B) x = fromF<T>(nd(rng));
  for (auto &x : C) x = fromF<T>(nd(rng));
  std::vector<double> exact(m * n), ab(m * n);
  for (int i = 0; i < m; ++i) for (int j = 0; j < n; ++j) {
    double s = 0; for (int p = 0; p < k; ++p) s += (double)toF(A[i * k + p]) * toF(B[p * n + j]);
    ab[i * n + j] = s; exact[i * n + j] = s + toF(C[i * n + j]); }
  T *a, *b, *c; float *cf;
  CK(cudaMalloc(&a, A.size() * 2)); CK(cudaMalloc(&b, B.size() * 2)); CK(cudaMalloc(&c, C.size() * 2)); CK(cudaMalloc(&cf, C.size() * 4));
  CK(cudaMemcpy(a, A.data(), A.size() * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(b, B.data(), B.size() * 2, cudaMemcpyHostToDevice));
  void *ws; size_t wsBytes = 32 << 20; CK(cudaMalloc(&ws, wsBytes));
  cublasHandle_t h; CK(cublasCreate(&h)); CK(cublasSetWorkspace(h, ws, wsBytes));
  float one = 1, zero = 0;
  std::vector<T> D(m * n);
  auto gemm = [&](const char *what, cublasMath_t mode, bool batched64, float beta) -> int {
    CK(cublasSetMathMode(h, mode));
    CK(cudaMemcpy(c, C.data(), C.size() * 2, cudaMemcpyHostToDevice));
    if (batched64)
      CK(cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, dt, n, (long long)k * n, a, dt, k, (long long)m * k, &beta, c, dt, n, (long long)m * n, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
      CK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, dt, n, a, dt, k, &beta, c, dt, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CK(cudaMemcpy(D.data(), c, D.size() * 2, cudaMemcpyDeviceToHost));
    report(what, D, beta == 0 ? ab : exact, mant);
    return 0;
  };
  const auto strict = (cublasMath_t)(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  if (gemm("GemmStridedBatchedEx_64 beta=1 disallow-RPR (zero-run's)", strict, true, 1)) return 1;
  if (gemm("GemmEx beta=1 disallow-RPR", strict, false, 1)) return 1;
  if (gemm("GemmEx beta=1 default math", CUBLAS_DEFAULT_MATH, false, 1)) return 1;
  if (gemm("GemmEx beta=0 disallow-RPR (A B alone)", strict, false, 0)) return 1;
  if (gemm("GemmEx beta=1 pedantic|disallow", (cublasMath_t)(CUBLAS_PEDANTIC_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION), false, 1)) return 1;
  // f32 C: one rounding to 16 bits on the host.
  {
    std::vector<float> Cf(C.size()), Df(C.size());
    for (size_t i = 0; i < C.size(); ++i) Cf[i] = toF(C[i]);
    CK(cudaMemcpy(cf, Cf.data(), Cf.size() * 4, cudaMemcpyHostToDevice));
    CK(cublasSetMathMode(h, strict));
    CK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, dt, n, a, dt, k, &one, cf, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CK(cudaMemcpy(Df.data(), cf, Df.size() * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < D.size(); ++i) D[i] = fromF<T>(Df[i]);
    report("GemmEx f32 C, rounded to 16 bits after", D, exact, mant);
  }
  // cublasLt: every heuristic algorithm, with and without output-type reduction.
  cublasLtHandle_t lt; CK(cublasLtCreate(&lt));
  for (int scheme : {-1, (int)CUBLASLT_REDUCTION_SCHEME_NONE, (int)CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE}) {
    cublasLtMatmulDesc_t op; CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&lb, dt, n, k, n)); CK(cublasLtMatrixLayoutCreate(&la, dt, k, m, k)); CK(cublasLtMatrixLayoutCreate(&lc, dt, n, m, n));
    cublasLtMatmulPreference_t pref; CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes));
    if (scheme >= 0) { uint32_t mask = scheme; CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask)); }
    cublasLtMatmulHeuristicResult_t res[8]; int count = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, lc, lc, pref, 8, res, &count));
    for (int i = 0; i < count; ++i) {
      CK(cudaMemcpy(c, C.data(), C.size() * 2, cudaMemcpyHostToDevice));
      CK(cublasLtMatmul(lt, op, &one, b, lb, a, la, &one, c, lc, c, lc, &res[i].algo, ws, wsBytes, 0));
      CK(cudaMemcpy(D.data(), c, D.size() * 2, cudaMemcpyDeviceToHost));
      int splitK = 0, red = 0; size_t w;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitK, sizeof splitK, &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w);
      char what[128]; snprintf(what, sizeof what, "Lt mask %d algo %d: split-k %d, reduction %d", scheme, i, splitK, red);
      report(what, D, exact, mant);
    }
  }
  return 0;
}
int main() {
  int dims[][3] = {{64, 128, 32}, {64, 1024, 32}, {256, 768, 768}};
  for (auto &d : dims) {
    m = d[0]; k = d[1]; n = d[2];
    if (runType<__nv_bfloat16>(CUDA_R_16BF, "bf16", 7) || runType<__half>(CUDA_R_16F, "f16", 10)) return 1;
  }
  return 0;
}
