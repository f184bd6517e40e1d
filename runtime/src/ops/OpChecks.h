//===- OpChecks.h - the check of each kind of compute op --------*- C++ -*-===//
//
// One check per op (or family), called by checkComputeOp (Check.cpp) once the
// instruction's op is known. Each checks the instruction completely: operand
// and result counts, kinds, dtypes and shapes, and its fields' values.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_OPCHECKS_H
#define ZERO_RUNTIME_OPS_OPCHECKS_H

#include "ops/Body.h"
#include "ops/OpContext.h"

namespace zero::runtime::ops {

// CheckLinalg.cpp
Status checkMatmul(const OpContext &ctx, bool batched);
Status checkTranspose(const OpContext &ctx);
Status checkBroadcast(const OpContext &ctx);
Status checkFill(const OpContext &ctx);
Status checkCopy(const OpContext &ctx);
/// map, reduce and generic give their checked body.
StatusOr<BodyProgram> checkMap(const OpContext &ctx);
StatusOr<BodyProgram> checkReduce(const OpContext &ctx);
StatusOr<BodyProgram> checkGeneric(const OpContext &ctx);

// CheckTensor.cpp
Status checkExtractSlice(const OpContext &ctx);
Status checkInsertSlice(const OpContext &ctx);
Status checkReshape(const OpContext &ctx, bool collapse);
Status checkExtract(const OpContext &ctx);
Status checkFromElements(const OpContext &ctx);
Status checkSplat(const OpContext &ctx);
/// Its elements as registers (CheckedOp::constantElements).
StatusOr<std::vector<Scalar>> checkConstantTensor(const OpContext &ctx);
Status checkLocalShard(const OpContext &ctx);

// CheckOptimizers.cpp
Status checkAdam(const OpContext &ctx);
Status checkSgd(const OpContext &ctx);
/// zero.any_nonfinite: the overflow check of a dynamic loss scale.
Status checkAnyNonFinite(const OpContext &ctx);

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_OPCHECKS_H
