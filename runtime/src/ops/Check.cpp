//===- Check.cpp - the one check of a compute instruction -----------------===//
//
// Hands a decoded instruction to its op's check (OpChecks.h).
//
//===----------------------------------------------------------------------===//

#include "ops/Check.h"

#include "ops/OpChecks.h"

namespace zero::runtime::ops {

namespace {

/// `status` as the error of a StatusOr<CheckedOp>, or an empty CheckedOp.
StatusOr<CheckedOp> checkedOrError(Status status) {
  if (!status.isOk())
    return status;
  return CheckedOp();
}

/// What a check `found`, kept in `field` of a CheckedOp; or its error.
template <typename T>
StatusOr<CheckedOp> checkedWith(StatusOr<T> found, T CheckedOp::*field) {
  if (!found.isOk())
    return found.status();
  CheckedOp checked;
  checked.*field = std::move(*found);
  return checked;
}

StatusOr<CheckedOp> checkScalarInstruction(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  return checkedWith(checkScalarOp(ctx, v.operands, v.results),
                     &CheckedOp::scalar);
}

} // namespace

OpContext getInstructionContext(const Instruction &inst,
                                const std::string &fileName,
                                const ValueTable &values) {
  return OpContext(&inst,
                   fileName.empty() ? inst.path : fileName + ": " + inst.path,
                   inst.loc, values);
}

StatusOr<CheckedOp> checkComputeOp(const OpContext &ctx) {
  switch (ctx.op().code()) {
  case OpCode::Matmul:
    return checkedOrError(checkMatmul(ctx, false));
  case OpCode::BatchMatmul:
    return checkedOrError(checkMatmul(ctx, true));
  case OpCode::Transpose:
    return checkedOrError(checkTranspose(ctx));
  case OpCode::Broadcast:
    return checkedOrError(checkBroadcast(ctx));
  case OpCode::Fill:
    return checkedOrError(checkFill(ctx));
  case OpCode::Copy:
    return checkedOrError(checkCopy(ctx));
  case OpCode::Map:
    return checkedWith(checkMap(ctx), &CheckedOp::body);
  case OpCode::Reduce:
    return checkedWith(checkReduce(ctx), &CheckedOp::body);
  case OpCode::Generic:
    return checkedWith(checkGeneric(ctx), &CheckedOp::body);
  case OpCode::ExtractSlice:
    return checkedOrError(checkExtractSlice(ctx));
  case OpCode::InsertSlice:
    return checkedOrError(checkInsertSlice(ctx));
  case OpCode::CollapseShape:
    return checkedOrError(checkReshape(ctx, true));
  case OpCode::ExpandShape:
    return checkedOrError(checkReshape(ctx, false));
  case OpCode::Extract:
    return checkedOrError(checkExtract(ctx));
  case OpCode::FromElements:
    return checkedOrError(checkFromElements(ctx));
  case OpCode::Splat:
    return checkedOrError(checkSplat(ctx));
  case OpCode::LocalShard:
    return checkedOrError(checkLocalShard(ctx));
  case OpCode::Adam:
    return checkedOrError(checkAdam(ctx));
  case OpCode::Sgd:
    return checkedOrError(checkSgd(ctx));
  case OpCode::AnyNonFinite:
    return checkedOrError(checkAnyNonFinite(ctx));
  case OpCode::Constant: {
    // A register, or with a tensor result, a tensor's bytes.
    const OpRecord &op = ctx.op();
    const ValueInfo *value =
        op.results.size() == 1 ? ctx.values().lookup(op.results[0]) : nullptr;
    if (value && value->isTensor)
      return checkedWith(checkConstantTensor(ctx),
                         &CheckedOp::constantElements);
    return checkScalarInstruction(ctx);
  }
  default:
    if (isScalarOp(ctx.op().code()))
      return checkScalarInstruction(ctx);
    // linalg.index, collectives and synchronization: the decoder keeps
    // them off the compute stream's compute instructions.
    return ctx.error("op", "'" + ctx.name() + "' is not a compute instruction");
  }
}

StatusOr<CheckedSchedule> CheckedSchedule::create(const Schedule &schedule) {
  CheckedSchedule checked;
  for (const Stream &stream : schedule.streams())
    for (const Instruction &inst : stream.instructions) {
      if (inst.kind != Instruction::Kind::Compute)
        continue;
      StatusOr<CheckedOp> op = checkComputeOp(
          getInstructionContext(inst, schedule.name(), schedule.values()));
      if (!op.isOk())
        return op.status();
      checked.checked_.emplace(&inst, std::move(*op));
    }
  return checked;
}

const CheckedOp *CheckedSchedule::find(const Instruction &inst) const {
  auto it = checked_.find(&inst);
  return it == checked_.end() ? nullptr : &it->second;
}

} // namespace zero::runtime::ops
