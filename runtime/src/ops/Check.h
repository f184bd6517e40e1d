//===- Check.h - the one check of a compute instruction ---------*- C++ -*-===//
//
// Every backend checks a compute instruction here before it lowers it, so a
// schedule is refused the same way whatever runs it: operand and result
// kinds, dtypes and shapes, field values and bodies (docs/ScheduleFormat.md,
// "Compute ops"). An error names the schedule file, the instruction's path
// and field, and its loc. What the check finds beyond yes or no (a body's
// slot program, a scalar op's description) comes back for the backend to
// lower, so nothing is worked out twice.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_CHECK_H
#define ZERO_RUNTIME_OPS_CHECK_H

#include "ops/Body.h"
#include "ops/OpContext.h"
#include "ops/ScalarOp.h"

#include "zero/runtime/Schedule.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace zero::runtime::ops {

/// What checking a compute op found, for the backend that lowers it.
struct CheckedOp {
  /// linalg.map, linalg.reduce and linalg.generic: the body.
  BodyProgram body;
  /// A scalar op on registers (arith, math, a scalar arith.constant).
  ScalarOp scalar;
  /// A tensor arith.constant: its elements as registers of the result's
  /// dtype (ScalarOp.h's getConstantRegister), one for a splat.
  std::vector<Scalar> constantElements;
};

/// The context an instruction of schedule file `fileName` is checked in:
/// its messages start "<fileName>: <path>" and end "at <loc>".
OpContext getInstructionContext(const Instruction &inst,
                                const std::string &fileName,
                                const ValueTable &values);

/// Checks compute op `ctx.op()` completely.
StatusOr<CheckedOp> checkComputeOp(const OpContext &ctx);

/// Every compute instruction of a schedule, checked once: a device whose
/// planning and lowering read an instruction several times (the CUDA
/// backend's groups, row programs and kernels, and its cost model) takes
/// each check from here.
class CheckedSchedule {
public:
  /// Checks the compute instructions of `schedule`, stream by stream; the
  /// first refused one is the error, named as checkComputeOp names it.
  static StatusOr<CheckedSchedule> create(const Schedule &schedule);

  /// The check of compute instruction `inst` of the schedule; null for an
  /// instruction that is not one of them.
  const CheckedOp *find(const Instruction &inst) const;

private:
  std::unordered_map<const Instruction *, CheckedOp> checked_;
};

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_CHECK_H
