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

int64_t zero::getStepTripCount(Operation *op) {
  // The step has at most one loop (the plan refuses a second).
  if (auto loop = op->getParentOfType<scf::ForOp>())
    if (std::optional<APInt> count = loop.getStaticTripCount())
      return count->getSExtValue();
  return 1;
}

RingCrossing zero::getRingCrossing(ArrayRef<int64_t> grid,
                                   ArrayRef<int16_t> axes, int64_t rank) {
  SmallVector<int16_t, 2> all;
  if (axes.empty()) {
    for (int16_t axis = 0; axis < static_cast<int16_t>(grid.size()); ++axis)
      all.push_back(axis);
    axes = all;
  }
  // Row-major coordinates, and the rank's index in its group.
  SmallVector<int64_t, 2> coords(grid.size());
  for (int64_t axis = grid.size() - 1, rest = rank; axis >= 0; --axis) {
    coords[axis] = rest % grid[axis];
    rest /= grid[axis];
  }
  int64_t size = getGroupSize(grid, axes), index = 0;
  for (int16_t axis : axes)
    index = index * grid[axis] + coords[axis];
  auto rankAt = [&](int64_t groupIndex) {
    SmallVector<int64_t, 2> at(coords);
    for (int16_t axis : llvm::reverse(axes)) {
      at[axis] = groupIndex % grid[axis];
      groupIndex /= grid[axis];
    }
    int64_t linear = 0;
    for (auto [axis, coord] : llvm::enumerate(at))
      linear = linear * grid[axis] + coord;
    return linear;
  };
  // The last axis is a node's ranks (the whole world on a one-axis grid).
  const int64_t ranksPerNode = grid.back();
  auto node = [&](int64_t r) { return r / ranksPerNode; };
  RingCrossing crossing;
  crossing.sendsAcross = node(rankAt((index + 1) % size)) != node(rank);
  crossing.receivesAcross =
      node(rankAt((index + size - 1) % size)) != node(rank);
  return crossing;
}

FailureOr<CommunicationVolume>
zero::computeCommunicationVolume(func::FuncOp func, int64_t worldSize) {
  SmallVector<int64_t, 2> grid =
      getProcessGrid(func).value_or(SmallVector<int64_t, 2>{worldSize});
  const int64_t ranksPerNode = grid.back();
  SmallVector<CommunicationVolume::Crossing> crossings(ranksPerNode);
  bool crossingOverflow = false;
  // `sum += bytes` of a crossing, noting an overflow (or unknown bytes).
  auto addAcross = [&](int64_t &sum, std::optional<int64_t> bytes) {
    std::optional<int64_t> total =
        bytes ? llvm::checkedAdd(sum, *bytes) : std::nullopt;
    crossingOverflow |= !total;
    if (total)
      sum = *total;
  };
  // What of `ringBytes` (per run of the op) crosses nodes, per local rank.
  auto addCrossing = [&](Operation *op, std::optional<ArrayRef<int16_t>> axes,
                         int64_t CommunicationVolume::Crossing::*kind,
                         std::optional<int64_t> ringBytes) {
    std::optional<int64_t> bytes =
        ringBytes ? llvm::checkedMul(*ringBytes, getStepTripCount(op))
                  : std::nullopt;
    for (int64_t local = 0; local < ranksPerNode; ++local) {
      RingCrossing crossing =
          getRingCrossing(grid, axes.value_or(ArrayRef<int16_t>()), local);
      if (crossing.sendsAcross)
        addAcross(crossings[local].*kind, bytes);
      if (crossing.receivesAcross)
        addAcross(crossings[local].received, bytes);
    }
  };
  std::optional<int64_t> allGather = 0, reduceScatter = 0, allReduce = 0,
                         sentAllGather = 0, sentReduceScatter = 0,
                         sentAllReduce = 0, hostToDevice = 0, deviceToHost = 0,
                         nvmeRead = 0, nvmeWrite = 0;
  // A ring moves (N-1)/N of the padded bucket through every rank.
  // Returns the op's ring bytes.
  auto addRing = [&](std::optional<int64_t> &sent,
                     std::optional<int64_t> paddedBytes, int64_t ranks,
                     int64_t passes) -> std::optional<int64_t> {
    std::optional<int64_t> perRank =
        paddedBytes ? llvm::checkedMul(passes, *paddedBytes / ranks)
                    : std::nullopt;
    std::optional<int64_t> ring =
        perRank ? llvm::checkedMul(ranks - 1, *perRank) : std::nullopt;
    if (!ring)
      sent = std::nullopt;
    else
      addCheckedProduct(sent, *ring);
    return ring;
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
  // A hop over one axis of a multi-axis grid: its peers are all on other
  // nodes for any axis but the last (a node's ranks), all on this node for
  // that one.
  auto hopCrossesNodes = [&](int16_t axis) {
    return grid.size() > 1 && axis != static_cast<int16_t>(grid.size()) - 1;
  };
  // The bytes a collective run hop by hop sends in each hop (each axis'
  // peers receive as much), and those of hops across nodes, per local rank.
  auto addHops = [&](Operation *op, ArrayRef<std::pair<int16_t, int64_t>> hops,
                     std::optional<int64_t> &sent,
                     int64_t CommunicationVolume::Crossing::*kind) {
    const int64_t times = getStepTripCount(op);
    for (auto [axis, bytes] : hops) {
      if (sent)
        addCheckedProduct(sent, bytes);
      if (!hopCrossesNodes(axis))
        continue;
      std::optional<int64_t> perStep = llvm::checkedMul(bytes, times);
      for (CommunicationVolume::Crossing &crossing : crossings) {
        addAcross(crossing.*kind, perStep);
        addAcross(crossing.received, perStep);
      }
    }
  };
  // qgZ: the packed chunks of every rank (G * C) are what the paper's
  // volume counts; each hop's all-to-all sends its bytes straight to its
  // peers.
  auto countQuantizedReduceScatter = [&](ReduceScatterStartOp scatter) {
    std::optional<int64_t> chunk = scatter.getQuantizedChunkBytes();
    std::optional<SmallVector<std::pair<int16_t, int64_t>, 2>> hops =
        scatter.getQuantizedHopBytes();
    if (!chunk || !hops) {
      reduceScatter = sentReduceScatter = std::nullopt;
      return;
    }
    if (reduceScatter)
      addCheckedProduct(reduceScatter, *chunk, ranksOf(scatter.getLayouts()));
    addHops(scatter, *hops, sentReduceScatter,
            &CommunicationVolume::Crossing::reduceScatter);
  };
  // MiCS's hierarchical gather: what arrives is the flat gather's; each
  // hop is a ring within its axis' ranks.
  auto countHierarchicalGather = [&](AllGatherStartOp gather,
                                     std::optional<int64_t> arrives) {
    std::optional<SmallVector<std::pair<int16_t, int64_t>, 2>> hops =
        gather.getHierarchicalHopBytes();
    if (!arrives || !hops) {
      allGather = sentAllGather = std::nullopt;
      return;
    }
    addCheckedProduct(allGather, *arrives);
    addHops(gather, *hops, sentAllGather,
            &CommunicationVolume::Crossing::allGather);
  };
  auto count = [&](Operation *op) {
    if (auto gather = dyn_cast<AllGatherStartOp>(op)) {
      // What arrives: every rank's packed block (qwZ), or the full tensors
      // of the layouts, padding dropped.
      const int64_t ranks = ranksOf(gather.getLayouts());
      std::optional<int64_t> arrives = 0;
      if (gather.getQuantizeBlockSize()) {
        std::optional<int64_t> packed = gather.getQuantizedBytesPerRank();
        arrives = packed ? llvm::checkedMul(*packed, ranks) : std::nullopt;
      } else {
        for (auto [shard, layout] :
             llvm::zip(gather.getShards(), gather.getLayouts()))
          addCheckedProduct(arrives, cast<LayoutAttr>(layout).getNumel(),
                            getElementBytes(shard));
      }
      if (gather.getHierarchical()) {
        countHierarchicalGather(gather, arrives);
        return;
      }
      if (arrives)
        addCheckedProduct(allGather, *arrives);
      else
        allGather = std::nullopt;
      // The ring moves the packed blocks, or the padded shards.
      std::optional<int64_t> ringBytes =
          gather.getQuantizeBlockSize()
              ? arrives
              : paddedBytesOf(gather.getShards(), gather.getLayouts());
      addCrossing(op, gather.getGridAxes(),
                  &CommunicationVolume::Crossing::allGather,
                  addRing(sentAllGather, ringBytes, ranks, 1));
    } else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op)) {
      if (scatter.getQuantizeBlockSize()) {
        countQuantizedReduceScatter(scatter);
        return;
      }
      for (Value tensor : scatter.getTensors())
        addBytesOf(reduceScatter, tensor);
      addCrossing(
          op, scatter.getGridAxes(),
          &CommunicationVolume::Crossing::reduceScatter,
          addRing(sentReduceScatter,
                  paddedBytesOf(scatter.getTensors(), scatter.getLayouts()),
                  ranksOf(scatter.getLayouts()), 1));
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
      int64_t ranks = std::max<int64_t>(
          getGroupSize(grid,
                       reduce.getGridAxes().value_or(ArrayRef<int16_t>())),
          1);
      addCrossing(op, reduce.getGridAxes(),
                  &CommunicationVolume::Crossing::allReduce,
                  addRing(sentAllReduce,
                          llvm::checkedMul(
                              llvm::divideCeilSigned(*bytes, ranks), ranks),
                          ranks, 2));
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
    int64_t times = getStepTripCount(op);
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
      !deviceToHost || !nvmeRead || !nvmeWrite || crossingOverflow)
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
  volume.ranksPerNode = ranksPerNode;
  volume.interNodeByLocalRank = std::move(crossings);
  volume.hostToDevice = *hostToDevice;
  volume.deviceToHost = *deviceToHost;
  volume.nvmeRead = *nvmeRead;
  volume.nvmeWrite = *nvmeWrite;
  return volume;
}
