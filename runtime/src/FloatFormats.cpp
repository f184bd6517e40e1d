//===- FloatFormats.cpp - bf16 and f16 conversions ------------------------===//

#include "zero/runtime/FloatFormats.h"

#include "ops/ElementMath.h"

namespace zero::runtime {

uint16_t roundToBF16(double value) { return ops::narrowToBF16(value); }
uint16_t roundToF16(double value) { return ops::narrowToF16(value); }
float f16ToFloat(uint16_t bits) { return ops::widenF16(bits); }
float bf16ToFloat(uint16_t bits) { return ops::widenBF16(bits); }
uint16_t floatToBF16(float value) { return ops::narrowF32ToBF16(value); }
uint32_t getFloatBits(float value) { return ops::bitsOfFloat(value); }
float getFloatFromBits(uint32_t bits) { return ops::floatOfBits(bits); }

} // namespace zero::runtime
