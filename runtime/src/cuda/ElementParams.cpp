//===- ElementParams.cpp - tensor.extract as its kernel takes it ----------===//

#include "ElementParams.h"

#include "ops/LoopSpace.h"

namespace zero::runtime::cuda {

std::vector<int64_t> getExtractTable(const std::vector<int64_t> &shape,
                                     const std::vector<int64_t> &indices) {
  std::vector<int64_t> table = shape;
  const std::vector<int64_t> strides = ops::getRowMajorStrides(shape);
  table.insert(table.end(), strides.begin(), strides.end());
  table.insert(table.end(), indices.begin(), indices.end());
  return table;
}

} // namespace zero::runtime::cuda
