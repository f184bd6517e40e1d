//===- CopyShape.h - the one plan of a strided copy -------------*- C++ -*-===//
//
// transpose, broadcast (stride 0), copy, the static slices, the reshapes
// that copy, and zero.local_shard are all "for each index i of a shape,
// dst[i . ds] = src[i . ss]" over elements of one width. Every backend first
// simplifies such a copy the same way, here: unit dimensions dropped and
// dimensions contiguous on both sides merged, so that most copies end up of
// rank 1 or 2; then it picks its way by the kind below (host/Copy.cpp,
// cuda/DataMovement.cu; the cost model prices the CUDA way). The ops'
// strides and offsets are described here too, once for every backend.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_COPYSHAPE_H
#define ZERO_RUNTIME_OPS_COPYSHAPE_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zero::runtime::ops {

/// A data movement op as one strided copy: for each index i of `shape`,
/// result[dstOffset + i . dstStrides] = source[srcOffset + i . srcStrides],
/// in elements of `width` bytes, after the result takes a copy of `dest`
/// (insert_slice's destination) where it has one.
struct StridedCopy {
  int64_t source = -1;
  int64_t result = -1;
  int64_t dest = -1; // -1: none
  std::vector<int64_t> shape;
  std::vector<int64_t> dstStrides, srcStrides;
  int64_t dstOffset = 0, srcOffset = 0;
  int64_t width = 0;
};

/// The strided copy of checked `op` (linalg.transpose, linalg.broadcast,
/// tensor.extract_slice or tensor.insert_slice), whose values are `values`.
StridedCopy describeStridedCopy(const OpRecord &op, const ValueTable &values);

struct CopyShape {
  /// Some dimension is 0: nothing to copy.
  bool empty = false;
  /// The merged dimensions and their strides (in elements); none for a
  /// copy of one element.
  std::vector<int64_t> sizes, dstStrides, srcStrides;

  size_t rank() const { return sizes.size(); }
  /// One run of consecutive elements on both sides.
  bool isContiguous() const {
    return rank() == 1 && dstStrides[0] == 1 && srcStrides[0] == 1;
  }
  /// A transpose of the two innermost dimensions: the destination is
  /// contiguous along the last, the source along the one before it. Tiles
  /// keep both sides in cache (host) or coalesced (CUDA).
  bool isInnerTranspose() const {
    const size_t r = rank();
    return r >= 2 && dstStrides[r - 1] == 1 && srcStrides[r - 2] == 1 &&
           srcStrides[r - 1] != 0 && srcStrides[r - 1] != 1;
  }
};

/// The copy of `shape` with `dstStrides` and `srcStrides`, simplified.
CopyShape simplifyCopy(const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &dstStrides,
                       const std::vector<int64_t> &srcStrides);

/// The widest element the copy can move at once: while its innermost
/// dimension is contiguous on both sides, f consecutive elements of `width`
/// bytes become one of f * width (16 bytes at most) where the innermost size
/// and every other stride are multiples of f and both start addresses
/// multiples of f * width. Rewrites `copy` in the wider elements and
/// returns their width. CUDA's strided copy kernel moves a widened element
/// per thread and iteration.
int64_t widenCopyElements(CopyShape &copy, int64_t width, uint64_t dstAddress,
                          uint64_t srcAddress);

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_COPYSHAPE_H
