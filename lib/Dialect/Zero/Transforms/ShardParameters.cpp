//===- ShardParameters.cpp - stage 3: gather parameters around uses -------===//
//
// At stage 3 a rank holds only its shard of each parameter. Every use needs
// the full tensor, so the uses of a parameter are grouped in program order
// and each group is bracketed by an all-gather before it and a release after
// it. Two consecutive uses share a group when the other parameters gathered
// between them amount to at most `max-reuse-distance` elements: keeping the
// tensor is then cheaper than fetching it again (DeepSpeed's reuse distance,
// here computed from the program instead of a recorded trace).
//
// ZeRO++'s hpZ (`hpz-partition-size`, the ranks of a node) keeps, after the
// first group's gather, a secondary copy of the parameter cut across the
// node, and gathers every later group from it within the node: the
// backward's gathers then stay off the slow links between nodes.
//
// ZeRO++'s qwZ (`quantize-weights-block-size`) quantizes the first group's
// gather (the forward's) to int8 with one scale per block.
//
// MiCS's hierarchical gather (`mics-hierarchical-params-gather`) runs a
// gather over the ranks of several nodes across the nodes first.
//
// ZeRO++'s quantized non-trainable weights
// (`quantize-frozen-weights-block-size`) store the shard of a frozen
// parameter as those int8 blocks: nothing updates it, so quantizing once
// saves its memory and every gather's quantization.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROSHARDPARAMETERSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// A partitioned parameter and the top-level ops of the step that use it,
/// in program order.
struct PartitionedParam {
  BlockArgument arg;
  LayoutAttr layout;
  bool frozen;
  SmallVector<Operation *> users;
  SmallVector<unsigned> positions;
};

struct ZeroShardParametersPass
    : public zero::impl::ZeroShardParametersPassBase<ZeroShardParametersPass> {
  using Base::Base;

  /// The quantize_block_size of a gather from the parameter's own shard:
  /// every one of a shard stored quantized, the first one (the forward's)
  /// with qwZ.
  IntegerAttr gatherBlockSize(bool storedQuantized, bool firstGather) {
    Builder b(&getContext());
    if (storedQuantized)
      return b.getI64IntegerAttr(quantizeFrozenWeightsBlockSize);
    if (quantizeWeightsBlockSize > 0 && firstGather)
      return b.getI64IntegerAttr(quantizeWeightsBlockSize);
    return {};
  }

  void runOnOperation() override {
    FailureOr<PartitionedTrainStep> step =
        lookupPartitionedTrainStep(getOperation(), entry, getArgument());
    if (failed(step))
      return signalPassFailure();
    func::FuncOp func = step->func;
    if (step->rank.stage != 3)
      return;
    if (maxReuseDistance < 0) {
      func.emitError("max-reuse-distance must be >= 0, got ")
          << maxReuseDistance.getValue();
      return signalPassFailure();
    }
    if (quantizeWeightsBlockSize < 0) {
      func.emitError("quantize-weights-block-size must be >= 0, got ")
          << quantizeWeightsBlockSize.getValue();
      return signalPassFailure();
    }
    if (quantizeFrozenWeightsBlockSize < 0) {
      func.emitError("quantize-frozen-weights-block-size must be >= 0, got ")
          << quantizeFrozenWeightsBlockSize.getValue();
      return signalPassFailure();
    }
    // Unrolled micro-steps repeat the forward in one body: its first gather
    // of a parameter is only the first micro-step's.
    if (quantizeWeightsBlockSize > 0)
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
        if (auto microStep = func.getResultAttrOfType<IntegerAttr>(
                i, ZeroDialect::getMicroStepAttrName());
            microStep && microStep.getInt() > 0) {
          func.emitError("quantize-weights-block-size (qwZ) quantizes each "
                         "parameter's first gather, which in unrolled "
                         "micro-steps is only the first micro-step's; "
                         "compile the micro-steps as a loop (without "
                         "--zero-unroll-micro-steps)");
          return signalPassFailure();
        }
    const int64_t worldSize = step->rank.worldSize;
    const bool hpz = hpzPartitionSize > 1 && hpzPartitionSize != worldSize;
    if (hpzPartitionSize < 0 ||
        (hpz && hpzPartitionSize != step->rank.ranksPerNode)) {
      func.emitError("hpz-partition-size (")
          << hpzPartitionSize.getValue() << ") must be 0, 1, the world size ("
          << worldSize << ") or the ranks of one node (ranks-per-node, "
          << step->rank.ranksPerNode
          << "): the secondary partition is a node's";
      return signalPassFailure();
    }

    Block &body = func.getBody().front();
    DenseMap<Operation *, unsigned> position;
    for (auto [index, op] : llvm::enumerate(body))
      position[&op] = index;

    SmallVector<PartitionedParam> params;
    for (const ParamArg &param : getParamArgs(func)) {
      if (param.persistent)
        continue;
      PartitionedParam info{param.arg, param.layout, param.frozen, {}, {}};
      llvm::SmallDenseSet<Operation *> seen;
      for (OpOperand &use : param.arg.getUses()) {
        Operation *user = body.findAncestorOpInBlock(*use.getOwner());
        if (seen.insert(user).second)
          info.users.push_back(user);
      }
      llvm::sort(info.users, [&](Operation *a, Operation *b) {
        return position[a] < position[b];
      });
      for (Operation *user : info.users)
        info.positions.push_back(position[user]);
      params.push_back(std::move(info));
    }

    // Elements of the parameters other than `self` that are used strictly
    // between two program positions: what would be gathered in between.
    auto trafficBetween = [&](const PartitionedParam &self, unsigned from,
                              unsigned to) {
      int64_t elements = 0;
      for (const PartitionedParam &other : params) {
        if (&other == &self)
          continue;
        auto it = llvm::upper_bound(other.positions, from);
        if (it != other.positions.end() && *it < to)
          elements += other.layout.getNumel();
      }
      return elements;
    };

    OpBuilder b(&getContext());
    bool anySecondary = false;
    for (PartitionedParam &param : params) {
      Type elementType =
          cast<RankedTensorType>(param.arg.getType()).getElementType();
      // A frozen parameter's shard is stored quantized, and every gather of
      // it is quantized alike.
      const bool storedQuantized =
          param.frozen && quantizeFrozenWeightsBlockSize > 0;
      if (storedQuantized &&
          !isa<Float32Type, BFloat16Type, Float16Type>(elementType)) {
        emitError(param.arg.getLoc(),
                  "quantize-frozen-weights-block-size stores f32, bf16 or "
                  "f16 parameters quantized, but this one is ")
            << elementType;
        return signalPassFailure();
      }
      RankedTensorType shardType = param.layout.getShardType(elementType);
      if (storedQuantized)
        shardType = shardType.cloneWithEncoding(QuantizedAttr::get(
            &getContext(), /*bits=*/8, quantizeFrozenWeightsBlockSize));
      // A parameter that no op reads (DeepSpeed's ignore_unused_parameters)
      // is partitioned all the same: the rank keeps its shard, which its
      // optimizer step updates, and nothing is gathered.
      param.arg.setType(shardType);
      if (param.users.empty())
        continue;
      // Cut the uses into groups kept gathered across.
      SmallVector<SmallVector<Operation *>> groups{{param.users.front()}};
      for (size_t i = 1; i < param.users.size(); ++i) {
        if (trafficBetween(param, param.positions[i - 1], param.positions[i]) >
            maxReuseDistance)
          groups.emplace_back();
        groups.back().push_back(param.users[i]);
      }

      ArrayAttr layouts = b.getArrayAttr({param.layout});
      if (quantizeWeightsBlockSize > 0 && !param.users.empty() &&
          !isa<Float32Type, BFloat16Type, Float16Type>(elementType)) {
        emitError(param.arg.getLoc(), "qwZ quantizes f32, bf16 or f16 "
                                      "parameters, but this one is ")
            << elementType;
        return signalPassFailure();
      }
      FailureOr<DenseI16ArrayAttr> gridAxes =
          getLayoutGridAxes(func, param.layout, param.arg.getLoc());
      if (failed(gridAxes))
        return signalPassFailure();
      // hpZ: the secondary partition, after the first gather.
      Value secondary;
      LayoutAttr secondaryLayout;
      FailureOr<DenseI16ArrayAttr> secondaryAxes = DenseI16ArrayAttr();
      if (hpz && !*gridAxes) {
        secondaryLayout = LayoutAttr::get(
            &getContext(), param.layout.getShape(), hpzPartitionSize);
        secondaryAxes =
            getLayoutGridAxes(func, secondaryLayout, param.arg.getLoc());
        if (failed(secondaryAxes))
          return signalPassFailure();
      }
      // MiCS's hierarchical gather, where the group spans nodes of several
      // ranks: more than one of its axes has more than one rank.
      bool hierarchical = false;
      if (micsHierarchicalParamsGather) {
        SmallVector<int64_t, 2> grid = *getProcessGrid(func);
        int64_t hops = 0;
        for (auto [axis, size] : llvm::enumerate(grid))
          hops +=
              size > 1 &&
              (!*gridAxes || llvm::is_contained(gridAxes->asArrayRef(), axis));
        hierarchical = hops > 1;
      }
      for (ArrayRef<Operation *> group : groups) {
        Operation *first = group.front(), *last = group.back();
        b.setInsertionPoint(first);
        auto gather =
            secondary
                ? AllGatherStartOp::create(b, first->getLoc(), secondary,
                                           b.getArrayAttr({secondaryLayout}),
                                           *secondaryAxes,
                                           /*quantize_block_size=*/nullptr)
                : AllGatherStartOp::create(
                      b, first->getLoc(), param.arg, layouts, *gridAxes,
                      gatherBlockSize(storedQuantized,
                                      first == groups.front().front()),
                      hierarchical);
        auto wait = WaitOp::create(b, first->getLoc(), gather);
        Value full = wait.getResult(0);
        if (secondaryLayout && !secondary && groups.size() > 1) {
          secondary = LocalShardOp::create(
              b, first->getLoc(), secondaryLayout.getShardType(elementType),
              full, secondaryLayout);
          anySecondary = true;
        }
        llvm::SmallDenseSet<Operation *> members(group.begin(), group.end());
        param.arg.replaceUsesWithIf(full, [&](OpOperand &use) {
          return members.contains(body.findAncestorOpInBlock(*use.getOwner()));
        });
        // A parameter returned as it is lives to the end of the step.
        if (last->hasTrait<OpTrait::IsTerminator>())
          continue;
        b.setInsertionPointAfter(last);
        ReleaseOp::create(b, last->getLoc(), full);
      }
    }
    if (hpz && !anySecondary && !params.empty())
      func.emitWarning("hpz-partition-size (")
          << hpzPartitionSize.getValue()
          << ") keeps no secondary copy: no parameter is gathered twice (each "
             "stays gathered from its first use to its last within "
             "max-reuse-distance = "
          << maxReuseDistance.getValue() << " elements)";
    updateFunctionType(func);
  }
};
} // namespace
