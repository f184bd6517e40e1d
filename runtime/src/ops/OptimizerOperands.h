//===- OptimizerOperands.h - optimizer operands and checks ------*- C++ -*-===//
//
// What every backend reads the same way about zero.adam and zero.sgd: where
// their operands are, and the messages of the two checks zero.adam makes of
// the scalars it reads when it runs (the step and a scheduled beta1), so
// that a bad value is refused in the same words on every device.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_OPTIMIZEROPERANDS_H
#define ZERO_RUNTIME_OPS_OPTIMIZEROPERANDS_H

#include "zero/runtime/Instruction.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace zero::runtime::ops {

/// Where zero.adam's operands are: param, grad, exp_avg, exp_avg_sq, then
/// max_exp_avg_sq with amsgrad, step, lr, and a scheduled beta1 if any
/// (`beta1` is also the number of operands without it and without the
/// gradient scalars, GradientScalingOperands).
struct AdamOperands {
  size_t numStates, step, lr, beta1;

  explicit AdamOperands(bool amsgrad)
      : numStates(amsgrad ? 3 : 2), step(2 + numStates), lr(step + 1),
        beta1(lr + 1) {}
};

/// zero.sgd's operands: param, grad, momentum_buffer, lr, then the gradient
/// scalars.
inline constexpr size_t kSgdOperands = 4;

/// zero.adam's and zero.sgd's optional gradient scalars under a loss scale,
/// after all their other operands, in this order: the scale the gradient is
/// divided by (the `unscale` field), the clipping coefficient it is
/// multiplied by (`clip`) and the overflow flag that skips the step
/// (`skip`). Each index is kAbsent where the instruction has no such field
/// (or it is false).
struct GradientScalingOperands {
  static constexpr size_t kAbsent = SIZE_MAX;
  size_t scale = kAbsent, coef = kAbsent, skip = kAbsent;
  /// How many of the three the instruction has.
  size_t count = 0;

  /// The fields of `fields`, the scalars counted back from the last of
  /// `numOperands` operands.
  GradientScalingOperands(const OpFields &fields, size_t numOperands) {
    auto flag = [&](Field field) {
      return fields.has(field) && fields.getBool(field);
    };
    const bool unscale = flag(Field::Unscale), clip = flag(Field::Clip),
               skipped = flag(Field::Skip);
    count = size_t(unscale) + size_t(clip) + size_t(skipped);
    if (numOperands < count)
      return; // the caller's operand count check refuses it
    size_t next = numOperands - count;
    if (unscale)
      scale = next++;
    if (clip)
      coef = next++;
    if (skipped)
      skip = next++;
  }
};

/// The step operand is below 1: bias correction divides by 1 - beta^step.
inline std::string describeAdamStepError(int64_t step) {
  return "the step is " + std::to_string(step) +
         ", but Adam's bias correction needs a step >= 1";
}

/// A scheduled beta1 outside [0, 1).
inline std::string describeAdamBeta1Error(double beta1) {
  char value[32];
  std::snprintf(value, sizeof(value), "%.9g", beta1);
  return std::string("the beta1 operand is ") + value +
         ", but Adam's beta1 must be in [0, 1)";
}

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_OPTIMIZEROPERANDS_H
