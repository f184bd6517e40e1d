//===- IntervalAllocatorTest.cpp - best fit in program order --------------===//

#include "zero/Analysis/IntervalAllocator.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

using namespace mlir::zero;

namespace {

/// No two intervals that overlap in time overlap in memory, and every offset
/// is aligned past the base. A sweep over the points: O(n log n), so that
/// large inputs can be checked too.
void expectValid(llvm::ArrayRef<LiveInterval> intervals,
                 const IntervalAllocation &allocation, int64_t alignment,
                 int64_t base) {
  ASSERT_EQ(allocation.offsets.size(), intervals.size());
  std::vector<size_t> byStart, byEnd;
  for (size_t i = 0; i < intervals.size(); ++i) {
    EXPECT_GE(allocation.offsets[i], base);
    EXPECT_EQ((allocation.offsets[i] - base) % alignment, 0)
        << "interval " << i;
    EXPECT_LE(allocation.offsets[i] + intervals[i].size, allocation.size);
    if (intervals[i].size > 0) {
      byStart.push_back(i);
      byEnd.push_back(i);
    }
  }
  std::sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) {
    return intervals[a].start < intervals[b].start;
  });
  std::sort(byEnd.begin(), byEnd.end(), [&](size_t a, size_t b) {
    return intervals[a].end < intervals[b].end;
  });
  // The live intervals by offset; they never overlap.
  std::map<int64_t, size_t> live;
  size_t nextEnd = 0;
  for (size_t i : byStart) {
    for (; nextEnd < byEnd.size() &&
           intervals[byEnd[nextEnd]].end < intervals[i].start;
         ++nextEnd)
      live.erase(allocation.offsets[byEnd[nextEnd]]);
    int64_t offset = allocation.offsets[i];
    auto next = live.lower_bound(offset);
    if (next != live.end()) {
      EXPECT_LE(offset + intervals[i].size, next->first)
          << "intervals " << i << " and " << next->second;
    }
    if (next != live.begin()) {
      auto prev = std::prev(next);
      EXPECT_LE(prev->first + intervals[prev->second].size, offset)
          << "intervals " << prev->second << " and " << i;
    }
    live[offset] = i;
  }
}

TEST(IntervalAllocator, Empty) {
  IntervalAllocation allocation = allocateIntervals({}, 64, 128);
  EXPECT_TRUE(allocation.offsets.empty());
  EXPECT_EQ(allocation.size, 128);
  EXPECT_EQ(getMaxLiveBytes({}), 0);
}

TEST(IntervalAllocator, DisjointLifetimesShareMemory) {
  // a [0,1] and b [2,3] never live together: both at offset 0.
  LiveInterval intervals[] = {{100, 0, 1}, {100, 2, 3}};
  IntervalAllocation allocation = allocateIntervals(intervals);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[1], 0);
  EXPECT_EQ(allocation.size, 100);
}

TEST(IntervalAllocator, EndpointsAreInclusive) {
  // b starts at the point where a is last used: they overlap.
  LiveInterval intervals[] = {{100, 0, 2}, {100, 2, 3}};
  IntervalAllocation allocation = allocateIntervals(intervals);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[1], 100);
  EXPECT_EQ(allocation.size, 200);
}

TEST(IntervalAllocator, ProgramOrderThenLargestFirst) {
  // Placed when they start: "early" (point 0) takes the bottom although it
  // is the smallest. "small" and "big" start together: "big" goes first.
  LiveInterval intervals[] = {
      {100, 0, 9},  // 0: early
      {200, 1, 9},  // 1: small
      {1000, 1, 9}, // 2: big
  };
  IntervalAllocation allocation = allocateIntervals(intervals);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[2], 100);
  EXPECT_EQ(allocation.offsets[1], 1100);
  EXPECT_EQ(allocation.size, 1300);
  expectValid(intervals, allocation, 1, 0);
}

TEST(IntervalAllocator, ReusesTheMemoryOfDeadIntervals) {
  // 4 [5,5] starts after 0 [0,1] is freed: it goes into 0's place, at its
  // top, next to 1 (freed at 9): what lies below the base lives to the end
  // of the step (10), farther from 4's end.
  LiveInterval intervals[] = {
      {400, 0, 1}, // 0
      {100, 0, 9}, // 1
      {100, 0, 9}, // 2
      {100, 0, 9}, // 3
      {100, 5, 5}, // 4
  };
  IntervalAllocation allocation = allocateIntervals(intervals);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[1], 400);
  EXPECT_EQ(allocation.offsets[2], 500);
  EXPECT_EQ(allocation.offsets[3], 600);
  EXPECT_EQ(allocation.offsets[4], 300);
  EXPECT_EQ(allocation.size, 700);
  expectValid(intervals, allocation, 1, 0);
}

TEST(IntervalAllocator, PicksTheSmallestGap) {
  // At point 5, 1 and 3 are freed, leaving holes [400,700) (300 bytes) and
  // [900,1050) (150 bytes); 5 takes the smaller one, not the first.
  LiveInterval intervals[] = {
      {400, 0, 9}, // 0: [0,400)
      {300, 0, 1}, // 1: [400,700)
      {200, 0, 9}, // 2: [700,900)
      {150, 0, 1}, // 3: [900,1050)
      {130, 0, 9}, // 4: [1050,1180)
      {120, 5, 5}, // 5
  };
  IntervalAllocation allocation = allocateIntervals(intervals);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[1], 400);
  EXPECT_EQ(allocation.offsets[2], 700);
  EXPECT_EQ(allocation.offsets[3], 900);
  EXPECT_EQ(allocation.offsets[4], 1050);
  EXPECT_EQ(allocation.offsets[5], 900);
  EXPECT_EQ(allocation.size, 1180);
  expectValid(intervals, allocation, 1, 0);
}

TEST(IntervalAllocator, FreedNeighboursMerge) {
  // 0 and 1 die at point 1; their 200 bytes form one hole below 2, which
  // holds 3 (150 bytes, larger than either of them), at its top, next to 2.
  LiveInterval intervals[] = {
      {100, 0, 1}, // 0: [0,100)
      {100, 0, 1}, // 1: [100,200)
      {50, 0, 9},  // 2: [200,250)
      {150, 2, 3}, // 3
  };
  IntervalAllocation allocation = allocateIntervals(intervals);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[1], 100);
  EXPECT_EQ(allocation.offsets[2], 200);
  EXPECT_EQ(allocation.offsets[3], 50);
  EXPECT_EQ(allocation.size, 250);
  expectValid(intervals, allocation, 1, 0);
}

TEST(IntervalAllocator, NextToTheNeighbourFreedClosestInTime) {
  // At point 2, 1 leaves the hole [100,200) between 0 (freed after 3) and 2
  // (after 20). 3 lives to 20: it goes to the top of the hole, next to 2; 4
  // lives to 3: to the bottom, next to 0. When 0 and 4 are freed, their bytes
  // and the rest of the hole form one block of 190 bytes, which holds 5;
  // placed both at the bottom, 3 would have cut it in two.
  LiveInterval intervals[] = {
      {100, 0, 3},  // 0: [0,100)
      {100, 0, 1},  // 1: [100,200)
      {100, 0, 20}, // 2: [200,300)
      {10, 2, 20},  // 3
      {10, 2, 3},   // 4
      {190, 4, 5},  // 5
  };
  IntervalAllocation allocation = allocateIntervals(intervals);
  EXPECT_EQ(allocation.offsets[3], 190);
  EXPECT_EQ(allocation.offsets[4], 100);
  EXPECT_EQ(allocation.offsets[5], 0);
  EXPECT_EQ(allocation.size, 300);
  expectValid(intervals, allocation, 1, 0);
}

TEST(IntervalAllocator, FreeSpaceAtTheTopIsReused) {
  // 1, the highest, dies at point 1: 2 starts where 1 started and grows the
  // arena by only what it needs beyond it.
  LiveInterval intervals[] = {
      {100, 0, 9}, // 0: [0,100)
      {300, 1, 1}, // 1: [100,400)
      {400, 2, 3}, // 2
  };
  IntervalAllocation allocation = allocateIntervals(intervals);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[1], 100);
  EXPECT_EQ(allocation.offsets[2], 100);
  EXPECT_EQ(allocation.size, 500);
  expectValid(intervals, allocation, 1, 0);
}

TEST(IntervalAllocator, AlignmentAndBase) {
  // Point 0: 0 at the base, 1 at the next multiple of 64 past 0's end (138).
  // Point 1: the 54 bytes between them hold nothing aligned; 2 goes on top.
  LiveInterval intervals[] = {{10, 0, 5}, {10, 0, 5}, {70, 1, 2}};
  IntervalAllocation allocation = allocateIntervals(intervals, 64, 128);
  EXPECT_EQ(allocation.offsets[0], 128);
  EXPECT_EQ(allocation.offsets[1], 192);
  EXPECT_EQ(allocation.offsets[2], 256);
  EXPECT_EQ(allocation.size, 326);
  expectValid(intervals, allocation, 64, 128);
  EXPECT_EQ(alignTo(0, 64), 0);
  EXPECT_EQ(alignTo(1, 64), 64);
  EXPECT_EQ(alignTo(64, 64), 64);
}

TEST(IntervalAllocator, HolesCountTheirAlignedBytes) {
  // With 64-byte alignment: 0 [0,10); at point 1, 1 [64,164) and 2 at the
  // next multiple of 64, [192,202). 1 dies at point 2 and merges with the
  // free bytes around it: the hole [10,192) has 182 bytes, but only 128 from
  // its first aligned offset, 64. 3 (130 bytes) does not fit there and goes
  // on top; 4 (128 bytes) does.
  LiveInterval intervals[] = {
      {10, 0, 9},  // 0
      {100, 1, 2}, // 1
      {10, 1, 9},  // 2
      {130, 3, 4}, // 3
      {128, 5, 6}, // 4
  };
  IntervalAllocation allocation = allocateIntervals(intervals, 64, 0);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[1], 64);
  EXPECT_EQ(allocation.offsets[2], 192);
  EXPECT_EQ(allocation.offsets[3], 256);
  EXPECT_EQ(allocation.offsets[4], 64);
  EXPECT_EQ(allocation.size, 386);
  expectValid(intervals, allocation, 64, 0);
}

TEST(IntervalAllocator, EmptyIntervalsTakeNoSpace) {
  LiveInterval intervals[] = {{0, 0, 9}, {8, 0, 9}};
  IntervalAllocation allocation = allocateIntervals(intervals, 8, 0);
  EXPECT_EQ(allocation.offsets[0], 0);
  EXPECT_EQ(allocation.offsets[1], 0);
  EXPECT_EQ(allocation.size, 8);
}

/// 500 pseudo-random intervals of up to 4096 bytes over 230 points.
llvm::SmallVector<LiveInterval> makeRandomIntervals(uint64_t seed) {
  llvm::SmallVector<LiveInterval> intervals;
  uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int i = 0; i < 500; ++i) {
    int64_t start = next() % 200;
    intervals.push_back({static_cast<int64_t>(1 + next() % 4096), start,
                         start + static_cast<int64_t>(next() % 30)});
  }
  return intervals;
}

TEST(IntervalAllocator, DeterministicAndValidOnManyIntervals) {
  // A pseudo-random mix; the result must be valid, reproducible, and within
  // a small factor of the lower bound.
  llvm::SmallVector<LiveInterval> intervals = makeRandomIntervals(12345);
  IntervalAllocation first = allocateIntervals(intervals, 16, 0);
  IntervalAllocation second = allocateIntervals(intervals, 16, 0);
  EXPECT_EQ(first.offsets, second.offsets);
  expectValid(intervals, first, 16, 0);
  int64_t lowerBound = getMaxLiveBytes(intervals);
  EXPECT_GE(first.size, lowerBound);
  EXPECT_LE(first.size, lowerBound * 3 / 2);
}

TEST(IntervalAllocator, DeepTrainingStepPacksExactly) {
  // A training step of 20000 layers: layer i saves an activation from its
  // forward point to its backward point, and uses a temporary at each. Every
  // saved activation overlaps all those of the deeper layers (200 million
  // overlapping pairs): an allocator that compares an interval with the
  // ones it overlaps would be quadratic. Saved activations stack up from
  // the base in forward order and temporaries sit on top, so the arena is
  // exactly the largest number of bytes live at one point.
  constexpr int64_t kLayers = 20000;
  const int64_t lastPoint = 4 * kLayers;
  llvm::SmallVector<LiveInterval> intervals;
  for (int64_t i = 0; i < kLayers; ++i) {
    int64_t saved = 64 * (1 + i % 7);
    intervals.push_back({saved, 2 * i, lastPoint - 2 * i});
    intervals.push_back({4096, 2 * i + 1, 2 * i + 1});
    intervals.push_back({4096, lastPoint - 2 * i - 1, lastPoint - 2 * i - 1});
  }
  IntervalAllocation allocation = allocateIntervals(intervals, 64, 0);
  expectValid(intervals, allocation, 64, 0);
  EXPECT_EQ(allocation.size, getMaxLiveBytes(intervals));
}

TEST(IntervalAllocator, LargestFirstPlacesTheBiggestLowest) {
  // In program order the small buffer takes the bottom, the first big one
  // goes above it, and the second big one finds the small one's hole too
  // small: 64 + 256 + 256. Largest first puts the big ones side by side at
  // the bottom and the small one above the first: the largest number of
  // bytes live at once, 512.
  llvm::SmallVector<LiveInterval> intervals = {
      {64, 0, 1},   // small, first in program order
      {256, 1, 4},  // big, overlaps the small one
      {256, 3, 6}}; // big, overlaps the first big one only
  IntervalAllocation inOrder = allocateIntervals(intervals, 64, 0);
  IntervalAllocation largestFirst =
      allocateIntervals(intervals, 64, 0, Placement::LargestFirst);
  expectValid(intervals, inOrder, 64, 0);
  expectValid(intervals, largestFirst, 64, 0);
  EXPECT_EQ(inOrder.offsets, (llvm::SmallVector<int64_t>{0, 64, 320}));
  EXPECT_EQ(inOrder.size, 576);
  EXPECT_EQ(largestFirst.offsets, (llvm::SmallVector<int64_t>{256, 0, 256}));
  EXPECT_EQ(largestFirst.size, 512);
  EXPECT_EQ(largestFirst.size, getMaxLiveBytes(intervals));
}

TEST(IntervalAllocator, LargestFirstIsValidOnManyIntervals) {
  llvm::SmallVector<LiveInterval> intervals = makeRandomIntervals(6789);
  IntervalAllocation first =
      allocateIntervals(intervals, 16, 128, Placement::LargestFirst);
  IntervalAllocation second =
      allocateIntervals(intervals, 16, 128, Placement::LargestFirst);
  EXPECT_EQ(first.offsets, second.offsets);
  expectValid(intervals, first, 16, 128);
  EXPECT_GE(first.size, getMaxLiveBytes(intervals) + 128);
}

} // namespace
