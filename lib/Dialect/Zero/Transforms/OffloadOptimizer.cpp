//===- OffloadOptimizer.cpp - zero-offload-optimizer ----------------------===//
//
// ZeRO-Offload's optimizer half (DeepSpeed's `offload_optimizer`): the fp32
// master weights and the optimizer states live in host (or NVMe) memory, and
// the optimizer step runs there.
//
// - Every optimizer-state argument an optimizer op reads (`zero.state`:
//   masters, moments) moves to the target space, and with it the result that
//   updates it.
// - The optimizer ops, the elementwise `linalg.map`s that read only what
//   the host holds (the overflow skip's selects, the cast to the 16-bit
//   parameter) and those whose results only the optimizer reads (fp16's
//   unscaling of a gradient), run on the host: their results live there.
// - A device tensor the host ops read (the reduced gradient shard, a
//   parameter shard without a master) is swapped out where it is defined,
//   during the backward pass, and waited for right before its first host use
//   or, if earlier, where the swap-out after the next one starts.
// - A host result that the device needs (the new 16-bit shard before its
//   all-gather or as the step's result) is swapped in right after it is
//   computed, and waited for right before its first device use.
//
// The swaps change where bytes live, never their values: the step computes
// the same numbers as without offload.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "ScheduleUtils.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROOFFLOADOPTIMIZERPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

class Offloader {
public:
  Offloader(func::FuncOp func, MemorySpace target, double ratio)
      : func(func), block(func.front()), target(target), ratio(ratio) {}

  LogicalResult run();

private:
  /// Whether `op` runs in the target space: an optimizer op, or a map whose
  /// tensor inputs all live there and whose init is a fresh tensor.empty.
  bool runsOffDevice(Operation *op) const;
  /// Moves `op`'s results (and a map's init) to the target space.
  void moveResults(Operation *op);
  /// The target-space copy of device tensor `value`, swapped out where it
  /// is defined; its wait goes before `firstUser`.
  Value swapOut(Value value, Operation *firstUser);
  /// Swaps in target-space `value` for its device users.
  void swapIn(Value value);
  /// Whether `use` returns an optimizer state, which stays where it is.
  bool isReturnedState(OpOperand &use) const {
    return isa<func::ReturnOp>(use.getOwner()) &&
           func.getResultAttr(use.getOperandNumber(),
                              ZeroDialect::getStateAttrName());
  }
  /// The op after which the device is done with `value` before its first
  /// off-device user `firstUser` (null: the block's start).
  Operation *getSwapOutAnchor(Value value, Operation *firstUser);

  // Op handles are not const-correct.
  mutable func::FuncOp func;
  Block &block;
  MemorySpace target;
  double ratio;
  /// The optimizer ops that step off the device, and the maps whose
  /// results only they read.
  llvm::SmallPtrSet<Operation *, 16> offloadedOptimizers;
  llvm::SmallPtrSet<Operation *, 16> optimizerFeeders;
  llvm::DenseMap<Value, Value> swappedOut;
  llvm::DenseMap<Operation *, Operation *> lastSwapOut;
  llvm::DenseMap<Operation *, Operation *> lastSwapIn;
  /// The last reader moved after a definition (hoistReaders).
  llvm::DenseMap<Operation *, Operation *> lastHoisted;
  llvm::SetVector<Operation *> offDeviceOps;
};

bool Offloader::runsOffDevice(Operation *op) const {
  if (isa<AdamOp, SgdOp>(op))
    return offloadedOptimizers.contains(op);
  if (optimizerFeeders.contains(op))
    return true;
  auto map = dyn_cast<linalg::MapOp>(op);
  if (!map || !map.getInit().getDefiningOp<tensor::EmptyOp>() ||
      !map.getInit().hasOneUse())
    return false;
  bool readsOffDevice = false;
  for (Value input : map.getInputs()) {
    if (!isInMemorySpace(input, target))
      return false;
    readsOffDevice = true;
  }
  return readsOffDevice;
}

void Offloader::moveResults(Operation *op) {
  if (auto map = dyn_cast<linalg::MapOp>(op)) {
    auto empty = map.getInit().getDefiningOp<tensor::EmptyOp>();
    setMemorySpace(empty.getResult(), target);
  }
  for (Value result : op->getResults())
    if (isa<RankedTensorType>(result.getType()))
      setMemorySpace(result, target);
}

Value Offloader::swapOut(Value value, Operation *firstUser) {
  auto [it, inserted] = swappedOut.try_emplace(value);
  if (!inserted)
    return it->second;
  // The device's other reads of the value (fp16's overflow check) run as
  // soon as it exists, so that the swap-out can start there.
  // They follow those moved there before, in the order of the swaps.
  if (Operation *def = value.getDefiningOp()) {
    def = block.findAncestorOpInBlock(*def);
    Operation *&after = lastHoisted[def];
    after = hoistReaders(
        value, after ? after : def, block.findAncestorOpInBlock(*firstUser),
        [&](Operation *op) { return !offDeviceOps.contains(op); });
  }
  OpBuilder b(func.getContext());
  // After the swaps already there, so that swaps start in operand order.
  Operation *anchor = getSwapOutAnchor(value, firstUser);
  if (Operation *last = lastSwapOut.lookup(anchor))
    b.setInsertionPointAfter(last);
  else if (anchor)
    b.setInsertionPointAfter(anchor);
  else
    b.setInsertionPointToStart(&block);
  auto start = SwapOutStartOp::create(b, value.getLoc(), value, target);
  lastSwapOut[anchor] = start;
  b.setInsertionPoint(block.findAncestorOpInBlock(*firstUser));
  it->second = WaitOp::create(b, value.getLoc(), start).getResult(0);
  return it->second;
}

Operation *Offloader::getSwapOutAnchor(Value value, Operation *firstUser) {
  // Where the device is done with the value: after its definition and its
  // last use on the device before `firstUser` (a parameter shard is
  // gathered before the step reads it off the device), at the step level.
  // Ops of the function's body: a use inside the micro-step loop is a use
  // by the loop op.
  Operation *def = value.getDefiningOp();
  Operation *anchor = def ? block.findAncestorOpInBlock(*def) : nullptr;
  Operation *limit = block.findAncestorOpInBlock(*firstUser);
  for (Operation *user : value.getUsers()) {
    if (offDeviceOps.contains(user) ||
        isa<SwapOutStartOp, func::ReturnOp>(user))
      continue;
    Operation *op = block.findAncestorOpInBlock(*user);
    if (op && op->isBeforeInBlock(limit) &&
        (!anchor || anchor->isBeforeInBlock(op)))
      anchor = op;
  }
  return anchor;
}

void Offloader::swapIn(Value value) {
  SmallVector<OpOperand *> deviceUses;
  for (OpOperand &use : value.getUses())
    if (!offDeviceOps.contains(use.getOwner()) &&
        !isa<SwapOutStartOp, SwapInStartOp>(use.getOwner()) &&
        !isReturnedState(use))
      deviceUses.push_back(&use);
  if (deviceUses.empty())
    return;
  // Start and wait in the function's body, around the loop op for a use
  // inside the micro-step loop: a wait runs once per start.
  Operation *firstUser =
      block.findAncestorOpInBlock(*deviceUses.front()->getOwner());
  for (OpOperand *use : deviceUses) {
    Operation *user = block.findAncestorOpInBlock(*use->getOwner());
    if (user->isBeforeInBlock(firstUser))
      firstUser = user;
  }
  // After the swap-ins of values defined at the same place, so that swaps
  // start in the order they are needed.
  OpBuilder b(func.getContext());
  Operation *def = value.getDefiningOp();
  if (Operation *last = lastSwapIn.lookup(def))
    b.setInsertionPointAfter(last);
  else if (def)
    b.setInsertionPointAfter(block.findAncestorOpInBlock(*def));
  else
    b.setInsertionPointToStart(&block);
  auto start = SwapInStartOp::create(b, value.getLoc(),
                                     HandleType::get(func.getContext()), value);
  lastSwapIn[def] = start;
  b.setInsertionPoint(firstUser);
  Value onDevice = WaitOp::create(b, value.getLoc(), start).getResult(0);
  for (OpOperand *use : deviceUses)
    use->set(onDevice);
}

LogicalResult Offloader::run() {
  StringRef stateAttr = ZeroDialect::getStateAttrName();
  // The optimizer's states move with their updates.
  SmallVector<Operation *> optimizers;
  block.walk([&](Operation *op) {
    if (isa<AdamOp, SgdOp>(op))
      optimizers.push_back(op);
  });
  if (optimizers.empty())
    return success();
  // DeepSpeed's `ratio`: the first optimizer ops, in program order, whose
  // shards hold that fraction of the elements step off the device.
  auto numel = [](Operation *op) {
    return cast<RankedTensorType>(op->getOperand(0).getType()).getNumElements();
  };
  int64_t total = 0;
  for (Operation *op : optimizers)
    total += numel(op);
  double offloaded = 0;
  for (Operation *op : optimizers) {
    if (offloaded >= ratio * static_cast<double>(total))
      break;
    offloadedOptimizers.insert(op);
    offloaded += numel(op);
  }
  for (Operation *op : offloadedOptimizers) {
    for (Value operand : op->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != &block ||
          !func.getArgAttr(arg.getArgNumber(), stateAttr) ||
          isInMemorySpace(arg, target))
        continue;
      if (!isInMemorySpace(arg, MemorySpace::Device))
        return op->emitOpError("reads the optimizer state #")
               << arg.getArgNumber()
               << " from another offload space than the one asked for";
      setMemorySpace(arg, target);
    }
  }

  if (offloadedOptimizers.empty())
    return success();
  // The maps that only feed the offloaded optimizer (fp16's unscaling of a
  // gradient) run off the device too: the 16-bit tensor they read is
  // swapped instead of their wider result.
  Operation *first = getStepLevelOp(optimizers.front());
  for (Operation &op : llvm::reverse(block)) {
    auto map = dyn_cast<linalg::MapOp>(op);
    if (!map || !map.getInit().getDefiningOp<tensor::EmptyOp>() ||
        !map.getInit().hasOneUse() ||
        map.getMapper()
            .walk([](tensor::ExtractOp) { return WalkResult::interrupt(); })
            .wasInterrupted() ||
        map->use_empty() || llvm::any_of(map->getUsers(), [&](Operation *user) {
          return !offloadedOptimizers.contains(user) &&
                 !optimizerFeeders.contains(user);
        }))
      continue;
    optimizerFeeders.insert(map);
    if (map->isBeforeInBlock(first))
      first = map;
  }
  // The ops that run off the device, in program order, from the first of
  // them on.
  for (Operation &op : llvm::make_early_inc_range(
           llvm::make_range(first->getIterator(), block.end()))) {
    if (!runsOffDevice(&op))
      continue;
    offDeviceOps.insert(&op);
    // A map's init is a fresh tensor.empty that moves with its result.
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    for (OpOperand &operand : op.getOpOperands()) {
      Value value = operand.get();
      if ((!dps || !dps.isDpsInit(&operand)) &&
          isInMemorySpace(value, MemorySpace::Device))
        operand.set(swapOut(value, &op));
    }
    moveResults(&op);
  }

  // The device reads a swap-out's operand until its wait: two in flight,
  // as DeepSpeed's alternating buckets, free the gradients during the
  // backward pass instead of holding all of them until the optimizer.
  limitSwapOutsInFlight(block, /*inFlight=*/2);

  // Device users of what lives off the device get it swapped back in.
  for (BlockArgument arg : block.getArguments())
    if (isInMemorySpace(arg, target))
      swapIn(arg);
  for (Operation *op : offDeviceOps)
    for (Value result : op->getResults())
      if (isInMemorySpace(result, target))
        swapIn(result);

  // A state's update returns to its argument's space; anything else the
  // step returns (a parameter) is the device's, swapped in above.
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  for (OpOperand &operand : ret->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    if (!isInMemorySpace(operand.get(), target) ||
        func.getResultAttr(i, stateAttr))
      continue;
    return ret.emitOpError("returns result #")
           << i << ", which lives in " << stringifyEnum(target)
           << " memory but is not an optimizer state";
  }
  updateFunctionType(func);
  return success();
}

struct ZeroOffloadOptimizerPass
    : public zero::impl::ZeroOffloadOptimizerPassBase<
          ZeroOffloadOptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<MemorySpace> parsed;
    if (failed(
            parseOffloadDevice(device, getOperation(), getArgument(), parsed)))
      return signalPassFailure();
    if (!parsed)
      return;
    if (*parsed == MemorySpace::Nvme) {
      getOperation().emitError(
          "zero-offload-optimizer: device 'nvme' is not supported yet: the "
          "optimizer steps on states in host memory, and moving them between "
          "host memory and NVMe in tiles is not implemented; use 'cpu'");
      return signalPassFailure();
    }
    MemorySpace space = MemorySpace::Host;
    FailureOr<PartitionedTrainStep> step =
        lookupPartitionedTrainStep(getOperation(), entry, getArgument());
    if (failed(step))
      return signalPassFailure();
    if (step->rank.stage == 0) {
      step->func.emitError("zero-offload-optimizer: offloading the optimizer "
                           "needs stage 1, 2 or 3 (the step is stage 0)");
      return signalPassFailure();
    }
    if (ratio < 0 || ratio > 1) {
      getOperation().emitError("zero-offload-optimizer: ratio ")
          << ratio << " is not in [0, 1]";
      return signalPassFailure();
    }
    if (ratio < 1 && step->rank.stage != 3) {
      step->func.emitError("zero-offload-optimizer: a ratio below 1 needs "
                           "stage 3 (the step is stage ")
          << step->rank.stage << ")";
      return signalPassFailure();
    }
    if (failed(Offloader(step->func, space, ratio).run()))
      return signalPassFailure();
  }
};

} // namespace
