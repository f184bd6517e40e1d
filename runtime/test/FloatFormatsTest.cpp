//===- FloatFormatsTest.cpp - bf16 and f16 rounding -----------------------===//

#include "zero/runtime/FloatFormats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace zero::runtime;

static const double kInf = std::numeric_limits<double>::infinity();
static const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(FloatFormats, BF16RoundsToNearestEven) {
  EXPECT_EQ(roundToBF16(1.0), 0x3F80);
  EXPECT_EQ(roundToBF16(-2.0), 0xC000);
  // The ulp at 1 is 2^-7: halfway cases go to the even neighbour.
  EXPECT_EQ(roundToBF16(1.0 + std::ldexp(1, -8)), 0x3F80);
  EXPECT_EQ(roundToBF16(1.0 + 3 * std::ldexp(1, -8)), 0x3F82);
  EXPECT_EQ(roundToBF16(1.0 + std::ldexp(1, -8) + std::ldexp(1, -30)), 0x3F81);
  // Rounding once from double: through f32 this would become a tie first.
  EXPECT_EQ(roundToBF16(1.0 + std::ldexp(1, -8) + std::ldexp(1, -40)), 0x3F81);
  EXPECT_EQ(roundToBF16(3.140625), 0x4049);
  EXPECT_EQ(roundToBF16(0.0), 0x0000);
  EXPECT_EQ(roundToBF16(-0.0), 0x8000);
}

TEST(FloatFormats, BF16Specials) {
  EXPECT_EQ(roundToBF16(kInf), 0x7F80);
  EXPECT_EQ(roundToBF16(-kInf), 0xFF80);
  uint16_t nan = roundToBF16(kNaN);
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x007F, 0);
  EXPECT_TRUE(std::isnan(bf16ToFloat(nan)));
  EXPECT_EQ(roundToBF16(-kNaN) & 0x8000, 0x8000);
  // The largest bf16, and the first value that rounds past it.
  const double max = bf16ToFloat(0x7F7F);
  EXPECT_EQ(roundToBF16(max), 0x7F7F);
  EXPECT_EQ(roundToBF16(max + std::ldexp(1, 127 - 8) * 0.99), 0x7F7F);
  EXPECT_EQ(roundToBF16(max + std::ldexp(1, 127 - 8)), 0x7F80);
  EXPECT_EQ(roundToBF16(1e300), 0x7F80);
  // Denormals: the smallest is 2^-133.
  EXPECT_EQ(roundToBF16(std::ldexp(1, -133)), 0x0001);
  EXPECT_EQ(roundToBF16(std::ldexp(1, -134)), 0x0000); // tie to even 0
  EXPECT_EQ(roundToBF16(std::ldexp(3, -135)), 0x0001);
  EXPECT_EQ(roundToBF16(-std::ldexp(3, -134)), 0x8002); // 1.5: tie to 2
  EXPECT_EQ(roundToBF16(std::ldexp(127, -133)), 0x007F);
  EXPECT_EQ(roundToBF16(std::ldexp(255, -134)), 0x0080); // to the min normal
  EXPECT_EQ(roundToBF16(1e-300), 0x0000);
}

TEST(FloatFormats, BF16FromFloatMatchesRoundingFromDouble) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t pattern = bits(rng);
    float value;
    std::memcpy(&value, &pattern, sizeof(value));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(value))));
      continue;
    }
    ASSERT_EQ(floatToBF16(value), roundToBF16(value)) << value;
  }
  for (float value : {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::max(),
                      std::numeric_limits<float>::denorm_min()})
    EXPECT_EQ(floatToBF16(value), roundToBF16(value)) << value;
}

TEST(FloatFormats, F16RoundsToNearestEven) {
  EXPECT_EQ(roundToF16(1.0), 0x3C00);
  EXPECT_EQ(roundToF16(-2.0), 0xC000);
  EXPECT_EQ(roundToF16(0.1), 0x2E66);
  EXPECT_EQ(roundToF16(1.0 / 3.0), 0x3555);
  EXPECT_EQ(roundToF16(1.0 + std::ldexp(1, -11)), 0x3C00); // tie to even
  EXPECT_EQ(roundToF16(1.0 + 3 * std::ldexp(1, -11)), 0x3C02);
  EXPECT_EQ(roundToF16(65504.0), 0x7BFF);
  EXPECT_EQ(roundToF16(65519.0), 0x7BFF);
  EXPECT_EQ(roundToF16(65520.0), 0x7C00); // overflow rounds to infinity
  EXPECT_EQ(roundToF16(1e10), 0x7C00);
  EXPECT_EQ(roundToF16(-1e10), 0xFC00);
  EXPECT_EQ(roundToF16(kInf), 0x7C00);
  EXPECT_EQ(roundToF16(kNaN) & 0x7E00, 0x7E00);
  // Denormals: the smallest is 2^-24, the smallest normal 2^-14.
  EXPECT_EQ(roundToF16(std::ldexp(1, -24)), 0x0001);
  EXPECT_EQ(roundToF16(std::ldexp(1, -25)), 0x0000);
  EXPECT_EQ(roundToF16(std::ldexp(1, -25) * 1.0001), 0x0001);
  EXPECT_EQ(roundToF16(std::ldexp(1023, -24)), 0x03FF);
  EXPECT_EQ(roundToF16(std::ldexp(1, -14)), 0x0400);
  EXPECT_EQ(roundToF16(-std::ldexp(1, -30)), 0x8000);
}

TEST(FloatFormats, F16RoundTripsEveryPattern) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double value = f16ToDouble(static_cast<uint16_t>(bits));
    if ((bits & 0x7C00) == 0x7C00 && (bits & 0x03FF)) {
      EXPECT_TRUE(std::isnan(value));
      continue;
    }
    ASSERT_EQ(roundToF16(value), bits) << value;
  }
  EXPECT_EQ(f16ToDouble(0x7BFF), 65504.0);
  EXPECT_EQ(f16ToDouble(0x0001), std::ldexp(1, -24));
  EXPECT_EQ(f16ToDouble(0xFC00), -kInf);
}

TEST(FloatFormats, BF16RoundTripsEveryPattern) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = bf16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value))
      continue;
    ASSERT_EQ(roundToBF16(value), bits) << value;
  }
}
