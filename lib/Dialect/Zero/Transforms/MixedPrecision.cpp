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
    // fp32 leaves the step as it is, whatever its own float type.
    if (precision == Precision::FP32)
      return;
    Type storage = getPrecisionType(ctx, precision);

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
      unsigned index = 0;
      for (const ParamArg &param : getParamArgs(func))
        index = param.arg.getArgNumber() + 1;
      (void)func.insertArgument(
          index, RankedTensorType::get({}, attrs.getF32Type()),
          attrs.getDictionaryAttr(argAttrs), func.getLoc());
      b.setInsertionPointToStart(&body);
      scale = tensor::ExtractOp::create(b, func.getLoc(),
                                        func.getArgument(index), ValueRange{});
    }

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
      if (scale) {
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
