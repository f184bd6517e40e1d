//===- HostFrame.cpp - host ops over a rank's arenas ----------------------===//

#include "HostFrame.h"

#include "HostKernels.h"

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

namespace {

/// Ops run one after the other against a frame.
class FrameRun final : public HostKernelRun {
public:
  FrameRun(std::vector<std::unique_ptr<ComputeOp>> ops, Frame &frame)
      : ops_(std::move(ops)), frame_(frame) {}
  Status run() override {
    for (const std::unique_ptr<ComputeOp> &op : ops_)
      ZERO_RETURN_IF_ERROR(op->run(frame_));
    return Status::ok();
  }

private:
  std::vector<std::unique_ptr<ComputeOp>> ops_;
  Frame &frame_;
};

class FrameKernels final : public HostKernels {
public:
  FrameKernels(const Schedule &schedule,
               const std::array<std::byte *, kNumMemorySpaces> &bases,
               Scalar *registers, int rank, int worldSize)
      : schedule_(schedule),
        frame_(schedule, bases, registers, rank, worldSize) {}

  StatusOr<std::unique_ptr<HostKernelRun>>
  prepare(const std::vector<const Instruction *> &run) override {
    std::vector<std::unique_ptr<ComputeOp>> ops;
    for (size_t i = 0; i < run.size();) {
      size_t length = getHostGroupLength(
          *run[i], i + 1 < run.size() ? run[i + 1] : nullptr);
      auto group = [&](size_t count) {
        return std::vector<const Instruction *>(run.begin() + i,
                                                run.begin() + i + count);
      };
      StatusOr<std::unique_ptr<ComputeOp>> op =
          prepareHostGroup(group(length), schedule_);
      if (op.isOk() && !*op) { // the pair runs apart after all
        length = 1;
        op = prepareHostGroup(group(length), schedule_);
      }
      if (!op.isOk())
        return op.status();
      ops.push_back(std::move(*op));
      i += length;
    }
    return std::unique_ptr<HostKernelRun>(new FrameRun(std::move(ops), frame_));
  }

private:
  const Schedule &schedule_;
  ArenaFrame frame_;
};

} // namespace

} // namespace zero::runtime::host

namespace zero::runtime {

std::unique_ptr<HostKernels>
HostKernels::create(const Schedule &schedule,
                    const std::array<std::byte *, kNumMemorySpaces> &bases,
                    Scalar *registers, int rank, int worldSize) {
  return std::make_unique<host::FrameKernels>(schedule, bases, registers, rank,
                                              worldSize);
}

} // namespace zero::runtime
