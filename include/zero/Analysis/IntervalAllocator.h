//===- IntervalAllocator.h - static offsets for live intervals --*- C++ -*-===//
//
// Assigns byte offsets to buffers whose lifetimes are known in advance, so
// that two buffers that are live at the same time never overlap in memory.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_INTERVALALLOCATOR_H
#define ZERO_ANALYSIS_INTERVALALLOCATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir {
namespace zero {

/// A buffer of `size` bytes live from program point `start` to `end`, both
/// included.
struct LiveInterval {
  int64_t size;
  int64_t start;
  int64_t end;

  bool overlaps(const LiveInterval &other) const {
    return start <= other.end && other.start <= end;
  }
};

struct IntervalAllocation {
  /// One offset per interval, in input order.
  llvm::SmallVector<int64_t> offsets;
  /// The end of the highest interval, or `base` if there is none.
  int64_t size = 0;
};

/// How allocateIntervals places the intervals.
enum class Placement {
  /// Best fit in program order (below): O(n log n).
  InProgramOrder,
  /// Largest first over the whole step: each interval at the lowest aligned
  /// offset of the smallest gap, between the placed intervals that overlap
  /// it in time, that holds it (ties: the earlier start first), else above
  /// them. Quadratic in the number of intervals that overlap; often fewer
  /// bytes of holes where a few huge intervals live among many small ones.
  LargestFirst,
};

/// Best fit in program order: a heap simulated from the first point to the
/// last. At each point, the intervals that ended before it are freed (merged
/// with free neighbours), then those starting there are placed, largest
/// first (ties: input order). Each goes into the free block with the fewest
/// bytes at an aligned offset that holds it (the lowest block on ties), at
/// the block's top if the live interval just above it ends closer in time to
/// its own end than the one just below (what lies below `base` counts as
/// living to the end of the step), else at the block's first aligned offset;
/// if no block holds it, above the highest live interval. Offsets are at
/// least `base` (>= 0) and multiples of `alignment` (a power of two).
/// O(n log n) in the number of intervals, independent of how many overlap.
/// Deterministic: the result depends only on the input. Empty intervals get
/// `base` and occupy nothing.
/// With Placement::LargestFirst, as said there.
IntervalAllocation
allocateIntervals(llvm::ArrayRef<LiveInterval> intervals, int64_t alignment = 1,
                  int64_t base = 0,
                  Placement placement = Placement::InProgramOrder);

/// The largest number of bytes live at one point: a lower bound of any
/// allocation's size above its base.
int64_t getMaxLiveBytes(llvm::ArrayRef<LiveInterval> intervals);

/// `value` rounded up to a multiple of `alignment` (a power of two).
inline int64_t alignTo(int64_t value, int64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

} // namespace zero
} // namespace mlir

#endif // ZERO_ANALYSIS_INTERVALALLOCATOR_H
