//===- ComputeOps.cpp - prepareComputeOp for the host backend -------------===//
//
// Hands a decoded instruction to its op's prepare function (HostOps.h).
// Everything a run needs is checked here, at load time; a run fails only on
// data (an index outside its tensor, a step below 1).
//
//===----------------------------------------------------------------------===//

#include "HostOps.h"
#include "ScalarOps.h"

namespace zero::runtime::host {

namespace {

HostOpOr prepareOp(const OpContext &ctx) {
  switch (ctx.op().code()) {
  case OpCode::Matmul:
    return prepareMatmul(ctx, false);
  case OpCode::BatchMatmul:
    return prepareMatmul(ctx, true);
  case OpCode::Transpose:
    return prepareTranspose(ctx);
  case OpCode::Broadcast:
    return prepareBroadcast(ctx);
  case OpCode::Fill:
    return prepareFill(ctx);
  case OpCode::Copy:
    return prepareCopy(ctx);
  case OpCode::Map:
    return prepareMap(ctx);
  case OpCode::Reduce:
    return prepareReduce(ctx);
  case OpCode::Generic:
    return prepareGeneric(ctx);
  case OpCode::ExtractSlice:
    return prepareExtractSlice(ctx);
  case OpCode::InsertSlice:
    return prepareInsertSlice(ctx);
  case OpCode::CollapseShape:
    return prepareReshape(ctx, true);
  case OpCode::ExpandShape:
    return prepareReshape(ctx, false);
  case OpCode::Extract:
    return prepareExtract(ctx);
  case OpCode::FromElements:
    return prepareFromElements(ctx);
  case OpCode::Splat:
    return prepareSplat(ctx);
  case OpCode::LocalShard:
    return prepareLocalShard(ctx);
  case OpCode::Adam:
    return prepareAdam(ctx);
  case OpCode::Sgd:
    return prepareSgd(ctx);
  case OpCode::AnyNonFinite:
    return prepareAnyNonFinite(ctx);
  case OpCode::Constant: {
    // A register, or with a tensor result, a tensor's bytes.
    const OpRecord &op = ctx.op();
    const ValueInfo *value =
        op.results.size() == 1 ? ctx.values().lookup(op.results[0]) : nullptr;
    if (value && value->isTensor)
      return prepareConstantTensor(ctx);
    return prepareScalarInstruction(ctx);
  }
  default:
    if (isScalarOp(ctx.op().code()))
      return prepareScalarInstruction(ctx);
    // linalg.index, collectives and synchronization: the decoder keeps
    // them off the compute stream's compute instructions.
    return ctx.error("op", "'" + ctx.name() + "' is not a compute instruction");
  }
}

/// An instruction whose work another op does (or makes unneeded).
class SkippedOp final : public ComputeOp {
public:
  Status run(Frame &) override { return Status::ok(); }
};

} // namespace

StatusOr<std::unique_ptr<ComputeOp>>
prepareComputeOp(const Instruction &inst, const std::string &fileName,
                 const ValueTable &values) {
  OpContext ctx(&inst,
                fileName.empty() ? inst.path : fileName + ": " + inst.path,
                inst.loc, values);
  ctx.setZeroInit(inst.zeroInit);
  StatusOr<std::unique_ptr<ComputeOp>> op = prepareOp(ctx);
  // Checked like any fill, then skipped: its GEMM does not read its result.
  if (op.isOk() && inst.skippedZeroFill)
    return std::unique_ptr<ComputeOp>(new SkippedOp());
  return op;
}

} // namespace zero::runtime::host

namespace zero::runtime {

Status checkComputeInstruction(const Instruction &inst,
                               const Schedule &schedule) {
  return host::prepareComputeOp(inst, schedule.name(), schedule.values())
      .status();
}

} // namespace zero::runtime
