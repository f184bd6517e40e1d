//===- OptimizerGpuTest.cpp - zero.adam and zero.sgd on the GPU -----------===//
//
// The fused optimizer kernels against the host over several steps, for the
// dtype mixes of mixed-precision training (f32 master and moments; bf16/f16
// params or grads; all f64), both Adam modes, with and without bias
// correction and weight decay, SGD with momentum, dampening and Nesterov,
// on sizes that cross the kernel's 64K-element chunks and its float4 path
// (empty, 1, 3, 4099, 65536 + 5 elements), the state results in place and
// in buffers of their own.
//
// Runs of consecutive steps are one multi-tensor launch (a group): several
// parameters of mixed types and sizes in one schedule, a group whose later
// result reuses an earlier gradient's memory (which must not be fused), and
// the error of a group whose steps are all below one.
//
// Adam's variants: amsgrad (a fourth state, max_exp_avg_sq) and a scheduled
// beta1 (an f32 operand read from its register every step), alone, together
// and mixed with plain Adam in one group; a scheduled beta1 outside [0, 1)
// fails like the host, naming the group's first failing instruction.
//
// fp16's loss scale: zero.any_nonfinite over the gradients, and a group of
// Adam steps that unscale, clip and skip on its flag (one with the fused
// 16-bit cast of its parameter), over steps with and without an overflow.
//
// Tolerances. The kernels perform the host's float operations one by one
// (same fma calls, same rounding), so f32, bf16 and f16 results are equal
// bit for bit, except that the bias corrections 1 - beta^t use CUDA's pow
// in double (within 2 ulp of glibc's); rounding -lr / bc1 and sqrt(bc2) to
// f32 almost always hides that, and where it does not the update moves by
// one f32 ulp: 1 ulp of the element type allowed. With f64 parameters the
// math is in double, where the pow difference shows directly: 1e-14
// relative to the larger value, 1e-300 absolute.
//
//===----------------------------------------------------------------------===//

#include "CudaOps.h"
#include "CudaTestUtil.h"
#include "OptimizerGroups.h"

#include <thread>

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

const std::vector<OptimizerTypes> &typeMixes() {
  const DType f32 = DType::F32, f64 = DType::F64, bf16 = DType::BF16,
              f16 = DType::F16;
  static const std::vector<OptimizerTypes> mixes = {
      {f32, f32, f32, f32},  {f32, bf16, f32, f32}, {bf16, bf16, f32, f32},
      {f16, f16, f32, f32},  {f64, f64, f64, f64},  {f64, f32, f32, f64},
      {f32, f32, bf16, f16}, {f32, f64, f64, f32}};
  return mixes;
}

struct AdamCase {
  std::string mode;
  bool biasCorrection;
  double weightDecay;
};

void writeStepAndLr(Runner &r, int64_t stepTensor, int64_t lrTensor,
                    int64_t s) {
  Bytes stepBytes = makeBytes(DType::I64, 1);
  setInt(stepBytes, DType::I64, 0, s);
  r.write(stepTensor, stepBytes);
  Bytes lrBytes = makeBytes(DType::F32, 1);
  setFloat(lrBytes, DType::F32, 0, 1e-3 * s);
  r.write(lrTensor, lrBytes);
}

TEST(CudaOptimizers, AdamMatchesTheHost) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(31);
  const std::vector<AdamCase> cases = {{"adamw", true, 0.01},
                                       {"adamw", true, 0.0},
                                       {"l2", true, 0.1},
                                       {"l2", false, 0.0},
                                       {"adamw", false, 0.05}};
  for (const OptimizerTypes &t : typeMixes()) {
    for (const AdamCase &c : cases) {
      for (int64_t numel : {0, 1, 3, 4099, 65536 + 5}) {
        for (bool inPlace : {true, false}) {
          if (numel > 4099 && (!inPlace || c.mode == "l2"))
            continue; // the large sizes once per type mix and mode
          ScheduleBuilder b;
          int64_t param = b.tensor(t.param, {numel});
          int64_t grad = b.tensor(t.grad, {numel});
          int64_t m = b.tensor(t.m, {numel});
          int64_t v = b.tensor(t.v, {numel});
          int64_t stepTensor = b.tensor(DType::I64, {});
          int64_t lrTensor = b.tensor(DType::F32, {});
          int64_t step = b.extract(stepTensor, DType::I64);
          int64_t lr = b.extract(lrTensor, DType::F32);
          int64_t param2 = b.tensor(t.param, {numel}, inPlace ? param : -1);
          int64_t m2 = b.tensor(t.m, {numel}, inPlace ? m : -1);
          int64_t v2 = b.tensor(t.v, {numel}, inPlace ? v : -1);
          b.op({{"op", "zero.adam"},
                {"beta1", 0.9},
                {"beta2", 0.999},
                {"eps", 1e-8},
                {"weight_decay", c.weightDecay},
                {"mode", c.mode},
                {"bias_correction", c.biasCorrection},
                {"amsgrad", false},
                {"operands", {param, grad, m, v, step, lr}},
                {"results", {param2, m2, v2}}});
          Runner r(b);
          ZERO_ASSERT_RUNNER(r);
          r.write(param, randomBytes(t.param, numel, rng));
          r.write(m, randomBytes(t.m, numel, rng, 0.1));
          Bytes vBytes = randomBytes(t.v, numel, rng, 0.01);
          for (int64_t i = 0; i < numel; ++i) // a second moment is >= 0
            setFloat(vBytes, t.v, i, std::fabs(floatAt(vBytes, t.v, i)));
          r.write(v, vBytes);
          for (int64_t s = 1; s <= 3; ++s) {
            r.write(grad, randomBytes(t.grad, numel, rng, 0.5));
            writeStepAndLr(r, stepTensor, lrTensor, s);
            r.step();
            const std::string what =
                std::string("adam ") + c.mode + " " + dtypeName(t.param) + "/" +
                dtypeName(t.grad) + "/" + dtypeName(t.m) + "/" +
                dtypeName(t.v) + " n" + std::to_string(numel) + " step " +
                std::to_string(s) + (inPlace ? " in place" : "");
            expectClose(r.readHost(param2), r.readGpu(param2), t.param,
                        what + " param");
            expectClose(r.readHost(m2), r.readGpu(m2), t.m, what + " m");
            expectClose(r.readHost(v2), r.readGpu(v2), t.v, what + " v");
            if (!inPlace) { // the next step starts from the same state
              r.write(param, r.readHost(param2));
              r.write(m, r.readHost(m2));
              r.write(v, r.readHost(v2));
            }
          }
        }
      }
    }
  }
}

TEST(CudaOptimizers, AdamStepBelowOneFailsLikeTheHost) {
  ZERO_REQUIRE_GPU();
  for (int64_t numel : {0, 5}) {
    ScheduleBuilder b;
    int64_t param = b.tensor(DType::F32, {numel});
    int64_t grad = b.tensor(DType::F32, {numel});
    int64_t m = b.tensor(DType::F32, {numel});
    int64_t v = b.tensor(DType::F32, {numel});
    int64_t step = b.constant(DType::I64, 0);
    int64_t lr = b.constant(DType::F32, 0.001);
    // In place: new values in the buffers of param, m and v.
    int64_t param2 = b.tensor(DType::F32, {numel}, param);
    int64_t m2 = b.tensor(DType::F32, {numel}, m);
    int64_t v2 = b.tensor(DType::F32, {numel}, v);
    b.op({{"op", "zero.adam"},
          {"beta1", 0.9},
          {"beta2", 0.999},
          {"eps", 1e-8},
          {"weight_decay", 0.0},
          {"mode", "adamw"},
          {"bias_correction", true},
          {"amsgrad", false},
          {"operands", {param, grad, m, v, step, lr}},
          {"results", {param2, m2, v2}}});
    Runner r(b);
    ZERO_ASSERT_RUNNER(r);
    auto [host, gpu] = r.failingStep();
    EXPECT_NE(host, "");
    EXPECT_EQ(host, gpu);
  }
}

/// One zero.adam with its variants: amsgrad (max_exp_avg_sq, in `vMax`)
/// and a scheduled beta1 (read from `beta1Tensor`, or the constant
/// `beta1Constant` when that is not null). The states are updated in place,
/// the parameter too unless `paramOut` is given.
struct AdamVariant {
  OptimizerTypes types;
  int64_t numel;
  bool amsgrad, scheduledBeta1;
  int64_t param = -1, grad = -1, m = -1, v = -1, vMax = -1;
  int64_t param2 = -1, m2 = -1, v2 = -1, vMax2 = -1, beta1Tensor = -1;

  /// Adds the tensors (before the instructions that read them).
  void addTensors(ScheduleBuilder &b) {
    param = b.tensor(types.param, {numel});
    grad = b.tensor(types.grad, {numel});
    m = b.tensor(types.m, {numel});
    v = b.tensor(types.v, {numel});
    if (amsgrad)
      vMax = b.tensor(types.v, {numel});
    if (scheduledBeta1)
      beta1Tensor = b.tensor(DType::F32, {});
  }
  /// Adds the instruction; a scheduled beta1 is extracted first, unless
  /// `beta1` names its scalar.
  void addOp(ScheduleBuilder &b, int64_t step, int64_t lr, const json &mode,
             double weightDecay, bool biasCorrection, int64_t beta1 = -1,
             bool inPlace = true) {
    if (scheduledBeta1 && beta1 < 0)
      beta1 = b.extract(beta1Tensor, DType::F32);
    param2 = b.tensor(types.param, {numel}, inPlace ? param : -1);
    m2 = b.tensor(types.m, {numel}, inPlace ? m : -1);
    v2 = b.tensor(types.v, {numel}, inPlace ? v : -1);
    json operands = {param, grad, m, v};
    json results = {param2, m2, v2};
    if (amsgrad) {
      vMax2 = b.tensor(types.v, {numel}, inPlace ? vMax : -1);
      operands.push_back(vMax);
      results.push_back(vMax2);
    }
    operands.push_back(step);
    operands.push_back(lr);
    if (scheduledBeta1)
      operands.push_back(beta1);
    b.op({{"op", "zero.adam"},
          {"beta1", 0.5}, // not read with a scheduled beta1
          {"beta2", 0.999},
          {"eps", 1e-8},
          {"weight_decay", weightDecay},
          {"mode", mode},
          {"bias_correction", biasCorrection},
          {"amsgrad", amsgrad},
          {"operands", operands},
          {"results", results}});
  }
  /// Random states; the second moments (and their maximum) are >= 0.
  void writeStates(Runner &r, std::mt19937_64 &rng) const {
    r.write(param, randomBytes(types.param, numel, rng));
    r.write(m, randomBytes(types.m, numel, rng, 0.1));
    for (int64_t id : {v, vMax}) {
      if (id < 0)
        continue;
      Bytes bytes = randomBytes(types.v, numel, rng, 0.01);
      for (int64_t i = 0; i < numel; ++i)
        setFloat(bytes, types.v, i, std::fabs(floatAt(bytes, types.v, i)));
      r.write(id, bytes);
    }
  }
  void writeBeta1(Runner &r, double beta1) const {
    if (beta1Tensor < 0)
      return;
    Bytes bytes = makeBytes(DType::F32, 1);
    setFloat(bytes, DType::F32, 0, beta1);
    r.write(beta1Tensor, bytes);
  }
  void expectMatch(Runner &r, const std::string &what) const {
    expectClose(r.readHost(param2), r.readGpu(param2), types.param,
                what + " param");
    expectClose(r.readHost(m2), r.readGpu(m2), types.m, what + " m");
    expectClose(r.readHost(v2), r.readGpu(v2), types.v, what + " v");
    if (amsgrad)
      expectClose(r.readHost(vMax2), r.readGpu(vMax2), types.v,
                  what + " max_exp_avg_sq");
  }
  /// Starts the next step from the host's results where they live apart.
  void carryOver(Runner &r) const {
    const std::pair<int64_t, int64_t> pairs[] = {
        {param, param2}, {m, m2}, {v, v2}, {vMax, vMax2}};
    for (auto [operand, result] : pairs)
      if (operand >= 0 && result != operand &&
          r.schedule().bufferOf(result).id != r.schedule().bufferOf(operand).id)
        r.write(operand, r.readHost(result));
  }
  std::string name() const {
    return std::string(amsgrad ? "amsgrad " : "") +
           (scheduledBeta1 ? "scheduled-beta1 " : "") + dtypeName(types.param) +
           "/" + dtypeName(types.grad) + "/" + dtypeName(types.m) + "/" +
           dtypeName(types.v) + " n" + std::to_string(numel);
  }
};

/// beta1 at step s (1-based): a cycle as OneCycle's, in f32.
double scheduledBeta1(int64_t s) {
  const float cycle[] = {0.85f, 0.9f, 0.95f, 0.0f};
  return cycle[(s - 1) % 4];
}

TEST(CudaOptimizers, AdamVariantsMatchTheHost) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(33);
  for (const OptimizerTypes &t : typeMixes()) {
    for (auto [amsgrad, beta1] :
         {std::pair{true, false}, std::pair{false, true},
          std::pair{true, true}}) {
      for (int64_t numel : {0, 1, 3, 4099, 65536 + 5}) {
        for (bool inPlace : {true, false}) {
          if (numel > 4099 && !inPlace)
            continue;
          ScheduleBuilder b;
          AdamVariant a{t, numel, amsgrad, beta1};
          a.addTensors(b);
          int64_t stepTensor = b.tensor(DType::I64, {});
          int64_t lrTensor = b.tensor(DType::F32, {});
          int64_t step = b.extract(stepTensor, DType::I64);
          int64_t lr = b.extract(lrTensor, DType::F32);
          const bool l2 = numel % 2 == 1;
          a.addOp(b, step, lr, l2 ? "l2" : "adamw", l2 ? 0.1 : 0.01,
                  /*biasCorrection=*/!l2, -1, inPlace);
          Runner r(b);
          ZERO_ASSERT_RUNNER(r);
          a.writeStates(r, rng);
          // Four steps: a second moment falls below its maximum somewhere.
          for (int64_t s = 1; s <= 4; ++s) {
            r.write(a.grad,
                    randomBytes(t.grad, numel, rng, s == 4 ? 0.01 : 0.5));
            writeStepAndLr(r, stepTensor, lrTensor, s);
            a.writeBeta1(r, scheduledBeta1(s));
            r.step();
            a.expectMatch(r, a.name() + (inPlace ? " in place" : "") +
                                 " step " + std::to_string(s));
            a.carryOver(r);
          }
        }
      }
    }
  }
}

TEST(CudaOptimizers, AdamScheduledBeta1OutsideZeroOneFailsLikeTheHost) {
  ZERO_REQUIRE_GPU();
  for (bool amsgrad : {false, true}) {
    for (int64_t numel : {0, 5}) {
      for (const json &value : {json(1.0), json("nan"), json(-0.5)}) {
        ScheduleBuilder b;
        AdamVariant a{{DType::F32, DType::F32, DType::F32, DType::F32},
                      numel,
                      amsgrad,
                      true};
        a.addTensors(b);
        int64_t step = b.constant(DType::I64, 1);
        int64_t lr = b.constant(DType::F32, 0.001);
        int64_t beta1 = b.constant(DType::F32, value);
        a.addOp(b, step, lr, "adamw", 0.0, true, beta1);
        Runner r(b);
        ZERO_ASSERT_RUNNER(r);
        auto [host, gpu] = r.failingStep();
        EXPECT_NE(host, "") << value;
        EXPECT_EQ(host, gpu) << value;
      }
    }
  }
}

/// A group of Adam variants of mixed types and sizes, one instruction each,
/// sharing the step and lr registers.
struct VariantGroup {
  ScheduleBuilder b;
  std::vector<AdamVariant> members;
  int64_t stepTensor = -1, lrTensor = -1;
};

VariantGroup variantGroup() {
  const DType f32 = DType::F32, f64 = DType::F64, bf16 = DType::BF16;
  VariantGroup g;
  g.members = {{{f32, f32, f32, f32}, 4099, true, false},
               {{bf16, bf16, f32, f32}, 65536 + 5, false, true},
               {{f32, f32, f32, f32}, 3, false, false},
               {{f64, f64, f64, f64}, 3, true, true},
               {{f32, bf16, f32, f32}, 0, true, true},
               {{f32, f32, f32, f32}, 65536 * 2, true, true}};
  for (AdamVariant &member : g.members)
    member.addTensors(g.b);
  g.stepTensor = g.b.tensor(DType::I64, {});
  g.lrTensor = g.b.tensor(DType::F32, {});
  const int64_t step = g.b.extract(g.stepTensor, DType::I64);
  const int64_t lr = g.b.extract(g.lrTensor, DType::F32);
  // The beta1s first: the group is the run of zero.adam that follows.
  std::vector<int64_t> beta1s;
  for (AdamVariant &member : g.members)
    beta1s.push_back(member.scheduledBeta1
                         ? g.b.extract(member.beta1Tensor, DType::F32)
                         : -1);
  for (size_t k = 0; k < g.members.size(); ++k)
    g.members[k].addOp(g.b, step, lr, k % 2 ? "l2" : "adamw",
                       0.01 * static_cast<double>(k), true, beta1s[k]);
  return g;
}

TEST(CudaOptimizers, AdamVariantGroupsMatchTheHost) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(43);
  VariantGroup g = variantGroup();
  Runner r(g.b);
  ZERO_ASSERT_RUNNER(r);
  for (const AdamVariant &member : g.members)
    member.writeStates(r, rng);
  for (int64_t s = 1; s <= 4; ++s) {
    for (size_t k = 0; k < g.members.size(); ++k) {
      const AdamVariant &member = g.members[k];
      r.write(member.grad, randomBytes(member.types.grad, member.numel, rng,
                                       s == 4 ? 0.01 : 0.5));
      // Each member its own beta1.
      member.writeBeta1(r, scheduledBeta1(s + static_cast<int64_t>(k)));
    }
    writeStepAndLr(r, g.stepTensor, g.lrTensor, s);
    r.step();
    for (size_t k = 0; k < g.members.size(); ++k)
      g.members[k].expectMatch(r, "group member " + std::to_string(k) + " " +
                                      g.members[k].name() + " step " +
                                      std::to_string(s));
  }
}

TEST(CudaOptimizers, AdamVariantGroupFailsAtItsFirstBadMemberLikeTheHost) {
  ZERO_REQUIRE_GPU();
  // The group's first failing member names the error, whichever of the
  // launch's blocks runs first. A bad beta1 from member `first` on (members
  // 1, 3, 4 and 5 read one); first = 0: the step is 0 as well, which each
  // member checks before its beta1, so member 0 names the step. Members
  // 0-5 are instructions 6-11, after the extracts of step, lr and beta1s.
  const std::pair<int, const char *> cases[] = {
      {0, "instructions.compute[6].operands[5]: the step is 0, but Adam's "
          "bias correction needs a step >= 1 at t.mlir:7:1"},
      {1, "instructions.compute[7].operands[6]: the beta1 operand is 1, but "
          "Adam's beta1 must be in [0, 1) at t.mlir:8:1"},
      {3, "instructions.compute[9].operands[7]: the beta1 operand is 1, but "
          "Adam's beta1 must be in [0, 1) at t.mlir:10:1"}};
  for (auto [first, message] : cases) {
    VariantGroup g = variantGroup();
    for (int attempt = 0; attempt < 3; ++attempt) {
      Runner r(g.b);
      ZERO_ASSERT_RUNNER(r);
      writeStepAndLr(r, g.stepTensor, g.lrTensor, first == 0 ? 0 : 1);
      for (size_t k = 0; k < g.members.size(); ++k)
        g.members[k].writeBeta1(r, static_cast<int>(k) >= first ? 1.0 : 0.9);
      auto [host, gpu] = r.failingStep();
      EXPECT_EQ(host, std::string("rank 0: step 1: t.json: ") + message);
      EXPECT_EQ(host, gpu) << first;
    }
  }
}

TEST(CudaOptimizers, AnyNonFiniteOfEmptyTensorsIsZero) {
  // Only empty tensors: no chunk to check (a grid of no blocks would fail
  // the step), and the flag is 0 as on the host.
  ZERO_REQUIRE_GPU();
  ScheduleBuilder b;
  const std::vector<int64_t> operands = {b.tensor(DType::F32, {0}),
                                         b.tensor(DType::F16, {3, 0})};
  const int64_t flag = b.scalar(DType::F32);
  b.op({{"op", "zero.any_nonfinite"},
        {"operands", operands},
        {"results", {flag}}});
  Runner r(b);
  ZERO_ASSERT_RUNNER(r);
  r.step();
  EXPECT_EQ(r.scalarHost(flag).f, 0.0);
  EXPECT_EQ(r.scalarGpu(flag).f, 0.0);
}

struct SgdCase {
  double momentum, dampening, weightDecay;
  bool nesterov;
};

TEST(CudaOptimizers, LossScaledGroupMatchesTheHost) {
  ZERO_REQUIRE_GPU();
  const DType f32 = DType::F32, f16 = DType::F16;
  const std::vector<int64_t> sizes = {4099, 65536 + 5};
  ScheduleBuilder b;
  std::vector<int64_t> params, grads, ms, vs, params2, ms2, vs2;
  for (int64_t n : sizes) {
    params.push_back(b.tensor(f32, {n}));
    grads.push_back(b.tensor(f16, {n}));
    ms.push_back(b.tensor(f32, {n}));
    vs.push_back(b.tensor(f32, {n}));
  }
  const int64_t stepTensor = b.tensor(DType::I64, {});
  const int64_t lrTensor = b.tensor(f32, {});
  const int64_t scaleTensor = b.tensor(f32, {});
  const int64_t coefTensor = b.tensor(f32, {});
  const int64_t step = b.extract(stepTensor, DType::I64);
  const int64_t lr = b.extract(lrTensor, f32);
  const int64_t scale = b.extract(scaleTensor, f32);
  const int64_t coef = b.extract(coefTensor, f32);
  const int64_t flag = b.scalar(f32);
  b.op(
      {{"op", "zero.any_nonfinite"}, {"operands", grads}, {"results", {flag}}});
  const int64_t zero = b.constant(f32, 0.0);
  const int64_t skip = b.scalar(DType::I1);
  b.op({{"op", "arith.cmpf"},
        {"predicate", "ogt"},
        {"operands", {flag, zero}},
        {"results", {skip}}});
  for (size_t k = 0; k < sizes.size(); ++k) {
    params2.push_back(b.tensor(f32, {sizes[k]}, params[k]));
    ms2.push_back(b.tensor(f32, {sizes[k]}, ms[k]));
    vs2.push_back(b.tensor(f32, {sizes[k]}, vs[k]));
  }
  for (size_t k = 0; k < sizes.size(); ++k)
    b.op(adamWInstruction(
        {params[k], grads[k], ms[k], vs[k], step, lr, scale, coef, skip},
        {params2[k], ms2[k], vs2[k]},
        {{"unscale", true}, {"clip", true}, {"skip", true}}));
  // The 16-bit copy of the last parameter, which the kernel writes too.
  const int64_t n = sizes.back();
  const int64_t copyInit = b.tensor(f16, {n});
  const int64_t copy = b.tensor(f16, {n}, copyInit);
  {
    const int64_t a = b.scalar(f32), o = b.scalar(f16), t = b.scalar(f16);
    b.op({{"op", "linalg.map"},
          {"operands", {params2.back(), copyInit}},
          {"results", {copy}},
          {"body",
           body({a, o},
                {{{"op", "arith.truncf"}, {"operands", {a}}, {"results", {t}}}},
                t)}});
  }
  Runner r(b);
  ZERO_ASSERT_RUNNER(r);
  std::mt19937_64 rng(41);
  for (size_t k = 0; k < sizes.size(); ++k) {
    r.write(params[k], randomBytes(f32, sizes[k], rng));
    r.write(ms[k], randomBytes(f32, sizes[k], rng, 0.1));
    r.write(vs[k], makeBytes(f32, sizes[k]));
  }
  r.write(scaleTensor, scalarBytes(f32, 1024.0));
  r.write(coefTensor, scalarBytes(f32, 0.75));
  // Step 2 overflows: an infinity in the first gradient skips every update.
  for (int64_t s = 1; s <= 3; ++s) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      Bytes g = randomBytes(f16, sizes[k], rng, 500.0);
      if (s == 2 && k == 0)
        setFloat(g, f16, sizes[k] / 2, 1e6); // beyond f16: +inf
      r.write(grads[k], g);
    }
    writeStepAndLr(r, stepTensor, lrTensor, s);
    r.step();
    const std::string what = "step " + std::to_string(s);
    EXPECT_EQ(r.scalarHost(flag).f, s == 2 ? 1.0 : 0.0) << what;
    EXPECT_EQ(r.scalarGpu(flag).f, r.scalarHost(flag).f) << what;
    for (size_t k = 0; k < sizes.size(); ++k) {
      expectClose(r.readHost(params2[k]), r.readGpu(params2[k]), f32,
                  what + " param " + std::to_string(k));
      expectClose(r.readHost(ms2[k]), r.readGpu(ms2[k]), f32,
                  what + " m " + std::to_string(k));
      expectClose(r.readHost(vs2[k]), r.readGpu(vs2[k]), f32,
                  what + " v " + std::to_string(k));
    }
    expectClose(r.readHost(copy), r.readGpu(copy), f16, what + " copy");
  }
}

TEST(CudaOptimizers, SgdMatchesTheHost) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(32);
  const std::vector<SgdCase> cases = {{0.0, 0.0, 0.0, false},
                                      {0.9, 0.0, 0.0, false},
                                      {0.9, 0.1, 0.01, false},
                                      {0.9, 0.0, 0.01, true},
                                      {0.0, 0.0, 0.05, false}};
  for (const OptimizerTypes &t : typeMixes()) {
    for (const SgdCase &c : cases) {
      for (int64_t numel : {0, 1, 3, 4099, 65536 + 5}) {
        for (bool inPlace : {true, false}) {
          if (numel > 4099 && !inPlace)
            continue;
          ScheduleBuilder b;
          int64_t param = b.tensor(t.param, {numel});
          int64_t grad = b.tensor(t.grad, {numel});
          int64_t buf = b.tensor(t.m, {numel});
          int64_t lrTensor = b.tensor(DType::F32, {});
          int64_t lr = b.extract(lrTensor, DType::F32);
          int64_t param2 = b.tensor(t.param, {numel}, inPlace ? param : -1);
          int64_t buf2 = b.tensor(t.m, {numel}, inPlace ? buf : -1);
          b.op({{"op", "zero.sgd"},
                {"momentum", c.momentum},
                {"dampening", c.dampening},
                {"weight_decay", c.weightDecay},
                {"nesterov", c.nesterov},
                {"operands", {param, grad, buf, lr}},
                {"results", {param2, buf2}}});
          Runner r(b);
          ZERO_ASSERT_RUNNER(r);
          r.write(param, randomBytes(t.param, numel, rng));
          r.write(buf, randomBytes(t.m, numel, rng, 0.1));
          for (int64_t s = 1; s <= 3; ++s) {
            r.write(grad, randomBytes(t.grad, numel, rng, 0.5));
            Bytes lrBytes = makeBytes(DType::F32, 1);
            setFloat(lrBytes, DType::F32, 0, 0.01 * s);
            r.write(lrTensor, lrBytes);
            r.step();
            const std::string what =
                std::string("sgd ") + dtypeName(t.param) + "/" +
                dtypeName(t.grad) + "/" + dtypeName(t.m) + " momentum " +
                std::to_string(c.momentum) + (c.nesterov ? " nesterov" : "") +
                " n" + std::to_string(numel) + " step " + std::to_string(s);
            // No pow in SGD: exact.
            expectSameElements(r.readHost(param2), r.readGpu(param2), t.param,
                               what + " param");
            expectSameElements(r.readHost(buf2), r.readGpu(buf2), t.m,
                               what + " buf");
            if (!inPlace) {
              r.write(param, r.readHost(param2));
              r.write(buf, r.readHost(buf2));
            }
          }
        }
      }
    }
  }
}

TEST(CudaOptimizers, GroupsOnlyStepsWhoseMemoryIsDisjoint) {
  for (bool adam : {true, false}) {
    for (bool reuse : {false, true}) {
      GroupSchedule g = optimizerGroup(adam, sameMembers(), reuse);
      StatusOr<Schedule> schedule = Schedule::parse(g.b.text(), "t.json");
      ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
      std::vector<const Instruction *> steps = optimizerSteps(*schedule);
      ASSERT_EQ(steps.size(), 3u);
      EXPECT_EQ(cuda::isFusableOptimizerGroup(steps, *schedule), !reuse)
          << (adam ? "adam" : "sgd") << (reuse ? " reusing grads" : "");
      // Each step alone is its own group.
      EXPECT_TRUE(cuda::isFusableOptimizerGroup({steps[1]}, *schedule));
    }
  }
  // With their casts: a step and its cast are one OptimizerStep.
  GroupSchedule g = optimizerGroup(true, mixedMembers(), false);
  StatusOr<Schedule> schedule = Schedule::parse(g.b.text(), "t.json");
  ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
  std::vector<const Instruction *> steps = optimizerSteps(*schedule);
  ASSERT_EQ(steps.size(), 8u);
  const std::vector<cuda::OptimizerStep> pairs = cuda::getOptimizerSteps(steps);
  ASSERT_EQ(pairs.size(), 5u);
  EXPECT_EQ(pairs[0].cast, steps[1]);
  EXPECT_EQ(pairs[1].cast, nullptr);
  EXPECT_EQ(pairs[2].cast, steps[4]);
  EXPECT_EQ(pairs[4].cast, steps[7]);
  EXPECT_TRUE(cuda::isFusableOptimizerGroup(steps, *schedule));
  // The cast's type and alignment decide the vector path with the rest.
  EXPECT_TRUE(cuda::isVectorOptimizerTensor(DType::BF16, 8));
  EXPECT_FALSE(cuda::isVectorOptimizerTensor(DType::BF16, 4));
  EXPECT_TRUE(cuda::isVectorOptimizerTensor(DType::F32, 32));
  EXPECT_FALSE(cuda::isVectorOptimizerTensor(DType::F32, 8));
  EXPECT_FALSE(cuda::isVectorOptimizerTensor(DType::F64, 64));
}

// Plain C++: runs without a GPU.
TEST(CudaOptimizers, ACastOverALaterStepsGradientIsNotFused) {
  const DType f32 = DType::F32, bf16 = DType::BF16;
  for (bool over : {false, true}) {
    GroupSchedule g = optimizerGroup(
        true,
        {{{f32, f32, f32, f32}, 4099, bf16, over}, {{f32, f32, f32, f32}, 4099}},
        false);
    StatusOr<Schedule> schedule = Schedule::parse(g.b.text(), "t.json");
    ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
    std::vector<const Instruction *> steps = optimizerSteps(*schedule);
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(getOptimizerRunLength(schedule->streams()[0].instructions,
                                    static_cast<size_t>(steps[0] -
                                        schedule->streams()[0]
                                            .instructions.data())),
              3u);
    EXPECT_EQ(cuda::isFusableOptimizerGroup(steps, *schedule), !over);
  }
}

/// Runs `steps` steps of a group on the host and the GPU and compares.
void expectGroupMatchesTheHost(bool adam,
                               const std::vector<GroupMember> &members,
                               bool reuseGrads, uint64_t seed) {
  std::mt19937_64 rng(seed);
  GroupSchedule g = optimizerGroup(adam, members, reuseGrads);
  Runner r(g.b);
  ZERO_ASSERT_RUNNER(r);
  for (size_t k = 0; k < members.size(); ++k) {
    const OptimizerTypes &t = members[k].types;
    const int64_t n = members[k].numel;
    r.write(g.ids[k].param, randomBytes(t.param, n, rng));
    r.write(g.ids[k].m, randomBytes(t.m, n, rng, 0.1));
    if (adam) {
      Bytes v = randomBytes(t.v, n, rng, 0.01);
      for (int64_t i = 0; i < n; ++i)
        setFloat(v, t.v, i, std::fabs(floatAt(v, t.v, i)));
      r.write(g.ids[k].v, v);
    }
  }
  for (int64_t s = 1; s <= 3; ++s) {
    for (size_t k = 0; k < members.size(); ++k)
      r.write(g.ids[k].grad,
              randomBytes(members[k].types.grad, members[k].numel, rng, 0.5));
    Bytes stepBytes = makeBytes(DType::I64, 1);
    setInt(stepBytes, DType::I64, 0, s);
    r.write(g.stepTensor, stepBytes);
    Bytes lrBytes = makeBytes(DType::F32, 1);
    setFloat(lrBytes, DType::F32, 0, 1e-3 * s);
    r.write(g.lrTensor, lrBytes);
    r.step();
    std::vector<Bytes> params;
    for (size_t k = 0; k < members.size(); ++k) {
      const OptimizerTypes &t = members[k].types;
      const GroupIds &ids = g.ids[k];
      const std::string what = std::string(adam ? "adam" : "sgd") +
                               " group member " + std::to_string(k) +
                               (reuseGrads ? " (reusing grads)" : "") +
                               " step " + std::to_string(s);
      params.push_back(r.readHost(ids.param2));
      expectClose(params.back(), r.readGpu(ids.param2), t.param,
                  what + " param");
      expectClose(r.readHost(ids.m2), r.readGpu(ids.m2), t.m, what + " m");
      if (adam)
        expectClose(r.readHost(ids.v2), r.readGpu(ids.v2), t.v, what + " v");
      if (ids.copy >= 0)
        expectClose(r.readHost(ids.copy), r.readGpu(ids.copy),
                    members[k].cast, what + " cast");
    }
    // Params updated elsewhere: the next step starts from the host's.
    for (size_t k = 0; k < members.size(); ++k)
      if (g.ids[k].param2 != g.ids[k].param)
        r.write(g.ids[k].param, params[k]);
  }
}

TEST(CudaOptimizers, GroupsMatchTheHost) {
  ZERO_REQUIRE_GPU();
  for (bool adam : {true, false}) {
    expectGroupMatchesTheHost(adam, mixedMembers(), false, 41);
    expectGroupMatchesTheHost(adam, sameMembers(), true, 42);
  }
}

TEST(CudaOptimizers, AdamGroupWithStepsBelowOneFailsLikeTheHost) {
  ZERO_REQUIRE_GPU();
  // Every member fails; the host names the first, and so must the GPU,
  // whichever of the launch's blocks runs first.
  GroupSchedule g = optimizerGroup(true, mixedMembers(), false);
  for (int attempt = 0; attempt < 5; ++attempt) {
    Runner r(g.b);
    ZERO_ASSERT_RUNNER(r);
    auto [host, gpu] = r.failingStep();
    EXPECT_NE(host, "");
    EXPECT_EQ(host, gpu);
  }
}

TEST(CudaOptimizers, GroupRunsOnItsGpuFromAnyThread) {
  ZERO_REQUIRE_GPU();
  int count = 0;
  if (gpuTestsOnHost() || cudaGetDeviceCount(&count) != cudaSuccess ||
      count < 2)
    GTEST_SKIP() << "needs two GPUs";
  // GPU 1's executor stepped from a new thread, whose current GPU is 0.
  GroupSchedule g = optimizerGroup(true, sameMembers(), false);
  StatusOr<Schedule> parsed = Schedule::parse(g.b.text(), "t.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  auto schedule = std::make_shared<const Schedule>(std::move(*parsed));
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  StatusOr<std::unique_ptr<Device>> device = createCudaDevice(1);
  ASSERT_TRUE(device.isOk()) << device.status().toString();
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(schedule, std::move(*device), *comm, {});
  ASSERT_TRUE(executor.isOk()) << executor.status().toString();
  Bytes one = makeBytes(DType::I64, 1);
  setInt(one, DType::I64, 0, 1);
  ASSERT_TRUE((*executor)->writeTensor(g.stepTensor, one.data()).isOk());
  Status status = Status::ok();
  std::thread stepper([&] {
    StatusOr<StepStats> stats = (*executor)->step();
    status = stats.status();
  });
  stepper.join();
  EXPECT_TRUE(status.isOk()) << status.toString();
}

} // namespace
