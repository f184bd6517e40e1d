//===- HostOps.h - preparing each kind of compute op ------------*- C++ -*-===//
//
// One prepare function per op (or family), called by prepareComputeOp
// (ComputeOps.cpp) once the instruction's op name is known. Each checks the
// instruction completely and returns the op that runs it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_HOSTOPS_H
#define ZERO_RUNTIME_HOST_HOSTOPS_H

#include "OpContext.h"

#include <memory>

namespace zero::runtime::host {

using PreparedOp = StatusOr<std::unique_ptr<ComputeOp>>;

/// The keys of every top-level instruction.
#define ZERO_INSTRUCTION_KEYS "op", "point", "loc", "operands", "results"

/// The operands and results of an instruction, each defined.
struct OpValues {
  std::vector<const ValueInfo *> operands;
  std::vector<const ValueInfo *> results;
};
StatusOr<OpValues> getOpValues(const OpContext &ctx);

/// Declares `const OpValues &var` or returns the error.
#define ZERO_ASSIGN_VALUES(var, ctx)                                           \
  StatusOr<OpValues> var##OrError = getOpValues(ctx);                          \
  if (!var##OrError.isOk())                                                    \
    return var##OrError.status();                                              \
  const OpValues &var = *var##OrError

// Linalg.cpp
PreparedOp prepareMatmul(const OpContext &ctx, bool batched);
PreparedOp prepareTranspose(const OpContext &ctx);
PreparedOp prepareBroadcast(const OpContext &ctx);
PreparedOp prepareFill(const OpContext &ctx);
PreparedOp prepareCopy(const OpContext &ctx);
PreparedOp prepareMap(const OpContext &ctx);
PreparedOp prepareReduce(const OpContext &ctx);
PreparedOp prepareGeneric(const OpContext &ctx);

// Tensor.cpp
PreparedOp prepareExtractSlice(const OpContext &ctx);
PreparedOp prepareInsertSlice(const OpContext &ctx);
PreparedOp prepareReshape(const OpContext &ctx, bool collapse);
PreparedOp prepareExtract(const OpContext &ctx);
PreparedOp prepareFromElements(const OpContext &ctx);
PreparedOp prepareSplat(const OpContext &ctx);
PreparedOp prepareConstantTensor(const OpContext &ctx);

// LocalShard.cpp
PreparedOp prepareLocalShard(const OpContext &ctx);

// Optimizers.cpp
PreparedOp prepareAdam(const OpContext &ctx);
PreparedOp prepareSgd(const OpContext &ctx);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_HOSTOPS_H
