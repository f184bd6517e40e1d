//===- OptimizerMath.h - one Adam or SGD element update ---------*- C++ -*-===//
//
// The one definition of zero.adam's and zero.sgd's arithmetic (PyTorch's
// single-tensor implementations, host/Optimizers.cpp has the derivation):
// the step's scalars computed in double and rounded to the math type T (f32,
// or f64 for f64 parameters), then per element exactly these T operations,
// fused multiply-adds where written and nowhere else. The host's scalar
// loops (host/OptimizerKernels.cpp) and the CUDA kernels (cuda/Optimizers.cu)
// both call these (ZERO_HD), so the backends agree bit for bit except where
// CUDA's double pow differs from glibc's in the last ulp of a bias
// correction; the host's AVX2 and AVX-512 loops are this function lane by
// lane, which their tests check.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_OPTIMIZERMATH_H
#define ZERO_RUNTIME_OPS_OPTIMIZERMATH_H

#include "ElementMath.h"

#include <cmath>
#include <cstdint>

namespace zero::runtime::ops {

#if !defined(__CUDA_ARCH__)
using std::pow;
#endif

// Each operation rounded once, as written: on the device the _rn
// intrinsics, which no compiler flag contracts or approximates; on the host
// plain operators (the runtime builds with -ffp-contract=off) and std::fma.
#if defined(__CUDA_ARCH__)
ZERO_HD_INLINE float fmaRn(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}
ZERO_HD_INLINE double fmaRn(double a, double b, double c) {
  return __fma_rn(a, b, c);
}
ZERO_HD_INLINE float mulRn(float a, float b) { return __fmul_rn(a, b); }
ZERO_HD_INLINE double mulRn(double a, double b) { return __dmul_rn(a, b); }
ZERO_HD_INLINE float addRn(float a, float b) { return __fadd_rn(a, b); }
ZERO_HD_INLINE double addRn(double a, double b) { return __dadd_rn(a, b); }
ZERO_HD_INLINE float divRn(float a, float b) { return __fdiv_rn(a, b); }
ZERO_HD_INLINE double divRn(double a, double b) { return __ddiv_rn(a, b); }
ZERO_HD_INLINE float sqrtRn(float a) { return __fsqrt_rn(a); }
ZERO_HD_INLINE double sqrtRn(double a) { return __dsqrt_rn(a); }
#else
template <typename T> ZERO_HD_INLINE T fmaRn(T a, T b, T c) {
  return std::fma(a, b, c);
}
template <typename T> ZERO_HD_INLINE T mulRn(T a, T b) { return a * b; }
template <typename T> ZERO_HD_INLINE T addRn(T a, T b) { return a + b; }
template <typename T> ZERO_HD_INLINE T divRn(T a, T b) { return a / b; }
template <typename T> ZERO_HD_INLINE T sqrtRn(T a) { return std::sqrt(a); }
#endif

/// The step's scalars as the schedule gives them (double, like Python).
struct AdamHyperparameters {
  double lr, beta1, beta2, eps, weightDecay;
  /// The step count t, >= 1 with bias correction.
  int64_t step;
  bool adamw, biasCorrection, amsgrad;
};

/// The scalars of one Adam step in the math type T.
template <typename T> struct AdamConstants {
  T beta1, oneMinusBeta1, beta2, oneMinusBeta2;
  T weightDecay, decay, eps, bc2Sqrt, negStepSize;
  bool adamw, l2, amsgrad;
};

/// Rounds the scalars to T the way PyTorch's AdamW computes them.
template <typename T>
ZERO_HD inline AdamConstants<T>
getAdamConstants(const AdamHyperparameters &h) {
  AdamConstants<T> c;
  c.beta1 = static_cast<T>(h.beta1);
  c.oneMinusBeta1 = static_cast<T>(addRn(1.0, -h.beta1));
  c.beta2 = static_cast<T>(h.beta2);
  c.oneMinusBeta2 = static_cast<T>(addRn(1.0, -h.beta2));
  c.weightDecay = static_cast<T>(h.weightDecay);
  c.decay = static_cast<T>(addRn(1.0, -mulRn(h.lr, h.weightDecay)));
  c.eps = static_cast<T>(h.eps);
  c.adamw = h.adamw;
  c.l2 = !h.adamw && h.weightDecay != 0.0;
  c.amsgrad = h.amsgrad;
  const double t = static_cast<double>(h.step);
  const double bc1 = h.biasCorrection ? addRn(1.0, -pow(h.beta1, t)) : 1.0;
  const double bc2 = h.biasCorrection ? addRn(1.0, -pow(h.beta2, t)) : 1.0;
  c.negStepSize = static_cast<T>(-divRn(h.lr, bc1));
  c.bc2Sqrt = static_cast<T>(sqrtRn(bc2));
  return c;
}

/// One Adam element: updates p, m, v (and vMax, read and written only with
/// amsgrad) from the gradient g.
template <typename T>
ZERO_HD_INLINE void adamElement(const AdamConstants<T> &c, T &p, T g, T &m,
                                T &v, T &vMax) {
  if (c.l2)
    g = fmaRn(p, c.weightDecay, g);
  if (c.adamw)
    p = mulRn(p, c.decay);
  T mi = mulRn(m, c.beta1);
  mi = fmaRn(g, c.oneMinusBeta1, mi);
  T vi = mulRn(v, c.beta2);
  vi = fmaRn(mulRn(c.oneMinusBeta2, g), g, vi);
  T second = vi;
  if (c.amsgrad) {
    // torch.maximum propagates a NaN of either side (fmax would not).
    second = vMax > vi || vMax != vMax ? vMax : vi;
    vMax = second;
  }
  const T denom = addRn(divRn(sqrtRn(second), c.bc2Sqrt), c.eps);
  p = addRn(p, divRn(mulRn(c.negStepSize, mi), denom));
  m = mi;
  v = vi;
}

/// zero.adam's and zero.sgd's gradient under a loss scale (their unscale
/// and clip operands): divided by `scale`, then multiplied by `coef`, each in
/// f32 and rounded once, before the update converts it to its math type.
struct GradientScaling {
  bool unscale = false, clip = false;
  float scale = 1.0f, coef = 1.0f;

  ZERO_HD_INLINE bool active() const { return unscale || clip; }
};

/// One gradient element, widened exactly to f32 from its tensor's type
/// (f64 rounded once), as the update reads it.
ZERO_HD_INLINE float scaleGradient(const GradientScaling &s, float g) {
  if (s.unscale)
    g = divRn(g, s.scale);
  if (s.clip)
    g = mulRn(g, s.coef);
  return g;
}

/// The scalars of one SGD step in the math type T.
template <typename T> struct SgdConstants {
  T weightDecay, momentum, oneMinusDampening, negLr;
  bool nesterov;
};

template <typename T>
ZERO_HD_INLINE SgdConstants<T> getSgdConstants(double lr, double weightDecay,
                                               double momentum,
                                               double dampening,
                                               bool nesterov) {
  SgdConstants<T> c;
  c.weightDecay = static_cast<T>(weightDecay);
  c.momentum = static_cast<T>(momentum);
  c.oneMinusDampening = static_cast<T>(addRn(1.0, -dampening));
  c.negLr = static_cast<T>(-lr);
  c.nesterov = nesterov;
  return c;
}

/// One SGD element; `buf` is read and written only with momentum.
template <typename T>
ZERO_HD_INLINE void sgdElement(const SgdConstants<T> &c, T &p, T g, T &buf) {
  if (c.weightDecay != T(0))
    g = fmaRn(p, c.weightDecay, g);
  if (c.momentum != T(0)) {
    const T b = fmaRn(g, c.oneMinusDampening, mulRn(buf, c.momentum));
    buf = b;
    g = c.nesterov ? fmaRn(b, c.momentum, g) : b;
  }
  p = fmaRn(g, c.negLr, p);
}

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_OPTIMIZERMATH_H
