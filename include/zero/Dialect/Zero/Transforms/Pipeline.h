//===- Pipeline.h - the ZeRO pass pipeline ----------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PIPELINE_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "zero/Dialect/Zero/Transforms/PassOptionEnums.h"

namespace mlir {
namespace zero {

/// What the pipeline recomputes in the backward pass
/// (`checkpoint-activations`, zero-checkpoint-activations).
enum class CheckpointActivations {
  /// Nothing: every activation is kept.
  None,
  /// Every segment.
  All,
  /// The fewest segments that make the plan fit `device-memory`.
  Auto,
};

/// Every knob of the pipeline, named as on the command line of the passes
/// that take it. `--zero-pipeline="stage=3 world-size=8 ..."` parses these;
/// the zero-opt driver fills them from a DeepSpeed config.
struct ZeroPipelineOptions : public PassPipelineOptions<ZeroPipelineOptions> {
  Option<std::string> entry{*this, "entry",
                            llvm::cl::desc("The training-step function")};
  // Partitioning.
  Option<int64_t> stage{*this, "stage", llvm::cl::desc("ZeRO stage (0-3)"),
                        llvm::cl::init(0)};
  Option<int64_t> worldSize{*this, "world-size",
                            llvm::cl::desc("Data-parallel ranks"),
                            llvm::cl::init(1)};
  Option<int64_t> ranksPerNode{
      *this, "ranks-per-node",
      llvm::cl::desc("Ranks per node, node-major (0: all on one node)"),
      llvm::cl::init(0)};
  Option<int64_t> micsShardSize{
      *this, "mics-shard-size",
      llvm::cl::desc("Stage 3: ranks that share one copy of the model states "
                     "(MiCS): whole nodes, a divisor of the world size (0: "
                     "the world size)"),
      llvm::cl::init(0)};
  Option<bool> micsHierarchicalParamsGather{
      *this, "mics-hierarchical-params-gather",
      llvm::cl::desc("Stage 3, MiCS: gather parameters across the nodes of a "
                     "group first, then within each node"),
      llvm::cl::init(false)};
  Option<int64_t> paramPersistenceThreshold{
      *this, "param-persistence-threshold",
      llvm::cl::desc("Stage 3: parameters this small stay whole"),
      llvm::cl::init(100000)};
  Option<int64_t> modelPersistenceThreshold{
      *this, "model-persistence-threshold",
      llvm::cl::desc("Stage 3: cap on persistent parameter elements"),
      llvm::cl::init(std::numeric_limits<int64_t>::max())};
  Option<bool> ignoreUnusedParameters{
      *this, "ignore-unused-parameters",
      llvm::cl::desc("false: a parameter that no op reads is an error"),
      llvm::cl::init(true)};
  Option<int64_t> hpzPartitionSize{
      *this, "hpz-partition-size",
      llvm::cl::desc("Stage 3, ZeRO++ hpZ: gathers after the first read a "
                     "secondary partition across the ranks of one node (0: "
                     "off)"),
      llvm::cl::init(0)};
  Option<int64_t> quantizeWeightsBlockSize{
      *this, "quantize-weights-block-size",
      llvm::cl::desc("Stage 3, ZeRO++ qwZ: the forward's gathers carry int8 "
                     "values with one scale per block of this many elements "
                     "(0: off)"),
      llvm::cl::init(0)};
  Option<int64_t> quantizeFrozenWeightsBlockSize{
      *this, "quantize-frozen-weights-block-size",
      llvm::cl::desc("Stage 3, ZeRO++: store the shards of zero.frozen "
                     "parameters as int8 values with one scale per block of "
                     "this many elements, gathered as they are (0: off)"),
      llvm::cl::init(0)};
  Option<int64_t> quantizeGradientsBlockSize{
      *this, "quantize-gradients-block-size",
      llvm::cl::desc("ZeRO++ qgZ: the gradients' reduce-scatters carry int4 "
                     "values with one scale per block of this many elements, "
                     "through a hierarchical all-to-all (even; 0: off)"),
      llvm::cl::init(0)};
  Option<int64_t> maxReuseDistance{
      *this, "max-reuse-distance",
      llvm::cl::desc("Stage 3: keep parameters gathered across this much "
                     "other traffic"),
      llvm::cl::init(1000000000)};
  Option<bool> fuseBroadcasts{
      *this, "fuse-broadcasts",
      llvm::cl::desc("Read broadcasts' sources in the elementwise maps that "
                     "use them instead of materializing them "
                     "(zero-fuse-broadcast-inputs)"),
      llvm::cl::init(false)};
  // Memory-centric tiling (zero-tile-linear).
  Option<int64_t> tileLinearThreshold{
      *this, "tile-linear-threshold",
      llvm::cl::desc("Tile only linear weights with more elements than this"),
      llvm::cl::init(0)};
  Option<int64_t> tileLinearInSplits{
      *this, "tile-linear-in-splits",
      llvm::cl::desc("Tiles along a linear weight's input dimension"),
      llvm::cl::init(1)};
  Option<int64_t> tileLinearOutSplits{
      *this, "tile-linear-out-splits",
      llvm::cl::desc("Tiles along a linear weight's output dimension"),
      llvm::cl::init(1)};
  // Activation checkpointing (zero-checkpoint-activations).
  Option<CheckpointActivations> checkpointActivations{
      *this, "checkpoint-activations",
      llvm::cl::desc("Recompute segments' activations in the backward pass "
                     "instead of keeping them"),
      llvm::cl::init(CheckpointActivations::None),
      llvm::cl::values(
          clEnumValN(CheckpointActivations::None, "false", "keep them all"),
          clEnumValN(CheckpointActivations::All, "true", "every segment"),
          clEnumValN(CheckpointActivations::Auto, "auto",
                     "the fewest segments, least FLOPs per byte first, "
                     "with which the plan fits device-memory"))};
  Option<int64_t> numberCheckpoints{
      *this, "number-checkpoints",
      llvm::cl::desc("Group consecutive segments into at most this many "
                     "(0: one per zero.segment id)"),
      llvm::cl::init(0)};
  Option<bool> cpuCheckpointing{
      *this, "cpu-checkpointing",
      llvm::cl::desc("Keep the recomputation's inputs in host memory "
                     "between the forward and the backward pass"),
      llvm::cl::init(false)};
  // Precision.
  Option<Precision> precision{
      *this, "precision", llvm::cl::desc("Parameter and gradient storage"),
      llvm::cl::init(Precision::FP32), getPrecisionValues()};
  Option<double> lossScale{*this, "loss-scale",
                           llvm::cl::desc("fp16: static scale, 0: dynamic"),
                           llvm::cl::init(0.0)};
  Option<int64_t> initialScalePower{
      *this, "initial-scale-power",
      llvm::cl::desc("fp16: first dynamic scale is 2^this"),
      llvm::cl::init(16)};
  // Gradients.
  Option<bool> reduceScatter{*this, "reduce-scatter",
                             llvm::cl::desc("Reduce-scatter gradients"),
                             llvm::cl::init(true)};
  Option<std::string> communicationDataType{
      *this, "communication-data-type",
      llvm::cl::desc("Element type of the gradient reductions: fp32, bf16, "
                     "fp16 (empty: the gradients' own)")};
  Option<std::string> gradAccumDtype{
      *this, "grad-accum-dtype",
      llvm::cl::desc("Type of the sum of the micro-step gradients: fp32, "
                     "bf16, fp16 (empty: the gradients' own)")};
  Option<bool> prescaleGradients{
      *this, "prescale-gradients",
      llvm::cl::desc("Divide gradients by the world size before a sum "
                     "reduction"),
      llvm::cl::init(false)};
  Option<double> gradientPredivideFactor{
      *this, "gradient-predivide-factor",
      llvm::cl::desc("Divide gradients by this before a sum reduction, by "
                     "world size / this after it"),
      llvm::cl::init(1.0)};
  // Optimizer.
  Option<OptimizerType> optimizer{
      *this, "optimizer", llvm::cl::desc("The optimizer"),
      llvm::cl::init(OptimizerType::Adam), getOptimizerTypeValues()};
  Option<double> lr{*this, "lr", llvm::cl::desc("Learning rate"),
                    llvm::cl::init(1e-3)};
  Option<double> beta1{*this, "beta1", llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::init(0.999)};
  Option<double> eps{*this, "eps", llvm::cl::init(1e-8)};
  Option<double> weightDecay{*this, "weight-decay", llvm::cl::init(0.0)};
  Option<bool> adamWMode{*this, "adam-w-mode", llvm::cl::init(true)};
  Option<bool> biasCorrection{*this, "bias-correction", llvm::cl::init(true)};
  Option<bool> amsgrad{*this, "amsgrad", llvm::cl::init(false)};
  Option<double> momentum{*this, "momentum", llvm::cl::init(0.0)};
  Option<double> dampening{*this, "dampening", llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov", llvm::cl::init(false)};
  Option<double> gradientClipping{*this, "gradient-clipping",
                                  llvm::cl::init(0.0)};
  Option<int64_t> subGroupSize{*this, "sub-group-size",
                               llvm::cl::init(1000000000)};
  Option<int64_t> gradientAccumulationSteps{
      *this, "gradient-accumulation-steps",
      llvm::cl::desc("Micro-steps per optimizer step"), llvm::cl::init(1)};
  Option<bool> unrollMicroSteps{
      *this, "unroll-micro-steps",
      llvm::cl::desc("One copy of the micro-step per micro-batch instead of "
                     "the micro-step loop (same results, a step that grows "
                     "with the micro-steps)"),
      llvm::cl::init(false)};
  Option<int64_t> lossScaleWindow{*this, "loss-scale-window",
                                  llvm::cl::init(1000)};
  Option<int64_t> hysteresis{*this, "hysteresis", llvm::cl::init(2)};
  Option<bool> consecutiveHysteresis{*this, "consecutive-hysteresis",
                                     llvm::cl::init(false)};
  Option<double> minLossScale{*this, "min-loss-scale", llvm::cl::init(1.0)};
  Option<bool> loadFromFp32Weights{
      *this, "load-from-fp32-weights",
      llvm::cl::desc("A resumed run loads the fp32 master weights (false: "
                     "sets them from the 16-bit parameters)"),
      llvm::cl::init(true)};
  // Learning-rate schedule (zero-insert-optimizer; docs/Passes.md).
  Option<std::string> lrSchedule{
      *this, "lr-schedule",
      llvm::cl::desc("constant, warmup, warmup-decay, warmup-cosine, "
                     "one-cycle or range-test"),
      llvm::cl::init("constant")};
  Option<int64_t> lastBatchIteration{*this, "last-batch-iteration",
                                     llvm::cl::init(-1)};
  Option<double> warmupMinLr{*this, "warmup-min-lr", llvm::cl::init(0.0)};
  Option<double> warmupMaxLr{*this, "warmup-max-lr", llvm::cl::init(1e-3)};
  Option<int64_t> warmupNumSteps{*this, "warmup-num-steps",
                                 llvm::cl::init(1000)};
  Option<std::string> warmupType{*this, "warmup-type", llvm::cl::init("log")};
  Option<int64_t> totalNumSteps{*this, "total-num-steps", llvm::cl::init(0)};
  Option<double> warmupMinRatio{*this, "warmup-min-ratio", llvm::cl::init(0.0)};
  Option<double> cosMinRatio{*this, "cos-min-ratio", llvm::cl::init(1e-4)};
  Option<double> cycleMinLr{*this, "cycle-min-lr", llvm::cl::init(0.0)};
  Option<double> cycleMaxLr{*this, "cycle-max-lr", llvm::cl::init(0.0)};
  Option<double> decayLrRate{*this, "decay-lr-rate", llvm::cl::init(0.0)};
  Option<int64_t> cycleFirstStepSize{*this, "cycle-first-step-size",
                                     llvm::cl::init(2000)};
  Option<int64_t> cycleSecondStepSize{*this, "cycle-second-step-size",
                                      llvm::cl::init(2000)};
  Option<int64_t> cycleFirstStairCount{*this, "cycle-first-stair-count",
                                       llvm::cl::init(0)};
  Option<int64_t> cycleSecondStairCount{*this, "cycle-second-stair-count",
                                        llvm::cl::init(0)};
  Option<int64_t> decayStepSize{*this, "decay-step-size", llvm::cl::init(0)};
  Option<bool> cycleMomentum{*this, "cycle-momentum", llvm::cl::init(true)};
  Option<double> cycleMinMom{*this, "cycle-min-mom", llvm::cl::init(0.8)};
  Option<double> cycleMaxMom{*this, "cycle-max-mom", llvm::cl::init(0.9)};
  Option<double> decayMomRate{*this, "decay-mom-rate", llvm::cl::init(0.0)};
  Option<double> rangeTestMinLr{*this, "range-test-min-lr",
                                llvm::cl::init(1e-3)};
  Option<int64_t> rangeTestStepSize{*this, "range-test-step-size",
                                    llvm::cl::init(2000)};
  Option<double> rangeTestStepRate{*this, "range-test-step-rate",
                                   llvm::cl::init(1.0)};
  Option<bool> rangeTestStaircase{*this, "range-test-staircase",
                                  llvm::cl::init(false)};
  // Communication schedule.
  Option<int64_t> reduceBucketSize{*this, "reduce-bucket-size",
                                   llvm::cl::init(500000000)};
  Option<int64_t> allgatherBucketSize{*this, "allgather-bucket-size",
                                      llvm::cl::init(500000000)};
  Option<bool> overlapComm{*this, "overlap-comm", llvm::cl::init(false)};
  Option<int64_t> prefetchBucketSize{*this, "prefetch-bucket-size",
                                     llvm::cl::init(50000000)};
  Option<int64_t> maxLiveParameters{*this, "max-live-parameters",
                                    llvm::cl::init(1000000000)};
  // Offload.
  Option<std::string> offloadOptimizer{
      *this, "offload-optimizer",
      llvm::cl::desc("Where the optimizer states live and step: none, cpu or "
                     "nvme (zero-offload-optimizer)"),
      llvm::cl::init("none")};
  Option<double> offloadOptimizerRatio{
      *this, "offload-optimizer-ratio",
      llvm::cl::desc("Stage 3: the fraction of the optimizer's elements "
                     "offloaded"),
      llvm::cl::init(1.0)};
  Option<std::string> offloadOptimizerNvmePath{
      *this, "offload-optimizer-nvme-path",
      llvm::cl::desc("With offload-optimizer=nvme: the swap files' "
                     "directory")};
  Option<int64_t> offloadOptimizerBufferCount{
      *this, "offload-optimizer-buffer-count",
      llvm::cl::desc("With offload-optimizer=nvme: host buffers, one per "
                     "state tensor of a sub-group"),
      llvm::cl::init(4)};
  Option<bool> offloadOptimizerPipelineRead{
      *this, "offload-optimizer-pipeline-read",
      llvm::cl::desc("With offload-optimizer=nvme: read the next sub-group "
                     "during the update"),
      llvm::cl::init(false)};
  Option<bool> offloadOptimizerPipelineWrite{
      *this, "offload-optimizer-pipeline-write",
      llvm::cl::desc("With offload-optimizer=nvme: write the previous "
                     "sub-group during the update"),
      llvm::cl::init(false)};
  Option<std::string> offloadParams{
      *this, "offload-params",
      llvm::cl::desc("Stage 3: where the parameter shards live: none, cpu or "
                     "nvme (zero-offload-params)"),
      llvm::cl::init("none")};
  Option<std::string> offloadParamsNvmePath{
      *this, "offload-params-nvme-path",
      llvm::cl::desc("With offload-params=nvme: the swap files' directory")};
  Option<int64_t> offloadParamsBufferCount{
      *this, "offload-params-buffer-count",
      llvm::cl::desc("With nvme: shards swapped in at once at most"),
      llvm::cl::init(5)};
  Option<int64_t> offloadParamsBufferSize{
      *this, "offload-params-buffer-size",
      llvm::cl::desc("With nvme: elements of the largest shard"),
      llvm::cl::init(100000000)};
  Option<int64_t> offloadParamsMaxInCpu{
      *this, "offload-params-max-in-cpu",
      llvm::cl::desc("With nvme: shard elements kept in host memory instead"),
      llvm::cl::init(1000000000)};
  Option<int64_t> aioBlockSize{*this, "aio-block-size",
                               llvm::cl::init(1048576)};
  Option<int64_t> aioQueueDepth{*this, "aio-queue-depth", llvm::cl::init(8)};
  Option<bool> aioSingleSubmit{*this, "aio-single-submit",
                               llvm::cl::init(false)};
  Option<bool> aioOverlapEvents{*this, "aio-overlap-events",
                                llvm::cl::init(true)};
  // Memory plan.
  Option<bool> contiguousGradients{*this, "contiguous-gradients",
                                   llvm::cl::init(true)};
  Option<std::string> report{*this, "report",
                             llvm::cl::desc("Write the JSON report here")};
  Option<std::string> memoryTimeline{
      *this, "memory-timeline",
      llvm::cl::desc("Draw the memory plan here (.svg or .html)")};
  Option<std::string> deviceMemory{
      *this, "device-memory",
      llvm::cl::desc("Device memory budget, e.g. 80GiB")};
  Option<std::string> hostMemory{
      *this, "host-memory",
      llvm::cl::desc("Host memory budget (offload), e.g. 512GiB")};
};

/// Adds the whole ZeRO pipeline, from the input check to the schedule
/// verifier, to `pm` (which runs on the module).
void buildZeroPipeline(OpPassManager &pm, const ZeroPipelineOptions &options);

/// Registers `--zero-pipeline`.
void registerZeroPipeline();

/// Sets the `entry` option, which every zero pass takes (ZeroStepPass,
/// PassBase.td), on the zero passes of the module pass manager `pm`. Passes
/// given their own `entry=` are set too: one step function per run. Fails,
/// after reporting through `errorHandler`, on a pass that refuses it.
LogicalResult
applyEntryOption(OpPassManager &pm, StringRef entry,
                 function_ref<LogicalResult(const Twine &)> errorHandler);

} // namespace zero
} // namespace mlir

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PIPELINE_H
