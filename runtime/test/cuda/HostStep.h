//===- HostStep.h - a schedule's step on the host, for kernels --*- C++ -*-===//
//
// The reference a kernel run on the CPU is compared with: one step of a
// schedule (its stream 0) on the host backend, from memory the test writes,
// and that memory as the step found it, for the kernel to start from.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_HOSTSTEP_H
#define ZERO_RUNTIME_TEST_CUDA_HOSTSTEP_H

#include "KernelsOnCpu.h"

#include "zero/runtime/Device.h"
#include "zero/runtime/Memory.h"
#include "zero/runtime/Schedule.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace zero::runtime::test {

class HostStep {
public:
  /// Loads `schedule` (which must outlive this) on a host device; a failure
  /// fails the test (isLoaded() is then false).
  explicit HostStep(const Schedule &schedule)
      : schedule_(schedule), host_(createHostDevice()) {
    const Status status = host_->load(schedule, 0, 1, tracker_);
    EXPECT_TRUE(status.isOk()) << status.toString();
    loaded_ = status.isOk();
  }
  bool isLoaded() const { return loaded_; }

  int64_t offsetOf(int64_t id) const { return schedule_.bufferOf(id).offset; }
  int64_t arenaBytes() const {
    return schedule_.arenaBytes(MemorySpace::Device);
  }
  void write(int64_t id, const void *data, int64_t bytes) {
    if (bytes == 0)
      return;
    const Status status = host_->write(base() + offsetOf(id), data, bytes);
    EXPECT_TRUE(status.isOk()) << status.toString();
  }
  /// Copies the memory as it is into `start` (the kernel's arena), then
  /// runs every instruction of stream 0.
  void run(std::byte *start) {
    Status status = host_->read(start, base(), arenaBytes());
    ASSERT_TRUE(status.isOk()) << status.toString();
    for (const Instruction &inst : schedule_.streams()[0].instructions) {
      StatusOr<std::unique_ptr<PreparedOp>> op = host_->prepare(inst);
      ASSERT_TRUE(op.isOk()) << op.status().toString();
      status = (*op)->run(1);
      ASSERT_TRUE(status.isOk()) << status.toString();
    }
  }
  /// Every scalar register after the step (zero where none was written),
  /// by value id.
  std::vector<Scalar> registers() const {
    std::vector<Scalar> file(schedule_.values().values.size());
    for (const ValueInfo &value : schedule_.values().values)
      if (!value.isTensor) {
        StatusOr<Scalar> scalar = host_->readScalar(value.id);
        if (scalar.isOk())
          file[value.id] = *scalar;
      }
    return file;
  }
  /// Tensor `id`'s bytes after the step.
  std::vector<std::byte> read(int64_t id) const {
    std::vector<std::byte> bytes(schedule_.values().values[id].bytes());
    const Status status = host_->read(bytes.data(), base() + offsetOf(id),
                                      static_cast<int64_t>(bytes.size()));
    EXPECT_TRUE(status.isOk()) << status.toString();
    return bytes;
  }

private:
  std::byte *base() const { return host_->arenaBase(MemorySpace::Device); }

  const Schedule &schedule_;
  std::unique_ptr<Device> host_;
  MemoryTracker tracker_;
  bool loaded_ = false;
};

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_CUDA_HOSTSTEP_H
