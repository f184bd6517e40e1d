//===- ScalarParams.cpp - a scalar op as its kernel takes it --------------===//

#include "ScalarParams.h"

#include "ops/Check.h"

namespace zero::runtime::cuda {

StatusOr<ScalarParams> getScalarParams(const Instruction &inst,
                                       const Schedule &schedule) {
  StatusOr<ops::CheckedOp> checked = ops::checkComputeOp(
      ops::getInstructionContext(inst, schedule.name(), schedule.values()));
  if (!checked.isOk())
    return checked.status();
  ScalarParams p = {};
  p.op = checked->scalar;
  p.numOperands = static_cast<int>(inst.operands.size());
  if (p.numOperands > 3)
    return ZERO_ERROR(kInternal, "a scalar op with more than 3 operands");
  for (int i = 0; i < p.numOperands; ++i)
    p.operands[i] = inst.operands[i];
  p.result = inst.results[0];
  return p;
}

} // namespace zero::runtime::cuda
