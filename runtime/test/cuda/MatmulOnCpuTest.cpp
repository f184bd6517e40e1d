//===- MatmulOnCpuTest.cpp - the CUDA backend's GEMMs on the CPU ----------===//
//
// Matmul.cu's two ways of computing linalg.matmul and linalg.batch_matmul,
// run here on the CPU against the host backend's step (HostStep), for
// every layout (A and B each stored transposed or not, the transposes the
// compiler folds into a GEMM), with m, n and k all different:
// - the cuBLAS call's arguments (MatmulParams.h's BlasGemmCall: which
//   operand comes first, the op flags, the leading dimensions, the batch
//   strides), given to a strided batched gemm written from the BLAS
//   definition (column-major, op(X) = X or X^T, the leading dimensions
//   checked as BLAS checks them); on small integers, whose products and
//   sums are exact in any order, the result must be the host's bit for
//   bit;
// - the fallback kernel (MatmulKernels.cuh) for the types cuBLAS does not
//   take (mixed floats, integers), compiled with KernelsOnCpu.h's shim and
//   run on its launch shape and on one block of 32 threads (the grid-stride
//   loop going round): the host's elements bit for
//   bit, roundings after every product and sum and integer wrapping
//   included (on small integers where the host widens the operands to f32
//   and sums in OpenBLAS's order, exact in any).
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"
#include "HostStep.h"
#include "KernelsOnCpu.h"
#include "cuda/GridStride.h"
#include "cuda/MatmulParams.h"

#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/GemmLayout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using namespace zero::runtime::cudatest;
using namespace zero::runtime::test;
using KernelRunner = zero::runtime::test::Runner;

namespace {

constexpr int64_t kBatch = 3, kM = 5, kN = 7, kK = 4;

struct GemmCase {
  bool batched;
  GemmLayout layout;
  DType aType, bType, cType;
};

std::string describeGemm(const GemmCase &c) {
  return std::string(c.batched ? "batch_matmul" : "matmul") + " A " +
         getDTypeName(c.aType) + (c.layout.transposeA ? " [k, m]" : "") +
         ", B " + getDTypeName(c.bType) +
         (c.layout.transposeB ? " [n, k]" : "") + ", C " +
         getDTypeName(c.cType);
}

/// `numel` elements of `type`: small integers where `exact` (products and
/// sums exact in f32 in any order), else values of many bits; integers
/// large enough that i32 products wrap.
std::vector<std::byte> makeElements(DType type, int64_t numel, bool exact,
                                    std::mt19937 &rng) {
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int64_t> wide(-(int64_t(1) << 40), int64_t(1)
                                                                       << 40);
  const size_t width = static_cast<size_t>(getDTypeWidth(type));
  std::vector<std::byte> bytes(static_cast<size_t>(numel) * width);
  for (int64_t i = 0; i < numel; ++i) {
    std::byte *at = bytes.data() + i * width;
    const double x = exact ? small(rng) : real(rng);
    auto put = [&](auto value) { std::memcpy(at, &value, sizeof(value)); };
    switch (type) {
    case DType::F32:
      put(static_cast<float>(x));
      break;
    case DType::F64:
      put(x);
      break;
    case DType::BF16:
      put(floatToBF16(static_cast<float>(x)));
      break;
    case DType::F16:
      put(roundToF16(static_cast<float>(x)));
      break;
    case DType::I32:
      put(static_cast<int32_t>(wide(rng)));
      break;
    default: // i64
      put(static_cast<int64_t>(wide(rng)));
      break;
    }
  }
  return bytes;
}

/// The GEMM's schedule, its result in C's buffer; the ids of A, B, C.
struct GemmSchedule {
  std::string text;
  int64_t a, b, c;
};

GemmSchedule makeGemmSchedule(const GemmCase &c) {
  auto shape = [&](int64_t rows, int64_t cols) {
    return c.batched ? std::vector<int64_t>{kBatch, rows, cols}
                     : std::vector<int64_t>{rows, cols};
  };
  ScheduleBuilder b;
  GemmSchedule s;
  s.a = b.tensor(c.aType, c.layout.transposeA ? shape(kK, kM) : shape(kM, kK));
  s.b = b.tensor(c.bType, c.layout.transposeB ? shape(kN, kK) : shape(kK, kN));
  s.c = b.tensor(c.cType, shape(kM, kN));
  const int64_t result = b.tensor(c.cType, shape(kM, kN), s.c);
  GemmMaps maps = getDefaultGemmMaps(c.batched);
  for (int operand : {0, 1})
    if (operand == 0 ? c.layout.transposeA : c.layout.transposeB)
      std::swap(maps[operand][maps[operand].size() - 2], maps[operand].back());
  b.op({{"op", c.batched ? "linalg.batch_matmul" : "linalg.matmul"},
        {"operands", {s.a, s.b, s.c}},
        {"results", {result}},
        {"indexing_maps", maps}});
  s.text = b.text();
  return s;
}

std::vector<GemmLayout> getLayouts() {
  return {{false, false}, {true, false}, {false, true}, {true, true}};
}

/// Runs the GEMM on the host from random operands: `arena` gets the
/// memory the step started from, `expected` C's bytes after it.
void runOnHost(const Schedule &schedule, const GemmSchedule &ids, bool exact,
               HostStep &host, const Arena &arena,
               std::vector<std::byte> &expected) {
  std::mt19937 rng(11);
  for (int64_t id : {ids.a, ids.b, ids.c}) {
    const ValueInfo &value = schedule.values().values[id];
    const std::vector<std::byte> data =
        makeElements(value.dtype, value.numel, exact, rng);
    host.write(id, data.data(), static_cast<int64_t>(data.size()));
  }
  host.run(arena.base());
  expected = host.read(ids.c);
}

/// cublasGemmStridedBatchedEx's definition, column-major with alpha = beta
/// = 1: per batch, C = op(A) op(B) + C, X(i, j) at X[i + j * ldx], op(X)
/// X or its transpose; false where a leading dimension is one BLAS refuses.
bool runStridedBatchedGemm(bool transA, bool transB, int64_t m, int64_t n,
                           int64_t k, const float *a, int64_t lda,
                           int64_t strideA, const float *b, int64_t ldb,
                           int64_t strideB, float *c, int64_t ldc,
                           int64_t strideC, int64_t batch) {
  if (lda < std::max<int64_t>(1, transA ? k : m) ||
      ldb < std::max<int64_t>(1, transB ? n : k) ||
      ldc < std::max<int64_t>(1, m))
    return false;
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        float sum = c[p * strideC + i + j * ldc];
        for (int64_t l = 0; l < k; ++l)
          sum += a[p * strideA + (transA ? l + i * lda : i + l * lda)] *
                 b[p * strideB + (transB ? j + l * ldb : l + j * ldb)];
        c[p * strideC + i + j * ldc] = sum;
      }
  return true;
}

TEST(MatmulOnCpuTest, BlasCallComputesTheHostsProduct) {
  int runs = 0;
  for (bool batched : {false, true})
    for (const GemmLayout &layout : getLayouts()) {
      const GemmCase c{batched, layout, DType::F32, DType::F32, DType::F32};
      SCOPED_TRACE(describeGemm(c));
      const GemmSchedule ids = makeGemmSchedule(c);
      StatusOr<Schedule> schedule = Schedule::parse(ids.text, "gemm.json");
      ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
      HostStep host(*schedule);
      ASSERT_TRUE(host.isLoaded());
      const Arena arena(host.arenaBytes(), 0);
      std::vector<std::byte> expected;
      runOnHost(*schedule, ids, /*exact=*/true, host, arena, expected);

      const Instruction &inst = schedule->streams()[0].instructions[0];
      const BlasGemmCall call = getBlasGemmCall(
          getMatmulShape(getGemmShape(inst, schedule->values())));
      auto at = [&](int64_t id) {
        return reinterpret_cast<float *>(arena.base() + host.offsetOf(id));
      };
      // beta = 1: the result, C's buffer, accumulates (Matmul.cu).
      ASSERT_TRUE(runStridedBatchedGemm(
          call.transposeFirst, call.transposeSecond, call.m, call.n, call.k,
          at(ids.b), call.firstLd, call.firstStride, at(ids.a), call.secondLd,
          call.secondStride, at(ids.c), call.resultLd, call.resultStride,
          call.batch));
      ++runs;
      EXPECT_EQ(std::memcmp(at(ids.c), expected.data(), expected.size()), 0);
    }
  EXPECT_EQ(runs, 8);
}

/// Whether the host backend computes the GEMM with OpenBLAS, in its own
/// order: 16-bit and f32 operands into f32 are widened to f32 first
/// (host/Linalg.cpp). Small integers then make every order exact.
bool hostSumsInBlas(const GemmCase &c) {
  auto widens = [](DType t) {
    return t == DType::F32 || t == DType::BF16 || t == DType::F16;
  };
  return c.cType == DType::F32 && widens(c.aType) && widens(c.bType);
}

TEST(MatmulOnCpuTest, FallbackKernelIsTheHostsBitForBit) {
  const KernelLibrary library(
      std::string(kCudaShim) + "#include \"cuda/MatmulKernels.cuh\"\n" +
      makeLauncher("zk_matmul", "zero::runtime::cuda::matmulFallbackKernel"));
  ASSERT_NE(library.get(), nullptr);
  const KernelRunner run = findFunction(library.get(), "zk_matmul");
  ASSERT_NE(run, nullptr);

  // The combinations Matmul.cu leaves to the kernel.
  const std::vector<std::vector<DType>> types = {
      {DType::BF16, DType::F32, DType::F32},
      {DType::F32, DType::F16, DType::F16},
      {DType::F64, DType::F32, DType::F64},
      {DType::F32, DType::F32, DType::BF16},
      {DType::I32, DType::I32, DType::I32},
      {DType::I64, DType::I32, DType::I64}};
  int runs = 0;
  for (const std::vector<DType> &t : types)
    for (bool batched : {false, true})
      for (const GemmLayout &layout : getLayouts()) {
        const GemmCase c{batched, layout, t[0], t[1], t[2]};
        SCOPED_TRACE(describeGemm(c));
        const GemmSchedule ids = makeGemmSchedule(c);
        StatusOr<Schedule> schedule = Schedule::parse(ids.text, "gemm.json");
        ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
        const Instruction &inst = schedule->streams()[0].instructions[0];
        const MatmulShape shape =
            getMatmulShape(getGemmShape(inst, schedule->values()));
        const unsigned threads[] = {256, 32};
        const unsigned blocks[] = {
            gridFor(shape.batch * shape.m * shape.n, 256), 1};
        for (int launch : {0, 1}) {
          HostStep host(*schedule);
          ASSERT_TRUE(host.isLoaded());
          const Arena arena(host.arenaBytes(), 0);
          std::vector<std::byte> expected;
          runOnHost(*schedule, ids, hostSumsInBlas(c), host, arena, expected);
          FallbackParams p;
          p.a = arena.base() + host.offsetOf(ids.a);
          p.b = arena.base() + host.offsetOf(ids.b);
          p.c = arena.base() + host.offsetOf(ids.c);
          p.aType = c.aType;
          p.bType = c.bType;
          p.cType = c.cType;
          p.shape = shape;
          void *args[] = {&p};
          ASSERT_EQ(run(args, blocks[launch], threads[launch]), 0);
          ++runs;
          EXPECT_EQ(std::memcmp(p.c, expected.data(), expected.size()), 0)
              << blocks[launch] << " blocks of " << threads[launch];
        }
      }
  EXPECT_EQ(runs, 96);
}

} // namespace
