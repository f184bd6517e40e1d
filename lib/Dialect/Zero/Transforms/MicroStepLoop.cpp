//===- MicroStepLoop.cpp - gradient accumulation as a loop ----------------===//

#include "MicroStepLoop.h"

#include "TensorUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The state one result carries through the loop.
struct Carried {
  Accumulation accumulation;
  /// The carried element type.
  Type type;
  /// Sum only: the sum's type when it is narrower than the summands, which
  /// are then carried in their own type until the loop ends (the unrolled
  /// form keeps the first summand unrounded).
  Type narrowSum;
};

} // namespace

FailureOr<SmallVector<BlockArgument>>
zero::getMicroBatchedDataArgs(func::FuncOp func, int64_t steps) {
  SmallVector<BlockArgument> dataArgs;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (!func.getArgAttr(i, ZeroDialect::getDataAttrName()))
      continue;
    BlockArgument arg = func.getArgument(i);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return func.emitError("data argument #")
             << i << " must be a statically shaped tensor to be split into "
             << steps << " micro-batches, got " << arg.getType();
    dataArgs.push_back(arg);
  }
  return dataArgs;
}

LogicalResult zero::buildMicroStepLoop(func::FuncOp func, int64_t steps,
                                       ArrayRef<Accumulation> accumulations) {
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  assert(accumulations.size() == ret->getNumOperands() &&
         "one accumulation per result");

  FailureOr<SmallVector<BlockArgument>> found =
      getMicroBatchedDataArgs(func, steps);
  if (failed(found))
    return failure();
  SmallVector<BlockArgument> dataArgs = std::move(*found);

  // The carried sums, their starts and the loop, after the micro-step's ops.
  OpBuilder b(ret);
  Location loc = func.getLoc();
  // The micro-step's ops: all that is there before we add any.
  Operation *lastOfMicroStep = ret->getPrevNode();
  SmallVector<Carried> carried;
  SmallVector<Value> inits;
  for (auto [index, accumulation] : llvm::enumerate(accumulations)) {
    Value value = ret->getOperand(index);
    Type own = getElementTypeOrSelf(value);
    Carried state{accumulation, accumulation.type ? accumulation.type : own,
                  Type()};
    if (accumulation.kind == Accumulation::Kind::Sum &&
        !holdsExactly(state.type, own)) {
      state.narrowSum = state.type;
      state.type = own;
    }
    carried.push_back(state);
    // -0.0 is the neutral start of a running sum: -0 + x is x for every x
    // (+0 and NaN included), so the first addition changes no bit.
    inits.push_back(buildFilled(
        b, value.getLoc(), cast<RankedTensorType>(value.getType()).getShape(),
        state.type, -0.0));
  }
  // A sum narrower than its summands needs to know the first iteration,
  // which a carried flag tells (1 in the first iteration, then 0): the
  // schedule reads the induction variable only to slice the micro-batches.
  bool needsFirst = llvm::any_of(
      carried, [](const Carried &state) { return bool(state.narrowSum); });
  if (needsFirst)
    inits.push_back(buildFilled(b, loc, {}, b.getF32Type(), 1.0));
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, steps);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, one, inits,
      [](OpBuilder &nb, Location l, Value, ValueRange iterArgs) {
        scf::YieldOp::create(nb, l, iterArgs);
      });
  Block *loopBody = loop.getBody();
  Operation *yield = loopBody->getTerminator();

  // The micro-step moves into the loop.
  if (lastOfMicroStep)
    loopBody->getOperations().splice(
        Block::iterator(yield), body.getOperations(), body.begin(),
        std::next(Block::iterator(lastOfMicroStep)));

  // Iteration i reads slice i of each data argument.
  OpBuilder inLoop = OpBuilder::atBlockBegin(loopBody);
  Value iv = loop.getInductionVar();
  for (BlockArgument arg : dataArgs) {
    auto type = cast<RankedTensorType>(arg.getType());
    SmallVector<OpFoldResult> offsets(type.getRank() + 1,
                                      inLoop.getIndexAttr(0));
    offsets[0] = iv;
    SmallVector<OpFoldResult> sizes{inLoop.getIndexAttr(1)};
    for (int64_t dim : type.getShape())
      sizes.push_back(inLoop.getIndexAttr(dim));
    SmallVector<OpFoldResult> strides(type.getRank() + 1,
                                      inLoop.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(inLoop, arg.getLoc(), type,
                                                 arg, offsets, sizes, strides);
    arg.replaceAllUsesExcept(slice, slice.getDefiningOp());
    SmallVector<int64_t> shape{steps};
    llvm::append_range(shape, type.getShape());
    arg.setType(type.clone(shape));
  }

  // Each iteration adds its micro-step's value to the running sum.
  inLoop.setInsertionPoint(yield);
  Value first;
  SmallVector<Value> next;
  for (auto [index, state] : llvm::enumerate(carried)) {
    Value value = ret->getOperand(index);
    Value sum = loop.getRegionIterArgs()[index];
    Location l = value.getLoc();
    if (state.accumulation.kind == Accumulation::Kind::Mean) {
      // As the unrolled mean: each summand cast to the sum's type, added.
      next.push_back(buildElementwise(
          inLoop, l, {sum, value}, state.type,
          [&](OpBuilder &nb, Location bl, ValueRange xs) -> Value {
            return arith::AddFOp::create(
                nb, bl, xs[0], buildScalarCast(nb, bl, xs[1], state.type));
          }));
      continue;
    }
    Type sumType = state.narrowSum ? state.narrowSum : state.type;
    Value added = buildRoundedSum(inLoop, l, sum, value, sumType);
    if (state.narrowSum) {
      // The first summand is kept as it is; later sums are rounded to the
      // narrow type, which the carried type holds exactly.
      if (!first) {
        Value flag = tensor::ExtractOp::create(
            inLoop, loc, loop.getRegionIterArgs().back(), ValueRange{});
        Value zero =
            arith::ConstantOp::create(inLoop, loc, inLoop.getF32FloatAttr(0.0));
        first = arith::CmpFOp::create(inLoop, loc, arith::CmpFPredicate::ONE,
                                      flag, zero);
      }
      added = buildSelect(inLoop, l, first, value,
                          buildFloatCast(inLoop, l, added, state.type));
    }
    next.push_back(added);
  }
  if (needsFirst)
    next.push_back(buildFilled(inLoop, loc, {}, inLoop.getF32Type(), 0.0));
  yield->setOperands(next);

  // The results: the sums, divided by G where the unrolled form divides.
  b.setInsertionPoint(ret);
  double scale = 1.0 / static_cast<double>(steps);
  for (auto [index, state] : llvm::enumerate(carried)) {
    Value total = loop.getResult(index);
    Location l = ret->getOperand(index).getLoc();
    if (state.accumulation.kind == Accumulation::Kind::Mean) {
      total = buildMean(b, l, {total}, scale, state.type);
    } else if (state.narrowSum) {
      total = buildFloatCast(b, l, total, state.narrowSum);
    }
    ret->setOperand(index, total);
  }
  updateFunctionType(func);
  return success();
}
