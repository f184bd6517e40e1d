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

#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/Communicator.h"
#include "zero/runtime/Executor.h"
#include "zero/runtime/Session.h"
#include "zero/runtime/StateAccess.h"

#include "MpiWorld.h"
#include "QuantizedGatherStep.h"
#include "QuantizedReduceScatterStep.h"
#include "TestSchedules.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

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

// An avg divides by the group's size, not the world's: MiCS averages a
// gradient over the ranks of a node (axes [1]), then over the replicas
// (axes [0]), which makes the world's average.
TEST(MpiGroups, AveragesOverTheGroup) {
  Communicator &comm = world();
  ASSERT_EQ(comm.size(), 4);
  comm.setRanksPerNode(2);
  const int w = comm.rank();
  std::vector<std::unique_ptr<Communicator>> groups;
  for (const GroupCase &c : groupCases()) {
    SCOPED_TRACE(nameOf(c.axes));
    StatusOr<std::unique_ptr<Communicator>> split =
        comm.split(c.color(), c.key(), context("split"));
    ASSERT_TRUE(split.isOk()) << split.status().toString();
    Communicator &group = **split;
    const int n = static_cast<int>(c.members.size());
    // All-reduce (avg) of 3 floats: 8 * w + i.
    float reduced[3];
    for (int i = 0; i < 3; ++i)
      reduced[i] = 8.0f * w + i;
    ASSERT_TRUE(group
                    .allReduce(reduced, reduced, 3, DType::F32, ReduceOp::Avg,
                               context("ar"))
                    .isOk());
    for (int i = 0; i < 3; ++i) {
      float sum = 0;
      for (int m : c.members)
        sum += 8.0f * m + i;
      EXPECT_EQ(reduced[i], sum / n) << "element " << i;
    }
    // Reduce-scatter (avg) to 1 float of n: element j is 8 * w + j.
    std::vector<float> scattered(n);
    for (int j = 0; j < n; ++j)
      scattered[j] = 8.0f * w + j;
    float mine = -1;
    ASSERT_TRUE(group
                    .reduceScatter(scattered.data(), &mine, 1, DType::F32,
                                   ReduceOp::Avg, context("rs"))
                    .isOk());
    float sum = 0;
    for (int m : c.members)
      sum += 8.0f * m + c.key();
    EXPECT_EQ(mine, sum / n);
    groups.push_back(std::move(*split));
  }
  // Within the node, then across the nodes: the average of the world's
  // 8 * w + i, 12 + i.
  float x[3];
  for (int i = 0; i < 3; ++i)
    x[i] = 8.0f * w + i;
  ASSERT_TRUE(
      groups[0]
          ->allReduce(x, x, 3, DType::F32, ReduceOp::Avg, context("node"))
          .isOk());
  ASSERT_TRUE(
      groups[1]
          ->allReduce(x, x, 3, DType::F32, ReduceOp::Avg, context("replicas"))
          .isOk());
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(x[i], 12.0f + i) << "element " << i;
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
/// instead with `worldAllReduce`; the reduce-scatter an avg with `average`)
/// and checks every result and the step's counters.
/// With `nsPerByte`, also the simulated inter-node delay of the step.
void runBucketStep(const GroupCase &c, bool worldAllReduce,
                   bool average = false, double nsPerByte = 0) {
  Communicator &comm = world();
  const int w = comm.rank();
  json s = makeGroupBucketSchedule(c.axes);
  if (worldAllReduce)
    s["instructions"]["comm"][2].erase("grid_axes");
  if (average)
    s["instructions"]["comm"][1]["reduction"] = "avg";
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "g.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  ExecutorOptions options;
  options.interNodeNsPerByte = nsPerByte;
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), comm, options);
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
  // rank's shard, padding zero; an avg divides by the group's n.
  const float times = average ? 1.0f : static_cast<float>(n);
  std::vector<float> ra(sa), rb(sb);
  for (int i = 0; i < sa; ++i)
    ra[i] = k * sa + i < 5 ? times * fullA[k * sa + i] : 0.0f;
  for (int i = 0; i < sb; ++i)
    rb[i] = k * sb + i < 3 ? times * fullB[k * sb + i] : 0.0f;
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
  // Each collective waited X ns per byte its rank sent across nodes (X a
  // whole number here, so no rounding): nothing where none crossed.
  EXPECT_EQ(stats->interNodeDelayNs,
            static_cast<int64_t>(nsPerByte) * stats->bytesSentInterNode);
  comm.setInterNodeNsPerByte(0);
}

TEST(MpiGroups, RunsBucketsOverEachGroup) {
  ASSERT_EQ(world().size(), 4);
  for (const GroupCase &c : groupCases()) {
    SCOPED_TRACE(nameOf(c.axes));
    runBucketStep(c, /*worldAllReduce=*/false);
  }
}

TEST(MpiGroups, AveragesBucketsOverTheGroup) {
  ASSERT_EQ(world().size(), 4);
  for (const GroupCase &c : groupCases()) {
    SCOPED_TRACE(nameOf(c.axes));
    runBucketStep(c, /*worldAllReduce=*/false, /*average=*/true);
  }
}

// The executor's option reaches the world and every group split from it;
// the step's delay is that of the bytes sent across nodes.
TEST(MpiGroups, DelaysTheStepsCollectivesOverEachGroup) {
  ASSERT_EQ(world().size(), 4);
  for (const GroupCase &c : groupCases()) {
    SCOPED_TRACE(nameOf(c.axes));
    runBucketStep(c, /*worldAllReduce=*/false, /*average=*/false, 1000);
  }
  runBucketStep(groupCases()[0], /*worldAllReduce=*/true, false, 1000);
}

TEST(MpiGroups, RefusesABadInterNodeDelay) {
  for (double bad : {-1.0, std::nan(""), HUGE_VAL, 1e300, 1.0000001e9}) {
    Status status = checkInterNodeNsPerByte(bad);
    ASSERT_FALSE(status.isOk()) << bad;
    EXPECT_NE(status.message().find("the inter-node delay must be a number "
                                    "of nanoseconds per byte in [0, 1e9]"),
              std::string::npos)
        << status.message();
  }
  EXPECT_TRUE(checkInterNodeNsPerByte(0).isOk());
  EXPECT_TRUE(checkInterNodeNsPerByte(1e9).isOk());
  EXPECT_TRUE(checkInterNodeNsPerByte(0.25).isOk());
  // The executor refuses it before it touches the communicator.
  json s = makeGroupBucketSchedule({1});
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "g.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  ExecutorOptions options;
  options.interNodeNsPerByte = -2;
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), world(), options);
  ASSERT_FALSE(created.isOk());
  EXPECT_NE(created.status().message().find("not -2"), std::string::npos)
      << created.status().message();
}

// Every kind of collective, over the world and each group: the rank that
// sends B bytes across nodes waits B * X ns (at least that long by the
// clock, and exactly that in delayInjectedNs); the others wait nothing.
TEST(MpiGroups, DelaysWhatARankSendsAcrossNodes) {
  Communicator &comm = world();
  ASSERT_EQ(comm.size(), 4);
  comm.setRanksPerNode(2);
  const double x = 2500; // ns per byte: 0.4 MB/s
  comm.setInterNodeNsPerByte(x);
  struct Reset {
    ~Reset() { world().setInterNodeNsPerByte(0); }
  } reset;
  std::vector<GroupCase> cases = groupCases();
  // The world itself: the ring 0 -> 1 -> 2 -> 3 -> 0 as axes [0, 1].
  cases.push_back(cases[2]);
  for (size_t i = 0; i < cases.size(); ++i) {
    const GroupCase &c = cases[i];
    const bool isWorld = i + 1 == cases.size();
    SCOPED_TRACE(isWorld ? "world" : nameOf(c.axes));
    std::unique_ptr<Communicator> split;
    if (!isWorld) {
      StatusOr<std::unique_ptr<Communicator>> made =
          comm.split(c.color(), c.key(), context("split"));
      ASSERT_TRUE(made.isOk()) << made.status().toString();
      split = std::move(*made);
      EXPECT_EQ(split->interNodeNsPerByte(), x);
    }
    Communicator &group = isWorld ? comm : *split;
    const int n = group.size();
    std::vector<float> data(64 * n, 1.0f), out(64 * n);
    for (int kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE(kind == 0   ? "all_gather"
                   : kind == 1 ? "reduce_scatter"
                               : "all_reduce");
      CommunicationCounters before = group.counters();
      auto start = std::chrono::steady_clock::now();
      Status status =
          kind == 0 ? group.allGather(data.data(), out.data(), 64, DType::F32,
                                      context("ag"))
          : kind == 1
              ? group.reduceScatter(data.data(), out.data(), 64, DType::F32,
                                    ReduceOp::Sum, context("rs"))
              : group.allReduce(data.data(), out.data(), 64, DType::F32,
                                ReduceOp::Sum, context("ar"));
      const double elapsedNs = std::chrono::duration<double, std::nano>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();
      ASSERT_TRUE(status.isOk()) << status.toString();
      CommunicationCounters after = group.counters();
      // 256 bytes per rank block: (n-1) blocks, twice (n-1) chunks of the
      // all-reduce's 256 bytes.
      const int64_t bytes = kind < 2 ? (n - 1) * 256 : 2 * (n - 1) * (256 / n);
      EXPECT_EQ(after.bytesSent - before.bytesSent, bytes);
      const int64_t across =
          after.bytesSentInterNode - before.bytesSentInterNode;
      EXPECT_EQ(across, c.sendsAcross ? bytes : 0);
      const int64_t injected = after.delayInjectedNs - before.delayInjectedNs;
      EXPECT_EQ(injected, static_cast<int64_t>(x) * across);
      if (c.sendsAcross) {
        EXPECT_GT(injected, 0);
        // A lower bound only: the clock says at least the injected delay.
        EXPECT_GE(elapsedNs, 0.9 * static_cast<double>(injected));
      }
    }
  }
  // Without a topology nothing crosses, so nothing is delayed.
  comm.setRanksPerNode(0);
  CommunicationCounters before = comm.counters();
  float one[4] = {}, all[16];
  ASSERT_TRUE(comm.allGather(one, all, 4, DType::F32, context("ag")).isOk());
  EXPECT_EQ(comm.counters().delayInjectedNs, before.delayInjectedNs);
  comm.setRanksPerNode(2);
}

// A quantized all-gather (qwZ) over each group: the group's communicator
// moves the P-byte ring, split between nodes as the unquantized gather's.
TEST(MpiGroups, GathersQuantizedOverEachGroup) {
  ASSERT_EQ(world().size(), 4);
  const std::vector<int> numels = {7, 3, 12};
  for (const GroupCase &c : groupCases()) {
    SCOPED_TRACE(nameOf(c.axes));
    const int n = static_cast<int>(c.members.size());
    json s = makeQuantizedGatherSchedule(n, numels, "bf16", 3);
    s["world_size"] = 4;
    s["topology"]["grid"] = {2, 2};
    s["instructions"]["comm"][0]["grid_axes"] = c.axes;
    StepStats stats = runQuantizedGatherStep(world(), s, n, c.key(), c.color(),
                                             numels, "bf16", 3);
    std::vector<int64_t> shards;
    for (int numel : numels)
      shards.push_back((numel + n - 1) / n);
    const int64_t bytes = (n - 1) * quantizedGatherBytes(shards, 3);
    EXPECT_EQ(stats.bytesSent, bytes);
    EXPECT_EQ(stats.bytesReceived, bytes);
    EXPECT_EQ(stats.bytesSentInterNode, c.sendsAcross ? bytes : 0);
    EXPECT_EQ(stats.bytesReceivedInterNode, c.receivesAcross ? bytes : 0);
  }
}

// An all-to-all over each group: b bytes to every other member, of which
// those to members on the other node cross (b per such member, each way),
// and the simulated link delays this rank by what it sent across.
TEST(MpiGroups, AllToAllCountsThePeersOnOtherNodes) {
  Communicator &comm = world();
  ASSERT_EQ(comm.size(), 4);
  comm.setRanksPerNode(2);
  comm.setInterNodeNsPerByte(100);
  struct Reset {
    ~Reset() { world().setInterNodeNsPerByte(0); }
  } reset;
  const int node = comm.rank() / 2;
  for (const GroupCase &c : groupCases()) {
    SCOPED_TRACE(nameOf(c.axes));
    StatusOr<std::unique_ptr<Communicator>> split =
        comm.split(c.color(), c.key(), context("split"));
    ASSERT_TRUE(split.isOk()) << split.status().toString();
    Communicator &group = **split;
    const int n = group.size();
    const int64_t b = 5;
    std::vector<uint8_t> send(b * n), recv(b * n);
    for (int p = 0; p < n; ++p)
      for (int i = 0; i < b; ++i)
        send[p * b + i] = static_cast<uint8_t>(comm.rank() * 50 + p * 10 + i);
    CommunicationCounters before = group.counters();
    ASSERT_TRUE(
        group.allToAll(send.data(), recv.data(), b, context("a2a")).isOk());
    for (int p = 0; p < n; ++p)
      for (int i = 0; i < b; ++i)
        EXPECT_EQ(recv[p * b + i],
                  static_cast<uint8_t>(c.members[p] * 50 + c.key() * 10 + i));
    int otherNode = 0;
    for (int m : c.members)
      otherNode += m / 2 != node;
    CommunicationCounters after = group.counters();
    EXPECT_EQ(after.bytesSent - before.bytesSent, (n - 1) * b);
    EXPECT_EQ(after.bytesReceived - before.bytesReceived, (n - 1) * b);
    EXPECT_EQ(after.bytesSentInterNode - before.bytesSentInterNode,
              otherNode * b);
    EXPECT_EQ(after.bytesReceivedInterNode - before.bytesReceivedInterNode,
              otherNode * b);
    EXPECT_EQ(after.delayInjectedNs - before.delayInjectedNs,
              100 * otherNode * b);
  }
}

// Quantized reduce-scatters (qgZ) of tensors of 37 and 12 elements in
// blocks of 4: over each group (one hop for axes [1] and [0], two for
// [0, 1]), over the world of grid [2, 2] without grid_axes (two hops, a
// node's ranks first) and over a world of one node, grid [4] (one hop).
// With C the packed chunk, a rank of K nodes of L sends (L - 1) * K * C
// bytes within its node and (K - 1) * C across.
TEST(MpiGroups, ReduceScattersQuantizedHopByHop) {
  ASSERT_EQ(world().size(), 4);
  // 3 elements on 4 ranks: the last chunk is all padding.
  const std::vector<int> numels = {37, 12, 3};
  struct Case {
    std::string name;
    std::vector<int> axes; // grid_axes; empty: none
    std::vector<int> grid;
    std::vector<int> axisSizes;
    int member, seed;
    int64_t intraChunks, interChunks;
  };
  const int r = world().rank();
  std::vector<Case> cases;
  for (const GroupCase &c : groupCases()) {
    // A node's ranks (axis 1), or one per node (axis 0), or both hops.
    const bool both = c.axes.size() == 2;
    const bool across = c.axes == std::vector<int>{0};
    const int64_t intra = both ? 2 : across ? 0 : 1;
    const int64_t inter = both || across ? 1 : 0;
    std::vector<int> sizes =
        both ? std::vector<int>{2, 2} : std::vector<int>{2};
    cases.push_back({nameOf(c.axes),
                     c.axes,
                     {2, 2},
                     sizes,
                     c.key(),
                     c.color(),
                     intra,
                     inter});
  }
  cases.push_back({"world of [2, 2]", {}, {2, 2}, {2, 2}, r, 9, 2, 1});
  cases.push_back({"world of [4]", {}, {4}, {4}, r, 9, 3, 0});
  // One rank per node: no hop within a node, one across.
  cases.push_back({"world of [4, 1]", {}, {4, 1}, {4}, r, 9, 0, 3});
  // A node of one rank: no hop at all, the rank's own tensors exactly.
  cases.push_back({"[1] of [4, 1]", {1}, {4, 1}, {}, 0, 10 + r, 0, 0});
  for (const char *reduction : {"sum", "avg"})
    for (const Case &c : cases) {
      SCOPED_TRACE(c.name + " " + reduction);
      int n = 1;
      for (int size : c.axisSizes)
        n *= size;
      json s = makeQuantizedReduceScatterSchedule(
          n, numels, "bf16", 4, reduction,
          c.axisSizes.empty() ? 1 : n / c.axisSizes.back());
      s["world_size"] = 4;
      s["topology"]["grid"] = c.grid;
      if (!c.axes.empty())
        s["instructions"]["comm"][0]["grid_axes"] = c.axes;
      StepStats stats = runQuantizedReduceScatterStep(
          world(), s, c.axisSizes, c.member, c.seed, numels, "bf16", 4,
          std::string(reduction) == "avg");
      std::vector<int64_t> shards;
      for (int numel : numels)
        shards.push_back((numel + n - 1) / n);
      const int64_t chunk = quantizedChunkBytes(shards, 4);
      const int64_t bytes = (c.intraChunks + c.interChunks) * chunk;
      EXPECT_EQ(stats.bytesSent, bytes);
      EXPECT_EQ(stats.bytesReceived, bytes);
      EXPECT_EQ(stats.bytesSentInterNode, c.interChunks * chunk);
      EXPECT_EQ(stats.bytesReceivedInterNode, c.interChunks * chunk);
    }
}

TEST(MpiGroups, MixesGroupAndWorldCollectivesInOneStep) {
  ASSERT_EQ(world().size(), 4);
  runBucketStep(groupCases()[0], /*worldAllReduce=*/true);
}

/// A session of makeShardedParamSchedule(layoutRanks) on the four ranks,
/// resumed from `checkpoint` unless empty.
std::unique_ptr<Session> openShardedParam(int layoutRanks,
                                          const std::string &checkpoint) {
  StatusOr<Schedule> parsed =
      Schedule::parse(makeShardedParamSchedule(layoutRanks).dump(), "p.json");
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  if (!parsed.isOk())
    return nullptr;
  SessionOptions options;
  options.useMpi = true;
  options.seed = 7;
  options.resumeFrom = checkpoint;
  StatusOr<std::unique_ptr<Session>> session = Session::create(
      std::make_shared<const Schedule>(std::move(*parsed)), options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  return session.isOk() ? std::move(*session) : nullptr;
}

/// Every rank holds shard r % layoutRanks of `w` and of its `exp_avg`, and
/// the accessors put the full tensors together from them.
void expectShards(Session &session, int layoutRanks,
                  const std::vector<float> &w, const std::vector<float> &avg) {
  const int shard = (5 + layoutRanks - 1) / layoutRanks;
  const int first = world().rank() % layoutRanks * shard;
  std::vector<float> localW(shard, 0.0f), localAvg(shard, 0.0f);
  for (int i = 0; i < shard && first + i < 5; ++i) {
    localW[i] = w[first + i];
    localAvg[i] = avg[first + i];
  }
  StatusOr<std::vector<float>> value = getLocalFp32Param(session, "w");
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(*value, localW);
  value = getLocalOptimizerState(session, "w", "exp_avg");
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(*value, localAvg);
  value = getFullFp32Param(session, "w");
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(*value, w);
  value = getFullOptimizerState(session, "w", "exp_avg");
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(*value, avg);
}

/// The full `w` of the checkpoint at `path`, consolidated.
std::vector<float> consolidateW(const std::string &path) {
  StatusOr<std::vector<RawTensor>> tensors = consolidateCheckpoint(path, "F32");
  EXPECT_TRUE(tensors.isOk()) << tensors.status().toString();
  if (!tensors.isOk() || tensors->size() != 1)
    return {};
  const RawTensor &w = tensors->front();
  EXPECT_EQ(w.name, "w");
  std::vector<float> values(w.bytes.size() / 4);
  std::memcpy(values.data(), w.bytes.data(), w.bytes.size());
  return values;
}

// MiCS: parameters and their states cut across the ranks of a node and
// replicated across the nodes; checkpoints of them consolidated, resharded
// and loaded into a schedule that cuts them across the world, and back.
TEST(MpiGroups, CutsParametersAcrossANodeAndCheckpointsThem) {
  Communicator &comm = world();
  ASSERT_EQ(comm.size(), 4);
  // One directory for the job: rank 0's process id.
  int32_t pid = comm.rank() == 0 ? static_cast<int32_t>(::getpid()) : 0;
  ASSERT_TRUE(
      comm.allReduce(&pid, &pid, 1, DType::I32, ReduceOp::Sum, context("pid"))
          .isOk());
  const std::string dir =
      ::testing::TempDir() + "zero-mics-" + std::to_string(pid);
  if (comm.rank() == 0) {
    ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << dir;
    ASSERT_TRUE(prepareCheckpointDirectory(dir + "/mics").isOk());
  }
  auto barrier = [&] {
    float x = 0;
    ASSERT_TRUE(
        comm.allReduce(&x, &x, 1, DType::F32, ReduceOp::Sum, context("barrier"))
            .isOk());
  };

  // The initialization is the same whole tensor however it is cut.
  std::unique_ptr<Session> plain = openShardedParam(4, "");
  ASSERT_TRUE(plain);
  StatusOr<std::vector<float>> full = getFullFp32Param(*plain, "w");
  ASSERT_TRUE(full.isOk()) << full.status().toString();
  ASSERT_EQ(full->size(), 5u);
  plain.reset();
  std::unique_ptr<Session> mics = openShardedParam(2, "");
  ASSERT_TRUE(mics);
  const std::vector<float> avg = {1, 2, 3, 4, 5};
  ASSERT_TRUE(setFullOptimizerState(*mics, "w", "exp_avg", avg).isOk());
  expectShards(*mics, 2, *full, avg);
  StatusOr<std::vector<NamedTensor>> exported = mics->exportParameters();
  ASSERT_TRUE(exported.isOk()) << exported.status().toString();
  if (comm.rank() == 0) {
    ASSERT_EQ(exported->size(), 1u);
    EXPECT_EQ(exported->front().data, *full);
  }
  barrier();
  ASSERT_TRUE(saveCheckpoint(*mics, {dir + "/mics"}).isOk());
  mics.reset();

  // Rank 0: the shards of ranks 0 and 1 only make the whole tensor, and a
  // reshard to the world's layout keeps it.
  if (comm.rank() == 0) {
    EXPECT_EQ(consolidateW(dir + "/mics"), *full);
    ASSERT_TRUE(reshardCheckpoint(dir + "/mics", 4, 3, dir + "/world").isOk());
    EXPECT_EQ(consolidateW(dir + "/world"), *full);
    ASSERT_TRUE(verifyCheckpoint(dir + "/world").isOk());
  }
  barrier();

  // Loaded across the world, and the world's checkpoint across the node.
  plain = openShardedParam(4, dir + "/mics");
  ASSERT_TRUE(plain);
  expectShards(*plain, 4, *full, avg);
  plain.reset();
  mics = openShardedParam(2, dir + "/world");
  ASSERT_TRUE(mics);
  expectShards(*mics, 2, *full, avg);
  // And its own checkpoint, as saved.
  mics = openShardedParam(2, dir + "/mics");
  ASSERT_TRUE(mics);
  expectShards(*mics, 2, *full, avg);
  mics.reset();

  barrier();
  if (comm.rank() == 0)
    EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}

} // namespace
