//===- LoopGpuTest.cpp - a schedule's loop on the CUDA device -------------===//
//
// The executor runs loops with Device::copy (loop_slice, the carried values'
// copies); on the GPU those are asynchronous copies on the compute stream,
// which must see the kernels before them and be seen by those after.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include "../TestSchedules.h"

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

float loopData(int64_t i, int64_t j) {
  return 1.0f / (3.0f + i) + 0.37f * j - 0.011f * i * i;
}

TEST(LoopGpu, SumsSlicesIntoACarriedAccumulator) {
  ZERO_REQUIRE_GPU();
  const int count = 64, n = 300;
  StatusOr<Schedule> parsed = Schedule::parse(
      test::makeLoopSchedule(count, n, false).dump(), "loop.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createTestDevice(), *comm);
  ASSERT_TRUE(executor.isOk()) << executor.status().toString();
  StatusOr<StepStats> stats =
      (*executor)->step([&](const ArgumentInfo &, int64_t, TensorRef tensor) {
        for (int64_t k = 0; k < tensor.numel; ++k)
          static_cast<float *>(tensor.data)[k] = loopData(k / n, k % n);
        return Status::ok();
      });
  ASSERT_TRUE(stats.isOk()) << stats.status().toString();
  std::vector<float> acc(n), out(n);
  ASSERT_TRUE((*executor)->readTensor(4, acc.data()).isOk());
  ASSERT_TRUE((*executor)->readTensor(10, out.data()).isOk());
  for (int j = 0; j < n; ++j) {
    float expected = 0.5f;
    for (int i = 0; i < count; ++i)
      expected = expected + loopData(i, j);
    EXPECT_EQ(acc[j], expected) << "element " << j;
    EXPECT_EQ(out[j], expected) << "element " << j;
  }
}

} // namespace
