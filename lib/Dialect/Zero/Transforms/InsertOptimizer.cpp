//===- InsertOptimizer.cpp - the partitioned optimizer step ---------------===//
//
// Turns the reduced gradients into the rank's optimizer step. The optimizer
// is not in the input IR: as in DeepSpeed it comes from the configuration.
// Each rank owns the optimizer state of its partition (the whole parameter at
// stage 0) and steps only that partition; where the rank holds parameters
// whole (stages 0-2, persistent stage-3 parameters), the updated partitions
// are all-gathered back into full parameters.
//
// With fp16 (a `zero.state = "loss_scale"` argument from zero-mixed-precision)
// the gradients are unscaled before clipping and the optimizer; a dynamic
// scale adds DeepSpeed's overflow check, the skipped step and the scale
// update (docs/Passes.md, "fp16 loss scaling").
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "LearningRateSchedule.h"
#include "TensorUtils.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROINSERTOPTIMIZERPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The most optimizer-step tiles of one parameter (see buildTiledUpdate).
constexpr int64_t kMaxTiles = 1 << 16;

/// The update rule: `optimizer` with adam-w-mode applied (Adam is classic
/// Adam, weight decay added to the gradient).
enum class OptimizerKind { Adam, AdamW, Sgd };

constexpr StringLiteral kLossScaleState = "loss_scale";
constexpr StringLiteral kHysteresisState = "loss_scale_hysteresis";
constexpr StringLiteral kGoodStepsState = "good_steps";

/// fp16 loss scaling: the state arguments of DeepSpeed's loss scaler.
struct LossScaling {
  /// `tensor<f32> {zero.state = "loss_scale"}`, from zero-mixed-precision;
  /// null without loss scaling (fp32, bf16).
  BlockArgument scale;
  /// The scale is marked `zero.dynamic`: check overflow, skip, update.
  bool dynamic = false;
  /// Dynamic: `tensor<i64>` overflows left before the scale halves
  /// (DeepSpeed's cur_hysteresis).
  BlockArgument hysteresis;
  /// Dynamic: `tensor<i64>` steps without overflow since the last overflow
  /// (DeepSpeed's cur_iter - last_overflow_iter - 1).
  BlockArgument goodSteps;
};

/// zero.adam's and zero.sgd's optional scalars under a loss scale: the scale
/// the gradient is divided by, the clipping coefficient it is multiplied by,
/// and the overflow flag that skips the step. Null where absent.
struct GradientScaling {
  Value scale, coef, skip;
};

/// What the step needs to know about one trainable parameter.
struct TrainableParam {
  ParamArg param;
  unsigned gradResult;
  /// The tensor the optimizer steps: the shard, or the whole parameter at
  /// stage 0.
  RankedTensorType partitionType;
  /// The rank holds the parameter whole and gathers it after the step.
  bool gatherAfterStep;
  /// Mixed precision: 16-bit parameters with fp32 master weights.
  bool hasMaster;
  /// The state arguments, in order: master (if any), then the optimizer's.
  SmallVector<BlockArgument> states;
};

struct ZeroInsertOptimizerPass
    : public zero::impl::ZeroInsertOptimizerPassBase<ZeroInsertOptimizerPass> {
  using Base::Base;

  OptimizerKind getOptimizerKind() {
    switch (optimizer) {
    case OptimizerType::Adam:
      return adamWMode ? OptimizerKind::AdamW : OptimizerKind::Adam;
    case OptimizerType::AdamW:
      return OptimizerKind::AdamW;
    case OptimizerType::Sgd:
      return OptimizerKind::Sgd;
    }
    llvm_unreachable("unknown optimizer");
  }

  LogicalResult checkOptions(func::FuncOp func) {
    if (lr < 0 || weightDecay < 0 || momentum < 0 || dampening < 0)
      return func.emitError("lr, weight-decay, momentum and dampening must be "
                            ">= 0");
    if (gradientClipping < 0)
      return func.emitError("gradient-clipping must be >= 0, got ")
             << gradientClipping.getValue();
    if (subGroupSize < 1)
      return func.emitError("sub-group-size must be at least 1, got ")
             << subGroupSize.getValue();
    if (lossScaleWindow < 1)
      return func.emitError("loss-scale-window must be at least 1, got ")
             << lossScaleWindow.getValue();
    if (hysteresis < 1)
      return func.emitError("hysteresis must be at least 1, got ")
             << hysteresis.getValue();
    if (!(minLossScale > 0))
      return func.emitError("min-loss-scale must be > 0, got ")
             << minLossScale.getValue();
    return success();
  }

  /// The learning-rate schedule the options describe.
  FailureOr<LRSchedule> parseSchedule(func::FuncOp func) {
    LRSchedule schedule;
    std::optional<LRScheduleKind> kind = LRSchedule::parseKind(lrSchedule);
    if (!kind)
      return func.emitError("unknown lr-schedule '")
             << lrSchedule.getValue()
             << "'; expected constant, warmup, warmup-decay, warmup-cosine, "
                "one-cycle or range-test";
    if (warmupType != "log" && warmupType != "linear")
      return func.emitError("unknown warmup-type '")
             << warmupType.getValue() << "'; expected log or linear";
    schedule.kind = *kind;
    schedule.lr = lr;
    schedule.lastBatchIteration = lastBatchIteration;
    schedule.warmupMinLr = warmupMinLr;
    schedule.warmupMaxLr = warmupMaxLr;
    schedule.warmupNumSteps = warmupNumSteps;
    schedule.warmupLinear = warmupType == "linear";
    schedule.totalNumSteps = totalNumSteps;
    schedule.warmupMinRatio = warmupMinRatio;
    schedule.cosMinRatio = cosMinRatio;
    schedule.cycleMinLr = cycleMinLr;
    schedule.cycleMaxLr = cycleMaxLr;
    schedule.decayLrRate = decayLrRate;
    schedule.cycleFirstStepSize = cycleFirstStepSize;
    schedule.cycleSecondStepSize = cycleSecondStepSize;
    schedule.cycleFirstStairCount = cycleFirstStairCount;
    schedule.cycleSecondStairCount = cycleSecondStairCount;
    schedule.decayStepSize = decayStepSize;
    // SGD has no betas: DeepSpeed leaves its momentum alone.
    schedule.cycleMomentum = cycleMomentum && optimizer != OptimizerType::Sgd;
    schedule.cycleMinMom = cycleMinMom;
    schedule.cycleMaxMom = cycleMaxMom;
    schedule.decayMomRate = decayMomRate;
    schedule.rangeTestMinLr = rangeTestMinLr;
    schedule.rangeTestStepSize = rangeTestStepSize;
    schedule.rangeTestStepRate = rangeTestStepRate;
    schedule.rangeTestStaircase = rangeTestStaircase;
    if (failed(schedule.verify([&] { return func.emitError(); })))
      return failure();
    return schedule;
  }

  /// The names of the optimizer's per-parameter states.
  static SmallVector<StringRef> stateKinds(OptimizerKind kind, double momentum,
                                           bool amsgrad) {
    if (kind == OptimizerKind::Sgd)
      return momentum > 0 ? SmallVector<StringRef>{"momentum_buffer"}
                          : SmallVector<StringRef>{};
    if (amsgrad)
      return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
    return {"exp_avg", "exp_avg_sq"};
  }

  void runOnOperation() override;

private:
  FailureOr<LossScaling> findLossScale(func::FuncOp func);
  Value buildClipCoefficient(OpBuilder &b, Location loc, int64_t stage,
                             DenseI16ArrayAttr shardAxes, ArrayRef<Value> grads,
                             Value scale);
  Value buildOverflowCheck(OpBuilder &b, Location loc, int64_t stage,
                           DenseI16ArrayAttr shardAxes, ArrayRef<Value> grads);
  SmallVector<Value> buildScaleUpdate(OpBuilder &b, Location loc,
                                      const LossScaling &scaling, Value scale,
                                      Value overflow);
  SmallVector<Value> buildUpdate(OpBuilder &b, Location loc, OptimizerKind kind,
                                 Value param, Value grad,
                                 ArrayRef<Value> states, Value step,
                                 const ScheduledRates &rates,
                                 const GradientScaling &scaling);
  SmallVector<Value> buildTiledUpdate(OpBuilder &b, Location loc,
                                      OptimizerKind kind, Value param,
                                      Value grad, ArrayRef<Value> states,
                                      Value step, const ScheduledRates &rates,
                                      const GradientScaling &scaling);
};

/// The loss-scale argument that zero-mixed-precision added, if any.
FailureOr<LossScaling>
ZeroInsertOptimizerPass::findLossScale(func::FuncOp func) {
  LossScaling scaling;
  for (BlockArgument arg : func.getArguments()) {
    auto kind = func.getArgAttrOfType<StringAttr>(
        arg.getArgNumber(), ZeroDialect::getStateAttrName());
    if (!kind || kind.getValue() != kLossScaleState)
      continue;
    if (scaling.scale)
      return func.emitError("arguments #")
             << scaling.scale.getArgNumber() << " and #" << arg.getArgNumber()
             << " are both marked 'zero.state = \"" << kLossScaleState << "\"'";
    scaling.scale = arg;
  }
  if (!scaling.scale)
    return scaling;
  Type expected = RankedTensorType::get({}, Float32Type::get(&getContext()));
  if (scaling.scale.getType() != expected)
    return func.emitError("the loss scale (argument #")
           << scaling.scale.getArgNumber() << ") must be " << expected
           << ", got " << scaling.scale.getType();
  scaling.dynamic =
      func.getArgAttr(scaling.scale.getArgNumber(),
                      ZeroDialect::getDynamicAttrName()) != nullptr;
  return scaling;
}

/// min(1, max_norm / (norm + 1e-6)) of the global gradient norm, as
/// DeepSpeed clips. Below stage 1 every rank holds the whole reduced
/// gradients, so the local norm is the global one; from stage 1 on each
/// rank holds shards, whose squares are summed across the ranks that cut
/// them (`shardAxes`; the world when null). With a loss
/// `scale`, the gradients are still scaled: the norm is divided by it, as
/// DeepSpeed's unscale_and_clip_grads does.
Value ZeroInsertOptimizerPass::buildClipCoefficient(OpBuilder &b, Location loc,
                                                    int64_t stage,
                                                    DenseI16ArrayAttr shardAxes,
                                                    ArrayRef<Value> grads,
                                                    Value scale) {
  // In f32, or f64 for f64 gradients.
  SmallVector<Type> gradTypes;
  for (Value grad : grads)
    gradTypes.push_back(getElementTypeOrSelf(grad));
  auto compute = cast<FloatType>(getArithmeticType(b, gradTypes));
  Value total = arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, 0.0));
  for (Value grad : grads)
    total = arith::AddFOp::create(b, loc, total,
                                  buildSumOfSquares(b, loc, grad, compute));
  if (stage >= 1) {
    Value local = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, compute), total);
    auto sum = AllReduceStartOp::create(
        b, loc, local,
        ReductionKindAttr::get(b.getContext(), ReductionKind::Sum), shardAxes);
    Value global = WaitOp::create(b, loc, sum).getResult(0);
    total = tensor::ExtractOp::create(b, loc, global, ValueRange{});
  }
  Value norm = math::SqrtOp::create(b, loc, total);
  if (scale)
    norm = arith::DivFOp::create(b, loc, norm,
                                 buildScalarCast(b, loc, scale, compute));
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, value));
  };
  Value eps = constant(1e-6);
  Value maxNorm = constant(gradientClipping);
  Value one = constant(1.0);
  Value coef = arith::DivFOp::create(b, loc, maxNorm,
                                     arith::AddFOp::create(b, loc, norm, eps));
  return arith::MinimumFOp::create(b, loc, coef, one);
}

/// An `i1` that is true when any reduced gradient of any rank holds an
/// infinity or a NaN: the loss scale overflowed. Each rank checks its own
/// gradients; from stage 1 on they are shards, so the flags are combined
/// with an all-reduce (max) across the ranks that cut them (`shardAxes`;
/// replicas hold the same gradients), which makes the result the same on
/// every rank.
/// Below stage 1 every rank holds the same all-reduced gradients.
Value ZeroInsertOptimizerPass::buildOverflowCheck(OpBuilder &b, Location loc,
                                                  int64_t stage,
                                                  DenseI16ArrayAttr shardAxes,
                                                  ArrayRef<Value> grads) {
  // One pass over all the gradients (one multi-tensor launch on a GPU;
  // zero-offload-optimizer splits it, so that each gradient can leave the
  // device as soon as it is computed).
  Value flag = grads.empty()
                   ? arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0))
                         .getResult()
                   : AnyNonFiniteOp::create(b, loc, grads).getResult();
  if (stage >= 1) {
    Value local = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getF32Type()), flag);
    auto any = AllReduceStartOp::create(
        b, loc, local,
        ReductionKindAttr::get(b.getContext(), ReductionKind::Max), shardAxes);
    Value global = WaitOp::create(b, loc, any).getResult(0);
    flag = tensor::ExtractOp::create(b, loc, global, ValueRange{});
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, flag, zero);
}

/// DeepSpeed's DynamicLossScaler.update_scale, with scale_factor 2, on the
/// states: returns the new scale, hysteresis and good-step count, each a
/// 0-d tensor. `goodSteps + 1` is DeepSpeed's cur_iter - last_overflow_iter.
///   overflow:    hysteresis <= 1 ? scale = max(scale / 2, min_loss_scale)
///                                : hysteresis -= 1;       good_steps = 0
///   no overflow: good_steps += 1; grow = good_steps % window == 0
///                consecutive-hysteresis ? hysteresis = H
///                                       : grow ? hysteresis = H;
///                grow ? scale *= 2
SmallVector<Value>
ZeroInsertOptimizerPass::buildScaleUpdate(OpBuilder &b, Location loc,
                                          const LossScaling &scaling,
                                          Value scale, Value overflow) {
  auto i64Const = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  };
  auto f32Const = [&](double value) -> Value {
    return arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(value)));
  };
  auto select = [&](Value cond, Value ifTrue, Value ifFalse) -> Value {
    return arith::SelectOp::create(b, loc, cond, ifTrue, ifFalse);
  };
  Value hyst =
      tensor::ExtractOp::create(b, loc, scaling.hysteresis, ValueRange{});
  Value good =
      tensor::ExtractOp::create(b, loc, scaling.goodSteps, ValueRange{});
  Value one = i64Const(1), zero = i64Const(0);

  Value goodNext = arith::AddIOp::create(b, loc, good, one);
  Value phase =
      arith::RemSIOp::create(b, loc, goodNext, i64Const(lossScaleWindow));
  Value grow =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, phase, zero);
  Value shrink =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, hyst, one);

  Value factor = f32Const(2.0);
  Value halved = arith::MaximumFOp::create(
      b, loc, arith::DivFOp::create(b, loc, scale, factor),
      f32Const(minLossScale));
  Value doubled = arith::MulFOp::create(b, loc, scale, factor);
  Value scaleOnOverflow = select(shrink, halved, scale);
  Value scaleOtherwise = select(grow, doubled, scale);
  Value newScale = select(overflow, scaleOnOverflow, scaleOtherwise);

  Value full = i64Const(hysteresis);
  Value hystMinusOne = arith::SubIOp::create(b, loc, hyst, one);
  Value hystOnOverflow = select(shrink, hyst, hystMinusOne);
  Value hystOtherwise = consecutiveHysteresis ? full : select(grow, full, hyst);
  Value newHyst = select(overflow, hystOnOverflow, hystOtherwise);
  Value newGood = select(overflow, zero, goodNext);

  auto scalarTensor = [&](Value scalar) -> Value {
    return tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, scalar.getType()), scalar);
  };
  return {scalarTensor(newScale), scalarTensor(newHyst), scalarTensor(newGood)};
}

/// One optimizer-step op on `param` (a shard or tile), returning the updated
/// parameter followed by the updated states, at the scheduled rates. Adam: a
/// scheduled beta1 (OneCycle) replaces the `beta1` option, and beta2 is then
/// 0.99, as DeepSpeed's OneCycle sets it.
SmallVector<Value> ZeroInsertOptimizerPass::buildUpdate(
    OpBuilder &b, Location loc, OptimizerKind kind, Value param, Value grad,
    ArrayRef<Value> states, Value step, const ScheduledRates &rates,
    const GradientScaling &scaling) {
  Value lr = rates.lr;
  if (kind != OptimizerKind::Sgd) {
    auto mode = kind == OptimizerKind::AdamW ? AdamMode::AdamW : AdamMode::L2;
    Value maxExpAvgSq = amsgrad ? states[2] : Value();
    auto adam = AdamOp::create(
        b, loc, param, grad, states[0], states[1], maxExpAvgSq, step, lr,
        rates.beta1, scaling.scale, scaling.coef, scaling.skip,
        APFloat(beta1.getValue()),
        APFloat(rates.beta1 ? 0.99 : beta2.getValue()), APFloat(eps.getValue()),
        APFloat(weightDecay.getValue()), mode, biasCorrection, amsgrad);
    // The results are the parameter and the states, in state order.
    return SmallVector<Value>(adam->getResults());
  }
  if (momentum > 0) {
    auto sgd =
        SgdOp::create(b, loc, param, grad, states[0], lr, scaling.scale,
                      scaling.coef, scaling.skip, APFloat(momentum.getValue()),
                      APFloat(dampening.getValue()),
                      APFloat(weightDecay.getValue()), nesterov);
    return {sgd.getParamOut(), sgd.getMomentumBufferOut()};
  }
  // Plain SGD needs no state: p - lr * (g + weight_decay * p). Its caller
  // unscales the gradient and selects on overflow (scalesInOp).
  assert(!scaling.scale && !scaling.coef && !scaling.skip &&
         "plain SGD is a map: the caller scales its gradient");
  Type elementType = cast<RankedTensorType>(param.getType()).getElementType();
  double decay = weightDecay;
  Value updated = buildElementwise(
      b, loc, {param, grad}, elementType,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value p = args[0], g = buildScalarCast(nb, l, args[1], elementType);
        if (decay != 0) {
          Value wd = arith::ConstantOp::create(
              nb, l, nb.getFloatAttr(elementType, decay));
          g = arith::AddFOp::create(nb, l, g,
                                    arith::MulFOp::create(nb, l, wd, p));
        }
        Value lrValue = buildScalarCast(nb, l, lr, elementType);
        return arith::SubFOp::create(nb, l, p,
                                     arith::MulFOp::create(nb, l, lrValue, g))
            .getResult();
      });
  return {updated};
}

/// The update of `param` in tiles of at most `sub-group-size` elements
/// (DeepSpeed's sub groups): each tile is one optimizer-step op, so that the
/// runtime never needs the working set of a whole large partition at once.
SmallVector<Value> ZeroInsertOptimizerPass::buildTiledUpdate(
    OpBuilder &b, Location loc, OptimizerKind kind, Value param, Value grad,
    ArrayRef<Value> states, Value step, const ScheduledRates &rates,
    const GradientScaling &scaling) {
  auto type = cast<RankedTensorType>(param.getType());
  int64_t numel = type.getNumElements();
  if (numel <= subGroupSize)
    return buildUpdate(b, loc, kind, param, grad, states, step, rates, scaling);

  // Tiles are ranges of the flattened tensor.
  SmallVector<ReassociationIndices> flatDims =
      getFlatReassociation(type.getRank());
  auto flatten = [&](Value tensor) -> Value {
    if (type.getRank() == 1)
      return tensor;
    return tensor::CollapseShapeOp::create(b, loc, tensor, flatDims);
  };
  SmallVector<Value> operands{flatten(param), flatten(grad)};
  for (Value state : states)
    operands.push_back(flatten(state));

  SmallVector<Value> results;
  for (size_t i = 0, e = operands.size(); i < e; ++i) {
    if (i == 1)
      continue; // the gradient is an input only
    results.push_back(tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{numel},
        cast<RankedTensorType>(operands[i].getType()).getElementType()));
  }
  for (int64_t tile = 0, e = llvm::divideCeil(numel, subGroupSize); tile < e;
       ++tile) {
    int64_t offset = tile * subGroupSize;
    int64_t size = std::min<int64_t>(subGroupSize, numel - offset);
    SmallVector<OpFoldResult> offsets{b.getIndexAttr(offset)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(size)};
    SmallVector<OpFoldResult> strides{b.getIndexAttr(1)};
    SmallVector<Value> tiles;
    for (Value operand : operands)
      tiles.push_back(tensor::ExtractSliceOp::create(b, loc, operand, offsets,
                                                     sizes, strides));
    SmallVector<Value> updated =
        buildUpdate(b, loc, kind, tiles[0], tiles[1],
                    ArrayRef<Value>(tiles).drop_front(2), step, rates, scaling);
    for (auto [result, tile] : llvm::zip_equal(results, updated))
      result = tensor::InsertSliceOp::create(b, loc, tile, result, offsets,
                                             sizes, strides);
  }
  if (type.getRank() > 1)
    for (Value &result : results)
      result = tensor::ExpandShapeOp::create(
          b, loc,
          RankedTensorType::get(
              type.getShape(),
              cast<RankedTensorType>(result.getType()).getElementType()),
          result, flatDims);
  return results;
}

void ZeroInsertOptimizerPass::runOnOperation() {
  FailureOr<PartitionedTrainStep> found =
      lookupPartitionedTrainStep(getOperation(), entry, getArgument());
  if (failed(found))
    return signalPassFailure();
  func::FuncOp func = found->func;
  const RankInfo *rank = &found->rank;
  OptimizerKind kind = getOptimizerKind();
  if (failed(checkOptions(func)))
    return signalPassFailure();
  FailureOr<LRSchedule> schedule = parseSchedule(func);
  if (failed(schedule))
    return signalPassFailure();
  MLIRContext *ctx = &getContext();
  Builder attrs(ctx);
  Type f32 = attrs.getF32Type();

  // Pair every trainable parameter with its reduced gradient.
  llvm::StringMap<unsigned> gradResults;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto name = func.getResultAttrOfType<StringAttr>(
            i, ZeroDialect::getGradAttrName()))
      gradResults[name.getValue()] = i;
  std::optional<unsigned> lossResult;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, ZeroDialect::getLossAttrName()))
      lossResult = i;
  if (!lossResult) {
    func.emitError("the training step has no 'zero.loss' result");
    return signalPassFailure();
  }

  SmallVector<TrainableParam> trainable;
  unsigned lastParamArg = 0;
  for (const ParamArg &param : getParamArgs(func)) {
    lastParamArg = std::max(lastParamArg, param.arg.getArgNumber());
    if (param.frozen)
      continue;
    auto grad = gradResults.find(param.name);
    if (grad == gradResults.end()) {
      func.emitError("parameter '") << param.name << "' has no gradient";
      return signalPassFailure();
    }
    auto paramType = cast<RankedTensorType>(param.arg.getType());
    auto elementType = cast<FloatType>(paramType.getElementType());
    bool hasMaster = elementType.getWidth() < 32;
    Type stateElementType = hasMaster ? f32 : elementType;
    RankedTensorType partitionType =
        rank->stage == 0 ? param.layout.getFullType(stateElementType)
                         : param.layout.getShardType(stateElementType);
    bool shardArg = rank->stage == 3 && !param.persistent;
    trainable.push_back({param,
                         grad->second,
                         partitionType,
                         rank->stage != 0 && !shardArg,
                         hasMaster,
                         {}});
  }

  FailureOr<LossScaling> lossScale = findLossScale(func);
  if (failed(lossScale))
    return signalPassFailure();
  LossScaling scaling = *lossScale;

  // State arguments go after the parameters: per parameter its master
  // weights and optimizer states, then the step counter. The loss scale,
  // after the parameters, thus comes after the step counter; a dynamic
  // scale's states follow it. They are inserted at once: one insertion per
  // argument copies the whole signature each time, quadratic in depth.
  SmallVector<unsigned> newIndices;
  SmallVector<Type> newTypes;
  SmallVector<DictionaryAttr> newAttrs;
  // Returns the new argument's ordinal; see `getNewArg` below.
  auto addArg = [&](unsigned index, Type type,
                    ArrayRef<NamedAttribute> argAttrs) -> unsigned {
    newIndices.push_back(index);
    newTypes.push_back(type);
    newAttrs.push_back(attrs.getDictionaryAttr(argAttrs));
    return newIndices.size() - 1;
  };
  unsigned insertAt = lastParamArg + 1;
  SmallVector<SmallVector<unsigned>> stateOrdinals;
  SmallVector<StringRef> kinds = stateKinds(kind, momentum, amsgrad);
  for (TrainableParam &tp : trainable) {
    auto nameAttr = attrs.getNamedAttr(ZeroDialect::getParamAttrName(),
                                       attrs.getStringAttr(tp.param.name));
    SmallVector<StringRef> names;
    if (tp.hasMaster)
      names.push_back("master");
    names.append(kinds);
    SmallVector<unsigned> &ordinals = stateOrdinals.emplace_back();
    for (StringRef stateKind : names)
      ordinals.push_back(addArg(
          insertAt, tp.partitionType,
          {nameAttr, attrs.getNamedAttr(ZeroDialect::getStateAttrName(),
                                        attrs.getStringAttr(stateKind))}));
  }
  // Only master weights can come from somewhere else than the checkpoint.
  if (!loadFromFp32Weights) {
    if (llvm::any_of(trainable,
                     [](const TrainableParam &tp) { return tp.hasMaster; }))
      func->setAttr(ZeroDialect::getLoadFromFp32WeightsAttrName(),
                    attrs.getBoolAttr(false));
    else
      func.emitWarning("load-from-fp32-weights=false has no effect: no "
                       "parameter has fp32 master weights");
  }
  unsigned stepOrdinal =
      addArg(insertAt, RankedTensorType::get({}, attrs.getI64Type()),
             {attrs.getNamedAttr(ZeroDialect::getStepAttrName(),
                                 attrs.getUnitAttr())});
  unsigned hysteresisOrdinal = 0, goodStepsOrdinal = 0;
  if (scaling.dynamic) {
    auto i64Scalar = RankedTensorType::get({}, attrs.getI64Type());
    unsigned afterScale = scaling.scale.getArgNumber() + 1;
    auto stateArg = [&](StringRef stateKind, int64_t initial) {
      return addArg(afterScale, i64Scalar,
                    {attrs.getNamedAttr(ZeroDialect::getStateAttrName(),
                                        attrs.getStringAttr(stateKind)),
                     attrs.getNamedAttr(ZeroDialect::getInitialValueAttrName(),
                                        attrs.getI64IntegerAttr(initial))});
    };
    hysteresisOrdinal = stateArg(kHysteresisState, hysteresis);
    goodStepsOrdinal = stateArg(kGoodStepsState, 0);
  }

  // insertArguments takes indices into the old signature, sorted; arguments
  // at one index keep their order.
  auto allOrdinals = llvm::seq<unsigned>(0, newIndices.size());
  SmallVector<unsigned> order(allOrdinals.begin(), allOrdinals.end());
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return newIndices[a] < newIndices[b];
  });
  SmallVector<unsigned> sortedIndices;
  SmallVector<Type> sortedTypes;
  SmallVector<DictionaryAttr> sortedAttrs;
  SmallVector<unsigned> newPosition(newIndices.size());
  for (auto [position, ordinal] : llvm::enumerate(order)) {
    sortedIndices.push_back(newIndices[ordinal]);
    sortedTypes.push_back(newTypes[ordinal]);
    sortedAttrs.push_back(newAttrs[ordinal]);
    newPosition[ordinal] = newIndices[ordinal] + position;
  }
  SmallVector<Location> newLocs(newIndices.size(), func.getLoc());
  (void)func.insertArguments(sortedIndices, sortedTypes, sortedAttrs, newLocs);
  auto getNewArg = [&](unsigned ordinal) {
    return func.getArgument(newPosition[ordinal]);
  };
  for (auto [tp, ordinals] : llvm::zip_equal(trainable, stateOrdinals))
    for (unsigned ordinal : ordinals)
      tp.states.push_back(getNewArg(ordinal));
  BlockArgument stepArg = getNewArg(stepOrdinal);
  if (scaling.dynamic) {
    scaling.hysteresis = getNewArg(hysteresisOrdinal);
    scaling.goodSteps = getNewArg(goodStepsOrdinal);
  }

  // The step is appended at the end of the body, after the backward pass.
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  OpBuilder b(ret);
  Location loc = NameLoc::get(attrs.getStringAttr("optimizer"), func.getLoc());
  Value oldStep = tensor::ExtractOp::create(b, loc, stepArg, ValueRange{});
  Value one = arith::ConstantOp::create(b, loc, attrs.getI64IntegerAttr(1));
  Value step = arith::AddIOp::create(b, loc, oldStep, one);
  // DeepSpeed steps its scheduler after each applied optimizer step, so the
  // rate follows the steps applied before this one.
  ScheduledRates rates = buildScheduledRates(b, loc, oldStep, *schedule);

  SmallVector<Value> grads;
  for (TrainableParam &tp : trainable)
    grads.push_back(ret->getOperand(tp.gradResult));
  // The gradient shards are cut across the ranks of the parameters' layouts
  // (zero-partition gives every parameter the same world size).
  DenseI16ArrayAttr shardAxes;
  if (!trainable.empty()) {
    FailureOr<DenseI16ArrayAttr> axes =
        getLayoutGridAxes(func, trainable.front().param.layout,
                          trainable.front().param.arg.getLoc());
    if (failed(axes))
      return signalPassFailure();
    shardAxes = *axes;
  }

  // fp16: the gradients are scaled. A dynamic scale may have overflowed:
  // the check reads the scaled gradients, as DeepSpeed's.
  Value scale, overflow;
  if (scaling.scale)
    scale = tensor::ExtractOp::create(b, loc, scaling.scale, ValueRange{});
  if (scaling.dynamic)
    overflow = buildOverflowCheck(b, loc, rank->stage, shardAxes, grads);

  Value coef;
  if (gradientClipping > 0)
    coef = buildClipCoefficient(b, loc, rank->stage, shardAxes, grads, scale);
  // With a loss scale, zero.adam and zero.sgd unscale (and clip) each
  // gradient and skip the step on overflow themselves, as PyTorch's fused
  // Adam does with grad_scale and found_inf: one pass over memory per
  // update, and the updates stay one multi-tensor group. Plain SGD is a map:
  // its gradient is unscaled (and clipped) in f32 by one map right before
  // its update, so that one f32 gradient is live at a time, and each updated
  // tensor is selected on overflow.
  const bool scalesInOp = kind != OptimizerKind::Sgd || momentum > 0;
  GradientScaling opScaling;
  if (scale && scalesInOp) {
    opScaling.scale = scale;
    if (coef)
      opScaling.coef = buildScalarCast(b, loc, coef, f32);
    opScaling.skip = overflow;
  }
  auto unscale = [&](Value grad) -> Value {
    return buildElementwise(b, loc, grad, f32,
                            [&](OpBuilder &nb, Location l, ValueRange args) {
                              Value g = buildScalarCast(nb, l, args[0], f32);
                              g = arith::DivFOp::create(nb, l, g, scale);
                              if (coef)
                                g = arith::MulFOp::create(
                                    nb, l, g,
                                    buildScalarCast(nb, l, coef, f32));
                              return g;
                            });
  };
  if (coef && !scale) {
    for (Value &grad : grads) {
      Type elementType =
          cast<RankedTensorType>(grad.getType()).getElementType();
      grad = buildElementwise(
          b, loc, grad, elementType,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            return arith::MulFOp::create(
                       nb, l, args[0],
                       buildScalarCast(nb, l, coef, elementType))
                .getResult();
          });
    }
  }

  // One op per tile: a bound on the tiles keeps a huge partition with a
  // small sub-group size from building a program without end.
  for (const TrainableParam &tp : trainable) {
    std::optional<int64_t> numel =
        getCheckedNumElements(tp.partitionType.getShape());
    if (!numel) {
      emitError(tp.param.arg.getLoc())
          << "the element count of parameter '" << tp.param.name
          << "' does not fit int64";
      return signalPassFailure();
    }
    int64_t tiles = llvm::divideCeil(*numel, subGroupSize);
    if (tiles > kMaxTiles) {
      emitError(tp.param.arg.getLoc())
          << "the optimizer step of parameter '" << tp.param.name << "' ("
          << *numel << " elements) needs " << tiles
          << " tiles of sub-group-size = " << subGroupSize.getValue()
          << " elements, more than " << kMaxTiles
          << "; raise zero_optimization.sub_group_size";
      return signalPassFailure();
    }
  }

  SmallVector<Value> newParams, newStates;
  for (auto [tp, grad] : llvm::zip_equal(trainable, grads)) {
    Value param = tp.param.arg;
    ArrayRef<BlockArgument> states = tp.states;
    Value stepped;
    if (tp.hasMaster) {
      stepped = states.front();
      states = states.drop_front();
    } else if (tp.gatherAfterStep) {
      stepped = LocalShardOp::create(b, loc, tp.partitionType, param,
                                     tp.param.layout);
    } else {
      stepped = param;
    }
    Value input = scale && !scalesInOp ? unscale(grad) : grad;
    SmallVector<Value> updated =
        buildTiledUpdate(b, loc, kind, stepped, input,
                         SmallVector<Value>(states), step, rates, opScaling);
    if (overflow && !opScaling.skip) {
      // Skipped step: every updated tensor keeps its old value. The 16-bit
      // parameter follows its master weights.
      SmallVector<Value> old{stepped};
      old.append(states.begin(), states.end());
      for (auto [newValue, oldValue] : llvm::zip_equal(updated, old))
        newValue = buildSelect(b, loc, overflow, oldValue, newValue);
    }
    Value newParam = updated.front();
    if (tp.hasMaster) {
      newStates.push_back(newParam);
      newParam = buildFloatCast(
          b, loc, newParam,
          cast<RankedTensorType>(param.getType()).getElementType());
    }
    newStates.append(updated.begin() + 1, updated.end());
    if (tp.gatherAfterStep) {
      FailureOr<DenseI16ArrayAttr> gridAxes =
          getLayoutGridAxes(func, tp.param.layout, tp.param.arg.getLoc());
      if (failed(gridAxes))
        return signalPassFailure();
      auto gather = AllGatherStartOp::create(
          b, loc, newParam, attrs.getArrayAttr({tp.param.layout}), *gridAxes,
          /*quantize_block_size=*/nullptr);
      newParam = WaitOp::create(b, loc, gather).getResult(0);
    }
    newParams.push_back(newParam);
  }
  Value newStep = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, attrs.getI64Type()),
      overflow ? arith::SelectOp::create(b, loc, overflow, oldStep, step)
               : step);
  SmallVector<Value> scaleStates;
  if (scaling.dynamic)
    scaleStates = buildScaleUpdate(b, loc, scaling, scale, overflow);

  // Results: the loss, then every updated parameter, state and the step
  // counter, each named like the argument it replaces.
  SmallVector<Value> results{ret->getOperand(*lossResult)};
  SmallVector<DictionaryAttr> resultAttrs{func.getResultAttrDict(*lossResult)};
  for (auto [tp, newParam] : llvm::zip_equal(trainable, newParams)) {
    results.push_back(newParam);
    resultAttrs.push_back(func.getArgAttrDict(tp.param.arg.getArgNumber()));
  }
  unsigned stateIndex = 0;
  for (TrainableParam &tp : trainable)
    for (BlockArgument state : tp.states) {
      results.push_back(newStates[stateIndex++]);
      resultAttrs.push_back(func.getArgAttrDict(state.getArgNumber()));
    }
  results.push_back(newStep);
  resultAttrs.push_back(func.getArgAttrDict(stepArg.getArgNumber()));
  // A static loss scale never changes: it is not a result.
  if (scaling.dynamic) {
    BlockArgument scaleArgs[] = {scaling.scale, scaling.hysteresis,
                                 scaling.goodSteps};
    for (auto [arg, value] : llvm::zip_equal(scaleArgs, scaleStates)) {
      results.push_back(value);
      resultAttrs.push_back(func.getArgAttrDict(arg.getArgNumber()));
    }
  }

  func::ReturnOp::create(b, ret->getLoc(), results);
  ret->erase();
  updateFunctionType(func);
  func.setAllResultAttrs(resultAttrs);
}

} // namespace
