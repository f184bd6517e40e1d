//===- Memory.cpp - the arenas of the memory plan -------------------------===//

#include "zero/runtime/Memory.h"

#include <cstdlib>
#include <cstring>

namespace zero::runtime {

void MemoryTracker::Counter::add(int64_t bytes) {
  int64_t now = current.fetch_add(bytes) + bytes;
  int64_t high = peak.load();
  while (now > high && !peak.compare_exchange_weak(high, now)) {
  }
}

void MemoryTracker::allocate(int64_t bytes, MemorySpace space) {
  total_.add(bytes);
  spaces_[static_cast<int>(space)].add(bytes);
}

void MemoryTracker::release(int64_t bytes, MemorySpace space) {
  total_.current.fetch_sub(bytes);
  spaces_[static_cast<int>(space)].current.fetch_sub(bytes);
}

StatusOr<HostAllocation> HostAllocation::create(int64_t bytes,
                                                MemoryTracker &tracker,
                                                MemorySpace space) {
  HostAllocation allocation;
  if (bytes <= 0)
    return allocation;
  constexpr int64_t kAlignment = 64;
  int64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void *data = std::aligned_alloc(kAlignment, static_cast<size_t>(rounded));
  if (!data)
    return ZERO_ERROR(kResourceExhausted, "cannot allocate " +
                                              std::to_string(bytes) +
                                              " bytes of host memory");
  // Zeros: a run must not depend on what the allocator left there.
  std::memset(data, 0, static_cast<size_t>(rounded));
  allocation.data_ = static_cast<std::byte *>(data);
  allocation.size_ = bytes;
  allocation.tracker_ = &tracker;
  allocation.space_ = space;
  tracker.allocate(bytes, space);
  return allocation;
}

HostAllocation::HostAllocation(HostAllocation &&other) noexcept
    : data_(other.data_), size_(other.size_), tracker_(other.tracker_),
      space_(other.space_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.tracker_ = nullptr;
}

HostAllocation &HostAllocation::operator=(HostAllocation &&other) noexcept {
  if (this != &other) {
    this->~HostAllocation();
    new (this) HostAllocation(std::move(other));
  }
  return *this;
}

HostAllocation::~HostAllocation() {
  if (!data_)
    return;
  std::free(data_);
  tracker_->release(size_, space_);
  data_ = nullptr;
}

StatusOr<HostArenas>
HostArenas::create(const Schedule &schedule, MemoryTracker &tracker,
                   const std::array<bool, kNumMemorySpaces> &external) {
  HostArenas arenas;
  for (int i = 0; i < kNumMemorySpaces; ++i) {
    MemorySpace space = static_cast<MemorySpace>(i);
    if (external[i])
      continue;
    StatusOr<HostAllocation> allocation =
        HostAllocation::create(schedule.arenaBytes(space), tracker, space);
    if (!allocation.isOk())
      return ZERO_ERROR(kResourceExhausted,
                        schedule.name() + ": memory.arenas." +
                            getMemorySpaceName(space) + ": " +
                            allocation.status().message());
    arenas.arenas_[i] = std::move(*allocation);
  }
  return arenas;
}

} // namespace zero::runtime
