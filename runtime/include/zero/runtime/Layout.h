//===- Layout.h - how a tensor is cut across ranks --------------*- C++ -*-===//
//
// The one partition layout of the runtime, `#zero.layout` of the dialect
// (docs/Dialect.md, "Layouts"): a tensor flattened in row-major order, padded
// with zeros at the end to `paddedNumel` elements (a multiple of the world
// size, at least the element count) and cut into `worldSize` equal shards
// across each group of `worldSize` consecutive ranks, replicated across the
// groups: rank r holds shard r % worldSize, elements [s * shardNumel,
// (s + 1) * shardNumel) of the padded flat tensor for s = r % worldSize. For
// a layout of the world (or of a collective's group, given the in-group rank)
// that is shard r; a layout of one node's ranks (MiCS) is replicated across
// the nodes. The schedule's decoder makes one for every parameter and every
// operand of a collective; nothing else computes which range a rank owns.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LAYOUT_H
#define ZERO_RUNTIME_LAYOUT_H

#include "zero/runtime/Status.h"

#include <cstdint>
#include <vector>

namespace zero::runtime {

/// A half-open range of elements [begin, end).
struct ElementRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end > begin ? end - begin : 0; }
  bool operator==(const ElementRange &other) const {
    return begin == other.begin && end == other.end;
  }
};

struct PartitionLayout {
  std::vector<int64_t> shape;
  int64_t numel = 0;
  int64_t worldSize = 1;
  int64_t shardNumel = 0;  // paddedNumel / worldSize
  int64_t paddedNumel = 0; // a multiple of worldSize, >= numel

  /// The layout of a tensor of `shape` on `worldSize` ranks, padded to
  /// `paddedNumel` elements, or to the least multiple of the world size
  /// when it is negative (the stage-3 default). Errors name what is wrong
  /// (the caller adds where).
  static StatusOr<PartitionLayout> create(std::vector<int64_t> shape,
                                          int64_t worldSize,
                                          int64_t paddedNumel = -1);

  /// The compiler's padding of a parameter (zero-partition, and the
  /// dialect's default): `numel` rounded up to a multiple of `worldSize`.
  /// Needs numel >= 0 and worldSize >= 1; no overflow below 2^62.
  static int64_t getDefaultPaddedNumel(int64_t numel, int64_t worldSize) {
    // Without numel + worldSize - 1, which a huge world size overflows: the
    // product is worldSize if that is at least numel, else below 2 * numel.
    return (numel / worldSize + (numel % worldSize != 0)) * worldSize;
  }

  /// The shard that `rank` holds: rank % worldSize.
  int64_t shardOf(int64_t rank) const { return rank % worldSize; }
  /// The elements of the unpadded flat tensor that `rank` holds; empty for
  /// a rank whose whole shard is padding.
  ElementRange ownedRange(int64_t rank) const;
  /// Where `rank`'s shard starts in the padded flat tensor.
  int64_t shardBegin(int64_t rank) const { return shardOf(rank) * shardNumel; }
  /// Whether a run of `ranks` ranks holds whole copies of the layout: a
  /// multiple of its world size.
  bool fitsRanks(int64_t ranks) const {
    return ranks >= worldSize && ranks % worldSize == 0;
  }

  bool operator==(const PartitionLayout &other) const {
    return shape == other.shape && worldSize == other.worldSize &&
           paddedNumel == other.paddedNumel;
  }
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_LAYOUT_H
