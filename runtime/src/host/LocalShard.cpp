//===- LocalShard.cpp - zero.local_shard ----------------------------------===//
//
// The rank's shard of a tensor every rank holds whole: the part of the
// flattened tensor its PartitionLayout gives it (shard rank % world size),
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
               PartitionLayout layout, int64_t width)
      : full_(full), result_(result), layout_(std::move(layout)), width_(width),
        site_(ctx.site()) {}

  Status run(Frame &frame) override {
    if (!layout_.fitsRanks(frame.worldSize()))
      return site_.error(
          StatusCode::kFailedPrecondition, "layout",
          "the layout is for " + std::to_string(layout_.worldSize) +
              " ranks, but this run has " + std::to_string(frame.worldSize()) +
              ", not a multiple of them");
    const char *full = static_cast<const char *>(frame.tensor(full_).data);
    char *shard = static_cast<char *>(frame.tensor(result_).data);
    const ElementRange owned = layout_.ownedRange(frame.rank());
    const int64_t count = owned.size();
    if (full + owned.begin * width_ != shard)
      std::memmove(shard, full + owned.begin * width_, count * width_);
    std::memset(shard + count * width_, 0,
                (layout_.shardNumel - count) * width_);
    return Status::ok();
  }

private:
  int64_t full_, result_;
  PartitionLayout layout_;
  int64_t width_;
  OpSite site_;
};

} // namespace

HostOpOr buildLocalShard(const OpContext &ctx) {
  const ValueInfo &full = ctx.values().values[ctx.op().operands[0]];
  return std::unique_ptr<ComputeOp>(new LocalShardOp(
      ctx, full.id, ctx.op().results[0], ctx.fields().getLayout(Field::Layout),
      getDTypeWidth(full.dtype)));
}

} // namespace zero::runtime::host
