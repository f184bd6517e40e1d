//===- Copy.h - strided copies and fills of tensor memory -------*- C++ -*-===//

#ifndef ZERO_RUNTIME_HOST_COPY_H
#define ZERO_RUNTIME_HOST_COPY_H

#include "HostOp.h"

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
  struct Spec {
    int64_t source = -1;
    int64_t result = -1;
    int64_t dest = -1; // -1: none
    int64_t destBytes = 0;
    std::vector<int64_t> shape; // the copied index space
    std::vector<int64_t> dstStrides, srcStrides;
    int64_t dstOffset = 0, srcOffset = 0; // in elements
    int64_t width = 4;
  };
  explicit StridedCopyOp(Spec spec) : spec_(std::move(spec)) {}
  Status run(Frame &frame) override;

private:
  Spec spec_;
};

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_COPY_H
