//===- ScalarParams.cpp - a scalar op as its kernel takes it --------------===//

#include "ScalarParams.h"

#include <cstring>

namespace zero::runtime::cuda {

StatusOr<ScalarParams> getScalarParams(const Instruction &inst,
                                       const ValueTable &values) {
  ScalarParams p;
  std::memset(&p, 0, sizeof(p));
  p.code = inst.code();
  p.numOperands = static_cast<int>(inst.operands.size());
  if (p.numOperands > 3)
    return ZERO_ERROR(kInternal, "a scalar op with more than 3 operands");
  for (int i = 0; i < p.numOperands; ++i)
    p.operands[i] = inst.operands[i];
  p.result = inst.results[0];
  p.resultType = values.values[p.result].dtype;
  p.operandType =
      p.numOperands ? values.values[inst.operands[0]].dtype : p.resultType;
  if (p.code == OpCode::CmpF || p.code == OpCode::CmpI) {
    const std::string &name = inst.fields.getString(Field::Predicate);
    const ops::PredicateName *predicate =
        ops::lookupPredicate(name, p.code == OpCode::CmpF);
    if (!predicate) // the checks refuse it first
      return ZERO_ERROR(kInternal, "unknown predicate '" + name + "'");
    p.pred = predicate->predicate;
  }
  return p;
}

} // namespace zero::runtime::cuda
