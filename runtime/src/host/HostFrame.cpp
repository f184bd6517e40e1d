//===- HostFrame.cpp - host ops over a rank's arenas ----------------------===//

#include "HostFrame.h"

namespace zero::runtime::host {

ArenaFrame::ArenaFrame(const Schedule &schedule,
                       const std::array<std::byte *, kNumMemorySpaces> &bases,
                       Scalar *registers, int rank, int worldSize)
    : values_(schedule.values().values), registers_(registers), rank_(rank),
      worldSize_(worldSize) {
  data_.resize(values_.size(), nullptr);
  for (const ValueInfo &value : values_) {
    if (!value.isTensor)
      continue;
    const BufferInfo &buffer = schedule.buffers()[value.buffer];
    std::byte *base = bases[static_cast<int>(buffer.space)];
    data_[value.id] = base ? base + buffer.offset : nullptr;
  }
}

size_t getHostGroupLength(const Instruction &inst, const Instruction *next) {
  return next && isAdamWithCast(inst, *next) ? 2 : 1;
}

StatusOr<std::unique_ptr<ComputeOp>>
prepareHostGroup(const std::vector<const Instruction *> &group,
                 const Schedule &schedule) {
  if (group.size() == 1)
    return prepareComputeOp(*group[0], schedule.name(), schedule.values());
  if (group.size() != 2)
    return std::unique_ptr<ComputeOp>();
  return prepareAdamWithCast(*group[0], *group[1], schedule);
}

} // namespace zero::runtime::host
