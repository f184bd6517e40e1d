//===- HostDevice.cpp - the host backend ----------------------------------===//
//
// Every memory space is host memory; compute runs on the issuing thread (the
// kernels' own thread pool and OpenBLAS underneath), so the work of a stream
// is done when its call returns. Streams therefore need nothing from the
// device: the executor's event flags order them.
//
//===----------------------------------------------------------------------===//

#include "HostFrame.h"
#include "ops/Quantize.h"

#include "zero/runtime/Device.h"
#include "zero/runtime/Memory.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/host/Threads.h"

#include <array>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>

namespace zero::runtime {

namespace {

using Clock = std::chrono::steady_clock;

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
    std::array<std::byte *, kNumMemorySpaces> bases;
    for (int i = 0; i < kNumMemorySpaces; ++i)
      bases[i] = arenas_.base(static_cast<MemorySpace>(i));
    registers_.assign(schedule.values().values.size(), Scalar{});
    frame_.emplace(schedule, bases, registers_.data(), rank, worldSize);
    epoch_ = Clock::now();
    return Status::ok();
  }
  std::byte *arenaBase(MemorySpace space) const override {
    return arenas_.base(space);
  }

  StatusOr<std::unique_ptr<PreparedOp>>
  prepare(const Instruction &inst) override {
    return prepareOnFrame({&inst});
  }

  /// zero.adam and the cast of its new parameter to 16 bits run as one op.
  size_t groupLength(size_t stream, size_t first) override {
    const std::vector<Instruction> &list =
        schedule_->streams()[stream].instructions;
    return host::getHostGroupLength(
        list[first], first + 1 < list.size() ? &list[first + 1] : nullptr);
  }
  StatusOr<std::unique_ptr<PreparedOp>>
  prepareGroup(size_t stream, size_t first, size_t count) override {
    const std::vector<Instruction> &list =
        schedule_->streams()[stream].instructions;
    if (count < 2 || first + count > list.size())
      return std::unique_ptr<PreparedOp>();
    std::vector<const Instruction *> group;
    for (size_t i = first; i < first + count; ++i)
      group.push_back(&list[i]);
    return prepareOnFrame(group);
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
  Status quantizeBlocks(size_t, const void *in, DType type, int64_t n,
                        int bits, int64_t blockSize, void *values,
                        void *scales) override {
    quantize::quantizeElements(in, quantize::getQuantizedFormat(type), n, bits,
                               blockSize, static_cast<uint8_t *>(values),
                               scales);
    return Status::ok();
  }
  Status dequantizeBlocks(size_t, const void *values, const void *scales,
                          int64_t n, int bits, int64_t blockSize, DType type,
                          void *out) override {
    quantize::dequantizeElements(static_cast<const uint8_t *>(values), scales,
                                 n, bits, blockSize,
                                 quantize::getQuantizedFormat(type), out);
    return Status::ok();
  }
  Status accumulateDequantized(size_t, const void *values, const void *scales,
                               int64_t n, int bits, int64_t blockSize,
                               float *sums) override {
    quantize::accumulateDequantized(static_cast<const uint8_t *>(values),
                                    scales, n, bits, blockSize, sums);
    return Status::ok();
  }
  Status roundSums(size_t, const float *sums, int64_t n, int64_t divisor,
                   DType type, void *out) override {
    quantize::roundSums(sums, n, divisor, quantize::getQuantizedFormat(type),
                        out);
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
  /// One instruction, or a group of the host's, run against the frame.
  StatusOr<std::unique_ptr<PreparedOp>>
  prepareOnFrame(const std::vector<const Instruction *> &group) {
    StatusOr<std::unique_ptr<host::ComputeOp>> op =
        host::prepareHostGroup(group, *schedule_);
    if (!op.isOk())
      return op.status();
    if (!*op)
      return std::unique_ptr<PreparedOp>();
    return std::unique_ptr<PreparedOp>(
        new host::FrameOp(std::move(*op), *frame_));
  }

  const Schedule *schedule_ = nullptr;
  HostArenas arenas_;
  std::vector<Scalar> registers_;
  std::optional<host::ArenaFrame> frame_;
  Clock::time_point epoch_;
  mutable std::mutex marksMutex_;
  std::vector<Clock::time_point> marks_;
};

} // namespace

std::unique_ptr<Device> createHostDevice() {
  return std::make_unique<HostDevice>();
}

} // namespace zero::runtime
