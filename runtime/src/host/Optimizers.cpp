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
//   amsgrad: v_max = max(v_max, v), NaN if either is    torch.maximum(out=)
//   bc1    = 1 - beta1^t, bc2 = 1 - beta2^t (double; 1 without correction)
//   denom  = sqrt(amsgrad ? v_max : v) / f32(sqrt(bc2)) + eps
//   param  = param + (f32(-lr / bc1) * m) / denom   addcdiv_(m, denom, -lr/bc1)
// beta1 is the `beta1` field, or the value of the instruction's beta1 operand
// when it has one (a scheduled beta1, checked to be in [0, 1) every run).
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
// Both, under a loss scale (the unscale, clip and skip operands):
//   g = f32(grad) / scale * coef (ops::scaleGradient), then the update;
//   skip true: every result is its operand (and a fused 16-bit copy the
//   parameter's conversion), the step's checks still made.
//
// zero.any_nonfinite: 1.0 when an element of its tensors is an infinity or
// a NaN, else 0.0.
//
// The element loops are in OptimizerKernels.cpp, vectorized where the CPU
// allows with the same bits; here the operands are checked and converted.
//
//===----------------------------------------------------------------------===//

#include "Elements.h"
#include "HostOps.h"
#include "OptimizerKernels.h"
#include "Parallel.h"
#include "ops/OptimizerOperands.h"

#include "zero/runtime/Device.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <type_traits>

namespace zero::runtime::host {

namespace {

constexpr int64_t kBlock = 4096;

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

/// The gradient scalars of an instruction with `layout`, read from the
/// frame.
ops::GradientScaling readScaling(Frame &frame,
                                 const ops::GradientScalingOperands &layout,
                                 const std::vector<ValueInfo> &operands) {
  ops::GradientScaling scaling;
  if (layout.scale != layout.kAbsent) {
    scaling.unscale = true;
    scaling.scale =
        static_cast<float>(frame.scalar(operands[layout.scale].id).f);
  }
  if (layout.coef != layout.kAbsent) {
    scaling.clip = true;
    scaling.coef = static_cast<float>(frame.scalar(operands[layout.coef].id).f);
  }
  return scaling;
}

/// Whether the instruction's overflow flag skips its step this time.
bool readSkip(Frame &frame, const ops::GradientScalingOperands &layout,
              const std::vector<ValueInfo> &operands) {
  return layout.skip != layout.kAbsent &&
         frame.scalar(operands[layout.skip].id).i != 0;
}

/// Gradient elements [begin, begin + count) as an update of math type T
/// reads them under `scaling`: scaleGradient of each in `f32`, widened to
/// T in `wide` for f64 math.
template <typename T>
const T *loadScaledGradient(const void *grad, DType type, int64_t begin,
                            int64_t count, const ops::GradientScaling &scaling,
                            std::vector<float> &f32, std::vector<T> &wide) {
  f32.resize(count);
  loadFloats(grad, type, begin, count, f32.data());
  for (float &g : f32)
    g = ops::scaleGradient(scaling, g);
  if constexpr (std::is_same<T, float>::value) {
    return f32.data();
  } else {
    wide.assign(f32.begin(), f32.end());
    return wide.data();
  }
}

/// A skipped step: each state result holds its operand, and a 16-bit copy
/// (`copy`, of f32 `param`) the parameter's conversion.
void skipStep(Frame &frame, const std::vector<ValueInfo> &operands,
              const std::vector<ValueInfo> &results,
              const std::vector<size_t> &states,
              const std::optional<ValueInfo> &copy) {
  for (size_t r = 0; r < states.size(); ++r)
    prepareResult(frame, operands[states[r]], results[r]);
  if (!copy)
    return;
  const auto *param =
      static_cast<const float *>(frame.tensor(results[0].id).data);
  void *to = frame.tensor(copy->id).data;
  parallelBlocks(
      copy->numel, kBlock, copy->numel, [&](int64_t begin, int64_t end) {
        storeFloats(to, copy->dtype, begin, end - begin, param + begin);
      });
}

class AdamOp : public ComputeOp {
public:
  AdamOp(const OpContext &ctx, const OpValues &v, double beta1, double beta2,
         double eps, double weightDecay, bool adamw, bool biasCorrection,
         bool amsgrad, bool scheduledBeta1,
         const ops::GradientScalingOperands &scaling)
      : site_(ctx.site()), layout_(amsgrad), scaling_(scaling), beta1_(beta1),
        beta2_(beta2), eps_(eps), weightDecay_(weightDecay), adamw_(adamw),
        biasCorrection_(biasCorrection), amsgrad_(amsgrad),
        scheduledBeta1_(scheduledBeta1) {
    for (const ValueInfo *operand : v.operands)
      operands_.push_back(*operand);
    for (const ValueInfo *result : v.results)
      results_.push_back(*result);
  }

  Status run(Frame &frame) override {
    const int64_t step = frame.scalar(operands_[layout_.step].id).i;
    const double lr = frame.scalar(operands_[layout_.lr].id).f;
    if (biasCorrection_ && step < 1)
      return site_.error(StatusCode::kOutOfRange, operandField(layout_.step),
                         ops::describeAdamStepError(step));
    double beta1 = beta1_;
    if (scheduledBeta1_) {
      beta1 = frame.scalar(operands_[layout_.beta1].id).f;
      // Written to also reject NaN.
      if (!(beta1 >= 0.0 && beta1 < 1.0))
        return site_.error(StatusCode::kOutOfRange, operandField(layout_.beta1),
                           ops::describeAdamBeta1Error(beta1));
    }
    if (readSkip(frame, scaling_, operands_)) {
      std::vector<size_t> states = {0, 2, 3};
      if (amsgrad_)
        states.push_back(4);
      skipStep(frame, operands_, results_, states, copy_);
      return Status::ok();
    }
    const ops::GradientScaling scaling =
        readScaling(frame, scaling_, operands_);
    if (results_[0].dtype == DType::F64)
      update<double>(frame, lr, step, beta1, scaling);
    else
      update<float>(frame, lr, step, beta1, scaling);
    return Status::ok();
  }

  /// Writes the new parameter's 16-bit copy to `copy` in the same pass.
  void setCopy(const ValueInfo &copy) { copy_ = copy; }

private:
  static std::string operandField(size_t index) {
    return "operands[" + std::to_string(index) + "]";
  }

  template <typename T>
  void update(Frame &frame, double lr, int64_t step, double beta1,
              const ops::GradientScaling &scaling) {
    AdamHyperparameters h;
    h.lr = lr;
    h.beta1 = beta1;
    h.beta2 = beta2_;
    h.eps = eps_;
    h.weightDecay = weightDecay_;
    h.step = step;
    h.adamw = adamw_;
    h.biasCorrection = biasCorrection_;
    h.amsgrad = amsgrad_;
    const AdamConstants<T> c = getAdamConstants<T>(h);
    void *param = prepareResult(frame, operands_[0], results_[0]);
    void *m = prepareResult(frame, operands_[2], results_[1]);
    void *v = prepareResult(frame, operands_[3], results_[2]);
    void *vMax =
        amsgrad_ ? prepareResult(frame, operands_[4], results_[3]) : nullptr;
    void *grad = frame.tensor(operands_[1].id).data;
    const DType gradType = operands_[1].dtype;
    auto *copy =
        copy_ ? static_cast<uint16_t *>(frame.tensor(copy_->id).data) : nullptr;
    // The loops widen 16-bit gradients themselves; scaled ones are
    // widened and scaled here.
    const bool gradAsIs =
        !scaling.active() &&
        (gradType == View<T>::kType ||
         (std::is_same<T, float>::value &&
          (gradType == DType::BF16 || gradType == DType::F16)));
    const int64_t gradWidth = getDTypeWidth(gradType);
    const KernelIsa isa = getKernelIsa();
    const int64_t numel = operands_[0].numel;
    parallelBlocks(numel, kBlock, numel * 8, [&](int64_t begin, int64_t end) {
      const int64_t count = end - begin;
      View<T> p{param, results_[0].dtype, {}}, g{grad, gradType, {}},
          mv{m, results_[1].dtype, {}}, vv{v, results_[2].dtype, {}},
          vMaxView{vMax, amsgrad_ ? results_[3].dtype : View<T>::kType, {}};
      std::vector<float> scaled;
      std::vector<T> wide;
      const void *gradBlock =
          gradAsIs ? static_cast<const void *>(static_cast<const char *>(grad) +
                                               begin * gradWidth)
          : scaling.active()
              ? static_cast<const void *>(loadScaledGradient<T>(
                    grad, gradType, begin, count, scaling, scaled, wide))
              : g.load(begin, count);
      AdamArrays<T> a{p.load(begin, count),
                      gradBlock,
                      gradAsIs ? gradType : View<T>::kType,
                      mv.load(begin, count),
                      vv.load(begin, count),
                      amsgrad_ ? vMaxView.load(begin, count) : nullptr};
      if (copy) {
        a.param16 = copy + begin;
        a.param16Type = copy_->dtype;
      }
      adamLoop(isa, c, a, count);
      p.store(begin, count);
      mv.store(begin, count);
      vv.store(begin, count);
      if (amsgrad_)
        vMaxView.store(begin, count);
    });
  }

  OpSite site_;
  ops::AdamOperands layout_;
  ops::GradientScalingOperands scaling_;
  std::vector<ValueInfo> operands_;
  std::vector<ValueInfo> results_;
  double beta1_, beta2_, eps_, weightDecay_;
  bool adamw_, biasCorrection_, amsgrad_, scheduledBeta1_;
  std::optional<ValueInfo> copy_;
};

class SgdOp : public ComputeOp {
public:
  SgdOp(const OpValues &v, double momentum, double dampening,
        double weightDecay, bool nesterov,
        const ops::GradientScalingOperands &scaling)
      : scaling_(scaling), momentum_(momentum), dampening_(dampening),
        weightDecay_(weightDecay), nesterov_(nesterov) {
    for (const ValueInfo *operand : v.operands)
      operands_.push_back(*operand);
    for (const ValueInfo *result : v.results)
      results_.push_back(*result);
  }

  Status run(Frame &frame) override {
    if (readSkip(frame, scaling_, operands_)) {
      skipStep(frame, operands_, results_, {0, 2}, std::nullopt);
      return Status::ok();
    }
    const double lr = frame.scalar(operands_[3].id).f;
    const ops::GradientScaling scaling =
        readScaling(frame, scaling_, operands_);
    if (results_[0].dtype == DType::F64)
      update<double>(frame, lr, scaling);
    else
      update<float>(frame, lr, scaling);
    return Status::ok();
  }

private:
  template <typename T>
  void update(Frame &frame, double lr, const ops::GradientScaling &scaling) {
    const SgdConstants<T> c = ops::getSgdConstants<T>(
        lr, weightDecay_, momentum_, dampening_, nesterov_);
    void *param = prepareResult(frame, operands_[0], results_[0]);
    void *buf = prepareResult(frame, operands_[2], results_[1]);
    void *grad = frame.tensor(operands_[1].id).data;
    const KernelIsa isa = getKernelIsa();
    const int64_t numel = operands_[0].numel;
    parallelBlocks(numel, kBlock, numel * 4, [&](int64_t begin, int64_t end) {
      const int64_t count = end - begin;
      View<T> p{param, results_[0].dtype, {}}, g{grad, operands_[1].dtype, {}},
          b{buf, results_[1].dtype, {}};
      std::vector<float> scaled;
      std::vector<T> wide;
      const T *gradBlock =
          scaling.active()
              ? loadScaledGradient<T>(grad, operands_[1].dtype, begin, count,
                                      scaling, scaled, wide)
              : g.load(begin, count);
      sgdLoop(isa, c, count, p.load(begin, count), gradBlock,
              b.load(begin, count));
      p.store(begin, count);
      b.store(begin, count);
    });
  }

  ops::GradientScalingOperands scaling_;
  std::vector<ValueInfo> operands_;
  std::vector<ValueInfo> results_;
  double momentum_, dampening_, weightDecay_;
  bool nesterov_;
};

} // namespace

HostOpOr buildAdam(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  const OpFields &f = ctx.fields();
  const bool amsgrad = f.getBool(Field::Amsgrad);
  const ops::AdamOperands layout(amsgrad);
  const ops::GradientScalingOperands scaling(f, v.operands.size());
  const bool scheduledBeta1 =
      v.operands.size() == layout.beta1 + scaling.count + 1;
  return std::unique_ptr<ComputeOp>(new AdamOp(
      ctx, v, f.getNumber(Field::Beta1), f.getNumber(Field::Beta2),
      f.getNumber(Field::Eps), f.getNumber(Field::WeightDecay),
      f.getString(Field::Mode) == "adamw", f.getBool(Field::BiasCorrection),
      amsgrad, scheduledBeta1, scaling));
}

HostOpOr buildSgd(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  const OpFields &f = ctx.fields();
  return std::unique_ptr<ComputeOp>(
      new SgdOp(v, f.getNumber(Field::Momentum), f.getNumber(Field::Dampening),
                f.getNumber(Field::WeightDecay), f.getBool(Field::Nesterov),
                ops::GradientScalingOperands(f, v.operands.size())));
}

namespace {

class AnyNonFiniteOp : public ComputeOp {
public:
  AnyNonFiniteOp(std::vector<ValueInfo> inputs, int64_t flag)
      : inputs_(std::move(inputs)), flag_(flag) {}

  Status run(Frame &frame) override {
    std::atomic<bool> found{false};
    for (const ValueInfo &input : inputs_) {
      const void *data = frame.tensor(input.id).data;
      parallelBlocks(input.numel, kBlock, input.numel,
                     [&](int64_t begin, int64_t end) {
                       if (found.load(std::memory_order_relaxed))
                         return;
                       for (int64_t i = begin; i < end; ++i)
                         if (ops::isNonFiniteElement(data, input.dtype, i)) {
                           found.store(true, std::memory_order_relaxed);
                           return;
                         }
                     });
    }
    frame.scalar(flag_).f = found.load() ? 1.0 : 0.0;
    return Status::ok();
  }

private:
  std::vector<ValueInfo> inputs_;
  int64_t flag_;
};

} // namespace

HostOpOr buildAnyNonFinite(const OpContext &ctx) {
  std::vector<ValueInfo> inputs;
  for (int64_t id : ctx.op().operands)
    inputs.push_back(ctx.values().values[id]);
  return std::unique_ptr<ComputeOp>(
      new AnyNonFiniteOp(std::move(inputs), ctx.op().results[0]));
}

bool isAdamWithCast(const Instruction &adam, const Instruction &cast) {
  return isOptimizerParamCast(adam, cast) && adam.code() == OpCode::Adam;
}

StatusOr<std::unique_ptr<ComputeOp>>
prepareAdamWithCast(const Instruction &adam, const Instruction &cast,
                    const Schedule &schedule) {
  const ValueTable &values = schedule.values();
  HostOpOr adamOp = prepareComputeOp(adam, schedule.name(), values);
  if (!adamOp.isOk())
    return adamOp.status();
  HostOpOr castOp = prepareComputeOp(cast, schedule.name(), values);
  if (!castOp.isOk())
    return castOp.status();
  const ValueInfo &param = values.values[adam.results[0]];
  const ValueInfo &copy = values.values[cast.results[0]];
  if (param.dtype != DType::F32 ||
      (copy.dtype != DType::BF16 && copy.dtype != DType::F16) ||
      copy.numel != param.numel)
    return std::unique_ptr<ComputeOp>();
  const BufferInfo &to = schedule.bufferOf(copy.id);
  auto overlaps = [&](int64_t id) {
    const ValueInfo &value = values.values[id];
    if (!value.isTensor)
      return false;
    const BufferInfo &buffer = schedule.bufferOf(id);
    return buffer.space == to.space &&
           buffer.offset < to.offset + copy.bytes() &&
           to.offset < buffer.offset + value.bytes();
  };
  for (const std::vector<int64_t> *ids : {&adam.operands, &adam.results})
    for (int64_t id : *ids)
      if (overlaps(id))
        return std::unique_ptr<ComputeOp>();
  static_cast<AdamOp &>(**adamOp).setCopy(copy);
  return std::move(*adamOp);
}

} // namespace zero::runtime::host
