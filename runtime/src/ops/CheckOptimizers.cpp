//===- CheckOptimizers.cpp - the checks of the optimizer ops --------------===//
//
// zero.adam, zero.sgd (their operands laid out as OptimizerOperands.h says)
// and zero.any_nonfinite.
//
//===----------------------------------------------------------------------===//

#include "ops/OpChecks.h"

#include "ops/OptimizerOperands.h"

#include <cmath>

namespace zero::runtime::ops {

namespace {

Status expectFloatTensor(const OpContext &ctx, size_t index,
                         const ValueInfo &operand) {
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", index, operand));
  if (!isFloat(operand.dtype))
    return ctx.error("operands[" + std::to_string(index) + "]",
                     std::string("expected a float tensor, got ") +
                         getDTypeName(operand.dtype) + " for " +
                         describeValue(operand));
  return Status::ok();
}

/// The tensor operands and results of an optimizer: float tensors of
/// param's shape; each result has its state operand's type.
Status checkState(const OpContext &ctx, const OpValues &v,
                  const std::vector<size_t> &tensors,
                  const std::vector<size_t> &states) {
  const ValueInfo &param = *v.operands[0];
  for (size_t i : tensors) {
    const ValueInfo &operand = *v.operands[i];
    ZERO_RETURN_IF_ERROR(expectFloatTensor(ctx, i, operand));
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

Status checkScalarOperand(const OpContext &ctx, const OpValues &v, size_t index,
                          DType dtype) {
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", index, *v.operands[index]));
  return ctx.expectDType("operands", index, *v.operands[index], dtype);
}

/// The gradient scalars of `layout`: f32 scale and coefficient, an i1 flag.
Status checkScaling(const OpContext &ctx, const OpValues &v,
                    const GradientScalingOperands &layout) {
  if (layout.scale != layout.kAbsent)
    ZERO_RETURN_IF_ERROR(checkScalarOperand(ctx, v, layout.scale, DType::F32));
  if (layout.coef != layout.kAbsent)
    ZERO_RETURN_IF_ERROR(checkScalarOperand(ctx, v, layout.coef, DType::F32));
  if (layout.skip != layout.kAbsent)
    ZERO_RETURN_IF_ERROR(checkScalarOperand(ctx, v, layout.skip, DType::I1));
  return Status::ok();
}

/// "" or " and 2 gradient scalars (unscale, skip)": what the fields add.
std::string describeScaling(const GradientScalingOperands &layout) {
  if (layout.count == 0)
    return "";
  std::string names;
  auto add = [&](size_t index, const char *name) {
    if (index == layout.kAbsent)
      return;
    names += names.empty() ? "" : ", ";
    names += name;
  };
  add(layout.scale, "unscale");
  add(layout.coef, "clip");
  add(layout.skip, "skip");
  return " and " + std::to_string(layout.count) + " gradient scalar" +
         (layout.count == 1 ? "" : "s") + " (" + names + ")";
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

Status checkAdam(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  StatusOr<bool> amsgrad = ctx.getBool("amsgrad");
  if (!amsgrad.isOk())
    return amsgrad.status();
  const AdamOperands layout(*amsgrad);
  const GradientScalingOperands scaling(ctx.fields(), v.operands.size());
  const size_t base = layout.beta1 + scaling.count;
  const bool scheduledBeta1 = v.operands.size() == base + 1;
  if (v.operands.size() != base && !scheduledBeta1)
    return ctx.error(
        "operands",
        "zero.adam " + std::string(*amsgrad ? "with" : "without") + " amsgrad" +
            describeScaling(scaling) + " takes " + std::to_string(base) +
            " operands, or " + std::to_string(base + 1) +
            " with a beta1 operand, got " + std::to_string(v.operands.size()));
  ZERO_RETURN_IF_ERROR(
      ctx.expectCount("results", v.results, layout.numStates + 1));
  std::vector<size_t> tensors = {0, 1, 2, 3}, states = {0, 2, 3};
  if (*amsgrad) {
    tensors.push_back(4);
    states.push_back(4);
  }
  ZERO_RETURN_IF_ERROR(checkState(ctx, v, tensors, states));
  ZERO_RETURN_IF_ERROR(checkScalarOperand(ctx, v, layout.step, DType::I64));
  ZERO_RETURN_IF_ERROR(checkScalarOperand(ctx, v, layout.lr, DType::F32));
  if (scheduledBeta1)
    ZERO_RETURN_IF_ERROR(checkScalarOperand(ctx, v, layout.beta1, DType::F32));
  ZERO_RETURN_IF_ERROR(checkScaling(ctx, v, scaling));
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
  return Status::ok();
}

Status checkSgd(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  const GradientScalingOperands scaling(ctx.fields(), v.operands.size());
  if (v.operands.size() != kSgdOperands + scaling.count)
    return ctx.error("operands",
                     "zero.sgd" + describeScaling(scaling) + " takes " +
                         std::to_string(kSgdOperands + scaling.count) +
                         " operands, got " + std::to_string(v.operands.size()));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 2));
  ZERO_RETURN_IF_ERROR(checkState(ctx, v, {0, 1, 2}, {0, 2}));
  ZERO_RETURN_IF_ERROR(checkScalarOperand(ctx, v, 3, DType::F32));
  ZERO_RETURN_IF_ERROR(checkScaling(ctx, v, scaling));
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
  return Status::ok();
}

Status checkAnyNonFinite(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  for (size_t i = 0; i < v.operands.size(); ++i) {
    const ValueInfo &operand = *v.operands[i];
    ZERO_RETURN_IF_ERROR(expectFloatTensor(ctx, i, operand));
  }
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("results", 0, *v.results[0]));
  ZERO_RETURN_IF_ERROR(
      ctx.expectDType("results", 0, *v.results[0], DType::F32));
  return Status::ok();
}

} // namespace zero::runtime::ops
