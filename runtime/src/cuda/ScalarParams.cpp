//===- ScalarParams.cpp - a scalar op as its kernel takes it --------------===//

#include "ScalarParams.h"

namespace zero::runtime::cuda {

StatusOr<ScalarParams> getScalarParams(const Instruction &inst,
                                       const ops::ScalarOp &op) {
  ScalarParams p = {};
  p.op = op;
  p.numOperands = static_cast<int>(inst.operands.size());
  if (p.numOperands > 3)
    return ZERO_ERROR(kInternal, "a scalar op with more than 3 operands");
  for (int i = 0; i < p.numOperands; ++i)
    p.operands[i] = inst.operands[i];
  p.result = inst.results[0];
  return p;
}

} // namespace zero::runtime::cuda
