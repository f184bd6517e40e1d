//===- LocalShard.cpp - zero.local_shard ----------------------------------===//
//
// The rank's shard of a tensor every rank holds whole: elements
// [rank * shard_numel, (rank + 1) * shard_numel) of the flattened tensor,
// with zeros past its end (docs/Dialect.md, "Layouts").
//
//===----------------------------------------------------------------------===//

#include "HostOps.h"

#include <algorithm>
#include <cstring>

namespace zero::runtime::host {

namespace {

class LocalShardOp : public ComputeOp {
public:
  LocalShardOp(const OpContext &ctx, int64_t full, int64_t result,
               int64_t numel, int64_t shardNumel, int64_t worldSize,
               int64_t width)
      : full_(full), result_(result), numel_(numel), shardNumel_(shardNumel),
        worldSize_(worldSize), width_(width), site_(ctx.site()) {}

  Status run(Frame &frame) override {
    if (frame.worldSize() != worldSize_)
      return site_.error(StatusCode::kFailedPrecondition, "layout",
                         "the layout is for " + std::to_string(worldSize_) +
                             " ranks, but this run has " +
                             std::to_string(frame.worldSize()));
    const char *full = static_cast<const char *>(frame.tensor(full_).data);
    char *shard = static_cast<char *>(frame.tensor(result_).data);
    const int64_t begin = std::min<int64_t>(frame.rank() * shardNumel_, numel_);
    const int64_t count = std::min(shardNumel_, numel_ - begin);
    if (full + begin * width_ != shard)
      std::memmove(shard, full + begin * width_, count * width_);
    std::memset(shard + count * width_, 0, (shardNumel_ - count) * width_);
    return Status::ok();
  }

private:
  int64_t full_, result_, numel_, shardNumel_, worldSize_, width_;
  OpSite site_;
};

} // namespace

PreparedOp prepareLocalShard(const OpContext &ctx) {
  ZERO_RETURN_IF_ERROR(ctx.checkKeys({ZERO_INSTRUCTION_KEYS}, {"layout"}));
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &full = *v.operands[0], &shard = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 0, full));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, shard));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("results", 0, shard, full.dtype));

  auto it = ctx.json().find("layout");
  if (it == ctx.json().end())
    return ctx.error("", "missing field 'layout' of zero.local_shard");
  OpContext layout(*it, ctx.path() + ".layout", ctx.loc(), ctx.values(),
                   "a layout");
  if (!it->is_object())
    return layout.error("", "expected an object");
  ZERO_RETURN_IF_ERROR(layout.checkKeys(
      {}, {"shape", "world_size", "shard_numel", "padded_numel"}));
  StatusOr<std::vector<int64_t>> shape = layout.getIntList("shape");
  if (!shape.isOk())
    return shape.status();
  StatusOr<int64_t> worldSize = layout.getInt("world_size");
  if (!worldSize.isOk())
    return worldSize.status();
  StatusOr<int64_t> shardNumel = layout.getInt("shard_numel");
  if (!shardNumel.isOk())
    return shardNumel.status();
  StatusOr<int64_t> paddedNumel = layout.getInt("padded_numel");
  if (!paddedNumel.isOk())
    return paddedNumel.status();
  if (*worldSize < 1)
    return layout.error("world_size", "must be at least 1, got " +
                                          std::to_string(*worldSize));
  if (*shape != full.shape)
    return layout.error(
        "shape", "is " + formatShape(*shape) + ", but the operand has shape " +
                     formatShape(full.shape) + " for " + describeValue(full));
  if (*shardNumel < 0 || *shardNumel * *worldSize != *paddedNumel ||
      *paddedNumel < full.numel)
    return layout.error("padded_numel",
                        std::to_string(*paddedNumel) + " is not " +
                            std::to_string(*worldSize) + " shards of " +
                            std::to_string(*shardNumel) +
                            " elements covering " + std::to_string(full.numel));
  if (shard.numel != *shardNumel)
    return ctx.error("results[0]",
                     describeValue(shard) + " has " +
                         std::to_string(shard.numel) +
                         " elements, but the layout's shards have " +
                         std::to_string(*shardNumel));
  return std::unique_ptr<ComputeOp>(
      new LocalShardOp(ctx, full.id, shard.id, full.numel, *shardNumel,
                       *worldSize, getDTypeWidth(full.dtype)));
}

} // namespace zero::runtime::host
