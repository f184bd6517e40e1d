//===- HostOptimizerTest.cpp - zero.adam and zero.sgd ---------------------===//

#include "HostTestUtil.h"

#include "zero/runtime/FloatFormats.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

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

/// One zero.adam over n elements of type T (f32 or f64). With `amsgrad`, a
/// max_exp_avg_sq state; with `scheduledBeta1`, an f32 beta1 operand.
template <typename T = float> struct AdamProgram {
  static constexpr DType kType =
      std::is_same<T, float>::value ? DType::F32 : DType::F64;
  TestProgram p;
  int64_t param, grad, m, v, step, lr, paramOut, mOut, vOut;
  // -1 without amsgrad, without a scheduled beta1.
  int64_t vMax = -1, vMaxOut = -1, beta1 = -1;
  bool amsgrad;

  AdamProgram(int64_t n, DType gradType, bool inPlace, bool amsgrad = false,
              bool scheduledBeta1 = false)
      : amsgrad(amsgrad) {
    param = p.tensor(kType, {n});
    grad = p.tensor(gradType, {n});
    m = p.tensor(kType, {n});
    v = p.tensor(kType, {n});
    if (amsgrad)
      vMax = p.tensor(kType, {n});
    step = p.scalar(DType::I64, "%step");
    lr = p.scalar(DType::F32, "%lr");
    if (scheduledBeta1)
      beta1 = p.scalar(DType::F32, "%beta1");
    paramOut = p.tensor(kType, {n}, "", inPlace ? param : -1);
    mOut = p.tensor(kType, {n}, "", inPlace ? m : -1);
    vOut = p.tensor(kType, {n}, "", inPlace ? v : -1);
    if (amsgrad)
      vMaxOut = p.tensor(kType, {n}, "", inPlace ? vMax : -1);
  }
  json op(double beta1Field, double beta2, double weightDecay, const char *mode,
          bool biasCorrection) const {
    json operands = {param, grad, m, v};
    json results = {paramOut, mOut, vOut};
    if (amsgrad) {
      operands.push_back(vMax);
      results.push_back(vMaxOut);
    }
    operands.push_back(step);
    operands.push_back(lr);
    if (beta1 >= 0)
      operands.push_back(beta1);
    return {{"op", "zero.adam"},
            {"operands", operands},
            {"results", results},
            {"beta1", beta1Field},
            {"beta2", beta2},
            {"eps", 1e-8},
            {"weight_decay", weightDecay},
            {"mode", mode},
            {"bias_correction", biasCorrection},
            {"amsgrad", amsgrad}};
  }
};

} // namespace

TEST(HostAdam, MatchesPyTorchAdamWBitwise) {
  // torch 1.13 AdamW(lr=f32(1e-3), betas=(0.9, 0.95), eps=1e-8,
  // weight_decay=0.1, foreach=False), three steps on these gradients.
  AdamProgram<> a(9, DType::F32, true);
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
    AdamProgram<> a(1, gradType, false);
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
  AdamProgram<> a(1, DType::F32, true);
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

  AdamProgram<> b(1, DType::F32, true);
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
  AdamProgram<> a(1, DType::F32, true);
  a.p.setI(a.step, 0);
  StatusOr<std::unique_ptr<host::ComputeOp>> op =
      a.p.prepare(a.op(0.9, 0.999, 0.0, "adamw", true));
  ASSERT_TRUE(op.isOk());
  EXPECT_EQ((*op)->run(a.p).message(),
            "instructions.compute[0].operands[4]: the step is 0, but Adam's "
            "bias correction needs a step >= 1 at m.mlir:1:1");
}

TEST(HostAdam, AmsgradMatchesPyTorchAdamWBitwise) {
  // torch 1.13 AdamW(lr=f32(1e-3), betas=(0.9, 0.95), eps=1e-8,
  // weight_decay=0.1, amsgrad=True, foreach=False): the three steps above and
  // a fourth of small gradients, after which v is below its running maximum
  // in every element but the sixth (whose v still grows).
  AdamProgram<> a(9, DType::F32, true, /*amsgrad=*/true);
  a.p.set(a.param, kInit);
  a.p.set(a.m, std::vector<float>(9, 0));
  a.p.set(a.v, std::vector<float>(9, 0));
  a.p.set(a.vMax, std::vector<float>(9, 0));
  a.p.setF(a.lr, static_cast<double>(1e-3f));
  StatusOr<std::unique_ptr<host::ComputeOp>> op =
      a.p.prepare(a.op(0.9, 0.95, 0.1, "adamw", true));
  ASSERT_TRUE(op.isOk()) << op.status().toString();
  std::vector<std::vector<float>> grads = kGrads;
  grads.push_back(std::vector<float>(9, 1e-4f));
  for (int s = 0; s < 4; ++s) {
    a.p.set(a.grad, grads[s]);
    a.p.setI(a.step, s + 1);
    ASSERT_TRUE((*op)->run(a.p).isOk());
  }
  EXPECT_EQ(
      a.p.get<float>(a.param),
      fromBits({0x3efecd5b, 0xbe7f65cd, 0x3dfe0d27, 0x3f7f3229, 0xc04006fd,
                0x3aca1dd1, 0x401fe4e5, 0xbf404da5, 0x3e9976f3}));
  EXPECT_EQ(
      a.p.get<float>(a.m),
      fromBits({0x3b1a0274, 0x3c2e2972, 0xbac73ac2, 0x39226ca7, 0x3e9efb2b,
                0x37355c99, 0xbb9320de, 0x3d46002a, 0x3c96db0e}));
  EXPECT_EQ(
      a.p.get<float>(a.v),
      fromBits({0x3a853c19, 0x3b82e665, 0x3c01d475, 0x3491b0a4, 0x400e2873,
                0x30bda83b, 0x3cbdb22c, 0x3d76a60a, 0x3b0aef72}));
  // The v of the third step (MatchesPyTorchAdamWBitwise), but the sixth's.
  EXPECT_EQ(
      a.p.get<float>(a.vMax),
      fromBits({0x3a8c3f3f, 0x3b89ca19, 0x3c0fc505, 0x34991349, 0x4015a3d7,
                0x30bda83b, 0x3cc7ae14, 0x3d81d0a7, 0x3b123f69}));
}

TEST(HostAdam, ScheduledBeta1MatchesPyTorchAdamWBitwise) {
  // torch 1.13 AdamW as in MatchesPyTorchAdamWBitwise, with the group's
  // betas set to (beta1, 0.95) before each step, beta1 = f32(0.85),
  // f32(0.9), f32(0.95) (DeepSpeed's OneCycle cycles it so): the moment and
  // the bias correction 1 - beta1^t use the step's beta1, and the op's
  // field (0.5) is not read.
  AdamProgram<> a(9, DType::F32, true, /*amsgrad=*/false,
                  /*scheduledBeta1=*/true);
  a.p.set(a.param, kInit);
  a.p.set(a.m, std::vector<float>(9, 0));
  a.p.set(a.v, std::vector<float>(9, 0));
  a.p.setF(a.lr, static_cast<double>(1e-3f));
  StatusOr<std::unique_ptr<host::ComputeOp>> op =
      a.p.prepare(a.op(0.5, 0.95, 0.1, "adamw", true));
  ASSERT_TRUE(op.isOk()) << op.status().toString();
  const float beta1s[] = {0.85f, 0.9f, 0.95f};
  for (int s = 0; s < 3; ++s) {
    a.p.set(a.grad, kGrads[s]);
    a.p.setI(a.step, s + 1);
    a.p.setF(a.beta1, beta1s[s]);
    ASSERT_TRUE((*op)->run(a.p).isOk());
  }
  EXPECT_EQ(
      a.p.get<float>(a.param),
      fromBits({0x3efe4134, 0xbe7ea44d, 0x3dfce05d, 0x3f7f0b20, 0xc040128e,
                0x3b220f1d, 0x401fe16a, 0xbf406392, 0x3e99ebbc}));
  EXPECT_EQ(
      a.p.get<float>(a.m),
      fromBits({0x3c4e075c, 0xbad84474, 0x3c2b9f45, 0x398ca3e9, 0x3ed28f57,
                0xb65f22fd, 0x3cb851ee, 0x3d5a36dd, 0x3c089a08}));
  // beta2 is not scheduled: v is that of MatchesPyTorchAdamWBitwise.
  EXPECT_EQ(
      a.p.get<float>(a.v),
      fromBits({0x3a8c3f3f, 0x3b89ca19, 0x3c08a9be, 0x34991349, 0x4015a3d7,
                0x307e9b0c, 0x3cc7ae14, 0x3d81d0a7, 0x3b123f69}));
}

TEST(HostAdam, F64AmsgradWithScheduledBeta1MatchesTheFormulas) {
  // torch.optim.Adam(amsgrad=True) with L2 weight decay, written out in
  // double here, with a beta1 that changes every step: f64 parameters step
  // in double, so only the fused multiply-adds differ from this reference.
  const int64_t n = 9;
  const double lr = static_cast<double>(1e-3f), beta2 = 0.95, eps = 1e-8,
               wd = 0.05;
  const float beta1s[] = {0.7f, 0.8f, 0.9f, 0.6f};
  std::vector<std::vector<double>> grads;
  for (const std::vector<float> &g : kGrads)
    grads.emplace_back(g.begin(), g.end());
  grads.emplace_back(n, 1e-4);

  AdamProgram<double> a(n, DType::F64, false, /*amsgrad=*/true,
                        /*scheduledBeta1=*/true);
  std::vector<double> p(kInit.begin(), kInit.end()), m(n, 0), v(n, 0),
      vMax(n, 0);
  a.p.set(a.param, p);
  a.p.set(a.m, m);
  a.p.set(a.v, v);
  a.p.set(a.vMax, vMax);
  a.p.setF(a.lr, lr);
  StatusOr<std::unique_ptr<host::ComputeOp>> op =
      a.p.prepare(a.op(0.9, beta2, wd, "l2", true));
  ASSERT_TRUE(op.isOk()) << op.status().toString();
  bool maxDiffers = false;
  for (int s = 0; s < 4; ++s) {
    const double beta1 = beta1s[s], t = s + 1;
    const double bc1 = 1 - std::pow(beta1, t), bc2 = 1 - std::pow(beta2, t);
    for (int64_t i = 0; i < n; ++i) {
      const double g = grads[s][i] + wd * p[i];
      m[i] = beta1 * m[i] + (1 - beta1) * g;
      v[i] = beta2 * v[i] + (1 - beta2) * g * g;
      vMax[i] = std::max(vMax[i], v[i]);
      maxDiffers |= vMax[i] != v[i];
      p[i] -= lr / bc1 * m[i] / (std::sqrt(vMax[i]) / std::sqrt(bc2) + eps);
    }
    a.p.set(a.grad, grads[s]);
    a.p.setI(a.step, s + 1);
    a.p.setF(a.beta1, beta1);
    ASSERT_TRUE((*op)->run(a.p).isOk());
    // The results live apart: the next step starts from them.
    a.p.set(a.param, a.p.get<double>(a.paramOut));
    a.p.set(a.m, a.p.get<double>(a.mOut));
    a.p.set(a.v, a.p.get<double>(a.vOut));
    a.p.set(a.vMax, a.p.get<double>(a.vMaxOut));
  }
  EXPECT_TRUE(maxDiffers); // the maximum is not v itself
  auto expectNear = [](const std::vector<double> &got,
                       const std::vector<double> &want, const char *what) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-14 * std::fabs(want[i]))
          << what << "[" << i << "]";
  };
  expectNear(a.p.get<double>(a.paramOut), p, "param");
  expectNear(a.p.get<double>(a.mOut), m, "exp_avg");
  expectNear(a.p.get<double>(a.vOut), v, "exp_avg_sq");
  expectNear(a.p.get<double>(a.vMaxOut), vMax, "max_exp_avg_sq");
}

TEST(HostAdam, AmsgradTakesTheMaximumWithItsNaN) {
  // torch.maximum: a NaN on either side is the maximum. g = 0, beta2 = 0.5:
  // v = 0.5 * v.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  AdamProgram<> a(3, DType::F32, true, /*amsgrad=*/true);
  a.p.set<float>(a.param, {1, 1, 1});
  a.p.set<float>(a.grad, {0, 0, 0});
  a.p.set<float>(a.m, {0, 0, 0});
  a.p.set<float>(a.v, {4, nan, 4});
  a.p.set<float>(a.vMax, {1, 1, nan});
  a.p.setF(a.lr, 0.5);
  a.p.setI(a.step, 1);
  a.p.run(a.op(0.9, 0.5, 0.0, "adamw", false));
  std::vector<float> vMax = a.p.get<float>(a.vMax);
  EXPECT_EQ(vMax[0], 2.0f);
  EXPECT_TRUE(std::isnan(vMax[1]));
  EXPECT_TRUE(std::isnan(vMax[2]));
}

TEST(HostAdam, AScheduledBeta1OutsideZeroOneFailsTheRun) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (bool amsgrad : {false, true}) {
    AdamProgram<> a(1, DType::F32, true, amsgrad, /*scheduledBeta1=*/true);
    a.p.set<float>(a.param, {1.0f});
    a.p.set<float>(a.grad, {0.5f});
    a.p.setF(a.lr, 0.125);
    a.p.setI(a.step, 1);
    StatusOr<std::unique_ptr<host::ComputeOp>> op =
        a.p.prepare(a.op(0.9, 0.999, 0.0, "adamw", true));
    ASSERT_TRUE(op.isOk()) << op.status().toString();
    // The operand after lr: operands[6], or [7] after max_exp_avg_sq.
    const std::string where = std::string("instructions.compute[0].operands[") +
                              (amsgrad ? "7" : "6") +
                              "]: the beta1 operand is ";
    const std::pair<double, const char *> cases[] = {
        {1.0, "1"}, {-0.25, "-0.25"}, {nan, "nan"}, {1.5f, "1.5"}};
    for (auto [value, text] : cases) {
      a.p.setF(a.beta1, value);
      EXPECT_EQ((*op)->run(a.p).message(),
                where + text +
                    ", but Adam's beta1 must be in [0, 1) at m.mlir:1:1");
    }
    // Nothing was updated.
    EXPECT_EQ(a.p.get<float>(a.param)[0], 1.0f);
    // The step is checked first; with amsgrad it is operands[5].
    a.p.setI(a.step, 0);
    EXPECT_EQ((*op)->run(a.p).message(),
              std::string("instructions.compute[0].operands[") +
                  (amsgrad ? "5" : "4") +
                  "]: the step is 0, but Adam's bias correction needs a "
                  "step >= 1 at m.mlir:1:1");
    // 0 is a beta1: m is the gradient.
    a.p.setI(a.step, 1);
    a.p.setF(a.beta1, 0.0);
    ASSERT_TRUE((*op)->run(a.p).isOk());
    EXPECT_EQ(a.p.get<float>(a.m)[0], 0.5f);
  }
}

TEST(HostAdam, LargeShardsSplitAcrossBlocksLikeOneBlock) {
  // More elements than a block, f16 gradients: each element is updated on
  // its own, so the first elements equal a one-element run.
  const int64_t n = 20000;
  AdamProgram<> big(n, DType::F16, true), one(1, DType::F16, true);
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
         {"bias_correction", true},
         {"amsgrad", false}});
  // m_hat = 0.1, v_hat = 0.01: p = 1 - 0.125 * 0.1 / (0.1 + 1e-8), far
  // closer than f32 math could get.
  EXPECT_NEAR(p.get<double>(param)[0], 1 - 0.125 * 0.1 / (0.1 + 1e-8), 1e-15);
  EXPECT_NEAR(p.get<double>(m)[0], 0.01, 1e-17);
}

//===----------------------------------------------------------------------===//
// Gradient scaling: the unscale, clip and skip operands of fp16 training
//===----------------------------------------------------------------------===//

namespace {

/// The gradient scalars appended to an optimizer op: f32 scale and coef
/// registers, an i1 skip register; -1 leaves one out.
struct Scaling {
  int64_t scale = -1, coef = -1, skip = -1;

  void addTo(json &op) const {
    for (auto [id, field] : {std::pair<int64_t, const char *>{scale, "unscale"},
                             {coef, "clip"},
                             {skip, "skip"}})
      if (id >= 0) {
        op["operands"].push_back(id);
        op[field] = true;
      }
  }
};

/// Gradients of `type`, several thousand of them (more than one block of
/// the host's loops), large as scaled fp16 gradients are.
std::vector<double> scaledGradients(int64_t n) {
  std::vector<double> g(n);
  for (int64_t i = 0; i < n; ++i)
    g[i] = std::sin(0.37 * static_cast<double>(i)) * 3000.0 + (i % 7) * 0.25;
  return g;
}

/// What the map that the unscale and clip operands replace computed:
/// f32(grad) / scale * coef, each in f32.
std::vector<float> unscaleByHand(const std::vector<double> &grads, DType type,
                                 float scale, float coef) {
  std::vector<float> out;
  for (double g : grads) {
    float x = type == DType::F16    ? f16ToFloat(roundToF16(g))
              : type == DType::BF16 ? bf16ToFloat(roundToBF16(g))
                                    : static_cast<float>(g);
    x = x / scale;
    x = x * coef;
    out.push_back(x);
  }
  return out;
}

} // namespace

TEST(HostAdam, UnscaleAndClipEqualAnUpdateOfTheUnscaledGradient) {
  const int64_t n = 9000;
  const std::vector<double> grads = scaledGradients(n);
  const float scale = 1024.0f, coef = 0.3f;
  for (DType gradType : {DType::F16, DType::BF16, DType::F32})
    for (bool amsgrad : {false, true}) {
      // Fused: the scaled gradient and the two scalars.
      AdamProgram<> fused(n, gradType, false, amsgrad);
      Scaling s;
      s.scale = fused.p.scalar(DType::F32, "%scale");
      s.coef = fused.p.scalar(DType::F32, "%coef");
      // Reference: an f32 gradient unscaled by hand.
      AdamProgram<> plain(n, DType::F32, false, amsgrad);
      for (AdamProgram<> *a : {&fused, &plain}) {
        a->p.setValues(a->param, std::vector<double>(n, 0.5));
        a->p.setValues(a->m, std::vector<double>(n, 0.01));
        a->p.setValues(a->v, std::vector<double>(n, 0.02));
        if (amsgrad)
          a->p.setValues(a->vMax, std::vector<double>(n, 0.03));
        a->p.setI(a->step, 3);
        a->p.setF(a->lr, static_cast<double>(1e-3f));
      }
      fused.p.setValues(fused.grad, grads);
      fused.p.setF(s.scale, scale);
      fused.p.setF(s.coef, static_cast<double>(coef));
      plain.p.set(plain.grad, unscaleByHand(grads, gradType, scale, coef));
      json op = fused.op(0.9, 0.95, 0.1, "adamw", true);
      s.addTo(op);
      fused.p.run(op);
      plain.p.run(plain.op(0.9, 0.95, 0.1, "adamw", true));
      const std::string what =
          std::string(getDTypeName(gradType)) + (amsgrad ? " amsgrad" : "");
      EXPECT_EQ(fused.p.get<float>(fused.paramOut),
                plain.p.get<float>(plain.paramOut))
          << what;
      EXPECT_EQ(fused.p.get<float>(fused.mOut), plain.p.get<float>(plain.mOut))
          << what;
      EXPECT_EQ(fused.p.get<float>(fused.vOut), plain.p.get<float>(plain.vOut))
          << what;
      if (amsgrad) {
        EXPECT_EQ(fused.p.get<float>(fused.vMaxOut),
                  plain.p.get<float>(plain.vMaxOut))
            << what;
      }
    }
}

TEST(HostAdam, F64ParametersUnscaleInF32) {
  // The gradient is unscaled in f32, as the map it replaces was, and only
  // then widened to the parameter's f64.
  const int64_t n = 5;
  const std::vector<double> grads = {3.0, -7.0, 1e-3, 65504.0, 0.1};
  AdamProgram<double> fused(n, DType::F16, false);
  Scaling s;
  s.scale = fused.p.scalar(DType::F32, "%scale");
  AdamProgram<double> plain(n, DType::F64, false);
  for (AdamProgram<double> *a : {&fused, &plain}) {
    a->p.setValues(a->param, std::vector<double>(n, 0.5));
    a->p.setValues(a->m, std::vector<double>(n, 0.0));
    a->p.setValues(a->v, std::vector<double>(n, 0.0));
    a->p.setI(a->step, 1);
    a->p.setF(a->lr, 0.01);
  }
  fused.p.setValues(fused.grad, grads);
  fused.p.setF(s.scale, 3.0);
  const std::vector<float> unscaled =
      unscaleByHand(grads, DType::F16, 3.0f, 1.0f);
  plain.p.setValues(plain.grad,
                    std::vector<double>(unscaled.begin(), unscaled.end()));
  json op = fused.op(0.9, 0.999, 0.0, "adamw", true);
  s.addTo(op);
  fused.p.run(op);
  plain.p.run(plain.op(0.9, 0.999, 0.0, "adamw", true));
  EXPECT_EQ(fused.p.getValues(fused.paramOut),
            plain.p.getValues(plain.paramOut));
  EXPECT_EQ(fused.p.getValues(fused.vOut), plain.p.getValues(plain.vOut));
}

TEST(HostAdam, ASkippedStepReturnsItsOperands) {
  const int64_t n = 5000;
  AdamProgram<> a(n, DType::F16, false, /*amsgrad=*/true);
  Scaling s;
  s.scale = a.p.scalar(DType::F32, "%scale");
  s.skip = a.p.scalar(DType::I1, "%overflow");
  a.p.setValues(a.param, scaledGradients(n));
  a.p.setValues(a.m, std::vector<double>(n, 0.01));
  a.p.setValues(a.v, std::vector<double>(n, 0.02));
  a.p.setValues(a.vMax, std::vector<double>(n, 0.03));
  a.p.setValues(a.grad, scaledGradients(n));
  a.p.setF(a.lr, 1e-3);
  a.p.setF(s.scale, 2.0);
  json op = a.op(0.9, 0.999, 0.0, "adamw", true);
  s.addTo(op);
  StatusOr<std::unique_ptr<host::ComputeOp>> prepared = a.p.prepare(op);
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  // The step's checks come first, as without the flag.
  a.p.setI(a.step, 0);
  a.p.setI(s.skip, 1);
  EXPECT_EQ((*prepared)->run(a.p).message(),
            "instructions.compute[0].operands[5]: the step is 0, but Adam's "
            "bias correction needs a step >= 1 at m.mlir:1:1");
  a.p.setI(a.step, 1);
  ASSERT_TRUE((*prepared)->run(a.p).isOk());
  EXPECT_EQ(a.p.get<float>(a.paramOut), a.p.get<float>(a.param));
  EXPECT_EQ(a.p.get<float>(a.mOut), a.p.get<float>(a.m));
  EXPECT_EQ(a.p.get<float>(a.vOut), a.p.get<float>(a.v));
  EXPECT_EQ(a.p.get<float>(a.vMaxOut), a.p.get<float>(a.vMax));
  // A false flag steps.
  a.p.setI(s.skip, 0);
  ASSERT_TRUE((*prepared)->run(a.p).isOk());
  EXPECT_NE(a.p.get<float>(a.paramOut), a.p.get<float>(a.param));
}

TEST(HostAdam, GradientScalarsAreChecked) {
  AdamProgram<> a(2, DType::F16, true, false, /*scheduledBeta1=*/true);
  Scaling s;
  s.scale = a.p.scalar(DType::F32, "%scale");
  s.skip = a.p.scalar(DType::F32, "%overflow");
  json op = a.op(0.9, 0.999, 0.0, "adamw", true);
  s.addTo(op);
  // Operands: param, grad, m, v, step, lr, beta1, scale, skip.
  EXPECT_EQ(
      a.p.prepareError(op),
      "instructions.compute[0].operands[8]: expected dtype i1, got f32 for "
      "value 11 (%overflow) at m.mlir:1:1");
  json missing = a.op(0.9, 0.999, 0.0, "adamw", true);
  missing["unscale"] = true;
  missing["skip"] = true;
  EXPECT_EQ(a.p.prepareError(missing),
            "instructions.compute[0].operands: zero.adam without amsgrad and "
            "2 gradient scalars (unscale, skip) takes 8 operands, or 9 with a "
            "beta1 operand, got 7 at m.mlir:1:1");
}

TEST(HostSgd, UnscaleClipAndSkip) {
  const int64_t n = 9000;
  const std::vector<double> grads = scaledGradients(n);
  TestProgram p;
  const int64_t param = p.tensor(DType::F32, {n});
  const int64_t grad = p.tensor(DType::F16, {n});
  const int64_t plainGrad = p.tensor(DType::F32, {n});
  const int64_t buf = p.tensor(DType::F32, {n});
  const int64_t lr = p.scalar(DType::F32);
  Scaling s;
  s.scale = p.scalar(DType::F32);
  s.coef = p.scalar(DType::F32);
  s.skip = p.scalar(DType::I1);
  const int64_t paramOut = p.tensor(DType::F32, {n});
  const int64_t bufOut = p.tensor(DType::F32, {n});
  const int64_t plainParamOut = p.tensor(DType::F32, {n});
  const int64_t plainBufOut = p.tensor(DType::F32, {n});
  p.setValues(param, std::vector<double>(n, 0.5));
  p.setValues(buf, std::vector<double>(n, 0.25));
  p.setValues(grad, grads);
  p.set(plainGrad, unscaleByHand(grads, DType::F16, 512.0f, 0.75f));
  p.setF(lr, 0.01);
  p.setF(s.scale, 512.0);
  p.setF(s.coef, 0.75);
  auto sgd = [&](int64_t g, int64_t pOut, int64_t bOut) {
    return json{{"op", "zero.sgd"},        {"operands", {param, g, buf, lr}},
                {"results", {pOut, bOut}}, {"momentum", 0.9},
                {"dampening", 0.0},        {"weight_decay", 0.01},
                {"nesterov", true}};
  };
  json fused = sgd(grad, paramOut, bufOut);
  s.addTo(fused);
  p.setI(s.skip, 0);
  p.run(fused);
  p.run(sgd(plainGrad, plainParamOut, plainBufOut));
  EXPECT_EQ(p.get<float>(paramOut), p.get<float>(plainParamOut));
  EXPECT_EQ(p.get<float>(bufOut), p.get<float>(plainBufOut));
  p.setI(s.skip, 1);
  p.run(fused);
  EXPECT_EQ(p.get<float>(paramOut), p.get<float>(param));
  EXPECT_EQ(p.get<float>(bufOut), p.get<float>(buf));
}

TEST(HostAnyNonFinite, FlagsAnInfinityOrANaNOfAnyInput) {
  TestProgram p;
  const int64_t a = p.tensor(DType::F16, {5000});
  const int64_t b = p.tensor(DType::BF16, {3});
  const int64_t c = p.tensor(DType::F32, {4});
  const int64_t d = p.tensor(DType::F64, {2});
  const int64_t flag = p.scalar(DType::F32);
  const json op = {{"op", "zero.any_nonfinite"},
                   {"operands", {a, b, c, d}},
                   {"results", {flag}}};
  StatusOr<std::unique_ptr<host::ComputeOp>> prepared = p.prepare(op);
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  auto check = [&]() {
    p.setF(flag, -1.0);
    EXPECT_TRUE((*prepared)->run(p).isOk());
    return p.scalar(flag).f;
  };
  // The largest finite values are finite.
  p.setValues(a, std::vector<double>(5000, 65504.0));
  p.setValues(b, std::vector<double>(3, -3.3895313892515355e38));
  p.setValues(c, std::vector<double>(4, 3.4028234663852886e38));
  p.setValues(d, std::vector<double>(2, -1.7976931348623157e308));
  EXPECT_EQ(check(), 0.0);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (auto [id, numel] :
       {std::pair<int64_t, int64_t>{a, 5000}, {b, 3}, {c, 4}, {d, 2}})
    for (double bad : {inf, -inf, nan}) {
      std::vector<double> values = p.getValues(id);
      const std::vector<double> saved = values;
      values[numel - 1] = bad;
      p.setValues(id, values);
      EXPECT_EQ(check(), 1.0) << "value " << id << " holds " << bad;
      p.setValues(id, saved);
    }
  EXPECT_EQ(check(), 0.0);
  // Integer inputs and a result other than an f32 scalar are refused.
  const int64_t ints = p.tensor(DType::I32, {2});
  EXPECT_EQ(p.prepareError({{"op", "zero.any_nonfinite"},
                            {"operands", {a, ints}},
                            {"results", {flag}}}),
            "instructions.compute[0].operands[1]: expected a float tensor, "
            "got i32 for value 5 (%5) at m.mlir:1:1");
}
