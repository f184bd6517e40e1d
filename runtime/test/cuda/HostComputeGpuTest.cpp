//===- HostComputeGpuTest.cpp - host-space instructions on the CPU --------===//
//
// The offloaded optimizer step of OffloadedStep.h on the CUDA device, which
// runs every host-space instruction on the CPU with the host's kernels
// (HostCompute.h; instructions 4-11 are one host function): parameters,
// states, the norm, its register and the tensors filled from it (on the
// host within the run, on the device after it) equal the host device's bit
// for bit over several steps (the norm's reduction, which a GPU kernel sums
// in another order, shows that the CPU ran it), and an error of a host op
// fails the step with the host's message.
//
// Against ZERO_CUDA_HOST_COMPUTE=gpu (the same instructions as GPU kernels
// reading pinned memory), resynchronized from the host's state each step:
// parameters, moments and the bf16 copy within 1 ulp of their type (the
// bias corrections' pow, OptimizerGpuTest.cpp); the norm, a float sum of
// n nonnegative terms that each side adds in its own order, within 3 n u of
// the host's sum (either sum is within gamma(n - 1), about (n - 1) u, of
// the exact one).
//
//===----------------------------------------------------------------------===//

#include "OffloadedStep.h"

#include "zero/runtime/host/Threads.h"

#include <cmath>
#include <string>

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

/// Writes the same inputs to both runners.
void writeBoth(Runner &cpu, Runner &gpu, int64_t id, const Bytes &bytes) {
  cpu.write(id, bytes);
  gpu.write(id, bytes);
}

TEST(CudaHostCompute, OffloadedStepMatchesTheHostBitForBit) {
  ZERO_REQUIRE_GPU();
  // The CPU work runs on CUDA's host function thread with the pool's
  // threads; results do not depend on their number.
  setHostThreads(3);
  for (int64_t n : {1, 4099, 65536 + 5}) {
    OffloadedStep s = makeOffloadedStep(n);
    Runner cpu(s.b);            // host compute on the CPU: the default
    Runner gpu(s.b, {}, "gpu"); // host compute as GPU kernels
    ZERO_ASSERT_RUNNER(cpu);
    ZERO_ASSERT_RUNNER(gpu);
    auto dtype = [&](int64_t id) {
      return cpu.schedule().values().values[id].dtype;
    };
    std::mt19937_64 rng(7 + n);
    const int64_t qn = n / 3 + 1;
    writeBoth(cpu, gpu, s.p, randomBytes(DType::F32, n, rng));
    writeBoth(cpu, gpu, s.m, randomBytes(DType::F32, n, rng, 0.1));
    Bytes v = randomBytes(DType::F32, n, rng, 0.01);
    for (int64_t i = 0; i < n; ++i) // a second moment is >= 0
      setFloat(v, DType::F32, i, std::fabs(floatAt(v, DType::F32, i)));
    writeBoth(cpu, gpu, s.v, v);
    writeBoth(cpu, gpu, s.q, randomBytes(DType::F32, qn, rng));
    writeBoth(cpu, gpu, s.qBuf, randomBytes(DType::F32, qn, rng, 0.1));
    for (int64_t step = 1; step <= 3; ++step) {
      const std::string what =
          "n " + std::to_string(n) + " step " + std::to_string(step);
      writeBoth(cpu, gpu, s.g, randomBytes(DType::F32, n, rng, 300.0));
      writeBoth(cpu, gpu, s.qg, randomBytes(DType::F32, qn, rng, 0.5));
      writeBoth(cpu, gpu, s.stepTensor, scalarBytes(DType::I64, step));
      writeBoth(cpu, gpu, s.lrTensor, scalarBytes(DType::F32, 1e-3 * step));
      writeBoth(cpu, gpu, s.scaleTensor, scalarBytes(DType::F32, 1.0 / 512));
      cpu.step();
      gpu.step();
      if (::testing::Test::HasFatalFailure())
        return;
      for (int64_t id : {s.p2, s.m2, s.v2, s.p16, s.q2, s.qBuf2, s.norm,
                         s.hostNorm, s.deviceNorm, s.deviceP16})
        expectSameElements(cpu.readHost(id), cpu.readGpu(id), dtype(id),
                           what + ": value " + std::to_string(id));
      EXPECT_EQ(cpu.scalarHost(s.normScalar).f, cpu.scalarGpu(s.normScalar).f)
          << what << ": the norm's register";

      for (int64_t id : {s.p2, s.m2, s.v2, s.p16, s.q2, s.qBuf2, s.deviceP16})
        expectClose(gpu.readHost(id), gpu.readGpu(id), dtype(id),
                    what + ": gpu kernels: value " + std::to_string(id));
      const double hostSum = floatAt(gpu.readHost(s.norm), DType::F32, 0);
      const double gpuSum = floatAt(gpu.readGpu(s.norm), DType::F32, 0);
      const double bound =
          3.0 * static_cast<double>(n) * unitRoundoff(DType::F32) * hostSum;
      EXPECT_LE(std::fabs(hostSum - gpuSum), bound)
          << what << ": gpu kernels: the norm";
      // The next step of the GPU kernels starts from the host's state.
      for (int64_t id : {s.p, s.m, s.v, s.q, s.qBuf}) {
        Status status = gpu.gpu().writeTensor(id, gpu.readHost(id).data());
        ASSERT_TRUE(status.isOk()) << status.toString();
      }
    }
  }
  setHostThreads(1);
}

TEST(CudaHostCompute, AnErrorOfAHostOpComesFromSynchronize) {
  ZERO_REQUIRE_GPU();
  for (const char *where : {"cpu", "gpu"}) {
    OffloadedStep s = makeOffloadedStep(5);
    Runner r(s.b, {}, where);
    ZERO_ASSERT_RUNNER(r);
    // Adam's step below 1: on the CPU the host function finds it, and the
    // step fails with the host's message, rank and step included.
    r.write(s.stepTensor, scalarBytes(DType::I64, 0));
    r.write(s.lrTensor, scalarBytes(DType::F32, 1e-3));
    r.write(s.scaleTensor, scalarBytes(DType::F32, 1.0));
    auto [host, gpu] = r.failingStep();
    EXPECT_NE(host.find("rank 0: step 1: t.json: instructions.compute[5]"),
              std::string::npos)
        << host;
    EXPECT_EQ(gpu, host) << where;
  }
}

TEST(CudaHostCompute, RefusesAnUnknownSetting) {
  ZERO_REQUIRE_GPU();
  if (gpuTestsOnHost())
    GTEST_SKIP() << "the host device has no ZERO_CUDA_HOST_COMPUTE";
  OffloadedStep s = makeOffloadedStep(5);
  Runner r(s.b, {}, "elsewhere");
  EXPECT_NE(r.error().find("ZERO_CUDA_HOST_COMPUTE is 'elsewhere': it is "
                           "'cpu' (the default) or 'gpu'"),
            std::string::npos)
      << r.error();
}

} // namespace
