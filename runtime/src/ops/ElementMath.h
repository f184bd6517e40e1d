//===- ElementMath.h - the arithmetic of one element ------------*- C++ -*-===//
//
// The one definition of what an element op computes, for every backend: the
// host compiles it as C++, nvcc as __host__ __device__ code (cuda/*.cu), and
// NVRTC as the head of every generated kernel (the build embeds this file's
// text in the kernel prelude, cuda/Codegen.cpp). CI tests it on the CPU
// (ElementMathTest), which is what makes the GPU's arithmetic testable
// without a GPU.
//
// Registers are the schedule's (docs/ScheduleFormat.md, "Scalar ops"):
// floats are doubles already rounded to their type, integers are long longs
// wrapped to their width (i1 as 0 or 1, i32 sign-extended). Rounding from
// double to a narrower float is a single round to nearest even; NaNs stay
// NaN (quiet, sign kept).
//
// The generated kernels hold f32, bf16 and f16 values in float instead (each
// is exact in f32), and compute + - * / and sqrt in f32 before rounding to
// the result type: the same bits as in double, since f32 carries at least
// 2p + 2 bits for each p-bit type (bf16 8, f16 11), which makes the second
// rounding innocuous; ElementMathTest checks it. The loads therefore return
// float for these types, and the rounding and store functions take float
// as well as double.
//
// NVRTC sees no #include and no standard library: everything below uses
// built-in types and the math functions CUDA declares for device code.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_ELEMENTMATH_H
#define ZERO_RUNTIME_OPS_ELEMENTMATH_H

// ZERO_HD marks a function that the host compiler and nvcc both compile, for
// the CPU and (under nvcc and NVRTC) the GPU.
#if defined(__CUDACC__)
#define ZERO_HD __host__ __device__
#else
#define ZERO_HD
#endif

#if !defined(__CUDACC_RTC__)
#include <cmath>
#include <cstring>
#endif

#if defined(__CUDACC__)
#define ZERO_HD_INLINE ZERO_HD __forceinline__
#else
#define ZERO_HD_INLINE inline __attribute__((always_inline))
#endif

namespace zero::runtime::ops {

#if !defined(__CUDA_ARCH__)
using std::copysign;
using std::exp;
using std::fabs;
using std::trunc;
#endif

//===----------------------------------------------------------------------===//
// Bits
//===----------------------------------------------------------------------===//

ZERO_HD_INLINE unsigned long long bitsOfDouble(double value) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned long long>(__double_as_longlong(value));
#else
  unsigned long long bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
#endif
}

ZERO_HD_INLINE double doubleOfBits(unsigned long long bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
#endif
}

ZERO_HD_INLINE unsigned bitsOfFloat(float value) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(value);
#else
  unsigned bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
#endif
}

ZERO_HD_INLINE float floatOfBits(unsigned bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
#endif
}

ZERO_HD_INLINE bool isNaN(double x) { return x != x; }
ZERO_HD_INLINE bool signBit(double x) { return (bitsOfDouble(x) >> 63) != 0; }

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

/// Rounds a double to a binary format with `mantBits` stored mantissa bits
/// and `expBits` exponent bits (IEEE layout), to nearest with ties to even,
/// with denormals and overflow to infinity.
ZERO_HD inline unsigned short roundToFormat(double value, int mantBits,
                                            int expBits) {
  const unsigned long long bits = bitsOfDouble(value);
  const unsigned sign = static_cast<unsigned>(bits >> 63)
                        << (mantBits + expBits);
  const int exp = static_cast<int>((bits >> 52) & 0x7ff);
  const unsigned long long mant = bits & ((1ULL << 52) - 1);
  const int bias = (1 << (expBits - 1)) - 1;
  const unsigned infBits = ((1u << expBits) - 1) << mantBits;
  if (exp == 0x7ff) // NaN (quiet, sign kept) or infinity
    return static_cast<unsigned short>(
        mant ? sign | infBits | (1u << (mantBits - 1)) : sign | infBits);
  // Double zeros and denormals (< 2^-1022) are far below the smallest 16-bit
  // denormal: they round to a signed zero.
  if (exp == 0)
    return static_cast<unsigned short>(sign);
  // value = sig * 2^(exp - 1075); round it to a multiple of 2^q, the ulp of
  // the target at this magnitude (fixed below the smallest normal exponent).
  const unsigned long long sig = mant | (1ULL << 52);
  const int emin = 1 - bias;
  int q = (exp - 1023 > emin ? exp - 1023 : emin) - mantBits;
  const int shift = q - (exp - 1075); // >= 52 - mantBits > 0
  unsigned long long r = 0;
  if (shift < 54) { // else value < 2^(q-1): rounds to zero
    r = sig >> shift;
    const unsigned long long rem = sig & ((1ULL << shift) - 1);
    const unsigned long long half = 1ULL << (shift - 1);
    if (rem > half || (rem == half && (r & 1)))
      ++r;
  }
  if (r < (1ULL << mantBits)) // zero or a denormal
    return static_cast<unsigned short>(sign | static_cast<unsigned>(r));
  if (r == (1ULL << (mantBits + 1))) { // rounding carried out
    r >>= 1;
    ++q;
  }
  const int biased = q + mantBits + bias;
  if (biased >= (1 << expBits) - 1)
    return static_cast<unsigned short>(sign | infBits);
  return static_cast<unsigned short>(
      sign | (static_cast<unsigned>(biased) << mantBits) |
      static_cast<unsigned>(r - (1ULL << mantBits)));
}

/// The exact value of a bfloat16: its bits are the upper half of an f32.
ZERO_HD_INLINE float widenBF16(unsigned short bits) {
  return floatOfBits(static_cast<unsigned>(bits) << 16);
}

/// The exact value of an IEEE half (every half is exact in f32).
ZERO_HD_INLINE float widenF16(unsigned short bits) {
#if defined(__CUDA_ARCH__)
  float value;
  asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(bits));
  return value;
#else
  const unsigned sign = static_cast<unsigned>(bits & 0x8000) << 16;
  const unsigned magnitude = bits & 0x7fffu;
  if (magnitude >= 0x7c00u) // infinity or NaN, payload kept
    return floatOfBits(sign | 0x7f800000u | ((magnitude & 0x3ffu) << 13));
  if (magnitude >= 0x0400u) // normal: rebias the exponent
    return floatOfBits(sign | ((magnitude + ((127u - 15u) << 10)) << 13));
  // zero or denormal: magnitude * 2^-24, exact
  const float value = static_cast<float>(magnitude) * 5.9604644775390625e-8f;
  return sign ? -value : value;
#endif
}

// The GPU's conversions below make their canonical NaN of a NaN (sign and
// payload lost); roundToFormat's keeps the sign, quiet. NaNs therefore take
// roundToFormat's way on the GPU too: one result everywhere.

/// Rounds a double to bfloat16 (the hardware conversion where the GPU has
/// one, sm_90 and later; the same result everywhere).
ZERO_HD_INLINE unsigned short narrowToBF16(double value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (isNaN(value))
    return roundToFormat(value, 7, 8);
  unsigned short bits;
  asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(bits) : "d"(value));
  return bits;
#else
  return roundToFormat(value, 7, 8);
#endif
}

/// Rounds a double to an IEEE half.
ZERO_HD_INLINE unsigned short narrowToF16(double value) {
#if defined(__CUDA_ARCH__)
  if (isNaN(value))
    return roundToFormat(value, 10, 5);
  unsigned short bits;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(bits) : "d"(value));
  return bits;
#else
  return roundToFormat(value, 10, 5);
#endif
}

/// Rounds an f32 to bfloat16; the same result as narrowToBF16(double(value))
/// (an f32 is exact in double), but cheap enough for element loops.
ZERO_HD_INLINE unsigned short narrowF32ToBF16(float value) {
  unsigned bits = bitsOfFloat(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign, make it quiet
    return static_cast<unsigned short>((bits >> 16) | 0x0040u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<unsigned short>(bits >> 16);
}

/// Rounds an f32 to an IEEE half; the same result as
/// narrowToF16(double(value)).
ZERO_HD_INLINE unsigned short narrowF32ToF16(float value) {
#if defined(__CUDA_ARCH__)
  if (isNaN(value))
    return roundToFormat(static_cast<double>(value), 10, 5);
  unsigned short bits;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(value));
  return bits;
#else
  return roundToFormat(static_cast<double>(value), 10, 5);
#endif
}

/// Rounds an f32 to tf32, the operands of tensor cores' f32 mode (10 stored
/// mantissa bits, f32's exponent), to nearest with ties to even, held in an
/// f32. Infinities and NaNs are kept; a value that rounds past the largest
/// tf32 becomes an infinity.
ZERO_HD_INLINE float roundF32ToTF32(float value) {
  unsigned bits = bitsOfFloat(value);
  if ((bits & 0x7f800000u) == 0x7f800000u)
    return value;
  bits += 0xfffu + ((bits >> 13) & 1u);
  return floatOfBits(bits & ~0x1fffu);
}

//===----------------------------------------------------------------------===//
// Registers in canonical form
//===----------------------------------------------------------------------===//

ZERO_HD_INLINE double roundF32(double x) {
  return static_cast<double>(static_cast<float>(x));
}
ZERO_HD_INLINE double roundBF16(double x) {
  return static_cast<double>(widenBF16(narrowToBF16(x)));
}
ZERO_HD_INLINE double roundF16(double x) {
  return static_cast<double>(widenF16(narrowToF16(x)));
}

// The same roundings of a value held in float (f32 is exact in double, so
// each equals its double overload on static_cast<double>(x), NaN bits
// aside).
ZERO_HD_INLINE float roundF32(float x) { return x; }
ZERO_HD_INLINE float roundBF16(float x) {
  return widenBF16(narrowF32ToBF16(x));
}
ZERO_HD_INLINE float roundF16(float x) { return widenF16(narrowF32ToF16(x)); }

/// Wraps an integer to `width` bits in register form (1, 32 or 64).
ZERO_HD_INLINE long long wrapInt(long long x, int width) {
  if (width == 1)
    return x & 1;
  if (width == 32)
    return static_cast<long long>(
        static_cast<int>(static_cast<unsigned>(x)));
  return x;
}
ZERO_HD_INLINE long long wrapI1(long long x) { return wrapInt(x, 1); }
ZERO_HD_INLINE long long wrapI32(long long x) { return wrapInt(x, 32); }

/// The signed value of a canonical register of `width` bits (i1 true is -1).
ZERO_HD_INLINE long long toSigned(long long x, int width) {
  return width == 1 ? -(x & 1) : x;
}

/// The unsigned value of a canonical register of `width` bits.
ZERO_HD_INLINE unsigned long long toUnsigned(long long x, int width) {
  if (width == 1)
    return static_cast<unsigned long long>(x & 1);
  if (width == 32)
    return static_cast<unsigned>(x);
  return static_cast<unsigned long long>(x);
}

//===----------------------------------------------------------------------===//
// Elements in memory <-> registers
//===----------------------------------------------------------------------===//

ZERO_HD_INLINE float loadF32(const float *p, long long i) { return p[i]; }
ZERO_HD_INLINE double loadF64(const double *p, long long i) { return p[i]; }
ZERO_HD_INLINE float loadBF16(const unsigned short *p, long long i) {
  return widenBF16(p[i]);
}
ZERO_HD_INLINE float loadF16(const unsigned short *p, long long i) {
  return widenF16(p[i]);
}
ZERO_HD_INLINE long long loadI64(const long long *p, long long i) {
  return p[i];
}
ZERO_HD_INLINE long long loadI32(const int *p, long long i) { return p[i]; }
ZERO_HD_INLINE long long loadI1(const unsigned char *p, long long i) {
  return p[i] != 0 ? 1 : 0;
}

// The stores take canonical registers: a 16-bit float register is exact in
// f32, so bf16 is stored through the cheap f32 rounding.
ZERO_HD_INLINE void storeF32(float *p, long long i, double v) {
  p[i] = static_cast<float>(v);
}
ZERO_HD_INLINE void storeF64(double *p, long long i, double v) { p[i] = v; }
ZERO_HD_INLINE void storeBF16(unsigned short *p, long long i, double v) {
  p[i] = narrowF32ToBF16(static_cast<float>(v));
}
ZERO_HD_INLINE void storeF16(unsigned short *p, long long i, double v) {
  p[i] = narrowToF16(v);
}
ZERO_HD_INLINE void storeF32(float *p, long long i, float v) { p[i] = v; }
ZERO_HD_INLINE void storeBF16(unsigned short *p, long long i, float v) {
  p[i] = narrowF32ToBF16(v);
}
ZERO_HD_INLINE void storeF16(unsigned short *p, long long i, float v) {
  p[i] = narrowF32ToF16(v);
}
ZERO_HD_INLINE void storeI64(long long *p, long long i, long long v) {
  p[i] = v;
}
ZERO_HD_INLINE void storeI32(int *p, long long i, long long v) {
  p[i] = static_cast<int>(v);
}
ZERO_HD_INLINE void storeI1(unsigned char *p, long long i, long long v) {
  p[i] = static_cast<unsigned char>(v & 1);
}

//===----------------------------------------------------------------------===//
// Ops with a definition of their own
//===----------------------------------------------------------------------===//

/// arith.maximumf / minimumf: NaN if either operand is NaN, and -0 < +0.
ZERO_HD_INLINE double maximumF(double x, double y) {
  if (isNaN(x))
    return x;
  if (isNaN(y))
    return y;
  if (x == y)
    return signBit(x) ? y : x;
  return x > y ? x : y;
}

ZERO_HD_INLINE double minimumF(double x, double y) {
  if (isNaN(x))
    return x;
  if (isNaN(y))
    return y;
  if (x == y)
    return signBit(x) ? x : y;
  return x < y ? x : y;
}

// The same on float values (the generated kernels' f32, bf16 and f16).
ZERO_HD_INLINE float maximumF(float x, float y) {
  return static_cast<float>(
      maximumF(static_cast<double>(x), static_cast<double>(y)));
}
ZERO_HD_INLINE float minimumF(float x, float y) {
  return static_cast<float>(
      minimumF(static_cast<double>(x), static_cast<double>(y)));
}

/// tanh to well within double precision of libm's, from exp, which is
/// several times faster than the expm1 that tanh uses; for results that are
/// rounded to f32 or narrower (the error, below 1e-13 relative, shows only
/// where the exact value is that close to a rounding boundary).
ZERO_HD_INLINE double tanhForNarrowResult(double x) {
  if (isNaN(x))
    return x;
  const double a = fabs(x);
  double r;
  if (a < 0x1p-10) // the series: the next term is below 2^-70 relative
    r = a - a * a * a * (1.0 / 3.0) + a * a * a * a * a * (2.0 / 15.0);
  else if (a < 20.0)
    r = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
  else
    r = 1.0; // 1 - 2e-17, which every narrow type rounds to 1
  return copysign(r, x);
}

// Integer ops take canonical registers of operands `width` bits wide and
// return the unwrapped result. Division by zero is undefined in arith and
// shifts by the width or more are poison: a run yields 0 (or the sign for
// shrsi) rather than trap or depend on the hardware.

ZERO_HD_INLINE unsigned long long divSI(long long a, long long b, int width) {
  const long long x = toSigned(a, width), y = toSigned(b, width);
  if (y == 0)
    return 0;
  if (y == -1) // INT_MIN / -1 wraps
    return 0ULL - static_cast<unsigned long long>(x);
  return static_cast<unsigned long long>(x / y);
}

ZERO_HD_INLINE unsigned long long divUI(long long a, long long b, int width) {
  const unsigned long long x = toUnsigned(a, width), y = toUnsigned(b, width);
  return y ? x / y : 0;
}

ZERO_HD_INLINE unsigned long long remSI(long long a, long long b, int width) {
  const long long x = toSigned(a, width), y = toSigned(b, width);
  if (y == 0 || y == -1)
    return 0;
  return static_cast<unsigned long long>(x % y);
}

ZERO_HD_INLINE unsigned long long remUI(long long a, long long b, int width) {
  const unsigned long long x = toUnsigned(a, width), y = toUnsigned(b, width);
  return y ? x % y : 0;
}

ZERO_HD_INLINE unsigned long long maxSI(long long a, long long b, int width) {
  const long long x = toSigned(a, width), y = toSigned(b, width);
  return static_cast<unsigned long long>(x > y ? x : y);
}

ZERO_HD_INLINE unsigned long long minSI(long long a, long long b, int width) {
  const long long x = toSigned(a, width), y = toSigned(b, width);
  return static_cast<unsigned long long>(x < y ? x : y);
}

ZERO_HD_INLINE unsigned long long shLI(long long a, long long b, int width) {
  const unsigned long long amount = toUnsigned(b, width);
  return amount >= static_cast<unsigned long long>(width)
             ? 0
             : static_cast<unsigned long long>(a) << amount;
}

ZERO_HD_INLINE unsigned long long shRSI(long long a, long long b, int width) {
  const long long x = toSigned(a, width);
  const unsigned long long amount = toUnsigned(b, width);
  return static_cast<unsigned long long>(
      amount >= static_cast<unsigned long long>(width) ? (x < 0 ? -1 : 0)
                                                       : x >> amount);
}

ZERO_HD_INLINE unsigned long long shRUI(long long a, long long b, int width) {
  const unsigned long long amount = toUnsigned(b, width);
  return amount >= static_cast<unsigned long long>(width)
             ? 0
             : toUnsigned(a, width) >> amount;
}

/// fptosi / fptoui to `width` bits saturate, and NaN gives 0: LLVM leaves
/// out-of-range conversions undefined, and a run must not depend on what the
/// hardware does with them.
ZERO_HD_INLINE long long floatToSigned(double value, int width) {
  if (isNaN(value))
    return 0;
  const double truncated = trunc(value);
  const double hi = static_cast<double>(1ULL << (width - 1)); // exclusive
  if (truncated <= -hi)
    return width == 64 ? static_cast<long long>(1ULL << 63)
                       : -static_cast<long long>(1ULL << (width - 1));
  if (truncated >= hi)
    return static_cast<long long>((1ULL << (width - 1)) - 1);
  return static_cast<long long>(truncated);
}

ZERO_HD_INLINE unsigned long long floatToUnsigned(double value, int width) {
  if (isNaN(value) || value <= 0)
    return 0;
  const double truncated = trunc(value);
  const double hi = width == 64 ? 18446744073709551616.0
                                : static_cast<double>(1ULL << width);
  if (truncated >= hi)
    return width == 64 ? ~0ULL : (1ULL << width) - 1;
  return static_cast<unsigned long long>(truncated);
}

/// The predicates of arith.cmpf and arith.cmpi (one enum: the names differ).
enum class Predicate : int {
  // cmpf
  OEQ,
  OGT,
  OGE,
  OLT,
  OLE,
  ONE,
  ORD,
  UEQ,
  UGT,
  UGE,
  ULT,
  ULE,
  UNE,
  UNO,
  AlwaysTrue,
  AlwaysFalse,
  // cmpi
  EQ,
  NE,
  SLT,
  SLE,
  SGT,
  SGE,
  ULTI,
  ULEI,
  UGTI,
  UGEI,
};

ZERO_HD_INLINE bool compareFloats(Predicate predicate, double a, double b) {
  switch (predicate) {
  case Predicate::OEQ:
    return a == b;
  case Predicate::OGT:
    return a > b;
  case Predicate::OGE:
    return a >= b;
  case Predicate::OLT:
    return a < b;
  case Predicate::OLE:
    return a <= b;
  case Predicate::ONE:
    return a < b || a > b;
  case Predicate::ORD:
    return !isNaN(a) && !isNaN(b);
  case Predicate::UEQ:
    return !(a < b || a > b);
  case Predicate::UGT:
    return !(a <= b);
  case Predicate::UGE:
    return !(a < b);
  case Predicate::ULT:
    return !(a >= b);
  case Predicate::ULE:
    return !(a > b);
  case Predicate::UNE:
    return a != b;
  case Predicate::UNO:
    return isNaN(a) || isNaN(b);
  case Predicate::AlwaysTrue:
    return true;
  default:
    return false;
  }
}

/// arith.cmpi on canonical registers of `width` bits.
ZERO_HD_INLINE bool compareInts(Predicate predicate, long long a, long long b,
                                int width) {
  switch (predicate) {
  case Predicate::EQ:
    return a == b;
  case Predicate::NE:
    return a != b;
  case Predicate::SLT:
    return toSigned(a, width) < toSigned(b, width);
  case Predicate::SLE:
    return toSigned(a, width) <= toSigned(b, width);
  case Predicate::SGT:
    return toSigned(a, width) > toSigned(b, width);
  case Predicate::SGE:
    return toSigned(a, width) >= toSigned(b, width);
  case Predicate::ULTI:
    return toUnsigned(a, width) < toUnsigned(b, width);
  case Predicate::ULEI:
    return toUnsigned(a, width) <= toUnsigned(b, width);
  case Predicate::UGTI:
    return toUnsigned(a, width) > toUnsigned(b, width);
  default:
    return toUnsigned(a, width) >= toUnsigned(b, width);
  }
}

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_ELEMENTMATH_H
