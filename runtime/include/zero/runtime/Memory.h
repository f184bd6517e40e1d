//===- Memory.h - the arenas of the memory plan -----------------*- C++ -*-===//
//
// The compiler plans every byte statically: the runtime allocates one arena
// per memory space, exactly as large as the plan says, and places each
// buffer at its planned offset. A MemoryTracker counts the bytes the runtime
// allocates for tensors (the arenas and anything else), so that the peak a
// run reports is what it really held.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_MEMORY_H
#define ZERO_RUNTIME_MEMORY_H

#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace zero::runtime {

/// Bytes allocated for tensors per memory space, now and at the peak.
/// Memory that is not an arena (staging, workspaces) counts as the device's.
/// Thread-safe.
class MemoryTracker {
public:
  void allocate(int64_t bytes, MemorySpace space = MemorySpace::Device);
  void release(int64_t bytes, MemorySpace space = MemorySpace::Device);
  /// All spaces together.
  int64_t current() const { return total_.current.load(); }
  int64_t peak() const { return total_.peak.load(); }
  int64_t current(MemorySpace space) const {
    return spaces_[static_cast<int>(space)].current.load();
  }
  int64_t peak(MemorySpace space) const {
    return spaces_[static_cast<int>(space)].peak.load();
  }

private:
  struct Counter {
    std::atomic<int64_t> current{0};
    std::atomic<int64_t> peak{0};
    void add(int64_t bytes);
  };
  Counter total_;
  std::array<Counter, kNumMemorySpaces> spaces_;
};

/// A zero-filled block of host memory aligned to 64 bytes (a cache line, and
/// every alignment the plan uses), counted by a tracker while it lives.
class HostAllocation {
public:
  static StatusOr<HostAllocation>
  create(int64_t bytes, MemoryTracker &tracker,
         MemorySpace space = MemorySpace::Device);
  HostAllocation() = default;
  HostAllocation(HostAllocation &&other) noexcept;
  HostAllocation &operator=(HostAllocation &&other) noexcept;
  HostAllocation(const HostAllocation &) = delete;
  HostAllocation &operator=(const HostAllocation &) = delete;
  ~HostAllocation();

  std::byte *data() const { return data_; }
  int64_t size() const { return size_; }

private:
  std::byte *data_ = nullptr;
  int64_t size_ = 0;
  MemoryTracker *tracker_ = nullptr;
  MemorySpace space_ = MemorySpace::Device;
};

/// The arenas of a schedule on the host backend in host memory: every space
/// but those held elsewhere (the nvme arena in the NVMe swap store).
class HostArenas {
public:
  /// Allocates every space's arena but those marked in `external`.
  static StatusOr<HostArenas>
  create(const Schedule &schedule, MemoryTracker &tracker,
         const std::array<bool, kNumMemorySpaces> &external = {});

  std::byte *base(MemorySpace space) const {
    return arenas_[static_cast<int>(space)].data();
  }

private:
  std::array<HostAllocation, kNumMemorySpaces> arenas_;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_MEMORY_H
