//===- CommunicationVolume.cpp - bytes a rank step moves ------------------===//
//
// Walks the step's collectives and swaps; one inside the micro-step loop
// counts once per iteration.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/CommunicationVolume.h"

#include "zero/Analysis/StepLiveness.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <array>

using namespace mlir;
using namespace mlir::zero;

void zero::addCheckedProduct(std::optional<int64_t> &sum, int64_t a,
                             int64_t b) {
  std::optional<int64_t> product = llvm::checkedMul(a, b);
  sum = sum && product ? llvm::checkedAdd(*sum, *product) : std::nullopt;
}

/// How many times `op` runs per step: the trip count of the micro-step loop
/// around it, if any.
static int64_t getTripCount(Operation *op) {
  // The step has at most one loop (the plan refuses a second).
  if (auto loop = op->getParentOfType<scf::ForOp>())
    if (std::optional<APInt> count = loop.getStaticTripCount())
      return count->getSExtValue();
  return 1;
}

NodeSplit zero::splitRingBytes(int64_t ringBytes, int64_t worldSize,
                               int64_t ranksPerNode, int64_t localRank) {
  NodeSplit split;
  const bool severalNodes = ranksPerNode < worldSize;
  (severalNodes && localRank == ranksPerNode - 1 ? split.interSent
                                                 : split.intraSent) = ringBytes;
  (severalNodes && localRank == 0 ? split.interReceived : split.intraReceived) =
      ringBytes;
  return split;
}

FailureOr<CommunicationVolume>
zero::computeCommunicationVolume(func::FuncOp func, int64_t worldSize) {
  std::optional<int64_t> allGather = 0, reduceScatter = 0, allReduce = 0,
                         sentAllGather = 0, sentReduceScatter = 0,
                         sentAllReduce = 0, hostToDevice = 0, deviceToHost = 0,
                         nvmeRead = 0, nvmeWrite = 0;
  // A ring moves (N-1)/N of the padded bucket through every rank.
  auto addRing = [&](std::optional<int64_t> &sent,
                     std::optional<int64_t> paddedBytes, int64_t ranks,
                     int64_t passes) {
    std::optional<int64_t> perRank =
        paddedBytes ? llvm::checkedMul(passes, *paddedBytes / ranks)
                    : std::nullopt;
    if (!perRank)
      sent = std::nullopt;
    else
      addCheckedProduct(sent, ranks - 1, *perRank);
  };
  auto paddedBytesOf = [](ValueRange tensors, ArrayAttr layouts) {
    std::optional<int64_t> bytes = 0;
    for (auto [tensor, attr] : llvm::zip(tensors, layouts))
      addCheckedProduct(bytes, cast<LayoutAttr>(attr).getPaddedNumel(),
                        getElementBytes(tensor));
    return bytes;
  };
  auto ranksOf = [](ArrayAttr layouts) {
    return layouts.empty() ? 1 : cast<LayoutAttr>(layouts[0]).getWorldSize();
  };
  auto addBytesOf = [](std::optional<int64_t> &sum, Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape() ||
        failed(getElementByteWidth(type.getElementType())))
      return;
    FailureOr<int64_t> size = getTensorByteSize(type);
    if (failed(size))
      sum = std::nullopt;
    else
      addCheckedProduct(sum, *size);
  };
  auto count = [&](Operation *op) {
    if (auto gather = dyn_cast<AllGatherStartOp>(op)) {
      // The full tensors of the layouts, padding dropped.
      for (auto [shard, layout] :
           llvm::zip(gather.getShards(), gather.getLayouts())) {
        auto type = cast<RankedTensorType>(shard.getType());
        FailureOr<int64_t> width = getElementByteWidth(type.getElementType());
        if (succeeded(width))
          addCheckedProduct(allGather, cast<LayoutAttr>(layout).getNumel(),
                            *width);
      }
      addRing(sentAllGather,
              paddedBytesOf(gather.getShards(), gather.getLayouts()),
              ranksOf(gather.getLayouts()), 1);
    } else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op)) {
      for (Value tensor : scatter.getTensors())
        addBytesOf(reduceScatter, tensor);
      addRing(sentReduceScatter,
              paddedBytesOf(scatter.getTensors(), scatter.getLayouts()),
              ranksOf(scatter.getLayouts()), 1);
    } else if (auto reduce = dyn_cast<AllReduceStartOp>(op)) {
      // A reduce-scatter followed by an all-gather.
      std::optional<int64_t> bytes = 0;
      for (Value tensor : reduce.getTensors())
        addBytesOf(bytes, tensor);
      if (!bytes) {
        allReduce = std::nullopt;
        return;
      }
      addCheckedProduct(allReduce, 2, *bytes);
      // The ring cuts the bucket into N equal chunks: P rounded up to a
      // multiple of N.
      int64_t ranks = std::max<int64_t>(worldSize, 1);
      addRing(sentAllReduce,
              llvm::checkedMul(llvm::divideCeilSigned(*bytes, ranks), ranks),
              ranks, 2);
    } else if (isa<SwapOutStartOp, SwapInStartOp>(op)) {
      auto swapOut = dyn_cast<SwapOutStartOp>(op);
      for (Value tensor : op->getOperands()) {
        std::optional<MemorySpace> from =
            getMemorySpace(cast<RankedTensorType>(tensor.getType()));
        MemorySpace to = swapOut ? swapOut.getTarget() : MemorySpace::Device;
        if (from == MemorySpace::Device)
          addBytesOf(deviceToHost, tensor);
        if (to == MemorySpace::Device)
          addBytesOf(hostToDevice, tensor);
        if (from == MemorySpace::Nvme)
          addBytesOf(nvmeRead, tensor);
        if (to == MemorySpace::Nvme)
          addBytesOf(nvmeWrite, tensor);
      }
    }
  };
  // A collective of the micro-step loop runs once per iteration.
  func.walk([&](Operation *op) {
    std::array<std::optional<int64_t> *, 10> sums{
        &allGather,         &reduceScatter, &allReduce,    &sentAllGather,
        &sentReduceScatter, &sentAllReduce, &hostToDevice, &deviceToHost,
        &nvmeRead,          &nvmeWrite};
    std::array<std::optional<int64_t>, 10> before;
    for (auto [sum, old] : llvm::zip(sums, before))
      old = *sum;
    count(op);
    int64_t times = getTripCount(op);
    if (times == 1)
      return;
    for (auto [sum, old] : llvm::zip(sums, before)) {
      if (!*sum || !old)
        continue;
      std::optional<int64_t> repeated = *old;
      addCheckedProduct(repeated, **sum - *old, times);
      *sum = repeated;
    }
  });
  std::optional<int64_t> total = allGather;
  if (reduceScatter)
    addCheckedProduct(total, *reduceScatter);
  if (allReduce)
    addCheckedProduct(total, *allReduce);
  std::optional<int64_t> sent = sentAllGather;
  if (sentReduceScatter)
    addCheckedProduct(sent, *sentReduceScatter);
  else
    sent = std::nullopt;
  if (sentAllReduce)
    addCheckedProduct(sent, *sentAllReduce);
  else
    sent = std::nullopt;
  if (!total || !reduceScatter || !allReduce || !sent || !hostToDevice ||
      !deviceToHost || !nvmeRead || !nvmeWrite)
    return func.emitError("the communication volume of a step does not fit "
                          "int64 bytes");
  CommunicationVolume volume;
  volume.allGather = *allGather;
  volume.reduceScatter = *reduceScatter;
  volume.allReduce = *allReduce;
  volume.sent = volume.received = *sent;
  volume.sentAllGather = *sentAllGather;
  volume.sentReduceScatter = *sentReduceScatter;
  volume.sentAllReduce = *sentAllReduce;
  volume.hostToDevice = *hostToDevice;
  volume.deviceToHost = *deviceToHost;
  volume.nvmeRead = *nvmeRead;
  volume.nvmeWrite = *nvmeWrite;
  return volume;
}
