//===- Copy.h - strided copies and fills of tensor memory -------*- C++ -*-===//

#ifndef ZERO_RUNTIME_HOST_COPY_H
#define ZERO_RUNTIME_HOST_COPY_H

#include "HostOp.h"

#include "ops/CopyShape.h"
#include "ops/LoopSpace.h"
#include "zero/runtime/Program.h"

#include <cstdint>
#include <vector>

namespace zero::runtime::host {

using ops::getRowMajorStrides;

/// For every index i of `shape`: dst[sum(i * dstStrides)] =
/// src[sum(i * srcStrides)], elements of `width` bytes (strides in
/// elements). Contiguous runs become memmove calls.
void copyStrided(void *dst, const std::vector<int64_t> &dstStrides,
                 const void *src, const std::vector<int64_t> &srcStrides,
                 const std::vector<int64_t> &shape, int64_t width);

/// Sets `numel` elements of type `dtype` to the canonical register `value`.
void fillElements(void *data, DType dtype, int64_t numel, Scalar value);

} // namespace zero::runtime::host

namespace zero::runtime::host {

/// The result is a strided view of a source, copied: linalg.transpose,
/// linalg.broadcast, tensor.extract_slice and tensor.insert_slice. With a
/// destination (insert_slice), the result starts as a copy of it when their
/// memory differs.
class StridedCopyOp : public ComputeOp {
public:
  /// The copy of a checked op (ops::describeStridedCopy); `destBytes` are
  /// those of its destination, when it has one.
  StridedCopyOp(ops::StridedCopy copy, int64_t destBytes)
      : copy_(std::move(copy)), destBytes_(destBytes) {}
  Status run(Frame &frame) override;

private:
  ops::StridedCopy copy_;
  int64_t destBytes_;
};

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_COPY_H
