//===- MatmulGpuTest.cpp - linalg.matmul and batch_matmul on the GPU ------===//
//
// C += A B on awkward shapes (empty m, n, k; one element; odd sizes across
// cuBLAS's tile edges) and every operand type combination, the result in
// C's buffer and in one of its own; A or B read transposed (the GEMM's
// indexing maps: cuBLAS's op flags and leading dimensions); C a zero fill
// that the device skips (beta = 0: C's unfilled buffer, NaN here, is not
// read); f32 operands rounded to tf32.
//
// Tolerances. The cuBLAS paths sum in another order than the host, so both
// are checked against an exact reference (long double over the operands'
// values) with the classic bound for a length-k dot product accumulated in
// precision u (Higham, Accuracy and Stability, 3.1):
//   |computed - exact| <= g(k + 1) * (|c| + sum_p |a_ip b_pj|)
//                         + u_out * |exact|,   g(n) = (1 + u)^n - 1
// (Higham's gamma(n) = n u / (1 - n u) bounds (1 + u)^n - 1, which is used
// here as it stays finite for n u >= 1) with u = 2^-24 for f32 and for bf16/f16
// operands (cuBLAS multiplies them exactly and accumulates in f32), 2^-53 for
// f64, and u_out the rounding of a 16-bit result (2^-8 bf16, 2^-11 f16, else
// 0). cuBLAS rounds a 16-bit C's A B to 16 bits before it adds beta C (on an
// H100 with CUDA 13, whatever the algorithm or reduction scheme:
// benchmarks/gpu/diag/gemm16.cu), so a 16-bit C on the GPU also carries
// u_out * |A B| for that first rounding. The host's own bound for 16-bit C is
// much looser (it rounds the accumulator to 16 bits after every op: u = u_out),
// so GPU and host must agree within the sum of their two bounds. The other
// combinations run the host's element loop on the GPU and must agree with the
// host bit for bit.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

struct Types {
  DType a, b, c;
};

bool usesBlas(const Types &t) {
  if (t.a != t.b)
    return false;
  if (t.a == DType::F32 || t.a == DType::F64)
    return t.c == t.a;
  if (t.a == DType::BF16 || t.a == DType::F16)
    return t.c == t.a || t.c == DType::F32;
  return false;
}

/// (1 + u)^n - 1: the worst relative growth of n roundings (gamma(n) for
/// n u < 1, and still a bound where n u >= 1, as for 16-bit accumulators).
double gamma(int64_t n, double u) {
  return std::expm1(static_cast<double>(n) * std::log1p(u));
}

/// How a case reads and starts its GEMM.
struct Layout {
  /// A stored [k, m] (B [n, k]) and read transposed through the GEMM's
  /// indexing maps.
  bool transposeA = false, transposeB = false;
  /// C a zero fill that only this GEMM reads: the device skips the fill
  /// and multiplies with beta = 0, so C's buffer, NaN here, is not read.
  bool zeroInit = false;
  /// round_operands "tf32" (f32 operands only).
  bool tf32 = false;
};

/// `rows` x `cols` matrices stored transposed when `transposed`.
std::vector<int64_t> matrixShape(bool batched, int64_t batch, int64_t rows,
                                 int64_t cols, bool transposed = false) {
  if (transposed)
    std::swap(rows, cols);
  return batched ? std::vector<int64_t>{batch, rows, cols}
                 : std::vector<int64_t>{rows, cols};
}

/// Element (q, row, col) of a row-major [batch,] rows x cols matrix stored
/// transposed when `transposed`.
int64_t matrixIndex(int64_t q, int64_t row, int64_t col, int64_t rows,
                    int64_t cols, bool transposed) {
  return transposed ? (q * cols + col) * rows + row
                    : (q * rows + row) * cols + col;
}

void checkMatmul(const Types &t, int64_t batch, int64_t m, int64_t k, int64_t n,
                 bool batched, bool inPlace, std::mt19937_64 &rng,
                 const Layout &layout = {}) {
  ScheduleBuilder b;
  int64_t a =
      b.tensor(t.a, matrixShape(batched, batch, m, k, layout.transposeA));
  int64_t bb =
      b.tensor(t.b, matrixShape(batched, batch, k, n, layout.transposeB));
  int64_t c = b.tensor(t.c, matrixShape(batched, batch, m, n));
  int64_t init = c;
  if (layout.zeroInit) {
    init = b.tensor(t.c, matrixShape(batched, batch, m, n), c);
    const int64_t zero = b.constant(t.c, 0.0);
    b.op({{"op", "linalg.fill"}, {"operands", {zero, c}}, {"results", {init}}});
  }
  int64_t result = inPlace ? b.tensor(t.c, matrixShape(batched, batch, m, n), c)
                           : b.tensor(t.c, matrixShape(batched, batch, m, n));
  json gemm = {{"op", batched ? "linalg.batch_matmul" : "linalg.matmul"},
               {"operands", {a, bb, init}},
               {"results", {result}}};
  if (layout.transposeA || layout.transposeB) {
    // (b,) m, n, k as dimensions (b,) 0, 1, 2: A (m, k) or (k, m), B (k, n)
    // or (n, k), C (m, n).
    const int64_t o = batched ? 1 : 0;
    auto map = [&](int64_t row, int64_t col) {
      return batched ? json{0, row, col} : json{row, col};
    };
    gemm["indexing_maps"] = {layout.transposeA ? map(o + 2, o) : map(o, o + 2),
                             layout.transposeB ? map(o + 1, o + 2)
                                               : map(o + 2, o + 1),
                             map(o, o + 1)};
  }
  if (layout.tf32)
    gemm["round_operands"] = "tf32";
  b.op(gemm);
  Runner r(b);
  ZERO_ASSERT_RUNNER(r);
  // The case under test: the loader found the fill that only starts this
  // GEMM, which the device skips and multiplies with beta = 0.
  ASSERT_EQ(r.schedule().streams()[0].instructions.back().zeroInit,
            layout.zeroInit);
  // Integers small enough that nothing wraps except on purpose (i32 sums of
  // products of values up to 2^20 wrap, as on the host).
  const Bytes aBytes =
      randomBytes(t.a, batch * m * k, rng, 1.0, -(1 << 20), 1 << 20);
  const Bytes bBytes =
      randomBytes(t.b, batch * k * n, rng, 1.0, -(1 << 20), 1 << 20);
  Bytes cBytes = randomBytes(t.c, batch * m * n, rng, 1.0, -1000, 1000);
  r.write(a, aBytes);
  r.write(bb, bBytes);
  if (layout.zeroInit) {
    for (int64_t i = 0; i < batch * m * n; ++i)
      setFloat(cBytes, t.c, i, std::numeric_limits<double>::quiet_NaN());
    r.write(c, cBytes);
    // What the GEMM must add A B to: the fill's zeros.
    for (int64_t i = 0; i < batch * m * n; ++i)
      setFloat(cBytes, t.c, i, 0.0);
  } else {
    r.write(c, cBytes);
  }
  r.step();
  const Bytes host = r.readHost(result), gpu = r.readGpu(result);
  const std::string what =
      std::string(batched ? "batch_matmul " : "matmul ") + dtypeName(t.a) +
      (layout.transposeA ? "^T" : "") + " x " + dtypeName(t.b) +
      (layout.transposeB ? "^T" : "") + " + " + dtypeName(t.c) +
      (layout.zeroInit ? " (zero fill)" : "") + (layout.tf32 ? " tf32" : "") +
      " b" + std::to_string(batch) + " m" + std::to_string(m) + " k" +
      std::to_string(k) + " n" + std::to_string(n) +
      (inPlace ? " in place" : "");
  if (!usesBlas(t)) {
    expectSameElements(host, gpu, t.c, what);
    return;
  }
  const bool narrow = t.c == DType::BF16 || t.c == DType::F16;
  const double uOut = narrow ? unitRoundoff(t.c) : 0.0;
  const double uAccumulate =
      t.a == DType::F64 ? unitRoundoff(DType::F64) : unitRoundoff(DType::F32);
  // A tf32 operand is within 2^-11 of the f32 one (rounded to nearest by
  // the host; cuBLAS does not say how its tensor cores round, so the GPU is
  // allowed 2^-10, a truncation's bound): each product within twice that.
  const double uOperandsHost = layout.tf32 ? 0x1p-10 : 0;
  const double uOperandsGpu =
      layout.tf32 && !gpuTestsOnHost() ? 0x1p-9 : uOperandsHost;
  const double uHost = narrow ? unitRoundoff(t.c) : uAccumulate;
  // With ZERO_GPU_TESTS_ON_HOST the "GPU" is a host device too.
  const double uGpu = gpuTestsOnHost() ? uHost : uAccumulate;
  int failures = 0;
  for (int64_t q = 0; q < batch && failures < 10; ++q)
    for (int64_t i = 0; i < m && failures < 10; ++i)
      for (int64_t j = 0; j < n && failures < 10; ++j) {
        const int64_t ci = (q * m + i) * n + j;
        const double c0 = floatAt(cBytes, t.c, ci);
        long double exact = c0, magnitude = std::fabs(c0), product = 0;
        for (int64_t p = 0; p < k; ++p) {
          const long double x = floatAt(
              aBytes, t.a, matrixIndex(q, i, p, m, k, layout.transposeA));
          const long double y = floatAt(
              bBytes, t.b, matrixIndex(q, p, j, k, n, layout.transposeB));
          exact += x * y;
          product += x * y;
          magnitude += std::fabs(x * y);
        }
        // The rounding of A B itself to C's type (a 16-bit C on cuBLAS).
        const double productRounding =
            gpuTestsOnHost() ? 0.0
                             : uOut * (std::fabs(double(product)) +
                                       gamma(k, uGpu) * double(magnitude));
        const double gpuBound =
            (gamma(k + 1, uGpu) + uOperandsGpu) * double(magnitude) +
            productRounding + uOut * (1 + uOut) * std::fabs(double(exact));
        const double hostBound =
            (gamma(k + 1, uHost) + uOperandsHost) * double(magnitude) +
            uOut * std::fabs(double(exact));
        const double g = floatAt(gpu, t.c, ci), h = floatAt(host, t.c, ci);
        if (!(std::fabs(g - double(exact)) <= gpuBound) ||
            !(std::fabs(g - h) <= gpuBound + hostBound)) {
          ++failures;
          ADD_FAILURE() << what << ": C[" << q << "," << i << "," << j
                        << "]: gpu " << g << ", host " << h << ", exact "
                        << double(exact) << ", gpu bound " << gpuBound;
        }
      }
}

const std::vector<Types> &allTypeCombinations() {
  const DType f32 = DType::F32, f64 = DType::F64, bf16 = DType::BF16,
              f16 = DType::F16, i1 = DType::I1, i32 = DType::I32,
              i64 = DType::I64, index = DType::Index;
  static const std::vector<Types> combos = {// cuBLAS
                                            {f32, f32, f32},
                                            {f64, f64, f64},
                                            {bf16, bf16, bf16},
                                            {bf16, bf16, f32},
                                            {f16, f16, f16},
                                            {f16, f16, f32},
                                            // the element loop
                                            {bf16, f32, f32},
                                            {f32, bf16, bf16},
                                            {f16, bf16, f32},
                                            {f64, f32, f32},
                                            {f32, f32, f64},
                                            {bf16, bf16, f16},
                                            {i32, i32, i32},
                                            {i64, i32, i64},
                                            {i1, i1, i1},
                                            {index, i64, index},
                                            {i32, i64, i32}};
  return combos;
}

TEST(CudaMatmul, EveryTypeOnAwkwardShapes) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(21);
  struct Shape {
    int64_t m, k, n;
  };
  const std::vector<Shape> shapes = {{1, 1, 1}, {0, 3, 4},    {3, 0, 4},
                                     {3, 4, 0}, {5, 7, 3},    {17, 33, 9},
                                     {3, 1, 5}, {64, 128, 32}};
  for (const Types &t : allTypeCombinations())
    for (const Shape &s : shapes)
      for (bool inPlace : {false, true})
        checkMatmul(t, 1, s.m, s.k, s.n, false, inPlace, rng);
}

TEST(CudaMatmul, LargerCublasShapes) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(22);
  for (const Types &t : allTypeCombinations())
    if (usesBlas(t))
      checkMatmul(t, 1, 129, 257, 67, false, false, rng);
}

TEST(CudaMatmul, TransposedOperandsZeroFillsAndTf32) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(24);
  const DType f32 = DType::F32, f64 = DType::F64, bf16 = DType::BF16,
              f16 = DType::F16;
  // The cuBLAS types, and one the element loop runs.
  const std::vector<Types> types = {{f32, f32, f32},   {f64, f64, f64},
                                    {bf16, bf16, f32}, {bf16, bf16, bf16},
                                    {f16, f16, f32},   {bf16, f32, f32}};
  struct Shape {
    int64_t m, k, n;
  };
  // A leading dimension of 1 each way (m = 1 with A transposed, k = 1 with B
  // transposed), and shapes across cuBLAS's tiles.
  const std::vector<Shape> shapes = {
      {1, 5, 3}, {4, 1, 6}, {17, 33, 9}, {129, 257, 67}};
  for (const Types &t : types)
    for (const Shape &s : shapes)
      for (bool batched : {false, true})
        for (int transposes = 0; transposes < 4; ++transposes)
          // (The largest shape once, unbatched.)
          if (!batched || s.m < 100)
            for (bool zeroInit : {false, true}) {
              Layout layout;
              layout.transposeA = transposes & 1;
              layout.transposeB = transposes & 2;
              layout.zeroInit = zeroInit;
              checkMatmul(t, batched ? 3 : 1, s.m, s.k, s.n, batched,
                          /*inPlace=*/false, rng, layout);
            }
  // tf32 rounds f32 operands only, read either way.
  for (int transposes = 0; transposes < 4; ++transposes) {
    Layout layout;
    layout.transposeA = transposes & 1;
    layout.transposeB = transposes & 2;
    layout.tf32 = true;
    checkMatmul({f32, f32, f32}, 1, 65, 300, 33, false, false, rng, layout);
  }
}

TEST(CudaMatmul, Batched) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(23);
  for (const Types &t : allTypeCombinations())
    for (int64_t batch : {0, 1, 3})
      for (bool inPlace : {false, true})
        checkMatmul(t, batch, 7, 5, 9, true, inPlace, rng);
}

} // namespace
