//===- HostOps.h - preparing each kind of compute op ------------*- C++ -*-===//
//
// One build function per op (or family), called by prepareComputeOp
// (ComputeOps.cpp) once ops/Check.h has checked the instruction: each makes
// the op that runs it, and reads the instruction as checked.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_HOSTOPS_H
#define ZERO_RUNTIME_HOST_HOSTOPS_H

#include "HostOp.h"

#include "ops/Body.h"
#include "ops/OpContext.h"

#include <memory>

namespace zero::runtime::host {

using HostOpOr = StatusOr<std::unique_ptr<ComputeOp>>;

// The checking context and its helpers (ops/OpContext.h), by their short
// names in host/.
using ops::describeValue;
using ops::OpContext;
using ops::OpSite;
using ops::OpValues;

// Linalg.cpp
HostOpOr buildMatmul(const OpContext &ctx, const Instruction &inst);
/// transpose, broadcast, extract_slice, insert_slice (which starts from a
/// copy of its destination where that lives apart).
HostOpOr buildStridedCopy(const OpContext &ctx);
HostOpOr buildFill(const OpContext &ctx);
HostOpOr buildCopy(const OpContext &ctx);
/// map, reduce and generic, with their checked body.
HostOpOr buildLoopNest(const OpContext &ctx, ops::BodyProgram body);

// Tensor.cpp
HostOpOr buildReshape(const OpContext &ctx);
HostOpOr buildExtract(const OpContext &ctx);
HostOpOr buildFromElements(const OpContext &ctx);
HostOpOr buildSplat(const OpContext &ctx);
HostOpOr buildConstantTensor(const OpContext &ctx,
                             const std::vector<Scalar> &elements);

// LocalShard.cpp
HostOpOr buildLocalShard(const OpContext &ctx);

// Optimizers.cpp
HostOpOr buildAdam(const OpContext &ctx);
HostOpOr buildSgd(const OpContext &ctx);
/// zero.any_nonfinite: the overflow check of a dynamic loss scale.
HostOpOr buildAnyNonFinite(const OpContext &ctx);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_HOSTOPS_H
