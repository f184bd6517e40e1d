//===- ScalarParams.h - a scalar op as its kernel takes it ------*- C++ -*-===//
//
// Plain C++, shared by ScalarOps.cu and the kernel (ScalarKernels.cuh),
// which a test also compiles for the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_SCALARPARAMS_H
#define ZERO_RUNTIME_CUDA_SCALARPARAMS_H

#include "ops/Predicates.h"

#include "zero/runtime/Instruction.h"
#include "zero/runtime/OpSet.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Status.h"

#include <cstdint>

namespace zero::runtime::cuda {

struct ScalarParams {
  OpCode code;
  DType resultType;
  DType operandType; // of the first operand
  ops::Predicate pred;
  int numOperands;
  int64_t operands[3];
  int64_t result;
};

/// A checked scalar instruction's parameters (its predicate resolved).
StatusOr<ScalarParams> getScalarParams(const Instruction &inst,
                                       const ValueTable &values);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_SCALARPARAMS_H
