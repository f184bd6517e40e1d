//===- ScheduleUtils.cpp - helpers of the scheduling passes ---------------===//

#include "ScheduleUtils.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::zero;

WaitOp zero::getSameBlockWait(Operation *start) {
  WaitOp wait = cast<AsyncStartOpInterface>(start).getWait();
  if (!wait || wait->getBlock() != start->getBlock())
    return {};
  return wait;
}

void zero::limitSwapOutsInFlight(Block &block, unsigned inFlight) {
  SmallVector<Operation *> starts;
  for (Operation &op : block)
    if (isa<SwapOutStartOp>(op))
      starts.push_back(&op);
  for (size_t i = 0; i + inFlight < starts.size(); ++i) {
    WaitOp wait = getSameBlockWait(starts[i]);
    Operation *limit = starts[i + inFlight];
    if (wait && limit->isBeforeInBlock(wait))
      wait->moveBefore(limit);
  }
}

/// Appends to `chain`, producers first, the ops that make `value` from
/// nothing but constants (a constant, a `tensor.empty`, a `linalg.fill` of
/// one) and have `user` as their only user; false if `value` is not made
/// that way.
static bool collectFreshProducers(Value value, Operation *user,
                                  SmallVectorImpl<Operation *> &chain) {
  Operation *def = value.getDefiningOp();
  if (!def || !def->hasOneUse() || *def->user_begin() != user)
    return false;
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    for (Value operand : fill->getOperands())
      if (!collectFreshProducers(operand, fill, chain))
        return false;
  } else if (!def->hasTrait<OpTrait::ConstantLike>() &&
             !isa<tensor::EmptyOp>(def)) {
    return false;
  }
  chain.push_back(def);
  return true;
}

Operation *zero::hoistReaders(Value value, Operation *after, Operation *limit,
                              llvm::function_ref<bool(Operation *)> mayMove) {
  Block *block = limit->getBlock();
  if (after->getBlock() != block || !after->isBeforeInBlock(limit))
    return after;
  Operation *insertAfter = after;
  // Whether `v` is available right after `insertAfter`.
  auto isAvailable = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == block;
    Operation *op = block->findAncestorOpInBlock(*v.getDefiningOp());
    return op && (op == insertAfter || op->isBeforeInBlock(insertAfter));
  };
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    SmallVector<Operation *> users(v.getUsers());
    for (Operation *user : users) {
      if (user->getBlock() != block || !insertAfter->isBeforeInBlock(user) ||
          !user->isBeforeInBlock(limit) || !mayMove(user) ||
          (isa_and_present<ZeroDialect>(user->getDialect()) &&
           !isa<AnyNonFiniteOp>(user)) ||
          (user->getNumRegions() && !isa<linalg::LinalgOp>(user)) ||
          !isMemoryEffectFree(user))
        continue;
      SmallVector<Operation *> producers;
      bool movable = llvm::all_of(user->getOperands(), [&](Value operand) {
        return isAvailable(operand) ||
               collectFreshProducers(operand, user, producers);
      });
      // A body may read values of the block too (a map's scalar operand).
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(user->getRegions(), captured);
      movable = movable && llvm::all_of(captured, isAvailable);
      if (!movable)
        continue;
      for (Operation *op : producers) {
        op->moveAfter(insertAfter);
        insertAfter = op;
      }
      user->moveAfter(insertAfter);
      insertAfter = user;
      for (Value result : user->getResults())
        worklist.push_back(result);
    }
  }
  return insertAfter;
}

void zero::dropFromRelease(ReleaseOp release, Value value) {
  SmallVector<Value> rest;
  for (Value v : release.getTensors())
    if (v != value)
      rest.push_back(v);
  if (rest.empty()) {
    release->erase();
    return;
  }
  release.getTensorsMutable().assign(rest);
}

bool zero::isParameterGather(AllGatherStartOp op) {
  return llvm::all_of(op.getShards(), [&](Value shard) {
    if (auto secondary = shard.getDefiningOp<LocalShardOp>()) {
      auto wait = secondary.getFull().getDefiningOp<WaitOp>();
      return wait && isa_and_nonnull<AllGatherStartOp>(
                         wait.getHandle().getDefiningOp());
    }
    auto arg = dyn_cast<BlockArgument>(shard);
    return arg && isa<func::FuncOp>(arg.getOwner()->getParentOp());
  });
}

int64_t zero::getNumElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return -1;
  return getCheckedNumElements(tensor.getShape()).value_or(-1);
}

int64_t zero::getOperandElements(Operation *collective, unsigned operandIndex) {
  if (auto gather = dyn_cast<AllGatherStartOp>(collective)) {
    auto layouts = gather.getLayouts();
    if (operandIndex >= layouts.size())
      return -1;
    return cast<LayoutAttr>(layouts[operandIndex]).getNumel();
  }
  return getNumElements(collective->getOperand(operandIndex).getType());
}

std::string zero::getShardName(Value shard) {
  auto arg = dyn_cast<BlockArgument>(shard);
  if (!arg)
    return "a value";
  if (auto func =
          dyn_cast_or_null<func::FuncOp>(arg.getOwner()->getParentOp())) {
    if (auto name = func.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), ZeroDialect::getParamAttrName()))
      return name.getValue().str();
  }
  return "argument #" + std::to_string(arg.getArgNumber());
}

bool zero::isInMemorySpace(Value value, MemorySpace space) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && getMemorySpace(type) == space;
}

void zero::setMemorySpace(Value value, MemorySpace space) {
  value.setType(
      getTensorTypeInSpace(cast<RankedTensorType>(value.getType()), space));
}

LogicalResult zero::recordNvmeSettings(func::FuncOp func, StringRef passName,
                                       StringRef nvmePath,
                                       const AioSettings &aio) {
  if (aio.blockSize < 4096 || aio.queueDepth < 1)
    return func.emitError(passName)
           << ": aio-block-size must be at least 4096 and aio-queue-depth at "
              "least 1";
  Builder b(func.getContext());
  if (!nvmePath.empty()) {
    auto recorded =
        func->getAttrOfType<StringAttr>(ZeroDialect::getNvmePathAttrName());
    if (recorded && recorded.getValue() != nvmePath)
      return func.emitError(passName)
             << ": nvme-path '" << nvmePath << "' differs from '"
             << recorded.getValue()
             << "', already recorded on the step: a rank's NVMe arena is one "
                "file, in one directory";
    func->setAttr(ZeroDialect::getNvmePathAttrName(),
                  b.getStringAttr(nvmePath));
  }
  func->setAttr(
      ZeroDialect::getAioAttrName(),
      b.getDictionaryAttr(
          {b.getNamedAttr("block_size", b.getI64IntegerAttr(aio.blockSize)),
           b.getNamedAttr("queue_depth", b.getI64IntegerAttr(aio.queueDepth)),
           b.getNamedAttr("single_submit", b.getBoolAttr(aio.singleSubmit)),
           b.getNamedAttr("overlap_events",
                          b.getBoolAttr(aio.overlapEvents))}));
  return success();
}

LogicalResult zero::parseOffloadDevice(StringRef device, Operation *op,
                                       StringRef passName,
                                       std::optional<MemorySpace> &space) {
  space.reset();
  if (device == "cpu")
    space = MemorySpace::Host;
  else if (device == "nvme")
    space = MemorySpace::Nvme;
  else if (device != "none")
    return op->emitError(passName) << ": unknown device '" << device
                                   << "' (expected none, cpu or nvme)";
  return success();
}
