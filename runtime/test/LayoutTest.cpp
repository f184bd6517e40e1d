//===- LayoutTest.cpp - the partition layout ------------------------------===//
//
// Expected ranges are written out, not computed with the layout's formula.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Layout.h"

#include <gtest/gtest.h>

using namespace zero::runtime;

TEST(PartitionLayout, PadsToAMultipleOfTheWorldSizeByDefault) {
  StatusOr<PartitionLayout> layout = PartitionLayout::create({2, 5}, 4);
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(layout->numel, 10);
  EXPECT_EQ(layout->shardNumel, 3);
  EXPECT_EQ(layout->paddedNumel, 12);
  EXPECT_EQ(layout->ownedRange(0), (ElementRange{0, 3}));
  EXPECT_EQ(layout->ownedRange(2), (ElementRange{6, 9}));
  // The last rank holds one element and two of padding.
  EXPECT_EQ(layout->ownedRange(3), (ElementRange{9, 10}));
  EXPECT_EQ(layout->shardBegin(3), 9);
}

TEST(PartitionLayout, RanksBeyondTheElementsOwnNothing) {
  StatusOr<PartitionLayout> layout = PartitionLayout::create({3}, 8);
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(layout->shardNumel, 1);
  EXPECT_EQ(layout->paddedNumel, 8);
  EXPECT_EQ(layout->ownedRange(2), (ElementRange{2, 3}));
  EXPECT_EQ(layout->ownedRange(3).size(), 0);
  EXPECT_EQ(layout->ownedRange(7).size(), 0);
}

// The dialect's `#zero.layout<shape = [10], world_size = 4, padded_numel =
// 16>` (stage 1/2 alignment): shards of 4, the last rank holds 2 elements.
TEST(PartitionLayout, CarriesPaddingBeyondTheMinimum) {
  StatusOr<PartitionLayout> layout = PartitionLayout::create({10}, 4, 16);
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(layout->shardNumel, 4);
  EXPECT_EQ(layout->ownedRange(0), (ElementRange{0, 4}));
  EXPECT_EQ(layout->ownedRange(1), (ElementRange{4, 8}));
  EXPECT_EQ(layout->ownedRange(2), (ElementRange{8, 10}));
  EXPECT_EQ(layout->ownedRange(3).size(), 0);
}

// A layout of 2 ranks on 6 (MiCS: one node's ranks, replicated across 3
// nodes): rank r holds shard r % 2, its padding included.
TEST(PartitionLayout, RanksBeyondItsWorldSizeHoldTheShardOfRankModuloIt) {
  StatusOr<PartitionLayout> layout = PartitionLayout::create({5}, 2);
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(layout->shardNumel, 3);
  EXPECT_EQ(layout->paddedNumel, 6);
  for (int64_t rank : {0, 2, 4}) {
    EXPECT_EQ(layout->shardOf(rank), 0) << "rank " << rank;
    EXPECT_EQ(layout->shardBegin(rank), 0) << "rank " << rank;
    EXPECT_EQ(layout->ownedRange(rank), (ElementRange{0, 3}))
        << "rank " << rank;
  }
  for (int64_t rank : {1, 3, 5}) {
    EXPECT_EQ(layout->shardOf(rank), 1) << "rank " << rank;
    EXPECT_EQ(layout->shardBegin(rank), 3) << "rank " << rank;
    // Two elements and one of padding.
    EXPECT_EQ(layout->ownedRange(rank), (ElementRange{3, 5}))
        << "rank " << rank;
  }
  EXPECT_TRUE(layout->fitsRanks(2));
  EXPECT_TRUE(layout->fitsRanks(6));
  EXPECT_FALSE(layout->fitsRanks(1));
  EXPECT_FALSE(layout->fitsRanks(3));
}

TEST(PartitionLayout, EmptyTensors) {
  StatusOr<PartitionLayout> layout = PartitionLayout::create({0, 7}, 2);
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(layout->numel, 0);
  EXPECT_EQ(layout->shardNumel, 0);
  EXPECT_EQ(layout->ownedRange(1).size(), 0);
}

TEST(PartitionLayout, RefusesWhatTheDialectRefuses) {
  auto message = [](std::vector<int64_t> shape, int64_t worldSize,
                    int64_t padded) {
    StatusOr<PartitionLayout> layout =
        PartitionLayout::create(std::move(shape), worldSize, padded);
    EXPECT_FALSE(layout.isOk());
    return layout.isOk() ? std::string() : layout.status().message();
  };
  EXPECT_EQ(message({10}, 0, -1), "world_size must be at least 1, got 0");
  EXPECT_EQ(message({10}, 4, 8),
            "padded_numel 8 is smaller than the element count 10");
  EXPECT_EQ(message({10}, 4, 14),
            "padded_numel 14 is not a multiple of world_size 4");
  EXPECT_EQ(message({-2}, 1, -1), "shape has a negative size -2");
}
