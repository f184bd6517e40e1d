//===- Quantize.cpp - symmetric block quantization of floats
//---------------===//

#include "Quantize.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace zero::runtime::host {

namespace {

int getMaxLevel(int bits) { return (1 << (bits - 1)) - 1; }

/// The block's scale: absmax / qmax, 0 for zeros, NaN when any element is
/// not finite.
float getScale(const float *block, int64_t size, int maxLevel) {
  float absmax = 0;
  for (int64_t i = 0; i < size; ++i) {
    if (!std::isfinite(block[i]))
      return std::numeric_limits<float>::quiet_NaN();
    absmax = std::max(absmax, std::fabs(block[i]));
  }
  return absmax / static_cast<float>(maxLevel);
}

/// round(x / scale) to nearest even, in [-maxLevel, maxLevel]; 0 where the
/// scale is 0 or NaN (the scale alone then carries the block).
int getLevel(float x, float scale, int maxLevel) {
  if (!(scale > 0))
    return 0;
  // The default rounding mode is to nearest, ties to even; the clamp only
  // guards against x / scale landing a rounding error beyond qmax.
  float level = std::nearbyint(x / scale);
  return static_cast<int>(std::clamp(level, -static_cast<float>(maxLevel),
                                     static_cast<float>(maxLevel)));
}

void storeLevel(uint8_t *out, int64_t i, int bits, int level) {
  if (bits == 8) {
    out[i] = static_cast<uint8_t>(static_cast<int8_t>(level));
    return;
  }
  uint8_t nibble = static_cast<uint8_t>(level) & 0xF;
  uint8_t &byte = out[i / 2];
  byte = i % 2 == 0 ? static_cast<uint8_t>((byte & 0xF0) | nibble)
                    : static_cast<uint8_t>((byte & 0x0F) | (nibble << 4));
}

int loadLevel(const uint8_t *in, int64_t i, int bits) {
  if (bits == 8)
    return static_cast<int8_t>(in[i]);
  int nibble = i % 2 == 0 ? in[i / 2] & 0xF : in[i / 2] >> 4;
  return nibble >= 8 ? nibble - 16 : nibble;
}

} // namespace

void quantizeBlocks(const float *in, int64_t n, int bits, int64_t blockSize,
                    uint8_t *out, float *scales) {
  assert((bits == 4 || bits == 8) && blockSize >= 1 &&
         (bits == 8 || blockSize % 2 == 0));
  int maxLevel = getMaxLevel(bits);
  if (bits == 4)
    std::fill(out, out + getQuantizedBytes(n, bits), uint8_t(0));
  for (int64_t begin = 0, block = 0; begin < n; begin += blockSize, ++block) {
    int64_t size = std::min(blockSize, n - begin);
    float scale = getScale(in + begin, size, maxLevel);
    scales[block] = scale;
    for (int64_t i = begin; i < begin + size; ++i)
      storeLevel(out, i, bits, getLevel(in[i], scale, maxLevel));
  }
}

void dequantizeBlocks(const uint8_t *in, const float *scales, int64_t n,
                      int bits, int64_t blockSize, float *out) {
  assert((bits == 4 || bits == 8) && blockSize >= 1);
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(loadLevel(in, i, bits)) * scales[i / blockSize];
}

} // namespace zero::runtime::host
