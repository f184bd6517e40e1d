//===- Partition.cpp - decide how every parameter is partitioned ----------===//
//
// The first decision of the pipeline, recorded as attributes so that every
// later pass (and a reader of the IR) sees it: the stage and world size on
// the training step, a #zero.layout on every parameter, and at stage 3 which
// small parameters stay whole on every rank.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROPARTITIONPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroPartitionPass
    : public zero::impl::ZeroPartitionPassBase<ZeroPartitionPass> {
  using Base::Base;

  LogicalResult checkOptions(func::FuncOp func) {
    if (stage < 0 || stage > 3)
      return func.emitError("ZeRO stage must be 0, 1, 2 or 3, got ")
             << stage.getValue();
    if (worldSize < 1)
      return func.emitError("world size must be at least 1, got ")
             << worldSize.getValue();
    if (ranksPerNode < 0 || (ranksPerNode > 0 && worldSize % ranksPerNode != 0))
      return func.emitError("ranks-per-node must divide world-size (")
             << worldSize.getValue() << "), got " << ranksPerNode.getValue();
    if (micsShardSize < 0)
      return func.emitError("mics-shard-size must be >= 0, got ")
             << micsShardSize.getValue();
    if (micsShardSize > 0 && micsShardSize != worldSize) {
      if (stage != 3)
        return func.emitError("mics-shard-size (")
               << micsShardSize.getValue()
               << ") needs stage 3: MiCS partitions the parameters; stage is "
               << stage.getValue();
      int64_t nodeRanks = ranksPerNode > 0 ? ranksPerNode : worldSize;
      // Groups of whole nodes: a node's ranks, or several nodes'.
      if (micsShardSize % nodeRanks != 0 || worldSize % micsShardSize != 0)
        return func.emitError("mics-shard-size (")
               << micsShardSize.getValue() << ") must divide the world size ("
               << worldSize.getValue()
               << ") and be a multiple of the ranks of one node "
                  "(ranks-per-node, "
               << nodeRanks << "): MiCS groups are whole nodes";
    }
    if (paramPersistenceThreshold < 0)
      return func.emitError("param-persistence-threshold must be >= 0, got ")
             << paramPersistenceThreshold.getValue();
    if (modelPersistenceThreshold < 0)
      return func.emitError("model-persistence-threshold must be >= 0, got ")
             << modelPersistenceThreshold.getValue();
    return success();
  }

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step) || failed(checkOptions(*step)))
      return signalPassFailure();
    func::FuncOp func = *step;
    MLIRContext *ctx = &getContext();
    Builder b(ctx);

    func->setAttr(ZeroDialect::getTrainStepAttrName(), b.getUnitAttr());
    func->setAttr(ZeroDialect::getStageAttrName(), b.getI64IntegerAttr(stage));
    func->setAttr(ZeroDialect::getWorldSizeAttrName(),
                  b.getI64IntegerAttr(worldSize));
    if (ranksPerNode > 0 && ranksPerNode < worldSize)
      func->setAttr(ZeroDialect::getRanksPerNodeAttrName(),
                    b.getI64IntegerAttr(ranksPerNode));
    else
      func->removeAttr(ZeroDialect::getRanksPerNodeAttrName());
    // MiCS groups of several nodes make the grid three axes (getProcessGrid).
    if (micsShardSize > ranksPerNode && ranksPerNode > 0 &&
        micsShardSize < worldSize)
      func->setAttr(ZeroDialect::getMicsShardSizeAttrName(),
                    b.getI64IntegerAttr(micsShardSize));
    else
      func->removeAttr(ZeroDialect::getMicsShardSizeAttrName());

    // MiCS: every layout is for the ranks of one group.
    const int64_t partitionRanks =
        micsShardSize > 0 ? micsShardSize.getValue() : worldSize.getValue();

    // DeepSpeed marks parameters persistent in module order while their
    // total stays within the model threshold; arguments are in model order.
    // All argument attributes at once: setArgAttr copies every argument's
    // attributes, quadratic in the number of parameters.
    int64_t persistentNumel = 0;
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      NamedAttrList attrs(func.getArgAttrDict(i));
      if (attrs.get(ZeroDialect::getParamAttrName())) {
        auto type = cast<RankedTensorType>(func.getArgumentTypes()[i]);
        // Checked: without zero-verify-train-step, a shape whose element
        // count overflows int64 reaches this pass.
        auto layout = LayoutAttr::getChecked(
            [&] { return emitError(func.getArgument(i).getLoc()); }, ctx,
            type.getShape(), partitionRanks);
        if (!layout)
          return signalPassFailure();
        attrs.set(ZeroDialect::getLayoutAttrName(), layout);
        int64_t numel = layout.getNumel();
        if (stage == 3 && numel <= paramPersistenceThreshold &&
            numel <= modelPersistenceThreshold - persistentNumel) {
          persistentNumel += numel;
          attrs.set(ZeroDialect::getPersistentAttrName(), b.getUnitAttr());
        }
      }
      argAttrs.push_back(attrs.getDictionary(ctx));
    }
    func.setAllArgAttrs(argAttrs);
  }
};
} // namespace
