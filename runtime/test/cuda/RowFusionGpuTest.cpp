//===- RowFusionGpuTest.cpp - softmax and layer norm as one kernel --------===//
//
// The row programs of RowPrograms.h on the GPU, fused into one kernel each
// (RowFusion.h), against
//   - the same instructions run one by one on the GPU (ZERO_CUDA_FUSION=off):
//     the same bits, since a row program rounds every value as its
//     instruction does and reduces in the cooperative reductions' order;
//   - the host backend: maxima exact, sums reassociated, so every value
//     within 4 R u (1 + |host|) of the host's (R terms per sum, u the
//     dtype's unit roundoff: twice the worst case of the two orders, with
//     room for the divisions and square roots that follow the sums, each
//     within an ulp, and exp's last ulp).
// Rows of 200 (not a multiple of the warp), 96 (a multiple), 768 (GPT-2's
// layer norm) and 5000 (a block per row).
//
//===----------------------------------------------------------------------===//

#include "RowPrograms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

/// Sets ZERO_CUDA_FUSION for the devices created in its scope.
class FusionSetting {
public:
  explicit FusionSetting(const char *value) {
    if (const char *old = std::getenv("ZERO_CUDA_FUSION"))
      old_ = old;
    setenv("ZERO_CUDA_FUSION", value, 1);
  }
  ~FusionSetting() {
    if (old_.empty())
      unsetenv("ZERO_CUDA_FUSION");
    else
      setenv("ZERO_CUDA_FUSION", old_.c_str(), 1);
  }

private:
  std::string old_;
};

void checkProgram(const std::string &name, const RowProgramSchedule &s,
                  DType dtype, int64_t rowLength) {
  SCOPED_TRACE(name);
  std::mt19937_64 rng(7);
  Runner fused(s.b);
  ZERO_ASSERT_RUNNER(fused);
  std::unique_ptr<Runner> unfused;
  {
    FusionSetting off("off");
    unfused = std::make_unique<Runner>(s.b);
  }
  ZERO_ASSERT_RUNNER(*unfused);
  for (int64_t id : s.inputs) {
    const Bytes data = randomBytes(
        dtype, fused.schedule().values().values[id].numel, rng, 3.0);
    fused.write(id, data);
    unfused->write(id, data);
  }
  fused.step();
  unfused->step();
  const double bound =
      4.0 * static_cast<double>(rowLength) * unitRoundoff(dtype);
  for (int64_t id : s.outputs) {
    const ValueInfo &value = fused.schedule().values().values[id];
    const Bytes host = fused.readHost(id);
    const Bytes gpu = fused.readGpu(id);
    EXPECT_EQ(gpu, unfused->readGpu(id))
        << "value " << id << ": the fused kernel's bits differ from the "
        << "instructions run one by one";
    int64_t worst = -1;
    double worstError = 0;
    for (int64_t k = 0; k < value.numel; ++k) {
      const double x = floatAt(host, dtype, k), y = floatAt(gpu, dtype, k);
      const double error = std::fabs(x - y) / (1.0 + std::fabs(x));
      if (!(error <= worstError)) {
        worstError = error;
        worst = k;
      }
    }
    EXPECT_LE(worstError, bound) << "value " << id << " element " << worst
                                 << ": host " << floatAt(host, dtype, worst)
                                 << ", gpu " << floatAt(gpu, dtype, worst);
  }
}

TEST(CudaRowFusion, SoftmaxMatchesTheInstructionsAndTheHost) {
  ZERO_REQUIRE_GPU();
  for (DType dtype : {DType::F32, DType::F64, DType::BF16})
    checkProgram(std::string("softmax ") + dtypeName(dtype),
                 makeSoftmax(dtype, {3, 5}, 200), dtype, 200);
  checkProgram("softmax, a block per row", makeSoftmax(DType::F32, {2}, 5000),
               DType::F32, 5000);
}

TEST(CudaRowFusion, LayerNormMatchesTheInstructionsAndTheHost) {
  ZERO_REQUIRE_GPU();
  for (DType dtype : {DType::F32, DType::F64})
    checkProgram(std::string("layer norm ") + dtypeName(dtype),
                 makeLayerNorm(dtype, 6, 96), dtype, 96);
  checkProgram("layer norm, GPT-2 rows", makeLayerNorm(DType::F32, 16, 768),
               DType::F32, 768);
}

TEST(CudaRowFusion, UnknownSettingIsRefused) {
  ZERO_REQUIRE_GPU();
  if (gpuTestsOnHost())
    GTEST_SKIP() << "the host device has no ZERO_CUDA_FUSION";
  FusionSetting bad("maybe");
  RowProgramSchedule s = makeSoftmax(DType::F32, {2}, 64);
  Runner runner(s.b);
  EXPECT_NE(runner.error().find("ZERO_CUDA_FUSION is 'maybe': it is 'on' "
                                "(the default) or 'off'"),
            std::string::npos)
      << runner.error();
}

} // namespace
