//===- MpiGridTest.cpp - collectives on grids of three axes ---------------===//
//
// Run by ctest on 4 ranks (grids [2, 2] and [2, 2, 1], nodes of one rank)
// and on 8 ranks (grid [2, 2, 2]: 2 replicas of MiCS groups of 2 nodes of
// 2 ranks), every test on every rank. The groups, the in-group ranks and the
// ring's node crossings are worked out here from the rank's coordinates
// (docs/ScheduleFormat.md, "Topology" and "Collectives"), independently of
// Schedule::rankGroup. A hierarchical all-gather must give the flat
// gather's bytes, moved hop by hop (first axis first) and counted per hop,
// with or without staging and quantized; a quantized reduce-scatter hops
// over the three axes from the last.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"
#include "zero/runtime/Executor.h"

#include "MpiWorld.h"
#include "QuantizedGatherStep.h"
#include "QuantizedReduceScatterStep.h"
#include "TestSchedules.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

/// One grid and the axes of the all-gather and reduce-scatter over it
/// (empty: the whole world, without grid_axes).
struct GridCase {
  std::vector<int> grid;
  std::vector<int> axes;
};

/// The cases of this world size.
std::vector<GridCase> gridCases() {
  if (world().size() == 8)
    return {{{2, 2, 2}, {1, 2}}, {{2, 2, 2}, {}}};
  return {{{2, 2}, {}}, {{2, 2}, {0, 1}}, {{2, 2, 1}, {1, 2}}, {{2, 2, 1}, {}}};
}

std::string nameOf(const GridCase &c) {
  auto join = [](const std::vector<int> &list) {
    std::string text = "[";
    for (size_t i = 0; i < list.size(); ++i)
      text += (i ? ", " : "") + std::to_string(list[i]);
    return text + "]";
  };
  return "grid " + join(c.grid) + " axes " + join(c.axes);
}

/// Rank `r`'s coordinates, row-major over `grid`.
std::vector<int> coordinatesOf(int r, const std::vector<int> &grid) {
  std::vector<int> coordinates(grid.size());
  for (size_t axis = grid.size(); axis-- > 0;) {
    coordinates[axis] = r % grid[axis];
    r /= grid[axis];
  }
  return coordinates;
}

/// The world ranks of `r`'s group over `axes` (empty: all), in in-group
/// order: those equal to `r` on every other axis, by increasing world rank
/// (row-major over the listed axes).
std::vector<int> groupOf(int r, const std::vector<int> &grid,
                         const std::vector<int> &axes) {
  int world = 1;
  for (int size : grid)
    world *= size;
  const std::vector<int> mine = coordinatesOf(r, grid);
  std::vector<int> members;
  for (int q = 0; q < world; ++q) {
    const std::vector<int> theirs = coordinatesOf(q, grid);
    bool same = true;
    for (size_t axis = 0; axis < grid.size(); ++axis)
      if (!axes.empty() && std::find(axes.begin(), axes.end(),
                                     static_cast<int>(axis)) == axes.end())
        same &= theirs[axis] == mine[axis];
    if (same)
      members.push_back(q);
  }
  return members;
}

/// What one collective adds to a rank's counters.
struct Volume {
  int64_t sent = 0, sentAcross = 0, receivedAcross = 0;
  Volume &operator+=(const Volume &other) {
    sent += other.sent;
    sentAcross += other.sentAcross;
    receivedAcross += other.receivedAcross;
    return *this;
  }
};

/// `bytes` each way on the ring of `members` (this rank among them), split
/// by the ring rule: the node of rank q is q / L, L the grid's last axis.
Volume ringVolume(const std::vector<int> &members, int64_t bytes,
                  const std::vector<int> &grid) {
  const int n = static_cast<int>(members.size());
  const int w = world().rank();
  const int k = static_cast<int>(std::find(members.begin(), members.end(), w) -
                                 members.begin());
  auto node = [&](int q) { return q / grid.back(); };
  Volume v;
  v.sent = bytes;
  v.sentAcross = node(members[(k + 1) % n]) != node(w) ? bytes : 0;
  v.receivedAcross = node(members[(k + n - 1) % n]) != node(w) ? bytes : 0;
  return v;
}

/// An all-gather of `block` bytes per rank over `axes`, flat or hop by hop
/// (the group's axes of more than one rank, the first first; each hop a
/// ring of the bytes held before it).
Volume gatherVolume(const std::vector<int> &grid, const std::vector<int> &axes,
                    int64_t block, bool hierarchical) {
  const int w = world().rank();
  if (!hierarchical) {
    std::vector<int> members = groupOf(w, grid, axes);
    return ringVolume(members, (members.size() - 1) * block, grid);
  }
  Volume total;
  int64_t held = block;
  for (int axis = 0; axis < static_cast<int>(grid.size()); ++axis) {
    if (grid[axis] == 1 || (!axes.empty() && std::find(axes.begin(), axes.end(),
                                                       axis) == axes.end()))
      continue;
    total +=
        ringVolume(groupOf(w, grid, {axis}), (grid[axis] - 1) * held, grid);
    held *= grid[axis];
  }
  return total;
}

/// Runs makeGridBucketSchedule over `c` (the all-gather hierarchical or
/// not; the all-reduce (max) over axis 0, across the replicas) and checks
/// every result and the step's counters.
void runGridStep(const GridCase &c, bool hierarchical) {
  Communicator &comm = world();
  const int w = comm.rank();
  std::vector<int> allAxes;
  for (int axis = 0; axis < static_cast<int>(c.grid.size()); ++axis)
    allAxes.push_back(axis);
  json s = makeGridBucketSchedule(c.grid, c.axes.empty() ? allAxes : c.axes);
  json &comms = s["instructions"]["comm"];
  if (c.axes.empty()) {
    comms[0].erase("grid_axes");
    comms[1].erase("grid_axes");
  }
  comms[0]["hierarchical"] = hierarchical;
  comms[2]["grid_axes"] = {0};
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "grid.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), comm);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  Executor &executor = **created;

  const std::vector<int> members = groupOf(w, c.grid, c.axes);
  const int n = static_cast<int>(members.size());
  const int k = static_cast<int>(std::find(members.begin(), members.end(), w) -
                                 members.begin());
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
  // The full tensors as the group of world rank `r` gathers them.
  auto fullOf = [&](int r) {
    const std::vector<int> group = groupOf(r, c.grid, c.axes);
    std::vector<float> full(8);
    for (int j = 0; j < 5; ++j)
      full[j] = a(group[j / sa], j);
    for (int j = 0; j < 3; ++j)
      full[5 + j] = -a(group[j / sb], j);
    return full;
  };
  const std::vector<float> full = fullOf(w);
  const std::vector<float> fullA(full.begin(), full.begin() + 5),
      fullB(full.begin() + 5, full.end());
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
  // All-reduce (max) across the replicas: of each replica's gathered
  // tensors.
  const std::vector<int> replicas = groupOf(w, c.grid, {0});
  std::vector<float> maxima = full;
  for (int r : replicas) {
    const std::vector<float> theirs = fullOf(r);
    for (size_t j = 0; j < maxima.size(); ++j)
      maxima[j] = std::max(maxima[j], theirs[j]);
  }
  EXPECT_EQ(floats(6), std::vector<float>(maxima.begin(), maxima.begin() + 5));
  EXPECT_EQ(floats(7), std::vector<float>(maxima.begin() + 5, maxima.end()));

  // Blocks of sa + sb floats; the all-reduce of 8 floats twice (m-1)
  // chunks of 32 / m bytes over its m replicas.
  const int64_t block = (sa + sb) * 4;
  const int m = static_cast<int>(replicas.size());
  Volume expected = gatherVolume(c.grid, c.axes, block, hierarchical);
  expected += ringVolume(members, (n - 1) * block, c.grid);
  expected += ringVolume(replicas, 2 * (m - 1) * (32 / m), c.grid);
  EXPECT_EQ(stats->bytesSent, expected.sent);
  EXPECT_EQ(stats->bytesReceived, expected.sent);
  EXPECT_EQ(stats->bytesSentInterNode, expected.sentAcross);
  EXPECT_EQ(stats->bytesReceivedInterNode, expected.receivedAcross);
}

TEST(MpiGrids, RunsOnFourOrEightRanks) {
  EXPECT_TRUE(world().size() == 4 || world().size() == 8) << world().size();
}

// The ring rule per hop, written out for the cases of the format's text.
TEST(MpiGrids, CountsEachHopOfAHierarchicalGather) {
  const int w = world().rank();
  const int64_t p = 12;
  if (world().size() == 8) {
    // [2, 2, 2] over [1, 2]: P across nodes, then 2P within the node.
    Volume v = gatherVolume({2, 2, 2}, {1, 2}, p, true);
    EXPECT_EQ(v.sent, 3 * p);
    EXPECT_EQ(v.sentAcross, p);
    EXPECT_EQ(v.receivedAcross, p);
    // Flat: 3P on the ring of the group's 4 ranks, crossing once per node.
    Volume flat = gatherVolume({2, 2, 2}, {1, 2}, p, false);
    EXPECT_EQ(flat.sent, 3 * p);
    EXPECT_EQ(flat.sentAcross, w % 2 == 1 ? 3 * p : 0);
    EXPECT_EQ(flat.receivedAcross, w % 2 == 0 ? 3 * p : 0);
    return;
  }
  // [2, 2] over the world: P across, 2P within.
  Volume v = gatherVolume({2, 2}, {}, p, true);
  EXPECT_EQ(v.sent, 3 * p);
  EXPECT_EQ(v.sentAcross, p);
  // [2, 2, 1]: nodes of one rank, every hop across.
  v = gatherVolume({2, 2, 1}, {}, p, true);
  EXPECT_EQ(v.sent, 3 * p);
  EXPECT_EQ(v.sentAcross, 3 * p);
}

TEST(MpiGrids, GathersFlatAndHierarchicallyAlike) {
  for (const GridCase &c : gridCases())
    for (bool hierarchical : {false, true}) {
      SCOPED_TRACE(nameOf(c) + (hierarchical ? " hierarchical" : " flat"));
      runGridStep(c, hierarchical);
    }
}

// qwZ: the packed blocks gathered hop by hop dequantize to the flat
// gather's values (runQuantizedGatherStep checks them bit for bit against
// the quantizer), and the hops move the P-byte blocks.
TEST(MpiGrids, GathersQuantizedBlocksHierarchically) {
  // Member 0's shard of the first holds at least 2 elements, the NaN block's
  // (runQuantizedGatherStep), on 8 ranks too.
  const std::vector<int> numels = {17, 3, 12};
  const int w = world().rank();
  for (const GridCase &c : gridCases())
    for (bool hierarchical : {false, true}) {
      SCOPED_TRACE(nameOf(c) + (hierarchical ? " hierarchical" : " flat"));
      const std::vector<int> members = groupOf(w, c.grid, c.axes);
      const int n = static_cast<int>(members.size());
      const int k = static_cast<int>(
          std::find(members.begin(), members.end(), w) - members.begin());
      json s = makeQuantizedGatherSchedule(n, numels, "bf16", 3);
      s["world_size"] = world().size();
      s["topology"]["grid"] = c.grid;
      if (!c.axes.empty())
        s["instructions"]["comm"][0]["grid_axes"] = c.axes;
      s["instructions"]["comm"][0]["hierarchical"] = hierarchical;
      StepStats stats = runQuantizedGatherStep(world(), s, n, k, members[0],
                                               numels, "bf16", 3);
      std::vector<int64_t> shards;
      for (int numel : numels)
        shards.push_back((numel + n - 1) / n);
      Volume expected = gatherVolume(
          c.grid, c.axes, quantizedGatherBytes(shards, 3), hierarchical);
      EXPECT_EQ(stats.bytesSent, expected.sent);
      EXPECT_EQ(stats.bytesReceived, expected.sent);
      EXPECT_EQ(stats.bytesSentInterNode, expected.sentAcross);
      EXPECT_EQ(stats.bytesReceivedInterNode, expected.receivedAcross);
    }
}

// One tensor without padding needs no staging: the hops run in place in the
// result.
TEST(MpiGrids, GathersHierarchicallyWithoutStaging) {
  const int w = world().rank();
  for (const GridCase &c : gridCases())
    for (bool hierarchical : {false, true}) {
      SCOPED_TRACE(nameOf(c) + (hierarchical ? " hierarchical" : " flat"));
      const std::vector<int> members = groupOf(w, c.grid, c.axes);
      const int n = static_cast<int>(members.size());
      const int k = static_cast<int>(
          std::find(members.begin(), members.end(), w) - members.begin());
      // Shards of 2 floats of a tensor of 2n.
      json s = makeQuantizedGatherSchedule(n, {2 * n}, "f32", 1);
      json &gather = s["instructions"]["comm"][0];
      gather.erase("quantize");
      gather.erase("staging");
      gather["hierarchical"] = hierarchical;
      if (!c.axes.empty())
        gather["grid_axes"] = c.axes;
      s["world_size"] = world().size();
      s["topology"]["grid"] = c.grid;
      StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "one.json");
      ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
      StatusOr<std::unique_ptr<Executor>> created =
          Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                           createHostDevice(), world());
      ASSERT_TRUE(created.isOk()) << created.status().toString();
      Executor &executor = **created;
      float *shard = static_cast<float *>(executor.tensorData(0).data);
      shard[0] = 100.0f * w + 2 * k;
      shard[1] = 100.0f * w + 2 * k + 1;
      StatusOr<StepStats> stats = executor.step();
      ASSERT_TRUE(stats.isOk()) << stats.status().toString();
      const float *full =
          static_cast<const float *>(executor.tensorData(1).data);
      for (int j = 0; j < 2 * n; ++j)
        EXPECT_EQ(full[j], 100.0f * members[j / 2] + j) << "element " << j;
      Volume expected = gatherVolume(c.grid, c.axes, 8, hierarchical);
      EXPECT_EQ(stats->bytesSent, expected.sent);
      EXPECT_EQ(stats->bytesSentInterNode, expected.sentAcross);
      EXPECT_EQ(stats->bytesReceivedInterNode, expected.receivedAcross);
    }
}

// qgZ on three axes: one all-to-all per axis of more than one rank, the last
// first (a node's ranks, then the nodes of the group, then the replicas).
// A hop over axis a of n_a ranks, holding m chunks of C bytes, sends
// (n_a - 1) * m / n_a * C, across nodes unless a is the last axis.
TEST(MpiGrids, ReduceScattersQuantizedOverThreeAxes) {
  const std::vector<int> numels = {37, 12, 3};
  const int w = world().rank();
  for (const GridCase &c : gridCases()) {
    SCOPED_TRACE(nameOf(c));
    const std::vector<int> members = groupOf(w, c.grid, c.axes);
    const int n = static_cast<int>(members.size());
    const int k = static_cast<int>(
        std::find(members.begin(), members.end(), w) - members.begin());
    std::vector<int> hopAxes, axisSizes;
    for (int axis = 0; axis < static_cast<int>(c.grid.size()); ++axis)
      if (c.grid[axis] > 1 &&
          (c.axes.empty() ||
           std::find(c.axes.begin(), c.axes.end(), axis) != c.axes.end())) {
        hopAxes.push_back(axis);
        axisSizes.push_back(c.grid[axis]);
      }
    json s = makeQuantizedReduceScatterSchedule(n, numels, "bf16", 4, "sum",
                                                n / axisSizes.back());
    s["world_size"] = world().size();
    s["topology"]["grid"] = c.grid;
    if (!c.axes.empty())
      s["instructions"]["comm"][0]["grid_axes"] = c.axes;
    StepStats stats = runQuantizedReduceScatterStep(
        world(), s, axisSizes, k, members[0], numels, "bf16", 4, false);
    std::vector<int64_t> shards;
    for (int numel : numels)
      shards.push_back((numel + n - 1) / n);
    const int64_t chunk = quantizedChunkBytes(shards, 4);
    int64_t sent = 0, across = 0, held = n;
    for (size_t t = hopAxes.size(); t-- > 0;) {
      const int64_t bytes = (axisSizes[t] - 1) * held / axisSizes[t] * chunk;
      sent += bytes;
      if (hopAxes[t] + 1 < static_cast<int>(c.grid.size()))
        across += bytes;
      held /= axisSizes[t];
    }
    EXPECT_EQ(stats.bytesSent, sent);
    EXPECT_EQ(stats.bytesReceived, sent);
    EXPECT_EQ(stats.bytesSentInterNode, across);
    EXPECT_EQ(stats.bytesReceivedInterNode, across);
  }
}

// The communicator's hop itself, in place: every rank holds 2 x 2 blocks of
// 3 bytes, rows 6n bytes apart and columns 3, the ranks 6 bytes apart (n
// ranks fill two rows of 2n blocks), and gets every other rank's.
TEST(MpiGrids, GathersStridedBlocksInPlace) {
  Communicator &comm = world();
  const int n = comm.size();
  const int w = comm.rank();
  BlockGrid held;
  held.blockBytes = 3;
  held.counts = {2, 2};
  held.strides = {6 * n, 3};
  const int64_t peerStride = 6;
  std::vector<uint8_t> buffer(12 * n, 0xee);
  auto byteAt = [&](int p, int row, int col, int i) {
    return static_cast<uint8_t>(p * 16 + row * 8 + col * 4 + i);
  };
  auto offsetOf = [&](int p, int row, int col) {
    return p * peerStride + row * held.strides[0] + col * held.strides[1];
  };
  for (int row = 0; row < 2; ++row)
    for (int col = 0; col < 2; ++col)
      for (int i = 0; i < 3; ++i)
        buffer[offsetOf(w, row, col) + i] = byteAt(w, row, col, i);
  CommunicationCounters before = comm.counters();
  ASSERT_TRUE(
      comm.allGatherBlocks(buffer.data(), held, peerStride, context("blocks"))
          .isOk());
  for (int p = 0; p < n; ++p)
    for (int row = 0; row < 2; ++row)
      for (int col = 0; col < 2; ++col)
        for (int i = 0; i < 3; ++i)
          EXPECT_EQ(buffer[offsetOf(p, row, col) + i], byteAt(p, row, col, i))
              << "rank " << p << " block " << row << ", " << col;
  EXPECT_EQ(comm.counters().bytesSent - before.bytesSent, (n - 1) * 12);
}

} // namespace
