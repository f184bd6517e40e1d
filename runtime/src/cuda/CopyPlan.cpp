//===- CopyPlan.cpp - how the CUDA backend runs a strided copy ------------===//

#include "CopyPlan.h"

#include "ops/CopyShape.h"

#include <algorithm>

namespace zero::runtime::cuda {

StatusOr<CopyPlan> planCopy(const std::string &where, char *dst,
                            const char *src, const std::vector<int64_t> &shape,
                            const std::vector<int64_t> &dstStrides,
                            const std::vector<int64_t> &srcStrides,
                            int64_t dstOffset, int64_t srcOffset,
                            int64_t width) {
  CopyPlan plan;
  ops::CopyShape copy = ops::simplifyCopy(shape, dstStrides, srcStrides);
  plan.kind = chooseCopyKind(copy, width);
  if (plan.kind == CopyKind::Empty)
    return plan; // nothing to copy
  std::vector<int64_t> &sizes = copy.sizes, &ds = copy.dstStrides,
                       &ss = copy.srcStrides;
  dst += dstOffset * width;
  src += srcOffset * width;
  if (sizes.empty()) { // one element
    sizes.push_back(1);
    ds.push_back(1);
    ss.push_back(1);
  }
  const size_t rank = sizes.size();
  plan.params.dst = dst;
  plan.params.src = src;
  plan.width = static_cast<int>(width);

  if (plan.kind == CopyKind::Memcpy) {
    plan.params.numel = sizes[0];
    plan.params.rank = 1;
    plan.params.sizes[0] = sizes[0];
    return plan;
  }
  if (rank > static_cast<size_t>(kMaxCopyRank))
    return ZERO_ERROR(kInvalidArgument,
                      where + ": the CUDA backend copies tensors of at most " +
                          std::to_string(kMaxCopyRank) +
                          " dimensions once contiguous ones are merged, got " +
                          std::to_string(rank));

  // The strided copy kernel moves the widest elements the copy allows.
  if (plan.kind == CopyKind::Generic)
    width =
        ops::widenCopyElements(copy, width, reinterpret_cast<uintptr_t>(dst),
                               reinterpret_cast<uintptr_t>(src));
  plan.width = static_cast<int>(width);
  plan.params.rank = static_cast<int>(rank);
  int64_t numel = 1, dstSpan = 0, srcSpan = 0;
  for (size_t k = 0; k < rank; ++k) {
    plan.params.sizes[k] = sizes[k];
    plan.params.dstStrides[k] = ds[k];
    plan.params.srcStrides[k] = ss[k];
    numel *= sizes[k];
    dstSpan += (sizes[k] - 1) * ds[k];
    srcSpan += (sizes[k] - 1) * ss[k];
  }
  plan.params.numel = numel;
  constexpr int64_t kMax32 = int64_t(1) << 31;
  plan.index32 = numel < kMax32 && dstSpan < kMax32 && srcSpan < kMax32;
  return plan;
}

CopyLaunch getCopyLaunch(const CopyPlan &plan) {
  CopyLaunch launch;
  const CopyParams &p = plan.params;
  if (plan.kind == CopyKind::Transpose) {
    const int r = p.rank;
    int64_t outer = 1;
    for (int k = 0; k < r - 2; ++k)
      outer *= p.sizes[k];
    launch.grid[0] = static_cast<unsigned>(
        (p.sizes[r - 1] + kTransposeTile - 1) / kTransposeTile);
    launch.grid[1] = static_cast<unsigned>(
        (p.sizes[r - 2] + kTransposeTile - 1) / kTransposeTile);
    launch.grid[2] = static_cast<unsigned>(std::min<int64_t>(outer, 65535));
    launch.block[0] = kTransposeTile;
    launch.block[1] = kTransposeRows;
    return launch;
  }
  launch.grid[0] = gridFor(p.numel, kCopyThreads);
  launch.block[0] = kCopyThreads;
  return launch;
}

} // namespace zero::runtime::cuda
