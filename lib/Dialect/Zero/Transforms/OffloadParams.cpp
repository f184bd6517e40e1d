//===- OffloadParams.cpp - zero-offload-params ----------------------------===//
//
// ZeRO-Infinity's parameter offload (DeepSpeed's `offload_param`, stage 3):
// the partitioned parameter shards live in host memory between steps, and
// each is swapped in for the all-gather that reads it.
//
// - Every partitioned (not persistent) parameter argument moves to the
//   target space, and with it the step's result that updates it. With NVMe,
//   as DeepSpeed's `offload_param.max_in_cpu`, the shards of the sub-groups
//   that fit a flat CPU buffer of `max-in-cpu` elements, in order, stay in
//   host memory.
// - A gather (or any other device op) that reads offloaded shards gets them
//   from one swap-in per op, started right after the previous parameter
//   gather of its block starts (one gather ahead, as the gathers themselves
//   are prefetched) and waited for right before it.
// - The tiles of a shard larger than sub-group-size that the off-device
//   optimizer updates read slices of the shard in host memory (of one copy
//   read from NVMe), not slices of a copy swapped in for each.
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

#include "ScheduleUtils.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROOFFLOADPARAMSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

/// The op a swap-in for `user` starts after: for a parameter gather, the
/// previous gather of its block (one bucket ahead, as the gathers are
/// prefetched), else the block's start (null); for any other op, the op
/// before it (the shard is needed only there).
static Operation *getPrefetchPoint(Operation *user) {
  if (!isa<AllGatherStartOp>(user))
    return user->getPrevNode();
  for (Operation *op = user->getPrevNode(); op; op = op->getPrevNode())
    if (isa<AllGatherStartOp>(op))
      return op;
  return nullptr;
}

/// Folds `swap_out_start %x` of a tensor already in its target space: the
/// wait's result is %x.
static void foldRedundantSwapOut(SwapOutStartOp start) {
  WaitOp wait = AsyncStartOpInterface(start).getWait();
  if (!wait)
    return;
  for (auto [operand, result] :
       llvm::zip(start.getTensors(), wait.getResults()))
    result.replaceAllUsesWith(operand);
  wait.erase();
  start.erase();
}

namespace {

/// The buffers of DeepSpeed's NVMe parameter swapper (offload_param's
/// buffer_count and buffer_size): none for host memory.
struct SwapBuffers {
  int64_t count;
  int64_t size;
};

class ParamOffloader {
public:
  /// With NVMe, the sub-groups of `subGroupSize` shard elements whose
  /// elements fit `maxInHost` stay in host memory.
  ParamOffloader(func::FuncOp func, MemorySpace target, int64_t subGroupSize,
                 int64_t maxInHost, std::optional<SwapBuffers> buffers)
      : func(func), block(func.front()), target(target),
        subGroupSize(subGroupSize), maxInHost(maxInHost), buffers(buffers) {}

  /// Whether some shard lives on NVMe (after run).
  bool usesNvme() const { return numNvmeShards > 0; }

  LogicalResult run();

private:
  /// Swaps in the offloaded operands of device op `user`, one gather ahead
  /// when `prefetch`, else right before it.
  void swapInFor(Operation *user, ArrayRef<OpOperand *> operands,
                 bool prefetch);
  /// Checks each swap-in against the swapper's buffers and tells whether
  /// the one of `user` may start one gather ahead.
  FailureOr<bool> fitsBuffers(
      Operation *user,
      const llvm::MapVector<Operation *, SmallVector<OpOperand *>> &uses);
  /// The tiles of an offloaded shard that only the off-device optimizer
  /// reads (views swapped out to host memory) become views in host memory.
  void viewTilesOffDevice(BlockArgument shard);
  /// Makes the step return result `index` in `space`.
  void returnOffDevice(unsigned index, MemorySpace space);

  func::FuncOp func;
  Block &block;
  MemorySpace target;
  int64_t subGroupSize;
  int64_t maxInHost;
  std::optional<SwapBuffers> buffers;
  int64_t numNvmeShards = 0;
  /// The views of viewTilesOffDevice.
  llvm::SmallPtrSet<Operation *, 16> offDeviceViews;
  /// The last swap-in started after an op (null: a block's start).
  llvm::DenseMap<std::pair<Block *, Operation *>, Operation *> lastSwapIn;
};

/// Elements of the shards `user` reads from NVMe (through the swapper's
/// buffers).
static int64_t getSwappedElements(
    Operation *user,
    const llvm::MapVector<Operation *, SmallVector<OpOperand *>> &uses) {
  int64_t total = 0;
  for (OpOperand *operand : uses.lookup(user))
    if (isInMemorySpace(operand->get(), MemorySpace::Nvme))
      total += getNumElements(operand->get().getType());
  return total;
}

FailureOr<bool> ParamOffloader::fitsBuffers(
    Operation *user,
    const llvm::MapVector<Operation *, SmallVector<OpOperand *>> &uses) {
  if (!buffers)
    return true;
  for (OpOperand *operand : uses.lookup(user)) {
    int64_t numel = getNumElements(operand->get().getType());
    if (isInMemorySpace(operand->get(), MemorySpace::Nvme) &&
        numel > buffers->size)
      return user->emitOpError("reads the shard of '")
             << getShardName(operand->get()) << "' (" << numel
             << " elements) from NVMe, more than one swap buffer holds "
                "(offload_param.buffer_size = "
             << buffers->size << ")";
  }
  // The buffers as one pool of buffer_count x buffer_size elements.
  int64_t pool = buffers->count * buffers->size;
  int64_t needed = getSwappedElements(user, uses);
  if (needed > pool)
    return user->emitOpError("swaps in ")
           << needed << " elements at once, more than the swap buffers hold "
           << "(offload_param.buffer_count x buffer_size = " << pool << ")";
  // One gather ahead, the previous gather's shards are still in the pool:
  // it reads them until its wait.
  Operation *previous = getPrefetchPoint(user);
  int64_t inFlight = previous && isa<AllGatherStartOp>(previous)
                         ? getSwappedElements(previous, uses)
                         : 0;
  return inFlight + needed <= pool;
}

void ParamOffloader::swapInFor(Operation *user, ArrayRef<OpOperand *> operands,
                               bool prefetch) {
  // After the swap-ins already started there, so that they start in the
  // order their users need them.
  OpBuilder b(func.getContext());
  Operation *previous = prefetch ? getPrefetchPoint(user) : user->getPrevNode();
  auto key = std::make_pair(user->getBlock(), previous);
  if (Operation *last = lastSwapIn.lookup(key))
    b.setInsertionPointAfter(last);
  else if (previous)
    b.setInsertionPointAfter(previous);
  else
    b.setInsertionPointToStart(user->getBlock());
  SmallVector<Value> tensors;
  for (OpOperand *operand : operands)
    tensors.push_back(operand->get());
  auto start = SwapInStartOp::create(
      b, user->getLoc(), HandleType::get(func.getContext()), tensors);
  lastSwapIn[key] = start;
  b.setInsertionPoint(user);
  auto wait = WaitOp::create(b, user->getLoc(), start);
  for (auto [operand, onDevice] : llvm::zip(operands, wait.getResults()))
    operand->set(onDevice);
}

void ParamOffloader::returnOffDevice(unsigned index, MemorySpace space) {
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  OpOperand &operand = ret->getOpOperand(index);
  Value value = operand.get();
  if (isInMemorySpace(value, space))
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
      if (isInMemorySpace(value, space))
        return;
    }
  }
  OpBuilder b(func.getContext());
  if (Operation *def = value.getDefiningOp())
    b.setInsertionPointAfter(getStepLevelOp(def));
  else
    b.setInsertionPointToStart(&block);
  auto start = SwapOutStartOp::create(b, value.getLoc(), value, space);
  b.setInsertionPoint(ret);
  operand.set(WaitOp::create(b, value.getLoc(), start).getResult(0));
}

void ParamOffloader::viewTilesOffDevice(BlockArgument shard) {
  auto onlySwappedToHost = [](Operation *view) {
    return llvm::all_of(view->getResult(0).getUsers(), [](Operation *user) {
      auto swapOut = dyn_cast<SwapOutStartOp>(user);
      return swapOut && swapOut.getTarget() == MemorySpace::Host &&
             swapOut.getTensors().size() == 1;
    });
  };
  SmallVector<Operation *> views;
  for (Operation *user : shard.getUsers())
    if (isa<tensor::ExtractSliceOp>(user) && onlySwappedToHost(user))
      views.push_back(user);
  if (views.empty())
    return;
  // A shard on NVMe is read into host memory once, before its first tile.
  Value source = shard;
  if (isInMemorySpace(shard, MemorySpace::Nvme)) {
    Operation *first = views.front();
    for (Operation *view : views)
      if (getStepLevelOp(view)->isBeforeInBlock(getStepLevelOp(first)))
        first = view;
    OpBuilder b(getStepLevelOp(first));
    auto read =
        SwapOutStartOp::create(b, first->getLoc(), shard, MemorySpace::Host);
    source = WaitOp::create(b, first->getLoc(), read).getResult(0);
  }
  for (Operation *view : views) {
    offDeviceViews.insert(view);
    view->setOperand(0, source);
    setMemorySpace(view->getResult(0), MemorySpace::Host);
    for (Operation *user :
         llvm::make_early_inc_range(view->getResult(0).getUsers()))
      foldRedundantSwapOut(cast<SwapOutStartOp>(user));
  }
}

LogicalResult ParamOffloader::run() {
  // The shards to offload, by name, and where each goes: the step's result
  // of the same name is their update.
  llvm::StringMap<MemorySpace> offloaded;
  SmallVector<ParamArg> shards;
  for (ParamArg &param : getParamArgs(func)) {
    // A tensor has one encoding: a shard stored quantized keeps the
    // device's.
    if (QuantizedAttr::ofType(param.arg.getType()))
      return emitError(param.arg.getLoc(), "zero-offload-params: the shard "
                                           "of '")
             << param.name
             << "' is stored quantized (quantize-frozen-weights-block-size), "
                "which keeps it in device memory; offload_param and "
                "zero_quantized_nontrainable_weights exclude each other";
    if (!param.persistent && isInMemorySpace(param.arg, MemorySpace::Device))
      shards.push_back(param);
  }
  // DeepSpeed's sub-groups: consecutive shards, each closed by the shard
  // that brings it to sub-group-size elements. The flat CPU buffer holds
  // the first max_in_cpu elements of them: the sub-groups that end within
  // it stay in host memory, the others (and every later one) go to NVMe.
  int64_t elements = 0;
  for (size_t first = 0; first < shards.size();) {
    size_t end = first;
    int64_t groupElements = 0;
    while (end < shards.size() && groupElements < subGroupSize)
      groupElements += getNumElements(shards[end++].arg.getType());
    elements += groupElements;
    MemorySpace space = target == MemorySpace::Nvme && elements <= maxInHost
                            ? MemorySpace::Host
                            : target;
    for (; first < end; ++first) {
      numNvmeShards += space == MemorySpace::Nvme;
      setMemorySpace(shards[first].arg, space);
      offloaded[shards[first].name] = space;
    }
  }

  for (const ParamArg &param : getParamArgs(func))
    if (offloaded.count(param.name))
      viewTilesOffDevice(param.arg);

  // Device users, each with all of its offloaded operands, so that a bucket
  // swaps in at once.
  llvm::MapVector<Operation *, SmallVector<OpOperand *>> deviceUses;
  SmallVector<SwapOutStartOp> redundant;
  for (const ParamArg &param : getParamArgs(func)) {
    if (!offloaded.count(param.name))
      continue;
    for (OpOperand &use : param.arg.getUses()) {
      Operation *user = use.getOwner();
      // A swap-out of the shard (the off-device optimizer reads it) now
      // starts where the shard lives: redundant into the same space, from
      // NVMe straight to host memory otherwise.
      if (auto swapOut = dyn_cast<SwapOutStartOp>(user)) {
        if (isInMemorySpace(param.arg, swapOut.getTarget()))
          redundant.push_back(swapOut);
      } else if (!isa<func::ReturnOp>(user) && !offDeviceViews.contains(user)) {
        deviceUses[user].push_back(&use);
      }
    }
  }
  for (SwapOutStartOp swapOut : redundant)
    foldRedundantSwapOut(swapOut);
  SmallVector<bool> prefetch;
  for (auto &[user, operands] : deviceUses) {
    FailureOr<bool> fits = fitsBuffers(user, deviceUses);
    if (failed(fits))
      return failure();
    prefetch.push_back(*fits);
  }
  for (auto [entry, ahead] : llvm::zip(deviceUses, prefetch))
    swapInFor(entry.first, entry.second, ahead);

  StringRef paramAttr = ZeroDialect::getParamAttrName();
  StringRef stateAttr = ZeroDialect::getStateAttrName();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, paramAttr);
    if (!name || func.getResultAttr(i, stateAttr))
      continue;
    auto it = offloaded.find(name.getValue());
    if (it != offloaded.end())
      returnOffDevice(i, it->second);
  }
  updateFunctionType(func);
  return success();
}

struct ZeroOffloadParamsPass
    : public zero::impl::ZeroOffloadParamsPassBase<ZeroOffloadParamsPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<MemorySpace> parsed;
    if (failed(
            parseOffloadDevice(device, getOperation(), getArgument(), parsed)))
      return signalPassFailure();
    if (!parsed)
      return;
    MemorySpace space = *parsed;
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
    std::optional<SwapBuffers> buffers;
    if (space == MemorySpace::Nvme) {
      if (bufferCount < 1 || bufferSize < 1) {
        getOperation().emitError("zero-offload-params: buffer-count and "
                                 "buffer-size must be at least 1, got ")
            << static_cast<int64_t>(bufferCount) << " and "
            << static_cast<int64_t>(bufferSize);
        return signalPassFailure();
      }
      buffers = SwapBuffers{bufferCount, bufferSize};
    }
    ParamOffloader offloader(step->func, space, subGroupSize, maxInCpu,
                             buffers);
    if (failed(offloader.run()))
      return signalPassFailure();
    if (!offloader.usesNvme())
      return;
    if (failed(recordNvmeSettings(
            step->func, getArgument(), nvmePath,
            {aioBlockSize, aioQueueDepth, aioSingleSubmit, aioOverlapEvents})))
      return signalPassFailure();
  }
};

} // namespace
