//===- FuseBroadcastInputs.cpp - zero-fuse-broadcast-inputs ---------------===//
//
// The training-step IR broadcasts before every elementwise op
// (`linalg.map` takes same-shaped operands), so each broadcast materializes
// a full-sized tensor that lives until its last map: a LayerNorm's per-row
// statistics and its gamma and beta, softmax's row max and sum, the causal
// mask over every batch and head (one [B*A, S, S] tensor for the whole
// step). At GPT-2 10B with batch 10 each of the attention's broadcasts is
// 1.34 GB.
//
// This pass rewrites a `linalg.map` that reads broadcasts into a
// `linalg.generic` with the same body that reads the broadcasts' sources
// through projected indexing maps, and erases the broadcasts nothing else
// reads. The runtime runs both as the same loop nest (a broadcast input is
// a zero stride), in the same order: values do not change.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROFUSEBROADCASTINPUTSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

/// The map from the iteration space of a map of rank `rank` to the source
/// of `broadcast`: the identity without the broadcast dimensions.
static AffineMap getSourceMap(linalg::BroadcastOp broadcast, unsigned rank) {
  MLIRContext *ctx = broadcast.getContext();
  ArrayRef<int64_t> added = broadcast.getDimensions();
  SmallVector<AffineExpr> results;
  for (unsigned d = 0; d < rank; ++d)
    if (!llvm::is_contained(added, static_cast<int64_t>(d)))
      results.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, results, ctx);
}

/// Rewrites `map` into a generic reading the sources of the broadcasts among
/// its inputs; null when none of its inputs is a broadcast.
static linalg::GenericOp fuseBroadcastInputs(linalg::MapOp map) {
  auto type = cast<RankedTensorType>(map.getInit().getType());
  unsigned rank = type.getRank();
  MLIRContext *ctx = map.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> indexingMaps;
  bool fused = false;
  for (Value input : map.getInputs()) {
    auto broadcast = input.getDefiningOp<linalg::BroadcastOp>();
    if (!broadcast) {
      inputs.push_back(input);
      indexingMaps.push_back(identity);
      continue;
    }
    inputs.push_back(broadcast.getInput());
    indexingMaps.push_back(getSourceMap(broadcast, rank));
    fused = true;
  }
  if (!fused)
    return {};
  indexingMaps.push_back(identity);
  OpBuilder b(map);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, map.getLoc(), map->getResultTypes(), inputs, ValueRange{map.getInit()},
      indexingMaps, iterators);
  // The same body: one block argument per input, then the init's element.
  generic.getRegion().takeBody(map.getMapper());
  // Discardable attributes (a segment, a plan's offsets) stay with the op.
  for (NamedAttribute attr : map->getDiscardableAttrs())
    generic->setDiscardableAttr(attr.getName(), attr.getValue());
  map->replaceAllUsesWith(generic);
  map->erase();
  return generic;
}

namespace {

struct ZeroFuseBroadcastInputsPass
    : public zero::impl::ZeroFuseBroadcastInputsPassBase<
          ZeroFuseBroadcastInputsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step))
      return signalPassFailure();
    SmallVector<linalg::MapOp> maps;
    step->walk([&](linalg::MapOp map) { maps.push_back(map); });
    llvm::SetVector<linalg::BroadcastOp> broadcasts;
    for (linalg::MapOp map : maps) {
      for (Value input : map.getInputs())
        if (auto broadcast = input.getDefiningOp<linalg::BroadcastOp>())
          broadcasts.insert(broadcast);
      fuseBroadcastInputs(map);
    }
    for (linalg::BroadcastOp broadcast : broadcasts) {
      if (!broadcast->use_empty())
        continue;
      Value init = broadcast.getInit();
      broadcast->erase();
      if (auto empty = init.getDefiningOp<tensor::EmptyOp>();
          empty && empty->use_empty())
        empty->erase();
    }
  }
};

} // namespace
