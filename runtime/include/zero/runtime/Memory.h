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

/// Bytes allocated for tensors, now and at the peak. Thread-safe.
class MemoryTracker {
public:
  void allocate(int64_t bytes);
  void release(int64_t bytes);
  int64_t current() const { return current_.load(); }
  int64_t peak() const { return peak_.load(); }

private:
  std::atomic<int64_t> current_{0};
  std::atomic<int64_t> peak_{0};
};

/// A zero-filled block of host memory aligned to 64 bytes (a cache line, and
/// every alignment the plan uses), counted by a tracker while it lives.
class HostAllocation {
public:
  static StatusOr<HostAllocation> create(int64_t bytes, MemoryTracker &tracker);
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
};

/// The arenas of a schedule on the host backend: every space (device, host
/// and, until swapping to disk lands, nvme) in host memory.
class HostArenas {
public:
  static StatusOr<HostArenas> create(const Schedule &schedule,
                                     MemoryTracker &tracker);

  std::byte *base(MemorySpace space) const {
    return arenas_[static_cast<int>(space)].data();
  }

private:
  std::array<HostAllocation, kNumMemorySpaces> arenas_;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_MEMORY_H
