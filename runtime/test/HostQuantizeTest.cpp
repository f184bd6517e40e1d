//===- HostQuantizeTest.cpp - block quantization round trips
//---------------===//
//
// The int8 and int4 block quantizer of the quantized collectives: the error
// bound of every element, exact zeros, non-finite blocks propagated as NaN
// without touching their neighbours, ties to even, the int4 packing.
//
//===----------------------------------------------------------------------===//

#include "ops/Quantize.h"

#include "zero/runtime/FloatFormats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace zero::runtime::quantize;

namespace {

struct RoundTrip {
  std::vector<uint8_t> packed;
  std::vector<float> scales;
  std::vector<float> values;
};

RoundTrip roundTrip(const std::vector<float> &in, int bits, int64_t blockSize) {
  int64_t n = static_cast<int64_t>(in.size());
  RoundTrip r;
  r.packed.assign(static_cast<size_t>(getQuantizedBytes(n, bits)), 0xAA);
  r.scales.assign(static_cast<size_t>(getNumBlocks(n, blockSize)), -1);
  r.values.assign(in.size(), -1);
  quantizeBlocks(in.data(), n, bits, blockSize, r.packed.data(),
                 r.scales.data());
  dequantizeBlocks(r.packed.data(), r.scales.data(), n, bits, blockSize,
                   r.values.data());
  return r;
}

class QuantizeBounds
    : public ::testing::TestWithParam<std::tuple<int, int64_t, int64_t>> {};

TEST_P(QuantizeBounds, EveryElementWithinHalfAStep) {
  auto [bits, blockSize, n] = GetParam();
  std::mt19937 random(bits * 1000 + blockSize + n);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> in(static_cast<size_t>(n));
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = normal(random) * std::pow(10.0f, static_cast<float>(i % 7) - 3);
  RoundTrip r = roundTrip(in, bits, blockSize);
  int maxLevel = (1 << (bits - 1)) - 1;
  for (int64_t block = 0; block * blockSize < n; ++block) {
    float absmax = 0;
    for (int64_t i = block * blockSize;
         i < std::min(n, (block + 1) * blockSize); ++i)
      absmax = std::max(absmax, std::fabs(in[i]));
    EXPECT_EQ(r.scales[block], absmax / maxLevel);
    float bound = absmax / (2 * maxLevel) * (1 + 1e-5f);
    for (int64_t i = block * blockSize;
         i < std::min(n, (block + 1) * blockSize); ++i)
      ASSERT_LE(std::fabs(r.values[i] - in[i]), bound)
          << "element " << i << " of block " << block;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BitsBlocksLengths, QuantizeBounds,
    ::testing::Values(std::make_tuple(8, 64, 1000), // a short last block
                      std::make_tuple(8, 1, 17), std::make_tuple(8, 4096, 4096),
                      std::make_tuple(4, 32, 999), // an odd length
                      std::make_tuple(4, 2, 10),
                      std::make_tuple(4, 256, 4097)));

TEST(Quantize, ZeroBlocksAreExact) {
  std::vector<float> in(24, 0.0f);
  in[20] = 3.0f; // only the last block is not zero
  for (int bits : {4, 8}) {
    RoundTrip r = roundTrip(in, bits, 8);
    EXPECT_EQ(r.scales[0], 0.0f);
    EXPECT_EQ(r.scales[1], 0.0f);
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(r.values[i], 0.0f) << i;
    EXPECT_FLOAT_EQ(r.values[20], 3.0f);
  }
}

TEST(Quantize, NonFiniteBlocksComeBackNaN) {
  float inf = std::numeric_limits<float>::infinity();
  float nan = std::numeric_limits<float>::quiet_NaN();
  // Blocks of 4: [1, 2, inf, 4] [5, 6, 7, 8] [nan, 0, 0, 0] [-inf].
  std::vector<float> in = {1, 2, inf, 4, 5, 6, 7, 8, nan, 0, 0, 0, -inf};
  for (int bits : {4, 8}) {
    RoundTrip r = roundTrip(in, bits, 4);
    for (int i : {0, 1, 2, 3, 8, 9, 10, 11, 12})
      EXPECT_TRUE(std::isnan(r.values[i])) << bits << " bits, element " << i;
    int maxLevel = (1 << (bits - 1)) - 1;
    for (int i = 4; i < 8; ++i)
      EXPECT_LE(std::fabs(r.values[i] - in[i]),
                8.0f / (2 * maxLevel) * 1.00001f)
          << i;
  }
}

TEST(Quantize, RoundsToNearestEven) {
  // Scale 1 (absmax 127): 2.5 -> 2, 3.5 -> 4, -2.5 -> -2, 126.5 -> 126.
  std::vector<float> in = {127, 2.5f, 3.5f, -2.5f, 126.5f, -127};
  RoundTrip r = roundTrip(in, 8, 8);
  EXPECT_EQ(r.scales[0], 1.0f);
  std::vector<int8_t> levels(r.packed.begin(), r.packed.end());
  EXPECT_EQ(levels, (std::vector<int8_t>{127, 2, 4, -2, 126, -127}));
}

TEST(Quantize, PacksInt4TwoToAByteLowNibbleFirst) {
  // Scale 1 (absmax 7): levels 7, -7, 1, -1, 0 -> bytes 0x97, 0xF1, 0x00.
  std::vector<float> in = {7, -7, 1, -1, 0};
  RoundTrip r = roundTrip(in, 4, 6);
  ASSERT_EQ(r.packed.size(), 3u);
  EXPECT_EQ(r.packed[0], 0x97);
  EXPECT_EQ(r.packed[1], 0xF1);
  EXPECT_EQ(r.packed[2], 0x00);
  EXPECT_EQ(r.values, in);
}

// quantizeElements and dequantizeElements (the quantized all-gather's):
// the same blocks as quantizeBlocks of the elements read as floats, scales
// stored as bytes at any alignment, results rounded to the element type.
TEST(Quantize, ElementsMatchTheFloatQuantizerAtAnyAlignment) {
  using zero::runtime::bf16ToFloat;
  using zero::runtime::f16ToFloat;
  using zero::runtime::floatToBF16;
  using zero::runtime::roundToF16;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> values = {0.1f, -2.5f, 3.25f, nan,  0.0f, 0.0f,  0.0f,
                               7.0f, 1e-3f, -9.5f, 4.0f, 0.5f, -0.75f};
  const int64_t n = static_cast<int64_t>(values.size()), blockSize = 3;
  const int64_t blocks = getNumBlocks(n, blockSize);
  for (QuantizedFormat format :
       {QuantizedFormat::F32, QuantizedFormat::BF16, QuantizedFormat::F16}) {
    const int width = format == QuantizedFormat::F32 ? 4 : 2;
    auto toFormat = [&](float x) {
      if (format == QuantizedFormat::BF16)
        return bf16ToFloat(floatToBF16(x));
      if (format == QuantizedFormat::F16)
        return f16ToFloat(roundToF16(x));
      return x;
    };
    // The elements at an odd byte offset.
    std::vector<unsigned char> in(1 + n * width);
    std::vector<float> asFloats(n);
    for (int64_t i = 0; i < n; ++i) {
      asFloats[i] = toFormat(values[i]);
      if (format == QuantizedFormat::F32) {
        std::memcpy(&in[1 + i * 4], &asFloats[i], 4);
      } else {
        uint16_t bits = format == QuantizedFormat::BF16 ? floatToBF16(values[i])
                                                        : roundToF16(values[i]);
        std::memcpy(&in[1 + i * 2], &bits, 2);
      }
    }
    RoundTrip expected = roundTrip(asFloats, 8, blockSize);
    // Scales at byte 1, values after them: nothing aligned.
    std::vector<unsigned char> packed(1 + blocks * 4 + n, 0xAA);
    quantizeElements(&in[1], format, n, 8, blockSize, &packed[1 + blocks * 4],
                     &packed[1]);
    std::vector<float> scales(blocks);
    std::memcpy(scales.data(), &packed[1], blocks * 4);
    for (int64_t b = 0; b < blocks; ++b) {
      if (std::isnan(expected.scales[b]))
        EXPECT_TRUE(std::isnan(scales[b])) << b;
      else
        EXPECT_EQ(scales[b], expected.scales[b]) << b;
    }
    EXPECT_EQ(
        std::vector<uint8_t>(packed.begin() + 1 + blocks * 4, packed.end()),
        expected.packed);
    std::vector<unsigned char> out(1 + n * width);
    dequantizeElements(&packed[1 + blocks * 4], &packed[1], n, 8, blockSize,
                       format, &out[1]);
    for (int64_t i = 0; i < n; ++i) {
      float got;
      if (format == QuantizedFormat::F32) {
        std::memcpy(&got, &out[1 + i * 4], 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, &out[1 + i * 2], 2);
        got = format == QuantizedFormat::BF16 ? bf16ToFloat(bits)
                                              : f16ToFloat(bits);
      }
      float want = toFormat(expected.values[i]);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << i;
      else
        EXPECT_EQ(got, want) << i;
    }
    // The NaN's block (elements 3 to 5) comes back NaN.
    EXPECT_TRUE(std::isnan(expected.values[4]));
  }
}

// accumulateDequantized (the quantized reduce-scatter's): sums[i] += q[i] *
// scale in f32, the same products as dequantizeBlocks, scales read at any
// alignment; a NaN scale poisons its block only.
TEST(Quantize, AccumulatesDequantizedBlocksAtAnyAlignment) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> in = {0.5f, -3.0f, 1.25f, 7.5f, nan, 2.0f,
                           0.0f, 0.0f,  -1.0f, 6.0f, 0.1f};
  const int64_t n = static_cast<int64_t>(in.size()), blockSize = 4;
  const int64_t blocks = getNumBlocks(n, blockSize);
  for (int bits : {4, 8}) {
    RoundTrip r = roundTrip(in, bits, blockSize);
    // The scales at byte 3.
    std::vector<unsigned char> scales(3 + blocks * 4, 0xAA);
    std::memcpy(&scales[3], r.scales.data(), blocks * 4);
    std::vector<float> sums(in.size());
    for (size_t i = 0; i < sums.size(); ++i)
      sums[i] = 0.375f * static_cast<float>(i) - 1.0f;
    std::vector<float> expected = sums;
    accumulateDequantized(r.packed.data(), &scales[3], n, bits, blockSize,
                          sums.data());
    for (int64_t i = 0; i < n; ++i) {
      if (i >= 4 && i < 8) {
        EXPECT_TRUE(std::isnan(sums[i])) << bits << " bits, element " << i;
        continue;
      }
      EXPECT_EQ(sums[i], expected[i] + r.values[i])
          << bits << " bits, element " << i;
    }
    EXPECT_FALSE(std::isnan(r.values[3]));
  }
}

// An odd count of int4 values leaves the last byte's high nibble 0, whatever
// the buffer held: the packed chunks of a reduce-scatter are byte-exact.
TEST(Quantize, Int4OddCountLeavesTheLastHighNibbleZero) {
  std::vector<float> in = {-7, 3, 1, -2, 5};
  std::vector<uint8_t> packed(3, 0xFF);
  std::vector<float> scales(1, -1);
  quantizeBlocks(in.data(), 5, 4, 6, packed.data(), scales.data());
  EXPECT_EQ(scales[0], 1.0f);
  EXPECT_EQ(packed[2], 0x05);
  std::vector<unsigned char> elementScales(4);
  std::vector<uint8_t> elementPacked(3, 0xFF);
  quantizeElements(in.data(), QuantizedFormat::F32, 5, 4, 6,
                   elementPacked.data(), elementScales.data());
  EXPECT_EQ(elementPacked, packed);
}

} // namespace
