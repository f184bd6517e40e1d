//===- QuantizeMath.h - the block quantizer's element math ------*- C++ -*-===//
//
// One definition of what the block quantizer (Quantize.h, docs/Runtime.md,
// "Block quantization") computes per element and per block, for the host
// loops of Quantize.cpp and the CUDA kernels of cuda/Quantize.cu alike
// (ZERO_HD), so that both backends produce the same bytes: the scale is
// absmax / qmax in f32, a level is x / scale rounded to nearest even (the
// default rounding mode's nearbyint on the host, rintf on the GPU), a value
// comes back as level * scale in f32. Every operation is one IEEE f32
// operation, rounded as written (the host builds with -ffp-contract=off,
// nvcc with --fmad=false).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_QUANTIZEMATH_H
#define ZERO_RUNTIME_OPS_QUANTIZEMATH_H

#include "ElementMath.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace zero::runtime::quantize {

/// qmax: 127 for 8 bits, 7 for 4.
ZERO_HD inline int getMaxLevel(int bits) { return (1 << (bits - 1)) - 1; }

/// The one NaN the quantizer's results hold: the positive quiet NaN
/// 0x7fc00000. IEEE leaves which NaN an operation on a NaN returns to the
/// machine (x86 keeps the operand's, NVIDIA GPUs return 0x7fffffff), so
/// every result that may be a NaN is made this one (canonicalize).
ZERO_HD inline float getCanonicalNaN() { return ops::floatOfBits(0x7fc00000u); }

/// x, or the canonical NaN when x is a NaN.
ZERO_HD inline float canonicalize(float x) {
  return x != x ? getCanonicalNaN() : x;
}

/// What element x contributes to its block's absmax: |x|, or infinity when
/// x is not finite, so that the block's scale becomes NaN (getScale). Never
/// NaN, so that the maximum of magnitudes is exact in any order (the GPU
/// reduces a block in a tree, the host left to right). Bit tests, not
/// std::isfinite and std::fabs, which are host functions to nvcc.
ZERO_HD inline float getMagnitude(float x) {
  uint32_t magnitude = ops::bitsOfFloat(x) & 0x7fffffffu;
  return magnitude >= 0x7f800000u ? INFINITY : ops::floatOfBits(magnitude);
}

/// The larger of two magnitudes.
ZERO_HD inline float maxMagnitude(float a, float b) { return a < b ? b : a; }

/// The block's scale from the maximum of its magnitudes: absmax / qmax, 0
/// for zeros, NaN when an element was not finite.
ZERO_HD inline float getScale(float absmax, int maxLevel) {
  if (!(absmax <= FLT_MAX))
    return getCanonicalNaN();
  return absmax / static_cast<float>(maxLevel);
}

/// round(x / scale) to nearest even, in [-maxLevel, maxLevel]; 0 where the
/// scale is 0 or NaN (the scale alone then carries the block).
ZERO_HD inline int getLevel(float x, float scale, int maxLevel) {
  if (!(scale > 0))
    return 0;
#ifdef __CUDA_ARCH__
  float level = rintf(x / scale);
#else
  float level = std::nearbyint(x / scale);
#endif
  // Only a rounding error of x / scale could land beyond qmax.
  const float limit = static_cast<float>(maxLevel);
  level = level < -limit ? -limit : level > limit ? limit : level;
  return static_cast<int>(level);
}

/// A level as its 4-bit two's complement nibble.
ZERO_HD inline uint8_t toNibble(int level) {
  return static_cast<uint8_t>(level) & 0xF;
}

/// The byte of two int4 levels: element 2i in the low nibble.
ZERO_HD inline uint8_t packLevels(int even, int odd) {
  return static_cast<uint8_t>(toNibble(even) | (toNibble(odd) << 4));
}

/// Level i of packed values `in` of `bits` bits.
ZERO_HD inline int loadLevel(const uint8_t *in, int64_t i, int bits) {
  if (bits == 8)
    return static_cast<int8_t>(in[i]);
  int nibble = i % 2 == 0 ? in[i / 2] & 0xF : in[i / 2] >> 4;
  return nibble >= 8 ? nibble - 16 : nibble;
}

/// A level's value: level * scale in f32 (the canonical NaN in a block of
/// NaN scale).
ZERO_HD inline float dequantizeLevel(int level, float scale) {
  return canonicalize(static_cast<float>(level) * scale);
}

/// A running sum of dequantized values plus one more (qgZ's hop sums).
ZERO_HD inline float addToSum(float sum, float value) {
  return canonicalize(sum + value);
}

/// A sum divided by `divisor` (avg; 1 leaves it as it is).
ZERO_HD inline float divideSum(float sum, int64_t divisor) {
  return divisor == 1 ? sum : canonicalize(sum / static_cast<float>(divisor));
}

/// Scale `block` of scales stored as f32 bytes at any alignment (the packed
/// blocks of the quantized collectives start at any byte).
ZERO_HD inline float loadScale(const void *scales, int64_t block) {
  float scale;
  std::memcpy(&scale, static_cast<const unsigned char *>(scales) + block * 4,
              sizeof(scale));
  return scale;
}

ZERO_HD inline void storeScale(void *scales, int64_t block, float scale) {
  std::memcpy(static_cast<unsigned char *>(scales) + block * 4, &scale,
              sizeof(scale));
}

} // namespace zero::runtime::quantize

#endif // ZERO_RUNTIME_OPS_QUANTIZEMATH_H
