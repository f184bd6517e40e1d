//===- CudaDeviceGpuTest.cpp - the CUDA device itself ---------------------===//
//
// What the device does besides kernels: naming and refusing GPUs, zeroed
// and counted arenas, reads and writes between steps, trace timestamps.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

TEST(CudaDevice, HasTheBackend) { EXPECT_TRUE(hasCudaBackend()); }

TEST(CudaDevice, RefusesOrdinalsOutOfRange) {
  ZERO_REQUIRE_GPU();
  if (gpuTestsOnHost())
    GTEST_SKIP() << "needs a GPU";
  StatusOr<std::unique_ptr<Device>> negative = createCudaDevice(-1);
  ASSERT_FALSE(negative.isOk());
  EXPECT_NE(negative.status().message().find("CUDA device -1 out of range ("),
            std::string::npos)
      << negative.status().message();
  StatusOr<std::unique_ptr<Device>> far = createCudaDevice(1000);
  ASSERT_FALSE(far.isOk());
  EXPECT_NE(far.status().message().find("CUDA device 1000 out of range ("),
            std::string::npos)
      << far.status().message();
  StatusOr<std::unique_ptr<Device>> first = createCudaDevice(0);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_EQ((*first)->describe().rfind("cuda:0 (", 0), 0u)
      << (*first)->describe();
  EXPECT_FALSE((*first)->isHostMemory());
}

TEST(CudaDevice, ArenasStartZeroedAndAreCounted) {
  ZERO_REQUIRE_GPU();
  ScheduleBuilder b;
  int64_t x = b.tensor(DType::F32, {1000});
  int64_t y = b.tensor(DType::BF16, {7});
  b.constant(DType::F32, 1.0); // one instruction
  Runner r(b);
  ZERO_ASSERT_RUNNER(r);
  const int64_t arena = r.schedule().arenaBytes(MemorySpace::Device);
  // The arena, and on the GPU also registers, error record, workspace.
  EXPECT_GE(r.gpu().memory().current(), arena);
  EXPECT_EQ(r.host().memory().current(), arena);
  EXPECT_EQ(r.readGpu(x), makeBytes(DType::F32, 1000));
  EXPECT_EQ(r.readGpu(y), makeBytes(DType::BF16, 7));
  // Written and read back between steps.
  std::mt19937_64 rng(41);
  Bytes data = randomBytes(DType::F32, 1000, rng);
  r.write(x, data);
  r.step();
  EXPECT_EQ(r.readGpu(x), data);
}

TEST(CudaDevice, TraceTimesAreOrdered) {
  ZERO_REQUIRE_GPU();
  ScheduleBuilder b;
  int64_t a = b.tensor(DType::F32, {256, 256});
  int64_t c = b.tensor(DType::F32, {256, 256});
  // Each matmul accumulates in place: a new value in c's buffer.
  for (int i = 0; i < 4; ++i) {
    int64_t next = b.tensor(DType::F32, {256, 256}, c);
    b.op({{"op", "linalg.matmul"},
          {"operands", {a, a, c}},
          {"results", {next}}});
    c = next;
  }
  ExecutorOptions options;
  options.trace = true;
  Runner r(b, options);
  ZERO_ASSERT_RUNNER(r);
  for (int step = 0; step < 3; ++step) {
    r.step();
    std::vector<TraceEvent> events = r.gpu().takeTraceEvents();
    double last = -1;
    int instructions = 0;
    for (const TraceEvent &event : events) {
      if (event.category != "compute")
        continue;
      ++instructions;
      EXPECT_GE(event.durationUs, 0.0) << event.name;
      EXPECT_GE(event.startUs, last) << event.name;
      last = event.startUs;
    }
    EXPECT_EQ(instructions, 4);
  }
}

} // namespace
