//===- Quantize.cpp - symmetric block quantization of floats --------------===//
//
// The block quantizer's loops over host memory, for the host backend, the
// loader (a quantized frozen tensor's initial values) and the tests; the
// element math is QuantizeMath.h's, which the CUDA kernels share.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"
#include "ElementMath.h"
#include "QuantizeMath.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace zero::runtime::quantize {

namespace {

/// The block's scale (quantize::getScale). `load(i)` is element i of the
/// block.
template <typename Load>
float getScale(const Load &load, int64_t size, int maxLevel) {
  float absmax = 0;
  for (int64_t i = 0; i < size; ++i)
    absmax = quantize::maxMagnitude(absmax, quantize::getMagnitude(load(i)));
  return quantize::getScale(absmax, maxLevel);
}

void storeLevel(uint8_t *out, int64_t i, int bits, int level) {
  if (bits == 8) {
    out[i] = static_cast<uint8_t>(static_cast<int8_t>(level));
    return;
  }
  uint8_t nibble = quantize::toNibble(level);
  uint8_t &byte = out[i / 2];
  byte = i % 2 == 0 ? static_cast<uint8_t>((byte & 0xF0) | nibble)
                    : static_cast<uint8_t>((byte & 0x0F) | (nibble << 4));
}

/// quantizeBlocks of the n floats `load(i)`, each block's scale passed to
/// `storeScale(block, scale)`.
template <typename Load, typename StoreScale>
void quantizeWith(const Load &load, int64_t n, int bits, int64_t blockSize,
                  uint8_t *out, const StoreScale &storeScale) {
  assert((bits == 4 || bits == 8) && blockSize >= 1 &&
         (bits == 8 || blockSize % 2 == 0));
  int maxLevel = getMaxLevel(bits);
  if (bits == 4)
    std::fill(out, out + getQuantizedBytes(n, bits), uint8_t(0));
  for (int64_t begin = 0, block = 0; begin < n; begin += blockSize, ++block) {
    int64_t size = std::min(blockSize, n - begin);
    float scale =
        getScale([&](int64_t i) { return load(begin + i); }, size, maxLevel);
    storeScale(block, scale);
    for (int64_t i = begin; i < begin + size; ++i)
      storeLevel(out, i, bits, getLevel(load(i), scale, maxLevel));
  }
}

/// Element i of `in` in `format`, as a float.
template <QuantizedFormat format> float loadElement(const void *in, int64_t i) {
  const auto *bytes = static_cast<const unsigned char *>(in);
  if constexpr (format == QuantizedFormat::F32) {
    float value;
    std::memcpy(&value, bytes + i * 4, sizeof(value));
    return value;
  } else {
    uint16_t bits;
    std::memcpy(&bits, bytes + i * 2, sizeof(bits));
    return format == QuantizedFormat::BF16 ? ops::widenBF16(bits)
                                           : ops::widenF16(bits);
  }
}

/// Stores `value` as element i of `out` in `format`, rounded to nearest even.
template <QuantizedFormat format>
void storeElement(void *out, int64_t i, float value) {
  auto *bytes = static_cast<unsigned char *>(out);
  if constexpr (format == QuantizedFormat::F32) {
    std::memcpy(bytes + i * 4, &value, sizeof(value));
  } else {
    uint16_t bits = format == QuantizedFormat::BF16
                        ? ops::narrowF32ToBF16(value)
                        : ops::narrowToF16(value);
    std::memcpy(bytes + i * 2, &bits, sizeof(bits));
  }
}

template <QuantizedFormat format>
void quantizeAs(const void *in, int64_t n, int bits, int64_t blockSize,
                uint8_t *out, void *scales) {
  quantizeWith([&](int64_t i) { return loadElement<format>(in, i); }, n, bits,
               blockSize, out,
               [&](int64_t block, float scale) {
                 quantize::storeScale(scales, block, scale);
               });
}

template <QuantizedFormat format>
void dequantizeAs(const uint8_t *in, const void *scales, int64_t n, int bits,
                  int64_t blockSize, void *out) {
  for (int64_t begin = 0, block = 0; begin < n; begin += blockSize, ++block) {
    float scale = loadScale(scales, block);
    for (int64_t i = begin; i < std::min(n, begin + blockSize); ++i)
      storeElement<format>(out, i,
                           dequantizeLevel(loadLevel(in, i, bits), scale));
  }
}

/// Calls `fn` with `format` as a compile-time constant
/// (std::integral_constant), so that the element loops are instantiated per
/// format instead of switching per element.
template <typename Fn> void dispatchFormat(QuantizedFormat format, Fn &&fn) {
  switch (format) {
  case QuantizedFormat::F32:
    return fn(std::integral_constant<QuantizedFormat, QuantizedFormat::F32>());
  case QuantizedFormat::BF16:
    return fn(std::integral_constant<QuantizedFormat, QuantizedFormat::BF16>());
  case QuantizedFormat::F16:
    return fn(std::integral_constant<QuantizedFormat, QuantizedFormat::F16>());
  }
}

} // namespace

void quantizeBlocks(const float *in, int64_t n, int bits, int64_t blockSize,
                    uint8_t *out, float *scales) {
  quantizeWith([in](int64_t i) { return in[i]; }, n, bits, blockSize, out,
               [scales](int64_t block, float scale) { scales[block] = scale; });
}

void dequantizeBlocks(const uint8_t *in, const float *scales, int64_t n,
                      int bits, int64_t blockSize, float *out) {
  assert((bits == 4 || bits == 8) && blockSize >= 1);
  for (int64_t i = 0; i < n; ++i)
    out[i] = dequantizeLevel(loadLevel(in, i, bits), scales[i / blockSize]);
}

void accumulateDequantized(const uint8_t *in, const void *scales, int64_t n,
                           int bits, int64_t blockSize, float *sums) {
  assert((bits == 4 || bits == 8) && blockSize >= 1);
  for (int64_t begin = 0, block = 0; begin < n; begin += blockSize, ++block) {
    float scale = loadScale(scales, block);
    for (int64_t i = begin; i < std::min(n, begin + blockSize); ++i)
      sums[i] =
          addToSum(sums[i], dequantizeLevel(loadLevel(in, i, bits), scale));
  }
}

void roundSums(const float *sums, int64_t n, int64_t divisor,
               QuantizedFormat format, void *out) {
  dispatchFormat(format, [&](auto as) {
    for (int64_t i = 0; i < n; ++i)
      storeElement<decltype(as)::value>(out, i, divideSum(sums[i], divisor));
  });
}

void quantizeElements(const void *in, QuantizedFormat format, int64_t n,
                      int bits, int64_t blockSize, uint8_t *out, void *scales) {
  dispatchFormat(format, [&](auto as) {
    quantizeAs<decltype(as)::value>(in, n, bits, blockSize, out, scales);
  });
}

void dequantizeElements(const uint8_t *in, const void *scales, int64_t n,
                        int bits, int64_t blockSize, QuantizedFormat format,
                        void *out) {
  assert((bits == 4 || bits == 8) && blockSize >= 1);
  dispatchFormat(format, [&](auto as) {
    dequantizeAs<decltype(as)::value>(in, scales, n, bits, blockSize, out);
  });
}

} // namespace zero::runtime::quantize
