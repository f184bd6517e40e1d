//===- ScalarKernelsOnCpuTest.cpp - scalar ops' kernel on the CPU ---------===//
//
// A top-level scalar op on the GPU is a one-thread kernel (ScalarKernels.cuh)
// that applies ops/ScalarMath.h's op, picked per call, to the register file
// in device memory, its parameters taken from the op's check
// (ScalarParams.h); the host applies the same templates to columns, the op
// picked once per column, with its own rounding per result type. Here that
// kernel, compiled by the host compiler with KernelsOnCpu.h's shim,
// evaluates every op on every type it takes, over operands that include
// the edges (signed zeros, infinities, NaN, denormals; 0, -1, the extremes
// and shifts past the width), each from registers the host's step wrote,
// and must give the host's register bit for bit (the same libm here: on
// the GPU CUDA's transcendentals may differ in the last ulp, which
// ScalarOpsGpuTest allows).
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"
#include "HostStep.h"
#include "KernelsOnCpu.h"
#include "cuda/ScalarParams.h"
#include "ops/Check.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using namespace zero::runtime::cudatest;
using zero::runtime::test::Arena;
using zero::runtime::test::findFunction;
using zero::runtime::test::HostStep;
using zero::runtime::test::kCudaShim;
using zero::runtime::test::KernelLibrary;
using zero::runtime::test::makeLauncher;
using KernelRunner = zero::runtime::test::Runner;

namespace {

/// Constants of `type` over its edges.
std::vector<int64_t> constantsOf(ScheduleBuilder &b, DType type) {
  std::vector<json> values;
  switch (type) {
  case DType::F32:
  case DType::F64:
  case DType::BF16:
  case DType::F16:
    values = {1.5, -2.75, 0.0, -0.0, "inf", "-inf", "nan", 1e-40, 0.3};
    break;
  case DType::I1:
    values = {0, 1};
    break;
  case DType::I32:
    values = {0, 1, -1, 7, 31, 32, 2147483647, -2147483648LL};
    break;
  default: // i64, index
    values = {0, 1, -1, 63, 64, 1099511627776LL, -9223372036854775807LL};
    break;
  }
  std::vector<int64_t> ids;
  for (const json &value : values)
    ids.push_back(b.constant(type, value));
  return ids;
}

/// op(operands...) into a new register of `result`'s type.
void addOp(ScheduleBuilder &b, const std::string &name,
           const std::vector<int64_t> &operands, DType result,
           const std::string &predicate = "") {
  json op = {
      {"op", name}, {"operands", operands}, {"results", {b.scalar(result)}}};
  if (!predicate.empty())
    op["predicate"] = predicate;
  b.op(op);
}

/// Every scalar op on every type it takes, over the edges.
ScheduleBuilder makeScalarSchedule() {
  ScheduleBuilder b;
  const DType floats[] = {DType::F32, DType::F64, DType::BF16, DType::F16};
  for (DType t : floats) {
    const std::vector<int64_t> x = constantsOf(b, t);
    for (const char *name :
         {"arith.negf", "math.absf", "math.exp", "math.exp2", "math.log",
          "math.log2", "math.log1p", "math.sqrt", "math.rsqrt", "math.tanh",
          "math.erf", "math.sin", "math.cos", "math.floor", "math.ceil"})
      for (int64_t a : x)
        addOp(b, name, {a}, t);
    for (const char *name :
         {"arith.addf", "arith.subf", "arith.mulf", "arith.divf",
          "arith.maximumf", "arith.minimumf", "arith.remf", "math.powf"})
      for (int64_t a : x)
        for (int64_t c : x)
          addOp(b, name, {a, c}, t);
    for (const char *predicate :
         {"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq",
          "ugt", "uge", "ult", "ule", "une", "uno", "true"})
      for (int64_t a : x)
        for (int64_t c : {x[0], x[3], x[6]})
          addOp(b, "arith.cmpf", {a, c}, DType::I1, predicate);
  }
  const DType ints[] = {DType::I32, DType::I64, DType::I1, DType::Index};
  for (DType t : ints) {
    const std::vector<int64_t> x = constantsOf(b, t);
    for (const char *name :
         {"arith.addi", "arith.subi", "arith.muli", "arith.divsi",
          "arith.divui", "arith.remsi", "arith.remui", "arith.maxsi",
          "arith.minsi", "arith.andi", "arith.ori", "arith.xori", "arith.shli",
          "arith.shrsi", "arith.shrui"})
      for (int64_t a : x)
        for (int64_t c : x)
          addOp(b, name, {a, c}, t);
    for (const char *predicate :
         {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"})
      for (int64_t a : x)
        for (int64_t c : x)
          addOp(b, "arith.cmpi", {a, c}, DType::I1, predicate);
  }
  // Casts and select.
  struct Cast {
    const char *name;
    DType from, to;
  };
  for (const Cast &c :
       std::vector<Cast>{{"arith.extf", DType::F16, DType::F32},
                         {"arith.extf", DType::BF16, DType::F32},
                         {"arith.extf", DType::F32, DType::F64},
                         {"arith.truncf", DType::F64, DType::F32},
                         {"arith.truncf", DType::F32, DType::BF16},
                         {"arith.truncf", DType::F32, DType::F16},
                         {"arith.sitofp", DType::I32, DType::F32},
                         {"arith.sitofp", DType::I64, DType::BF16},
                         {"arith.uitofp", DType::I32, DType::F64},
                         {"arith.uitofp", DType::I64, DType::F16},
                         {"arith.fptosi", DType::F32, DType::I32},
                         {"arith.fptosi", DType::F64, DType::I64},
                         {"arith.fptoui", DType::F32, DType::I64},
                         {"arith.fptoui", DType::F64, DType::I32},
                         {"arith.index_cast", DType::I64, DType::Index},
                         {"arith.index_cast", DType::Index, DType::I32},
                         {"arith.extsi", DType::I1, DType::I64},
                         {"arith.extsi", DType::I32, DType::I64},
                         {"arith.extui", DType::I32, DType::I64},
                         {"arith.trunci", DType::I64, DType::I32},
                         {"arith.trunci", DType::I32, DType::I1},
                         {"arith.bitcast", DType::F32, DType::I32},
                         {"arith.bitcast", DType::I32, DType::F32},
                         {"arith.bitcast", DType::F64, DType::I64},
                         {"arith.bitcast", DType::I64, DType::F64}})
    for (int64_t a : constantsOf(b, c.from))
      addOp(b, c.name, {a}, c.to);
  const std::vector<int64_t> flags = constantsOf(b, DType::I1);
  const std::vector<int64_t> values = constantsOf(b, DType::F32);
  for (int64_t flag : flags)
    addOp(b, "arith.select", {flag, values[0], values[6]}, DType::F32);
  return b;
}

TEST(ScalarKernelsOnCpuTest, EveryOpIsTheHostsBitForBit) {
  const KernelLibrary library(
      std::string(kCudaShim) + "#include \"cuda/ScalarKernels.cuh\"\n" +
      makeLauncher("zk_scalar", "zero::runtime::cuda::scalarOpKernel"));
  ASSERT_NE(library.get(), nullptr);
  const KernelRunner run = findFunction(library.get(), "zk_scalar");
  ASSERT_NE(run, nullptr);

  const ScheduleBuilder b = makeScalarSchedule();
  StatusOr<Schedule> schedule = Schedule::parse(b.text(), "scalars.json");
  ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
  HostStep host(*schedule);
  ASSERT_TRUE(host.isLoaded());
  const Arena arena(host.arenaBytes(), 0);
  host.run(arena.base());
  const std::vector<Scalar> expected = host.registers();

  std::vector<Scalar> registers = expected;
  int ops = 0;
  for (const Instruction &inst : schedule->streams()[0].instructions) {
    if (inst.code() == OpCode::Constant)
      continue;
    StatusOr<ops::CheckedOp> checked = ops::checkComputeOp(
        ops::getInstructionContext(inst, "", schedule->values()));
    ASSERT_TRUE(checked.isOk()) << checked.status().toString();
    StatusOr<ScalarParams> params = getScalarParams(inst, checked->scalar);
    ASSERT_TRUE(params.isOk()) << params.status().toString();
    const int64_t result = inst.results[0];
    std::memset(&registers[result], 0xA5, sizeof(Scalar));
    Scalar *file = registers.data();
    void *args[] = {&file, &*params};
    ASSERT_EQ(run(args, 1, 1), 0);
    ++ops;
    EXPECT_EQ(
        std::memcmp(&registers[result], &expected[result], sizeof(Scalar)), 0)
        << inst.op << " at " << inst.path << " ("
        << getDTypeName(schedule->values().values[result].dtype) << "): host "
        << expected[result].f << " / " << expected[result].i << ", kernel "
        << registers[result].f << " / " << registers[result].i;
  }
  EXPECT_GT(ops, 3000);
}

} // namespace
