//===- Pipeline.cpp - the ZeRO pass pipeline ------------------------------===//

#include "zero/Dialect/Zero/Transforms/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::zero;

void zero::buildZeroPipeline(OpPassManager &pm,
                             const ZeroPipelineOptions &options) {
  pm.addPass(createZeroVerifyTrainStepPass(
      {options.entry, options.ignoreUnusedParameters}));
  // Before checkpointing and partitioning: every later pass sees the tiles
  // as ordinary parameters.
  if (options.tileLinearInSplits != 1 || options.tileLinearOutSplits != 1)
    pm.addPass(createZeroTileLinearPass(
        {options.entry, options.tileLinearThreshold, options.tileLinearInSplits,
         options.tileLinearOutSplits}));
  // Before checkpointing, so that a recomputed segment has no broadcasts
  // to rebuild either.
  if (options.fuseBroadcasts)
    pm.addPass(createZeroFuseBroadcastInputsPass({options.entry}));
  // Early, so that every later pass sees the recomputation as ordinary
  // backward ops (stage 3 gathers its parameters again).
  if (options.checkpointActivations != CheckpointActivations::None) {
    // A step that does not mark its segments gets them marked.
    pm.addPass(
        createZeroInferSegmentsPass({options.entry, options.cpuCheckpointing}));
    ZeroCheckpointActivationsPassOptions checkpoint{
        options.entry, options.numberCheckpoints, options.cpuCheckpointing};
    // auto measures candidate steps with the rest of this pipeline, which
    // checks the budget; no report from those trials.
    checkpoint.automatic =
        options.checkpointActivations == CheckpointActivations::Auto;
    if (checkpoint.automatic && !options.deviceMemory.empty()) {
      ZeroPipelineOptions rest;
      rest.copyOptionValuesFrom(options);
      rest.checkpointActivations = CheckpointActivations::None;
      // The step it measures is tiled and fused already.
      rest.fuseBroadcasts = false;
      rest.tileLinearInSplits = 1;
      rest.tileLinearOutSplits = 1;
      rest.report = "";
      rest.memoryTimeline = "";
      OpPassManager fit(ModuleOp::getOperationName());
      buildZeroPipeline(fit, rest);
      llvm::raw_string_ostream os(checkpoint.fitPipeline);
      fit.printAsTextualPipeline(os);
    }
    pm.addPass(createZeroCheckpointActivationsPass(checkpoint));
  }
  pm.addPass(createZeroPartitionPass(
      {options.entry, options.stage, options.worldSize, options.ranksPerNode,
       options.micsShardSize, options.paramPersistenceThreshold,
       options.modelPersistenceThreshold}));
  pm.addPass(createZeroAccumulateGradientsPass(
      {options.entry, options.gradientAccumulationSteps, options.gradAccumDtype,
       options.unrollMicroSteps}));
  pm.addPass(createZeroMixedPrecisionPass({options.entry, options.precision,
                                           options.lossScale,
                                           options.initialScalePower}));
  pm.addPass(createZeroShardParametersPass(
      {options.entry, options.maxReuseDistance, options.hpzPartitionSize,
       options.quantizeWeightsBlockSize, options.quantizeFrozenWeightsBlockSize,
       options.micsHierarchicalParamsGather}));
  pm.addPass(createZeroReduceGradientsPass(
      {options.entry, options.reduceScatter, options.communicationDataType,
       options.gradAccumDtype, options.prescaleGradients,
       options.gradientPredivideFactor, options.quantizeGradientsBlockSize}));
  // Named, not positional: many of these are doubles of one type.
  ZeroInsertOptimizerPassOptions optimizer;
  optimizer.entry = options.entry;
  optimizer.optimizer = options.optimizer;
  optimizer.lr = options.lr;
  optimizer.beta1 = options.beta1;
  optimizer.beta2 = options.beta2;
  optimizer.eps = options.eps;
  optimizer.weightDecay = options.weightDecay;
  optimizer.adamWMode = options.adamWMode;
  optimizer.biasCorrection = options.biasCorrection;
  optimizer.amsgrad = options.amsgrad;
  optimizer.momentum = options.momentum;
  optimizer.dampening = options.dampening;
  optimizer.nesterov = options.nesterov;
  optimizer.gradientClipping = options.gradientClipping;
  optimizer.subGroupSize = options.subGroupSize;
  optimizer.lossScaleWindow = options.lossScaleWindow;
  optimizer.hysteresis = options.hysteresis;
  optimizer.consecutiveHysteresis = options.consecutiveHysteresis;
  optimizer.minLossScale = options.minLossScale;
  optimizer.loadFromFp32Weights = options.loadFromFp32Weights;
  optimizer.lrSchedule = options.lrSchedule;
  optimizer.lastBatchIteration = options.lastBatchIteration;
  optimizer.warmupMinLr = options.warmupMinLr;
  optimizer.warmupMaxLr = options.warmupMaxLr;
  optimizer.warmupNumSteps = options.warmupNumSteps;
  optimizer.warmupType = options.warmupType;
  optimizer.totalNumSteps = options.totalNumSteps;
  optimizer.warmupMinRatio = options.warmupMinRatio;
  optimizer.cosMinRatio = options.cosMinRatio;
  optimizer.cycleMinLr = options.cycleMinLr;
  optimizer.cycleMaxLr = options.cycleMaxLr;
  optimizer.decayLrRate = options.decayLrRate;
  optimizer.cycleFirstStepSize = options.cycleFirstStepSize;
  optimizer.cycleSecondStepSize = options.cycleSecondStepSize;
  optimizer.cycleFirstStairCount = options.cycleFirstStairCount;
  optimizer.cycleSecondStairCount = options.cycleSecondStairCount;
  optimizer.decayStepSize = options.decayStepSize;
  optimizer.cycleMomentum = options.cycleMomentum;
  optimizer.cycleMinMom = options.cycleMinMom;
  optimizer.cycleMaxMom = options.cycleMaxMom;
  optimizer.decayMomRate = options.decayMomRate;
  optimizer.rangeTestMinLr = options.rangeTestMinLr;
  optimizer.rangeTestStepSize = options.rangeTestStepSize;
  optimizer.rangeTestStepRate = options.rangeTestStepRate;
  optimizer.rangeTestStaircase = options.rangeTestStaircase;
  pm.addPass(createZeroInsertOptimizerPass(optimizer));
  pm.addPass(createZeroBucketPass({options.entry, options.reduceBucketSize,
                                   options.allgatherBucketSize,
                                   options.prefetchBucketSize}));
  pm.addPass(createZeroSchedulePrefetchPass({options.entry, options.overlapComm,
                                             options.prefetchBucketSize,
                                             options.maxLiveParameters}));
  // The swaps go around the collectives where prefetch placed them.
  pm.addPass(createZeroOffloadOptimizerPass(
      {options.entry, options.offloadOptimizer, options.offloadOptimizerRatio,
       options.offloadOptimizerNvmePath, options.subGroupSize,
       options.offloadOptimizerBufferCount,
       options.offloadOptimizerPipelineRead,
       options.offloadOptimizerPipelineWrite, options.aioBlockSize,
       options.aioQueueDepth, options.aioSingleSubmit,
       options.aioOverlapEvents}));
  pm.addPass(createZeroOffloadParamsPass(
      {options.entry, options.offloadParams, options.offloadParamsNvmePath,
       options.aioBlockSize, options.aioQueueDepth, options.aioSingleSubmit,
       options.aioOverlapEvents, options.offloadParamsBufferCount,
       options.offloadParamsBufferSize, options.offloadParamsMaxInCpu,
       options.subGroupSize}));
  pm.addPass(createZeroFoldSingleRankCollectivesPass({options.entry}));
  pm.addPass(createZeroPlanMemoryPass(
      {options.entry, options.report, options.memoryTimeline,
       options.deviceMemory, options.hostMemory, options.contiguousGradients}));
  pm.addPass(createZeroVerifySchedulePass({options.entry}));
}

LogicalResult zero::applyEntryOption(
    OpPassManager &pm, StringRef entry,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  // The zero passes run on the module, so they are never nested.
  for (Pass &pass : pm.getPasses())
    if (pass.getArgument().starts_with("zero-") &&
        failed(pass.initializeOptions(("entry=" + entry).str(), errorHandler)))
      return failure();
  return success();
}

void zero::registerZeroPipeline() {
  PassPipelineRegistration<ZeroPipelineOptions>(
      "zero-pipeline",
      "The ZeRO pipeline: one data-parallel rank's optimizer step from a "
      "value-and-grad training step",
      buildZeroPipeline);
}
