//===- HostFrame.h - host ops over a rank's arenas --------------*- C++ -*-===//
//
// What a device needs to run the host kernels (HostOp.h) against its own
// memory: a frame that resolves value ids to the plan's offsets in arenas
// whose bases the device gives and to a register file it owns, the prepared
// op bound to it, and the host's groups (zero.adam with the cast of its new
// parameter). The host device runs every instruction this way, and other
// devices, through HostKernels.h, the instructions whose tensors all live
// in their host arena (docs/Runtime.md, "CUDA backend").
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_HOSTFRAME_H
#define ZERO_RUNTIME_HOST_HOSTFRAME_H

#include "HostOp.h"

#include "zero/runtime/Device.h"

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace zero::runtime::host {

/// A rank's tensors at their planned offsets and its scalar registers.
class ArenaFrame final : public Frame {
public:
  /// `bases`: each space's arena (null when empty: its tensors have no
  /// elements); `registers`: one Scalar per value id, owned by the caller
  /// and alive as long as the frame.
  ArenaFrame(const Schedule &schedule,
             const std::array<std::byte *, kNumMemorySpaces> &bases,
             Scalar *registers, int rank, int worldSize);

  TensorRef tensor(int64_t id) override {
    const ValueInfo &value = values_[id];
    return {data_[id], value.dtype, &value.shape, value.numel};
  }
  Scalar &scalar(int64_t id) override { return registers_[id]; }
  int rank() const override { return rank_; }
  int worldSize() const override { return worldSize_; }

private:
  const std::vector<ValueInfo> &values_;
  std::vector<void *> data_;
  Scalar *registers_;
  int rank_;
  int worldSize_;
};

/// A host op run against a frame on the calling thread.
class FrameOp final : public PreparedOp {
public:
  FrameOp(std::unique_ptr<ComputeOp> op, Frame &frame)
      : op_(std::move(op)), frame_(frame) {}
  Status run(int64_t) override { return op_->run(frame_); }

private:
  std::unique_ptr<ComputeOp> op_;
  Frame &frame_;
};

/// How many instructions the host runs as one op from `inst`, which `next`
/// follows (null at the end of the stream): 2 for a zero.adam and the
/// 16-bit cast of its new parameter (isAdamWithCast), else 1.
size_t getHostGroupLength(const Instruction &inst, const Instruction *next);

/// Prepares `group`, instructions getHostGroupLength proposed to run
/// together, as one op (one instruction: prepareComputeOp); null when they
/// run one by one after all (prepareAdamWithCast).
StatusOr<std::unique_ptr<ComputeOp>>
prepareHostGroup(const std::vector<const Instruction *> &group,
                 const Schedule &schedule);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_HOSTFRAME_H
