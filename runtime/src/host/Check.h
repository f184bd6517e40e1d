//===- Check.h - the reference checks of a compute instruction --*- C++ -*-===//
//
// The host backend is the reference semantics of the op set: its prepare
// step checks an instruction completely (operand and result kinds, dtypes,
// shapes, field values, bodies). Every device runs these checks before
// preparing its own kernels, so a schedule is refused the same way whatever
// runs it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_CHECK_H
#define ZERO_RUNTIME_HOST_CHECK_H

#include "zero/runtime/Schedule.h"

namespace zero::runtime::host {

/// Checks compute instruction `inst` of `schedule`; the error names the
/// schedule, the instruction's path and field, and its loc.
Status checkInstruction(const Instruction &inst, const Schedule &schedule);

/// Where zero.adam's operands are: param, grad, exp_avg, exp_avg_sq, then
/// max_exp_avg_sq with amsgrad, step, lr, and a scheduled beta1 if any
/// (`beta1` is also the number of operands without it).
struct AdamOperands {
  size_t numStates, step, lr, beta1;

  explicit AdamOperands(bool amsgrad)
      : numStates(amsgrad ? 3 : 2), step(2 + numStates), lr(step + 1),
        beta1(lr + 1) {}
};

/// The messages of zero.adam's checks of the scalars it reads when it runs
/// (Optimizers.cpp), which the CUDA kernels report too.
std::string describeAdamStepError(int64_t step);
std::string describeAdamBeta1Error(double beta1);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_CHECK_H
