//===- Pipeline.cpp - the ZeRO pass pipeline ------------------------------===//

#include "zero/Pipelines/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The options of every pass of the pipeline, copied from the pipeline's by
/// name through PipelineOptions.def.
struct PassOptionSet {
  ZeroVerifyTrainStepPassOptions VerifyTrainStep;
  ZeroTileLinearPassOptions TileLinear;
  ZeroFuseBroadcastInputsPassOptions FuseBroadcastInputs;
  ZeroInferSegmentsPassOptions InferSegments;
  ZeroCheckpointActivationsPassOptions CheckpointActivations;
  ZeroPartitionPassOptions Partition;
  ZeroAccumulateGradientsPassOptions AccumulateGradients;
  ZeroMixedPrecisionPassOptions MixedPrecision;
  ZeroComputePrecisionPassOptions ComputePrecision;
  ZeroNarrowActivationsPassOptions NarrowActivations;
  ZeroShardParametersPassOptions ShardParameters;
  ZeroReduceGradientsPassOptions ReduceGradients;
  ZeroInsertOptimizerPassOptions InsertOptimizer;
  ZeroBucketPassOptions Bucket;
  ZeroSchedulePrefetchPassOptions SchedulePrefetch;
  ZeroOffloadOptimizerPassOptions OffloadOptimizer;
  ZeroOffloadParamsPassOptions OffloadParams;
  ZeroFoldSingleRankCollectivesPassOptions FoldSingleRankCollectives;
  ZeroFoldTransposesPassOptions FoldTransposes;
  ZeroPlanMemoryPassOptions PlanMemory;
  ZeroVerifySchedulePassOptions VerifySchedule;

  explicit PassOptionSet(const ZeroPipelineOptions &options) {
#define ZERO_PIPELINE_OPTION(NAME, ARGUMENT, PASS, PASS_OPTION, DESCRIPTION)   \
  PASS.PASS_OPTION = options.NAME;
#define ZERO_PIPELINE_OPTION_COPY(NAME, PASS, PASS_OPTION)                     \
  PASS.PASS_OPTION = options.NAME;
#include "zero/Pipelines/PipelineOptions.def"
    // Every zero pass runs on the one training step.
    for (std::string *entry :
         {&VerifyTrainStep.entry, &TileLinear.entry, &FuseBroadcastInputs.entry,
          &InferSegments.entry, &CheckpointActivations.entry, &Partition.entry,
          &AccumulateGradients.entry, &MixedPrecision.entry,
          &ComputePrecision.entry, &NarrowActivations.entry,
          &ShardParameters.entry, &ReduceGradients.entry,
          &InsertOptimizer.entry, &Bucket.entry, &SchedulePrefetch.entry,
          &OffloadOptimizer.entry, &OffloadParams.entry,
          &FoldSingleRankCollectives.entry, &FoldTransposes.entry,
          &PlanMemory.entry,
          &VerifySchedule.entry})
      *entry = options.entry;
  }
};

} // namespace

void mlir::zero::buildZeroPipeline(OpPassManager &pm,
                             const ZeroPipelineOptions &options) {
  PassOptionSet passes(options);
  pm.addPass(createZeroVerifyTrainStepPass(passes.VerifyTrainStep));
  // Before checkpointing and partitioning: every later pass sees the tiles
  // as ordinary parameters.
  if (options.tileLinearInSplits != 1 || options.tileLinearOutSplits != 1)
    pm.addPass(createZeroTileLinearPass(passes.TileLinear));
  // Before checkpointing, so that a recomputed segment has no broadcasts
  // to rebuild either.
  if (options.fuseBroadcasts)
    pm.addPass(createZeroFuseBroadcastInputsPass(passes.FuseBroadcastInputs));
  // Before checkpointing, so that a recomputed segment recomputes no
  // transpose either and its kept inputs are what the GEMMs read; before
  // sharding, which then releases a gathered parameter after the GEMM
  // that reads it.
  if (options.foldTransposes)
    pm.addPass(createZeroFoldTransposesPass(passes.FoldTransposes));
  // Early, so that every later pass sees the recomputation as ordinary
  // backward ops (stage 3 gathers its parameters again).
  if (options.checkpointActivations != CheckpointActivations::None) {
    // A step that does not mark its segments gets them marked.
    pm.addPass(createZeroInferSegmentsPass(passes.InferSegments));
    passes.CheckpointActivations.automatic =
        options.checkpointActivations == CheckpointActivations::Auto;
    // auto measures candidate steps with the rest of this pipeline, which
    // checks the budget; no report from those trials.
    std::function<void(OpPassManager &)> buildFitPipeline;
    if (passes.CheckpointActivations.automatic &&
        !options.deviceMemory.empty()) {
      auto rest = std::make_shared<ZeroPipelineOptions>();
      rest->copyOptionValuesFrom(options);
      rest->checkpointActivations = CheckpointActivations::None;
      // The step it measures is tiled and fused already.
      rest->fuseBroadcasts = false;
      rest->tileLinearInSplits = 1;
      rest->tileLinearOutSplits = 1;
      rest->report = "";
      rest->memoryTimeline = "";
      buildFitPipeline = [rest](OpPassManager &fit) {
        buildZeroPipeline(fit, *rest);
      };
    }
    pm.addPass(createZeroCheckpointActivationsPass(
        passes.CheckpointActivations, std::move(buildFitPipeline)));
  }
  pm.addPass(createZeroPartitionPass(passes.Partition));
  pm.addPass(createZeroAccumulateGradientsPass(passes.AccumulateGradients));
  pm.addPass(createZeroMixedPrecisionPass(passes.MixedPrecision));
  // After the 16-bit parameters exist: a GEMM reads them as they are.
  pm.addPass(createZeroComputePrecisionPass(passes.ComputePrecision));
  // After the GEMMs read 16-bit operands: their casts become views.
  pm.addPass(createZeroNarrowActivationsPass(passes.NarrowActivations));
  pm.addPass(createZeroShardParametersPass(passes.ShardParameters));
  pm.addPass(createZeroReduceGradientsPass(passes.ReduceGradients));
  pm.addPass(createZeroInsertOptimizerPass(passes.InsertOptimizer));
  pm.addPass(createZeroBucketPass(passes.Bucket));
  pm.addPass(createZeroSchedulePrefetchPass(passes.SchedulePrefetch));
  // The swaps go around the collectives where prefetch placed them.
  pm.addPass(createZeroOffloadOptimizerPass(passes.OffloadOptimizer));
  pm.addPass(createZeroOffloadParamsPass(passes.OffloadParams));
  pm.addPass(createZeroFoldSingleRankCollectivesPass(
      passes.FoldSingleRankCollectives));
  pm.addPass(createZeroPlanMemoryPass(passes.PlanMemory));
  pm.addPass(createZeroVerifySchedulePass(passes.VerifySchedule));
}

ArrayRef<PipelineOptionInfo> mlir::zero::getPipelineOptionInfos() {
  static const std::vector<PipelineOptionInfo> infos = [] {
    std::vector<PipelineOptionInfo> rows;
    auto passArgument = [](std::unique_ptr<Pass> pass) {
      return pass->getArgument().str();
    };
#define ZERO_PIPELINE_OPTION(NAME, ARGUMENT, PASS, PASS_OPTION, DESCRIPTION)   \
  rows.push_back({#NAME, ARGUMENT, {passArgument(createZero##PASS##Pass())}});
#define ZERO_PIPELINE_OPTION_COPY(NAME, PASS, PASS_OPTION)                     \
  llvm::find_if(rows, [](const PipelineOptionInfo &row) {                      \
    return row.name == #NAME;                                                  \
  })->passArguments.push_back(passArgument(createZero##PASS##Pass()));
#include "zero/Pipelines/PipelineOptions.def"
    return rows;
  }();
  return infos;
}

const PipelineOptionInfo *mlir::zero::lookupPipelineOption(StringRef name) {
  for (const PipelineOptionInfo &info : getPipelineOptionInfos())
    if (info.name == name)
      return &info;
  return nullptr;
}

LogicalResult mlir::zero::applyEntryOption(
    OpPassManager &pm, StringRef entry,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  // The zero passes run on the module, so they are never nested.
  for (Pass &pass : pm.getPasses())
    if (pass.getArgument().starts_with("zero-") &&
        failed(pass.initializeOptions(("entry=" + entry).str(), errorHandler)))
      return failure();
  return success();
}

void mlir::zero::registerZeroPipeline() {
  PassPipelineRegistration<ZeroPipelineOptions>(
      "zero-pipeline",
      "The ZeRO pipeline: one data-parallel rank's optimizer step from a "
      "value-and-grad training step",
      buildZeroPipeline);
}
