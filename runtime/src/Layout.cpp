//===- Layout.cpp - how a tensor is cut across ranks ----------------------===//

#include "zero/runtime/Layout.h"

#include "zero/runtime/Sizes.h"

#include <algorithm>
#include <string>

namespace zero::runtime {

StatusOr<PartitionLayout> PartitionLayout::create(std::vector<int64_t> shape,
                                                  int64_t worldSize,
                                                  int64_t paddedNumel) {
  if (worldSize < 1)
    return ZERO_ERROR(kInvalidArgument, "world_size must be at least 1, got " +
                                            std::to_string(worldSize));
  for (int64_t dim : shape)
    if (dim < 0)
      return ZERO_ERROR(kInvalidArgument,
                        "shape has a negative size " + std::to_string(dim));
  std::optional<int64_t> count = getShapeNumel(shape);
  if (!count)
    return ZERO_ERROR(kInvalidArgument, "shape has more than 2^50 elements");
  int64_t numel = *count;
  if (paddedNumel < 0)
    paddedNumel = getDefaultPaddedNumel(numel, worldSize);
  if (paddedNumel < numel)
    return ZERO_ERROR(kInvalidArgument,
                      "padded_numel " + std::to_string(paddedNumel) +
                          " is smaller than the element count " +
                          std::to_string(numel));
  if (paddedNumel % worldSize != 0)
    return ZERO_ERROR(kInvalidArgument,
                      "padded_numel " + std::to_string(paddedNumel) +
                          " is not a multiple of world_size " +
                          std::to_string(worldSize));
  PartitionLayout layout;
  layout.shape = std::move(shape);
  layout.numel = numel;
  layout.worldSize = worldSize;
  layout.paddedNumel = paddedNumel;
  layout.shardNumel = paddedNumel / worldSize;
  return layout;
}

ElementRange PartitionLayout::ownedRange(int64_t rank) const {
  int64_t begin = std::min(shardBegin(rank), numel);
  return {begin, std::min(begin + shardNumel, numel)};
}

} // namespace zero::runtime
