//===- InferSegments.cpp - zero-infer-segments ----------------------------===//
//
// Finds the segments of activation checkpointing in a step whose IR does not
// mark them. Checkpointing keeps what crosses a segment's boundary and
// recomputes what lives inside, so the boundaries belong where the fewest
// activations cross: in a transformer, the residual stream alone between
// one residual add and the next block.
//
// Only activations count: what the step computes from its data. Parameters,
// values computed from them alone (casts, transposes of weights) and
// constants (a causal mask) are available to a recomputation anyway.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "zero/Analysis/StepLiveness.h"
#include "llvm/ADT/DenseMap.h"

#include <limits>

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROINFERSEGMENTSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The bytes of `value` if it is a statically shaped tensor, else 0.
int64_t getBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return 0;
  FailureOr<int64_t> bytes = getTensorByteSize(type);
  return succeeded(bytes) ? *bytes : 0;
}

/// Marks the segments of `func`'s forward pass `forwardOps` (ops of its
/// body). With `keptOnHost` (cpu_checkpointing) what segments keep waits in
/// host memory: only the recomputation counts against the device.
void markSegments(func::FuncOp func,
                  const llvm::DenseSet<Operation *> &forwardOps,
                  bool keptOnHost) {
  Block &body = func.getBody().front();
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, size_t> position;
  for (Operation &op : body)
    if (forwardOps.contains(&op)) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
  if (ops.size() < 2)
    return;

  // Point p lies between forward ops p and p + 1. An activation defined by
  // op i and last read by forward op j > i crosses points i .. j - 1.
  struct Activation {
    size_t def, lastForwardUse;
    int64_t bytes;
    bool readByBackward;
  };
  SmallVector<Activation> activations;
  llvm::DenseSet<Value> fromData;
  for (BlockArgument arg : body.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), ZeroDialect::getDataAttrName()))
      fromData.insert(arg);
  for (auto [i, op] : llvm::enumerate(ops)) {
    bool readsData = false;
    forEachInput(op,
                 [&](Value value) { readsData |= fromData.contains(value); });
    if (!readsData)
      continue;
    for (Value result : op->getResults()) {
      fromData.insert(result);
      if (!isa<RankedTensorType>(result.getType()))
        continue;
      Activation activation{i, i, getBytes(result), false};
      for (Operation *user : result.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        auto it = position.find(top);
        if (it != position.end())
          activation.lastForwardUse =
              std::max(activation.lastForwardUse, it->second);
        else if (top != body.getTerminator())
          activation.readByBackward = true;
      }
      activations.push_back(activation);
    }
  }
  // The points inside the forward pass: from the first activation's
  // definition to the last forward read of one.
  size_t begin = ops.size(), end = 0;
  for (const Activation &activation : activations)
    if (activation.lastForwardUse > activation.def) {
      begin = std::min(begin, activation.def);
      end = std::max(end, activation.lastForwardUse);
    }
  if (begin >= end)
    return;
  // How many activations cross each point, but for those that cross more
  // than half of them (labels on their way to the loss, a padding mask):
  // they cross every cut alike and would hide the others. The crossing set
  // changes at the ops that define or last read a counted one.
  SmallVector<int64_t> delta(ops.size() + 1, 0);
  SmallVector<bool> changes(ops.size(), false);
  for (const Activation &activation : activations) {
    if (activation.lastForwardUse == activation.def ||
        2 * (activation.lastForwardUse - activation.def) > end - begin)
      continue;
    ++delta[activation.def];
    --delta[activation.lastForwardUse];
    changes[activation.def] = changes[activation.lastForwardUse] = true;
  }
  SmallVector<int64_t> crossing(ops.size() - 1, -1);
  int64_t running = 0, fewest = -1;
  for (size_t p = 0; p + 1 < ops.size(); ++p) {
    running += delta[p];
    if (p < begin || p >= end)
      continue;
    crossing[p] = running;
    if (fewest < 0 || running < fewest)
      fewest = running;
  }

  // The cuts: the first point of each run of fewest-crossed points with the
  // same crossing activations. Pieces lie between consecutive cuts.
  SmallVector<size_t> cuts;
  for (size_t p = 0; p < crossing.size(); ++p)
    if (crossing[p] == fewest &&
        (p == 0 || crossing[p - 1] != fewest || changes[p]))
      cuts.push_back(p);
  if (cuts.size() < 2)
    return;
  size_t numPieces = cuts.size() - 1;

  // Each piece's activations: what crosses the cut that ends it (kept for
  // the next segment's recomputation if that cut ends a segment, recomputed
  // otherwise) and what the backward pass reads of the rest (recomputed
  // when the segment is, kept otherwise).
  SmallVector<int64_t> crossingBytes(numPieces, 0), innerBytes(numPieces, 0);
  for (const Activation &activation : activations) {
    // The piece of op i ends at the first cut at or after i.
    auto cut = llvm::lower_bound(cuts, activation.def);
    if (cut == cuts.begin() || cut == cuts.end())
      continue; // in no piece
    size_t piece = (cut - cuts.begin()) - 1;
    if (activation.lastForwardUse > *cut)
      crossingBytes[piece] += activation.bytes;
    else if (activation.readByBackward)
      innerBytes[piece] += activation.bytes;
  }
  // Segments of g consecutive pieces, the first of them `offset` < g
  // pieces long (none: g). Across the forward pass each segment keeps what
  // crosses its end; in the backward pass one segment at a time is
  // recomputed. The grouping with the least of the two together on the
  // device wins, the smaller g first: Chen et al.'s sqrt(n) segments for a
  // plain chain, one transformer layer when a layer's insides outweigh the
  // other layers' inputs.
  auto segmentOf = [](size_t piece, size_t g, size_t offset) {
    return (piece + (g - offset) % g) / g;
  };
  constexpr size_t kMaxPiecesPerSegment = 32;
  size_t best = 1, bestOffset = 0;
  int64_t bestCost = std::numeric_limits<int64_t>::max();
  for (size_t g = 1; g <= std::min(numPieces, kMaxPiecesPerSegment); ++g) {
    for (size_t offset = 0; offset < g; ++offset) {
      int64_t kept = 0, recomputed = 0, inside = 0;
      for (size_t piece = 0; piece < numPieces; ++piece) {
        inside += innerBytes[piece];
        bool ends = piece + 1 == numPieces || segmentOf(piece + 1, g, offset) !=
                                                  segmentOf(piece, g, offset);
        if (!ends) {
          inside += crossingBytes[piece];
          continue;
        }
        kept += crossingBytes[piece];
        recomputed = std::max(recomputed, inside);
        inside = 0;
      }
      int64_t cost = keptOnHost ? recomputed : kept + recomputed;
      if (cost < bestCost) {
        bestCost = cost;
        best = g;
        bestOffset = offset;
      }
    }
  }
  // The last segment, which holds the head and the loss, is left alone:
  // the backward pass starts right after it, so recomputing it would free
  // nothing.
  size_t lastSegment = segmentOf(numPieces - 1, best, bestOffset);
  MLIRContext *context = func.getContext();
  Type i64 = IntegerType::get(context, 64);
  for (size_t piece = 0;
       piece < numPieces && segmentOf(piece, best, bestOffset) < lastSegment;
       ++piece) {
    auto id = IntegerAttr::get(
        i64, static_cast<int64_t>(segmentOf(piece, best, bestOffset)));
    for (size_t i = cuts[piece] + 1; i <= cuts[piece + 1]; ++i)
      ops[i]->setAttr(ZeroDialect::getSegmentAttrName(), id);
  }
}

struct ZeroInferSegmentsPass
    : public zero::impl::ZeroInferSegmentsPassBase<ZeroInferSegmentsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> func = lookupTrainStep(getOperation(), entry);
    if (failed(func))
      return signalPassFailure();
    StringRef segmentAttr = ZeroDialect::getSegmentAttrName();
    bool marked = func->walk([&](Operation *op) {
                        return op->hasAttr(segmentAttr)
                                   ? WalkResult::interrupt()
                                   : WalkResult::advance();
                      })
                      .wasInterrupted();
    // zero-checkpoint-activations reports a step of several blocks.
    if (marked || !func->getBody().hasOneBlock())
      return;
    FailureOr<ForwardPass> forward = getForwardPass(*func, getArgument());
    if (failed(forward))
      return signalPassFailure();
    markSegments(*func, forward->ops, cpuCheckpointing);
  }
};

} // namespace
