//===- Pipeline.cpp - the ZeRO pass pipeline ------------------------------===//

#include "zero/Dialect/Zero/Transforms/Pipeline.h"

#include "mlir/Pass/PassRegistry.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::zero;

void zero::buildZeroPipeline(OpPassManager &pm,
                             const ZeroPipelineOptions &options) {
  pm.addPass(createZeroVerifyTrainStepPass(
      {options.entry, options.ignoreUnusedParameters}));
  pm.addPass(createZeroPartitionPass(
      {options.entry, options.stage, options.worldSize,
       options.paramPersistenceThreshold, options.modelPersistenceThreshold}));
  pm.addPass(createZeroAccumulateGradientsPass(
      {options.entry, options.gradientAccumulationSteps, options.gradAccumDtype,
       options.unrollMicroSteps}));
  pm.addPass(createZeroMixedPrecisionPass({options.entry, options.precision,
                                           options.lossScale,
                                           options.initialScalePower}));
  pm.addPass(
      createZeroShardParametersPass({options.entry, options.maxReuseDistance}));
  pm.addPass(createZeroReduceGradientsPass(
      {options.entry, options.reduceScatter, options.communicationDataType,
       options.gradAccumDtype, options.prescaleGradients,
       options.gradientPredivideFactor}));
  pm.addPass(createZeroInsertOptimizerPass({options.entry,
                                            options.optimizer,
                                            options.lr,
                                            options.beta1,
                                            options.beta2,
                                            options.eps,
                                            options.weightDecay,
                                            options.adamWMode,
                                            options.biasCorrection,
                                            options.amsgrad,
                                            options.momentum,
                                            options.dampening,
                                            options.nesterov,
                                            options.gradientClipping,
                                            options.subGroupSize,
                                            options.lossScaleWindow,
                                            options.hysteresis,
                                            options.consecutiveHysteresis,
                                            options.minLossScale,
                                            options.lrSchedule,
                                            options.lastBatchIteration,
                                            options.warmupMinLr,
                                            options.warmupMaxLr,
                                            options.warmupNumSteps,
                                            options.warmupType,
                                            options.totalNumSteps,
                                            options.warmupMinRatio,
                                            options.cosMinRatio,
                                            options.cycleMinLr,
                                            options.cycleMaxLr,
                                            options.decayLrRate,
                                            options.cycleFirstStepSize,
                                            options.cycleSecondStepSize,
                                            options.cycleFirstStairCount,
                                            options.cycleSecondStairCount,
                                            options.decayStepSize,
                                            options.cycleMomentum,
                                            options.cycleMinMom,
                                            options.cycleMaxMom,
                                            options.decayMomRate,
                                            options.rangeTestMinLr,
                                            options.rangeTestStepSize,
                                            options.rangeTestStepRate,
                                            options.rangeTestStaircase}));
  pm.addPass(createZeroBucketPass({options.entry, options.reduceBucketSize,
                                   options.allgatherBucketSize,
                                   options.prefetchBucketSize}));
  pm.addPass(createZeroSchedulePrefetchPass({options.entry, options.overlapComm,
                                             options.prefetchBucketSize,
                                             options.maxLiveParameters}));
  pm.addPass(createZeroPlanMemoryPass({options.entry, options.report,
                                       options.deviceMemory,
                                       options.contiguousGradients}));
  pm.addPass(createZeroVerifySchedulePass({options.entry}));
}

void zero::registerZeroPipeline() {
  PassPipelineRegistration<ZeroPipelineOptions>(
      "zero-pipeline",
      "The ZeRO pipeline: one data-parallel rank's optimizer step from a "
      "value-and-grad training step",
      buildZeroPipeline);
}
