//===- MixedPrecision.cpp - 16-bit parameters and gradients ---------------===//
//
// Mixed precision as ZeRO's memory formulas assume it: parameters and
// gradients are stored, gathered and reduced in 16 bits, while the optimizer
// keeps fp32 master weights. The step's arithmetic keeps the input's type:
// each op that reads a parameter reads it through an extension placed right
// before it (so the wide copy dies with that op), and each gradient is
// truncated where it is produced (so the reduction that follows moves 16-bit
// data).
//
// fp16 scales the loss: where the step marks the constant 1 that seeds its
// backward pass (`zero.backward_seed`), the loss scale takes its place, as in
// DeepSpeed's `scale(loss).backward()`, and the gradients arrive scaled;
// without a mark the gradients are scaled where they are rounded. Otherwise
// the seed is 1 and its multiplications are dropped.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "TensorUtils.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROMIXEDPRECISIONPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The constants marked as the step's backward seed.
SmallVector<arith::ConstantOp> collectBackwardSeeds(func::FuncOp func) {
  SmallVector<arith::ConstantOp> seeds;
  func.walk([&](arith::ConstantOp cst) {
    if (cst->hasAttr(ZeroDialect::getBackwardSeedAttrName()))
      seeds.push_back(cst);
  });
  return seeds;
}

/// Replaces each seed by 1: a product with it is its other factor (exactly),
/// any other use reads an unmarked 1.
void dropBackwardSeeds(ArrayRef<arith::ConstantOp> seeds) {
  for (arith::ConstantOp seed : seeds) {
    for (OpOperand &use : llvm::make_early_inc_range(seed->getUses())) {
      auto mul = dyn_cast<arith::MulFOp>(use.getOwner());
      if (!mul)
        continue;
      mul.replaceAllUsesWith(mul->getOperand(1 - use.getOperandNumber()));
      mul.erase();
    }
    if (seed->use_empty())
      seed.erase();
    else
      seed->removeAttr(ZeroDialect::getBackwardSeedAttrName());
  }
}

struct ZeroMixedPrecisionPass
    : public zero::impl::ZeroMixedPrecisionPassBase<ZeroMixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step))
      return signalPassFailure();
    func::FuncOp func = *step;
    MLIRContext *ctx = &getContext();
    Builder attrs(ctx);
    if (lossScale < 0 || initialScalePower < 0 || initialScalePower > 127) {
      func.emitError("loss-scale must be >= 0 and initial-scale-power in "
                     "[0, 127]");
      return signalPassFailure();
    }
    SmallVector<arith::ConstantOp> seeds = collectBackwardSeeds(func);
    Type storage = precision == Precision::FP32
                       ? Type()
                       : getPrecisionType(ctx, precision);
    if (!storage || !storage.isF16())
      dropBackwardSeeds(seeds);
    // fp32 leaves the step as it is, whatever its own float type.
    if (!storage)
      return;

    Block &body = func.getBody().front();
    OpBuilder b(ctx);
    for (ParamArg param : getParamArgs(func)) {
      auto type = cast<RankedTensorType>(param.arg.getType());
      Type compute = type.getElementType();
      if (compute == storage)
        continue;
      llvm::SetVector<Operation *> users;
      for (OpOperand &use : param.arg.getUses())
        users.insert(getStepLevelOp(use.getOwner()));
      param.arg.setType(type.clone(storage));
      for (Operation *user : users) {
        b.setInsertionPoint(user);
        Value wide = buildFloatCast(b, user->getLoc(), param.arg, compute);
        param.arg.replaceUsesWithIf(wide, [&](OpOperand &use) {
          return getStepLevelOp(use.getOwner()) == user;
        });
      }
    }

    // fp16: gradients are scaled before truncation (loss scaling).
    Value scale;
    if (storage.isF16()) {
      double initial = lossScale > 0 ? static_cast<double>(lossScale)
                                     : std::ldexp(1.0, initialScalePower);
      SmallVector<NamedAttribute> argAttrs{
          attrs.getNamedAttr(ZeroDialect::getStateAttrName(),
                             attrs.getStringAttr("loss_scale")),
          attrs.getNamedAttr(ZeroDialect::getInitialValueAttrName(),
                             attrs.getF32FloatAttr(initial))};
      if (lossScale == 0)
        argAttrs.push_back(attrs.getNamedAttr(ZeroDialect::getDynamicAttrName(),
                                              attrs.getUnitAttr()));
      if (!seeds.empty())
        argAttrs.push_back(attrs.getNamedAttr(
            ZeroDialect::getScalesBackwardAttrName(), attrs.getUnitAttr()));
      unsigned index = 0;
      for (const ParamArg &param : getParamArgs(func))
        index = param.arg.getArgNumber() + 1;
      (void)func.insertArgument(
          index, RankedTensorType::get({}, attrs.getF32Type()),
          attrs.getDictionaryAttr(argAttrs), func.getLoc());
      b.setInsertionPointToStart(&body);
      scale = tensor::ExtractOp::create(b, func.getLoc(),
                                        func.getArgument(index), ValueRange{});
      for (arith::ConstantOp seed : seeds) {
        seed.replaceAllUsesWith(
            buildScalarCast(b, seed.getLoc(), scale, seed.getType()));
        seed.erase();
      }
    }
    // The gradients arrive scaled from a scaled seed.
    bool scaleGradients = scale && seeds.empty();

    Operation *ret = body.getTerminator();
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      if (!func.getResultAttr(i, ZeroDialect::getGradAttrName()))
        continue;
      Value grad = ret->getOperand(i);
      if (Operation *def = grad.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPoint(ret);
      Location loc = grad.getLoc();
      Value narrow;
      if (scaleGradients) {
        narrow = buildElementwise(
            b, loc, grad, storage,
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value s = buildScalarCast(nb, l, scale, args[0].getType());
              Value scaled = arith::MulFOp::create(nb, l, args[0], s);
              return buildScalarCast(nb, l, scaled, storage);
            });
      } else {
        narrow = buildFloatCast(b, loc, grad, storage);
      }
      ret->setOperand(i, narrow);
    }
    updateFunctionType(func);
  }
};
} // namespace
