//===- Check.h - the reference checks of a compute instruction --*- C++ -*-===//
//
// The host backend is the reference semantics of the op set: its prepare
// step checks an instruction completely (operand and result kinds, dtypes,
// shapes, field values, bodies). Every device runs these checks before
// preparing its own kernels, so a schedule is refused the same way whatever
// runs it. (zero.adam's operand layout and run-time messages, which the
// kernels share, are in ops/OptimizerOperands.h.)
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_CHECK_H
#define ZERO_RUNTIME_HOST_CHECK_H

#include "zero/runtime/Schedule.h"

namespace zero::runtime::host {

/// Checks compute instruction `inst` of `schedule`; the error names the
/// schedule, the instruction's path and field, and its loc.
Status checkInstruction(const Instruction &inst, const Schedule &schedule);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_CHECK_H
