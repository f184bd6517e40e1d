//===- FloatFormats.h - bf16 and f16 conversions ----------------*- C++ -*-===//
//
// The 16-bit float formats of the schedule are stored as their IEEE bit
// patterns in uint16_t. Rounding is to nearest, ties to even, from double, so
// that "compute in double, round to the result type" rounds once. NaN stays
// NaN (quiet, sign kept), out-of-range values become infinities, tiny values
// become denormals or signed zeros.
//
// The runtime's API for them; its backends use the definitions these call,
// src/ops/ElementMath.h, which the GPU compiles too.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_FLOATFORMATS_H
#define ZERO_RUNTIME_FLOATFORMATS_H

#include <cstdint>

namespace zero::runtime {

/// Rounds `value` to the nearest bfloat16 (ties to even).
uint16_t roundToBF16(double value);
/// Rounds `value` to the nearest IEEE half (ties to even).
uint16_t roundToF16(double value);
/// The exact value of an IEEE half (every half is exact in f32).
float f16ToFloat(uint16_t bits);
inline double f16ToDouble(uint16_t bits) { return f16ToFloat(bits); }
/// The exact value of a bfloat16: its bits are the upper half of an f32.
float bf16ToFloat(uint16_t bits);
/// Rounds an f32 to bfloat16; the same result as roundToBF16(double(value))
/// (an f32 is exact in double).
uint16_t floatToBF16(float value);

/// The bits of an f32, and the f32 of some bits (copied: no aliasing).
uint32_t getFloatBits(float value);
float getFloatFromBits(uint32_t bits);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_FLOATFORMATS_H
