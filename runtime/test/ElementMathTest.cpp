//===- ElementMathTest.cpp - the element arithmetic every backend runs ----===//
//
// ops/ElementMath.h is compiled by the host, by nvcc for the CUDA backend's
// kernels, and by NVRTC as the head of every generated kernel: these tests
// are the GPU's arithmetic, checked on the CPU.
//
//===----------------------------------------------------------------------===//

#include "ops/ElementMath.h"
#include "ops/Elements.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace zero::runtime::ops {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ElementMathTest, BF16FromF32RoundsLikeFromDouble) {
  // storeBF16 rounds through f32: for every f32, the cheap rounding must
  // equal the one from double that the generated kernels' roundBF16 uses.
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const float value = floatOfBits(bits(rng));
    if (std::isnan(value)) { // both NaN, sign kept; payloads may differ
      const unsigned short cheap = narrowF32ToBF16(value);
      const unsigned short exact = narrowToBF16(static_cast<double>(value));
      ASSERT_TRUE(std::isnan(widenBF16(cheap)) && std::isnan(widenBF16(exact)));
      ASSERT_EQ(cheap & 0x8000, exact & 0x8000);
      continue;
    }
    ASSERT_EQ(narrowF32ToBF16(value),
              narrowToBF16(static_cast<double>(value)))
        << "bits 0x" << std::hex << bitsOfFloat(value);
  }
  // Ties to even at both parities, the largest finite, denormals.
  for (uint32_t b : {0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0x00008000u,
                     0x00018000u, 0x80008000u})
    EXPECT_EQ(narrowF32ToBF16(floatOfBits(b)),
              narrowToBF16(static_cast<double>(floatOfBits(b))));
}

TEST(ElementMathTest, SixteenBitFormatsRoundTrip) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const unsigned short h = static_cast<unsigned short>(b);
    const double bf = widenBF16(h), f16 = widenF16(h);
    if (!std::isnan(bf))
      EXPECT_EQ(narrowToBF16(bf), h);
    if (!std::isnan(f16))
      EXPECT_EQ(narrowToF16(f16), h);
    // A register holds a 16-bit float exactly: rounding it again is exact.
    if (!std::isnan(bf))
      EXPECT_EQ(roundBF16(bf), bf);
  }
  EXPECT_EQ(narrowToF16(65520.0), 0x7c00); // rounds to infinity
  EXPECT_EQ(narrowToF16(65519.99), 0x7bff);
  EXPECT_EQ(narrowToF16(-0.0), 0x8000);
}

TEST(ElementMathTest, NaNsNarrowToQuietNaNsOfTheirSign) {
  // Every NaN, whatever its payload and whether it is quiet, narrows to a
  // quiet NaN of its sign; from a double, to one NaN per sign, as on the
  // GPU (ElementMath.h takes NaNs past its conversion instructions, which
  // would drop the sign). narrowF32ToBF16 keeps the payload's upper bits,
  // as the host's vector loops do.
  for (uint32_t payload : {0x00400000u, 0x00000001u, 0x003fffffu, 0x00200000u})
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float nan = floatOfBits(sign | 0x7f800000u | payload);
      const unsigned short negative = sign ? 0x8000 : 0;
      EXPECT_EQ(narrowF32ToBF16(nan) & 0xffc0, negative | 0x7fc0);
      EXPECT_EQ(narrowToBF16(static_cast<double>(nan)), negative | 0x7fc0);
      EXPECT_EQ(narrowF32ToF16(nan), negative | 0x7e00);
      EXPECT_EQ(narrowToF16(static_cast<double>(nan)), negative | 0x7e00);
    }
}

/// The p-bit type's value nearest `x` as the generated kernels hold it.
float roundInFloat(DType type, float x) {
  return type == DType::BF16  ? roundBF16(x)
         : type == DType::F16 ? roundF16(x)
                              : roundF32(x);
}
double roundInDouble(DType type, double x) {
  return type == DType::BF16  ? roundBF16(x)
         : type == DType::F16 ? roundF16(x)
                              : roundF32(x);
}

/// Equal bits, or both NaN (payloads may differ).
::testing::AssertionResult sameValue(float a, double b) {
  if ((std::isnan(a) && std::isnan(b)) ||
      bitsOfDouble(static_cast<double>(a)) == bitsOfDouble(b))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << std::hexfloat << a << " in float, " << b << " in double";
}

/// A random value of `type`: any bits, or (half the time) a small exponent,
/// so that results land in the denormals and at the underflow boundary.
float randomValue(DType type, std::mt19937 &rng) {
  std::uniform_int_distribution<uint32_t> bits;
  uint32_t b = bits(rng);
  const uint32_t lowest = type == DType::F16 ? 98 : 0; // f16 denormals: 2^-24
  if (b & 1) // exponent field near the bottom of the type's range
    b = (b & 0x807fffffu) | (lowest + (b >> 8) % 24u) << 23;
  const float value = floatOfBits(b);
  return roundInFloat(type, value);
}

TEST(ElementMathTest, FloatRegistersRoundLikeDoubleRegisters) {
  // The float overloads of the rounding and store functions equal the
  // double ones on every value an f32 holds (NaN payloads aside).
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 300000; ++i) {
    const float x = floatOfBits(bits(rng));
    for (DType type : {DType::F32, DType::BF16, DType::F16})
      ASSERT_TRUE(sameValue(roundInFloat(type, x),
                            roundInDouble(type, static_cast<double>(x))))
          << getDTypeName(type) << " of 0x" << std::hex << bitsOfFloat(x);
    unsigned short fromFloat = 0, fromDouble = 0;
    storeF16(&fromFloat, 0, x);
    storeF16(&fromDouble, 0, static_cast<double>(x));
    if (!std::isnan(x))
      ASSERT_EQ(fromFloat, fromDouble) << std::hex << bitsOfFloat(x);
  }
  // Ties to even, the largest finite values, overflow, denormals, zeros.
  for (uint32_t b :
       {0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0x477ff000u, 0x477fefffu,
        0x33000000u, 0x33000001u, 0x00000001u, 0x80000000u, 0x387fc000u})
    for (DType type : {DType::F32, DType::BF16, DType::F16})
      EXPECT_TRUE(sameValue(roundInFloat(type, floatOfBits(b)),
                            roundInDouble(type, floatOfBits(b))))
          << getDTypeName(type) << " of 0x" << std::hex << b;
}

TEST(ElementMathTest, FloatArithmeticRoundsLikeDouble) {
  // The generated kernels compute + - * / and sqrt of f32, bf16 and f16
  // values in f32 and round the result to the type; the host computes in
  // double and rounds. f32 has at least 2p + 2 bits for each p-bit type,
  // so the two agree bit for bit (denormal results included); this checks
  // it on the CPU, whose IEEE f32 arithmetic the GPU shares (NVRTC with
  // --prec-div --prec-sqrt --ftz=false --fmad=false).
  std::mt19937 rng(12);
  for (DType type : {DType::F32, DType::BF16, DType::F16}) {
    for (int i = 0; i < 200000; ++i) {
      const float a = randomValue(type, rng), b = randomValue(type, rng);
      const double da = a, db = b;
      ASSERT_TRUE(
          sameValue(roundInFloat(type, a + b), roundInDouble(type, da + db)))
          << getDTypeName(type) << " " << std::hexfloat << a << " + " << b;
      ASSERT_TRUE(
          sameValue(roundInFloat(type, a - b), roundInDouble(type, da - db)))
          << getDTypeName(type) << " " << std::hexfloat << a << " - " << b;
      ASSERT_TRUE(
          sameValue(roundInFloat(type, a * b), roundInDouble(type, da * db)))
          << getDTypeName(type) << " " << std::hexfloat << a << " * " << b;
      ASSERT_TRUE(
          sameValue(roundInFloat(type, a / b), roundInDouble(type, da / db)))
          << getDTypeName(type) << " " << std::hexfloat << a << " / " << b;
      ASSERT_TRUE(sameValue(roundInFloat(type, std::sqrt(a)),
                            roundInDouble(type, std::sqrt(da))))
          << getDTypeName(type) << " sqrt " << std::hexfloat << a;
      ASSERT_TRUE(sameValue(maximumF(a, b), maximumF(da, db)));
      ASSERT_TRUE(sameValue(minimumF(a, b), minimumF(da, db)));
    }
  }
  // Every bf16 and f16 value's square root.
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const unsigned short bits = static_cast<unsigned short>(h);
    for (DType type : {DType::BF16, DType::F16}) {
      const float x = type == DType::BF16 ? widenBF16(bits) : widenF16(bits);
      ASSERT_TRUE(sameValue(roundInFloat(type, std::sqrt(x)),
                            roundInDouble(type, std::sqrt(double(x)))));
    }
  }
}

TEST(ElementMathTest, FloatToIntegerSaturates) {
  EXPECT_EQ(floatToSigned(kNaN, 32), 0);
  EXPECT_EQ(floatToSigned(3e9, 32), 2147483647);
  EXPECT_EQ(floatToSigned(-3e9, 32), -2147483648LL);
  EXPECT_EQ(floatToSigned(-2147483648.9, 32), -2147483648LL);
  EXPECT_EQ(floatToSigned(-7.9, 32), -7);
  EXPECT_EQ(floatToSigned(kInf, 64), std::numeric_limits<long long>::max());
  EXPECT_EQ(floatToSigned(-kInf, 64), std::numeric_limits<long long>::min());
  EXPECT_EQ(floatToSigned(0.5, 1), 0);
  EXPECT_EQ(floatToSigned(-1.5, 1), -1);
  EXPECT_EQ(floatToSigned(1.0, 1), 0); // i1's range is [-1, 0]
  EXPECT_EQ(floatToUnsigned(-1.0, 32), 0u);
  EXPECT_EQ(floatToUnsigned(5e9, 32), 4294967295u);
  EXPECT_EQ(floatToUnsigned(kInf, 64), ~0ULL);
  EXPECT_EQ(floatToUnsigned(1.8e19, 64), 18000000000000000000ULL);
  EXPECT_EQ(floatToUnsigned(kNaN, 64), 0u);
}

TEST(ElementMathTest, IntegerOpsAreDefinedEverywhere) {
  const long long minI32 = -2147483648LL;
  EXPECT_EQ(wrapI32(static_cast<long long>(divSI(minI32, -1, 32))), minI32);
  EXPECT_EQ(divSI(5, 0, 32), 0u);
  EXPECT_EQ(remSI(5, -1, 64), 0u);
  EXPECT_EQ(remSI(-7, 2, 64), static_cast<unsigned long long>(-1LL));
  EXPECT_EQ(divUI(-1, 2, 32), 0x7fffffffu); // i32 -1 is 0xffffffff
  EXPECT_EQ(shLI(1, 32, 32), 0u);
  EXPECT_EQ(shLI(1, 31, 32), 0x80000000u);
  EXPECT_EQ(static_cast<long long>(shRSI(-8, 70, 64)), -1);
  EXPECT_EQ(shRSI(8, 64, 64), 0u);
  EXPECT_EQ(shRUI(-1, 28, 32), 0xfu);
  // i1 true is -1 when signed and 1 when unsigned.
  EXPECT_TRUE(compareInts(Predicate::SLT, 1, 0, 1));
  EXPECT_FALSE(compareInts(Predicate::ULTI, 1, 0, 1));
  EXPECT_EQ(maxSI(1, 0, 1), 0u);
  EXPECT_TRUE(compareInts(Predicate::UGTI, -1, 1, 32));
}

TEST(ElementMathTest, MaximumAndMinimumOrderZerosAndPropagateNaN) {
  EXPECT_FALSE(signBit(maximumF(-0.0, 0.0)));
  EXPECT_FALSE(signBit(maximumF(0.0, -0.0)));
  EXPECT_TRUE(signBit(minimumF(0.0, -0.0)));
  EXPECT_TRUE(std::isnan(maximumF(1.0, kNaN)));
  EXPECT_TRUE(std::isnan(minimumF(kNaN, 1.0)));
  EXPECT_EQ(maximumF(-kInf, 2.0), 2.0);
}

TEST(ElementMathTest, FloatComparisonsOrderedAndUnordered) {
  EXPECT_FALSE(compareFloats(Predicate::OLT, kNaN, 1.0));
  EXPECT_TRUE(compareFloats(Predicate::ULT, kNaN, 1.0));
  EXPECT_TRUE(compareFloats(Predicate::UNO, kNaN, 1.0));
  EXPECT_FALSE(compareFloats(Predicate::ORD, 1.0, kNaN));
  EXPECT_FALSE(compareFloats(Predicate::ONE, 1.0, 1.0));
  EXPECT_TRUE(compareFloats(Predicate::UEQ, kNaN, kNaN));
  EXPECT_TRUE(compareFloats(Predicate::OEQ, -0.0, 0.0));
}

TEST(ElementMathTest, NarrowTanhEqualsLibmOnceRounded) {
  // The GPU has no glibc: tanh for f32 and narrower results is this
  // function on both backends, and must round like libm's does.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> wide(-25.0, 25.0);
  std::uniform_real_distribution<double> small(-0.01, 0.01);
  for (int i = 0; i < 200000; ++i) {
    const double x = i % 2 ? wide(rng) : small(rng);
    ASSERT_EQ(roundF32(tanhForNarrowResult(x)), roundF32(std::tanh(x)))
        << "x = " << x;
  }
  EXPECT_TRUE(signBit(tanhForNarrowResult(-0.0)));
  EXPECT_TRUE(std::isnan(tanhForNarrowResult(kNaN)));
}

TEST(ElementMathTest, CastsFollowLinalg) {
  Scalar value;
  value.i = 1; // i1 true
  EXPECT_EQ(castScalar(value, DType::I1, DType::F32).f, -1.0);
  EXPECT_EQ(castScalar(value, DType::I1, DType::I32).i, -1);
  value.i = (1LL << 53) + 1; // f32 rounds once from the integer
  EXPECT_EQ(castScalar(value, DType::I64, DType::F32).f,
            static_cast<double>(static_cast<float>((1LL << 53) + 1)));
  value.f = 1e10;
  EXPECT_EQ(castScalar(value, DType::F64, DType::I32).i, 2147483647);
  value.f = 1.0 + 0x1p-8; // a tie between two bf16s: to even
  EXPECT_EQ(castScalar(value, DType::F64, DType::BF16).f, 1.0);
}

} // namespace
} // namespace zero::runtime::ops
