//===- OffloadParams.cpp - zero-offload-params ----------------------------===//
//
// ZeRO-Infinity's parameter offload (DeepSpeed's `offload_param`, stage 3):
// the partitioned parameter shards live in host memory between steps, and
// each is swapped in for the all-gather that reads it.
//
// - Every partitioned (not persistent) parameter argument moves to the
//   target space, and with it the step's result that updates it.
// - A gather (or any other device op) that reads offloaded shards gets them
//   from one swap-in per op, started right after the previous parameter
//   gather of its block starts (one gather ahead, as the gathers themselves
//   are prefetched) and waited for right before it.
// - The updated shard is swapped out where it is computed. When the
//   optimizer ran off the device, the swap-in that brought the shard back
//   for the step's result is dropped: the shard is returned from host
//   memory, or swapped from there to NVMe.
//
// Runs after zero-schedule-prefetch, which places the gathers; the swaps go
// around them.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROOFFLOADPARAMSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

bool isInSpace(Value value, MemorySpace space) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && getMemorySpace(type) == space;
}

RankedTensorType inSpace(Type type, MemorySpace space) {
  return getTensorTypeInSpace(cast<RankedTensorType>(type), space);
}

/// The op a swap-in for `user` starts after: the previous parameter gather
/// of its block, else the block's start (null).
Operation *getPrefetchPoint(Operation *user) {
  for (Operation *op = user->getPrevNode(); op; op = op->getPrevNode())
    if (isa<AllGatherStartOp>(op) && op != user)
      return op;
  return nullptr;
}

/// Folds `swap_out_start %x` of a tensor already in its target space: the
/// wait's result is %x.
void foldRedundantSwapOut(SwapOutStartOp start) {
  WaitOp wait;
  for (Operation *user : start.getHandle().getUsers())
    wait = cast<WaitOp>(user);
  if (!wait)
    return;
  for (auto [operand, result] :
       llvm::zip(start.getTensors(), wait.getResults()))
    result.replaceAllUsesWith(operand);
  wait.erase();
  start.erase();
}

class ParamOffloader {
public:
  ParamOffloader(func::FuncOp func, MemorySpace target)
      : func(func), block(func.front()), target(target) {}

  LogicalResult run();

private:
  /// Swaps in the offloaded operands of device op `user`.
  void swapInFor(Operation *user, ArrayRef<OpOperand *> operands);
  /// Makes the step return result `index` in the target space.
  void returnOffDevice(unsigned index);

  func::FuncOp func;
  Block &block;
  MemorySpace target;
};

void ParamOffloader::swapInFor(Operation *user,
                               ArrayRef<OpOperand *> operands) {
  OpBuilder b(func.getContext());
  Block *userBlock = user->getBlock();
  if (Operation *previous = getPrefetchPoint(user))
    b.setInsertionPointAfter(previous);
  else
    b.setInsertionPointToStart(userBlock);
  SmallVector<Value> tensors;
  for (OpOperand *operand : operands)
    tensors.push_back(operand->get());
  auto start = SwapInStartOp::create(
      b, user->getLoc(), HandleType::get(func.getContext()), tensors);
  b.setInsertionPoint(user);
  auto wait = WaitOp::create(b, user->getLoc(), start);
  for (auto [operand, onDevice] : llvm::zip(operands, wait.getResults()))
    operand->set(onDevice);
}

void ParamOffloader::returnOffDevice(unsigned index) {
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  OpOperand &operand = ret->getOpOperand(index);
  Value value = operand.get();
  if (isInSpace(value, target))
    return;
  // The optimizer ran off the device and its result was swapped in only to
  // be returned: return it from where it is, or move it to NVMe from there.
  if (auto wait = value.getDefiningOp<WaitOp>()) {
    auto swapIn = wait.getHandle().getDefiningOp<SwapInStartOp>();
    unsigned i = cast<OpResult>(value).getResultNumber();
    if (swapIn) {
      Value offDevice = swapIn.getTensors()[i];
      operand.set(offDevice);
      if (wait->use_empty()) {
        wait.erase();
        swapIn.erase();
      }
      value = offDevice;
      if (isInSpace(value, target))
        return;
    }
  }
  OpBuilder b(func.getContext());
  if (Operation *def = value.getDefiningOp())
    b.setInsertionPointAfter(getStepLevelOp(def));
  else
    b.setInsertionPointToStart(&block);
  auto start = SwapOutStartOp::create(b, value.getLoc(), value, target);
  b.setInsertionPoint(ret);
  operand.set(WaitOp::create(b, value.getLoc(), start).getResult(0));
}

LogicalResult ParamOffloader::run() {
  // The shards to offload, by name: the step's result of the same name is
  // their update.
  llvm::StringMap<BlockArgument> offloaded;
  for (ParamArg &param : getParamArgs(func)) {
    if (param.persistent || !isInSpace(param.arg, MemorySpace::Device))
      continue;
    param.arg.setType(inSpace(param.arg.getType(), target));
    offloaded[param.name] = param.arg;
  }

  // Device users, each with all of its offloaded operands, so that a bucket
  // swaps in at once.
  llvm::MapVector<Operation *, SmallVector<OpOperand *>> deviceUses;
  SmallVector<SwapOutStartOp> redundant;
  for (const ParamArg &param : getParamArgs(func)) {
    if (!offloaded.count(param.name))
      continue;
    for (OpOperand &use : param.arg.getUses()) {
      Operation *user = use.getOwner();
      if (auto swapOut = dyn_cast<SwapOutStartOp>(user);
          swapOut && swapOut.getTarget() == target)
        redundant.push_back(swapOut);
      else if (!isa<func::ReturnOp>(user))
        deviceUses[user].push_back(&use);
    }
  }
  for (SwapOutStartOp swapOut : redundant)
    foldRedundantSwapOut(swapOut);
  for (auto &[user, operands] : deviceUses)
    swapInFor(user, operands);

  StringRef paramAttr = ZeroDialect::getParamAttrName();
  StringRef stateAttr = ZeroDialect::getStateAttrName();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, paramAttr);
    if (name && !func.getResultAttr(i, stateAttr) &&
        offloaded.count(name.getValue()))
      returnOffDevice(i);
  }
  updateFunctionType(func);
  return success();
}

struct ZeroOffloadParamsPass
    : public zero::impl::ZeroOffloadParamsPassBase<ZeroOffloadParamsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (device == "none")
      return;
    if (device != "cpu" && device != "nvme") {
      getOperation().emitError("zero-offload-params: unknown device '")
          << device << "' (expected none, cpu or nvme)";
      return signalPassFailure();
    }
    MemorySpace space =
        device == "nvme" ? MemorySpace::Nvme : MemorySpace::Host;
    FailureOr<PartitionedTrainStep> step =
        lookupPartitionedTrainStep(getOperation(), entry, getArgument());
    if (failed(step))
      return signalPassFailure();
    if (step->rank.stage != 3) {
      step->func.emitError("zero-offload-params: offloading parameters "
                           "needs stage 3 (the step is stage ")
          << step->rank.stage << ")";
      return signalPassFailure();
    }
    if (failed(ParamOffloader(step->func, space).run()))
      return signalPassFailure();
    if (space != MemorySpace::Nvme)
      return;
    if (aioBlockSize < 4096 || aioQueueDepth < 1) {
      step->func.emitError("zero-offload-params: aio-block-size must be at "
                           "least 4096 and aio-queue-depth at least 1");
      return signalPassFailure();
    }
    Builder b(&getContext());
    if (!nvmePath.empty())
      step->func->setAttr(ZeroDialect::getNvmePathAttrName(),
                          b.getStringAttr(nvmePath));
    step->func->setAttr(
        ZeroDialect::getAioAttrName(),
        b.getDictionaryAttr(
            {b.getNamedAttr("block_size", b.getI64IntegerAttr(aioBlockSize)),
             b.getNamedAttr("queue_depth", b.getI64IntegerAttr(aioQueueDepth)),
             b.getNamedAttr("single_submit", b.getBoolAttr(aioSingleSubmit)),
             b.getNamedAttr("overlap_events",
                            b.getBoolAttr(aioOverlapEvents))}));
  }
};

} // namespace
