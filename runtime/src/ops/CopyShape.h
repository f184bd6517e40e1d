//===- CopyShape.h - the one plan of a strided copy -------------*- C++ -*-===//
//
// transpose, broadcast (stride 0), copy, the static slices, the reshapes
// that copy, and zero.local_shard are all "for each index i of a shape,
// dst[i . ds] = src[i . ss]" over elements of one width. Every backend first
// simplifies such a copy the same way, here: unit dimensions dropped and
// dimensions contiguous on both sides merged, so that most copies end up of
// rank 1 or 2; then it picks its way by the kind below (host/Copy.cpp,
// cuda/DataMovement.cu).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_COPYSHAPE_H
#define ZERO_RUNTIME_OPS_COPYSHAPE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zero::runtime::ops {

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

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_COPYSHAPE_H
