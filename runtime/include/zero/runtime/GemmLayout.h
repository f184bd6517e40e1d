//===- GemmLayout.h - a GEMM instruction's operand layout -------*- C++ -*-===//
//
// linalg.matmul and linalg.batch_matmul may carry `indexing_maps`
// (docs/ScheduleFormat.md): the default maps, or A's or B's two loops
// swapped, i.e. that operand stored transposed (a transpose the compiler
// folded into the GEMM, zero-fold-transposes). This is the one reading of
// them, header-only and standard C++ only, so that the compiler's emitter
// accepts exactly what the runtime's backends run.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_GEMMLAYOUT_H
#define ZERO_RUNTIME_GEMMLAYOUT_H

#include <cstdint>
#include <optional>
#include <vector>

namespace zero::runtime {

/// Which of A and B a GEMM reads transposed: A stored [k, m], B [n, k]
/// (after the batch dimension).
struct GemmLayout {
  bool transposeA = false;
  bool transposeB = false;
};

using GemmMaps = std::vector<std::vector<int64_t>>;

/// The default maps over loops (m, n, k), after the batch loop b when
/// `batched`: A (m, k), B (k, n), C (m, n).
inline GemmMaps getDefaultGemmMaps(bool batched) {
  const int64_t o = batched ? 1 : 0, m = o, n = o + 1, k = o + 2;
  auto map = [&](int64_t row, int64_t col) {
    return batched ? std::vector<int64_t>{0, row, col}
                   : std::vector<int64_t>{row, col};
  };
  return {map(m, k), map(k, n), map(m, n)};
}

/// The layout `maps` give, or nothing when they are not the default maps
/// with at most A's and B's two loops swapped.
inline std::optional<GemmLayout> readGemmMaps(const GemmMaps &maps,
                                              bool batched) {
  const GemmMaps plain = getDefaultGemmMaps(batched);
  auto swapped = [](std::vector<int64_t> map) {
    std::swap(map[map.size() - 2], map[map.size() - 1]);
    return map;
  };
  if (maps.size() != 3 || maps[2] != plain[2])
    return std::nullopt;
  GemmLayout layout;
  layout.transposeA = maps[0] == swapped(plain[0]);
  layout.transposeB = maps[1] == swapped(plain[1]);
  if ((maps[0] != plain[0] && !layout.transposeA) ||
      (maps[1] != plain[1] && !layout.transposeB))
    return std::nullopt;
  return layout;
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_GEMMLAYOUT_H
