//===- HostDevice.cpp - the host backend ----------------------------------===//
//
// Every memory space is host memory; compute runs on the issuing thread (the
// kernels' own thread pool and OpenBLAS underneath), so the work of a stream
// is done when its call returns. Streams therefore need nothing from the
// device: the executor's event flags order them.
//
//===----------------------------------------------------------------------===//

#include "HostOp.h"

#include "zero/runtime/Device.h"
#include "zero/runtime/Memory.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/host/Threads.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>

namespace zero::runtime {

namespace {

using Clock = std::chrono::steady_clock;

/// The rank's tensors at their planned offsets, and its registers.
class HostFrame final : public host::Frame {
public:
  HostFrame(const Schedule &schedule, const HostArenas &arenas, int rank,
            int worldSize)
      : values_(schedule.values().values), rank_(rank), worldSize_(worldSize) {
    data_.resize(values_.size(), nullptr);
    registers_.resize(values_.size());
    for (const ValueInfo &value : values_) {
      if (!value.isTensor)
        continue;
      const BufferInfo &buffer = schedule.buffers()[value.buffer];
      // An empty arena has no memory; its tensors have no elements.
      std::byte *base = arenas.base(buffer.space);
      data_[value.id] = base ? base + buffer.offset : nullptr;
    }
  }

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
  std::vector<Scalar> registers_;
  int rank_;
  int worldSize_;
};

class HostPreparedOp final : public PreparedOp {
public:
  HostPreparedOp(std::unique_ptr<host::ComputeOp> op, HostFrame &frame)
      : op_(std::move(op)), frame_(frame) {}
  Status run(int64_t) override { return op_->run(frame_); }

private:
  std::unique_ptr<host::ComputeOp> op_;
  HostFrame &frame_;
};

class HostDevice final : public Device {
public:
  std::string describe() const override {
    int threads = getHostThreads();
    return "host (" + std::to_string(threads) +
           (threads == 1 ? " thread)" : " threads)");
  }
  bool isHostMemory() const override { return true; }

  Status load(const Schedule &schedule, int rank, int worldSize,
              MemoryTracker &tracker) override {
    schedule_ = &schedule;
    StatusOr<HostArenas> arenas =
        HostArenas::create(schedule, tracker, external_);
    if (!arenas.isOk())
      return arenas.status();
    arenas_ = std::move(*arenas);
    frame_.emplace(schedule, arenas_, rank, worldSize);
    epoch_ = Clock::now();
    return Status::ok();
  }
  std::byte *arenaBase(MemorySpace space) const override {
    return arenas_.base(space);
  }

  StatusOr<std::unique_ptr<PreparedOp>>
  prepare(const Instruction &inst) override {
    StatusOr<std::unique_ptr<host::ComputeOp>> op =
        host::prepareComputeOp(inst, schedule_->name(), schedule_->values());
    if (!op.isOk())
      return op.status();
    return std::unique_ptr<PreparedOp>(
        new HostPreparedOp(std::move(*op), *frame_));
  }

  /// zero.adam and the cast of its new parameter to 16 bits run as one op.
  size_t groupLength(size_t stream, size_t first) override {
    const std::vector<Instruction> &list =
        schedule_->streams()[stream].instructions;
    return first + 1 < list.size() &&
                   host::isAdamWithCast(list[first], list[first + 1])
               ? 2
               : 1;
  }
  StatusOr<std::unique_ptr<PreparedOp>>
  prepareGroup(size_t stream, size_t first, size_t count) override {
    const std::vector<Instruction> &list =
        schedule_->streams()[stream].instructions;
    if (count != 2)
      return std::unique_ptr<PreparedOp>();
    StatusOr<std::unique_ptr<host::ComputeOp>> op =
        host::prepareAdamWithCast(list[first], list[first + 1], *schedule_);
    if (!op.isOk())
      return op.status();
    if (!*op)
      return std::unique_ptr<PreparedOp>();
    return std::unique_ptr<PreparedOp>(
        new HostPreparedOp(std::move(*op), *frame_));
  }

  Status recordEvent(size_t, int64_t) override { return Status::ok(); }
  Status waitEvent(size_t, int64_t) override { return Status::ok(); }
  Status copy(size_t, void *to, const void *from, int64_t bytes) override {
    if (bytes > 0 && to != from)
      std::memmove(to, from, static_cast<size_t>(bytes));
    return Status::ok();
  }
  Status fillZero(size_t, void *to, int64_t bytes) override {
    if (bytes > 0)
      std::memset(to, 0, static_cast<size_t>(bytes));
    return Status::ok();
  }
  void *nativeStream(size_t) const override { return nullptr; }
  Status synchronize() override { return Status::ok(); }

  Status read(void *hostTo, const void *from, int64_t bytes) override {
    return copy(0, hostTo, from, bytes);
  }
  Status write(void *to, const void *hostFrom, int64_t bytes) override {
    return copy(0, to, hostFrom, bytes);
  }
  StatusOr<Scalar> readScalar(int64_t id) override {
    return frame_->scalar(id);
  }

  int64_t markTime(size_t) override {
    Clock::time_point now = Clock::now();
    std::lock_guard<std::mutex> lock(marksMutex_);
    marks_.push_back(now);
    return static_cast<int64_t>(marks_.size()) - 1;
  }
  double resolveTime(int64_t mark) const override {
    std::lock_guard<std::mutex> lock(marksMutex_);
    return std::chrono::duration<double, std::micro>(marks_[mark] - epoch_)
        .count();
  }
  void clearTimeMarks() override {
    std::lock_guard<std::mutex> lock(marksMutex_);
    marks_.clear();
  }

private:
  const Schedule *schedule_ = nullptr;
  HostArenas arenas_;
  std::optional<HostFrame> frame_;
  Clock::time_point epoch_;
  mutable std::mutex marksMutex_;
  std::vector<Clock::time_point> marks_;
};

} // namespace

std::unique_ptr<Device> createHostDevice() {
  return std::make_unique<HostDevice>();
}

} // namespace zero::runtime
