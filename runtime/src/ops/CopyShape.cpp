//===- CopyShape.cpp - the one plan of a strided copy ---------------------===//

#include "ops/CopyShape.h"

#include "ops/LoopSpace.h"

#include <algorithm>

namespace zero::runtime::ops {

namespace {

int64_t dot(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  int64_t sum = 0;
  for (size_t d = 0; d < a.size(); ++d)
    sum += a[d] * b[d];
  return sum;
}

std::vector<int64_t> scale(const std::vector<int64_t> &a,
                           const std::vector<int64_t> &b) {
  std::vector<int64_t> result;
  for (size_t d = 0; d < a.size(); ++d)
    result.push_back(a[d] * b[d]);
  return result;
}

} // namespace

StridedCopy describeStridedCopy(const OpRecord &op, const ValueTable &values) {
  StridedCopy copy;
  const ValueInfo &source = values.values[op.operands[0]];
  const ValueInfo &result = values.values[op.results[0]];
  copy.source = source.id;
  copy.result = result.id;
  copy.width = getDTypeWidth(result.dtype);
  const std::vector<int64_t> sourceStrides = getRowMajorStrides(source.shape);
  switch (op.code()) {
  case OpCode::Transpose:
    // result[i] = source[i permuted back]: the source's stride of the
    // dimension each result dimension comes from.
    copy.shape = result.shape;
    copy.dstStrides = getRowMajorStrides(result.shape);
    for (int64_t dim : op.fields.getIntList(Field::Permutation))
      copy.srcStrides.push_back(sourceStrides[dim]);
    break;
  case OpCode::Broadcast: {
    // The added dimensions read the source with stride 0.
    const std::vector<int64_t> &added = op.fields.getIntList(Field::Dimensions);
    copy.shape = result.shape;
    copy.dstStrides = getRowMajorStrides(result.shape);
    size_t kept = 0;
    for (size_t d = 0; d < result.shape.size(); ++d)
      copy.srcStrides.push_back(
          std::find(added.begin(), added.end(), static_cast<int64_t>(d)) !=
                  added.end()
              ? 0
              : sourceStrides[kept++]);
    break;
  }
  case OpCode::ExtractSlice:
    copy.shape = op.fields.getIntList(Field::Sizes);
    copy.dstStrides = getRowMajorStrides(copy.shape);
    copy.srcStrides =
        scale(sourceStrides, op.fields.getIntList(Field::Strides));
    copy.srcOffset = dot(op.fields.getIntList(Field::Offsets), sourceStrides);
    break;
  case OpCode::InsertSlice: {
    const ValueInfo &dest = values.values[op.operands[1]];
    const std::vector<int64_t> destStrides = getRowMajorStrides(dest.shape);
    copy.dest = dest.id;
    copy.shape = op.fields.getIntList(Field::Sizes);
    copy.srcStrides = getRowMajorStrides(copy.shape);
    copy.dstStrides = scale(destStrides, op.fields.getIntList(Field::Strides));
    copy.dstOffset = dot(op.fields.getIntList(Field::Offsets), destStrides);
    break;
  }
  default:
    break;
  }
  return copy;
}

CopyShape simplifyCopy(const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &dstStrides,
                       const std::vector<int64_t> &srcStrides) {
  CopyShape copy;
  std::vector<int64_t> &sizes = copy.sizes, &ds = copy.dstStrides,
                       &ss = copy.srcStrides;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      copy.empty = true;
      return copy;
    }
    if (shape[d] == 1)
      continue;
    if (!sizes.empty() && ds.back() == dstStrides[d] * shape[d] &&
        ss.back() == srcStrides[d] * shape[d]) {
      sizes.back() *= shape[d];
      ds.back() = dstStrides[d];
      ss.back() = srcStrides[d];
      continue;
    }
    sizes.push_back(shape[d]);
    ds.push_back(dstStrides[d]);
    ss.push_back(srcStrides[d]);
  }
  return copy;
}

int64_t widenCopyElements(CopyShape &copy, int64_t width, uint64_t dstAddress,
                          uint64_t srcAddress) {
  const size_t rank = copy.rank();
  if (rank == 0 || copy.dstStrides[rank - 1] != 1 ||
      copy.srcStrides[rank - 1] != 1)
    return width;
  for (int64_t f = 16 / width; f >= 2; f /= 2) {
    bool ok = copy.sizes[rank - 1] % f == 0 &&
              dstAddress % static_cast<uint64_t>(f * width) == 0 &&
              srcAddress % static_cast<uint64_t>(f * width) == 0;
    for (size_t k = 0; k + 1 < rank && ok; ++k)
      ok = copy.dstStrides[k] % f == 0 && copy.srcStrides[k] % f == 0;
    if (!ok)
      continue;
    copy.sizes[rank - 1] /= f;
    for (size_t k = 0; k + 1 < rank; ++k) {
      copy.dstStrides[k] /= f;
      copy.srcStrides[k] /= f;
    }
    return width * f;
  }
  return width;
}

} // namespace zero::runtime::ops
