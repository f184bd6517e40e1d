//===- FloatFormats.cpp - bf16 and f16 conversions ------------------------===//

#include "zero/runtime/FloatFormats.h"

#include <algorithm>

namespace zero::runtime {

/// Rounds a double to a binary format with `mantBits` stored mantissa bits
/// and `expBits` exponent bits (IEEE layout: sign, exponent, mantissa), to
/// nearest with ties to even, with denormals and overflow to infinity.
static uint16_t roundToFormat(double value, int mantBits, int expBits) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint16_t sign =
      static_cast<uint16_t>((bits >> 63) << (mantBits + expBits));
  const int exp = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t mant = bits & ((uint64_t(1) << 52) - 1);
  const int bias = (1 << (expBits - 1)) - 1;
  const uint16_t infBits =
      static_cast<uint16_t>(((1 << expBits) - 1) << mantBits);
  if (exp == 0x7ff) // NaN (quiet, sign kept) or infinity
    return mant ? sign | infBits | static_cast<uint16_t>(1u << (mantBits - 1))
                : sign | infBits;
  // Double zeros and denormals (< 2^-1022) are far below the smallest 16-bit
  // denormal: they round to a signed zero.
  if (exp == 0)
    return sign;
  // value = sig * 2^(exp - 1075); round it to a multiple of 2^q, the ulp of
  // the target at this magnitude (fixed below the smallest normal exponent).
  const uint64_t sig = mant | (uint64_t(1) << 52);
  const int emin = 1 - bias;
  int q = std::max(exp - 1023, emin) - mantBits;
  const int shift = q - (exp - 1075); // >= 52 - mantBits > 0
  uint64_t r = 0;
  if (shift < 54) { // else value < 2^(q-1): rounds to zero
    r = sig >> shift;
    const uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (r & 1)))
      ++r;
  }
  if (r < (uint64_t(1) << mantBits)) // zero or a denormal
    return sign | static_cast<uint16_t>(r);
  if (r == (uint64_t(1) << (mantBits + 1))) { // rounding carried out
    r >>= 1;
    ++q;
  }
  const int biased = q + mantBits + bias;
  if (biased >= (1 << expBits) - 1)
    return sign | infBits;
  return sign | static_cast<uint16_t>(biased << mantBits) |
         static_cast<uint16_t>(r - (uint64_t(1) << mantBits));
}

uint16_t roundToBF16(double value) { return roundToFormat(value, 7, 8); }

uint16_t roundToF16(double value) { return roundToFormat(value, 10, 5); }

} // namespace zero::runtime
