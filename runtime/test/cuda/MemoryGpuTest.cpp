//===- MemoryGpuTest.cpp - the CUDA device allocates the plan, once -------===//
//
// The plan's arena is what the device allocates for tensors: the tracker
// counts it (and the backend's fixed allocations: registers, error record,
// cuBLAS workspace), the driver's free memory drops by at least the arena
// and by no more than what is counted plus the libraries' own allocations
// (cuBLAS handles, loaded kernels: measured first with a one-element plan,
// since they depend on the CUDA and cuBLAS versions; on an H100 with CUDA 13
// about 350 MB), and steps allocate nothing: neither the tracker nor the
// driver sees a byte more after them. The driver's free memory is the whole
// GPU's, so ctest runs this program alone (RUN_SERIAL).
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include <cuda_runtime.h>

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

int64_t getFreeDeviceBytes() {
  size_t free = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  return static_cast<int64_t>(free);
}

} // namespace

TEST(CudaMemory, AllocatesThePlanOnceAndTheDriverAgrees) {
  ZERO_REQUIRE_GPU();
  if (gpuTestsOnHost())
    GTEST_SKIP() << "needs the driver's view of a real GPU";
  // Make the context first, so that its own memory is not counted below.
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);

  // A device for a one-element plan: what the driver gives beyond the
  // counted bytes is the libraries' fixed cost (a first device also loads
  // their code, so a second costs no more).
  int64_t fixedCost = 0;
  {
    ScheduleBuilder tiny;
    tiny.tensor(DType::F32, {1});
    const int64_t before = getFreeDeviceBytes();
    Runner r(tiny);
    ZERO_ASSERT_RUNNER(r);
    fixedCost = before - getFreeDeviceBytes() - r.gpu().memory().current();
    RecordProperty("libraries_fixed_cost_bytes", std::to_string(fixedCost));
    ASSERT_GE(fixedCost, 0);
  }

  ScheduleBuilder b;
  int64_t big = b.tensor(DType::F32, {64 << 20}); // 256 MiB
  int64_t small = b.tensor(DType::BF16, {3});
  b.constant(DType::F32, 2.0);
  const int64_t before = getFreeDeviceBytes();
  Runner r(b);
  ZERO_ASSERT_RUNNER(r);
  const int64_t arena = r.schedule().arenaBytes(MemorySpace::Device);
  ASSERT_GE(arena, int64_t(256) << 20);
  const int64_t counted = r.gpu().memory().current();
  const int64_t used = before - getFreeDeviceBytes();
  EXPECT_GE(counted, arena);
  // The fixed allocations are small next to the arena: registers (8 bytes a
  // value), the error record, the 32 MiB cuBLAS workspace.
  EXPECT_LE(counted, arena + (int64_t(40) << 20));
  EXPECT_GE(used, arena);
  // What the driver gave beyond the counted bytes: the libraries' fixed cost
  // and the allocation granularity (2 MiB pages), nothing that grows with
  // the plan.
  EXPECT_LE(used, counted + fixedCost + (int64_t(8) << 20))
      << "used " << used << ", counted " << counted << ", fixed cost "
      << fixedCost;

  const int64_t peak = r.gpu().memory().peak();
  std::mt19937_64 rng(7);
  Bytes data = randomBytes(DType::BF16, 3, rng);
  r.write(small, data);
  for (int i = 0; i < 3; ++i)
    r.step();
  EXPECT_EQ(r.gpu().memory().current(), counted);
  EXPECT_EQ(r.gpu().memory().peak(), peak);
  EXPECT_EQ(before - getFreeDeviceBytes(), used) << "a step allocated memory";
  EXPECT_EQ(r.readGpu(small), data);
  (void)big;
}
