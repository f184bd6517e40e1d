//===- Optimizers.cpp - zero.adam and zero.sgd ----------------------------===//
//
// One optimizer step on a shard, with the float operations of PyTorch's
// single-tensor CPU implementations (torch.optim.AdamW/Adam/SGD with
// foreach=False, fused=False), so that a run can be compared with PyTorch
// step by step. Math is in f32 (f64 for f64 parameters, as PyTorch computes
// on double tensors); scalars are computed in double like Python.
//
// Adam (t = the step operand, lr = the lr operand, all in f32 unless said):
//   g      = grad (converted to f32)
//   l2:    g = fma(param, weight_decay, g)          grad.add(param, alpha=wd)
//   adamw: param = param * f32(1 - lr * weight_decay)       param.mul_(...)
//   m      = m * beta1; m = fma(g, 1 - beta1, m)    mul_(b1).add_(g, alpha=..)
//   v      = v * beta2; v = fma((1 - beta2) * g, g, v)   mul_(b2).addcmul_(..)
//   bc1    = 1 - beta1^t, bc2 = 1 - beta2^t (double; 1 without correction)
//   denom  = sqrt(v) / f32(sqrt(bc2)) + eps
//   param  = param + (f32(-lr / bc1) * m) / denom   addcdiv_(m, denom, -lr/bc1)
// PyTorch's vectorized kernels compute add with alpha as a fused multiply-add
// and its compiler fuses addcmul's multiply and add; the fma calls here do the
// same.
//
// SGD:
//   g     = grad; if weight_decay: g = fma(param, weight_decay, g)
//   if momentum: buf = fma(g, 1 - dampening, buf * momentum)
//                g = nesterov ? fma(buf, momentum, g) : buf
//   param = fma(g, -lr, param)
// The buffer starts at zero, where PyTorch starts it at the first gradient:
// the same unless dampening > 0.
//
//===----------------------------------------------------------------------===//

#include "Elements.h"
#include "HostOps.h"
#include "Parallel.h"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace zero::runtime::host {

namespace {

constexpr int64_t kBlock = 4096;

/// The scalars of one step, in the type of the math T: f32, or f64 for f64
/// parameters (as PyTorch computes on double tensors).
template <typename T> struct AdamConstants {
  T beta1, oneMinusBeta1, beta2, oneMinusBeta2;
  T weightDecay, decay, eps, bc2Sqrt, negStepSize;
  bool adamw, l2;
};

template <typename T>
inline void adamUpdate(const AdamConstants<T> &c, int64_t n, T *param,
                       const T *grad, T *m, T *v) {
  for (int64_t i = 0; i < n; ++i) {
    T g = grad[i];
    T p = param[i];
    if (c.l2)
      g = std::fma(p, c.weightDecay, g);
    if (c.adamw)
      p = p * c.decay;
    T mi = m[i] * c.beta1;
    mi = std::fma(g, c.oneMinusBeta1, mi);
    T vi = v[i] * c.beta2;
    vi = std::fma(c.oneMinusBeta2 * g, g, vi);
    const T denom = std::sqrt(vi) / c.bc2Sqrt + c.eps;
    param[i] = p + (c.negStepSize * mi) / denom;
    m[i] = mi;
    v[i] = vi;
  }
}

// Compiled for FMA hardware where the CPU has it (std::fma is a library call
// otherwise): same results, several times faster.
__attribute__((target_clones("fma", "default"))) void
adamBlock(const AdamConstants<float> &c, int64_t n, float *param,
          const float *grad, float *m, float *v) {
  adamUpdate(c, n, param, grad, m, v);
}

__attribute__((target_clones("fma", "default"))) void
adamBlock(const AdamConstants<double> &c, int64_t n, double *param,
          const double *grad, double *m, double *v) {
  adamUpdate(c, n, param, grad, m, v);
}

template <typename T> struct SgdConstants {
  T weightDecay, momentum, oneMinusDampening, negLr;
  bool nesterov;
};

template <typename T>
inline void sgdUpdate(const SgdConstants<T> &c, int64_t n, T *param,
                      const T *grad, T *buf) {
  for (int64_t i = 0; i < n; ++i) {
    T g = grad[i];
    const T p = param[i];
    if (c.weightDecay != T(0))
      g = std::fma(p, c.weightDecay, g);
    if (c.momentum != T(0)) {
      const T b = std::fma(g, c.oneMinusDampening, buf[i] * c.momentum);
      buf[i] = b;
      g = c.nesterov ? std::fma(b, c.momentum, g) : b;
    }
    param[i] = std::fma(g, c.negLr, p);
  }
}

__attribute__((target_clones("fma", "default"))) void
sgdBlock(const SgdConstants<float> &c, int64_t n, float *param,
         const float *grad, float *buf) {
  sgdUpdate(c, n, param, grad, buf);
}

__attribute__((target_clones("fma", "default"))) void
sgdBlock(const SgdConstants<double> &c, int64_t n, double *param,
         const double *grad, double *buf) {
  sgdUpdate(c, n, param, grad, buf);
}

/// A tensor operand seen as blocks of T: memory of type T directly, other
/// float types converted into a buffer and (for state) back.
template <typename T> struct View {
  void *data;
  DType dtype;
  std::vector<T> buffer;

  static constexpr DType kType =
      std::is_same<T, float>::value ? DType::F32 : DType::F64;

  T *load(int64_t begin, int64_t count) {
    if (dtype == kType)
      return static_cast<T *>(data) + begin;
    buffer.resize(count);
    if constexpr (std::is_same<T, float>::value) {
      loadFloats(data, dtype, begin, count, buffer.data());
    } else {
      for (int64_t i = 0; i < count; ++i)
        buffer[i] = loadElement(data, dtype, begin + i).f;
    }
    return buffer.data();
  }
  void store(int64_t begin, int64_t count) {
    if (dtype == kType)
      return;
    if constexpr (std::is_same<T, float>::value) {
      storeFloats(data, dtype, begin, count, buffer.data());
    } else {
      for (int64_t i = 0; i < count; ++i) {
        Scalar value;
        value.f = roundFloat(buffer[i], dtype);
        storeElement(data, dtype, begin + i, value);
      }
    }
  }
};

/// The state operands are updated in their results: each result starts as a
/// copy of its operand when their memory differs.
void *prepareResult(Frame &frame, const ValueInfo &operand,
                    const ValueInfo &result) {
  void *in = frame.tensor(operand.id).data;
  void *out = frame.tensor(result.id).data;
  if (in != out)
    std::memmove(out, in, operand.bytes());
  return out;
}

class AdamOp : public ComputeOp {
public:
  AdamOp(const OpContext &ctx, const OpValues &v, double beta1, double beta2,
         double eps, double weightDecay, bool adamw, bool biasCorrection)
      : site_(ctx.site()), beta1_(beta1), beta2_(beta2), eps_(eps),
        weightDecay_(weightDecay), adamw_(adamw),
        biasCorrection_(biasCorrection) {
    for (int i = 0; i < 6; ++i)
      operands_[i] = *v.operands[i];
    for (int i = 0; i < 3; ++i)
      results_[i] = *v.results[i];
  }

  Status run(Frame &frame) override {
    const int64_t step = frame.scalar(operands_[4].id).i;
    const double lr = frame.scalar(operands_[5].id).f;
    if (biasCorrection_ && step < 1)
      return site_.error(StatusCode::kOutOfRange, "operands[4]",
                         "the step is " + std::to_string(step) +
                             ", but Adam's bias correction needs a step >= 1");
    if (results_[0].dtype == DType::F64)
      update<double>(frame, lr, step);
    else
      update<float>(frame, lr, step);
    return Status::ok();
  }

private:
  template <typename T> void update(Frame &frame, double lr, int64_t step) {
    AdamConstants<T> c;
    c.beta1 = static_cast<T>(beta1_);
    c.oneMinusBeta1 = static_cast<T>(1.0 - beta1_);
    c.beta2 = static_cast<T>(beta2_);
    c.oneMinusBeta2 = static_cast<T>(1.0 - beta2_);
    c.weightDecay = static_cast<T>(weightDecay_);
    c.decay = static_cast<T>(1.0 - lr * weightDecay_);
    c.eps = static_cast<T>(eps_);
    c.adamw = adamw_;
    c.l2 = !adamw_ && weightDecay_ != 0.0;
    const double t = static_cast<double>(step);
    const double bc1 = biasCorrection_ ? 1.0 - std::pow(beta1_, t) : 1.0;
    const double bc2 = biasCorrection_ ? 1.0 - std::pow(beta2_, t) : 1.0;
    c.negStepSize = static_cast<T>(-(lr / bc1));
    c.bc2Sqrt = static_cast<T>(std::sqrt(bc2));

    void *param = prepareResult(frame, operands_[0], results_[0]);
    void *m = prepareResult(frame, operands_[2], results_[1]);
    void *v = prepareResult(frame, operands_[3], results_[2]);
    void *grad = frame.tensor(operands_[1].id).data;
    const int64_t numel = operands_[0].numel;
    parallelBlocks(numel, kBlock, numel * 8, [&](int64_t begin, int64_t end) {
      const int64_t count = end - begin;
      View<T> p{param, results_[0].dtype, {}}, g{grad, operands_[1].dtype, {}},
          mv{m, results_[1].dtype, {}}, vv{v, results_[2].dtype, {}};
      adamBlock(c, count, p.load(begin, count), g.load(begin, count),
                mv.load(begin, count), vv.load(begin, count));
      p.store(begin, count);
      mv.store(begin, count);
      vv.store(begin, count);
    });
  }

  OpSite site_;
  ValueInfo operands_[6];
  ValueInfo results_[3];
  double beta1_, beta2_, eps_, weightDecay_;
  bool adamw_, biasCorrection_;
};

class SgdOp : public ComputeOp {
public:
  SgdOp(const OpValues &v, double momentum, double dampening,
        double weightDecay, bool nesterov)
      : momentum_(momentum), dampening_(dampening), weightDecay_(weightDecay),
        nesterov_(nesterov) {
    for (int i = 0; i < 4; ++i)
      operands_[i] = *v.operands[i];
    for (int i = 0; i < 2; ++i)
      results_[i] = *v.results[i];
  }

  Status run(Frame &frame) override {
    const double lr = frame.scalar(operands_[3].id).f;
    if (results_[0].dtype == DType::F64)
      update<double>(frame, lr);
    else
      update<float>(frame, lr);
    return Status::ok();
  }

private:
  template <typename T> void update(Frame &frame, double lr) {
    SgdConstants<T> c;
    c.weightDecay = static_cast<T>(weightDecay_);
    c.momentum = static_cast<T>(momentum_);
    c.oneMinusDampening = static_cast<T>(1.0 - dampening_);
    c.negLr = static_cast<T>(-lr);
    c.nesterov = nesterov_;
    void *param = prepareResult(frame, operands_[0], results_[0]);
    void *buf = prepareResult(frame, operands_[2], results_[1]);
    void *grad = frame.tensor(operands_[1].id).data;
    const int64_t numel = operands_[0].numel;
    parallelBlocks(numel, kBlock, numel * 4, [&](int64_t begin, int64_t end) {
      const int64_t count = end - begin;
      View<T> p{param, results_[0].dtype, {}}, g{grad, operands_[1].dtype, {}},
          b{buf, results_[1].dtype, {}};
      sgdBlock(c, count, p.load(begin, count), g.load(begin, count),
               b.load(begin, count));
      p.store(begin, count);
      b.store(begin, count);
    });
  }

  ValueInfo operands_[4];
  ValueInfo results_[2];
  double momentum_, dampening_, weightDecay_;
  bool nesterov_;
};

/// The tensor operands and results of an optimizer: float tensors of
/// param's shape; each result has its state operand's type.
Status checkState(const OpContext &ctx, const OpValues &v,
                  const std::vector<size_t> &tensors,
                  const std::vector<size_t> &states) {
  const ValueInfo &param = *v.operands[0];
  for (size_t i : tensors) {
    const ValueInfo &operand = *v.operands[i];
    ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", i, operand));
    if (!isFloat(operand.dtype))
      return ctx.error("operands[" + std::to_string(i) + "]",
                       std::string("expected a float tensor, got ") +
                           getDTypeName(operand.dtype) + " for " +
                           describeValue(operand));
    ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", i, operand, param.shape));
  }
  for (size_t r = 0; r < states.size(); ++r) {
    const ValueInfo &state = *v.operands[states[r]];
    const ValueInfo &result = *v.results[r];
    ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", r, result));
    ZERO_RETURN_IF_ERROR(ctx.expectDType("results", r, result, state.dtype));
    ZERO_RETURN_IF_ERROR(ctx.expectShape("results", r, result, state.shape));
  }
  return Status::ok();
}

Status checkScalar(const OpContext &ctx, const OpValues &v, size_t index,
                   DType dtype) {
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", index, *v.operands[index]));
  return ctx.expectDType("operands", index, *v.operands[index], dtype);
}

/// A number field within [lo, hi) (hi excluded when `open`).
StatusOr<double> getRange(const OpContext &ctx, const char *key, double lo,
                          double hi, bool open) {
  StatusOr<double> value = ctx.getNumber(key);
  if (!value.isOk())
    return value;
  if (!(*value >= lo) || (open ? !(*value < hi) : !(*value <= hi)))
    return ctx.error(key, "must be in [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + (open ? ")" : "]") +
                              ", got " + std::to_string(*value));
  return value;
}

} // namespace

HostOpOr prepareAdam(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 6));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 3));
  ZERO_RETURN_IF_ERROR(checkState(ctx, v, {0, 1, 2, 3}, {0, 2, 3}));
  ZERO_RETURN_IF_ERROR(checkScalar(ctx, v, 4, DType::I64));
  ZERO_RETURN_IF_ERROR(checkScalar(ctx, v, 5, DType::F32));
  StatusOr<double> beta1 = getRange(ctx, "beta1", 0, 1, true);
  if (!beta1.isOk())
    return beta1.status();
  StatusOr<double> beta2 = getRange(ctx, "beta2", 0, 1, true);
  if (!beta2.isOk())
    return beta2.status();
  StatusOr<double> eps = getRange(ctx, "eps", 0, HUGE_VAL, false);
  if (!eps.isOk())
    return eps.status();
  StatusOr<double> weightDecay =
      getRange(ctx, "weight_decay", 0, HUGE_VAL, false);
  if (!weightDecay.isOk())
    return weightDecay.status();
  StatusOr<std::string> mode = ctx.getString("mode");
  if (!mode.isOk())
    return mode.status();
  if (*mode != "adamw" && *mode != "l2")
    return ctx.error("mode",
                     "expected \"adamw\" or \"l2\", got \"" + *mode + "\"");
  StatusOr<bool> biasCorrection = ctx.getBool("bias_correction");
  if (!biasCorrection.isOk())
    return biasCorrection.status();
  return std::unique_ptr<ComputeOp>(new AdamOp(ctx, v, *beta1, *beta2, *eps,
                                               *weightDecay, *mode == "adamw",
                                               *biasCorrection));
}

HostOpOr prepareSgd(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 4));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 2));
  ZERO_RETURN_IF_ERROR(checkState(ctx, v, {0, 1, 2}, {0, 2}));
  ZERO_RETURN_IF_ERROR(checkScalar(ctx, v, 3, DType::F32));
  StatusOr<double> momentum = getRange(ctx, "momentum", 0, HUGE_VAL, false);
  if (!momentum.isOk())
    return momentum.status();
  StatusOr<double> dampening = getRange(ctx, "dampening", 0, 1, false);
  if (!dampening.isOk())
    return dampening.status();
  StatusOr<double> weightDecay =
      getRange(ctx, "weight_decay", 0, HUGE_VAL, false);
  if (!weightDecay.isOk())
    return weightDecay.status();
  StatusOr<bool> nesterov = ctx.getBool("nesterov");
  if (!nesterov.isOk())
    return nesterov.status();
  if (*nesterov && (*momentum <= 0 || *dampening != 0))
    return ctx.error("nesterov", "needs momentum > 0 and dampening = 0");
  return std::unique_ptr<ComputeOp>(
      new SgdOp(v, *momentum, *dampening, *weightDecay, *nesterov));
}

} // namespace zero::runtime::host
