//===- ComputeOps.cpp - prepareComputeOp for the host backend -------------===//
//
// Checks a decoded instruction (ops/Check.h) and hands it to its op's build
// function (HostOps.h). Everything a run needs is checked at load time; a
// run fails only on data (an index outside its tensor, a step below 1).
//
//===----------------------------------------------------------------------===//

#include "HostOps.h"
#include "ScalarOps.h"

#include "ops/Check.h"

namespace zero::runtime::host {

namespace {

HostOpOr buildOp(const OpContext &ctx, const Instruction &inst,
                 ops::CheckedOp checked) {
  switch (inst.code()) {
  case OpCode::Matmul:
  case OpCode::BatchMatmul:
    return buildMatmul(ctx, inst);
  case OpCode::Transpose:
  case OpCode::Broadcast:
  case OpCode::ExtractSlice:
  case OpCode::InsertSlice:
    return buildStridedCopy(ctx);
  case OpCode::Fill:
    return buildFill(ctx);
  case OpCode::Copy:
    return buildCopy(ctx);
  case OpCode::Map:
  case OpCode::Reduce:
  case OpCode::Generic:
    return buildLoopNest(ctx, std::move(checked.body));
  case OpCode::CollapseShape:
  case OpCode::ExpandShape:
    return buildReshape(ctx);
  case OpCode::Extract:
    return buildExtract(ctx);
  case OpCode::FromElements:
    return buildFromElements(ctx);
  case OpCode::Splat:
    return buildSplat(ctx);
  case OpCode::LocalShard:
    return buildLocalShard(ctx);
  case OpCode::Adam:
    return buildAdam(ctx);
  case OpCode::Sgd:
    return buildSgd(ctx);
  case OpCode::AnyNonFinite:
    return buildAnyNonFinite(ctx);
  case OpCode::Constant:
    if (ctx.values().values[inst.results[0]].isTensor)
      return buildConstantTensor(ctx, checked.constantElements);
    return buildScalarInstruction(ctx, checked.scalar);
  default:
    // The check admitted only compute ops; the rest are scalar ops.
    return buildScalarInstruction(ctx, checked.scalar);
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
  const OpContext ctx = ops::getInstructionContext(inst, fileName, values);
  StatusOr<ops::CheckedOp> checked = ops::checkComputeOp(ctx);
  if (!checked.isOk())
    return checked.status();
  // Checked like any fill, then skipped: its GEMM does not read its result.
  if (inst.skippedZeroFill)
    return std::unique_ptr<ComputeOp>(new SkippedOp());
  return buildOp(ctx, inst, std::move(*checked));
}

} // namespace zero::runtime::host
