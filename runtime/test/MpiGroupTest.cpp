//===- MpiGroupTest.cpp - collectives over groups of four MPI ranks -------===//
//
// Run by ctest as `mpirun -np 4 zero-runtime-mpi-group-tests`: the ranks
// are grid [2, 2] (two nodes of two), and every test runs on every rank.
// The groups of each set of grid axes (docs/ScheduleFormat.md,
// "Collectives"), written out by hand:
//   axes [1]:    {0, 1}, {2, 3}  (within a node)
//   axes [0]:    {0, 2}, {1, 3}  (one rank per node)
//   axes [0, 1]: {0, 1, 2, 3}
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"
#include "zero/runtime/Executor.h"

#include "MpiWorld.h"
#include "TestSchedules.h"

#include <gtest/gtest.h>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

/// One set of grid axes: this rank's group in in-group order, and whether
/// its ring successor and predecessor are on the other node.
struct GroupCase {
  std::vector<int> axes;
  std::vector<int> members;
  bool sendsAcross;
  bool receivesAcross;
  int key() const {
    return static_cast<int>(
        std::find(members.begin(), members.end(), world().rank()) -
        members.begin());
  }
  int color() const { return members[0]; }
};

std::vector<GroupCase> groupCases() {
  int r = world().rank();
  int node = r / 2, local = r % 2;
  return {
      {{1}, {2 * node, 2 * node + 1}, false, false},
      {{0}, {local, local + 2}, true, true},
      // The ring 0 -> 1 -> 2 -> 3 -> 0 crosses from 1 to 2 and 3 to 0.
      {{0, 1}, {0, 1, 2, 3}, local == 1, local == 0},
  };
}

std::string nameOf(const std::vector<int> &axes) {
  std::string text = "axes [";
  for (size_t i = 0; i < axes.size(); ++i)
    text += (i ? ", " : "") + std::to_string(axes[i]);
  return text + "]";
}

TEST(MpiGroups, RunsOnFourRanks) { ASSERT_EQ(world().size(), 4); }

TEST(MpiGroups, SplitsAndCountsEachGroup) {
  Communicator &comm = world();
  ASSERT_EQ(comm.size(), 4);
  comm.setRanksPerNode(2);
  const int w = comm.rank();
  for (const GroupCase &c : groupCases()) {
    SCOPED_TRACE(nameOf(c.axes));
    CommunicationCounters worldBefore = comm.counters();
    StatusOr<std::unique_ptr<Communicator>> split =
        comm.split(c.color(), c.key(), context("split"));
    ASSERT_TRUE(split.isOk()) << split.status().toString();
    Communicator &group = **split;
    const int n = static_cast<int>(c.members.size());
    ASSERT_EQ(group.size(), n);
    ASSERT_EQ(group.rank(), c.key());
    EXPECT_EQ(group.counters().bytesSent, 0);

    // All-gather of 3 floats: member k's block is 10 * (its world rank) + i.
    float shard[3] = {10.0f * w, 10.0f * w + 1, 10.0f * w + 2};
    std::vector<float> gathered(3 * n, -1);
    ASSERT_TRUE(
        group.allGather(shard, gathered.data(), 3, DType::F32, context("ag"))
            .isOk());
    for (int k = 0; k < n; ++k)
      for (int i = 0; i < 3; ++i)
        EXPECT_EQ(gathered[k * 3 + i], 10.0f * c.members[k] + i)
            << "block " << k << " element " << i;

    // Reduce-scatter (sum) to 2 floats: element j of every rank is
    // 100 * w + j, so this rank's block sums 100 * w + key * 2 + i.
    std::vector<float> scattered(2 * n);
    for (int j = 0; j < 2 * n; ++j)
      scattered[j] = 100.0f * w + j;
    float mine[2] = {-1, -1};
    ASSERT_TRUE(group
                    .reduceScatter(scattered.data(), mine, 2, DType::F32,
                                   ReduceOp::Sum, context("rs"))
                    .isOk());
    for (int i = 0; i < 2; ++i) {
      float sum = 0;
      for (int m : c.members)
        sum += 100.0f * m + c.key() * 2 + i;
      EXPECT_EQ(mine[i], sum) << "element " << i;
    }

    // All-reduce (sum) of 5 floats: 1000 * w + i.
    float reduced[5];
    for (int i = 0; i < 5; ++i)
      reduced[i] = 1000.0f * w + i;
    ASSERT_TRUE(group
                    .allReduce(reduced, reduced, 5, DType::F32, ReduceOp::Sum,
                               context("ar"))
                    .isOk());
    for (int i = 0; i < 5; ++i) {
      float sum = 0;
      for (int m : c.members)
        sum += 1000.0f * m + i;
      EXPECT_EQ(reduced[i], sum) << "element " << i;
    }

    // (n-1)/n of the padded bytes each way: the all-gather of 3 * n floats,
    // the reduce-scatter of 2 * n, twice the all-reduce of 20 bytes rounded
    // up to n chunks.
    int64_t bytes =
        (n - 1) * 12 + (n - 1) * 8 + 2 * (n - 1) * ((20 + n - 1) / n);
    EXPECT_EQ(bytes, n == 2 ? 12 + 8 + 20 : 36 + 24 + 30);
    CommunicationCounters counters = group.counters();
    EXPECT_EQ(counters.calls, 3);
    EXPECT_EQ(counters.bytesSent, bytes);
    EXPECT_EQ(counters.bytesReceived, bytes);
    EXPECT_EQ(counters.bytesSentInterNode, c.sendsAcross ? bytes : 0);
    EXPECT_EQ(counters.bytesReceivedInterNode, c.receivesAcross ? bytes : 0);
    // The world counts none of the group's collectives.
    EXPECT_EQ(comm.counters().bytesSent, worldBefore.bytesSent);
    EXPECT_EQ(comm.counters().calls, worldBefore.calls);
  }
}

TEST(MpiGroups, TheWorldRingCountsAsBefore) {
  Communicator &comm = world();
  ASSERT_EQ(comm.size(), 4);
  comm.setRanksPerNode(2);
  CommunicationCounters before = comm.counters();
  float data[4] = {};
  float out[16];
  // 4 floats per rank: (4-1) * 16 bytes.
  ASSERT_TRUE(comm.allGather(data, out, 4, DType::F32, context("ag")).isOk());
  CommunicationCounters after = comm.counters();
  EXPECT_EQ(after.bytesSent - before.bytesSent, 48);
  // The last rank of a node sends across, the first receives.
  int local = comm.rank() % 2;
  EXPECT_EQ(after.bytesSentInterNode - before.bytesSentInterNode,
            local == 1 ? 48 : 0);
  EXPECT_EQ(after.bytesReceivedInterNode - before.bytesReceivedInterNode,
            local == 0 ? 48 : 0);
}

/// Runs makeGroupBucketSchedule over `c.axes` (the all-reduce over the world
/// instead with `worldAllReduce`) and checks every result and the step's
/// counters.
void runBucketStep(const GroupCase &c, bool worldAllReduce) {
  Communicator &comm = world();
  const int w = comm.rank();
  json s = makeGroupBucketSchedule(c.axes);
  if (worldAllReduce)
    s["instructions"]["comm"][2].erase("grid_axes");
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "g.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), comm);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  Executor &executor = **created;
  const int n = static_cast<int>(c.members.size());
  const int k = c.key();
  // Shards of A (5 floats) and B (3) as the group cuts them, padding 99.
  const int sa = (5 + n - 1) / n, sb = (3 + n - 1) / n;
  auto a = [&](int member, int j) { return 10.0f * member + j + 1; };
  float *shardA = static_cast<float *>(executor.tensorData(0).data);
  float *shardB = static_cast<float *>(executor.tensorData(1).data);
  for (int i = 0; i < sa; ++i)
    shardA[i] = k * sa + i < 5 ? a(w, k * sa + i) : 99.0f;
  for (int i = 0; i < sb; ++i)
    shardB[i] = k * sb + i < 3 ? -a(w, k * sb + i) : 99.0f;
  StatusOr<StepStats> stats = executor.step();
  ASSERT_TRUE(stats.isOk()) << stats.status().toString();
  auto floats = [&](int id) {
    TensorRef t = executor.tensorData(id);
    const float *p = static_cast<const float *>(t.data);
    return std::vector<float>(p, p + t.numel);
  };
  std::vector<float> fullA(5), fullB(3);
  for (int j = 0; j < 5; ++j)
    fullA[j] = a(c.members[j / sa], j);
  for (int j = 0; j < 3; ++j)
    fullB[j] = -a(c.members[j / sb], j);
  EXPECT_EQ(floats(2), fullA);
  EXPECT_EQ(floats(3), fullB);
  // Reduce-scatter (sum) of tensors equal across the group: n times this
  // rank's shard, padding zero.
  std::vector<float> ra(sa), rb(sb);
  for (int i = 0; i < sa; ++i)
    ra[i] = k * sa + i < 5 ? n * fullA[k * sa + i] : 0.0f;
  for (int i = 0; i < sb; ++i)
    rb[i] = k * sb + i < 3 ? n * fullB[k * sb + i] : 0.0f;
  EXPECT_EQ(floats(4), ra);
  EXPECT_EQ(floats(5), rb);
  // All-reduce (max): over the group, of equal tensors. Over the world, of
  // the groups {0, 1} and {2, 3}: A is largest from the second (larger
  // world ranks), B (negative) from the first.
  std::vector<float> maxA = fullA, maxB = fullB;
  if (worldAllReduce) {
    for (int j = 0; j < 5; ++j)
      maxA[j] = a(2 + j / sa, j);
    for (int j = 0; j < 3; ++j)
      maxB[j] = -a(j / sb, j);
  }
  EXPECT_EQ(floats(6), maxA);
  EXPECT_EQ(floats(7), maxB);

  // Blocks of sa + sb floats: the all-gather and the reduce-scatter move
  // (n-1) blocks each; the all-reduce of 8 floats twice (m-1) chunks of
  // 32 / m bytes over its m ranks.
  const int64_t block = (sa + sb) * 4;
  const int64_t groupBytes = 2 * (n - 1) * block;
  const int m = worldAllReduce ? 4 : n;
  const int64_t reduceBytes = 2 * (m - 1) * (32 / m);
  EXPECT_EQ(stats->bytesSent, groupBytes + reduceBytes);
  EXPECT_EQ(stats->bytesReceived, groupBytes + reduceBytes);
  const int local = w % 2;
  bool reduceSends = worldAllReduce ? local == 1 : c.sendsAcross;
  bool reduceReceives = worldAllReduce ? local == 0 : c.receivesAcross;
  EXPECT_EQ(stats->bytesSentInterNode,
            (c.sendsAcross ? groupBytes : 0) + (reduceSends ? reduceBytes : 0));
  EXPECT_EQ(stats->bytesReceivedInterNode,
            (c.receivesAcross ? groupBytes : 0) +
                (reduceReceives ? reduceBytes : 0));
}

TEST(MpiGroups, RunsBucketsOverEachGroup) {
  ASSERT_EQ(world().size(), 4);
  for (const GroupCase &c : groupCases()) {
    SCOPED_TRACE(nameOf(c.axes));
    runBucketStep(c, /*worldAllReduce=*/false);
  }
}

TEST(MpiGroups, MixesGroupAndWorldCollectivesInOneStep) {
  ASSERT_EQ(world().size(), 4);
  runBucketStep(groupCases()[0], /*worldAllReduce=*/true);
}

} // namespace
