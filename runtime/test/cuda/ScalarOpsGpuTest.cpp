//===- ScalarOpsGpuTest.cpp - arith and math on the GPU's registers -------===//
//
// Every scalar op of the format on every dtype it takes, on all pairs of a
// list of awkward values (signed zeros, NaN, infinities, the integer
// extremes, shift amounts at and past the width), against the host.
//
// Tolerances: + - * / sqrt rsqrt rem, the comparisons, the casts and every
// integer op are exact (double arithmetic rounded once to the result type
// on both sides, IEEE-correct on both). The transcendental functions (exp,
// exp2, log, log2, log1p, tanh, erf, pow, sin, cos) use CUDA's double libm
// on the GPU (at most 2 ulp from the exact result; glibc at most 1), so an
// f64 result may differ by up to 4 ulp; rounded to f32, bf16 or f16 the
// difference nearly always disappears, but a value within an ulp of double
// of a rounding boundary may land one ulp of the narrow type apart: 1 ulp.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

const std::vector<json> &floatValues() {
  static const std::vector<json> values = {
      0.0,    -0.0,    1.0,     -1.0, 0.1,  -2.5,  3.0,   1e30,
      -1e-30, 65504.0, 70000.0, 1e-8, 0.75, "nan", "inf", "-inf"};
  return values;
}

const std::vector<json> &intValues(DType type) {
  static const std::vector<json> i1 = {0, 1};
  static const std::vector<json> wide = {
      0,  1,  -1,        2,         7,         -8,        31,       32,
      63, 64, INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX, 123456789};
  static const std::vector<json> i32 = {
      0, 1, -1, 2, 7, -8, 31, 32, 33, 63, INT32_MIN, INT32_MAX, 123456789};
  return type == DType::I1 ? i1 : type == DType::I32 ? i32 : wide;
}

const std::vector<json> &valuesOf(DType type) {
  return isFloat(type) ? floatValues() : intValues(type);
}

bool isTranscendental(const std::string &op) {
  for (const char *name :
       {"math.exp", "math.exp2", "math.log", "math.log2", "math.log1p",
        "math.tanh", "math.erf", "math.powf", "math.sin", "math.cos"})
    if (op == name)
      return true;
  return false;
}

/// One op applied to every combination of `operandTypes`' values, with
/// extra fields (a predicate); results compared register by register.
void checkOp(const std::string &op, const std::vector<DType> &operandTypes,
             DType resultType, const json &fields = json::object()) {
  ScheduleBuilder b;
  std::vector<std::vector<int64_t>> inputs;
  for (DType type : operandTypes) {
    std::vector<int64_t> ids;
    for (const json &value : valuesOf(type))
      ids.push_back(b.constant(type, value));
    inputs.push_back(ids);
  }
  std::vector<int64_t> results;
  std::vector<std::string> labels;
  // Every combination of the operands' values (an odometer).
  std::vector<size_t> pick(inputs.size(), 0);
  while (true) {
    json inst = fields;
    inst["op"] = op;
    json operands = json::array();
    std::string label = op + "(";
    for (size_t i = 0; i < inputs.size(); ++i) {
      operands.push_back(inputs[i][pick[i]]);
      label += (i ? ", " : "") + valuesOf(operandTypes[i])[pick[i]].dump();
    }
    const int64_t result = b.scalar(resultType);
    inst["operands"] = operands;
    inst["results"] = {result};
    b.op(inst);
    results.push_back(result);
    labels.push_back(label + ") -> " + dtypeName(resultType));
    size_t d = 0;
    for (; d < pick.size(); ++d) {
      if (++pick[d] < inputs[d].size())
        break;
      pick[d] = 0;
    }
    if (d == pick.size())
      break;
  }
  Runner r(b);
  ZERO_ASSERT_RUNNER(r);
  r.step();
  const bool approximate = isTranscendental(op);
  for (size_t k = 0; k < results.size(); ++k) {
    const Scalar h = r.scalarHost(results[k]), g = r.scalarGpu(results[k]);
    if (!isFloat(resultType)) {
      EXPECT_EQ(h.i, g.i) << labels[k];
      continue;
    }
    if (!approximate) {
      if (std::isnan(h.f) && std::isnan(g.f))
        continue;
      EXPECT_EQ(std::memcmp(&h, &g, sizeof(Scalar)), 0)
          << labels[k] << ": host " << h.f << ", gpu " << g.f;
      continue;
    }
    const int64_t allowed = resultType == DType::F64 ? 4 : 1;
    EXPECT_LE(ulpDistance(h.f, g.f, resultType), allowed)
        << labels[k] << ": host " << h.f << ", gpu " << g.f;
  }
}

TEST(CudaScalarOps, FloatArithmeticAndMath) {
  ZERO_REQUIRE_GPU();
  for (DType t : floatDTypes()) {
    for (const char *op :
         {"arith.addf", "arith.subf", "arith.mulf", "arith.divf",
          "arith.maximumf", "arith.minimumf", "arith.remf", "math.powf"})
      checkOp(op, {t, t}, t);
    for (const char *op :
         {"arith.negf", "math.exp", "math.exp2", "math.log", "math.log2",
          "math.log1p", "math.sqrt", "math.rsqrt", "math.tanh", "math.absf",
          "math.erf", "math.sin", "math.cos", "math.floor", "math.ceil"})
      checkOp(op, {t}, t);
  }
}

TEST(CudaScalarOps, Comparisons) {
  ZERO_REQUIRE_GPU();
  for (DType t : floatDTypes())
    for (const char *predicate :
         {"oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
          "ult", "ule", "une", "uno", "true", "false"})
      checkOp("arith.cmpf", {t, t}, DType::I1, {{"predicate", predicate}});
  for (DType t : {DType::I1, DType::I32, DType::I64, DType::Index})
    for (const char *predicate :
         {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"})
      checkOp("arith.cmpi", {t, t}, DType::I1, {{"predicate", predicate}});
}

TEST(CudaScalarOps, IntegerArithmetic) {
  ZERO_REQUIRE_GPU();
  for (DType t : {DType::I1, DType::I32, DType::I64, DType::Index})
    for (const char *op :
         {"arith.addi", "arith.subi", "arith.muli", "arith.divsi",
          "arith.divui", "arith.remsi", "arith.remui", "arith.maxsi",
          "arith.minsi", "arith.andi", "arith.ori", "arith.xori", "arith.shli",
          "arith.shrsi", "arith.shrui"})
      checkOp(op, {t, t}, t);
}

TEST(CudaScalarOps, SelectAndCasts) {
  ZERO_REQUIRE_GPU();
  for (DType t : allDTypes())
    checkOp("arith.select", {DType::I1, t, t}, t);
  const DType f32 = DType::F32, f64 = DType::F64, bf16 = DType::BF16,
              f16 = DType::F16, i1 = DType::I1, i32 = DType::I32,
              i64 = DType::I64, index = DType::Index;
  for (auto [from, to] : std::vector<std::pair<DType, DType>>{
           {bf16, f32}, {f16, f32}, {f32, f64}, {bf16, f64}, {f16, f64}})
    checkOp("arith.extf", {from}, to);
  for (auto [from, to] : std::vector<std::pair<DType, DType>>{
           {f64, f32}, {f32, bf16}, {f32, f16}, {f64, bf16}, {f64, f16}})
    checkOp("arith.truncf", {from}, to);
  for (DType from : {i1, i32, i64})
    for (DType to : floatDTypes()) {
      checkOp("arith.sitofp", {from}, to);
      checkOp("arith.uitofp", {from}, to);
    }
  for (DType from : floatDTypes())
    for (DType to : {i1, i32, i64}) {
      checkOp("arith.fptosi", {from}, to);
      checkOp("arith.fptoui", {from}, to);
    }
  for (auto [from, to] : std::vector<std::pair<DType, DType>>{{i32, index},
                                                              {i64, index},
                                                              {i1, index},
                                                              {index, i32},
                                                              {index, i64},
                                                              {index, i1}})
    checkOp("arith.index_cast", {from}, to);
  for (auto [from, to] :
       std::vector<std::pair<DType, DType>>{{i1, i32}, {i1, i64}, {i32, i64}}) {
    checkOp("arith.extsi", {from}, to);
    checkOp("arith.extui", {from}, to);
  }
  for (auto [from, to] :
       std::vector<std::pair<DType, DType>>{{i64, i32}, {i64, i1}, {i32, i1}})
    checkOp("arith.trunci", {from}, to);
  for (auto [from, to] : std::vector<std::pair<DType, DType>>{{f32, i32},
                                                              {i32, f32},
                                                              {f64, i64},
                                                              {i64, f64},
                                                              {f64, index},
                                                              {index, f64}})
    checkOp("arith.bitcast", {from}, to);
}

} // namespace
