//===- ElementOps.cpp - element arithmetic for collectives ----------------===//

#include "ElementOps.h"

#include <cmath>
#include <cstring>

namespace zero::runtime::comm {

namespace {
uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// `value` rounded to float toward zero, with the last bit set when inexact
/// ("round to odd"): a later rounding to fewer bits is then correct.
float roundToOddFloat(double value) {
  float rounded = static_cast<float>(value);
  if (std::isnan(value) || static_cast<double>(rounded) == value)
    return rounded;
  if (std::fabs(static_cast<double>(rounded)) > std::fabs(value))
    rounded = std::nextafter(rounded, 0.0f);
  return bitsFloat(floatBits(rounded) | 1u);
}
} // namespace

float bf16ToFloat(uint16_t bits) {
  return bitsFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t floatToBf16(float value) {
  uint32_t bits = floatBits(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1F;
  uint32_t mantissa = h & 0x3FF;
  if (exponent == 0x1F)
    return bitsFloat(sign | 0x7F800000 | (mantissa << 13));
  if (exponent == 0) {
    // Subnormal (or zero): mantissa * 2^-24.
    float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToF16(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t absBits = bits & 0x7FFFFFFF;
  if (absBits > 0x7F800000) // NaN
    return sign | 0x7E00;
  if (absBits >= 0x477FF000) // rounds to or beyond 65520: infinity
    return sign | 0x7C00;
  if (absBits < 0x38800000) {
    // Below the smallest normal half (2^-14): a subnormal, in units of
    // 2^-24, rounded to nearest even by the float addition.
    float magic = bitsFloat(absBits) + 0.5f; // 0.5 = 2^-1: ulp 2^-24
    return sign | static_cast<uint16_t>(floatBits(magic) - floatBits(0.5f));
  }
  uint32_t rounded = absBits + 0xFFF + ((absBits >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000) >> 13);
}

uint16_t doubleToBf16(double value) {
  return floatToBf16(roundToOddFloat(value));
}

uint16_t doubleToF16(double value) {
  return floatToF16(roundToOddFloat(value));
}

void reduce16(const uint16_t *in, uint16_t *inout, int64_t count, DType type,
              ReduceOp op) {
  bool bf16 = type == DType::BF16;
  for (int64_t i = 0; i < count; ++i) {
    double a = bf16 ? bf16ToFloat(in[i]) : f16ToFloat(in[i]);
    double b = bf16 ? bf16ToFloat(inout[i]) : f16ToFloat(inout[i]);
    double r = 0;
    switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      r = a + b;
      break;
    case ReduceOp::Max:
      r = std::isnan(a) || a > b ? a : b;
      break;
    case ReduceOp::Min:
      r = std::isnan(a) || a < b ? a : b;
      break;
    }
    inout[i] = bf16 ? doubleToBf16(r) : doubleToF16(r);
  }
}

void divideElements(void *data, int64_t count, DType type, int64_t divisor) {
  if (divisor == 1)
    return;
  switch (type) {
  case DType::F32: {
    float *p = static_cast<float *>(data);
    float d = static_cast<float>(divisor);
    for (int64_t i = 0; i < count; ++i)
      p[i] /= d;
    return;
  }
  case DType::F64: {
    double *p = static_cast<double *>(data);
    for (int64_t i = 0; i < count; ++i)
      p[i] /= static_cast<double>(divisor);
    return;
  }
  case DType::BF16:
  case DType::F16: {
    uint16_t *p = static_cast<uint16_t *>(data);
    bool bf16 = type == DType::BF16;
    for (int64_t i = 0; i < count; ++i) {
      double v = (bf16 ? bf16ToFloat(p[i]) : f16ToFloat(p[i])) /
                 static_cast<double>(divisor);
      p[i] = bf16 ? doubleToBf16(v) : doubleToF16(v);
    }
    return;
  }
  case DType::I64:
  case DType::Index: {
    int64_t *p = static_cast<int64_t *>(data);
    for (int64_t i = 0; i < count; ++i)
      p[i] /= divisor;
    return;
  }
  case DType::I32: {
    int32_t *p = static_cast<int32_t *>(data);
    for (int64_t i = 0; i < count; ++i)
      p[i] = static_cast<int32_t>(p[i] / divisor);
    return;
  }
  case DType::I1:
    return;
  }
}

} // namespace zero::runtime::comm
