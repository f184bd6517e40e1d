//===- QuantizeCases.h - inputs of the block quantizer tests ----*- C++ -*-===//
//
// The cases QuantizeGpuTest and QuantizeKernelsOnCpuTest run the CUDA
// quantizer's kernels on, against the host quantizer (ops/Quantize.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_QUANTIZECASES_H
#define ZERO_RUNTIME_TEST_CUDA_QUANTIZECASES_H

#include "ops/Quantize.h"

#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/Program.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace zero::runtime::test {

/// n floats: normal values of several magnitudes, with a block of zeros,
/// exact ties (x / scale = k + 0.5), and, where `nonFinite`, an infinity
/// and a NaN in two other blocks.
inline std::vector<float> makeFloats(int64_t n, int64_t blockSize,
                                     bool nonFinite, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    x[i] =
        normal(rng) * std::ldexp(1.0f, static_cast<int>(i / blockSize % 9) - 4);
  const int64_t blocks = getNumBlocks(n, blockSize);
  if (blocks > 1)
    for (int64_t i = blockSize; i < std::min(n, 2 * blockSize); ++i)
      x[i] = 0.0f;
  // Ties: 127 * 0.5 / 127 steps of a block whose absmax is 127.
  if (blocks > 2 && blockSize >= 4) {
    const int64_t b = 2 * blockSize;
    x[b] = 127.0f;
    for (int64_t i = b + 1; i < std::min(n, b + blockSize); ++i)
      x[i] = static_cast<float>(i % 7) + 0.5f;
  }
  if (nonFinite && blocks > 4) {
    x[3 * blockSize] = std::numeric_limits<float>::infinity();
    x[4 * blockSize + blockSize / 2] = std::numeric_limits<float>::quiet_NaN();
  }
  return x;
}

/// `x` in `type`'s bytes (bf16, f16 rounded to nearest even).
inline std::vector<uint8_t> asElements(const std::vector<float> &x,
                                       DType type) {
  const size_t width = static_cast<size_t>(getDTypeWidth(type));
  std::vector<uint8_t> bytes(x.size() * width);
  for (size_t i = 0; i < x.size(); ++i) {
    if (type == DType::F32) {
      std::memcpy(&bytes[i * 4], &x[i], 4);
      continue;
    }
    uint16_t h = type == DType::BF16 ? floatToBF16(x[i]) : roundToF16(x[i]);
    std::memcpy(&bytes[i * 2], &h, 2);
  }
  return bytes;
}

struct QuantizeCase {
  DType type;
  int bits;
  int64_t blockSize;
  int64_t n;
};

inline std::vector<QuantizeCase> getQuantizeCases() {
  std::vector<QuantizeCase> all;
  for (DType type : {DType::F32, DType::BF16, DType::F16})
    for (int bits : {8, 4})
      for (int64_t blockSize : {1, 2, 6, 64, 300, 2048})
        for (int64_t n : {1, 7, 64, 1000, 1001, 5000}) {
          if (bits == 4 && blockSize % 2 != 0)
            continue;
          all.push_back({type, bits, blockSize, n});
        }
  return all;
}

inline std::string describeQuantizeCase(const QuantizeCase &c) {
  return std::string(getDTypeName(c.type)) + ", " + std::to_string(c.bits) +
         " bits, blocks of " + std::to_string(c.blockSize) + ", n " +
         std::to_string(c.n);
}

inline constexpr size_t kScaleOffset =
    3; // scales at an odd byte, as when packed

/// Case c's elements quantized by the host and packed (kScaleOffset bytes,
/// the scales, the values), and the elements the host dequantizes them to.
struct PackedCase {
  std::vector<uint8_t> packed;
  size_t scaleBytes = 0;
  std::vector<uint8_t> dequantized;
};

inline PackedCase packOnHost(const QuantizeCase &c, unsigned seed) {
  const std::vector<uint8_t> in =
      asElements(makeFloats(c.n, c.blockSize, true, seed), c.type);
  PackedCase result;
  result.scaleBytes = static_cast<size_t>(4 * getNumBlocks(c.n, c.blockSize));
  result.packed.resize(kScaleOffset + result.scaleBytes +
                       static_cast<size_t>(getQuantizedBytes(c.n, c.bits)));
  uint8_t *scales = result.packed.data() + kScaleOffset;
  uint8_t *values = scales + result.scaleBytes;
  const quantize::QuantizedFormat format = quantize::getQuantizedFormat(c.type);
  quantize::quantizeElements(in.data(), format, c.n, c.bits, c.blockSize,
                             values, scales);
  result.dequantized.resize(in.size());
  quantize::dequantizeElements(values, scales, c.n, c.bits, c.blockSize, format,
                               result.dequantized.data());
  return result;
}

/// One sender's hop of qgZ's quantized reduce-scatter: `x` quantized to
/// int4 by the host and packed (1 byte, the scales, the values: the scales
/// at an odd offset), and the host's accumulation of it into `sums`.
struct PackedHop {
  std::vector<uint8_t> packed;
  size_t scaleBytes = 0;
};

inline PackedHop packHopOnHost(const std::vector<float> &x, int64_t blockSize,
                               std::vector<float> &sums) {
  const int64_t n = static_cast<int64_t>(x.size());
  PackedHop hop;
  hop.scaleBytes = static_cast<size_t>(4 * getNumBlocks(n, blockSize));
  hop.packed.resize(1 + hop.scaleBytes +
                    static_cast<size_t>(getQuantizedBytes(n, 4)));
  uint8_t *scales = hop.packed.data() + 1;
  uint8_t *values = scales + hop.scaleBytes;
  quantize::quantizeElements(x.data(), quantize::QuantizedFormat::F32, n, 4,
                             blockSize, values, scales);
  quantize::accumulateDequantized(values, scales, n, 4, blockSize, sums.data());
  return hop;
}

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_CUDA_QUANTIZECASES_H
