//===- Optimizers.cu - zero.adam, zero.sgd, zero.any_nonfinite -----------===//
//
// Fused optimizer steps: one pass over memory that reads param, grad and
// the states and writes param and the states, with ops/OptimizerMath.h's
// update, the host's: math in f32 (f64 for f64 parameters), fused
// multiply-adds where it writes fma and none elsewhere (nvcc builds with
// --fmad=false), and the per-step scalars (bias corrections, -lr / bc1,
// 1 - lr * wd) computed in double from the lr, step and (if scheduled) beta1
// registers. So results equal the host's bit for bit, except where CUDA's
// double pow differs from glibc's in the last ulp and that ulp survives the
// rounding of bc1 or sqrt(bc2) to f32 (rare; see the tests' tolerances).
//
// Every launch is a multi-tensor apply: a table of tensors (one per
// instruction) and a table of chunks of up to 64K elements, one block per
// chunk, so that one launch serves every parameter of a step.
// prepareOptimizerOp uses it with one instruction; prepareAdamGroup /
// prepareSgdGroup take a run of them (getOptimizerRunLength), each
// optionally followed by the linalg.map that casts its new parameter to 16
// bits (isOptimizerParamCast), which the kernel writes as it stores the
// parameter: one pass instead of a second launch that reads it back. Each
// thread updates four elements per iteration with vector loads and stores
// (float4 for f32, 8 bytes for bf16 and f16) where every tensor of the
// instruction is f32, bf16 or f16 and aligned to four elements; the rest
// (f64 parameters, unaligned tensors, a chunk's last elements) one element
// at a time.
//
// Under a loss scale each tensor's gradient is unscaled and clipped as it
// is loaded (ops::scaleGradient), and a true skip register leaves the
// states as the operands were (the results already hold them) and writes
// only the fused 16-bit copy. zero.any_nonfinite, the overflow check that
// makes that register, is the same multi-tensor apply over the gradients,
// in one launch.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "ops/OptimizerOperands.h"
#include "ops/OptimizerMath.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace zero::runtime::cuda {

namespace {

using ops::adamElement;
using ops::AdamConstants;
using ops::sgdElement;
using ops::SgdConstants;

constexpr int kThreads = 256;
constexpr int64_t kChunk = 65536; // a multiple of 4: float4 stays aligned

/// One instruction's tensors (the results, already holding the state
/// operands) and scalars. For SGD, `m` is the momentum buffer and `v` unused;
/// `vMax` is Adam's max_exp_avg_sq with amsgrad, else unused.
struct OptimizerTensor {
  void *param;
  const void *grad;
  void *m;
  void *v;
  void *vMax;
  DType paramType, gradType, mType, vType, vMaxType;
  int64_t numel;
  int64_t lrRegister;
  // The gradient scalars, -1 where absent (ops::GradientScalingOperands).
  int64_t scaleRegister, coefRegister, skipRegister;
  // Adam; beta1Register is -1 without a scheduled beta1.
  int64_t stepRegister, beta1Register;
  double beta1, beta2, eps;
  // Both.
  double weightDecay;
  // SGD.
  double momentum, dampening;
  bool adamw, biasCorrection, amsgrad, nesterov;
  bool vec4;
  // The 16-bit copy of the new parameter (a fused cast), else null.
  void *cast;
  DType castType;
  int32_t stepSite, beta1Site; // Adam's checks
};

struct Chunk {
  int32_t tensor;
  int64_t begin, end;
};

/// Element `i` of a float tensor in the math type, as host View<T>::load.
template <typename T>
__device__ __forceinline__ T loadAs(const void *data, DType type, int64_t i) {
  if constexpr (std::is_same<T, float>::value) {
    switch (type) {
    case DType::F32:
      return static_cast<const float *>(data)[i];
    case DType::F64:
      return __double2float_rn(static_cast<const double *>(data)[i]);
    case DType::BF16:
      return __uint_as_float(
          static_cast<uint32_t>(static_cast<const uint16_t *>(data)[i]) << 16);
    default:
      return __half2float(
          __ushort_as_half(static_cast<const uint16_t *>(data)[i]));
    }
  } else {
    return loadElement(data, type, i).f;
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
      static_cast<uint16_t *>(data)[i] =
          __bfloat16_as_ushort(__float2bfloat16_rn(value));
      return;
    default:
      static_cast<uint16_t *>(data)[i] =
          __half_as_ushort(__float2half_rn(value));
      return;
    }
  } else {
    Scalar s;
    s.f = roundFloat(value, type);
    storeElement(data, type, i, s);
  }
}

/// Elements 4q .. 4q + 3 of an f32, bf16 or f16 tensor aligned to four
/// elements, in f32 (exact).
__device__ __forceinline__ float4 load4(const void *data, DType type,
                                        int64_t q) {
  if (type == DType::F32)
    return static_cast<const float4 *>(data)[q];
  const uint2 u = static_cast<const uint2 *>(data)[q];
  if (type == DType::BF16)
    return float4{__uint_as_float(u.x << 16), __uint_as_float(u.x & 0xffff0000u),
                  __uint_as_float(u.y << 16),
                  __uint_as_float(u.y & 0xffff0000u)};
  auto half = [](uint32_t bits) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
  };
  return float4{half(u.x & 0xffffu), half(u.x >> 16), half(u.y & 0xffffu),
                half(u.y >> 16)};
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
    return type == DType::BF16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x))
                               : __half_as_ushort(__float2half_rn(x));
  };
  static_cast<uint2 *>(data)[q] =
      uint2{bits(value.x) | bits(value.y) << 16,
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
      // chunk.begin is a multiple of 4 (kChunk is).
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

__global__ void __launch_bounds__(kThreads)
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
        raiseDeviceError(errors, t.beta1Site, 0, __double_as_longlong(beta1),
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

__global__ void __launch_bounds__(kThreads)
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

/// One input of zero.any_nonfinite.
struct CheckedTensor {
  const void *data;
  DType type;
};

/// The kernel's running state between its blocks, zero between launches.
struct NonFiniteTally {
  unsigned found;    // some block found an infinity or a NaN
  unsigned finished; // blocks done
};

/// One launch, no clearing of the register before it: each block that finds
/// an infinity or a NaN marks the tally, and the last block to finish
/// writes the flag and resets the tally for the next run (CUDA's
/// threadFenceReduction pattern).
__global__ void __launch_bounds__(kThreads)
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

/// Chunks of up to kChunk elements of a tensor of `numel`, appended to
/// `chunks` as tensor `index`'s: an empty tensor gets an empty one, so that
/// every launch has a block (Adam's step check runs anyway; the overflow
/// check writes its flag).
void addChunks(int32_t index, int64_t numel, std::vector<Chunk> &chunks) {
  int64_t begin = 0;
  do {
    chunks.push_back({index, begin, std::min(numel, begin + kChunk)});
    begin += kChunk;
  } while (begin < numel);
}

class AnyNonFiniteOp final : public PreparedOp {
public:
  AnyNonFiniteOp(const CudaContext &ctx, DeviceAllocation tensors,
                 DeviceAllocation chunks, DeviceAllocation tally,
                 int64_t numChunks, int64_t flag)
      : ctx_(ctx), tensors_(std::move(tensors)), chunks_(std::move(chunks)),
        tally_(std::move(tally)), numChunks_(numChunks), flag_(flag) {}

  Status run(int64_t) override {
    clearStaleError();
    anyNonFiniteKernel<<<static_cast<unsigned>(numChunks_), kThreads, 0,
                         ctx_.compute>>>(
        static_cast<const CheckedTensor *>(tensors_.get()),
        static_cast<const Chunk *>(chunks_.get()),
        static_cast<NonFiniteTally *>(tally_.get()), ctx_.registers, flag_);
    ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  DeviceAllocation tensors_;
  DeviceAllocation chunks_;
  DeviceAllocation tally_;
  int64_t numChunks_;
  int64_t flag_;
};

//===----------------------------------------------------------------------===//
// Preparing
//===----------------------------------------------------------------------===//

/// A multi-tensor apply's tables in device memory: one entry per tensor, one
/// per chunk (a block).
struct ApplyTables {
  DeviceAllocation tensors;
  DeviceAllocation chunks;
};

template <typename Tensor>
StatusOr<ApplyTables> uploadTables(const std::vector<Tensor> &tensors,
                                   const std::vector<Chunk> &chunks,
                                   const CudaContext &ctx) {
  StatusOr<DeviceAllocation> tensorTable = DeviceAllocation::upload(
      tensors.data(), static_cast<int64_t>(tensors.size() * sizeof(Tensor)),
      *ctx.tracker);
  if (!tensorTable.isOk())
    return tensorTable.status();
  StatusOr<DeviceAllocation> chunkTable = DeviceAllocation::upload(
      chunks.data(), static_cast<int64_t>(chunks.size() * sizeof(Chunk)),
      *ctx.tracker);
  if (!chunkTable.isOk())
    return chunkTable.status();
  return ApplyTables{std::move(*tensorTable), std::move(*chunkTable)};
}

/// A group of instructions of one optimizer, as one launch.
class OptimizerOp final : public PreparedOp {
public:
  OptimizerOp(const CudaContext &ctx, DeviceErrorRecord *errors, bool adam,
              std::vector<PreparedMove> moves, DeviceAllocation tensors,
              DeviceAllocation chunks, int64_t numChunks)
      : ctx_(ctx), errors_(errors), adam_(adam), moves_(std::move(moves)),
        tensors_(std::move(tensors)), chunks_(std::move(chunks)),
        numChunks_(numChunks) {}

  Status run(int64_t step) override {
    for (const PreparedMove &move : moves_)
      ZERO_RETURN_IF_ERROR(move.enqueue(ctx_.compute));
    if (numChunks_ == 0)
      return Status::ok();
    const auto *tensors = static_cast<const OptimizerTensor *>(tensors_.get());
    const auto *chunks = static_cast<const Chunk *>(chunks_.get());
    const unsigned grid = static_cast<unsigned>(numChunks_);
    clearStaleError();
    if (adam_)
      adamKernel<<<grid, kThreads, 0, ctx_.compute>>>(
          tensors, chunks, ctx_.registers, errors_, step);
    else
      sgdKernel<<<grid, kThreads, 0, ctx_.compute>>>(tensors, chunks,
                                                     ctx_.registers);
    ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  DeviceErrorRecord *errors_;
  bool adam_;
  std::vector<PreparedMove> moves_;
  DeviceAllocation tensors_;
  DeviceAllocation chunks_;
  int64_t numChunks_;
};

PreparedOpOr prepareGroup(const std::vector<const Instruction *> &group,
                          const CudaContext &ctx, bool adam) {
  std::vector<OptimizerTensor> tensors;
  std::vector<Chunk> chunks;
  std::vector<PreparedMove> moves;
  const std::vector<OptimizerStep> steps = getOptimizerSteps(group);
  if (steps.empty() && !group.empty())
    return ZERO_ERROR(kInternal, ctx.where(*group.front()) +
                                     ": not a run of optimizer steps");
  for (const OptimizerStep &optimizerStep : steps) {
    const Instruction *inst = optimizerStep.update;
    if (inst->code() != (adam ? OpCode::Adam : OpCode::Sgd))
      return ZERO_ERROR(kInternal,
                        ctx.where(*inst) + ": mixed optimizers in one group");
    // Operands: param, grad, state(s), [step], lr, [beta1]; results: param,
    // state(s). Adam's states: exp_avg, exp_avg_sq and, with amsgrad,
    // max_exp_avg_sq.
    const OpFields &f = inst->fields;
    const bool amsgrad = adam && f.getBool(Field::Amsgrad);
    const size_t numStates = adam ? ops::AdamOperands(amsgrad).numStates : 1;
    for (size_t r = 0; r <= numStates; ++r) {
      const int64_t operand = inst->operands[r == 0 ? 0 : r + 1];
      const ValueInfo &value = ctx.value(operand);
      StatusOr<PreparedMove> move = PreparedMove::create(
          ctx.tensor(inst->results[r]), ctx.tensor(operand),
          value.numel * byteWidthOf(value.dtype), *ctx.tracker);
      if (!move.isOk())
        return move.status();
      if (!move->empty())
        moves.push_back(std::move(*move));
    }
    OptimizerTensor t;
    std::memset(&t, 0, sizeof(t));
    const ValueInfo &param = ctx.value(inst->results[0]);
    t.param = ctx.tensor(inst->results[0]);
    t.grad = ctx.tensor(inst->operands[1]);
    t.m = ctx.tensor(inst->results[1]);
    t.v = adam ? ctx.tensor(inst->results[2]) : nullptr;
    t.paramType = param.dtype;
    t.gradType = ctx.value(inst->operands[1]).dtype;
    t.mType = ctx.value(inst->results[1]).dtype;
    t.vType = adam ? ctx.value(inst->results[2]).dtype : DType::F32;
    t.vMax = amsgrad ? ctx.tensor(inst->results[3]) : nullptr;
    t.vMaxType = amsgrad ? ctx.value(inst->results[3]).dtype : DType::F32;
    t.numel = param.numel;
    t.weightDecay = f.getNumber(Field::WeightDecay);
    const ops::GradientScalingOperands scaling(f, inst->operands.size());
    auto registerOf = [&](size_t index) -> int64_t {
      return index == scaling.kAbsent ? -1 : inst->operands[index];
    };
    t.scaleRegister = registerOf(scaling.scale);
    t.coefRegister = registerOf(scaling.coef);
    t.skipRegister = registerOf(scaling.skip);
    if (adam) {
      const ops::AdamOperands layout(amsgrad);
      t.stepRegister = inst->operands[layout.step];
      t.lrRegister = inst->operands[layout.lr];
      t.beta1Register = inst->operands.size() - scaling.count > layout.beta1
                            ? inst->operands[layout.beta1]
                            : -1;
      t.beta1 = f.getNumber(Field::Beta1);
      t.beta2 = f.getNumber(Field::Beta2);
      t.eps = f.getNumber(Field::Eps);
      t.adamw = f.getString(Field::Mode) == "adamw";
      t.biasCorrection = f.getBool(Field::BiasCorrection);
      t.amsgrad = amsgrad;
      const std::string tail = CudaContext::siteSuffix(*inst);
      const std::string stepHead = ctx.sitePrefix(
          *inst, "operands[" + std::to_string(layout.step) + "]");
      t.stepSite = ctx.errors->addSite(
          StatusCode::kOutOfRange,
          [stepHead, tail](const DeviceErrorRecord &r) {
            return stepHead + ops::describeAdamStepError(r.value) + tail;
          });
      t.beta1Site = -1;
      if (t.beta1Register >= 0) {
        const std::string beta1Head = ctx.sitePrefix(
            *inst, "operands[" + std::to_string(layout.beta1) + "]");
        t.beta1Site = ctx.errors->addSite(
            StatusCode::kOutOfRange,
            [beta1Head, tail](const DeviceErrorRecord &r) {
              double beta1;
              std::memcpy(&beta1, &r.value, sizeof(beta1));
              return beta1Head + ops::describeAdamBeta1Error(beta1) + tail;
            });
      }
    } else {
      t.lrRegister = inst->operands[3];
      t.momentum = f.getNumber(Field::Momentum);
      t.dampening = f.getNumber(Field::Dampening);
      t.nesterov = f.getBool(Field::Nesterov);
    }
    if (optimizerStep.cast) {
      const int64_t copy = optimizerStep.cast->results[0];
      t.cast = ctx.tensor(copy);
      t.castType = ctx.value(copy).dtype;
    }
    auto vector = [](const void *p, DType type) {
      return isVectorOptimizerTensor(type, reinterpret_cast<uintptr_t>(p));
    };
    t.vec4 = vector(t.param, t.paramType) && vector(t.grad, t.gradType) &&
             vector(t.m, t.mType) && (!adam || vector(t.v, t.vType)) &&
             (!amsgrad || vector(t.vMax, t.vMaxType)) &&
             (!t.cast || vector(t.cast, t.castType));
    addChunks(static_cast<int32_t>(tensors.size()), t.numel, chunks);
    tensors.push_back(t);
  }
  if (chunks.size() > 0x7fffffffu)
    return ZERO_ERROR(kInvalidArgument,
                      "an optimizer group of more than 2^31 chunks");
  StatusOr<ApplyTables> tables = uploadTables(tensors, chunks, ctx);
  if (!tables.isOk())
    return tables.status();
  return std::unique_ptr<PreparedOp>(
      new OptimizerOp(ctx, ctx.errors->record(), adam, std::move(moves),
                      std::move(tables->tensors), std::move(tables->chunks),
                      static_cast<int64_t>(chunks.size())));
}

} // namespace

PreparedOpOr prepareAdamGroup(const std::vector<const Instruction *> &group,
                              const CudaContext &ctx) {
  return prepareGroup(group, ctx, true);
}

PreparedOpOr prepareSgdGroup(const std::vector<const Instruction *> &group,
                             const CudaContext &ctx) {
  return prepareGroup(group, ctx, false);
}

PreparedOpOr prepareOptimizerOp(const Instruction &inst,
                                const CudaContext &ctx) {
  return prepareGroup({&inst}, ctx, inst.code() == OpCode::Adam);
}

PreparedOpOr prepareAnyNonFiniteOp(const Instruction &inst,
                                   const CudaContext &ctx) {
  std::vector<CheckedTensor> tensors;
  std::vector<Chunk> chunks;
  for (int64_t id : inst.operands) {
    const ValueInfo &value = ctx.value(id);
    addChunks(static_cast<int32_t>(tensors.size()), value.numel, chunks);
    tensors.push_back({ctx.tensor(id), value.dtype});
  }
  if (chunks.size() > 0x7fffffffu)
    return ZERO_ERROR(kInvalidArgument,
                      ctx.where(inst) + ": more than 2^31 chunks to check");
  StatusOr<ApplyTables> tables = uploadTables(tensors, chunks, ctx);
  if (!tables.isOk())
    return tables.status();
  const NonFiniteTally zero{0, 0};
  StatusOr<DeviceAllocation> tally =
      DeviceAllocation::upload(&zero, sizeof(zero), *ctx.tracker);
  if (!tally.isOk())
    return tally.status();
  return std::unique_ptr<PreparedOp>(new AnyNonFiniteOp(
      ctx, std::move(tables->tensors), std::move(tables->chunks),
      std::move(*tally), static_cast<int64_t>(chunks.size()), inst.results[0]));
}

} // namespace zero::runtime::cuda
