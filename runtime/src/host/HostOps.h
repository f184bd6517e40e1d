//===- HostOps.h - preparing each kind of compute op ------------*- C++ -*-===//
//
// One prepare function per op (or family), called by prepareComputeOp
// (ComputeOps.cpp) once the instruction's op name is known. Each checks the
// instruction completely and returns the op that runs it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_HOSTOPS_H
#define ZERO_RUNTIME_HOST_HOSTOPS_H

#include "HostOp.h"

#include "ops/OpContext.h"

#include <memory>

namespace zero::runtime::host {

using HostOpOr = StatusOr<std::unique_ptr<ComputeOp>>;

// The checking context and its helpers (ops/OpContext.h), by their short
// names in host/.
using ops::describeValue;
using ops::formatShape;
using ops::getNumel;
using ops::OpContext;
using ops::OpSite;
using ops::OpValues;

// Linalg.cpp
HostOpOr prepareMatmul(const OpContext &ctx, bool batched);
HostOpOr prepareTranspose(const OpContext &ctx);
HostOpOr prepareBroadcast(const OpContext &ctx);
HostOpOr prepareFill(const OpContext &ctx);
HostOpOr prepareCopy(const OpContext &ctx);
HostOpOr prepareMap(const OpContext &ctx);
HostOpOr prepareReduce(const OpContext &ctx);
HostOpOr prepareGeneric(const OpContext &ctx);

// Tensor.cpp
HostOpOr prepareExtractSlice(const OpContext &ctx);
HostOpOr prepareInsertSlice(const OpContext &ctx);
HostOpOr prepareReshape(const OpContext &ctx, bool collapse);
HostOpOr prepareExtract(const OpContext &ctx);
HostOpOr prepareFromElements(const OpContext &ctx);
HostOpOr prepareSplat(const OpContext &ctx);
HostOpOr prepareConstantTensor(const OpContext &ctx);

// LocalShard.cpp
HostOpOr prepareLocalShard(const OpContext &ctx);

// Optimizers.cpp
HostOpOr prepareAdam(const OpContext &ctx);
HostOpOr prepareSgd(const OpContext &ctx);
/// zero.any_nonfinite: the overflow check of a dynamic loss scale.
HostOpOr prepareAnyNonFinite(const OpContext &ctx);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_HOSTOPS_H
