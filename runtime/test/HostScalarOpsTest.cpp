//===- HostScalarOpsTest.cpp - scalar arith and math ops ------------------===//

#include "HostTestUtil.h"
#include "host/ScalarOps.h"

#include "zero/runtime/FloatFormats.h"

#include <cmath>
#include <limits>

using namespace zero::runtime;
using namespace zero::runtime::test;
using nlohmann::json;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

/// Runs `op` on registers of `operandType` holding `operands` and returns
/// the result register.
Scalar evaluate(const std::string &op, DType operandType, DType resultType,
                std::vector<Scalar> operands, json fields = json::object()) {
  TestProgram p;
  std::vector<int64_t> ids;
  for (const Scalar &value : operands) {
    ids.push_back(p.scalar(operandType));
    p.scalar(ids.back()) = value;
  }
  int64_t result = p.scalar(resultType);
  json instruction = fields;
  instruction["op"] = op;
  instruction["operands"] = ids;
  instruction["results"] = {result};
  p.run(instruction);
  return p.scalar(result);
}

Scalar f(double value) {
  Scalar s;
  s.f = value;
  return s;
}
Scalar i(int64_t value) {
  Scalar s;
  s.i = value;
  return s;
}

double evalF(const std::string &op, DType type, std::vector<double> operands) {
  std::vector<Scalar> registers;
  for (double value : operands)
    registers.push_back(f(value));
  return evaluate(op, type, type, registers).f;
}

int64_t evalI(const std::string &op, DType type,
              std::vector<int64_t> operands) {
  std::vector<Scalar> registers;
  for (int64_t value : operands)
    registers.push_back(i(value));
  return evaluate(op, type, type, registers).i;
}

bool cmpf(const std::string &predicate, double a, double b) {
  return evaluate("arith.cmpf", DType::F32, DType::I1, {f(a), f(b)},
                  {{"predicate", predicate}})
             .i != 0;
}

bool cmpi(const std::string &predicate, DType type, int64_t a, int64_t b) {
  return evaluate("arith.cmpi", type, DType::I1, {i(a), i(b)},
                  {{"predicate", predicate}})
             .i != 0;
}

} // namespace

TEST(HostScalarOps, FloatsRoundToTheirTypeAfterEveryOp) {
  EXPECT_EQ(evalF("arith.addf", DType::F32, {1.0, std::ldexp(1, -30)}), 1.0);
  EXPECT_EQ(evalF("arith.addf", DType::F64, {1.0, std::ldexp(1, -30)}),
            1.0 + std::ldexp(1, -30));
  EXPECT_EQ(evalF("arith.divf", DType::F32, {1.0, 3.0}),
            static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(evalF("arith.mulf", DType::BF16, {3.0, 1.0 / 3.0 + 1e-3}),
            bf16ToFloat(roundToBF16(3.0 * (1.0 / 3.0 + 1e-3))));
  EXPECT_EQ(evalF("arith.addf", DType::F16, {65504.0, 16.0}), kInf); // overflow
  EXPECT_EQ(evalF("arith.subf", DType::F16, {1.0, std::ldexp(1, -12)}),
            1.0); // tie to even
  EXPECT_EQ(evalF("arith.negf", DType::F32, {2.5}), -2.5);
  EXPECT_EQ(evalF("arith.remf", DType::F32, {7.5, 2.0}), 1.5);
  EXPECT_EQ(evalF("math.rsqrt", DType::F32, {4.0}), 0.5);
  EXPECT_EQ(evalF("math.sqrt", DType::F32, {2.0}),
            static_cast<double>(std::sqrt(2.0f)));
  EXPECT_EQ(evalF("math.exp", DType::F32, {1.0}),
            static_cast<double>(static_cast<float>(std::exp(1.0))));
  EXPECT_EQ(evalF("math.tanh", DType::F32, {0.5}),
            static_cast<double>(static_cast<float>(std::tanh(0.5))));
  EXPECT_EQ(evalF("math.log", DType::F32, {1.0}), 0.0);
  EXPECT_EQ(evalF("math.absf", DType::F16, {-3.0}), 3.0);
  EXPECT_EQ(evalF("math.powf", DType::F32, {2.0, 10.0}), 1024.0);
  EXPECT_EQ(evalF("math.floor", DType::F32, {-1.5}), -2.0);
  EXPECT_EQ(evalF("math.ceil", DType::F32, {-1.5}), -1.0);
  EXPECT_EQ(evalF("math.erf", DType::F64, {0.5}), std::erf(0.5));
  EXPECT_EQ(evalF("math.exp2", DType::F32, {3.0}), 8.0);
  EXPECT_EQ(evalF("math.log2", DType::F32, {8.0}), 3.0);
  EXPECT_EQ(evalF("math.log1p", DType::F64, {1e-20}), 1e-20);
  EXPECT_EQ(evalF("math.sin", DType::F64, {0.0}), 0.0);
  EXPECT_EQ(evalF("math.cos", DType::F64, {0.0}), 1.0);
}

TEST(HostScalarOps, MaximumAndMinimumPropagateNaN) {
  EXPECT_TRUE(std::isnan(evalF("arith.maximumf", DType::F32, {kNaN, 1.0})));
  EXPECT_TRUE(std::isnan(evalF("arith.maximumf", DType::F32, {1.0, kNaN})));
  EXPECT_TRUE(std::isnan(evalF("arith.minimumf", DType::F32, {kNaN, 1.0})));
  EXPECT_EQ(evalF("arith.maximumf", DType::F32, {-kInf, 2.0}), 2.0);
  EXPECT_FALSE(std::signbit(evalF("arith.maximumf", DType::F32, {-0.0, 0.0})));
  EXPECT_TRUE(std::signbit(evalF("arith.minimumf", DType::F32, {0.0, -0.0})));
}

TEST(HostScalarOps, CmpfOrderedAndUnordered) {
  struct Case {
    const char *predicate;
    bool less, equal, greater, nan;
  };
  const Case cases[] = {
      {"oeq", false, true, false, false}, {"ogt", false, false, true, false},
      {"oge", false, true, true, false},  {"olt", true, false, false, false},
      {"ole", true, true, false, false},  {"one", true, false, true, false},
      {"ord", true, true, true, false},   {"ueq", false, true, false, true},
      {"ugt", false, false, true, true},  {"uge", false, true, true, true},
      {"ult", true, false, false, true},  {"ule", true, true, false, true},
      {"une", true, false, true, true},   {"uno", false, false, false, true},
      {"true", true, true, true, true},   {"false", false, false, false, false},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(cmpf(c.predicate, 1, 2), c.less) << c.predicate;
    EXPECT_EQ(cmpf(c.predicate, 2, 2), c.equal) << c.predicate;
    EXPECT_EQ(cmpf(c.predicate, 3, 2), c.greater) << c.predicate;
    EXPECT_EQ(cmpf(c.predicate, kNaN, 2), c.nan) << c.predicate;
    EXPECT_EQ(cmpf(c.predicate, 2, kNaN), c.nan) << c.predicate;
  }
  // zero-model's overflow check: |x| uge inf is true for inf and NaN.
  EXPECT_TRUE(cmpf("uge", kInf, kInf));
  EXPECT_FALSE(cmpf("uge", 65504, kInf));
}

TEST(HostScalarOps, IntegersWrapToTheirWidth) {
  EXPECT_EQ(evalI("arith.addi", DType::I32, {INT32_MAX, 1}), INT32_MIN);
  EXPECT_EQ(evalI("arith.muli", DType::I32, {65536, 65536}), 0);
  EXPECT_EQ(evalI("arith.subi", DType::I64, {INT64_MIN, 1}), INT64_MAX);
  EXPECT_EQ(evalI("arith.addi", DType::I1, {1, 1}), 0);
  EXPECT_EQ(evalI("arith.divsi", DType::I32, {-7, 2}), -3);
  EXPECT_EQ(evalI("arith.divsi", DType::I32, {INT32_MIN, -1}), INT32_MIN);
  EXPECT_EQ(evalI("arith.divui", DType::I32, {-1, 2}), INT32_MAX);
  EXPECT_EQ(evalI("arith.remsi", DType::I64, {-7, 3}), -1);
  EXPECT_EQ(evalI("arith.remui", DType::I32, {-1, 10}), 5); // 4294967295 % 10
  EXPECT_EQ(evalI("arith.remsi", DType::I64, {1000, 1000}), 0);
  EXPECT_EQ(evalI("arith.maxsi", DType::I32, {-5, 3}), 3);
  EXPECT_EQ(evalI("arith.minsi", DType::Index, {-5, 3}), -5);
  EXPECT_EQ(evalI("arith.andi", DType::I32, {12, 10}), 8);
  EXPECT_EQ(evalI("arith.ori", DType::I1, {0, 1}), 1);
  EXPECT_EQ(evalI("arith.xori", DType::I64, {5, 3}), 6);
  EXPECT_EQ(evalI("arith.shli", DType::I32, {1, 31}), INT32_MIN);
  EXPECT_EQ(evalI("arith.shli", DType::I32, {1, 32}), 0);
  EXPECT_EQ(evalI("arith.shrsi", DType::I32, {-8, 1}), -4);
  EXPECT_EQ(evalI("arith.shrui", DType::I32, {-8, 28}), 15);
  // Division by zero is undefined in arith; the host yields 0.
  EXPECT_EQ(evalI("arith.divsi", DType::I64, {5, 0}), 0);
}

TEST(HostScalarOps, CmpiSignedAndUnsigned) {
  EXPECT_TRUE(cmpi("slt", DType::I32, -1, 0));
  EXPECT_FALSE(cmpi("ult", DType::I32, -1, 0));
  EXPECT_TRUE(cmpi("ugt", DType::I64, -1, 0));
  EXPECT_TRUE(cmpi("sge", DType::Index, 3, 3));
  EXPECT_TRUE(cmpi("sle", DType::I64, 2, 3));
  EXPECT_TRUE(cmpi("sgt", DType::I32, 4, 3));
  EXPECT_TRUE(cmpi("ule", DType::I32, 3, 3));
  EXPECT_TRUE(cmpi("uge", DType::I32, -1, 5));
  EXPECT_TRUE(cmpi("eq", DType::I1, 1, 1));
  EXPECT_TRUE(cmpi("ne", DType::I32, 1, 2));
  EXPECT_TRUE(cmpi("slt", DType::I1, 1, 0)); // i1 true is -1 when signed
}

TEST(HostScalarOps, SelectAndCasts) {
  TestProgram p;
  int64_t c = p.scalar(DType::I1), a = p.scalar(DType::F32),
          b = p.scalar(DType::F32), r = p.scalar(DType::F32);
  p.setI(c, 1);
  p.setF(a, 1.5);
  p.setF(b, 2.5);
  p.run({{"op", "arith.select"}, {"operands", {c, a, b}}, {"results", {r}}});
  EXPECT_EQ(p.scalar(r).f, 1.5);

  auto cast = [](const std::string &op, DType from, DType to, Scalar value) {
    return evaluate(op, from, to, {value});
  };
  EXPECT_EQ(cast("arith.extf", DType::BF16, DType::F32, f(1.5)).f, 1.5);
  EXPECT_EQ(cast("arith.truncf", DType::F32, DType::BF16, f(1.00390625)).f,
            1.0);
  EXPECT_EQ(cast("arith.truncf", DType::F32, DType::F16, f(1e6)).f, kInf);
  EXPECT_EQ(cast("arith.sitofp", DType::I32, DType::F32, i(-3)).f, -3.0);
  EXPECT_EQ(cast("arith.sitofp", DType::I1, DType::F32, i(1)).f, -1.0);
  EXPECT_EQ(cast("arith.uitofp", DType::I32, DType::F32, i(-1)).f,
            4294967296.0);
  EXPECT_EQ(cast("arith.sitofp", DType::I64, DType::F32, i((1LL << 53) + 1)).f,
            9007199254740992.0);
  EXPECT_EQ(cast("arith.fptosi", DType::F32, DType::I32, f(-2.7)).i, -2);
  EXPECT_EQ(cast("arith.fptosi", DType::F32, DType::I32, f(1e20)).i, INT32_MAX);
  EXPECT_EQ(cast("arith.fptosi", DType::F32, DType::I64, f(kNaN)).i, 0);
  EXPECT_EQ(cast("arith.fptoui", DType::F32, DType::I32, f(-5)).i, 0);
  EXPECT_EQ(cast("arith.fptoui", DType::F32, DType::I32, f(4e9)).i,
            static_cast<int32_t>(4000000000u));
  EXPECT_EQ(cast("arith.index_cast", DType::I32, DType::Index, i(-4)).i, -4);
  EXPECT_EQ(
      cast("arith.index_cast", DType::Index, DType::I32, i((1LL << 32) + 7)).i,
      7);
  EXPECT_EQ(cast("arith.extsi", DType::I1, DType::I64, i(1)).i, -1);
  EXPECT_EQ(cast("arith.extui", DType::I1, DType::I64, i(1)).i, 1);
  EXPECT_EQ(cast("arith.extui", DType::I32, DType::I64, i(-1)).i, 4294967295LL);
  EXPECT_EQ(cast("arith.trunci", DType::I64, DType::I32, i(0x1FFFFFFFFLL)).i,
            -1);
  EXPECT_EQ(cast("arith.trunci", DType::I32, DType::I1, i(6)).i, 0);
  EXPECT_EQ(cast("arith.bitcast", DType::F32, DType::I32, f(1.0)).i,
            0x3F800000);
  EXPECT_EQ(cast("arith.bitcast", DType::I32, DType::F32, i(0x40000000)).f,
            2.0);
  EXPECT_EQ(cast("arith.bitcast", DType::F64, DType::I64, f(1.0)).i,
            0x3FF0000000000000LL);
}

TEST(HostScalarOps, Constants) {
  TestProgram p;
  int64_t a = p.scalar(DType::F32), b = p.scalar(DType::F16),
          c = p.scalar(DType::I32), d = p.scalar(DType::I1),
          e = p.scalar(DType::F32);
  p.run({{"op", "arith.constant"},
         {"operands", json::array()},
         {"results", {a}},
         {"value", 0.1}});
  EXPECT_EQ(p.scalar(a).f, static_cast<double>(0.1f));
  p.run({{"op", "arith.constant"},
         {"operands", json::array()},
         {"results", {b}},
         {"value", "inf"}});
  EXPECT_EQ(p.scalar(b).f, kInf);
  p.run({{"op", "arith.constant"},
         {"operands", json::array()},
         {"results", {c}},
         {"value", 4294967295LL}});
  EXPECT_EQ(p.scalar(c).i, -1);
  p.run({{"op", "arith.constant"},
         {"operands", json::array()},
         {"results", {d}},
         {"value", true}});
  EXPECT_EQ(p.scalar(d).i, 1);
  p.run({{"op", "arith.constant"},
         {"operands", json::array()},
         {"results", {e}},
         {"value", "nan"}});
  EXPECT_TRUE(std::isnan(p.scalar(e).f));
}

TEST(HostScalarOps, StepCounterLikeTheOptimizerStep) {
  // %256 = arith.addi %extracted, %c1_i64 : i64 at the top level.
  TestProgram p;
  int64_t t = p.tensor(DType::I64, {});
  int64_t x = p.scalar(DType::I64), one = p.scalar(DType::I64),
          next = p.scalar(DType::I64);
  int64_t out = p.tensor(DType::I64, {});
  p.set<int64_t>(t, {41});
  p.run({{"op", "tensor.extract"}, {"operands", {t}}, {"results", {x}}});
  p.run({{"op", "arith.constant"},
         {"operands", json::array()},
         {"results", {one}},
         {"value", 1}});
  p.run({{"op", "arith.addi"}, {"operands", {x, one}}, {"results", {next}}});
  p.run({{"op", "tensor.from_elements"},
         {"operands", {next}},
         {"results", {out}}});
  EXPECT_EQ(p.get<int64_t>(out)[0], 42);
}

// The scalar ops are those of the format's op table (OpSet.def): every one
// has a check (ops/ScalarOp.h) and so a host implementation.
TEST(HostScalarOps, EveryScalarOpOfTheFormatIsImplemented) {
  int scalarOps = 0;
  for (const OpInfo &info : kOpInfos) {
    if (info.placement != OpPlacement::Scalar)
      continue;
    ++scalarOps;
    EXPECT_TRUE(ops::isScalarOp(info.code)) << info.name;
  }
  EXPECT_EQ(scalarOps, 53); // 38 arith, 15 math (docs/ScheduleFormat.md)
}
