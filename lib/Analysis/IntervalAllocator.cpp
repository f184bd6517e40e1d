//===- IntervalAllocator.cpp - static offsets for live intervals ----------===//
//
// Best fit in program order: a heap simulated over the program, its free
// space indexed by size. Each interval is placed when it starts and freed
// after it ends, so it is never compared with the other live intervals: the
// cost is O(n log n) however many overlap it (a saved activation overlaps
// every layer between its forward and its backward use).
//
// Largest first over the whole step compares each interval with every
// placed one that overlaps it, which costs more on deep steps but leaves
// fewer holes between a few huge buffers (attention scores) and many small
// ones: the memory plan takes it where program order exceeds a budget.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/IntervalAllocator.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <vector>

using namespace mlir;
using llvm::ArrayRef;
using llvm::MutableArrayRef;
using llvm::SmallVector;
using namespace mlir::zero;

namespace {
/// The arena at one program point: the live intervals by offset, the maximal
/// free blocks between them, and `top`, above which everything is free.
class Arena {
public:
  Arena(ArrayRef<LiveInterval> intervals, MutableArrayRef<int64_t> offsets,
        int64_t alignment, int64_t base)
      : intervals(intervals), offsets(offsets), alignment(alignment),
        top(base) {
    // What lies below the base (the residents) lives through the whole step.
    for (const LiveInterval &interval : intervals)
      stepEnd = std::max(stepEnd, interval.end + 1);
  }

  /// Places interval `i` and returns its offset.
  int64_t place(unsigned i) {
    const LiveInterval &interval = intervals[i];
    int64_t offset;
    auto fit = bySize.lower_bound({interval.size, 0});
    if (fit == bySize.end()) {
      offset = alignTo(top, alignment);
      addBlock(top, offset);
      top = offset + interval.size;
    } else {
      auto block = blocks.find(fit->second);
      int64_t start = block->first, end = block->second;
      removeBlock(block);
      offset = alignTo(start, alignment);
      // Next to the neighbour that is freed closer to when this interval
      // is: the hole they leave then merges with the free space beside it
      // instead of being cut in two.
      auto above = live.find(end);
      if (above != live.end() &&
          distance(intervals[above->second].end, interval.end) <
              distance(getEndBelow(start), interval.end))
        offset = (end - interval.size) & ~(alignment - 1);
      addBlock(start, offset);
      addBlock(offset + interval.size, end);
    }
    offsets[i] = offset;
    live[offset] = i;
    return offset;
  }

  /// Frees interval `i`, merging its bytes with free neighbours.
  void release(unsigned i) {
    int64_t start = offsets[i], end = start + intervals[i].size;
    live.erase(start);
    auto next = blocks.lower_bound(start);
    if (next != blocks.end() && next->first == end) {
      end = next->second;
      next = removeBlock(next);
    }
    if (next != blocks.begin()) {
      auto prev = std::prev(next);
      if (prev->second == start) {
        start = prev->first;
        removeBlock(prev);
      }
    }
    if (end == top)
      top = start;
    else
      addBlock(start, end);
  }

private:
  using BlockMap = std::map<int64_t, int64_t>;

  static int64_t distance(int64_t a, int64_t b) {
    return a > b ? a - b : b - a;
  }

  /// The last point of the live interval that ends where a free block starts
  /// at `start`; the whole step for the base.
  int64_t getEndBelow(int64_t start) const {
    auto below = live.lower_bound(start);
    if (below == live.begin())
      return stepEnd;
    return intervals[std::prev(below)->second].end;
  }

  /// Bytes of [start, end) usable from its first aligned offset.
  int64_t getUsable(int64_t start, int64_t end) const {
    return end - alignTo(start, alignment);
  }
  void addBlock(int64_t start, int64_t end) {
    if (start >= end)
      return;
    blocks[start] = end;
    if (getUsable(start, end) > 0)
      bySize.insert({getUsable(start, end), start});
  }
  BlockMap::iterator removeBlock(BlockMap::iterator block) {
    if (getUsable(block->first, block->second) > 0)
      bySize.erase({getUsable(block->first, block->second), block->first});
    return blocks.erase(block);
  }

  ArrayRef<LiveInterval> intervals;
  MutableArrayRef<int64_t> offsets;
  int64_t alignment;
  int64_t top;
  int64_t stepEnd = 0;
  /// Live intervals by offset.
  std::map<int64_t, unsigned> live;
  /// Free blocks below `top`, start -> end; never adjacent to each other or
  /// to `top`.
  BlockMap blocks;
  /// The same blocks by (usable bytes, start).
  std::set<std::pair<int64_t, int64_t>> bySize;
};
} // namespace

/// The intervals that take memory, in the order `before` places them (ties
/// keep input order).
template <typename Before>
static SmallVector<unsigned> getPlacementOrder(ArrayRef<LiveInterval> intervals,
                                               Before before) {
  SmallVector<unsigned> order;
  for (auto [i, interval] : llvm::enumerate(intervals))
    if (interval.size > 0)
      order.push_back(i);
  llvm::stable_sort(order, before);
  return order;
}

/// Placement::LargestFirst. The placed intervals are indexed by chunks of
/// program points, so that each is compared only with those live near it.
static IntervalAllocation allocateLargestFirst(ArrayRef<LiveInterval> intervals,
                                               int64_t alignment,
                                               int64_t base) {
  IntervalAllocation result = {SmallVector<int64_t>(intervals.size(), base),
                               base};
  SmallVector<unsigned> order =
      getPlacementOrder(intervals, [&](unsigned a, unsigned b) {
        if (intervals[a].size != intervals[b].size)
          return intervals[a].size > intervals[b].size;
        return intervals[a].start < intervals[b].start;
      });
  if (order.empty())
    return result;

  constexpr int64_t kChunk = 64;
  int64_t firstPoint = std::numeric_limits<int64_t>::max(), lastPoint = 0;
  for (unsigned i : order) {
    firstPoint = std::min(firstPoint, intervals[i].start);
    lastPoint = std::max(lastPoint, intervals[i].end);
  }
  auto chunkOf = [&](int64_t point) { return (point - firstPoint) / kChunk; };
  std::vector<SmallVector<unsigned>> chunks(chunkOf(lastPoint) + 1);
  // Placement order breaks ties between equal offsets.
  std::vector<unsigned> placedRank(intervals.size(), 0);
  std::vector<unsigned> seenStamp(intervals.size(), 0);
  unsigned placedCount = 0, stamp = 0;
  SmallVector<unsigned> conflicts;
  for (unsigned i : order) {
    const LiveInterval &interval = intervals[i];
    ++stamp;
    conflicts.clear();
    for (int64_t c = chunkOf(interval.start), e = chunkOf(interval.end); c <= e;
         ++c)
      for (unsigned j : chunks[c])
        if (seenStamp[j] != stamp) {
          seenStamp[j] = stamp;
          if (intervals[j].overlaps(interval))
            conflicts.push_back(j);
        }
    llvm::sort(conflicts, [&](unsigned a, unsigned b) {
      if (result.offsets[a] != result.offsets[b])
        return result.offsets[a] < result.offsets[b];
      return placedRank[a] < placedRank[b];
    });
    int64_t bestOffset = -1;
    int64_t bestGap = std::numeric_limits<int64_t>::max();
    int64_t cursor = base;
    for (unsigned j : conflicts) {
      int64_t offset = result.offsets[j];
      int64_t candidate = alignTo(cursor, alignment);
      int64_t gap = offset - candidate;
      if (gap >= interval.size && gap < bestGap) {
        bestGap = gap;
        bestOffset = candidate;
      }
      cursor = std::max(cursor, offset + intervals[j].size);
    }
    if (bestOffset < 0)
      bestOffset = alignTo(cursor, alignment);
    result.offsets[i] = bestOffset;
    result.size = std::max(result.size, bestOffset + interval.size);
    placedRank[i] = placedCount++;
    for (int64_t c = chunkOf(interval.start), e = chunkOf(interval.end); c <= e;
         ++c)
      chunks[c].push_back(i);
  }
  return result;
}

/// Best fit in program order (Placement::InProgramOrder).
static IntervalAllocation
allocateInProgramOrder(ArrayRef<LiveInterval> intervals, int64_t alignment,
                       int64_t base) {
  IntervalAllocation result = {SmallVector<int64_t>(intervals.size(), base),
                               base};

  // In program order; the largest first among those starting together.
  SmallVector<unsigned> order =
      getPlacementOrder(intervals, [&](unsigned a, unsigned b) {
        if (intervals[a].start != intervals[b].start)
          return intervals[a].start < intervals[b].start;
        if (intervals[a].size != intervals[b].size)
          return intervals[a].size > intervals[b].size;
        return a < b;
      });

  Arena arena(intervals, result.offsets, alignment, base);
  // The placed intervals not yet freed, earliest end first. The order of the
  // frees before one point does not matter: the merged free blocks are the
  // same in any order.
  using Placed = std::pair<int64_t, unsigned>;
  std::priority_queue<Placed, std::vector<Placed>, std::greater<Placed>> live;
  for (unsigned i : order) {
    const LiveInterval &interval = intervals[i];
    while (!live.empty() && live.top().first < interval.start) {
      arena.release(live.top().second);
      live.pop();
    }
    int64_t offset = arena.place(i);
    result.size = std::max(result.size, offset + interval.size);
    live.push({interval.end, i});
  }
  return result;
}

IntervalAllocation zero::allocateIntervals(ArrayRef<LiveInterval> intervals,
                                           int64_t alignment, int64_t base,
                                           Placement placement) {
  assert(alignment > 0 && (alignment & (alignment - 1)) == 0 &&
         "alignment must be a power of two");
  assert(base >= 0 && "the base must not be negative");
  return placement == Placement::LargestFirst
             ? allocateLargestFirst(intervals, alignment, base)
             : allocateInProgramOrder(intervals, alignment, base);
}

int64_t zero::getMaxLiveBytes(ArrayRef<LiveInterval> intervals) {
  // Sweep: +size at start, -size after end.
  std::map<int64_t, int64_t> delta;
  for (const LiveInterval &interval : intervals) {
    if (interval.size <= 0)
      continue;
    delta[interval.start] += interval.size;
    delta[interval.end + 1] -= interval.size;
  }
  int64_t live = 0, maxLive = 0;
  for (auto [point, change] : delta) {
    live += change;
    maxLive = std::max(maxLive, live);
  }
  return maxLive;
}
