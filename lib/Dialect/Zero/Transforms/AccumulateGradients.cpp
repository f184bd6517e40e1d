//===- AccumulateGradients.cpp - gradient accumulation --------------------===//
//
// gradient_accumulation_steps = G runs G micro-batches per optimizer step.
// The loss becomes the mean of the micro-losses and the gradients the mean
// of the micro-gradients (as DeepSpeed scales the loss by 1/G). Where they
// are summed follows the stage: at stages 0-1 the full gradients are summed
// here and reduced once, at the boundary; at stages 2-3 each micro-gradient
// is reduce-scattered where it is produced and only shards are summed.
// DeepSpeed's grad_accum_dtype is the type of the sum; one narrower than the
// gradients sums them as stored, in 16 bits with their loss scale, which
// only exists after zero-mixed-precision.
//
// The micro-steps are a loop (MicroStepLoop.h) with one copy of the
// micro-step. Where the sums are made here, the loop is built here; where
// they follow the reduction (stages 2-3) or the 16-bit storage, each
// micro-gradient is scaled by 1/G here and `zero-reduce-gradients` builds
// the loop after its reductions. `unroll` keeps the earlier form, one copy
// of the micro-step per micro-batch, which the loop reproduces bit for bit.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "MicroStepLoop.h"
#include "TensorUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROACCUMULATEGRADIENTSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// Whether a sum in `sumType` (null: the gradients' own) of micro-gradients
/// of `gradType` can be computed before they are stored: not when it would
/// round them to a narrower (or another 16-bit) type.
bool sumsBeforeStorage(Type sumType, Type gradType) {
  return !sumType || holdsExactly(sumType, gradType);
}

struct ZeroAccumulateGradientsPass
    : public zero::impl::ZeroAccumulateGradientsPassBase<
          ZeroAccumulateGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> found = lookupTrainStep(getOperation(), entry);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = *found;
    if (steps < 1) {
      func.emitError("gradient accumulation steps must be at least 1, got ")
          << steps.getValue();
      return signalPassFailure();
    }
    Type sumType;
    if (!gradAccumDtype.empty() &&
        !(sumType = getFloatTypeByName(&getContext(), gradAccumDtype))) {
      func.emitError("unknown grad-accum-dtype '")
          << gradAccumDtype.getValue() << "'; expected fp32, bf16 or fp16";
      return signalPassFailure();
    }
    if (steps == 1)
      return;
    FailureOr<RankInfo> rank = getRankInfo(func, getArgument());
    if (failed(rank))
      return signalPassFailure();
    if (unroll)
      return unrollMicroSteps(func, *rank, sumType);

    // Stages 0-1 sum full gradients before they are stored: the loop is
    // built now, around the f32 micro-step. Otherwise the micro-gradients
    // are scaled here and the loop waits for the reductions.
    SmallVector<Accumulation> accumulations;
    bool sumsNow = rank->stage <= 1;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      bool isGrad =
          func.getResultAttr(i, ZeroDialect::getGradAttrName()) != nullptr;
      Type resultType = getElementTypeOrSelf(func.getResultTypes()[i]);
      if (isGrad && !sumsBeforeStorage(sumType, resultType))
        sumsNow = false;
      accumulations.push_back(
          {Accumulation::Kind::Mean, isGrad ? sumType : Type()});
    }
    if (sumsNow) {
      if (failed(buildMicroStepLoop(func, steps, accumulations)))
        return signalPassFailure();
      return;
    }
    // The loop comes later; its data arguments are checked now.
    if (failed(getMicroBatchedDataArgs(func, steps)))
      return signalPassFailure();
    Operation *ret = func.getBody().front().getTerminator();
    double scale = 1.0 / static_cast<double>(steps);
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      if (!func.getResultAttr(i, ZeroDialect::getGradAttrName()))
        continue;
      // Scale right after the micro-gradient is produced.
      Value grad = ret->getOperand(i);
      OpBuilder at(&getContext());
      if (Operation *def = grad.getDefiningOp())
        at.setInsertionPointAfter(def);
      else
        at.setInsertionPoint(ret);
      ret->setOperand(i, buildMean(at, grad.getLoc(), {grad}, scale));
    }
    func->setAttr(ZeroDialect::getPendingMicroStepsAttrName(),
                  Builder(&getContext()).getI64IntegerAttr(steps));
  }

  /// One copy of the micro-step per micro-batch.
  void unrollMicroSteps(func::FuncOp func, const RankInfo &rank, Type sumType) {
    Block &body = func.getBody().front();
    Operation *ret = body.getTerminator();
    SmallVector<Operation *> microStep;
    for (Operation &op : body.without_terminator())
      microStep.push_back(&op);

    // Every data argument gains the micro-step dimension.
    FailureOr<SmallVector<BlockArgument>> dataArgs =
        getMicroBatchedDataArgs(func, steps);
    if (failed(dataArgs))
      return signalPassFailure();

    // Clone the micro-step once per slice.
    OpBuilder b(ret);
    SmallVector<SmallVector<Value>> results(ret->getNumOperands());
    for (int64_t step = 0; step < steps; ++step) {
      IRMapping mapping;
      for (BlockArgument arg : *dataArgs) {
        auto type = cast<RankedTensorType>(arg.getType());
        SmallVector<OpFoldResult> offsets(type.getRank() + 1,
                                          b.getIndexAttr(0));
        offsets[0] = b.getIndexAttr(step);
        SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
        for (int64_t dim : type.getShape())
          sizes.push_back(b.getIndexAttr(dim));
        SmallVector<OpFoldResult> strides(type.getRank() + 1,
                                          b.getIndexAttr(1));
        // The slice is taken from the widened argument below.
        mapping.map(arg,
                    tensor::ExtractSliceOp::create(b, arg.getLoc(), type, arg,
                                                   offsets, sizes, strides)
                        .getResult());
      }
      for (Operation *op : microStep)
        b.clone(*op, mapping);
      for (auto [index, operand] : llvm::enumerate(ret->getOperands()))
        results[index].push_back(mapping.lookupOrDefault(operand));
    }
    // The slices read the widened arguments.
    for (BlockArgument arg : *dataArgs) {
      auto type = cast<RankedTensorType>(arg.getType());
      SmallVector<int64_t> shape{steps};
      llvm::append_range(shape, type.getShape());
      arg.setType(type.clone(shape));
    }

    // The loss and, at stages 0-1, every gradient are averaged here (unless
    // the sum must wait for storage); otherwise each micro-gradient is
    // scaled by 1/G and returned.
    double scale = 1.0 / static_cast<double>(steps);
    SmallVector<Value> newResults;
    SmallVector<DictionaryAttr> newAttrs;
    Builder attrs(&getContext());
    for (unsigned i = 0, e = ret->getNumOperands(); i < e; ++i) {
      DictionaryAttr resultAttrs = func.getResultAttrDict(i);
      bool isGrad =
          func.getResultAttr(i, ZeroDialect::getGradAttrName()) != nullptr;
      Location loc = ret->getOperand(i).getLoc();
      if (!isGrad) {
        newResults.push_back(buildMean(b, loc, results[i], scale));
        newAttrs.push_back(resultAttrs);
        continue;
      }
      Type gradType = getElementTypeOrSelf(results[i].front().getType());
      if (rank.stage <= 1 && sumsBeforeStorage(sumType, gradType)) {
        newResults.push_back(buildMean(b, loc, results[i], scale, sumType));
        newAttrs.push_back(resultAttrs);
        continue;
      }
      for (auto [step, grad] : llvm::enumerate(results[i])) {
        // Scale right after the micro-gradient is produced.
        OpBuilder at(&getContext());
        if (Operation *def = grad.getDefiningOp())
          at.setInsertionPointAfter(def);
        else
          at.setInsertionPoint(ret);
        newResults.push_back(buildMean(at, loc, {grad}, scale));
        NamedAttrList list(resultAttrs);
        list.set(ZeroDialect::getMicroStepAttrName(),
                 attrs.getI64IntegerAttr(step));
        newAttrs.push_back(list.getDictionary(&getContext()));
      }
    }
    func::ReturnOp::create(b, ret->getLoc(), newResults);
    ret->erase();
    for (Operation *op : llvm::reverse(microStep))
      op->erase();
    updateFunctionType(func);
    func.setAllResultAttrs(newAttrs);
  }
};
} // namespace
