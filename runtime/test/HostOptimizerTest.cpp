//===- HostOptimizerTest.cpp - zero.adam and zero.sgd ---------------------===//

#include "HostTestUtil.h"

#include "zero/runtime/FloatFormats.h"

#include <cmath>
#include <cstring>

using namespace zero::runtime;
using namespace zero::runtime::test;
using nlohmann::json;

namespace {

std::vector<float> fromBits(const std::vector<uint32_t> &bits) {
  std::vector<float> values(bits.size());
  std::memcpy(values.data(), bits.data(), bits.size() * 4);
  return values;
}

const std::vector<float> kInit = {0.5f,   -0.25f, 0.125f, 1.0f, -3.0f,
                                  0.001f, 2.5f,   -0.75f, 0.3f};
const std::vector<std::vector<float>> kGrads = {
    {0.1f, -0.2f, 0.3f, 1e-3f, 5.0f, -1e-4f, 0.0f, 0.7f, -0.05f},
    {0.05f, 0.2f, -0.3f, 2e-3f, -4.0f, 1e-4f, 0.5f, -0.7f, 0.05f},
    {-0.1f, 0.1f, 0.01f, -1e-3f, 3.0f, 0.0f, -0.5f, 0.6f, 0.2f}};

struct AdamProgram {
  TestProgram p;
  int64_t param, grad, m, v, step, lr, paramOut, mOut, vOut;

  AdamProgram(int64_t n, DType gradType, bool inPlace) {
    param = p.tensor(DType::F32, {n});
    grad = p.tensor(gradType, {n});
    m = p.tensor(DType::F32, {n});
    v = p.tensor(DType::F32, {n});
    step = p.scalar(DType::I64, "%step");
    lr = p.scalar(DType::F32, "%lr");
    paramOut = p.tensor(DType::F32, {n}, "", inPlace ? param : -1);
    mOut = p.tensor(DType::F32, {n}, "", inPlace ? m : -1);
    vOut = p.tensor(DType::F32, {n}, "", inPlace ? v : -1);
  }
  json op(double beta1, double beta2, double weightDecay, const char *mode,
          bool biasCorrection) const {
    return {{"op", "zero.adam"},
            {"operands", {param, grad, m, v, step, lr}},
            {"results", {paramOut, mOut, vOut}},
            {"beta1", beta1},
            {"beta2", beta2},
            {"eps", 1e-8},
            {"weight_decay", weightDecay},
            {"mode", mode},
            {"bias_correction", biasCorrection}};
  }
};

} // namespace

TEST(HostAdam, MatchesPyTorchAdamWBitwise) {
  // torch 1.13 AdamW(lr=f32(1e-3), betas=(0.9, 0.95), eps=1e-8,
  // weight_decay=0.1, foreach=False), three steps on these gradients.
  AdamProgram a(9, DType::F32, true);
  a.p.set(a.param, kInit);
  a.p.set(a.m, std::vector<float>(9, 0));
  a.p.set(a.v, std::vector<float>(9, 0));
  a.p.setF(a.lr, static_cast<double>(1e-3f));
  StatusOr<std::unique_ptr<host::ComputeOp>> op =
      a.p.prepare(a.op(0.9, 0.95, 0.1, "adamw", true));
  ASSERT_TRUE(op.isOk()) << op.status().toString();
  for (int s = 0; s < 3; ++s) {
    a.p.set(a.grad, kGrads[s]);
    a.p.setI(a.step, s + 1);
    ASSERT_TRUE((*op)->run(a.p).isOk());
  }
  EXPECT_EQ(
      a.p.get<float>(a.param),
      fromBits({0x3efedfad, 0xbe7f3685, 0x3dfe0959, 0x3f7f5082, 0xc04007bd,
                0x3af9c471, 0x401fe866, 0xbf4042cf, 0x3e99bae0}));
  EXPECT_EQ(
      a.p.get<float>(a.m),
      fromBits({0x3b2a64c2, 0x3c4154c9, 0xbaded28f, 0x3928d21c, 0x3eb0a3d7,
                0x3571978e, 0xbba3d710, 0x3d5bf489, 0x3ca786c2}));
  EXPECT_EQ(
      a.p.get<float>(a.v),
      fromBits({0x3a8c3f3f, 0x3b89ca19, 0x3c08a9be, 0x34991349, 0x4015a3d7,
                0x307e9b0c, 0x3cc7ae14, 0x3d81d0a7, 0x3b123f69}));
}

TEST(HostAdam, OneStepByHand) {
  // p = 1, g = 0.5, lr = 0.125, beta1 = 0.9, beta2 = 0.999 at step 1:
  // m = 0.05, v = 0.00025, m_hat = 0.5, v_hat = 0.25,
  // p = 1 - 0.125 * 0.5 / (0.5 + 1e-8).
  for (DType gradType : {DType::F32, DType::BF16}) {
    AdamProgram a(1, gradType, false);
    a.p.set<float>(a.param, {1.0f});
    if (gradType == DType::F32)
      a.p.set<float>(a.grad, {0.5f});
    else
      a.p.set<uint16_t>(a.grad, {roundToBF16(0.5)});
    a.p.set<float>(a.m, {0});
    a.p.set<float>(a.v, {0});
    a.p.setF(a.lr, 0.125);
    a.p.setI(a.step, 1);
    a.p.run(a.op(0.9, 0.999, 0.0, "adamw", true));
    EXPECT_NEAR(a.p.get<float>(a.paramOut)[0], 1 - 0.125 * 0.5 / (0.5 + 1e-8),
                1e-7);
    EXPECT_NEAR(a.p.get<float>(a.mOut)[0], 0.05, 1e-8);
    EXPECT_NEAR(a.p.get<float>(a.vOut)[0], 0.00025, 1e-10);
    // The operands live apart from the results and keep their values.
    EXPECT_EQ(a.p.get<float>(a.param)[0], 1.0f);
    EXPECT_EQ(a.p.get<float>(a.m)[0], 0.0f);
  }
}

TEST(HostAdam, WithoutBiasCorrectionAndWithL2) {
  AdamProgram a(1, DType::F32, true);
  a.p.set<float>(a.param, {1.0f});
  a.p.set<float>(a.grad, {0.5f});
  a.p.set<float>(a.m, {0});
  a.p.set<float>(a.v, {0});
  a.p.setF(a.lr, 0.125);
  a.p.setI(a.step, 0); // no bias correction: the step is not used
  a.p.run(a.op(0.9, 0.999, 0.0, "adamw", false));
  // p = 1 - 0.125 * 0.05 / (sqrt(0.00025) + 1e-8)
  EXPECT_NEAR(a.p.get<float>(a.param)[0],
              1 - 0.125 * 0.05 / (std::sqrt(0.00025) + 1e-8), 1e-6);

  AdamProgram b(1, DType::F32, true);
  b.p.set<float>(b.param, {2.0f});
  b.p.set<float>(b.grad, {0.5f});
  b.p.set<float>(b.m, {0});
  b.p.set<float>(b.v, {0});
  b.p.setF(b.lr, 0.125);
  b.p.setI(b.step, 1);
  b.p.run(b.op(0.9, 0.999, 0.25, "l2", true));
  // l2: g = 0.5 + 0.25 * 2 = 1, m = 0.1, v = 0.001: p = 2 - 0.125 * 1 / 1.
  EXPECT_NEAR(b.p.get<float>(b.m)[0], 0.1, 1e-7);
  EXPECT_NEAR(b.p.get<float>(b.param)[0], 2 - 0.125 / (1 + 1e-8), 1e-6);
}

TEST(HostAdam, AStepBelowOneFailsTheRun) {
  AdamProgram a(1, DType::F32, true);
  a.p.setI(a.step, 0);
  StatusOr<std::unique_ptr<host::ComputeOp>> op =
      a.p.prepare(a.op(0.9, 0.999, 0.0, "adamw", true));
  ASSERT_TRUE(op.isOk());
  EXPECT_EQ((*op)->run(a.p).message(),
            "instructions.compute[0].operands[4]: the step is 0, but Adam's "
            "bias correction needs a step >= 1 at m.mlir:1:1");
}

TEST(HostAdam, LargeShardsSplitAcrossBlocksLikeOneBlock) {
  // More elements than a block, f16 gradients: each element is updated on
  // its own, so the first elements equal a one-element run.
  const int64_t n = 20000;
  AdamProgram big(n, DType::F16, true), one(1, DType::F16, true);
  std::vector<float> init(n);
  std::vector<uint16_t> grads(n);
  for (int64_t i = 0; i < n; ++i) {
    init[i] = std::sin(0.1 * i);
    grads[i] = roundToF16(std::cos(0.37 * i));
  }
  big.p.set(big.param, init);
  big.p.set(big.grad, grads);
  big.p.set(big.m, std::vector<float>(n, 0.01f));
  big.p.set(big.v, std::vector<float>(n, 0.02f));
  big.p.setF(big.lr, 0.01);
  big.p.setI(big.step, 3);
  big.p.run(big.op(0.9, 0.999, 0.01, "adamw", true));
  std::vector<float> result = big.p.get<float>(big.param);
  for (int64_t i : {int64_t(0), int64_t(4097), n - 1}) {
    one.p.set<float>(one.param, {init[i]});
    one.p.set<uint16_t>(one.grad, {grads[i]});
    one.p.set<float>(one.m, {0.01f});
    one.p.set<float>(one.v, {0.02f});
    one.p.setF(one.lr, 0.01);
    one.p.setI(one.step, 3);
    one.p.run(one.op(0.9, 0.999, 0.01, "adamw", true));
    EXPECT_EQ(one.p.get<float>(one.param)[0], result[i]) << i;
  }
}

TEST(HostSgd, MatchesPyTorchNesterovBitwise) {
  // torch 1.13 SGD(lr=f32(1e-3), momentum=0.9, nesterov=True,
  // weight_decay=0.01, foreach=False), three steps.
  TestProgram p;
  int64_t param = p.tensor(DType::F32, {9});
  int64_t grad = p.tensor(DType::F32, {9});
  int64_t buf = p.tensor(DType::F32, {9});
  int64_t lr = p.scalar(DType::F32);
  int64_t paramOut = p.tensor(DType::F32, {9}, "", param);
  int64_t bufOut = p.tensor(DType::F32, {9}, "", buf);
  p.set(param, kInit);
  p.set(buf, std::vector<float>(9, 0));
  p.setF(lr, static_cast<double>(1e-3f));
  json op = {{"op", "zero.sgd"},
             {"operands", {param, grad, buf, lr}},
             {"results", {paramOut, bufOut}},
             {"momentum", 0.9},
             {"dampening", 0.0},
             {"weight_decay", 0.01},
             {"nesterov", true}};
  StatusOr<std::unique_ptr<host::ComputeOp>> prepared = p.prepare(op);
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  for (int s = 0; s < 3; ++s) {
    p.set(grad, kGrads[s]);
    ASSERT_TRUE((*prepared)->run(p).isOk());
  }
  EXPECT_EQ(
      p.get<float>(param),
      fromBits({0x3effd4cc, 0xbe800329, 0x3dff7e1d, 0x3f7ffa45, 0xc040c18c,
                0x3a83122e, 0x401ff611, 0xbf406833, 0x3e996967}));
  EXPECT_EQ(p.get<float>(buf), fromBits({0x3d21f936, 0x3de3ccaa, 0xbc5f2716,
                                         0x3ceb2fbc, 0x4057966d, 0x38176c1e,
                                         0x3c915110, 0x3f0443b1, 0x3e59bbf5}));
}

TEST(HostSgd, PlainStepKeepsTheBuffer) {
  TestProgram p;
  int64_t param = p.tensor(DType::F32, {2});
  int64_t grad = p.tensor(DType::BF16, {2});
  int64_t buf = p.tensor(DType::F32, {2});
  int64_t lr = p.scalar(DType::F32);
  int64_t paramOut = p.tensor(DType::F32, {2});
  int64_t bufOut = p.tensor(DType::F32, {2});
  p.set<float>(param, {1, 2});
  p.set<uint16_t>(grad, {roundToBF16(0.5), roundToBF16(-1)});
  p.set<float>(buf, {7, 8});
  p.setF(lr, 0.25);
  p.run({{"op", "zero.sgd"},
         {"operands", {param, grad, buf, lr}},
         {"results", {paramOut, bufOut}},
         {"momentum", 0.0},
         {"dampening", 0.0},
         {"weight_decay", 0.0},
         {"nesterov", false}});
  EXPECT_EQ(p.get<float>(paramOut), (std::vector<float>{0.875f, 2.25f}));
  EXPECT_EQ(p.get<float>(bufOut), (std::vector<float>{7, 8}));
}

TEST(HostAdam, F64ParametersUseDoubleMath) {
  TestProgram p;
  int64_t param = p.tensor(DType::F64, {1});
  int64_t grad = p.tensor(DType::F64, {1});
  int64_t m = p.tensor(DType::F64, {1});
  int64_t v = p.tensor(DType::F64, {1});
  int64_t step = p.scalar(DType::I64), lr = p.scalar(DType::F32);
  p.set<double>(param, {1.0});
  p.set<double>(grad, {0.1});
  p.set<double>(m, {0});
  p.set<double>(v, {0});
  p.setF(lr, 0.125);
  p.setI(step, 1);
  p.run({{"op", "zero.adam"},
         {"operands", {param, grad, m, v, step, lr}},
         {"results", {param, m, v}},
         {"beta1", 0.9},
         {"beta2", 0.999},
         {"eps", 1e-8},
         {"weight_decay", 0.0},
         {"mode", "adamw"},
         {"bias_correction", true}});
  // m_hat = 0.1, v_hat = 0.01: p = 1 - 0.125 * 0.1 / (0.1 + 1e-8), far
  // closer than f32 math could get.
  EXPECT_NEAR(p.get<double>(param)[0], 1 - 0.125 * 0.1 / (0.1 + 1e-8), 1e-15);
  EXPECT_NEAR(p.get<double>(m)[0], 0.01, 1e-17);
}
