//===- MpiTest.cpp - collectives and steps on two MPI ranks ---------------===//
//
// Run by ctest as `mpirun -np 2 zero-runtime-mpi-tests`: every rank runs
// every test, with the MPI communicator.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/Communicator.h"
#include "zero/runtime/Executor.h"
#include "zero/runtime/Session.h"

#include "MpiWorld.h"
#include "QuantizedGatherStep.h"
#include "QuantizedParamStep.h"
#include "QuantizedReduceScatterStep.h"
#include "TestSchedules.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

TEST(Mpi, RunsOnTwoRanks) {
  ASSERT_EQ(world().size(), 2);
  EXPECT_EQ(world().describe().rfind("MPI (", 0), 0u) << world().describe();
}

TEST(Mpi, ReducesEveryElementType) {
  Communicator &comm = world();
  int rank = comm.rank();
  // f32 avg, i64 max, i32 min, f64 sum.
  float f[3] = {1.0f + rank, 2.0f * rank, -1};
  ASSERT_TRUE(comm.allReduce(f, f, 3, DType::F32, ReduceOp::Avg, context("f32"))
                  .isOk());
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[1], 1.0f);
  EXPECT_EQ(f[2], -1.0f);
  int64_t i64 = rank * 7;
  ASSERT_TRUE(
      comm.allReduce(&i64, &i64, 1, DType::I64, ReduceOp::Max, context("i64"))
          .isOk());
  EXPECT_EQ(i64, 7);
  int32_t i32 = rank - 5;
  ASSERT_TRUE(
      comm.allReduce(&i32, &i32, 1, DType::I32, ReduceOp::Min, context("i32"))
          .isOk());
  EXPECT_EQ(i32, -5);
  double f64[2] = {0.25, rank ? 1e300 : -1e300};
  ASSERT_TRUE(
      comm.allReduce(f64, f64, 2, DType::F64, ReduceOp::Sum, context("f64"))
          .isOk());
  EXPECT_EQ(f64[0], 0.5);
  EXPECT_EQ(f64[1], 0.0);
  // bf16 1.0 = 0x3F80, 3.0 = 0x4040; f16 1.0 = 0x3C00, 3.0 = 0x4200.
  uint16_t bf16[2] = {static_cast<uint16_t>(rank ? 0x4040 : 0x3F80), 0x3F80};
  ASSERT_TRUE(
      comm.allReduce(bf16, bf16, 2, DType::BF16, ReduceOp::Sum, context("bf16"))
          .isOk());
  EXPECT_EQ(bf16[0], 0x4080); // 4.0
  EXPECT_EQ(bf16[1], 0x4000); // 2.0
  uint16_t f16[2] = {static_cast<uint16_t>(rank ? 0x4200 : 0x3C00), 0x3C00};
  ASSERT_TRUE(
      comm.allReduce(f16, f16, 2, DType::F16, ReduceOp::Avg, context("f16"))
          .isOk());
  EXPECT_EQ(f16[0], 0x4000); // 2.0
  EXPECT_EQ(f16[1], 0x3C00); // 1.0
  uint16_t max16 = static_cast<uint16_t>(rank ? 0x4200 : 0x3C00);
  ASSERT_TRUE(comm.allReduce(&max16, &max16, 1, DType::F16, ReduceOp::Max,
                             context("f16 max"))
                  .isOk());
  EXPECT_EQ(max16, 0x4200);
}

TEST(Mpi, CountsTheRingVolume) {
  Communicator &comm = world();
  CommunicationCounters before = comm.counters();
  float data[6] = {};
  float out[12];
  // all-gather of 6 per rank: P = 48 bytes, (N-1)/N * P = 24.
  ASSERT_TRUE(comm.allGather(data, out, 6, DType::F32, context("ag")).isOk());
  // reduce-scatter to 3 per rank: P = 24, 12 bytes.
  ASSERT_TRUE(
      comm.reduceScatter(out, data, 3, DType::F32, ReduceOp::Sum, context("rs"))
          .isOk());
  // all-reduce of 5 floats: P = 20, twice (N-1)/N * 20 = 20.
  ASSERT_TRUE(
      comm.allReduce(data, data, 5, DType::F32, ReduceOp::Sum, context("ar"))
          .isOk());
  CommunicationCounters after = comm.counters();
  EXPECT_EQ(after.bytesSent - before.bytesSent, 24 + 12 + 20);
  EXPECT_EQ(after.bytesReceived - before.bytesReceived, 24 + 12 + 20);
}

TEST(Mpi, GathersBytesToRankZero) {
  Communicator &comm = world();
  StatusOr<std::vector<std::string>> all = comm.gatherBytes(
      std::string(static_cast<size_t>(comm.rank() * 3), 'a' + comm.rank()),
      context("gather"));
  ASSERT_TRUE(all.isOk()) << all.status().toString();
  if (comm.rank() == 0)
    EXPECT_EQ(*all, (std::vector<std::string>{"", "bbb"}));
  else
    EXPECT_TRUE(all->empty());
  EXPECT_TRUE(comm.barrier(context("barrier")).isOk());
}

TEST(Mpi, AveragesDataAcrossRanks) {
  Communicator &comm = world();
  StatusOr<Schedule> parsed =
      Schedule::parse(makeAverageSchedule(2).dump(), "t.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), comm);
  ASSERT_TRUE(executor.isOk()) << executor.status().toString();
  int rank = comm.rank();
  StatusOr<StepStats> stats = (*executor)->step(
      [rank](const ArgumentInfo &, int64_t, TensorRef tensor) {
        for (int64_t i = 0; i < tensor.numel; ++i)
          static_cast<float *>(tensor.data)[i] = (rank + 1) * (i + 1.0f);
        return Status::ok();
      });
  ASSERT_TRUE(stats.isOk()) << stats.status().toString();
  const float *w =
      static_cast<const float *>((*executor)->argumentData(0).data);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(w[i], 1.5f * (i + 1));
  // One all-reduce of 16 bytes: 2 * (2-1) * 16/2.
  EXPECT_EQ(stats->bytesSent, 16);
  EXPECT_EQ(stats->meanLoss, 3.0);
}

// A loop whose body all-reduces each slice on the comm stream and adds it
// into a carried accumulator on compute, events re-recorded per iteration.
TEST(Mpi, RunsALoopWithACollectiveInItsBody) {
  Communicator &comm = world();
  const int count = 6, n = 4;
  StatusOr<Schedule> parsed =
      Schedule::parse(makeLoopSchedule(count, n, true, 2).dump(), "l.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), comm);
  ASSERT_TRUE(executor.isOk()) << executor.status().toString();
  auto data = [](int rank, int64_t i, int64_t j) {
    return (rank + 1) * (1.0f / (3.0f + i) + 0.37f * j);
  };
  int rank = comm.rank();
  StatusOr<StepStats> stats =
      (*executor)->step([&](const ArgumentInfo &, int64_t, TensorRef tensor) {
        for (int64_t k = 0; k < tensor.numel; ++k)
          static_cast<float *>(tensor.data)[k] = data(rank, k / n, k % n);
        return Status::ok();
      });
  ASSERT_TRUE(stats.isOk()) << stats.status().toString();
  const float *out =
      static_cast<const float *>((*executor)->tensorData(10).data);
  for (int j = 0; j < n; ++j) {
    float acc = 0.5f;
    for (int i = 0; i < count; ++i)
      acc = acc + (data(0, i, j) + data(1, i, j));
    EXPECT_EQ(out[j], acc) << "element " << j;
  }
  // count all-reduces of 16 bytes: 2 * (2-1) * 16/2 each.
  EXPECT_EQ(stats->bytesSent, count * 16);
}

TEST(Mpi, PacksBucketsWithPadding) {
  Communicator &comm = world();
  StatusOr<Schedule> parsed =
      Schedule::parse(makeBucketSchedule(2).dump(), "b.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), comm);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  Executor &executor = **created;
  int rank = comm.rank();
  // Shards of A = {1..5} (3 + 3 with one padding element) and B = {-1..-3}
  // (2 + 2 with one padding element).
  float *a = static_cast<float *>(executor.tensorData(0).data);
  float *b = static_cast<float *>(executor.tensorData(1).data);
  for (int i = 0; i < 3; ++i)
    a[i] = rank * 3 + i < 5 ? 1.0f + rank * 3 + i : 99.0f;
  for (int i = 0; i < 2; ++i)
    b[i] = rank * 2 + i < 3 ? -1.0f - (rank * 2 + i) : 99.0f;
  StatusOr<StepStats> stats = executor.step();
  ASSERT_TRUE(stats.isOk()) << stats.status().toString();
  auto floats = [&](int id) {
    TensorRef t = executor.tensorData(id);
    const float *p = static_cast<const float *>(t.data);
    return std::vector<float>(p, p + t.numel);
  };
  EXPECT_EQ(floats(2), (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(floats(3), (std::vector<float>{-1, -2, -3}));
  // Reduce-scatter (sum) of the full tensors, equal on both ranks: twice
  // the rank's shard, padding zero.
  std::vector<float> ra =
      rank == 0 ? std::vector<float>{2, 4, 6} : std::vector<float>{8, 10, 0};
  std::vector<float> rb =
      rank == 0 ? std::vector<float>{-2, -4} : std::vector<float>{-6, 0};
  EXPECT_EQ(floats(4), ra);
  EXPECT_EQ(floats(5), rb);
  EXPECT_EQ(floats(6), floats(2)); // max of equal tensors
  EXPECT_EQ(floats(7), floats(3));
  // Buckets of 5 floats per rank: P = 40 bytes; all-gather and
  // reduce-scatter move 20 each; the all-reduce of 8 floats 2 * 16.
  EXPECT_EQ(stats->bytesSent, 20 + 20 + 32);
}

// Quantized all-gathers (ZeRO++ qwZ): shards of 4, 2 and 6 elements (7, 3
// and 12 gathered, padding in the first two), blocks of 3 that divide
// neither of the first two shards, so each ends in a shorter block.
void checkQuantizedGather(const std::string &dtype) {
  Communicator &comm = world();
  const int n = comm.size();
  const std::vector<int> numels = {7, 3, 12};
  json s = makeQuantizedGatherSchedule(n, numels, dtype.c_str(), 3);
  StepStats stats =
      runQuantizedGatherStep(comm, s, n, comm.rank(), 0, numels, dtype, 3);
  // The ring of P-byte blocks: P = 4 * (2 + 1 + 2) + 12 = 32 on two ranks.
  std::vector<int64_t> shards;
  for (int numel : numels)
    shards.push_back((numel + n - 1) / n);
  const int64_t packed = quantizedGatherBytes(shards, 3);
  EXPECT_EQ(stats.bytesSent, (n - 1) * packed);
  EXPECT_EQ(stats.bytesReceived, (n - 1) * packed);
}

TEST(Mpi, GathersQuantizedF32) { checkQuantizedGather("f32"); }
TEST(Mpi, GathersQuantizedBF16) { checkQuantizedGather("bf16"); }
TEST(Mpi, GathersQuantizedF16) { checkQuantizedGather("f16"); }

TEST(Mpi, GathersQuantizedInBlocksOfOneAndOfWholeShards) {
  Communicator &comm = world();
  const int n = comm.size();
  const std::vector<int> numels = {7, 3, 12};
  for (int64_t blockSize : {1, 6, 1000}) {
    SCOPED_TRACE("block size " + std::to_string(blockSize));
    json s = makeQuantizedGatherSchedule(n, numels, "bf16",
                                         static_cast<int>(blockSize));
    StepStats stats = runQuantizedGatherStep(comm, s, n, comm.rank(), 1, numels,
                                             "bf16", blockSize);
    std::vector<int64_t> shards;
    for (int numel : numels)
      shards.push_back((numel + n - 1) / n);
    EXPECT_EQ(stats.bytesSent,
              (n - 1) * quantizedGatherBytes(shards, blockSize));
  }
}

// recv[p] = rank p's send[me]: 3 bytes per peer, each naming its sender,
// destination and position. On one node nothing crosses; with a node per
// rank the peer's 3 bytes do, each way, and the simulated link delays them.
TEST(Mpi, AllToAllExchangesBlocksAndCountsThem) {
  Communicator &comm = world();
  const int n = comm.size(), r = comm.rank();
  std::vector<uint8_t> send(3 * n), recv(3 * n, 0xEE);
  auto byte = [](int from, int to, int b) {
    return static_cast<uint8_t>(from * 64 + to * 8 + b);
  };
  for (int p = 0; p < n; ++p)
    for (int b = 0; b < 3; ++b)
      send[p * 3 + b] = byte(r, p, b);
  comm.setRanksPerNode(n);
  CommunicationCounters before = comm.counters();
  ASSERT_TRUE(
      comm.allToAll(send.data(), recv.data(), 3, context("a2a")).isOk());
  for (int p = 0; p < n; ++p)
    for (int b = 0; b < 3; ++b)
      EXPECT_EQ(recv[p * 3 + b], byte(p, r, b))
          << "peer " << p << " byte " << b;
  CommunicationCounters after = comm.counters();
  EXPECT_EQ(after.bytesSent - before.bytesSent, (n - 1) * 3);
  EXPECT_EQ(after.bytesReceived - before.bytesReceived, (n - 1) * 3);
  EXPECT_EQ(after.calls - before.calls, 1);
  EXPECT_EQ(after.bytesSentInterNode, before.bytesSentInterNode);
  EXPECT_EQ(after.bytesReceivedInterNode, before.bytesReceivedInterNode);

  comm.setRanksPerNode(1);
  comm.setInterNodeNsPerByte(1000);
  before = comm.counters();
  Status status = comm.allToAll(send.data(), recv.data(), 3, context("a2a"));
  comm.setInterNodeNsPerByte(0);
  comm.setRanksPerNode(0);
  ASSERT_TRUE(status.isOk()) << status.toString();
  after = comm.counters();
  EXPECT_EQ(after.bytesSentInterNode - before.bytesSentInterNode, (n - 1) * 3);
  EXPECT_EQ(after.bytesReceivedInterNode - before.bytesReceivedInterNode,
            (n - 1) * 3);
  EXPECT_EQ(after.delayInjectedNs - before.delayInjectedNs, 1000 * (n - 1) * 3);
}

// Quantized reduce-scatters (ZeRO++ qgZ) on the two ranks of one node: one
// hop, an all-to-all of one C-byte chunk each way. Tensors of 37 (padded to
// 38: shards of 19, the last with padding) and 12 elements (shards of 6).
void checkQuantizedReduceScatter(const std::string &dtype, bool avg,
                                 int64_t blockSize) {
  Communicator &comm = world();
  const int n = comm.size();
  const std::vector<int> numels = {37, 12};
  json s = makeQuantizedReduceScatterSchedule(n, numels, dtype.c_str(),
                                              static_cast<int>(blockSize),
                                              avg ? "avg" : "sum");
  StepStats stats = runQuantizedReduceScatterStep(
      comm, s, {n}, comm.rank(), 2, numels, dtype, blockSize, avg);
  const int64_t chunk = quantizedChunkBytes({19, 6}, blockSize);
  EXPECT_EQ(stats.bytesSent, (n - 1) * chunk);
  EXPECT_EQ(stats.bytesReceived, (n - 1) * chunk);
  EXPECT_EQ(stats.bytesSentInterNode, 0);
  EXPECT_EQ(stats.bytesReceivedInterNode, 0);
}

TEST(Mpi, ReduceScattersQuantizedF32Sum) {
  checkQuantizedReduceScatter("f32", false, 4);
}
TEST(Mpi, ReduceScattersQuantizedF32Avg) {
  checkQuantizedReduceScatter("f32", true, 2);
}
TEST(Mpi, ReduceScattersQuantizedBF16Avg) {
  checkQuantizedReduceScatter("bf16", true, 4);
}
TEST(Mpi, ReduceScattersQuantizedF16Sum) {
  checkQuantizedReduceScatter("f16", false, 6);
}
TEST(Mpi, ReduceScattersQuantizedInOneBlockPerShard) {
  checkQuantizedReduceScatter("bf16", false, 64);
}

// Frozen parameters stored quantized (zero_quantized_nontrainable_weights):
// shards of 4, 2 and 6 elements, the last rank's first two padded, stored
// quantized or plain in one bucket.
TEST(Mpi, GathersParametersStoredQuantized) {
  checkQuantizedParamGather(world(), {7, 3, 12}, "bf16", 3,
                            {true, false, true});
  checkQuantizedParamGather(world(), {7, 3, 12}, "f32", 5, {false, true, true});
}

/// A session of `schedule` (seed 5) over `useMpi` ranks, resumed from
/// `checkpoint` unless empty.
std::unique_ptr<Session> openQuantized(const json &schedule, bool useMpi,
                                       const std::string &checkpoint = "") {
  StatusOr<Schedule> parsed = Schedule::parse(schedule.dump(), "q.json");
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  if (!parsed.isOk())
    return nullptr;
  SessionOptions options;
  options.useMpi = useMpi;
  options.seed = 5;
  options.resumeFrom = checkpoint;
  StatusOr<std::unique_ptr<Session>> session = Session::create(
      std::make_shared<const Schedule>(std::move(*parsed)), options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  return session.isOk() ? std::move(*session) : nullptr;
}

// A parameter stored quantized on two ranks, loaded on one (online and
// through zero-ckpt's reshard): the two shards dequantized, put together
// and quantized again in the one rank's blocks, which cut it elsewhere.
TEST(Mpi, ReshardsAParameterStoredQuantized) {
  Communicator &comm = world();
  int32_t pid = comm.rank() == 0 ? static_cast<int32_t>(::getpid()) : 0;
  ASSERT_TRUE(
      comm.allReduce(&pid, &pid, 1, DType::I32, ReduceOp::Sum, context("pid"))
          .isOk());
  const std::string dir =
      ::testing::TempDir() + "zero-qnw-" + std::to_string(pid);
  if (comm.rank() == 0) {
    ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << dir;
    ASSERT_TRUE(prepareCheckpointDirectory(dir + "/two").isOk());
  }
  std::unique_ptr<Session> two = openQuantized(
      makeQuantizedGatherSchedule(2, {7, 3}, "bf16", 3, {true, false}), true);
  ASSERT_TRUE(two);
  StatusOr<std::vector<NamedTensor>> exported = two->exportParameters();
  ASSERT_TRUE(exported.isOk()) << exported.status().toString();
  // Every rank's shard of w0 as the export joins them: dequantized.
  const Bytes stored = readValueBytes(two->executor(), 0);
  Bytes every(2 * stored.size());
  ASSERT_TRUE(comm.allGather(stored.data(), every.data(),
                             static_cast<int64_t>(stored.size()), DType::I1,
                             context("stored shards"))
                  .isOk());
  ASSERT_TRUE(saveCheckpoint(*two, {dir + "/two"}).isOk());
  two.reset();
  if (comm.rank() == 0) {
    Bytes whole;
    for (int r = 0; r < 2; ++r) {
      Bytes shard =
          dequantizePacked(Bytes(every.begin() + r * stored.size(),
                                 every.begin() + (r + 1) * stored.size()),
                           4, DType::BF16, 3);
      whole.insert(whole.end(), shard.begin(), shard.end());
    }
    whole.resize(7 * 2);
    ASSERT_EQ(exported->size(), 2u);
    std::vector<float> exportedW0(7);
    for (int i = 0; i < 7; ++i) {
      uint16_t bits;
      std::memcpy(&bits, whole.data() + 2 * i, 2);
      exportedW0[i] = bf16ToFloat(bits);
    }
    EXPECT_EQ(exported->front().data, exportedW0);

    const Bytes requantized = quantizePacked(whole, 7, DType::BF16, 3);
    json one = makeQuantizedGatherSchedule(1, {7, 3}, "bf16", 3, {true, false});
    std::unique_ptr<Session> loaded = openQuantized(one, false, dir + "/two");
    ASSERT_TRUE(loaded);
    EXPECT_EQ(readValueBytes(loaded->executor(), 0), requantized);
    loaded.reset();
    ASSERT_TRUE(reshardCheckpoint(dir + "/two", 1, 3, dir + "/one").isOk());
    ASSERT_TRUE(verifyCheckpoint(dir + "/one").isOk());
    loaded = openQuantized(one, false, dir + "/one");
    ASSERT_TRUE(loaded);
    EXPECT_EQ(readValueBytes(loaded->executor(), 0), requantized);
    // Plain on one rank: the dequantized values.
    loaded = openQuantized(
        makeQuantizedGatherSchedule(1, {7, 3}, "bf16", 3, {false, false}),
        false, dir + "/two");
    ASSERT_TRUE(loaded);
    EXPECT_EQ(readValueBytes(loaded->executor(), 0), whole);
    loaded.reset();
    EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  }
  float x = 0;
  ASSERT_TRUE(
      comm.allReduce(&x, &x, 1, DType::F32, ReduceOp::Sum, context("barrier"))
          .isOk());
}

} // namespace
