//===- Sizes.h - element counts and byte sizes that never wrap --*- C++ -*-===//
//
// The schedule's decoder computes every element count, byte size and end
// offset it reads through these, so that a hostile or mistaken schedule
// cannot wrap a size into a small, plausible one.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SIZES_H
#define ZERO_RUNTIME_SIZES_H

#include <cstdint>
#include <optional>
#include <vector>

namespace zero::runtime {

/// The most elements of a tensor and bytes of an arena a schedule may name:
/// 2^50, past any machine's memory, so that a decoded size times an element
/// width, or an offset plus a size, is far from overflowing int64.
inline constexpr int64_t kMaxScheduleSize = int64_t(1) << 50;

/// The most ranks a schedule (world_size) or a checkpoint may have: 2^24,
/// so that a count of ranks never sizes a table of absurd size.
inline constexpr int64_t kMaxWorldSize = int64_t(1) << 24;

/// a * b, or nothing if it overflows int64.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

/// a + b, or nothing if it overflows int64.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

/// The element count of `shape` (non-negative sizes), or nothing if it
/// exceeds kMaxScheduleSize.
inline std::optional<int64_t> getShapeNumel(const std::vector<int64_t> &shape) {
  int64_t numel = 1;
  for (int64_t dim : shape) {
    std::optional<int64_t> product = checkedMul(numel, dim);
    if (!product || *product > kMaxScheduleSize)
      return std::nullopt;
    numel = *product;
  }
  return numel;
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_SIZES_H
