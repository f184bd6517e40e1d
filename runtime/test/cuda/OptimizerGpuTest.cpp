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

#include "CudaTestUtil.h"

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

struct OptimizerTypes {
  DType param, grad, m, v;
};

const std::vector<OptimizerTypes> &typeMixes() {
  const DType f32 = DType::F32, f64 = DType::F64, bf16 = DType::BF16,
              f16 = DType::F16;
  static const std::vector<OptimizerTypes> mixes = {
      {f32, f32, f32, f32},   {f32, bf16, f32, f32}, {bf16, bf16, f32, f32},
      {f16, f16, f32, f32},   {f64, f64, f64, f64},  {f64, f32, f32, f64},
      {f32, f32, bf16, f16},  {f32, f64, f64, f32}};
  return mixes;
}

void expectClose(const Bytes &host, const Bytes &gpu, DType type,
                 const std::string &what) {
  ASSERT_EQ(host.size(), gpu.size());
  const int64_t n = static_cast<int64_t>(host.size()) / getDTypeWidth(type);
  int failures = 0;
  for (int64_t i = 0; i < n && failures < 10; ++i) {
    const double h = floatAt(host, type, i), g = floatAt(gpu, type, i);
    bool ok;
    if (type == DType::F64)
      ok = (std::isnan(h) && std::isnan(g)) || h == g ||
           std::fabs(h - g) <=
               1e-14 * std::max(std::fabs(h), std::fabs(g)) + 1e-300;
    else
      ok = ulpDistance(h, g, type) <= 1;
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << ": element " << i << ": host " << h << ", gpu "
                    << g;
    }
  }
}

struct AdamCase {
  std::string mode;
  bool biasCorrection;
  double weightDecay;
};

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
            Bytes stepBytes = makeBytes(DType::I64, 1);
            setInt(stepBytes, DType::I64, 0, s);
            r.write(stepTensor, stepBytes);
            Bytes lrBytes = makeBytes(DType::F32, 1);
            setFloat(lrBytes, DType::F32, 0, 1e-3 * s);
            r.write(lrTensor, lrBytes);
            r.step();
            const std::string what =
                std::string("adam ") + c.mode + " " + dtypeName(t.param) +
                "/" + dtypeName(t.grad) + "/" + dtypeName(t.m) + "/" +
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
    b.op({{"op", "zero.adam"},
          {"beta1", 0.9},
          {"beta2", 0.999},
          {"eps", 1e-8},
          {"weight_decay", 0.0},
          {"mode", "adamw"},
          {"bias_correction", true},
          {"operands", {param, grad, m, v, step, lr}},
          {"results", {param, m, v}}});
    Runner r(b);
    ZERO_ASSERT_RUNNER(r);
    auto [host, gpu] = r.failingStep();
    EXPECT_NE(host, "");
    EXPECT_EQ(host, gpu);
  }
}

struct SgdCase {
  double momentum, dampening, weightDecay;
  bool nesterov;
};

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

} // namespace
