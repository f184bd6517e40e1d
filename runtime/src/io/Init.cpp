//===- Init.cpp - counter-based deterministic random values ---------------===//
//
// The generator is spelled out in Init.h; test/Runtime/Inputs/zero_random.py
// must stay bit-identical to this file. Everything is computed in double with
// the C library's log, sqrt, sin and cos (as Python's math module does) and
// rounded to float once, at the end.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Init.h"

#include <cassert>
#include <cmath>

namespace zero::runtime {

static constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t fnv1a64(const std::string &text) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001B3ull;
  }
  return hash;
}

static uint64_t tensorKey(uint64_t seed, const std::string &name) {
  return mix(seed ^ fnv1a64(name));
}

static uint64_t rowKey(uint64_t seed, const std::string &name, int64_t row) {
  return mix(tensorKey(seed, name) ^ mix(static_cast<uint64_t>(row) + 1));
}

static uint64_t bits(uint64_t key, uint64_t counter) {
  return mix(key + (counter + 1) * kGolden);
}

/// Box-Muller on the pair of counters of element `index`: even elements take
/// the cosine branch, odd ones the sine branch of the same pair.
static double standardNormal(uint64_t key, int64_t index) {
  uint64_t pair = static_cast<uint64_t>(index) >> 1;
  const double scale = 1.0 / 9007199254740992.0; // 2^-53
  double u1 = static_cast<double>((bits(key, 2 * pair) >> 11) + 1) * scale;
  double u2 = static_cast<double>(bits(key, 2 * pair + 1) >> 11) * scale;
  double radius = std::sqrt(-2.0 * std::log(u1));
  double theta = 6.283185307179586 * u2;
  return (index & 1) ? radius * std::sin(theta) : radius * std::cos(theta);
}

float initNormal(uint64_t seed, const std::string &name, int64_t index,
                 float std) {
  return static_cast<float>(standardNormal(tensorKey(seed, name), index) *
                            static_cast<double>(std));
}

void fillNormal(uint64_t seed, const std::string &name, int64_t begin,
                int64_t count, float std, float *out) {
  uint64_t key = tensorKey(seed, name);
  double scale = static_cast<double>(std);
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<float>(standardNormal(key, begin + i) * scale);
}

float syntheticFloat(uint64_t seed, const std::string &name, int64_t row,
                     int64_t index) {
  return static_cast<float>(standardNormal(rowKey(seed, name, row), index));
}

int64_t syntheticInt(uint64_t seed, const std::string &name, int64_t row,
                     int64_t index, int64_t bound) {
  assert(bound >= 1 && "syntheticInt needs a positive bound");
  return static_cast<int64_t>(
      bits(rowKey(seed, name, row), static_cast<uint64_t>(index)) %
      static_cast<uint64_t>(bound));
}

} // namespace zero::runtime
