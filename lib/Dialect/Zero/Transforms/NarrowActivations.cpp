//===- NarrowActivations.cpp - activations stored in 16 bits --------------===//
//
// DeepSpeed's bf16 and fp16 run the module in that type: each op reads and
// writes 16-bit tensors and computes in f32 registers. zero-compute-precision
// gives the GEMMs 16-bit operands; this pass stores the elementwise ops'
// results in the compute type too, which halves the bytes they move and the
// activations the backward pass keeps. A tensor is narrowed with the views
// and copies that pass it on (one group of values that must share an element
// type); its maker rounds what it yields and each reader widens what it
// reads, so every op still computes in f32.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZERONARROWACTIVATIONSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// An op that moves or views its first operand's elements without
/// arithmetic: its result has the element type of that operand.
bool isElementMove(Operation *op) {
  return isa<linalg::TransposeOp, linalg::BroadcastOp, tensor::CollapseShapeOp,
             tensor::ExpandShapeOp, tensor::ExtractSliceOp>(op);
}

/// The tensor whose elements `value` carries unchanged: the operand of a
/// move, or what a swap out of or back into device memory copied (a
/// checkpoint kept in host memory).
Value getMovedSource(Value value) {
  Operation *maker = value.getDefiningOp();
  if (!maker)
    return {};
  if (isElementMove(maker))
    return maker->getOperand(0);
  auto wait = dyn_cast<WaitOp>(maker);
  if (!wait)
    return {};
  Operation *start = wait.getHandle().getDefiningOp();
  if (!isa_and_nonnull<SwapOutStartOp, SwapInStartOp>(start))
    return {};
  return start->getOperand(cast<OpResult>(value).getResultNumber());
}

/// Whether `use` is the source of a move or a swap.
bool isMovedOperand(OpOperand &use) {
  Operation *owner = use.getOwner();
  return isa<SwapOutStartOp, SwapInStartOp>(owner) ||
         (isElementMove(owner) && use.getOperandNumber() == 0);
}

/// A `linalg.map`, or a `linalg.generic` of parallel loops, with one result
/// written into a fresh tensor that its body does not read: it can round
/// what it yields.
bool isElementwiseMaker(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !isa<linalg::MapOp, linalg::GenericOp>(op) ||
      op->getNumResults() != 1 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return false;
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  return init->get().getDefiningOp<tensor::EmptyOp>() &&
         linalgOp.getMatchingBlockArgument(init).use_empty();
}

/// An input of a map, generic or reduction: its body can widen the element.
bool isWideningRead(OpOperand &use) {
  Operation *owner = use.getOwner();
  if (!isa<linalg::MapOp, linalg::GenericOp, linalg::ReduceOp>(owner))
    return false;
  return cast<DestinationStyleOpInterface>(owner).isDpsInput(&use);
}

/// A `tensor.extract` inside the body of a linalg op (a gather): the
/// element it reads can be widened after it.
bool isNestedExtract(OpOperand &use) {
  auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
  return extract && use.getOperandNumber() == 0 &&
         isa<linalg::LinalgOp>(extract->getParentOp());
}

/// `value` without a widening and rounding back to its own type around it
/// (exact: every narrow value is a wide one).
Value peelRoundTrip(Value value) {
  auto rounded = value.getDefiningOp<arith::TruncFOp>();
  if (!rounded)
    return value;
  auto widened = rounded.getIn().getDefiningOp<arith::ExtFOp>();
  if (!widened || widened.getIn().getType() != value.getType())
    return value;
  return widened.getIn();
}

struct ZeroNarrowActivationsPass
    : public zero::impl::ZeroNarrowActivationsPassBase<
          ZeroNarrowActivationsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step))
      return signalPassFailure();
    narrow = getComputeElementType(&getContext(), computeType, precision,
                                   hasScaledBackward(*step));
    if (!narrow)
      return;
    rewritten.clear();

    // The f32 tensors that ops make, grouped with the views and copies
    // that pass them on (they share an element type).
    llvm::EquivalenceClasses<Value> groups;
    step->walk([&](Operation *op) {
      for (Value result : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type || !type.getElementType().isF32())
          continue;
        groups.insert(result);
        if (Value source = getMovedSource(result))
          groups.unionSets(source, result);
      }
    });
    findStatistics(*step);

    SmallVector<Value> narrowed;
    for (auto it = groups.begin(); it != groups.end(); ++it) {
      if (!(*it)->isLeader())
        continue;
      SmallVector<Value> group(groups.member_begin(**it), groups.member_end());
      if (llvm::all_of(group, [&](Value v) { return canNarrow(v); }))
        llvm::append_range(narrowed, group);
    }
    // Types first, so that each rewrite below sees its neighbours' types.
    for (Value value : narrowed)
      value.setType(cast<RankedTensorType>(value.getType()).clone(narrow));
    for (Value value : narrowed) {
      for (OpOperand &use : llvm::make_early_inc_range(value.getUses()))
        widenRead(use);
      roundWrite(value);
    }
    eraseIdentityCasts(*step);
  }

  /// The values made from reductions (through elementwise ops and moves,
  /// with constants beside them): statistics, which stay f32 as DeepSpeed's
  /// f32 accumulation keeps them (a LayerNorm's rstd, a softmax's max, the
  /// loss). Constants (fills, splats, what an op makes from no tensor, as a
  /// causal mask) are neither: an op over statistics and constants makes a
  /// statistic, an op over constants alone a constant.
  void findStatistics(func::FuncOp step) {
    statistics.clear();
    llvm::DenseSet<Value> constants;
    step->walk([&](Operation *op) {
      for (Value result : op->getResults()) {
        SmallVector<Value> inputs;
        if (isa<linalg::ReduceOp>(op)) {
          statistics.insert(result);
          continue;
        }
        if (isa<linalg::FillOp, arith::ConstantOp>(op)) {
          constants.insert(result);
          continue;
        }
        if (Value source = getMovedSource(result))
          inputs.push_back(source);
        else if (isElementwiseMaker(op))
          llvm::append_range(
              inputs, cast<DestinationStyleOpInterface>(op).getDpsInputs());
        else
          continue;
        bool anyStatistic = false, onlyKnown = true;
        for (Value input : inputs) {
          anyStatistic |= statistics.contains(input);
          onlyKnown &= statistics.contains(input) || constants.contains(input);
        }
        if (onlyKnown)
          (anyStatistic ? statistics : constants).insert(result);
      }
    });
  }

  /// Whether `value` may be stored narrow: an elementwise op or a move makes
  /// it, it is no statistic, and every reader widens it or is a move of it.
  bool canNarrow(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    Operation *maker = value.getDefiningOp();
    if (!type || !type.getElementType().isF32() || !maker ||
        statistics.contains(value) ||
        !(getMovedSource(value) || isElementwiseMaker(maker)))
      return false;
    // A transpose or broadcast gets a fresh narrow init in place of its own.
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(maker);
        dps && !dps.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
      return false;
    return llvm::all_of(value.getUses(), [](OpOperand &use) {
      return isMovedOperand(use) || isWideningRead(use) ||
             isNestedExtract(use);
    });
  }

  /// Makes the reader of `use` widen the narrowed element it reads.
  void widenRead(OpOperand &use) {
    Operation *owner = use.getOwner();
    if (isMovedOperand(use))
      return;
    rewritten.insert(owner);
    OpBuilder b(owner);
    if (auto extract = dyn_cast<tensor::ExtractOp>(owner)) {
      Value element = extract.getResult();
      element.setType(narrow);
      b.setInsertionPointAfter(extract);
      auto widened =
          arith::ExtFOp::create(b, extract.getLoc(), b.getF32Type(), element);
      element.replaceAllUsesExcept(widened, widened);
      return;
    }
    BlockArgument arg =
        cast<linalg::LinalgOp>(owner).getMatchingBlockArgument(&use);
    arg.setType(narrow);
    if (arg.use_empty())
      return;
    b.setInsertionPointToStart(arg.getOwner());
    auto widened =
        arith::ExtFOp::create(b, owner->getLoc(), b.getF32Type(), arg);
    arg.replaceAllUsesExcept(widened, widened);
  }

  /// Makes the maker of `value` write it narrow: a fresh narrow init, and
  /// an elementwise body rounds what it yields.
  void roundWrite(Value value) {
    Operation *maker = value.getDefiningOp();
    auto dps = dyn_cast<DestinationStyleOpInterface>(maker);
    if (!dps)
      return; // A reshape, slice or swap: its type is all there is.
    rewritten.insert(maker);
    OpOperand *init = dps.getDpsInitOperand(0);
    auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
    OpBuilder b(maker);
    auto narrowEmpty = tensor::EmptyOp::create(
        b, empty.getLoc(), empty.getType().getShape(), narrow,
        empty.getDynamicSizes());
    narrowEmpty->setDiscardableAttrs(empty->getDiscardableAttrDictionary());
    init->set(narrowEmpty);
    if (empty->use_empty())
      empty->erase();
    Block &body = maker->getRegion(0).front();
    if (isElementMove(maker)) {
      // A transpose or broadcast yields the element it reads.
      for (BlockArgument arg : body.getArguments())
        arg.setType(narrow);
      return;
    }
    body.getArguments().back().setType(narrow);
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    b.setInsertionPoint(yield);
    Value rounded = arith::TruncFOp::create(b, yield.getLoc(), narrow,
                                            yield.getOperand(0));
    yield->setOperand(0, peelRoundTrip(rounded));
    eraseDeadArith(rounded.getDefiningOp());
  }

  /// Erases each map this pass rewrote that now widens a narrow tensor and
  /// rounds it back to its own type (a cast zero-mixed-precision or
  /// zero-compute-precision made, of a value that is narrow already).
  void eraseIdentityCasts(func::FuncOp step) {
    SmallVector<linalg::MapOp> identities;
    step->walk([&](linalg::MapOp map) {
      if (!rewritten.contains(map) || map.getInputs().size() != 1 ||
          map.getInputs()[0].getType() != map->getResult(0).getType())
        return;
      Block &body = map.getMapper().front();
      auto yield = cast<linalg::YieldOp>(body.getTerminator());
      if (peelRoundTrip(yield.getOperand(0)) == body.getArgument(0))
        identities.push_back(map);
    });
    for (linalg::MapOp map : identities) {
      Value init = map.getInit();
      map->getResult(0).replaceAllUsesWith(map.getInputs()[0]);
      map->erase();
      if (Operation *empty = init.getDefiningOp();
          empty && empty->use_empty())
        empty->erase();
    }
  }

  /// Erases `op` and the widenings it read when nothing reads them.
  static void eraseDeadArith(Operation *op) {
    while (op && op->use_empty() && isa<arith::TruncFOp, arith::ExtFOp>(op)) {
      Operation *input = op->getOperand(0).getDefiningOp();
      op->erase();
      op = input;
    }
  }

  /// The compute type activations are stored in.
  FloatType narrow;
  /// The f32 values made from reductions (findStatistics).
  llvm::DenseSet<Value> statistics;
  /// The ops whose bodies this pass changed.
  llvm::SmallPtrSet<Operation *, 32> rewritten;
};

} // namespace
