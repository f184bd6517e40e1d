//===- ScheduleUtils.cpp - helpers of the scheduling passes ---------------===//

#include "ScheduleUtils.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"

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
