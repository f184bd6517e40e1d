//===- RingCrossingTest.cpp - which ring neighbours are on other nodes ----===//
//
// getRingCrossing on one node, on nodes of several ranks and of one rank, for
// the world, the ranks of a node and the ranks of one local rank.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/CommunicationVolume.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::zero;

namespace {

/// "sr" per rank: s where it sends across, r where it receives across.
std::string describe(ArrayRef<int64_t> grid, ArrayRef<int16_t> axes) {
  int64_t ranks = 1;
  for (int64_t size : grid)
    ranks *= size;
  std::string text;
  for (int64_t rank = 0; rank < ranks; ++rank) {
    RingCrossing crossing = getRingCrossing(grid, axes, rank);
    text += crossing.sendsAcross ? "s" : "-";
    text += crossing.receivesAcross ? "r" : "-";
    text += rank + 1 < ranks ? " " : "";
  }
  return text;
}

TEST(RingCrossing, OneNodeKeepsEveryByte) {
  EXPECT_EQ(describe({4}, {}), "-- -- -- --");
  EXPECT_EQ(describe({4}, {0}), "-- -- -- --");
}

TEST(RingCrossing, TheWorldRingCrossesAtTheNodeEdges) {
  // 2 nodes of 4: rank 3 sends to rank 4, rank 7 to rank 0.
  EXPECT_EQ(describe({2, 4}, {}), "-r -- -- s- -r -- -- s-");
  EXPECT_EQ(describe({2, 4}, {0, 1}), describe({2, 4}, {}));
}

TEST(RingCrossing, GroupsInsideANodeAndAcrossNodes) {
  // The ranks of a node: {0..3}, {4..7}.
  EXPECT_EQ(describe({2, 4}, {1}), "-- -- -- -- -- -- -- --");
  // One local rank on every node: {0, 4}, {1, 5}, ...
  EXPECT_EQ(describe({2, 4}, {0}), "sr sr sr sr sr sr sr sr");
}

TEST(RingCrossing, OneRankPerNode) {
  EXPECT_EQ(describe({3, 1}, {}), "sr sr sr");
  EXPECT_EQ(describe({3, 1}, {1}), "-- -- --");
}

} // namespace
