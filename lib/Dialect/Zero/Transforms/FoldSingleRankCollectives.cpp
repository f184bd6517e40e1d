//===- FoldSingleRankCollectives.cpp - zero-fold-single-rank-collectives --===//
//
// A collective over a group of one rank moves no byte: an all-gather's full
// tensor is the rank's only shard, a reduce-scatter's shard is the rank's
// full tensor (the sum and the average of one value are that value), an
// all-reduce yields its operands. Left in the step, each would still cost a
// result buffer, and a bucket of several tensors a staging buffer as well:
// at world size 1 a 10B-parameter GPT-2 planned 38 GiB of such buffers.
//
// At world size 1 this pass replaces every such collective and its wait by
// views of the operands (`tensor.expand_shape` from a shard to the full
// shape, `tensor.collapse_shape` from a full tensor to its shard), which the
// memory plan places in the operand's buffer and the runtime runs as no
// work. `zero.local_shard` folds the same way. A gathered tensor then aliases
// a shard that lives on, so it is dropped from its `zero.release`. Layouts
// padded beyond their element count keep their collective: the shard is not
// a view of the full tensor; so do gathers of shards stored quantized.
//
// Runs after the offload passes, which place their swaps around the
// collectives, and before the memory plan.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "ScheduleUtils.h"
#include "TensorUtils.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROFOLDSINGLERANKCOLLECTIVESPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

/// `value` as a tensor of `type`, the same elements in the same order: the
/// value itself, or a view between the full shape and the flat shard.
static Value reshapeView(OpBuilder &b, Location loc, Value value,
                         RankedTensorType type) {
  auto source = cast<RankedTensorType>(value.getType());
  if (source == type)
    return value;
  // One side is the flat shard; the groups are the full tensor's.
  int64_t fullRank = source.getRank() == 1 ? type.getRank() : source.getRank();
  SmallVector<ReassociationIndices> groups = getFlatReassociation(fullRank);
  if (source.getRank() < type.getRank())
    return tensor::ExpandShapeOp::create(b, loc, type, value, groups);
  return tensor::CollapseShapeOp::create(b, loc, type, value, groups);
}

/// True when `layout` is over one rank and pads nothing, so that the shard
/// holds exactly the full tensor's elements.
static bool isSingleUnpaddedRank(LayoutAttr layout) {
  return layout.getWorldSize() == 1 &&
         layout.getPaddedNumel() == layout.getNumel();
}

static bool isSingleUnpaddedRank(ArrayAttr layouts) {
  return llvm::all_of(layouts.getAsRange<LayoutAttr>(), [](LayoutAttr layout) {
    return isSingleUnpaddedRank(layout);
  });
}

namespace {

struct ZeroFoldSingleRankCollectivesPass
    : public zero::impl::ZeroFoldSingleRankCollectivesPassBase<
          ZeroFoldSingleRankCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<PartitionedTrainStep> step = lookupPartitionedTrainStep(
        getOperation(), entry, "zero-fold-single-rank-collectives");
    if (failed(step))
      return signalPassFailure();
    if (step->rank.worldSize != 1)
      return;
    func::FuncOp func = step->func;

    SmallVector<Operation *> candidates;
    func.walk([&](Operation *op) {
      if (isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp,
              LocalShardOp>(op))
        candidates.push_back(op);
    });
    // Gathered tensors that became views of shards: their releases go.
    SmallVector<Value> gathered;
    for (Operation *op : candidates) {
      if (auto shard = dyn_cast<LocalShardOp>(op)) {
        if (!isSingleUnpaddedRank(shard.getLayout()))
          continue;
        OpBuilder b(op);
        shard.replaceAllUsesWith(reshapeView(b, op->getLoc(), shard.getFull(),
                                             shard.getShard().getType()));
        op->erase();
        continue;
      }
      WaitOp wait = getSameBlockWait(op);
      if (!wait)
        continue;
      // A shard stored quantized is not its values: its gather dequantizes.
      if (auto gather = dyn_cast<AllGatherStartOp>(op))
        if (!isSingleUnpaddedRank(gather.getLayouts()) ||
            llvm::any_of(gather.getShards().getTypes(),
                         [](Type type) { return QuantizedAttr::ofType(type); }))
          continue;
      if (auto reduce = dyn_cast<ReduceScatterStartOp>(op))
        if (!isSingleUnpaddedRank(reduce.getLayouts()))
          continue;
      // The views go where the results become available.
      OpBuilder b(wait);
      for (auto [operand, result] :
           llvm::zip(op->getOperands(), wait.getResults())) {
        Value view = reshapeView(b, wait.getLoc(), operand,
                                 cast<RankedTensorType>(result.getType()));
        result.replaceAllUsesWith(view);
        if (isa<AllGatherStartOp>(op))
          gathered.push_back(view);
      }
      wait.erase();
      op->erase();
    }
    for (Value view : gathered) {
      llvm::SetVector<ReleaseOp> releases;
      for (Operation *user : view.getUsers())
        if (auto release = dyn_cast<ReleaseOp>(user))
          releases.insert(release);
      for (ReleaseOp release : releases)
        dropFromRelease(release, view);
    }
  }
};

} // namespace
