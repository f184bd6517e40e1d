//===- InitTest.cpp - counter-based deterministic random values -----------===//

#include "zero/runtime/Init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace zero::runtime;

static uint32_t bitsOf(float value) {
  uint32_t word;
  std::memcpy(&word, &value, 4);
  return word;
}

// Printed by `python3 test/Runtime/Inputs/zero_random.py` (its GOLDEN_*
// lists): the PyTorch reference draws the same values bit for bit.
TEST(Init, MatchesThePythonImplementation) {
  EXPECT_EQ(bitsOf(initNormal(0, "wte.weight", 0, 0.02f)), 0x3bc00f18u);
  EXPECT_EQ(bitsOf(initNormal(0, "wte.weight", 1, 0.02f)), 0xb9a65ea6u);
  EXPECT_EQ(bitsOf(initNormal(0, "wte.weight", 12345, 0.02f)), 0x3d1d18ddu);
  EXPECT_EQ(bitsOf(initNormal(7, "h.0.attn.c_attn.weight", 4097, 0.02f)),
            0xbd337493u);
  EXPECT_EQ(bitsOf(initNormal(1234567890123ull, "fc0.weight", 3, 1.0f)),
            0x3fe2f0f1u);
  EXPECT_EQ(bitsOf(initNormal(18446744073709551615ull, "x", 999999, 0.5f)),
            0xbdd0414fu);
  EXPECT_EQ(bitsOf(syntheticFloat(0, "inputs", 0, 0)), 0xbff82e87u);
  EXPECT_EQ(bitsOf(syntheticFloat(0, "inputs", 0, 1)), 0x3f0fe71au);
  EXPECT_EQ(bitsOf(syntheticFloat(0, "inputs", 5, 17)), 0x3ece0a96u);
  EXPECT_EQ(bitsOf(syntheticFloat(42, "inputs", 123456, 63)), 0x3f97214bu);
  EXPECT_EQ(syntheticInt(0, "labels", 0, 0, 16), 5);
  EXPECT_EQ(syntheticInt(0, "labels", 3, 1, 16), 7);
  EXPECT_EQ(syntheticInt(42, "labels", 99, 7, 1000), 511);
  EXPECT_EQ(syntheticInt(0, "tokens", 0, 12345, 65), 54);
  EXPECT_EQ(syntheticInt(9, "tokens", 0, 0, 50257), 49226);
}

TEST(Init, IsDeterministic) {
  for (int64_t i : {0, 1, 2, 1000, 1 << 30})
    EXPECT_EQ(bitsOf(initNormal(3, "w", i, 0.02f)),
              bitsOf(initNormal(3, "w", i, 0.02f)));
  // Seed, name and index all change the value.
  EXPECT_NE(initNormal(3, "w", 5, 1.0f), initNormal(4, "w", 5, 1.0f));
  EXPECT_NE(initNormal(3, "w", 5, 1.0f), initNormal(3, "v", 5, 1.0f));
  EXPECT_NE(initNormal(3, "w", 5, 1.0f), initNormal(3, "w", 6, 1.0f));
  // std scales the same draw.
  EXPECT_FLOAT_EQ(initNormal(3, "w", 5, 0.5f),
                  0.5f * initNormal(3, "w", 5, 1.0f));
}

TEST(Init, DoesNotDependOnChunking) {
  const int64_t n = 1001;
  std::vector<float> whole(n);
  fillNormal(11, "h.3.mlp.c_fc.weight", 0, n, 0.02f, whole.data());
  // Odd chunk boundaries split Box-Muller pairs across chunks (and ranks).
  std::vector<float> pieces(n);
  int64_t begin = 0;
  for (int64_t size : {1, 2, 333, 7, 500, 158}) {
    fillNormal(11, "h.3.mlp.c_fc.weight", begin, size, 0.02f,
               pieces.data() + begin);
    begin += size;
  }
  ASSERT_EQ(begin, n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(bitsOf(whole[i]), bitsOf(pieces[i])) << "element " << i;
    ASSERT_EQ(bitsOf(whole[i]),
              bitsOf(initNormal(11, "h.3.mlp.c_fc.weight", i, 0.02f)))
        << "element " << i;
  }
}

TEST(Init, HasTheRequestedStatistics) {
  const int64_t n = 100000;
  std::vector<float> values(n);
  fillNormal(0, "wte.weight", 0, n, 0.02f, values.data());
  double sum = 0, sumSquares = 0, sumFourth = 0;
  int64_t beyondTwoSigma = 0;
  for (float v : values) {
    sum += v;
    sumSquares += double(v) * v;
    sumFourth += double(v) * v * v * v;
    beyondTwoSigma += std::fabs(v) > 0.04f;
  }
  double mean = sum / n;
  double var = sumSquares / n - mean * mean;
  // Standard errors over 1e5 samples: mean 0.02 / sqrt(n) = 6.3e-5, std
  // 0.02 / sqrt(2n) = 4.5e-5; 5 of each.
  EXPECT_NEAR(mean, 0.0, 3.2e-4);
  EXPECT_NEAR(std::sqrt(var), 0.02, 2.3e-4);
  // A normal, not just any distribution with this variance: kurtosis 3 and
  // 4.55% beyond two sigma.
  EXPECT_NEAR(sumFourth / n / (var * var), 3.0, 0.08);
  EXPECT_NEAR(double(beyondTwoSigma) / n, 0.0455, 0.004);
  // Even (cosine) and odd (sine) elements are uncorrelated.
  double cross = 0;
  for (int64_t i = 0; i + 1 < n; i += 2)
    cross += double(values[i]) * values[i + 1];
  EXPECT_NEAR(cross / (n / 2) / var, 0.0, 0.03);
}

TEST(Init, SyntheticFloatsAreStandardNormalPerRow) {
  double sum = 0, sumSquares = 0;
  const int rows = 1000, width = 100;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t i = 0; i < width; ++i) {
      double v = syntheticFloat(5, "inputs", row, i);
      sum += v;
      sumSquares += v * v;
    }
  double n = rows * width;
  EXPECT_NEAR(sum / n, 0.0, 0.016);
  EXPECT_NEAR(std::sqrt(sumSquares / n), 1.0, 0.012);
  // Rows differ, and a row is the same whoever asks for it.
  EXPECT_NE(syntheticFloat(5, "inputs", 0, 3),
            syntheticFloat(5, "inputs", 1, 3));
  EXPECT_EQ(bitsOf(syntheticFloat(5, "inputs", 77, 3)),
            bitsOf(syntheticFloat(5, "inputs", 77, 3)));
}

TEST(Init, SyntheticIntsAreUniformInTheirBound) {
  const int64_t bound = 10;
  std::vector<int64_t> counts(bound, 0);
  const int64_t n = 100000;
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = syntheticInt(1, "labels", i / 16, i % 16, bound);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, bound);
    ++counts[v];
  }
  // Expected 10000 each, standard deviation ~95.
  for (int64_t c : counts)
    EXPECT_NEAR(double(c), 10000.0, 500.0);
  for (int64_t i = 0; i < 100; ++i)
    EXPECT_EQ(syntheticInt(1, "labels", 3, i, 1), 0);
}
