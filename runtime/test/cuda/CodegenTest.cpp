//===- CodegenTest.cpp - kernels generated from region bodies -------------===//
//
// The CUDA backend's code generator without a GPU: the loop nests it builds,
// which reductions are cooperative (a warp or a block per point) and their
// launch shapes, the vector path's widths and loads, the exact source of
// small kernels, and every kernel of
// StructuredCases.h
// compiled by NVRTC (which needs no device) for sm_90 (hardware bf16
// conversions), sm_80 (the software ones) and as PTX. Also the NVRTC
// options (no FMA contraction), the target choice, compile errors and the
// cache directory rules. Which instructions the device runs on the CPU
// (HostCompute.h) and how their errors are worded.
//
//===----------------------------------------------------------------------===//

#include "cuda/Codegen.h"
#include "Checked.h"
#include "OffloadedStep.h"
#include "RowPrograms.h"
#include "StructuredCases.h"
#include "cuda/CudaOps.h"
#include "cuda/HostCompute.h"
#include "cuda/KernelCache.h"
#include "cuda/RowFusion.h"

#include "zero/runtime/Schedule.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using nlohmann::json;
using zero::runtime::cudatest::makeOffloadedStep;
using zero::runtime::cudatest::OffloadedStep;
using zero::runtime::cudatest::ScopedEnv;
using zero::runtime::test::CaseBuilder;
using zero::runtime::test::getStructuredCases;
using zero::runtime::test::StructuredCase;

namespace {

/// A case decoded: its value table and instruction.
struct Decoded {
  ValueTable values;
  Instruction inst;
};

Decoded decode(const StructuredCase &c) {
  Decoded d;
  for (size_t i = 0; i < c.values.size(); ++i) {
    const auto &spec = c.values[i];
    ValueInfo value;
    value.id = static_cast<int64_t>(i);
    value.isTensor = spec.isTensor;
    value.dtype = spec.dtype;
    value.shape = spec.shape;
    value.numel = spec.numel();
    value.buffer = spec.isTensor ? value.id : -1;
    value.name = "%v" + std::to_string(i);
    d.values.values.push_back(value);
  }
  json inst = c.inst;
  inst["point"] = 0;
  inst["loc"] = "case.mlir:1:1";
  StatusOr<Instruction> decoded =
      decodeInstruction(inst.dump(), "instructions.compute[0]", d.values);
  EXPECT_TRUE(decoded.isOk()) << c.name << ": " << decoded.status().toString();
  if (decoded.isOk())
    d.inst = *decoded;
  return d;
}

GeneratedKernel generate(const Decoded &d, bool restrictInputs = false) {
  StatusOr<LoopNest> nest = cudatest::buildCheckedLoopNest(d.inst, d.values);
  EXPECT_TRUE(nest.isOk()) << nest.status().toString();
  if (!nest.isOk())
    return {};
  CodegenOptions options;
  options.restrictInputs = restrictInputs;
  StatusOr<GeneratedKernel> kernel = generateKernel(*nest, d.values, options);
  EXPECT_TRUE(kernel.isOk()) << kernel.status().toString();
  return kernel.isOk() ? *kernel : GeneratedKernel();
}

/// The source after the prelude: the kernel itself.
std::string kernelText(const GeneratedKernel &kernel) {
  const std::string &prelude = getKernelPrelude();
  EXPECT_EQ(kernel.source.compare(0, prelude.size(), prelude), 0);
  return kernel.source.substr(prelude.size());
}

std::optional<StructuredCase> findCase(const std::string &name) {
  for (const StructuredCase &c : getStructuredCases())
    if (c.name == name)
      return c;
  ADD_FAILURE() << "no case '" << name << "'";
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Generated source
//===----------------------------------------------------------------------===//

TEST(CodegenTest, PreludeIsElementMathVerbatim) {
  // The generated kernels' arithmetic is the file the host compiles, as the
  // build embedded it: not a copy that could drift.
  std::ifstream in(ZERO_RUNTIME_SOURCE_DIR "/src/ops/ElementMath.h");
  ASSERT_TRUE(in) << "cannot read ops/ElementMath.h";
  const std::string header((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
  ASSERT_GT(header.size(), 1000u);
  EXPECT_NE(getKernelPrelude().find(header), std::string::npos);
  EXPECT_NE(getKernelPrelude().find("namespace zk = zero::runtime::ops;"),
            std::string::npos);
}

TEST(CodegenTest, RowReductionKernel) {
  // Rows of 8 (< 64): one thread per row, in the host's order.
  CaseBuilder b("sum of exp");
  const int64_t x = b.tensor(DType::F32, {4, 8});
  const int64_t init = b.tensor(DType::F32, {4});
  const int64_t out = b.result(init);
  const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
  const int64_t e = b.op("math.exp", {a}, DType::F32);
  const int64_t s = b.op("arith.addf", {e, acc}, DType::F32);
  Decoded d = decode(b.finish({{"op", "linalg.reduce"},
                               {"operands", {x, init}},
                               {"results", {out}},
                               {"dimensions", {1}},
                               {"body", b.body({a, acc}, {s})}}));
  GeneratedKernel kernel = generate(d, /*restrictInputs=*/true);
  EXPECT_EQ(kernelText(kernel), R"(
// parallel nest, loops [4, 8 in-thread]
extern "C" __global__ void __launch_bounds__(256)
zero_structured(float *r0,
    const float *d0,
    const float *__restrict__ a0) {
  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < 4LL; p += (long long)gridDim.x * blockDim.x) {
    const long long i0 = p;
    const long long ba0 = i0 * 8LL;
    const long long bo0 = i0;
    float arg1 = zk::loadF32(d0, bo0);
    for (long long i1 = 0; i1 < 8LL; ++i1) {
      const float arg0 = zk::loadF32(a0, ba0 + i1);
      const float v0 = zk::roundF32(exp((double)arg0));
      const float v1 = v0 + arg1;
      const float y0 = v1;
      arg1 = y0;
    }
    zk::storeF32(r0, bo0, arg1);
  }
}
)");
  EXPECT_EQ(kernel.name, "zero_structured");
  EXPECT_EQ(kernel.numThreads, 4);
  EXPECT_EQ(kernel.numParameters(), 3u);
}

TEST(CodegenTest, WarpReductionKernel) {
  // Rows of 100: a warp per row; lane l sums elements l, l + 32, ... from
  // its first, the lanes combine at distances 16 to 1, and lane 0 adds the
  // destination's element once.
  CaseBuilder b("sum of exp");
  const int64_t x = b.tensor(DType::F32, {4, 100});
  const int64_t init = b.tensor(DType::F32, {4});
  const int64_t out = b.result(init);
  const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
  const int64_t e = b.op("math.exp", {a}, DType::F32);
  const int64_t s = b.op("arith.addf", {e, acc}, DType::F32);
  Decoded d = decode(b.finish({{"op", "linalg.reduce"},
                               {"operands", {x, init}},
                               {"results", {out}},
                               {"dimensions", {1}},
                               {"body", b.body({a, acc}, {s})}}));
  GeneratedKernel kernel = generate(d, /*restrictInputs=*/true);
  EXPECT_EQ(kernelText(kernel), R"(
// cooperative reduction, a warp per point, loops [4, 100 in-thread]
extern "C" __global__ void __launch_bounds__(256)
zero_structured(float *r0,
    const float *d0,
    const float *__restrict__ a0) {
  const int lane = threadIdx.x & 31;
  for (long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; p < 4LL; p += ((long long)gridDim.x * blockDim.x) >> 5) {
    const long long i0 = p;
    const long long ba0 = i0 * 100LL;
    const long long bo0 = i0;
    float c0 = 0.0;
    for (long long e = lane; e < 100LL; e += 32LL) {
      const long long i1 = e;
      const float arg0 = zk::loadF32(a0, ba0 + i1);
      const float v0 = zk::roundF32(exp((double)arg0));
      c0 = e < 32LL ? v0 : v0 + c0;
    }
    for (int m = 16; m > 0; m >>= 1) {
      const float o0 = __shfl_xor_sync(0xffffffffu, c0, m);
      c0 = o0 + c0;
    }
    if (lane == 0) {
      const float arg1 = zk::loadF32(d0, bo0);
      zk::storeF32(r0, bo0, c0 + arg1);
    }
  }
}
)");
  EXPECT_EQ(kernel.pointThreads, 32);
  EXPECT_EQ(kernel.numPoints, 4);
  EXPECT_EQ(kernel.numThreads, 128);
  EXPECT_EQ(kernel.numParameters(), 3u);
}

TEST(CodegenTest, BlockReductionKernel) {
  // Rows of 50257: a block of 256 per row; the 8 warps' values meet in
  // shared memory, warp 0 combines them at distances 4, 2, 1.
  std::optional<StructuredCase> c =
      findCase("cooperative bf16 max and f32 sum of exp over rows of 50257");
  ASSERT_TRUE(c);
  GeneratedKernel kernel = generate(decode(*c), true);
  const std::string text = kernelText(kernel);
  for (const char *piece : {
           "// cooperative reduction, a block of 256 threads per point, "
           "loops [2, 50257 in-thread]\n",
           "  __shared__ float w0[8];\n  __shared__ float w1[8];\n",
           "for (long long p = blockIdx.x; p < 2LL; p += gridDim.x) {",
           "for (long long e = threadIdx.x; e < 50257LL; e += 256LL) {",
           "c0 = e < 256LL ? arg0 : zk::roundBF16(zk::maximumF(c0, arg0));",
           "c1 = e < 256LL ? v2 : c1 + v2;",
           "const float o1 = __shfl_xor_sync(0xffffffffu, c1, m);",
           "    if (lane == 0) {\n      w0[warp] = c0;\n      w1[warp] = "
           "c1;\n    }\n    __syncthreads();\n    if (warp == 0) {\n      c0 "
           "= w0[lane & 7];\n      c1 = w1[lane & 7];\n      for (int m = 4; "
           "m > 0; m >>= 1) {",
           "zk::storeBF16(r0, bo0, zk::roundBF16(zk::maximumF(arg1, c0)));",
           "zk::storeF32(r1, bo1, arg2 + c1);",
           "      }\n    }\n    __syncthreads();\n  }\n}\n",
       })
    EXPECT_NE(text.find(piece), std::string::npos) << piece << "\nin\n" << text;
  EXPECT_EQ(kernel.pointThreads, 256);
  EXPECT_EQ(kernel.numPoints, 2);
}

TEST(CodegenTest, MapWithScalarsConstantsAndCompare) {
  // y = select(x > s, x * 0.1, -x) in bf16, s from outside; an unused input.
  // Nine points: no vectors of 2 or more divide them.
  CaseBuilder b("select");
  const int64_t x = b.tensor(DType::BF16, {3, 3});
  const int64_t unused = b.tensor(DType::I32, {3, 3});
  const int64_t init = b.tensor(DType::BF16, {3, 3});
  const int64_t out = b.result(init);
  const int64_t s = b.external(DType::BF16, 0.5);
  const int64_t a = b.scalar(DType::BF16), u = b.scalar(DType::I32),
                o = b.scalar(DType::BF16);
  const int64_t c = b.constant(DType::BF16, 0.1);
  const int64_t gt =
      b.op("arith.cmpf", {a, s}, DType::I1, {{"predicate", "ugt"}});
  const int64_t m = b.op("arith.mulf", {a, c}, DType::BF16);
  const int64_t n = b.op("arith.negf", {a}, DType::BF16);
  const int64_t y = b.op("arith.select", {gt, m, n}, DType::BF16);
  Decoded d = decode(b.finish({{"op", "linalg.map"},
                               {"operands", {x, unused, init}},
                               {"results", {out}},
                               {"body", b.body({a, u, o}, {y})}}));
  GeneratedKernel kernel = generate(d);
  EXPECT_EQ(kernelText(kernel), R"(
// parallel nest, loops [3, 3]
extern "C" __global__ void __launch_bounds__(256)
zero_structured(unsigned short *r0,
    const unsigned short *d0,
    const unsigned short *a0,
    const int *a1,
    const double *s0) {
  const float ext0 = *s0;
  const float v0 = 0.10009765625;
  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < 9LL; p += (long long)gridDim.x * blockDim.x) {
    unsigned q = (unsigned)p;
    const long long i1 = (long long)(q % 3u);
    q /= 3u;
    const long long i0 = (long long)q;
    const long long ba0 = i0 * 3LL + i1;
    const long long bo0 = i0 * 3LL + i1;
    const float arg0 = zk::loadBF16(a0, ba0);
    const long long v1 = (zk::compareFloats(zk::Predicate::UGT, arg0, ext0)) ? 1LL : 0LL;
    const float v2 = zk::roundBF16(arg0 * v0);
    const float v3 = zk::roundBF16(-arg0);
    const float v4 = v1 != 0 ? v2 : v3;
    zk::storeBF16(r0, bo0, v4);
  }
}
)");
  EXPECT_EQ(kernel.scalars, std::vector<int64_t>{s});
  EXPECT_TRUE(kernel.tensors.empty());
  EXPECT_EQ(kernel.numParameters(), 5u);
}

TEST(CodegenTest, SequentialNestKernel) {
  std::optional<StructuredCase> c = findCase("generic sequential nest");
  ASSERT_TRUE(c);
  GeneratedKernel kernel = generate(decode(*c));
  EXPECT_EQ(kernelText(kernel), R"(
// sequential nest, loops [6, 7]
extern "C" __global__ void __launch_bounds__(256)
zero_structured(float *r0,
    const float *d0,
    float *r1,
    const float *d1,
    const float *a0) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  if ((const void *)r0 != (const void *)d0)
    for (long long k = 0; k < 6LL; ++k)
      r0[k] = d0[k];
  if ((const void *)r1 != (const void *)d1)
    for (long long k = 0; k < 42LL; ++k)
      r1[k] = d1[k];
  for (long long i0 = 0; i0 < 6LL; ++i0) {
    for (long long i1 = 0; i1 < 7LL; ++i1) {
      const float arg0 = zk::loadF32(a0, i0 * 7LL + i1);
      const float arg1 = zk::loadF32(r0, i0);
      const float arg2 = zk::loadF32(r1, i0 * 7LL + i1);
      const float v0 = arg1 + arg0;
      const float v1 = v0 * arg2;
      zk::storeF32(r0, i0, v0);
      zk::storeF32(r1, i0 * 7LL + i1, v1);
    }
  }
}
)");
  EXPECT_EQ(kernel.numThreads, 1);
}

TEST(CodegenTest, ExtractKernel) {
  std::optional<StructuredCase> c =
      findCase("generic tensor.extract embedding lookup");
  ASSERT_TRUE(c);
  GeneratedKernel kernel = generate(decode(*c), true);
  EXPECT_EQ(kernelText(kernel), R"(
// parallel nest, loops [3, 11, 24]
extern "C" __global__ void __launch_bounds__(256)
zero_structured(float *r0,
    const float *d0,
    const long long *__restrict__ a0,
    const float *t0,
    ZkError *err,
    int site0,
    long long step) {
  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < 792LL; p += (long long)gridDim.x * blockDim.x) {
    unsigned q = (unsigned)p;
    const long long i2 = (long long)(q % 24u);
    q /= 24u;
    const long long i1 = (long long)(q % 11u);
    q /= 11u;
    const long long i0 = (long long)q;
    const long long ba0 = i0 * 11LL + i1;
    const long long bo0 = i0 * 264LL + i1 * 24LL + i2;
    const long long arg0 = zk::loadI64(a0, ba0);
    const long long v0 = i2;
    const long long v1 = arg0;
    long long e2 = 0;
    bool ok2 = true;
    if ((unsigned long long)v1 >= 17ULL) {
      zk_fail(err, site0, 0, v1, step);
      ok2 = false;
    }
    e2 += v1 * 24LL;
    if ((unsigned long long)v0 >= 24ULL) {
      zk_fail(err, site0, 1, v0, step);
      ok2 = false;
    }
    e2 += v0;
    const float v2 = ok2 ? zk::loadF32(t0, e2) : 0.0;
    zk::storeF32(r0, bo0, v2);
  }
}
)");
  EXPECT_EQ(kernel.tensors, std::vector<int64_t>{1});
  ASSERT_EQ(kernel.extractSites.size(), 1u);
  EXPECT_EQ(kernel.extractSites[0].bodyOp, 2u);
  EXPECT_EQ(kernel.extractSites[0].tensor, 1);
  EXPECT_EQ(kernel.numParameters(), 7u);
}

TEST(CodegenTest, IntegerAndCastExpressions) {
  // Spot checks of the register semantics in the generated text.
  std::optional<StructuredCase> ints = findCase("integer ops i32");
  std::optional<StructuredCase> casts = findCase("casts");
  ASSERT_TRUE(ints && casts);
  const std::string i = kernelText(generate(decode(*ints)));
  EXPECT_NE(i.find("zk::wrapI32((long long)((unsigned long long)arg0 + "
                   "(unsigned long long)arg1))"),
            std::string::npos);
  EXPECT_NE(
      i.find("zk::wrapI32((long long)zk::divUI(arg0, arg1, 32))"),
      std::string::npos);
  EXPECT_NE(i.find("zk::wrapI32((long long)zk::shRSI(arg0, arg2, 32))"),
            std::string::npos);
  const std::string c = kernelText(generate(decode(*casts)));
  // fptosi to i32 saturates at [-2^31, 2^31 - 1]; f32 rounds once from i64,
  // bf16 through double (as the host does).
  EXPECT_NE(c.find("zk::wrapI32(zk::floatToSigned(arg0, 32))"),
            std::string::npos);
  EXPECT_NE(c.find("zk::wrapI1(zk::floatToSigned(arg0, 1))"),
            std::string::npos);
  EXPECT_NE(c.find("(float)arg2;"), std::string::npos);
  EXPECT_NE(c.find("zk::roundBF16((double)arg2)"), std::string::npos);
  EXPECT_NE(c.find("(long long)zk::floatToUnsigned(arg4, 64)"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Loop nests
//===----------------------------------------------------------------------===//

TEST(CodegenTest, LoopNests) {
  struct Expected {
    const char *name;
    std::vector<bool> inThread;
    bool sequential;
    int64_t numPoints;
    int pointThreads;
  };
  const Expected expected[] = {
      {"reduce sum of squares over dim 1", {false, true}, false, 37, 32},
      {"reduce sum of squares over dim 0", {true, false}, false, 301, 1},
      {"reduce max over dims 0 and 2 in bf16",
       {true, false, true},
       false,
       4,
       1},
      {"reduce over an empty dimension keeps the destination",
       {false, true},
       false,
       4,
       1},
      {"map over an empty tensor", {false, false}, false, 0, 1},
      {"generic matmul", {false, false, true}, false, 63, 1},
      {"generic transposed output and broadcast input",
       {false, false},
       false,
       1040,
       1},
      {"generic parallel loop indexed by no output",
       {false, true},
       false,
       20,
       1},
      {"generic full reduction to a scalar tensor", {true}, false, 1, 32},
      {"generic sequential nest", {true, true}, true, 1, 1},
      {"generic accumulators that swap", {false, true}, false, 5, 1},
      {"cooperative f32 sums over rows of 50257", {false, true}, false, 2, 256},
      {"cooperative reduction over loops 0 and 2 with linalg.index",
       {true, false, true},
       false,
       4,
       32},
      {"cooperative threshold: rows of 33 stay one thread each",
       {false, true},
       false,
       5,
       1},
      {"column sum of f32 over 300 rows of 40", {true, false}, false, 40, 32},
      {"column sums of bf16 into f32 and max over 200 rows of 50",
       {true, true, false},
       false,
       50,
       16},
      {"cooperative rule: a strided input stays one thread per point",
       {false, true},
       false,
       3,
       1},
  };
  for (const Expected &e : expected) {
    std::optional<StructuredCase> c = findCase(e.name);
    ASSERT_TRUE(c);
    Decoded d = decode(*c);
    StatusOr<LoopNest> nest = cudatest::buildCheckedLoopNest(d.inst, d.values);
    ASSERT_TRUE(nest.isOk()) << nest.status().toString();
    EXPECT_EQ(nest->inThread, e.inThread) << e.name;
    EXPECT_EQ(nest->sequential, e.sequential) << e.name;
    EXPECT_EQ(nest->numPoints(), e.numPoints) << e.name;
    EXPECT_EQ(nest->pointThreads, e.pointThreads) << e.name;
    EXPECT_EQ(nest->numThreads(), e.numPoints * e.pointThreads) << e.name;
  }
}

/// The threads per point buildLoopNest plans for a reduction of `shape`
/// over `dims` (linalg.reduce) or a generic with `maps` and iterators whose
/// body `makeBody(b, arguments)` yields (one output per entry of dests).
struct Planned {
  int pointThreads = 0;
  int pointsPerBlock = 0;
  std::vector<size_t> combineOps;
  std::vector<size_t> accumulatorOperand;
};

template <typename MakeBody>
Planned planReduce(std::vector<int64_t> shape, std::vector<int64_t> dims,
                   int numOutputs, MakeBody makeBody, DType type = DType::F32) {
  CaseBuilder b("plan");
  std::vector<int64_t> kept;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::find(dims.begin(), dims.end(), int64_t(d)) == dims.end())
      kept.push_back(shape[d]);
  std::vector<int64_t> operands, results, args;
  for (int k = 0; k < numOutputs; ++k)
    operands.push_back(b.tensor(type, shape));
  for (int k = 0; k < numOutputs; ++k)
    operands.push_back(b.tensor(type, kept));
  for (int k = 0; k < numOutputs; ++k)
    results.push_back(b.result(operands[numOutputs + k]));
  for (int k = 0; k < 2 * numOutputs; ++k)
    args.push_back(b.scalar(type));
  const std::vector<int64_t> yields = makeBody(b, args);
  Decoded d = decode(b.finish({{"op", "linalg.reduce"},
                               {"operands", operands},
                               {"results", results},
                               {"dimensions", dims},
                               {"body", b.body(args, yields)}}));
  StatusOr<LoopNest> nest = cudatest::buildCheckedLoopNest(d.inst, d.values);
  EXPECT_TRUE(nest.isOk()) << nest.status().toString();
  if (!nest.isOk())
    return {};
  return {nest->pointThreads, nest->pointsPerBlock, nest->combineOps,
          nest->accumulatorOperand};
}

TEST(CodegenTest, CooperativeBodies) {
  // yield combine(acc, f): each combine op, the accumulator on either side.
  for (const char *op :
       {"arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf"}) {
    Planned p = planReduce({3, 100}, {1}, 1, [&](CaseBuilder &b, auto a) {
      const int64_t e = b.op("math.exp", {a[0]}, DType::F32);
      return std::vector<int64_t>{b.op(op, {e, a[1]}, DType::F32)};
    });
    EXPECT_EQ(p.pointThreads, 32) << op;
    EXPECT_EQ(p.combineOps, std::vector<size_t>{1}) << op;
    EXPECT_EQ(p.accumulatorOperand, std::vector<size_t>{1}) << op;
  }
  for (const char *op :
       {"arith.addi", "arith.muli", "arith.maxsi", "arith.minsi", "arith.andi",
        "arith.ori", "arith.xori"}) {
    Planned p = planReduce(
        {3, 100}, {1}, 1,
        [&](CaseBuilder &b, auto a) {
          return std::vector<int64_t>{b.op(op, {a[1], a[0]}, DType::I32)};
        },
        DType::I32);
    EXPECT_EQ(p.pointThreads, 32) << op;
    EXPECT_EQ(p.accumulatorOperand, std::vector<size_t>{0}) << op;
  }
  // Two outputs, each with its own combine; f a constant (a count).
  Planned two = planReduce({3, 100}, {1}, 2, [](CaseBuilder &b, auto a) {
    const int64_t one = b.constant(DType::F32, 1.0);
    return std::vector<int64_t>{
        b.op("arith.maximumf", {a[2], a[0]}, DType::F32),
        b.op("arith.addf", {one, a[3]}, DType::F32)};
  });
  EXPECT_EQ(two.pointThreads, 32);
  EXPECT_EQ(two.combineOps, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(two.accumulatorOperand, (std::vector<size_t>{0, 1}));

  // Not of the form: one thread per point.
  auto single = [](auto makeYield) {
    return planReduce({3, 100}, {1}, 1, makeYield).pointThreads;
  };
  // argmax: the index's select reads the max's accumulator.
  EXPECT_EQ(
      planReduce({3, 100}, {1}, 2,
                 [](CaseBuilder &b, auto a) {
                   const int64_t gt = b.op("arith.cmpf", {a[0], a[2]},
                                           DType::I1, {{"predicate", "ogt"}});
                   return std::vector<int64_t>{
                       b.op("arith.maximumf", {a[2], a[0]}, DType::F32),
                       b.op("arith.select", {gt, a[1], a[3]}, DType::F32)};
                 })
          .pointThreads,
      1);
  // f reads the accumulator.
  EXPECT_EQ(
      single([](CaseBuilder &b, auto a) {
        const int64_t m = b.op("arith.mulf", {a[0], a[1]}, DType::F32);
        return std::vector<int64_t>{b.op("arith.addf", {a[1], m}, DType::F32)};
      }),
      1);
  // A combine's result read by another op (even an unused one).
  EXPECT_EQ(single([](CaseBuilder &b, auto a) {
              const int64_t s = b.op("arith.addf", {a[1], a[0]}, DType::F32);
              b.op("arith.mulf", {s, s}, DType::F32);
              return std::vector<int64_t>{s};
            }),
            1);
  // combine(acc, acc), a non-associative op, the accumulator itself.
  EXPECT_EQ(single([](CaseBuilder &b, auto a) {
              return std::vector<int64_t>{
                  b.op("arith.addf", {a[1], a[1]}, DType::F32)};
            }),
            1);
  EXPECT_EQ(single([](CaseBuilder &b, auto a) {
              return std::vector<int64_t>{
                  b.op("arith.subf", {a[1], a[0]}, DType::F32)};
            }),
            1);
  EXPECT_EQ(
      single([](CaseBuilder &, auto a) { return std::vector<int64_t>{a[1]}; }),
      1);
  EXPECT_EQ(
      single([](CaseBuilder &, auto a) { return std::vector<int64_t>{a[0]}; }),
      1);
  // Each output combines its own accumulator, not another's.
  EXPECT_EQ(planReduce({3, 100}, {1}, 2,
                       [](CaseBuilder &b, auto a) {
                         return std::vector<int64_t>{
                             b.op("arith.addf", {a[3], a[0]}, DType::F32),
                             b.op("arith.addf", {a[2], a[1]}, DType::F32)};
                       })
                .pointThreads,
            1);
}

TEST(CodegenTest, CooperativeShapes) {
  auto sum = [](CaseBuilder &b, auto a) {
    return std::vector<int64_t>{b.op("arith.addf", {a[1], a[0]}, DType::F32)};
  };
  // At least 64 elements per point; a block above 4096.
  EXPECT_EQ(planReduce({5, 63}, {1}, 1, sum).pointThreads, 1);
  EXPECT_EQ(planReduce({5, 64}, {1}, 1, sum).pointThreads, 32);
  EXPECT_EQ(planReduce({5, 4096}, {1}, 1, sum).pointThreads, 32);
  EXPECT_EQ(planReduce({5, 4097}, {1}, 1, sum).pointThreads, 256);
  // Counted over every reduced loop: 8 x 8.
  EXPECT_EQ(planReduce({8, 3, 8}, {0, 2}, 1, sum).pointThreads, 32);
  // Loops of size 1 do not count as innermost.
  EXPECT_EQ(planReduce({3, 100, 1}, {1}, 1, sum).pointThreads, 32);
  // Many points set no limit.
  EXPECT_EQ(planReduce({100000, 64}, {1}, 1, sum).pointThreads, 32);
  // A full reduction to one point.
  EXPECT_EQ(planReduce({10000}, {0}, 1, sum).pointThreads, 256);
}

TEST(CodegenTest, ColumnShapes) {
  auto sum = [](DType type) {
    return [type](CaseBuilder &b, auto a) {
      return std::vector<int64_t>{b.op(getDTypeName(type) == std::string("i32")
                                           ? "arith.addi"
                                           : "arith.addf",
                                       {a[1], a[0]}, type)};
    };
  };
  auto plan = [&](std::vector<int64_t> shape, std::vector<int64_t> dims,
                  DType type = DType::F32) {
    Planned p = planReduce(shape, dims, 1, sum(type), type);
    return std::make_pair(p.pointsPerBlock, p.pointThreads);
  };
  using Shape = std::pair<int, int>; // points per block, slices
  // A block's points fill a 32-byte sector of the input: 8 f32 or f64, 16
  // bf16 (at least 8 points; 256 threads in all).
  EXPECT_EQ(plan({100, 7}, {0}), Shape(8, 32));
  EXPECT_EQ(plan({8192, 768}, {0}), Shape(8, 32));
  EXPECT_EQ(plan({8192, 768}, {0}, DType::BF16), Shape(16, 16));
  EXPECT_EQ(plan({100, 7}, {0}, DType::F64), Shape(8, 32));
  EXPECT_EQ(plan({100, 7}, {0}, DType::I32), Shape(8, 32));
  // Reduced over the outer loops of [8, 64, 96].
  EXPECT_EQ(plan({8, 64, 96}, {0, 1}), Shape(8, 32));
  // At least 64 elements per point, at most 16384 points; else a thread
  // per point.
  EXPECT_EQ(plan({63, 7}, {0}), Shape(0, 1));
  EXPECT_EQ(plan({64, 16384}, {0}), Shape(8, 32));
  EXPECT_EQ(plan({64, 16385}, {0}), Shape(0, 1));
  // The reduced loop in the middle: the innermost loop is parallel.
  EXPECT_EQ(plan({3, 100, 5}, {1}), Shape(8, 32));
  // At most 8 outputs (2 KiB of shared memory each).
  auto sums = [](CaseBuilder &b, auto a) {
    std::vector<int64_t> yields;
    const size_t n = a.size() / 2;
    for (size_t k = 0; k < n; ++k)
      yields.push_back(b.op("arith.addf", {a[n + k], a[k]}, DType::F32));
    return yields;
  };
  EXPECT_EQ(planReduce({100, 7}, {0}, 8, sums).pointsPerBlock, 8);
  EXPECT_EQ(planReduce({100, 7}, {0}, 9, sums).pointsPerBlock, 0);
}

TEST(CodegenTest, CooperativeStrides) {
  // generic [i, k] -> [i]: each used input contiguous or broadcast along k.
  auto plan = [](std::vector<std::vector<int64_t>> inputMaps, bool useAll) {
    CaseBuilder b("strides");
    std::vector<int64_t> operands, args;
    for (const auto &map : inputMaps)
      operands.push_back(b.tensor(
          DType::F32, map.size() == 2
                          ? (map[0] == 0 ? std::vector<int64_t>{3, 200}
                                         : std::vector<int64_t>{200, 3})
                          : std::vector<int64_t>{map[0] == 0 ? 3 : 200}));
    const int64_t init = b.tensor(DType::F32, {3});
    const int64_t out = b.result(init);
    for (size_t i = 0; i <= inputMaps.size(); ++i)
      args.push_back(b.scalar(DType::F32));
    int64_t f = args[0];
    for (size_t i = 1; useAll && i < inputMaps.size(); ++i)
      f = b.op("arith.mulf", {f, args[i]}, DType::F32);
    const int64_t s = b.op("arith.addf", {args.back(), f}, DType::F32);
    json maps = json::array();
    for (const auto &map : inputMaps)
      maps.push_back(map);
    maps.push_back({0});
    operands.push_back(init);
    Decoded d = decode(b.finish({{"op", "linalg.generic"},
                                 {"operands", operands},
                                 {"results", {out}},
                                 {"indexing_maps", maps},
                                 {"iterator_types", {"parallel", "reduction"}},
                                 {"body", b.body(args, {s})}}));
    StatusOr<LoopNest> nest = cudatest::buildCheckedLoopNest(d.inst, d.values);
    EXPECT_TRUE(nest.isOk());
    return nest.isOk() ? nest->pointThreads : 0;
  };
  EXPECT_EQ(plan({{0, 1}, {0}}, true), 32);     // broadcast row value
  EXPECT_EQ(plan({{0, 1}, {1}}, true), 32);     // contiguous vector
  EXPECT_EQ(plan({{1, 0}}, true), 1);           // transposed
  EXPECT_EQ(plan({{0, 1}, {1, 0}}, true), 1);   // one of them transposed
  EXPECT_EQ(plan({{0, 1}, {1, 0}}, false), 32); // ... but never read
}

TEST(CodegenTest, LaunchShapes) {
  auto shape = [](int pointThreads, int64_t numPoints, int sms,
                  bool sequential = false,
                  int resident = kThreadsPerMultiprocessor) {
    GeneratedKernel kernel;
    kernel.pointThreads = pointThreads;
    kernel.numPoints = numPoints;
    kernel.numThreads = numPoints * pointThreads;
    kernel.sequential = sequential;
    const LaunchShape s = getLaunchShape(kernel, sms, resident);
    return std::make_pair(s.blocks, s.threads);
  };
  using Shape = std::pair<int64_t, int>;
  // One thread per point: blocks of 256, smaller when the points are few,
  // at most one wave (2048 threads per multiprocessor).
  EXPECT_EQ(shape(1, 1000000, 132), Shape(1056, 256));
  EXPECT_EQ(shape(1, 37, 132), Shape(2, 32));
  EXPECT_EQ(shape(1, 0, 132), Shape(0, 1));
  EXPECT_EQ(shape(1, 1, 132, true), Shape(1, 1));
  // A warp per point: whole warps per block.
  EXPECT_EQ(shape(32, 3, 132), Shape(3, 32));
  EXPECT_EQ(shape(32, 8192, 132), Shape(1024, 256));
  EXPECT_EQ(shape(32, 98304, 132), Shape(1056, 256));
  // A block of 256 per point.
  EXPECT_EQ(shape(256, 2, 132), Shape(2, 256));
  EXPECT_EQ(shape(256, 8192, 132), Shape(1056, 256));
  // The wave is the kernel's occupancy: 3 blocks of 256 per
  // multiprocessor where its registers allow 768 threads (rounded down to
  // whole blocks, at least one; never above 2048).
  EXPECT_EQ(shape(1, 1000000, 132, false, 768), Shape(396, 256));
  EXPECT_EQ(shape(1, 1000000, 132, false, 1000), Shape(396, 256));
  EXPECT_EQ(shape(1, 1000000, 132, false, 100), Shape(132, 256));
  EXPECT_EQ(shape(1, 1000000, 132, false, 4096), Shape(1056, 256));
  EXPECT_EQ(shape(256, 8192, 132, false, 512), Shape(264, 256));
  EXPECT_EQ(shape(32, 98304, 132, false, 1024), Shape(528, 256));
}

TEST(CodegenTest, CopyKinds) {
  // DataMovement.cu's choice, which the cost model prices: one element and
  // one contiguous run are a memcpy; an inner transpose of elements of at
  // most 8 bytes, tiles; the rest, the strided copy kernel.
  using ops::simplifyCopy;
  EXPECT_EQ(chooseCopyKind(simplifyCopy({4, 0}, {0, 1}, {0, 1}), 4),
            CopyKind::Empty);
  EXPECT_EQ(chooseCopyKind(simplifyCopy({1, 1}, {1, 1}, {1, 1}), 4),
            CopyKind::Memcpy);
  EXPECT_EQ(chooseCopyKind(simplifyCopy({4, 6}, {6, 1}, {6, 1}), 4),
            CopyKind::Memcpy);
  EXPECT_EQ(chooseCopyKind(simplifyCopy({64, 32}, {32, 1}, {1, 64}), 8),
            CopyKind::Transpose);
  EXPECT_EQ(chooseCopyKind(simplifyCopy({64, 32}, {32, 1}, {1, 64}), 16),
            CopyKind::Generic);
  EXPECT_EQ(chooseCopyKind(simplifyCopy({8192, 768}, {768, 1}, {0, 1}), 4),
            CopyKind::Generic);
}

TEST(CodegenTest, VectorWidths) {
  // The widest vector within 16 bytes that divides the innermost loop,
  // along that loop; none for reductions, linalg.index, tensor.extract or
  // a loop that 2 does not divide.
  struct Expected {
    const char *name;
    int width;
    size_t loop;
  };
  for (const Expected &e : std::vector<Expected>{
           {"float ops bf16 as vectors", 8, 0},
           {"float ops f16 as vectors", 8, 0},
           {"float ops f32 as vectors", 4, 0},
           {"float ops f64 as vectors", 2, 0},
           {"integer ops i1 as vectors", 8, 0},
           {"integer ops i32 as vectors", 4, 0},
           {"casts as vectors", 2, 0},
           {"generic bias, row scale and transposed input as vectors", 4, 1},
           {"generic accumulating into its destinations as vectors", 2, 1},
           {"map in place over its input as vectors", 4, 1},
           {"generic exp of x minus its row max", 4, 1},
           {"float ops f32", 1, 0},
           {"map in place over its input", 4, 1},
           {"generic transposed output and broadcast input", 1, 0},
           {"reduce sum of squares over dim 0", 1, 0},
           {"reduce argmax with linalg.index", 1, 0},
           {"generic tensor.extract embedding lookup", 1, 0},
       }) {
    SCOPED_TRACE(e.name);
    std::optional<StructuredCase> c = findCase(e.name);
    ASSERT_TRUE(c);
    Decoded d = decode(*c);
    StatusOr<LoopNest> nest = cudatest::buildCheckedLoopNest(d.inst, d.values);
    ASSERT_TRUE(nest.isOk()) << nest.status().toString();
    EXPECT_EQ(nest->vectorWidth, e.width);
    if (e.width > 1) {
      EXPECT_EQ(nest->vectorLoop, e.loop);
      // A thread per vector; the launch is shaped for those threads.
      const GeneratedKernel kernel = generate(d);
      EXPECT_EQ(kernel.vectorWidth, e.width);
      EXPECT_EQ(kernel.numThreads, kernel.numPoints / e.width);
    }
  }
}

TEST(CodegenTest, VectorKernel) {
  // In place, f32: vectors of 4 of the input and the destination (the
  // same buffer), the body once per element, one vector store; the scalar
  // loop for pointers that are not 16-byte aligned.
  std::optional<StructuredCase> c =
      findCase("map in place over its input as vectors");
  ASSERT_TRUE(c);
  EXPECT_EQ(kernelText(generate(decode(*c))), R"(
// parallel nest, loops [500, 16], vectors of 4 along loops 0-1
extern "C" __global__ void __launch_bounds__(256)
zero_structured(float *r0,
    const float *d0,
    const float *a0) {
  const float v0 = 1.5;
  if ((((unsigned long long)r0 & 15ULL) | ((unsigned long long)d0 & 15ULL) | ((unsigned long long)a0 & 15ULL)) == 0) {
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < 2000LL; t += (long long)gridDim.x * blockDim.x) {
      const long long p = t * 4;
      unsigned q = (unsigned)p;
      const long long i1 = (long long)(q % 16u);
      q /= 16u;
      const long long i0 = (long long)q;
      const long long ba0 = i0 * 16LL + i1;
      const long long bo0 = i0 * 16LL + i1;
      const ZkVector<float, 4> x0 = *(const ZkVector<float, 4> *)(a0 + ba0);
      const ZkVector<float, 4> xd0 = *(const ZkVector<float, 4> *)(d0 + bo0);
      ZkVector<float, 4> y0;
      #pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float arg0 = zk::loadF32(x0.v, k);
        const float arg1 = zk::loadF32(xd0.v, k);
        const float v1 = arg0 * v0;
        const float v2 = v1 - arg1;
        zk::storeF32(y0.v, k, v2);
      }
      *(ZkVector<float, 4> *)(r0 + bo0) = y0;
    }
    return;
  }
  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < 8000LL; p += (long long)gridDim.x * blockDim.x) {
    unsigned q = (unsigned)p;
    const long long i1 = (long long)(q % 16u);
    q /= 16u;
    const long long i0 = (long long)q;
    const long long ba0 = i0 * 16LL + i1;
    const long long bo0 = i0 * 16LL + i1;
    const float arg0 = zk::loadF32(a0, ba0);
    const float arg1 = zk::loadF32(d0, bo0);
    const float v1 = arg0 * v0;
    const float v2 = v1 - arg1;
    zk::storeF32(r0, bo0, v2);
  }
}
)");
}

TEST(CodegenTest, VectorKernelsLoadAndStoreVectors) {
  // NVRTC turns the vectors into single wide loads and stores: the bias's
  // four f32 through the read-only path, the bf16 input's four as one
  // 8-byte load; the row scale and the transposed input stay scalar.
  std::optional<StructuredCase> c =
      findCase("generic bias, row scale and transposed input as vectors");
  ASSERT_TRUE(c);
  StatusOr<CompiledKernel> ptx =
      compileKernelSource(generate(decode(*c), true).source, "compute_90");
  ASSERT_TRUE(ptx.isOk()) << ptx.status().toString();
  for (const char *instruction : {"ld.global.nc.v4.f32", "ld.global.nc.v4.u16",
                                  "st.global.v4.u16", "ld.global.nc.u16"})
    EXPECT_NE(ptx->image.find(instruction), std::string::npos) << instruction;
  // bf16 and i1 results of one loop: 16 and 8 bytes per thread.
  std::optional<StructuredCase> bf16 = findCase("float ops bf16 as vectors");
  ASSERT_TRUE(bf16);
  ptx = compileKernelSource(generate(decode(*bf16), true).source, "compute_90");
  ASSERT_TRUE(ptx.isOk()) << ptx.status().toString();
  EXPECT_NE(ptx->image.find("st.global.v4.u32"), std::string::npos);
  EXPECT_NE(ptx->image.find("st.global.v2.u32"), std::string::npos);
}

TEST(CodegenTest, LoopOfSizeOneIsParallel) {
  // Output 1 does not index loop 1, but its size is 1: no sequential nest.
  CaseBuilder b("size one");
  const int64_t x = b.tensor(DType::F32, {5, 1});
  const int64_t i1 = b.tensor(DType::F32, {5});
  const int64_t i2 = b.tensor(DType::F32, {5, 1});
  const int64_t o1 = b.result(i1), o2 = b.result(i2);
  const int64_t a = b.scalar(DType::F32), p = b.scalar(DType::F32),
                q = b.scalar(DType::F32);
  Decoded d = decode(b.finish({{"op", "linalg.generic"},
                               {"operands", {x, i1, i2}},
                               {"results", {o1, o2}},
                               {"indexing_maps", {{0, 1}, {0}, {0, 1}}},
                               {"iterator_types", {"parallel", "parallel"}},
                               {"body", b.body({a, p, q}, {a, a})}}));
  StatusOr<LoopNest> nest = cudatest::buildCheckedLoopNest(d.inst, d.values);
  ASSERT_TRUE(nest.isOk());
  EXPECT_FALSE(nest->sequential);
  EXPECT_EQ(nest->inThread, (std::vector<bool>{false, false}));
  EXPECT_EQ(nest->numThreads(), 5);
}

TEST(CodegenTest, NotAStructuredOp) {
  ValueTable values;
  Instruction inst;
  inst.info = &getOpInfo(OpCode::Matmul);
  inst.op = "linalg.matmul";
  inst.results = {0};
  StatusOr<LoopNest> nest = buildLoopNest(inst, values, ops::BodyProgram());
  ASSERT_FALSE(nest.isOk());
  EXPECT_EQ(nest.status().code(), StatusCode::kInternal);
}

TEST(CodegenTest, DoubleLiterals) {
  EXPECT_EQ(formatDoubleLiteral(0.5), "0.5");
  EXPECT_EQ(formatDoubleLiteral(1.0), "1.0");
  EXPECT_EQ(formatDoubleLiteral(-0.0), "-0.0");
  EXPECT_EQ(formatDoubleLiteral(0.0), "0.0");
  EXPECT_EQ(formatDoubleLiteral(1e-5), "1e-05");
  EXPECT_EQ(formatDoubleLiteral(0.1), "0.1");
  EXPECT_EQ(formatDoubleLiteral(static_cast<float>(0.1)),
            "0.10000000149011612");
  EXPECT_EQ(formatDoubleLiteral(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(formatDoubleLiteral(9007199254740993.0), "9007199254740992.0");
  EXPECT_EQ(formatDoubleLiteral(HUGE_VAL),
            "zk::doubleOfBits(0x7ff0000000000000ULL)");
  EXPECT_EQ(formatDoubleLiteral(-HUGE_VAL),
            "zk::doubleOfBits(0xfff0000000000000ULL)");
  for (double v : {3.14159, 1e300, 4.9e-324, -2.5e-310, 123456789.0})
    EXPECT_EQ(std::strtod(formatDoubleLiteral(v).c_str(), nullptr), v) << v;
}

//===----------------------------------------------------------------------===//
// NVRTC
//===----------------------------------------------------------------------===//

TEST(CodegenTest, EveryCaseCompilesWithNvrtc) {
  // sm_90: the hardware f64 -> bf16 conversion; sm_80: the software one.
  for (const StructuredCase &c : getStructuredCases()) {
    Decoded d = decode(c);
    for (bool restrictInputs : {false, true}) {
      GeneratedKernel kernel = generate(d, restrictInputs);
      for (const char *target : {"sm_90", "sm_80"}) {
        if (restrictInputs && std::string(target) == "sm_80")
          continue;
        StatusOr<CompiledKernel> compiled =
            compileKernelSource(kernel.source, target);
        ASSERT_TRUE(compiled.isOk()) << c.name << " for " << target << ": "
                                     << compiled.status().toString();
        EXPECT_FALSE(compiled->isPtx);
        EXPECT_GT(compiled->image.size(), 0u);
      }
    }
  }
}

TEST(CodegenTest, PtxForAnArchitectureNvrtcDoesNotKnow) {
  // A made-up compute capability 9.9: PTX for the newest older target.
  StatusOr<std::string> target = chooseKernelTarget(9, 9);
  ASSERT_TRUE(target.isOk()) << target.status().toString();
  EXPECT_EQ(*target, "compute_90");
  StatusOr<std::string> h100 = chooseKernelTarget(9, 0);
  ASSERT_TRUE(h100.isOk());
  EXPECT_EQ(*h100, "sm_90");
  StatusOr<std::string> old = chooseKernelTarget(3, 5);
  ASSERT_FALSE(old.isOk());
  EXPECT_NE(old.status().message().find("compute capability 3.5 is older"),
            std::string::npos)
      << old.status().message();

  std::optional<StructuredCase> c = findCase("float ops f64");
  ASSERT_TRUE(c);
  StatusOr<CompiledKernel> ptx =
      compileKernelSource(generate(decode(*c)).source, *target);
  ASSERT_TRUE(ptx.isOk()) << ptx.status().toString();
  EXPECT_TRUE(ptx->isPtx);
  ASSERT_FALSE(ptx->image.empty());
  EXPECT_EQ(ptx->image.back(), '\0');
  EXPECT_NE(ptx->image.find(".entry zero_structured"), std::string::npos);
}

TEST(CodegenTest, NoFusedMultiplyAdd) {
  // (x * y + x) / y - y must round after the multiply: no fma in the PTX,
  // for double and for f32 (computed in float registers).
  for (const char *name :
       {"float ops f64", "float ops f32", "generic matmul",
        "cooperative sum of squared deviations over rows of 768"}) {
    std::optional<StructuredCase> c = findCase(name);
    ASSERT_TRUE(c);
    StatusOr<CompiledKernel> ptx =
        compileKernelSource(generate(decode(*c)).source, "compute_90");
    ASSERT_TRUE(ptx.isOk()) << ptx.status().toString();
    EXPECT_EQ(ptx->image.find("fma."), std::string::npos) << name;
    EXPECT_NE(ptx->image.find("mul.rn."), std::string::npos) << name;
  }
}

TEST(CodegenTest, CooperativeKernelsShuffle) {
  // Butterfly shuffles of 64-bit registers; a block reduction's barriers.
  std::optional<StructuredCase> c =
      findCase("cooperative bf16 max and f32 sum of exp over rows of 50257");
  ASSERT_TRUE(c);
  StatusOr<CompiledKernel> ptx =
      compileKernelSource(generate(decode(*c)).source, "compute_90");
  ASSERT_TRUE(ptx.isOk()) << ptx.status().toString();
  EXPECT_NE(ptx->image.find("shfl.sync.bfly.b32"), std::string::npos);
  EXPECT_NE(ptx->image.find("bar.sync"), std::string::npos);
  EXPECT_EQ(ptx->image.find("atom."), std::string::npos);
}

TEST(CodegenTest, ColumnKernelsCombineSlicesInAFixedTree) {
  // 16 bf16 points by 16 slices: partials in shared memory, combined at
  // distances 8, 4, 2, 1 slices (16 points apart each), no atomics.
  std::optional<StructuredCase> c =
      findCase("column sums of bf16 into f32 and max over 200 rows of 50");
  ASSERT_TRUE(c);
  const GeneratedKernel kernel = generate(decode(*c));
  EXPECT_EQ(kernel.pointsPerBlock, 16);
  EXPECT_EQ(kernel.pointThreads, 16);
  const std::string &source = kernel.source;
  for (const char *expected :
       {"// column reduction, blocks of 16 points by 16 slices, loops [4 "
        "in-thread, 50 in-thread, 50]",
        "__shared__ float w0[256];", "const int slice = threadIdx.x / 16;",
        "for (long long e = slice; e < 200LL; e += 16LL) {", "if (slice < 8) {",
        "w0[threadIdx.x + 128]", "if (slice < 1) {", "w1[threadIdx.x + 16]",
        "if (slice == 0 && owner) {"})
    EXPECT_NE(source.find(expected), std::string::npos) << expected << "\n"
                                                        << source;
  StatusOr<CompiledKernel> ptx = compileKernelSource(source, "compute_90");
  ASSERT_TRUE(ptx.isOk()) << ptx.status().toString();
  EXPECT_NE(ptx->image.find("bar.sync"), std::string::npos);
  EXPECT_EQ(ptx->image.find("atom."), std::string::npos);
  // 50 points: 4 blocks, the last one owning 2 points.
  EXPECT_EQ(getLaunchShape(kernel, 132).blocks, 4);
  EXPECT_EQ(getLaunchShape(kernel, 132).threads, 256);
  // At most one wave of resident blocks: 8 per multiprocessor.
  GeneratedKernel many = kernel;
  many.numPoints = 16384;
  EXPECT_EQ(getLaunchShape(many, 100).blocks, 800);
}

TEST(CodegenTest, HardwareConversionsOnlyWhereTheGpuHasThem) {
  std::optional<StructuredCase> c = findCase("float ops bf16");
  ASSERT_TRUE(c);
  const std::string source = generate(decode(*c)).source;
  StatusOr<CompiledKernel> sm90 = compileKernelSource(source, "compute_90");
  StatusOr<CompiledKernel> sm80 = compileKernelSource(source, "compute_80");
  ASSERT_TRUE(sm90.isOk() && sm80.isOk());
  EXPECT_NE(sm90->image.find("cvt.rn.bf16.f64"), std::string::npos);
  EXPECT_EQ(sm80->image.find("cvt.rn.bf16.f64"), std::string::npos);
}

TEST(CodegenTest, CompileErrorsCarryTheLog) {
  StatusOr<CompiledKernel> compiled = compileKernelSource(
      "extern \"C\" __global__ void k() { undefined_thing(); }", "sm_90");
  ASSERT_FALSE(compiled.isOk());
  const std::string &message = compiled.status().message();
  EXPECT_EQ(compiled.status().code(), StatusCode::kInternal);
  EXPECT_NE(message.find("could not compile a generated kernel for sm_90"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("undefined_thing"), std::string::npos) << message;
}

TEST(CodegenTest, CompileOptions) {
  const std::vector<std::string> &options = getKernelCompileOptions();
  auto has = [&](const char *option) {
    return std::find(options.begin(), options.end(), option) != options.end();
  };
  EXPECT_TRUE(has("--fmad=false"));
  EXPECT_TRUE(has("--prec-div=true"));
  EXPECT_TRUE(has("--prec-sqrt=true"));
  EXPECT_TRUE(has("--ftz=false"));
  EXPECT_FALSE(getNvrtcVersion().empty());
}

//===----------------------------------------------------------------------===//
// The disk cache's directory
//===----------------------------------------------------------------------===//

TEST(CodegenTest, CacheDirectory) {
  {
    ScopedEnv cache("ZERO_KERNEL_CACHE", "/tmp/zk-cache");
    EXPECT_EQ(getDefaultKernelCacheDirectory(), "/tmp/zk-cache");
  }
  {
    ScopedEnv cache("ZERO_KERNEL_CACHE", "off");
    EXPECT_EQ(getDefaultKernelCacheDirectory(), "");
  }
  {
    ScopedEnv cache("ZERO_KERNEL_CACHE", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(getDefaultKernelCacheDirectory(), "/xdg/zero-opt/kernels");
  }
  {
    ScopedEnv cache("ZERO_KERNEL_CACHE", "");
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(getDefaultKernelCacheDirectory(),
              "/home/u/.cache/zero-opt/kernels");
  }
  {
    ScopedEnv cache("ZERO_KERNEL_CACHE", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(getDefaultKernelCacheDirectory(), "");
  }
}

TEST(CodegenTest, DiskCacheFiles) {
  const std::string dir =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
      "/zero-codegen-test-" + std::to_string(getpid());
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  const std::string key = getKernelCacheKey("source A", "k", "sm_90");
  EXPECT_NE(key, getKernelCacheKey("source B", "k", "sm_90"));
  EXPECT_NE(key, getKernelCacheKey("source A", "k", "sm_80"));
  EXPECT_NE(key, getKernelCacheKey("source A", "j", "sm_90"));
  EXPECT_NE(key.find(getNvrtcVersion()), std::string::npos);
  EXPECT_NE(key.find("--fmad=false"), std::string::npos);

  CompiledKernel kernel;
  kernel.image = std::string("\x7f"
                             "ELF\0\1\2binary",
                             13);
  CompiledKernel read;
  EXPECT_FALSE(readCachedKernel(dir, key, read)); // nothing yet
  writeCachedKernel(dir, key, kernel);            // creates the directory
  ASSERT_TRUE(readCachedKernel(dir, key, read));
  EXPECT_EQ(read.image, kernel.image);
  EXPECT_FALSE(read.isPtx);
  std::vector<std::filesystem::path> files;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u); // no temporary left behind
  const std::filesystem::path file = files[0];

  // Another key in the file (a hash collision) is a miss.
  const std::string other = getKernelCacheKey("source B", "k", "sm_90");
  writeCachedKernel(dir, other, kernel);
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    if (entry.path() != file)
      std::filesystem::rename(entry.path(), file);
  EXPECT_FALSE(readCachedKernel(dir, key, read));

  // A truncated file, or one with bytes after the image, is a miss.
  writeCachedKernel(dir, key, kernel);
  ASSERT_TRUE(readCachedKernel(dir, key, read));
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size - 1);
  EXPECT_FALSE(readCachedKernel(dir, key, read));
  writeCachedKernel(dir, key, kernel);
  std::ofstream(file, std::ios::app) << "x";
  EXPECT_FALSE(readCachedKernel(dir, key, read));

  // PTX keeps its flag; an empty directory name disables the cache.
  CompiledKernel ptx;
  ptx.image = std::string(".version 9.0\n", 14);
  ptx.isPtx = true;
  writeCachedKernel(dir, key, ptx);
  ASSERT_TRUE(readCachedKernel(dir, key, read));
  EXPECT_TRUE(read.isPtx);
  EXPECT_EQ(read.image, ptx.image);
  writeCachedKernel("", key, kernel);
  EXPECT_FALSE(readCachedKernel("", key, read));
  std::filesystem::remove_all(dir, error);

  // A directory that cannot be created: no error, no file, a miss.
  writeCachedKernel("/proc/zero-opt-kernels", key, kernel);
  EXPECT_FALSE(readCachedKernel("/proc/zero-opt-kernels", key, read));
}

//===----------------------------------------------------------------------===//
// Row programs (RowFusion.h)
//===----------------------------------------------------------------------===//

Schedule parseRowSchedule(const cudatest::RowProgramSchedule &s) {
  StatusOr<Schedule> schedule = Schedule::parse(s.b.text(), "rows.json");
  EXPECT_TRUE(schedule.isOk()) << schedule.status().toString();
  return schedule.isOk() ? std::move(*schedule) : Schedule();
}

std::vector<int64_t> inputIds(const RowProgram &program) {
  std::vector<int64_t> ids;
  for (const RowInput &input : program.inputs)
    ids.push_back(input.value);
  return ids;
}

TEST(RowFusionTest, SoftmaxIsOneProgram) {
  cudatest::RowProgramSchedule s =
      cudatest::makeSoftmax(DType::F32, {3, 5}, 200);
  Schedule schedule = parseRowSchedule(s);
  const cudatest::RowSearch rows(schedule);
  std::optional<RowProgram> program = rows.find(0);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->steps.size(), s.programLength);
  EXPECT_EQ(program->threads, kWarpThreads);
  EXPECT_EQ(program->numPoints, 15);
  EXPECT_EQ(program->rowLength, 200);
  EXPECT_EQ(program->elementsPerThread(), 7);
  // Only the probabilities reach memory: the maxima, the broadcasts, the
  // exponentials and the sums stay in registers.
  EXPECT_EQ(program->outputs(), s.stored);
  EXPECT_EQ(inputIds(*program), s.inputs);
  EXPECT_EQ(program->scalars, s.scalars);
  EXPECT_EQ(checkRowProgramMemory(*program, schedule), "");
  // From the second instruction on, the same program less its constant;
  // none starts at the copy after it.
  std::optional<RowProgram> later = rows.find(1);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->steps.size(), s.programLength - 1);
  EXPECT_FALSE(rows.find(s.programLength));
}

TEST(RowFusionTest, LayerNormIsOneProgram) {
  cudatest::RowProgramSchedule s = cudatest::makeLayerNorm(DType::F32, 6, 96);
  Schedule schedule = parseRowSchedule(s);
  const cudatest::RowSearch rows(schedule);
  std::optional<RowProgram> program = rows.find(0);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->steps.size(), s.programLength);
  EXPECT_EQ(program->elementsPerThread(), 3);
  // The centred rows and the reciprocal deviations (read later) and the
  // output (read by nothing: kept for whoever reads it) are written.
  EXPECT_EQ(program->outputs(), s.stored);
  EXPECT_EQ(inputIds(*program), s.inputs);
  EXPECT_EQ(program->inputs[1].shape, RowShape::Vector);
  EXPECT_EQ(program->scalars, s.scalars);
  int pointMaps = 0, vectorBroadcasts = 0;
  for (const RowStep &step : program->steps) {
    pointMaps +=
        step.kind == RowStep::Kind::Map && step.shape == RowShape::Point;
    vectorBroadcasts += step.kind == RowStep::Kind::BroadcastVector;
  }
  EXPECT_EQ(pointMaps, 1);
  EXPECT_EQ(vectorBroadcasts, 2);
}

TEST(RowFusionTest, RowsTooLongOrTooShortStayUnfused) {
  // 63 elements: below the cooperative reductions' threshold; 2048: more
  // registers per lane than a warp's program keeps; 5000: a block's.
  for (int64_t rowLength : {63, 2048}) {
    Schedule schedule =
        parseRowSchedule(cudatest::makeSoftmax(DType::F32, {4}, rowLength));
    EXPECT_FALSE(cudatest::RowSearch(schedule).find(0)) << rowLength;
  }
  Schedule block =
      parseRowSchedule(cudatest::makeSoftmax(DType::F32, {2}, 5000));
  const cudatest::RowSearch blockRows(block);
  std::optional<RowProgram> program = blockRows.find(0);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->threads, kBlockReductionThreads);
  EXPECT_EQ(program->elementsPerThread(), 20);
}

TEST(RowFusionTest, MemoryShared) {
  // The probabilities written over the scores: in place, allowed.
  {
    cudatest::RowProgramSchedule s = cudatest::makeSoftmax(DType::F32, {4}, 64);
    Schedule schedule = parseRowSchedule(s);
    const cudatest::RowSearch rows(schedule);
    std::optional<RowProgram> program = rows.find(0);
    ASSERT_TRUE(program);
    EXPECT_EQ(checkRowProgramMemory(*program, schedule), "");
  }
  // A layer norm whose stored reciprocal deviations [6] sit in the first
  // bytes of its input rows: another row's thread would read them.
  cudatest::RowProgramSchedule s = cudatest::makeLayerNorm(DType::F32, 6, 96);
  json text = json::parse(s.b.text());
  const int64_t x = s.inputs[0], rstd = s.stored[1];
  text["values"][rstd]["buffer"] = text["values"][x]["buffer"];
  StatusOr<Schedule> schedule = Schedule::parse(text.dump(), "rows.json");
  ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
  const cudatest::RowSearch rows(*schedule);
  std::optional<RowProgram> program = rows.find(0);
  ASSERT_TRUE(program);
  EXPECT_EQ(checkRowProgramMemory(*program, *schedule),
            "value " + std::to_string(x) + " (%t" + std::to_string(x) +
                ") and value " + std::to_string(rstd) + " (%t" +
                std::to_string(rstd) + ") share memory across rows");
}

TEST(RowFusionTest, KernelsCompileWithNvrtc) {
  struct Program {
    const char *name;
    cudatest::RowProgramSchedule s;
  };
  std::vector<Program> programs;
  for (DType dtype : {DType::F32, DType::BF16, DType::F64}) {
    programs.push_back({"softmax", cudatest::makeSoftmax(dtype, {3, 5}, 200)});
    programs.push_back({"layer norm", cudatest::makeLayerNorm(dtype, 6, 96)});
  }
  programs.push_back(
      {"block softmax", cudatest::makeSoftmax(DType::F32, {2}, 5000)});
  for (const Program &p : programs) {
    Schedule schedule = parseRowSchedule(p.s);
    const cudatest::RowSearch rows(schedule);
    std::optional<RowProgram> program = rows.find(0);
    ASSERT_TRUE(program) << p.name;
    StatusOr<RowKernel> kernel = generateRowKernel(*program, schedule.values());
    ASSERT_TRUE(kernel.isOk()) << kernel.status().toString();
    EXPECT_EQ(kernel->pointThreads, program->threads);
    for (const char *target : {"sm_90", "sm_80"}) {
      StatusOr<CompiledKernel> compiled =
          compileKernelSource(kernel->source, target);
      ASSERT_TRUE(compiled.isOk()) << p.name << " for " << target << ": "
                                   << compiled.status().toString();
    }
    StatusOr<CompiledKernel> ptx =
        compileKernelSource(kernel->source, "compute_90");
    ASSERT_TRUE(ptx.isOk());
    EXPECT_NE(ptx->image.find("shfl.sync.bfly.b32"), std::string::npos);
    // A warp hands its reductions' results on by shuffle, a block through
    // shared memory and barriers.
    const char *handOn =
        program->threads == kWarpThreads ? "shfl.sync.idx.b32" : "bar.sync";
    EXPECT_NE(ptx->image.find(handOn), std::string::npos) << p.name;
    // No contraction (libm's exp has fused multiply-adds of its own).
    if (std::string(p.name) == "layer norm") {
      EXPECT_EQ(ptx->image.find("fma."), std::string::npos) << p.name;
    }
    // Registers, not local memory arrays, for the rows' values.
    EXPECT_EQ(ptx->image.find(".local"), std::string::npos) << p.name;
  }
}

//===----------------------------------------------------------------------===//
// Host compute
//===----------------------------------------------------------------------===//

TEST(HostComputeTest, RunsTheInstructionsOfTheHostArenaOnTheCpu) {
  OffloadedStep step = makeOffloadedStep(7);
  StatusOr<Schedule> parsed = Schedule::parse(step.b.text(), "t.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  const std::vector<Instruction> &list = parsed->streams()[0].instructions;
  ASSERT_EQ(list.size(), 14u);
  // Scalars alone, device tensors, or a copy between spaces: a kernel.
  const std::vector<bool> onHost = {false, false, false, false, true,
                                    true,  true,  true,  true,  true,
                                    true,  true,  false, false};
  for (size_t i = 0; i < list.size(); ++i)
    EXPECT_EQ(isHostSpaceGroup({&list[i]}, *parsed), onHost[i])
        << "instruction " << i << " (" << list[i].op << ")";
  EXPECT_TRUE(isHostSpaceGroup({&list[5], &list[6]}, *parsed));
  EXPECT_FALSE(isHostSpaceGroup({&list[11], &list[12]}, *parsed));
}

TEST(HostComputeTest, ReportsTheFirstErrorOnceWithRankAndStep) {
  HostErrors errors;
  EXPECT_FALSE(errors.failed());
  EXPECT_TRUE(errors.check(3).isOk());
  errors.record(Status(StatusCode::kOutOfRange, "t.json: first"), 4);
  errors.record(Status(StatusCode::kInternal, "t.json: second"), 5);
  EXPECT_TRUE(errors.failed());
  Status status = errors.check(3);
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(status.message(), "rank 3: step 4: t.json: first");
  EXPECT_FALSE(errors.failed());
  EXPECT_TRUE(errors.check(3).isOk());
}

} // namespace
