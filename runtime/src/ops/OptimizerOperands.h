//===- OptimizerOperands.h - zero.adam's operands and run-time checks -*- C++ -*-===//
//
// What every backend reads the same way about zero.adam: where its operands
// are, and the messages of the two checks it makes of the scalars it reads
// when it runs (the step and a scheduled beta1), so that a bad value is
// refused in the same words on every device.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_OPTIMIZEROPERANDS_H
#define ZERO_RUNTIME_OPS_OPTIMIZEROPERANDS_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace zero::runtime::ops {

/// Where zero.adam's operands are: param, grad, exp_avg, exp_avg_sq, then
/// max_exp_avg_sq with amsgrad, step, lr, and a scheduled beta1 if any
/// (`beta1` is also the number of operands without it).
struct AdamOperands {
  size_t numStates, step, lr, beta1;

  explicit AdamOperands(bool amsgrad)
      : numStates(amsgrad ? 3 : 2), step(2 + numStates), lr(step + 1),
        beta1(lr + 1) {}
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
