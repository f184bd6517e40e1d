//===- ReduceGradients.cpp - average gradients across ranks ---------------===//
//
// Every rank computes gradients of its own micro-batch; the optimizer needs
// their average. Stage 0 all-reduces each gradient where it is produced.
// Stages 1-3 reduce-scatter it, so that each rank receives the average of
// only the shard it steps: stages 2 and 3 where it is produced (the full
// gradient dies at once), stage 1 at the end of the backward pass. With
// gradient accumulation at stages 2-3, each micro-step's gradient is reduced
// on its own and the shards are summed as they arrive.
//
// MiCS (layouts cut across the ranks of a node, zero-partition's
// mics-shard-size) reduce-scatters within the node and, at the accumulation
// boundary, all-reduces each accumulated shard across the nodes' replicas:
// MiCS's two-hop synchronization. Each hop averages over its own group, so
// the two make the world's average.
//
// DeepSpeed's communication_data_type, prescale_gradients and
// gradient_predivide_factor shape each reduction: the gradient is converted
// to the communication type (and pre-scaled) in one map right before it, and
// the average is either the reduction's own (`avg`) or a `sum` with scaling
// maps around it, as DeepSpeed's allreduce_bucket computes it.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "MicroStepLoop.h"
#include "TensorUtils.h"
#include "mlir/IR/TypeUtilities.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROREDUCEGRADIENTSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {
/// The type arithmetic on `types` happens in: f32, or the widest of them.
/// `tensor` converted to `elementType` and, with a `factor`, multiplied by
/// it: one map, whose product is computed in f32 (or f64) and rounded once,
/// as PyTorch multiplies 16-bit tensors by a scalar.
Value buildScaledCast(OpBuilder &b, Location loc, Value tensor,
                      Type elementType, std::optional<double> factor) {
  if (!factor)
    return buildFloatCast(b, loc, tensor, elementType);
  Type compute = getArithmeticType(b, {elementType});
  return buildElementwise(
      b, loc, tensor, elementType,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value x = buildScalarCast(nb, l, args[0], compute);
        Value c =
            arith::ConstantOp::create(nb, l, nb.getFloatAttr(compute, *factor));
        return buildScalarCast(nb, l, arith::MulFOp::create(nb, l, x, c),
                               elementType);
      });
}

/// Folds the micro-step gradients of each parameter (results with the same
/// `zero.grad` name) into one result: each is added to the running sum right
/// after it arrives, in f32 (or f64), and the sum has type `sumType` (null:
/// the type of the summands).
void sumMicroSteps(func::FuncOp func, Type sumType) {
  Operation *ret = func.getBody().front().getTerminator();
  llvm::StringMap<unsigned> firstResult;
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0, e = ret->getNumOperands(); i < e; ++i) {
    Value value = ret->getOperand(i);
    auto name =
        func.getResultAttrOfType<StringAttr>(i, ZeroDialect::getGradAttrName());
    NamedAttrList attrs(func.getResultAttrDict(i));
    attrs.erase(ZeroDialect::getMicroStepAttrName());
    auto [it, inserted] =
        name ? firstResult.try_emplace(name.getValue(), results.size())
             : std::make_pair(firstResult.end(), true);
    if (inserted) {
      results.push_back(value);
      resultAttrs.push_back(attrs.getDictionary(func.getContext()));
      continue;
    }
    Value &sum = results[it->second];
    OpBuilder b(func.getContext());
    b.setInsertionPointAfterValue(value);
    if (Operation *sumDef = sum.getDefiningOp())
      if (value.getDefiningOp() &&
          value.getDefiningOp()->isBeforeInBlock(sumDef))
        b.setInsertionPointAfter(sumDef);
    Type resultType = sumType ? sumType : getElementTypeOrSelf(value);
    sum = buildRoundedSum(b, value.getLoc(), sum, value, resultType);
  }
  if (results.size() == ret->getNumOperands())
    return;
  OpBuilder b(ret);
  func::ReturnOp::create(b, ret->getLoc(), results);
  ret->erase();
  updateFunctionType(func);
  func.setAllResultAttrs(resultAttrs);
}

/// Builds the micro-step loop `zero-accumulate-gradients` left pending, at
/// the point where the unrolled form sums the micro-steps: the loss is
/// averaged, the (scaled) gradients are summed in `sumType`.
LogicalResult buildPendingLoop(func::FuncOp func, Type sumType) {
  auto steps = func->getAttrOfType<IntegerAttr>(
      ZeroDialect::getPendingMicroStepsAttrName());
  func->removeAttr(ZeroDialect::getPendingMicroStepsAttrName());
  SmallVector<Accumulation> accumulations;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    if (func.getResultAttr(i, ZeroDialect::getGradAttrName()))
      accumulations.push_back({Accumulation::Kind::Sum, sumType});
    else
      accumulations.push_back({Accumulation::Kind::Mean, Type()});
  }
  return buildMicroStepLoop(func, steps.getInt(), accumulations);
}

/// Multiplies `reduced` by `factor` right before its first use, so that the
/// reduction's wait stays free to move and the reduction to join a bucket.
void scaleBeforeFirstUse(Value reduced, double factor) {
  Block *block = reduced.getParentBlock();
  Operation *first = nullptr;
  for (Operation *user : reduced.getUsers()) {
    Operation *op = block->findAncestorOpInBlock(*user);
    if (!first || op->isBeforeInBlock(first))
      first = op;
  }
  OpBuilder b(first);
  Value scaled = buildScaledCast(b, reduced.getLoc(), reduced,
                                 getElementTypeOrSelf(reduced), factor);
  reduced.replaceAllUsesExcept(scaled, scaled.getDefiningOp());
}

struct ZeroReduceGradientsPass
    : public zero::impl::ZeroReduceGradientsPassBase<ZeroReduceGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<PartitionedTrainStep> step =
        lookupPartitionedTrainStep(getOperation(), entry, getArgument());
    if (failed(step))
      return signalPassFailure();
    func::FuncOp func = step->func;
    const RankInfo *rank = &step->rank;

    MLIRContext *ctx = &getContext();
    // Null for an empty option.
    auto parseType = [&](StringRef option, StringRef name,
                         Type &type) -> LogicalResult {
      if (name.empty() || (type = getFloatTypeByName(ctx, name)))
        return success();
      return func.emitError("unknown ")
             << option << " '" << name << "'; expected fp32, bf16 or fp16";
    };
    Type commType, sumType;
    if (failed(parseType("communication-data-type", communicationDataType,
                         commType)) ||
        failed(parseType("grad-accum-dtype", gradAccumDtype, sumType)))
      return signalPassFailure();
    double predivide = gradientPredivideFactor;
    if (!(predivide > 0) || !std::isfinite(predivide)) {
      func.emitError("gradient-predivide-factor must be a positive number, "
                     "got ")
          << predivide;
      return signalPassFailure();
    }

    IntegerAttr quantizeBlockSize;
    if (quantizeGradientsBlockSize != 0) {
      if (quantizeGradientsBlockSize < 2 || quantizeGradientsBlockSize % 2) {
        func.emitError("quantize-gradients-block-size must be even and at "
                       "least 2 (int4 values are packed two to a byte), got ")
            << quantizeGradientsBlockSize.getValue();
        return signalPassFailure();
      }
      if (rank->stage == 0 || !reduceScatter) {
        InFlightDiagnostic diag =
            func.emitError("quantize-gradients-block-size (qgZ) quantizes "
                           "reduce-scatters, but ");
        if (rank->stage == 0)
          diag << "stage 0 reduces the gradients with all-reduces";
        else
          diag << "reduce-scatter=false reduces the gradients with "
                  "all-reduces";
        return signalPassFailure();
      }
      quantizeBlockSize = IntegerAttr::get(IntegerType::get(ctx, 64),
                                           quantizeGradientsBlockSize);
    }

    // DeepSpeed's allreduce_bucket: with the defaults, the average.
    auto worldSize = static_cast<double>(rank->worldSize);
    std::optional<double> preScale, postScale;
    if (prescaleGradients) {
      preScale = 1.0 / worldSize;
    } else if (predivide != 1.0) {
      preScale = 1.0 / predivide;
      if (predivide != worldSize)
        postScale = predivide / worldSize;
    }
    auto kind = ReductionKindAttr::get(ctx, preScale ? ReductionKind::Sum
                                                     : ReductionKind::Avg);

    llvm::StringMap<LayoutAttr> layouts;
    for (const ParamArg &param : getParamArgs(func))
      layouts[param.name] = param.layout;

    // Stages 0-1 reduce each gradient once: stored micro-steps are summed
    // first.
    bool pendingLoop =
        func->hasAttr(ZeroDialect::getPendingMicroStepsAttrName());
    if (rank->stage <= 1) {
      if (pendingLoop && failed(buildPendingLoop(func, sumType)))
        return signalPassFailure();
      sumMicroSteps(func, sumType);
    }

    OpBuilder b(ctx);
    Block &body = func.getBody().front();
    Operation *ret = body.getTerminator();
    SmallVector<Value> toPostScale;
    // Gradients whose shards the replicas all-reduce after accumulation.
    llvm::StringSet<> acrossReplicas;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(
          i, ZeroDialect::getGradAttrName());
      if (!name)
        continue;
      LayoutAttr layout = layouts.lookup(name.getValue());
      if (!layout) {
        func.emitError("result #")
            << i << " is the gradient of '" << name.getValue()
            << "', which is no parameter of the step";
        return signalPassFailure();
      }
      Value grad = ret->getOperand(i);
      if (rank->stage == 1 || !grad.getDefiningOp())
        b.setInsertionPoint(ret);
      else
        b.setInsertionPointAfter(grad.getDefiningOp());
      Location loc = grad.getLoc();
      Value operand = buildScaledCast(
          b, loc, grad, commType ? commType : getElementTypeOrSelf(grad),
          preScale);
      auto type = cast<RankedTensorType>(operand.getType());
      // As DeepSpeed's all_to_all_quant_reduce, vectors (biases, norms'
      // gains: few elements, each its own role) are reduced exactly.
      IntegerAttr quantize = type.getRank() >= 2 ? quantizeBlockSize : nullptr;
      if (quantize && !type.getElementType().isF32() &&
          !type.getElementType().isBF16() && !type.getElementType().isF16()) {
        emitError(loc, "qgZ quantizes f32, bf16 or f16 gradients, but '")
            << name.getValue() << "' is reduced in " << type.getElementType()
            << " (communication-data-type=fp32 reduces it in f32)";
        return signalPassFailure();
      }

      AsyncStartOpInterface start;
      Value reduced;
      if (rank->stage == 0 || !reduceScatter) {
        start = AllReduceStartOp::create(b, loc, operand, kind,
                                         /*grid_axes=*/nullptr);
        reduced = WaitOp::create(b, loc, start).getResult(0);
        if (rank->stage != 0)
          reduced = LocalShardOp::create(
              b, loc, layout.getShardType(type.getElementType()), reduced,
              layout);
      } else {
        FailureOr<DenseI16ArrayAttr> gridAxes =
            getLayoutGridAxes(func, layout, loc);
        if (failed(gridAxes))
          return signalPassFailure();
        start = ReduceScatterStartOp::create(b, loc, operand, kind,
                                             b.getArrayAttr({layout}),
                                             *gridAxes, quantize);
        reduced = WaitOp::create(b, loc, start).getResult(0);
        if (getReplicaGridAxes(func, layout))
          acrossReplicas.insert(name.getValue());
      }
      start->setAttr(ZeroDialect::getGradsAttrName(), b.getArrayAttr({name}));
      ret->setOperand(i, reduced);
      if (postScale)
        toPostScale.push_back(reduced);
    }
    if (rank->stage >= 2) {
      if (pendingLoop && failed(buildPendingLoop(func, sumType)))
        return signalPassFailure();
      sumMicroSteps(func, sumType);
    }
    for (Value reduced : toPostScale)
      scaleBeforeFirstUse(reduced, *postScale);
    // After the micro-step loop, on the accumulated shards, each as soon as
    // it is complete; in the communication type, as the first hop.
    ret = body.getTerminator();
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(
          i, ZeroDialect::getGradAttrName());
      if (!name || !acrossReplicas.contains(name.getValue()))
        continue;
      Value shard = ret->getOperand(i);
      Location loc = shard.getLoc();
      Type shardType = getElementTypeOrSelf(shard);
      b.setInsertionPointAfterValue(shard);
      Value operand = commType && commType != shardType
                          ? buildFloatCast(b, loc, shard, commType)
                          : shard;
      auto start = AllReduceStartOp::create(
          b, loc, operand, kind,
          getReplicaGridAxes(func, layouts.lookup(name.getValue())));
      start->setAttr(ZeroDialect::getGradsAttrName(), b.getArrayAttr({name}));
      Value reduced = WaitOp::create(b, loc, start).getResult(0);
      if (operand != shard)
        reduced = buildFloatCast(b, loc, reduced, shardType);
      ret->setOperand(i, reduced);
    }
    updateFunctionType(func);
  }
};
} // namespace
