//===- CopyShape.cpp - the one plan of a strided copy ---------------------===//

#include "ops/CopyShape.h"

namespace zero::runtime::ops {

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

} // namespace zero::runtime::ops
