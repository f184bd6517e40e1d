//===- FloatFormats.h - bf16 and f16 conversions ----------------*- C++ -*-===//
//
// The 16-bit float formats of the schedule are stored as their IEEE bit
// patterns in uint16_t. Rounding is to nearest, ties to even, from double, so
// that "compute in double, round to the result type" rounds once. NaN stays
// NaN (quiet, sign kept), out-of-range values become infinities, tiny values
// become denormals or signed zeros.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_FLOATFORMATS_H
#define ZERO_RUNTIME_FLOATFORMATS_H

#include "zero/runtime/Portable.h"

#include <cstdint>
#include <cstring>

namespace zero::runtime {

/// Rounds `value` to the nearest bfloat16 (ties to even).
uint16_t roundToBF16(double value);
/// Rounds `value` to the nearest IEEE half (ties to even).
uint16_t roundToF16(double value);
/// The exact value of an IEEE half (every half is exact in f32).
ZERO_HD inline float f16ToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t magnitude = bits & 0x7fff;
  uint32_t wide;
  if (magnitude >= 0x7c00) { // infinity or NaN, payload kept
    wide = sign | 0x7f800000u | ((magnitude & 0x3ff) << 13);
  } else if (magnitude >= 0x0400) { // normal: rebias the exponent
    wide = sign | ((magnitude + ((127 - 15) << 10)) << 13);
  } else { // zero or denormal: magnitude * 2^-24, exact
    float value = static_cast<float>(magnitude) * 5.9604644775390625e-8f;
    return sign ? -value : value;
  }
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}
inline double f16ToDouble(uint16_t bits) { return f16ToFloat(bits); }

/// The bits of an f32, and the f32 of some bits (copied: no aliasing).
ZERO_HD inline uint32_t getFloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
ZERO_HD inline float getFloatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// The exact value of a bfloat16: its bits are the upper half of an f32.
ZERO_HD inline float bf16ToFloat(uint16_t bits) {
  return getFloatFromBits(static_cast<uint32_t>(bits) << 16);
}

/// Rounds an f32 to bfloat16; the same result as roundToBF16(double(value))
/// (an f32 is exact in double), but cheap enough for element loops. These
/// three are also the CUDA backend's (ZERO_HD), so that its quantized
/// collectives read and write 16-bit floats as the host does.
ZERO_HD inline uint16_t floatToBF16(float value) {
  uint32_t bits = getFloatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign, make it quiet
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_FLOATFORMATS_H
