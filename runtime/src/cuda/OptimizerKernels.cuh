//===- OptimizerKernels.cuh - the fused optimizer kernels -------*- CUDA
//-*-===//
//
// zero.adam, zero.sgd and zero.any_nonfinite as multi-tensor applies
// (Optimizers.cu's file comment says what each does; OptimizerParams.h
// holds their tables). Device code with no CUDA header, its element
// conversions ops/ElementMath.h's: nvcc compiles it in Optimizers.cu, and
// OptimizerKernelsOnCpuTest with the host compiler for the CPU
// (runtime/test/cuda/KernelsOnCpu.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_OPTIMIZERKERNELS_CUH
#define ZERO_RUNTIME_CUDA_OPTIMIZERKERNELS_CUH

#include "DeviceErrors.cuh"
#include "OptimizerParams.h"
#include "ops/Elements.h"
#include "ops/OptimizerMath.h"

#include <type_traits>

namespace zero::runtime::cuda {

using ops::AdamConstants;
using ops::adamElement;
using ops::SgdConstants;
using ops::sgdElement;

/// Element `i` of a float tensor in the math type, as host View<T>::load.
template <typename T>
__device__ __forceinline__ T loadAs(const void *data, DType type, int64_t i) {
  if constexpr (std::is_same<T, float>::value) {
    switch (type) {
    case DType::F32:
      return static_cast<const float *>(data)[i];
    case DType::F64:
      return static_cast<float>(static_cast<const double *>(data)[i]);
    case DType::BF16:
      return ops::widenBF16(static_cast<const uint16_t *>(data)[i]);
    default:
      return ops::widenF16(static_cast<const uint16_t *>(data)[i]);
    }
  } else {
    return ops::loadElement(data, type, i).f;
  }
}

/// Stores a math-type value rounded once to the tensor's type, as host
/// View<T>::store.
template <typename T>
__device__ __forceinline__ void storeAs(void *data, DType type, int64_t i,
                                        T value) {
  if constexpr (std::is_same<T, float>::value) {
    switch (type) {
    case DType::F32:
      static_cast<float *>(data)[i] = value;
      return;
    case DType::F64:
      static_cast<double *>(data)[i] = static_cast<double>(value);
      return;
    case DType::BF16:
      static_cast<uint16_t *>(data)[i] = ops::narrowF32ToBF16(value);
      return;
    default:
      static_cast<uint16_t *>(data)[i] = ops::narrowF32ToF16(value);
      return;
    }
  } else {
    Scalar s;
    s.f = ops::roundFloat(value, type);
    ops::storeElement(data, type, i, s);
  }
}

/// Elements 4q .. 4q + 3 of an f32, bf16 or f16 tensor aligned to four
/// elements, in f32 (exact).
__device__ __forceinline__ float4 load4(const void *data, DType type,
                                        int64_t q) {
  if (type == DType::F32)
    return static_cast<const float4 *>(data)[q];
  const uint2 u = static_cast<const uint2 *>(data)[q];
  auto widen = [type](uint32_t bits) {
    const auto half = static_cast<unsigned short>(bits);
    return type == DType::BF16 ? ops::widenBF16(half) : ops::widenF16(half);
  };
  return float4{widen(u.x & 0xffffu), widen(u.x >> 16), widen(u.y & 0xffffu),
                widen(u.y >> 16)};
}

/// Stores four f32 values, each rounded once to the tensor's type (as
/// storeAs<float>).
__device__ __forceinline__ void store4(void *data, DType type, int64_t q,
                                       float4 value) {
  if (type == DType::F32) {
    static_cast<float4 *>(data)[q] = value;
    return;
  }
  auto bits = [type](float x) -> uint32_t {
    return type == DType::BF16 ? ops::narrowF32ToBF16(x)
                               : ops::narrowF32ToF16(x);
  };
  static_cast<uint2 *>(data)[q] = uint2{bits(value.x) | bits(value.y) << 16,
                                        bits(value.z) | bits(value.w) << 16};
}

/// The tensor's gradient scalars this step.
__device__ __forceinline__ ops::GradientScaling
gradientScaling(const OptimizerTensor &t, const Scalar *registers) {
  ops::GradientScaling s;
  s.unscale = t.scaleRegister >= 0;
  s.clip = t.coefRegister >= 0;
  if (s.unscale)
    s.scale = static_cast<float>(registers[t.scaleRegister].f);
  if (s.clip)
    s.coef = static_cast<float>(registers[t.coefRegister].f);
  return s;
}

__device__ __forceinline__ bool skipsStep(const OptimizerTensor &t,
                                          const Scalar *registers) {
  return t.skipRegister >= 0 && registers[t.skipRegister].i != 0;
}

/// Gradient element `i` in the math type, scaled (ops::scaleGradient) when
/// `s` is active.
template <typename T>
__device__ __forceinline__ T loadGradient(const OptimizerTensor &t, int64_t i,
                                          const ops::GradientScaling &s) {
  if (!s.active())
    return loadAs<T>(t.grad, t.gradType, i);
  return static_cast<T>(
      ops::scaleGradient(s, loadAs<float>(t.grad, t.gradType, i)));
}

__device__ __forceinline__ float4 scaleGradient4(const ops::GradientScaling &s,
                                                 float4 g) {
  if (!s.active())
    return g;
  return float4{ops::scaleGradient(s, g.x), ops::scaleGradient(s, g.y),
                ops::scaleGradient(s, g.z), ops::scaleGradient(s, g.w)};
}

/// A skipped step: the results hold the operands already; the fused 16-bit
/// copy is the parameter's conversion.
__device__ void skipChunk(const OptimizerTensor &t, const Chunk &chunk) {
  if (!t.cast)
    return;
  // Rounded once from the parameter, as the cast it replaces rounds.
  for (int64_t i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
    if (t.paramType == DType::F64)
      storeAs<double>(t.cast, t.castType, i,
                      loadAs<double>(t.param, t.paramType, i));
    else
      storeAs<float>(t.cast, t.castType, i,
                     loadAs<float>(t.param, t.paramType, i));
  }
}

//===----------------------------------------------------------------------===//
// Adam
//===----------------------------------------------------------------------===//

/// The step's beta1: the field, or the scheduled beta1's register.
__device__ __forceinline__ double adamBeta1(const OptimizerTensor &t,
                                            const Scalar *registers) {
  return t.beta1Register >= 0 ? registers[t.beta1Register].f : t.beta1;
}

template <typename T>
__device__ AdamConstants<T> adamConstants(const OptimizerTensor &t, double lr,
                                          long long step, double beta1) {
  ops::AdamHyperparameters h;
  h.lr = lr;
  h.beta1 = beta1;
  h.beta2 = t.beta2;
  h.eps = t.eps;
  h.weightDecay = t.weightDecay;
  h.step = step;
  h.adamw = t.adamw;
  h.biasCorrection = t.biasCorrection;
  h.amsgrad = t.amsgrad;
  return ops::getAdamConstants<T>(h);
}

template <typename T>
__device__ void adamChunk(const OptimizerTensor &t, const Chunk &chunk,
                          double lr, long long step, double beta1,
                          const ops::GradientScaling &s) {
  const AdamConstants<T> c = adamConstants<T>(t, lr, step, beta1);
  int64_t begin = chunk.begin;
  if constexpr (std::is_same<T, float>::value) {
    if (t.vec4) {
      // chunk.begin is a multiple of 4 (kOptimizerChunk is).
      const int64_t endQuad = begin / 4 + (chunk.end - begin) / 4;
      for (int64_t q = begin / 4 + threadIdx.x; q < endQuad; q += blockDim.x) {
        float4 p = load4(t.param, t.paramType, q);
        const float4 g = scaleGradient4(s, load4(t.grad, t.gradType, q));
        float4 m = load4(t.m, t.mType, q), v = load4(t.v, t.vType, q);
        float4 x = t.amsgrad ? load4(t.vMax, t.vMaxType, q) : float4{};
        adamElement(c, p.x, g.x, m.x, v.x, x.x);
        adamElement(c, p.y, g.y, m.y, v.y, x.y);
        adamElement(c, p.z, g.z, m.z, v.z, x.z);
        adamElement(c, p.w, g.w, m.w, v.w, x.w);
        store4(t.param, t.paramType, q, p);
        store4(t.m, t.mType, q, m);
        store4(t.v, t.vType, q, v);
        if (t.amsgrad)
          store4(t.vMax, t.vMaxType, q, x);
        if (t.cast)
          store4(t.cast, t.castType, q, p);
      }
      begin = endQuad * 4;
    }
  }
  for (int64_t i = begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
    T p = loadAs<T>(t.param, t.paramType, i);
    T m = loadAs<T>(t.m, t.mType, i);
    T v = loadAs<T>(t.v, t.vType, i);
    T vMax = t.amsgrad ? loadAs<T>(t.vMax, t.vMaxType, i) : T(0);
    adamElement(c, p, loadGradient<T>(t, i, s), m, v, vMax);
    storeAs<T>(t.param, t.paramType, i, p);
    storeAs<T>(t.m, t.mType, i, m);
    storeAs<T>(t.v, t.vType, i, v);
    if (t.amsgrad)
      storeAs<T>(t.vMax, t.vMaxType, i, vMax);
    if (t.cast)
      storeAs<T>(t.cast, t.castType, i, p);
  }
}

/// Adam's checks of its scalar registers, in the host's order: 0 when they
/// pass, else 1 (the step) or 2 (a scheduled beta1).
__device__ __forceinline__ int adamCheck(const OptimizerTensor &t,
                                         const Scalar *registers) {
  if (t.biasCorrection && registers[t.stepRegister].i < 1)
    return 1;
  const double beta1 = adamBeta1(t, registers);
  // Written to also reject NaN.
  if (t.beta1Register >= 0 && !(beta1 >= 0.0 && beta1 < 1.0))
    return 2;
  return 0;
}

__global__ void __launch_bounds__(kOptimizerThreads)
    adamKernel(const OptimizerTensor *tensors, const Chunk *chunks,
               const Scalar *registers, DeviceErrorRecord *errors,
               long long stepNumber) {
  const Chunk chunk = chunks[blockIdx.x];
  // A copy: through a reference the compiler would reload the fields after
  // every store (the stores may alias the table).
  const OptimizerTensor t = tensors[chunk.tensor];
  const double lr = registers[t.lrRegister].f;
  const long long step = registers[t.stepRegister].i;
  const double beta1 = adamBeta1(t, registers);
  if (const int failed = adamCheck(t, registers)) {
    // The host stops at the group's first failing instruction: only its
    // chunks report, whichever block runs first.
    bool first = true;
    for (int32_t e = 0; e < chunk.tensor && first; ++e)
      first = adamCheck(tensors[e], registers) == 0;
    if (threadIdx.x == 0 && first) {
      if (failed == 1)
        raiseDeviceError(errors, t.stepSite, 0, step, stepNumber);
      else // the value's bits; the site's message turns them back
        raiseDeviceError(errors, t.beta1Site, 0,
                         static_cast<long long>(ops::bitsOfDouble(beta1)),
                         stepNumber);
    }
    return; // the host updates nothing either
  }
  if (skipsStep(t, registers))
    return skipChunk(t, chunk);
  const ops::GradientScaling s = gradientScaling(t, registers);
  if (t.paramType == DType::F64)
    adamChunk<double>(t, chunk, lr, step, beta1, s);
  else
    adamChunk<float>(t, chunk, lr, step, beta1, s);
}

//===----------------------------------------------------------------------===//
// SGD
//===----------------------------------------------------------------------===//

template <typename T>
__device__ void sgdChunk(const OptimizerTensor &t, const Chunk &chunk,
                         double lr, const ops::GradientScaling &s) {
  const SgdConstants<T> c = ops::getSgdConstants<T>(
      lr, t.weightDecay, t.momentum, t.dampening, t.nesterov);
  int64_t begin = chunk.begin;
  if constexpr (std::is_same<T, float>::value) {
    if (t.vec4) {
      const int64_t endQuad = begin / 4 + (chunk.end - begin) / 4;
      for (int64_t q = begin / 4 + threadIdx.x; q < endQuad; q += blockDim.x) {
        float4 p = load4(t.param, t.paramType, q);
        const float4 g = scaleGradient4(s, load4(t.grad, t.gradType, q));
        float4 b = load4(t.m, t.mType, q);
        sgdElement(c, p.x, g.x, b.x);
        sgdElement(c, p.y, g.y, b.y);
        sgdElement(c, p.z, g.z, b.z);
        sgdElement(c, p.w, g.w, b.w);
        store4(t.param, t.paramType, q, p);
        store4(t.m, t.mType, q, b);
        if (t.cast)
          store4(t.cast, t.castType, q, p);
      }
      begin = endQuad * 4;
    }
  }
  for (int64_t i = begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
    T p = loadAs<T>(t.param, t.paramType, i);
    T b = loadAs<T>(t.m, t.mType, i);
    sgdElement(c, p, loadGradient<T>(t, i, s), b);
    storeAs<T>(t.param, t.paramType, i, p);
    storeAs<T>(t.m, t.mType, i, b);
    if (t.cast)
      storeAs<T>(t.cast, t.castType, i, p);
  }
}

__global__ void __launch_bounds__(kOptimizerThreads)
    sgdKernel(const OptimizerTensor *tensors, const Chunk *chunks,
              const Scalar *registers) {
  const Chunk chunk = chunks[blockIdx.x];
  // A copy: through a reference the compiler would reload the fields after
  // every store (the stores may alias the table).
  const OptimizerTensor t = tensors[chunk.tensor];
  if (skipsStep(t, registers))
    return skipChunk(t, chunk);
  const double lr = registers[t.lrRegister].f;
  const ops::GradientScaling s = gradientScaling(t, registers);
  if (t.paramType == DType::F64)
    sgdChunk<double>(t, chunk, lr, s);
  else
    sgdChunk<float>(t, chunk, lr, s);
}

//===----------------------------------------------------------------------===//
// zero.any_nonfinite
//===----------------------------------------------------------------------===//

/// One launch, no clearing of the register before it: each block that finds
/// an infinity or a NaN marks the tally, and the last block to finish
/// writes the flag and resets the tally for the next run (CUDA's
/// threadFenceReduction pattern).
__global__ void __launch_bounds__(kOptimizerThreads)
    anyNonFiniteKernel(const CheckedTensor *tensors, const Chunk *chunks,
                       NonFiniteTally *tally, Scalar *registers, int64_t flag) {
  const Chunk chunk = chunks[blockIdx.x];
  const CheckedTensor t = tensors[chunk.tensor];
  bool found = false;
  for (int64_t i = chunk.begin + threadIdx.x; i < chunk.end && !found;
       i += blockDim.x)
    found = ops::isNonFiniteElement(t.data, t.type, i);
  const bool blockFound = __syncthreads_or(found);
  if (threadIdx.x != 0)
    return;
  if (blockFound)
    atomicOr(&tally->found, 1u);
  // The mark is visible to the block that takes the last ticket.
  __threadfence();
  if (atomicAdd(&tally->finished, 1u) != gridDim.x - 1)
    return;
  const unsigned any = atomicExch(&tally->found, 0u);
  tally->finished = 0;
  registers[flag].f = any ? 1.0 : 0.0;
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_OPTIMIZERKERNELS_CUH
