//===- OptimizerKernels.cpp - host Adam and SGD element loops -------------===//
//
// The scalar loops reproduce PyTorch's single-tensor float operations
// (Optimizers.cpp's header); the AVX2 and AVX-512 loops
// (OptimizerSimd.inc) perform the same operations on 8 or 16 f32 lanes (4
// or 8 f64). IEEE sqrt, division, multiply, add and fma are correctly
// rounded in either form, so the bits agree; only which of two different
// NaN operands an instruction passes on is the compiler's choice in both.
//
// The vector loops are compiled for their instruction set by target
// pragmas, not by per-file flags, so that nothing else in the library (the
// inline functions of the standard library in particular) is built for a
// CPU the program may not run on.
//
//===----------------------------------------------------------------------===//

#include "OptimizerKernels.h"

#include "Parallel.h"
#include "ops/ElementMath.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ZERO_X86_KERNELS 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace zero::runtime::host {

namespace {

constexpr int64_t kBlock = 4096;

/// Element i of a gradient of type F32 (or T), BF16 or F16, as T.
template <typename T> inline T gradAt(const AdamArrays<T> &a, int64_t i) {
  if constexpr (std::is_same<T, float>::value) {
    if (a.gradType == DType::BF16)
      return ops::widenBF16(static_cast<const uint16_t *>(a.grad)[i]);
    if (a.gradType == DType::F16)
      return ops::widenF16(static_cast<const uint16_t *>(a.grad)[i]);
  }
  return static_cast<const T *>(a.grad)[i];
}

/// ops::adamElement over [0, n); `vMax` is used only if `Amsgrad` (a template
/// argument: plain Adam's loop stays as it was).
template <typename T, bool Amsgrad>
inline void adamUpdate(const AdamConstants<T> &c, const AdamArrays<T> &a,
                       int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T p = a.param[i];
    T vMax = Amsgrad ? a.vMax[i] : T(0);
    ops::adamElement(c, p, gradAt(a, i), a.m[i], a.v[i], vMax);
    if constexpr (Amsgrad)
      a.vMax[i] = vMax;
    a.param[i] = p;
    if constexpr (std::is_same<T, float>::value) {
      if (a.param16)
        a.param16[i] = a.param16Type == DType::F16 ? ops::narrowToF16(p)
                                                   : ops::narrowF32ToBF16(p);
    }
  }
}

// Compiled for FMA hardware where the CPU has it (std::fma is a library call
// otherwise): same results, several times faster.
__attribute__((target_clones("fma", "default"))) void
adamScalar(const AdamConstants<float> &c, const AdamArrays<float> &a,
           int64_t n) {
  if (c.amsgrad)
    adamUpdate<float, true>(c, a, n);
  else
    adamUpdate<float, false>(c, a, n);
}

__attribute__((target_clones("fma", "default"))) void
adamScalar(const AdamConstants<double> &c, const AdamArrays<double> &a,
           int64_t n) {
  if (c.amsgrad)
    adamUpdate<double, true>(c, a, n);
  else
    adamUpdate<double, false>(c, a, n);
}

template <typename T>
inline void sgdUpdate(const SgdConstants<T> &c, int64_t n, T *param,
                      const T *grad, T *buf) {
  T unused = 0;
  for (int64_t i = 0; i < n; ++i)
    ops::sgdElement(c, param[i], grad[i], buf ? buf[i] : unused);
}

__attribute__((target_clones("fma", "default"))) void
sgdScalar(const SgdConstants<float> &c, int64_t n, float *param,
          const float *grad, float *buf) {
  sgdUpdate(c, n, param, grad, buf);
}

__attribute__((target_clones("fma", "default"))) void
sgdScalar(const SgdConstants<double> &c, int64_t n, double *param,
          const double *grad, double *buf) {
  sgdUpdate(c, n, param, grad, buf);
}

} // namespace

#ifdef ZERO_X86_KERNELS

#if defined(__clang__)
#define ZERO_BEGIN_TARGET(features) _Pragma(ZERO_TARGET_PRAGMA(features))
#define ZERO_TARGET_PRAGMA(features)                                           \
  ZERO_STRINGIFY(clang attribute push(__attribute__((target(features))),       \
                                      apply_to = function))
#define ZERO_END_TARGET _Pragma("clang attribute pop")
#else
#define ZERO_BEGIN_TARGET(features)                                            \
  _Pragma("GCC push_options") _Pragma(ZERO_STRINGIFY(GCC target(features)))
#define ZERO_END_TARGET _Pragma("GCC pop_options")
#endif
#define ZERO_STRINGIFY(x) #x

namespace {
/// f32's quiet NaN without payload; roundToF16 maps every NaN to its half.
constexpr int32_t kQuietNaNBits = 0x7fc00000;
} // namespace

ZERO_BEGIN_TARGET("avx2,fma,f16c")
namespace {
namespace avx2 {

template <typename T> struct Lanes;
template <> struct Lanes<float> {
  using V = __m256;
  static constexpr int64_t kWidth = 8;
};
template <> struct Lanes<double> {
  using V = __m256d;
  static constexpr int64_t kWidth = 4;
};

inline __m256 splat(float x) { return _mm256_set1_ps(x); }
inline __m256d splat(double x) { return _mm256_set1_pd(x); }
inline __m256 load(const float *p) { return _mm256_loadu_ps(p); }
inline __m256d load(const double *p) { return _mm256_loadu_pd(p); }
inline void store(float *p, __m256 x) { _mm256_storeu_ps(p, x); }
inline void store(double *p, __m256d x) { _mm256_storeu_pd(p, x); }
inline __m256 add(__m256 x, __m256 y) { return _mm256_add_ps(x, y); }
inline __m256d add(__m256d x, __m256d y) { return _mm256_add_pd(x, y); }
inline __m256 mul(__m256 x, __m256 y) { return _mm256_mul_ps(x, y); }
inline __m256d mul(__m256d x, __m256d y) { return _mm256_mul_pd(x, y); }
inline __m256 div(__m256 x, __m256 y) { return _mm256_div_ps(x, y); }
inline __m256d div(__m256d x, __m256d y) { return _mm256_div_pd(x, y); }
inline __m256 sqrt(__m256 x) { return _mm256_sqrt_ps(x); }
inline __m256d sqrt(__m256d x) { return _mm256_sqrt_pd(x); }
inline __m256 fma(__m256 x, __m256 y, __m256 z) {
  return _mm256_fmadd_ps(x, y, z);
}
inline __m256d fma(__m256d x, __m256d y, __m256d z) {
  return _mm256_fmadd_pd(x, y, z);
}

/// old > v || old != old ? old : v, per lane.
inline __m256 maxOrNaN(__m256 old, __m256 v) {
  const __m256 keep = _mm256_or_ps(_mm256_cmp_ps(old, v, _CMP_GT_OQ),
                                   _mm256_cmp_ps(old, old, _CMP_UNORD_Q));
  return _mm256_blendv_ps(v, old, keep);
}
inline __m256d maxOrNaN(__m256d old, __m256d v) {
  const __m256d keep = _mm256_or_pd(_mm256_cmp_pd(old, v, _CMP_GT_OQ),
                                    _mm256_cmp_pd(old, old, _CMP_UNORD_Q));
  return _mm256_blendv_pd(v, old, keep);
}

// Both 16-bit formats widen exactly: bf16 is the upper half of an f32, and
// vcvtph2ps is exact (a signaling NaN comes out quiet, which the first
// arithmetic operation would do anyway).
inline __m256 loadGrad(const AdamArrays<float> &a, int64_t i) {
  const uint16_t *half = static_cast<const uint16_t *>(a.grad) + i;
  switch (a.gradType) {
  case DType::BF16:
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(
                              reinterpret_cast<const __m128i *>(half))),
                          16));
  case DType::F16:
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(half)));
  default:
    return load(static_cast<const float *>(a.grad) + i);
  }
}
inline __m256d loadGrad(const AdamArrays<double> &a, int64_t i) {
  return load(static_cast<const double *>(a.grad) + i);
}

/// floatToBF16 and roundToF16 on 8 lanes.
inline void storeParam16(const AdamArrays<float> &a, int64_t i, __m256 p) {
  const __m256 isNaN = _mm256_cmp_ps(p, p, _CMP_UNORD_Q);
  __m128i half;
  if (a.param16Type == DType::F16) {
    // vcvtps2ph keeps a NaN's upper payload bits; roundToF16 makes every
    // NaN the quiet NaN of its sign.
    const __m256 quiet = _mm256_or_ps(
        _mm256_and_ps(p, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN))),
        _mm256_castsi256_ps(_mm256_set1_epi32(kQuietNaNBits)));
    half = _mm256_cvtps_ph(_mm256_blendv_ps(p, quiet, isNaN),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {
    const __m256i bits = _mm256_castps_si256(p);
    const __m256i upper = _mm256_srli_epi32(bits, 16);
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7fff)),
                         _mm256_and_si256(upper, _mm256_set1_epi32(1))),
        16);
    const __m256i quiet = _mm256_or_si256(upper, _mm256_set1_epi32(0x40));
    const __m256i wide =
        _mm256_blendv_epi8(rounded, quiet, _mm256_castps_si256(isNaN));
    // Every lane is below 2^16: the unsigned saturating pack is exact.
    half = _mm_packus_epi32(_mm256_castsi256_si128(wide),
                            _mm256_extracti128_si256(wide, 1));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i *>(a.param16 + i), half);
}
inline void storeParam16(const AdamArrays<double> &, int64_t, __m256d) {}

#include "OptimizerSimd.inc"

} // namespace avx2
} // namespace
ZERO_END_TARGET

// GCC 12 takes the _mm512_undefined_* operands of the AVX-512 intrinsics
// for uninitialized variables (GCC bug 105593).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
ZERO_BEGIN_TARGET("avx512f")
namespace {
namespace avx512 {

template <typename T> struct Lanes;
template <> struct Lanes<float> {
  using V = __m512;
  static constexpr int64_t kWidth = 16;
};
template <> struct Lanes<double> {
  using V = __m512d;
  static constexpr int64_t kWidth = 8;
};

inline __m512 splat(float x) { return _mm512_set1_ps(x); }
inline __m512d splat(double x) { return _mm512_set1_pd(x); }
inline __m512 load(const float *p) { return _mm512_loadu_ps(p); }
inline __m512d load(const double *p) { return _mm512_loadu_pd(p); }
inline void store(float *p, __m512 x) { _mm512_storeu_ps(p, x); }
inline void store(double *p, __m512d x) { _mm512_storeu_pd(p, x); }
inline __m512 add(__m512 x, __m512 y) { return _mm512_add_ps(x, y); }
inline __m512d add(__m512d x, __m512d y) { return _mm512_add_pd(x, y); }
inline __m512 mul(__m512 x, __m512 y) { return _mm512_mul_ps(x, y); }
inline __m512d mul(__m512d x, __m512d y) { return _mm512_mul_pd(x, y); }
inline __m512 div(__m512 x, __m512 y) { return _mm512_div_ps(x, y); }
inline __m512d div(__m512d x, __m512d y) { return _mm512_div_pd(x, y); }
inline __m512 sqrt(__m512 x) { return _mm512_sqrt_ps(x); }
inline __m512d sqrt(__m512d x) { return _mm512_sqrt_pd(x); }
inline __m512 fma(__m512 x, __m512 y, __m512 z) {
  return _mm512_fmadd_ps(x, y, z);
}
inline __m512d fma(__m512d x, __m512d y, __m512d z) {
  return _mm512_fmadd_pd(x, y, z);
}

inline __m512 maxOrNaN(__m512 old, __m512 v) {
  const __mmask16 keep = _mm512_cmp_ps_mask(old, v, _CMP_GT_OQ) |
                         _mm512_cmp_ps_mask(old, old, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(keep, v, old);
}
inline __m512d maxOrNaN(__m512d old, __m512d v) {
  const __mmask8 keep = _mm512_cmp_pd_mask(old, v, _CMP_GT_OQ) |
                        _mm512_cmp_pd_mask(old, old, _CMP_UNORD_Q);
  return _mm512_mask_blend_pd(keep, v, old);
}

inline __m512 loadGrad(const AdamArrays<float> &a, int64_t i) {
  const uint16_t *half = static_cast<const uint16_t *>(a.grad) + i;
  switch (a.gradType) {
  case DType::BF16:
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(
                              reinterpret_cast<const __m256i *>(half))),
                          16));
  case DType::F16:
    return _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(half)));
  default:
    return load(static_cast<const float *>(a.grad) + i);
  }
}
inline __m512d loadGrad(const AdamArrays<double> &a, int64_t i) {
  return load(static_cast<const double *>(a.grad) + i);
}

// Not vcvtneps2bf16: it flushes denormals to zero.
inline void storeParam16(const AdamArrays<float> &a, int64_t i, __m512 p) {
  const __mmask16 isNaN = _mm512_cmp_ps_mask(p, p, _CMP_UNORD_Q);
  __m256i half;
  if (a.param16Type == DType::F16) {
    const __m512i quiet = _mm512_or_si512(
        _mm512_and_si512(_mm512_castps_si512(p), _mm512_set1_epi32(INT32_MIN)),
        _mm512_set1_epi32(kQuietNaNBits));
    half = _mm512_cvtps_ph(
        _mm512_mask_mov_ps(p, isNaN, _mm512_castsi512_ps(quiet)),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {
    const __m512i bits = _mm512_castps_si512(p);
    const __m512i upper = _mm512_srli_epi32(bits, 16);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7fff)),
                         _mm512_and_si512(upper, _mm512_set1_epi32(1))),
        16);
    const __m512i quiet = _mm512_or_si512(upper, _mm512_set1_epi32(0x40));
    half = _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, isNaN, quiet));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(a.param16 + i), half);
}
inline void storeParam16(const AdamArrays<double> &, int64_t, __m512d) {}

#include "OptimizerSimd.inc"

} // namespace avx512
} // namespace
ZERO_END_TARGET
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif // ZERO_X86_KERNELS

namespace {

KernelIsa detectKernelIsa() {
#ifdef ZERO_X86_KERNELS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return KernelIsa::Avx512;
  unsigned eax, ebx, ecx, edx;
  const bool f16c =
      __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c)
    return KernelIsa::Avx2;
#endif
  return KernelIsa::Scalar;
}

/// -1 until setKernelIsa.
std::atomic<int> chosenIsa{-1};

} // namespace

KernelIsa getSupportedKernelIsa() {
  static const KernelIsa supported = detectKernelIsa();
  return supported;
}

KernelIsa getKernelIsa() {
  const int chosen = chosenIsa.load(std::memory_order_relaxed);
  return chosen < 0 ? getSupportedKernelIsa() : static_cast<KernelIsa>(chosen);
}

void setKernelIsa(KernelIsa isa) {
  if (static_cast<int>(isa) > static_cast<int>(getSupportedKernelIsa()))
    isa = getSupportedKernelIsa();
  chosenIsa.store(static_cast<int>(isa), std::memory_order_relaxed);
}

const char *getKernelIsaName(KernelIsa isa) {
  switch (isa) {
  case KernelIsa::Avx512:
    return "avx512";
  case KernelIsa::Avx2:
    return "avx2";
  case KernelIsa::Scalar:
    break;
  }
  return "scalar";
}


namespace {

template <typename T>
void adamDispatch(KernelIsa isa, const AdamConstants<T> &c,
                  const AdamArrays<T> &a, int64_t n) {
#ifdef ZERO_X86_KERNELS
  if (isa == KernelIsa::Avx512)
    return avx512::adamLoop(c, a, n);
  if (isa == KernelIsa::Avx2)
    return avx2::adamLoop(c, a, n);
#endif
  (void)isa;
  adamScalar(c, a, n);
}

template <typename T>
void sgdDispatch(KernelIsa isa, const SgdConstants<T> &c, int64_t n, T *param,
                 const T *grad, T *buf) {
#ifdef ZERO_X86_KERNELS
  if (isa == KernelIsa::Avx512)
    return avx512::sgdLoop(c, n, param, grad, buf);
  if (isa == KernelIsa::Avx2)
    return avx2::sgdLoop(c, n, param, grad, buf);
#endif
  (void)isa;
  sgdScalar(c, n, param, grad, buf);
}

} // namespace

void adamLoop(KernelIsa isa, const AdamConstants<float> &c,
              const AdamArrays<float> &a, int64_t n) {
  adamDispatch(isa, c, a, n);
}

void adamLoop(KernelIsa isa, const AdamConstants<double> &c,
              const AdamArrays<double> &a, int64_t n) {
  adamDispatch(isa, c, a, n);
}

void sgdLoop(KernelIsa isa, const SgdConstants<float> &c, int64_t n,
             float *param, const float *grad, float *buf) {
  sgdDispatch(isa, c, n, param, grad, buf);
}

void sgdLoop(KernelIsa isa, const SgdConstants<double> &c, int64_t n,
             double *param, const double *grad, double *buf) {
  sgdDispatch(isa, c, n, param, grad, buf);
}

void runAdamStep(const AdamHyperparameters &h, int64_t n, float *param,
                 const void *grad, DType gradType, float *m, float *v,
                 float *vMax, uint16_t *param16, DType param16Type) {
  const AdamConstants<float> c = getAdamConstants<float>(h);
  const KernelIsa isa = getKernelIsa();
  const int64_t gradWidth = getDTypeWidth(gradType);
  parallelBlocks(n, kBlock, n * 8, [&](int64_t begin, int64_t end) {
    AdamArrays<float> a{param + begin,
                        static_cast<const char *>(grad) + begin * gradWidth,
                        gradType,
                        m + begin,
                        v + begin,
                        h.amsgrad ? vMax + begin : nullptr,
                        param16 ? param16 + begin : nullptr,
                        param16Type};
    adamLoop(isa, c, a, end - begin);
  });
}

} // namespace zero::runtime::host
