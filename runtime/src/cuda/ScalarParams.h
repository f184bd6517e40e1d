//===- ScalarParams.h - a scalar op as its kernel takes it ------*- C++ -*-===//
//
// Plain C++, shared by ScalarOps.cu and the kernel (ScalarKernels.cuh),
// which a test also compiles for the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_SCALARPARAMS_H
#define ZERO_RUNTIME_CUDA_SCALARPARAMS_H

#include "ops/ScalarMath.h"

#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include <cstdint>

namespace zero::runtime::cuda {

struct ScalarParams {
  ops::ScalarOp op; // checked: what the op computes
  int numOperands;
  int64_t operands[3];
  int64_t result;
};

/// The parameters of scalar instruction `inst`, checked as `op` (its
/// CheckedOp::scalar).
StatusOr<ScalarParams> getScalarParams(const Instruction &inst,
                                       const ops::ScalarOp &op);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_SCALARPARAMS_H
