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
//   So do the tiles of a shard larger than `sub-group-size`: they read
//   slices of the host states, and their updates are put together in host
//   memory.
// - A device tensor the host ops read (the reduced gradient shard, a
//   parameter shard without a master) is swapped out where it is defined,
//   during the backward pass, and waited for right before its first host use
//   or, if earlier, where the swap-out after the next one starts. fp16's
//   overflow check, one zero.any_nonfinite over every gradient, is split
//   into one per gradient combined with arith.maximumf (the same flag),
//   each run as soon as its gradient exists: as one op it would keep every
//   gradient on the device until the last one is computed.
// - A host result that the device needs (the new 16-bit shard before its
//   all-gather or as the step's result) is swapped in right after it is
//   computed, and waited for right before its first device use.
//
// With NVMe (ZeRO-Infinity), the states live in the nvme space between
// steps. Everything above happens in host memory, and around the host-side
// update the states move in sub-groups: consecutive optimizer ops of at most
// `sub-group-size` elements in all are read from NVMe to host memory
// together before their first update and written back after their last one.
// `pipeline-read` starts the next group's read before the current update,
// `pipeline-write` waits for a group's write only after the next update,
// each when `buffer-count` buffers (one per state tensor of a group, as
// DeepSpeed's swap buffers) hold the groups in flight.
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

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// The tensor `value` is a view of: through the extract_slice and
/// collapse_shape ops by which the tiles of a partition larger than
/// `sub-group-size` read it (zero-insert-optimizer), collected in `views`.
static Value getViewedValue(Value value,
                            SmallVectorImpl<Operation *> *views = nullptr) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp>(def))
      break;
    if (views)
      views->push_back(def);
    value = def->getOperand(0);
  }
  return value;
}

namespace {

/// Splits every zero.any_nonfinite of several tensors into one per tensor,
/// combined in order with arith.maximumf: the same 0.0 or 1.0, and each part
/// may run as soon as its tensor exists (Offloader::swapOut moves it there).
void splitOverflowChecks(func::FuncOp func) {
  SmallVector<AnyNonFiniteOp> checks;
  func.walk([&](AnyNonFiniteOp check) {
    if (check.getInputs().size() > 1)
      checks.push_back(check);
  });
  for (AnyNonFiniteOp check : checks) {
    OpBuilder b(check);
    Value flag;
    for (Value input : check.getInputs()) {
      Value part = AnyNonFiniteOp::create(b, check.getLoc(), ValueRange{input});
      flag = flag ? arith::MaximumFOp::create(b, check.getLoc(), flag, part)
                        .getResult()
                  : part;
    }
    check.getFlag().replaceAllUsesWith(flag);
    check.erase();
  }
}

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
  /// The optimizer ops that step off the device, the maps whose results
  /// only they read, and the views through which the tiles of a partition
  /// larger than `sub-group-size` read their states.
  llvm::SmallPtrSet<Operation *, 16> offloadedOptimizers;
  llvm::SmallPtrSet<Operation *, 16> optimizerFeeders;
  llvm::SmallPtrSet<Operation *, 16> stateViews;
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
  if (optimizerFeeders.contains(op) || stateViews.contains(op))
    return true;
  // The updated tiles are put together where they were computed.
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    auto empty = insert.getDest().getDefiningOp<tensor::EmptyOp>();
    return isInMemorySpace(insert.getSource(), target) &&
           (isInMemorySpace(insert.getDest(), target) ||
            (empty && insert.getDest().hasOneUse()));
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    Operation *def = expand.getSrc().getDefiningOp();
    return def && offDeviceOps.contains(def);
  }
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
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    if (auto empty = insert.getDest().getDefiningOp<tensor::EmptyOp>())
      setMemorySpace(empty.getResult(), target);
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
  // shards hold that fraction of the elements step off the device. The
  // tiles of a shard (views of one parameter shard) go together: their
  // states are one argument each.
  auto numel = [](Operation *op) {
    return cast<RankedTensorType>(op->getOperand(0).getType()).getNumElements();
  };
  int64_t total = 0;
  for (Operation *op : optimizers)
    total += numel(op);
  double offloaded = 0;
  llvm::DenseMap<Value, bool> shardOffloaded;
  for (Operation *op : optimizers) {
    bool off = offloaded < ratio * static_cast<double>(total);
    off = shardOffloaded.try_emplace(getViewedValue(op->getOperand(0)), off)
              .first->second;
    if (!off)
      continue;
    offloadedOptimizers.insert(op);
    offloaded += numel(op);
  }
  for (Operation *op : offloadedOptimizers) {
    for (Value operand : op->getOperands()) {
      SmallVector<Operation *> views;
      auto arg = dyn_cast<BlockArgument>(getViewedValue(operand, &views));
      if (!arg || arg.getOwner() != &block ||
          !func.getArgAttr(arg.getArgNumber(), stateAttr))
        continue;
      stateViews.insert(views.begin(), views.end());
      if (isInMemorySpace(arg, target))
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
  for (Operation *view : stateViews)
    if (Operation *op = getStepLevelOp(view); op->isBeforeInBlock(first))
      first = op;
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

/// Moves the host-memory states of the offloaded optimizer to NVMe and
/// swaps them through host memory a sub-group at a time.
class NvmeStateSwapper {
public:
  struct Options {
    int64_t subGroupSize;
    int64_t bufferCount;
    bool pipelineRead;
    bool pipelineWrite;
  };
  NvmeStateSwapper(func::FuncOp func, const Options &options)
      : func(func), block(func.front()), options(options) {}

  LogicalResult run();

private:
  struct SubGroup {
    /// The states the group's optimizer ops read, in operand order.
    SmallVector<BlockArgument> states;
    /// The return operands that update them.
    SmallVector<OpOperand *> updates;
  };
  /// Reads `group`'s states into host memory: waited for before the group's
  /// first host use, and started there too, or right after `readStart` (the
  /// wait of the previous group's read) when reading ahead.
  WaitOp read(SubGroup &group, Operation *readStart);

  func::FuncOp func;
  Block &block;
  Options options;
};

WaitOp NvmeStateSwapper::read(SubGroup &group, Operation *readStart) {
  // Every use but a swap (a device use of the state reads it from NVMe) and
  // the return (a state not updated stays where it is).
  auto isHostUse = [](OpOperand &use) {
    return !isa<SwapInStartOp, SwapOutStartOp, func::ReturnOp>(use.getOwner());
  };
  Operation *firstUse = nullptr;
  for (BlockArgument state : group.states)
    for (OpOperand &use : state.getUses()) {
      if (!isHostUse(use))
        continue;
      Operation *op = block.findAncestorOpInBlock(*use.getOwner());
      if (!firstUse || op->isBeforeInBlock(firstUse))
        firstUse = op;
    }
  OpBuilder b(func.getContext());
  if (readStart)
    b.setInsertionPointAfter(readStart);
  else
    b.setInsertionPoint(firstUse);
  SmallVector<Value> tensors(group.states.begin(), group.states.end());
  Location loc = firstUse->getLoc();
  auto start = SwapOutStartOp::create(b, loc, tensors, MemorySpace::Host);
  b.setInsertionPoint(firstUse);
  auto wait = WaitOp::create(b, loc, start);
  for (auto [state, onHost] : llvm::zip(group.states, wait.getResults()))
    state.replaceUsesWithIf(onHost, isHostUse);
  return wait;
}

LogicalResult NvmeStateSwapper::run() {
  StringRef paramAttr = ZeroDialect::getParamAttrName();
  StringRef stateAttr = ZeroDialect::getStateAttrName();
  // The states the offloaded optimizer ops read, in host memory now.
  auto isHostState = [&](Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner() == &block &&
           func.getArgAttr(arg.getArgNumber(), stateAttr) &&
           isInMemorySpace(arg, MemorySpace::Host);
  };
  // Consecutive optimizer ops up to sub-group-size elements; a larger op is
  // a group alone.
  // A state by its parameter's and its own name, as the step returns it.
  auto getKey = [&](BlockArgument state) {
    unsigned i = state.getArgNumber();
    return std::make_pair(func.getArgAttr(i, paramAttr),
                          func.getArgAttr(i, stateAttr));
  };
  SmallVector<SubGroup> groups;
  llvm::DenseMap<std::pair<Attribute, Attribute>, size_t> groupOfState;
  int64_t groupElements = 0;
  size_t statesPerGroup = 0;
  for (Operation &op : block) {
    if (!isa<AdamOp, SgdOp>(op))
      continue;
    // The tiles of a partition larger than sub-group-size read views of
    // its states: the first tile's group reads the whole states, the
    // others find them read.
    SmallVector<BlockArgument> states;
    for (Value operand : op.getOperands()) {
      Value state = getViewedValue(operand);
      if (isHostState(state) && !llvm::is_contained(states, state) &&
          !groupOfState.count(getKey(cast<BlockArgument>(state))))
        states.push_back(cast<BlockArgument>(state));
    }
    if (states.empty())
      continue;
    int64_t numel = getNumElements(states.front().getType());
    if (groups.empty() || groupElements + numel > options.subGroupSize) {
      groups.emplace_back();
      groupElements = 0;
    }
    groupElements += numel;
    statesPerGroup = std::max(statesPerGroup, states.size());
    for (BlockArgument state : states) {
      groupOfState[getKey(state)] = groups.size() - 1;
      groups.back().states.push_back(state);
    }
  }
  if (groups.empty())
    return success();
  if (options.bufferCount < static_cast<int64_t>(statesPerGroup))
    return func.emitError("zero-offload-optimizer: buffer-count ")
           << options.bufferCount << " holds fewer buffers than the "
           << statesPerGroup
           << " optimizer states a sub-group swaps between NVMe and host "
              "memory (offload_optimizer.buffer_count: one buffer per state)";
  // The groups whose host buffers are in use at once: the updated one, the
  // next one being read, the previous one being written.
  int64_t inFlight = options.bufferCount / statesPerGroup;
  bool readAhead = options.pipelineRead && inFlight >= 2;
  bool writeBehind = options.pipelineWrite && inFlight >= 2 + readAhead;

  // The updates of the states, by the state's name.
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  for (OpOperand &operand : ret->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    auto it = groupOfState.find(
        {func.getResultAttr(i, paramAttr), func.getResultAttr(i, stateAttr)});
    if (it == groupOfState.end() ||
        !isInMemorySpace(operand.get(), MemorySpace::Host))
      continue;
    groups[it->second].updates.push_back(&operand);
  }

  for (SubGroup &group : groups)
    for (BlockArgument state : group.states)
      setMemorySpace(state, MemorySpace::Nvme);

  // Reads, in group order: group g + 1's starts right after group g's wait
  // when reading ahead.
  WaitOp previousRead;
  for (SubGroup &group : groups)
    previousRead = read(group, readAhead ? previousRead : nullptr);

  // Writes: each starts once host memory is done with the group's updates
  // (their definitions and their other readers, such as the cast to the
  // 16-bit parameter: a swap-out ends the host copy) and is waited for at
  // once, or before the next group's write starts (the return for the last).
  OpBuilder b(func.getContext());
  SmallVector<std::pair<SwapOutStartOp, SmallVector<OpOperand *>>> writes;
  for (SubGroup &group : groups) {
    if (group.updates.empty())
      continue;
    Operation *last = nullptr;
    auto extend = [&](Operation *op) {
      op = block.findAncestorOpInBlock(*op);
      if (!last || last->isBeforeInBlock(op))
        last = op;
    };
    for (OpOperand *update : group.updates) {
      if (Operation *def = update->get().getDefiningOp())
        extend(def);
      for (Operation *user : update->get().getUsers())
        if (user != ret)
          extend(user);
    }
    if (last)
      b.setInsertionPointAfter(last);
    else
      b.setInsertionPointToStart(&block);
    SmallVector<Value> tensors;
    for (OpOperand *update : group.updates)
      tensors.push_back(update->get());
    auto start =
        SwapOutStartOp::create(b, ret.getLoc(), tensors, MemorySpace::Nvme);
    writes.emplace_back(start, group.updates);
  }
  for (auto [i, write] : llvm::enumerate(writes)) {
    auto &[start, updates] = write;
    Operation *next = i + 1 < writes.size() ? writes[i + 1].first : ret;
    if (writeBehind && start->isBeforeInBlock(next))
      b.setInsertionPoint(next);
    else
      b.setInsertionPointAfter(start);
    auto wait = WaitOp::create(b, start.getLoc(), start);
    for (auto [update, onNvme] : llvm::zip(updates, wait.getResults()))
      update->set(onNvme);
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
    if (*parsed == MemorySpace::Nvme && (subGroupSize < 1 || bufferCount < 1)) {
      getOperation().emitError("zero-offload-optimizer: sub-group-size and "
                               "buffer-count must be at least 1");
      return signalPassFailure();
    }
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
    if (ratio > 0)
      splitOverflowChecks(step->func);
    // The update runs in host memory in either case.
    if (failed(Offloader(step->func, MemorySpace::Host, ratio).run()))
      return signalPassFailure();
    if (*parsed != MemorySpace::Nvme)
      return;
    if (failed(NvmeStateSwapper(step->func, {subGroupSize, bufferCount,
                                             pipelineRead, pipelineWrite})
                   .run()) ||
        failed(recordNvmeSettings(
            step->func, getArgument(), nvmePath,
            {aioBlockSize, aioQueueDepth, aioSingleSubmit, aioOverlapEvents})))
      return signalPassFailure();
  }
};

} // namespace
