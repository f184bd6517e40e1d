//===- ScheduleUtils.cpp - helpers of the scheduling passes ---------------===//

#include "ScheduleUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::zero;

WaitOp zero::getSameBlockWait(Operation *start) {
  Value handle = start->getResult(0);
  if (!handle.hasOneUse())
    return {};
  auto wait = dyn_cast<WaitOp>(*handle.user_begin());
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

bool zero::isParameterGather(AllGatherStartOp op) {
  return llvm::all_of(op.getShards(), [&](Value shard) {
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
