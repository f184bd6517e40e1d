//===- PipelineConfig.cpp - DeepSpeed config -> pipeline options ----------===//
//
// Every knob of a resolved DeepSpeed configuration either sets a pipeline
// option here or is returned as a finding: an error for a value the pipeline
// does not implement yet, a warning for a value that cannot change the
// compiled step in this configuration. Keys that the config library itself
// refuses or accepts without effect (KnobSupport) never reach this file.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/PipelineConfig.h"

#include "zero/Config/ConfigSchema.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::zero;
using ::zero::DataType;
using ::zero::OffloadDevice;
using ::zero::OptimizerKind;
using ::zero::SchedulerKind;

namespace {

class Mapper {
public:
  explicit Mapper(const ::zero::DeepSpeedConfig &config) : config(config) {}

  std::vector<ConfigFinding> run(ZeroPipelineOptions &options);

private:
  void error(StringRef key, const Twine &message) {
    findings.push_back({ConfigFinding::Kind::Error, key.str(), message.str()});
  }
  void warning(StringRef key, const Twine &message) {
    findings.push_back(
        {ConfigFinding::Kind::Warning, key.str(), message.str()});
  }

  /// DeepSpeed's default of a scalar knob, from the config library's table.
  static const ::zero::KnobInfo &knob(StringRef path) {
    const ::zero::KnobInfo *info = ::zero::lookupKnob(path);
    assert(info && "unknown knob");
    return *info;
  }
  static bool isDefault(StringRef path, bool value) {
    return knob(path).defaultValue == (value ? "true" : "false");
  }
  static bool isDefault(StringRef path, int64_t value) {
    int64_t defaultValue;
    return !knob(path).defaultValue.getAsInteger(10, defaultValue) &&
           defaultValue == value;
  }
  static bool isDefault(StringRef path, double value) {
    double defaultValue;
    return !knob(path).defaultValue.getAsDouble(defaultValue) &&
           defaultValue == value;
  }
  static bool isDefault(StringRef path, const std::string &value) {
    return knob(path).defaultValue == "null" && value.empty();
  }

  /// A warning when the knob at `path` is not at its default but `reason`
  /// makes it irrelevant.
  template <typename T>
  void noEffectUnlessDefault(StringRef path, const T &value,
                             const Twine &reason) {
    if (!isDefault(path, value))
      warning(path, reason);
  }

  void mapOffload(ZeroPipelineOptions &options);
  void mapMics(ZeroPipelineOptions &options);
  void mapHpz(ZeroPipelineOptions &options);
  void mapQuantizedWeights(ZeroPipelineOptions &options);
  void mapQuantizedNontrainableWeights(ZeroPipelineOptions &options);
  void mapQuantizedGradients(ZeroPipelineOptions &options);
  void mapPrecision(ZeroPipelineOptions &options);
  void mapOptimizer(ZeroPipelineOptions &options);
  void mapScheduler(ZeroPipelineOptions &options);
  void mapGradientTypes(ZeroPipelineOptions &options);

  const ::zero::DeepSpeedConfig &config;
  std::vector<ConfigFinding> findings;
};

void Mapper::mapOffload(ZeroPipelineOptions &options) {
  const ::zero::ZeroOptimizationConfig &z = config.zero;
  // The library has checked the stage and nvme_path rules already.
  const ::zero::OffloadOptimizerConfig &opt = z.offloadOptimizer;
  StringRef p = "zero_optimization.offload_optimizer.";
  if (opt.device == OffloadDevice::Nvme) {
    options.offloadOptimizer = "nvme";
    options.offloadOptimizerNvmePath = opt.nvmePath;
    options.offloadOptimizerBufferCount = opt.bufferCount;
    options.offloadOptimizerPipelineRead = opt.pipelineRead;
    options.offloadOptimizerPipelineWrite = opt.pipelineWrite;
    options.offloadOptimizerRatio = opt.ratio;
    noEffectUnlessDefault((p + "fast_init").str(), opt.fastInit,
                          "it speeds up DeepSpeed's initialization of the "
                          "swap files; zero-run writes the initial states "
                          "into the NVMe arena before the first step");
    noEffectUnlessDefault((p + "pin_memory").str(), opt.pinMemory,
                          "the host arena of the plan is always page-locked "
                          "on the CUDA backend (and plain memory on the host "
                          "backend)");
    // One swap file per rank holds both.
    if (z.offloadParam.device == OffloadDevice::Nvme &&
        z.offloadParam.nvmePath != opt.nvmePath)
      error((p + "nvme_path").str(),
            "\"" + opt.nvmePath +
                "\" differs from zero_optimization.offload_param.nvme_path "
                "\"" +
                z.offloadParam.nvmePath +
                "\": a rank's NVMe arena (optimizer states and parameters) "
                "is one file, in one directory; give both the same path");
  } else if (opt.device == OffloadDevice::Cpu) {
    options.offloadOptimizer = "cpu";
    StringRef nvmeOnly = "it tunes NVMe offload; device is \"cpu\"";
    noEffectUnlessDefault((p + "nvme_path").str(), opt.nvmePath, nvmeOnly);
    noEffectUnlessDefault((p + "buffer_count").str(), opt.bufferCount,
                          nvmeOnly);
    noEffectUnlessDefault((p + "pipeline_read").str(), opt.pipelineRead,
                          nvmeOnly);
    noEffectUnlessDefault((p + "pipeline_write").str(), opt.pipelineWrite,
                          nvmeOnly);
    noEffectUnlessDefault((p + "fast_init").str(), opt.fastInit, nvmeOnly);
    noEffectUnlessDefault((p + "pin_memory").str(), opt.pinMemory,
                          "the host arena of the plan is always page-locked "
                          "on the CUDA backend (and plain memory on the host "
                          "backend)");
    options.offloadOptimizerRatio = opt.ratio;
  } else {
    StringRef why = "zero_optimization.offload_optimizer.device is \"none\"";
    noEffectUnlessDefault((p + "nvme_path").str(), opt.nvmePath, why);
    noEffectUnlessDefault((p + "buffer_count").str(), opt.bufferCount, why);
    noEffectUnlessDefault((p + "pin_memory").str(), opt.pinMemory, why);
    noEffectUnlessDefault((p + "pipeline_read").str(), opt.pipelineRead, why);
    noEffectUnlessDefault((p + "pipeline_write").str(), opt.pipelineWrite, why);
    noEffectUnlessDefault((p + "fast_init").str(), opt.fastInit, why);
    noEffectUnlessDefault((p + "ratio").str(), opt.ratio, why);
  }
  const ::zero::OffloadParamConfig &param = z.offloadParam;
  StringRef q = "zero_optimization.offload_param.";
  if (param.device == OffloadDevice::Nvme) {
    options.offloadParams = "nvme";
    options.offloadParamsNvmePath = param.nvmePath;
    // The swapper's buffers bound the shards and the swap-ins in flight.
    options.offloadParamsBufferCount = param.bufferCount;
    options.offloadParamsBufferSize = param.bufferSize;
    options.offloadParamsMaxInCpu = param.maxInCpu;
    noEffectUnlessDefault((q + "pin_memory").str(), param.pinMemory,
                          "the swap store streams every tensor through its "
                          "own pool of buffers (docs/Runtime.md, \"NVMe swap "
                          "store\")");
  } else if (param.device == OffloadDevice::Cpu) {
    options.offloadParams = "cpu";
    StringRef nvmeOnly = "it tunes NVMe offload; device is \"cpu\"";
    noEffectUnlessDefault((q + "nvme_path").str(), param.nvmePath, nvmeOnly);
    noEffectUnlessDefault((q + "buffer_count").str(), param.bufferCount,
                          nvmeOnly);
    noEffectUnlessDefault((q + "buffer_size").str(), param.bufferSize,
                          nvmeOnly);
    noEffectUnlessDefault((q + "max_in_cpu").str(), param.maxInCpu, nvmeOnly);
    noEffectUnlessDefault((q + "pin_memory").str(), param.pinMemory,
                          "the host arena of the plan is always page-locked "
                          "on the CUDA backend (and plain memory on the host "
                          "backend)");
  } else {
    StringRef why = "zero_optimization.offload_param.device is \"none\"";
    noEffectUnlessDefault((q + "nvme_path").str(), param.nvmePath, why);
    noEffectUnlessDefault((q + "buffer_count").str(), param.bufferCount, why);
    noEffectUnlessDefault((q + "buffer_size").str(), param.bufferSize, why);
    noEffectUnlessDefault((q + "max_in_cpu").str(), param.maxInCpu, why);
    noEffectUnlessDefault((q + "pin_memory").str(), param.pinMemory, why);
  }
  const ::zero::AioConfig &aio = config.aio;
  if (param.device == OffloadDevice::Nvme ||
      opt.device == OffloadDevice::Nvme) {
    options.aioBlockSize = aio.blockSize;
    options.aioQueueDepth = aio.queueDepth;
    options.aioSingleSubmit = aio.singleSubmit;
    options.aioOverlapEvents = aio.overlapEvents;
    noEffectUnlessDefault("aio.thread_count", aio.threadCount,
                          "io_uring needs no submitting threads; the swap "
                          "store's one worker submits and copies");
  } else {
    StringRef why = "no tensor is offloaded to NVMe";
    noEffectUnlessDefault("aio.block_size", aio.blockSize, why);
    noEffectUnlessDefault("aio.queue_depth", aio.queueDepth, why);
    noEffectUnlessDefault("aio.thread_count", aio.threadCount, why);
    noEffectUnlessDefault("aio.single_submit", aio.singleSubmit, why);
    noEffectUnlessDefault("aio.overlap_events", aio.overlapEvents, why);
  }
  // DeepSpeed cuts one flat buffer of the parameters into contiguous
  // partitions, so the gradients of consecutive parameters belong to one
  // rank; round robin interleaves them so that the copies to the host
  // (offload_optimizer) are spread over the ranks. Every layout here cuts
  // each parameter over all the ranks of its group (the world, or a MiCS
  // group): the copies are spread already, which is what the knob asks.
  noEffectUnlessDefault(
      "zero_optimization.round_robin_gradients", z.roundRobinGradients,
      opt.device == OffloadDevice::None
          ? "it spreads the copies of gradients to the host over the ranks, "
            "and zero_optimization.offload_optimizer.device is \"none\": no "
            "gradient is copied to the host"
          : "every parameter is cut across the ranks of its group "
            "(#zero.layout: all ranks, or a MiCS group), so each rank already "
            "holds and copies to the host its own 1/group-size of every "
            "gradient bucket, in parallel with the others: the spreading "
            "round robin gives DeepSpeed's flat partitions");
  // HuggingFace's ZeRO-3 template sets it: accepted, with what it means here.
  if (z.gather16BitWeightsOnModelSave)
    warning("zero_optimization.gather_16bit_weights_on_model_save",
            "saving the model is not part of the compiled step, and zero-run "
            "--export always writes the whole (gathered) parameters, in "
            "fp32");
}

/// MiCS partitions within groups of mics_shard_size ranks, whole nodes of
/// the caller's ranks-per-node (--zero-ranks-per-node): one node or several
/// (zero-partition's mics-shard-size). mics_hierarchical_params_gather
/// gathers across the nodes of a group first, then within each
/// (zero-shard-parameters' mics-hierarchical-params-gather).
void Mapper::mapMics(ZeroPipelineOptions &options) {
  const ::zero::ZeroOptimizationConfig &z = config.zero;
  const int64_t shardSize = z.micsShardSize;
  const int64_t nodeRanks =
      options.ranksPerNode > 0 ? options.ranksPerNode : config.worldSize;
  const bool groups = shardSize > 0 && shardSize != config.worldSize;
  if (groups && z.stage != 3) {
    error("zero_optimization.mics_shard_size",
          "MiCS partitions the parameters: it needs stage 3, but the stage "
          "is " +
              Twine(z.stage));
    return;
  }
  if (groups &&
      (shardSize % nodeRanks != 0 || config.worldSize % shardSize != 0)) {
    error("zero_optimization.mics_shard_size",
          Twine(shardSize) + " must divide the world size (" +
              Twine(config.worldSize) +
              ") and be a multiple of the ranks of one node "
              "(--zero-ranks-per-node, " +
              Twine(nodeRanks) + "): MiCS groups are whole nodes");
    return;
  }
  if (shardSize == 0)
    error("zero_optimization.mics_shard_size",
          "0 ranks cannot hold the model states; use -1 (off) or the ranks "
          "of one node");
  options.micsShardSize = groups ? shardSize : 0;
  // A group of several nodes (the world, if so set) has something to gather
  // across nodes first.
  if (shardSize > nodeRanks && nodeRanks > 1 && z.stage == 3) {
    options.micsHierarchicalParamsGather = z.micsHierarchicalParamsGather;
    return;
  }
  noEffectUnlessDefault(
      "zero_optimization.mics_hierarchical_params_gather",
      z.micsHierarchicalParamsGather,
      shardSize <= 0 ? "mics_shard_size does not turn MiCS on"
      : z.stage != 3 ? "only stage 3 gathers parameters"
      : nodeRanks == 1
          ? "a node has one rank, so the gather across the nodes is the "
            "whole gather"
          : "the MiCS groups are the ranks of one node, so every parameter "
            "gather stays within the node already");
}

/// ZeRO++ hpZ: a secondary partition across the ranks of one node that the
/// gathers after the first read (zero-shard-parameters' hpz-partition-size).
void Mapper::mapHpz(ZeroPipelineOptions &options) {
  const ::zero::ZeroOptimizationConfig &z = config.zero;
  const int64_t size = z.hpzPartitionSize;
  const int64_t nodeRanks =
      options.ranksPerNode > 0 ? options.ranksPerNode : config.worldSize;
  if (size == 1 || size == config.worldSize)
    return;
  StringRef key = "zero_optimization.zero_hpz_partition_size";
  if (z.stage != 3)
    return error(key, "hpZ partitions gathered parameters: it needs stage 3, "
                      "but the stage is " +
                          Twine(z.stage));
  if (options.micsShardSize > 0)
    return error(key, "MiCS (mics_shard_size) already keeps the parameters "
                      "within a node; use one of the two");
  if (size != nodeRanks)
    return error(
        key, Twine(size) + " must be 1, the world size (" +
                 Twine(config.worldSize) +
                 ") or the ranks of one node (--zero-ranks-per-node, " +
                 Twine(nodeRanks) + "): the secondary partition is a node's");
  options.hpzPartitionSize = size;
}

/// Elements per scale of qwZ's int8 blocks: at most 1/512 of the bytes go to
/// scales, and a block's error bound (absmax / 254) follows the largest
/// magnitude among 2048 neighbours.
constexpr int64_t kQuantizedWeightsBlockSize = 2048;

/// ZeRO++ qwZ: the forward's parameter gathers carry int8 values
/// (zero-shard-parameters' quantize-weights-block-size).
void Mapper::mapQuantizedWeights(ZeroPipelineOptions &options) {
  const ::zero::ZeroOptimizationConfig &z = config.zero;
  if (!z.quantizedWeights)
    return;
  if (z.stage != 3)
    return error("zero_optimization.zero_quantized_weights",
                 "qwZ quantizes the gathers of partitioned parameters: it "
                 "needs stage 3, but the stage is " +
                     Twine(z.stage));
  options.quantizeWeightsBlockSize = kQuantizedWeightsBlockSize;
}

/// ZeRO++'s quantized non-trainable weights: the shards of frozen
/// parameters stored as qwZ's int8 blocks (zero-shard-parameters'
/// quantize-frozen-weights-block-size).
void Mapper::mapQuantizedNontrainableWeights(ZeroPipelineOptions &options) {
  const ::zero::ZeroOptimizationConfig &z = config.zero;
  constexpr const char *key =
      "zero_optimization.zero_quantized_nontrainable_weights";
  if (!z.quantizedNontrainableWeights)
    return;
  if (z.stage != 3)
    return error(key, "it stores the shards of frozen parameters quantized: "
                      "it needs stage 3, but the stage is " +
                          Twine(z.stage));
  if (z.offloadParam.device != ::zero::OffloadDevice::None)
    return error(key, "the quantized shards stay in device memory, but "
                      "zero_optimization.offload_param moves the parameters "
                      "off the device");
  options.quantizeFrozenWeightsBlockSize = kQuantizedWeightsBlockSize;
}

/// Elements per scale of qgZ's int4 blocks: scales add 1/16 to the half
/// byte of each value, and a block's error bound (absmax / 14) follows the
/// largest magnitude among 128 neighbours, about a row of a weight as
/// DeepSpeed's groups (numel / its largest dimension). Blocks of 256 and 512
/// trained the demo model with all of ZeRO++ to a final loss 6.5% and 8.5%
/// above ZeRO-3's (benchmarks/zeropp_demo.py; docs/PERFORMANCE.md).
constexpr int64_t kQuantizedGradientsBlockSize = 128;

/// ZeRO++ qgZ: the gradients' reduce-scatters carry int4 values through a
/// hierarchical all-to-all (zero-reduce-gradients'
/// quantize-gradients-block-size).
void Mapper::mapQuantizedGradients(ZeroPipelineOptions &options) {
  const ::zero::ZeroOptimizationConfig &z = config.zero;
  if (!z.quantizedGradients)
    return;
  if (z.stage != 3)
    return error("zero_optimization.zero_quantized_gradients",
                 "qgZ quantizes the gradients' reduce-scatters of ZeRO++: it "
                 "needs stage 3, but the stage is " +
                     Twine(z.stage));
  if (!z.reduceScatter)
    return error("zero_optimization.zero_quantized_gradients",
                 "qgZ quantizes the gradients' reduce-scatters, but "
                 "zero_optimization.reduce_scatter is false (all-reduces)");
  options.quantizeGradientsBlockSize = kQuantizedGradientsBlockSize;
}

void Mapper::mapPrecision(ZeroPipelineOptions &options) {
  const ::zero::FP16Config &fp16 = config.fp16;
  if (config.bf16.enabled)
    options.precision = Precision::BF16;
  else if (fp16.enabled)
    options.precision = Precision::FP16;
  else
    options.precision = Precision::FP32;
  options.lossScale = fp16.lossScale;
  options.initialScalePower = fp16.initialScalePower;
  options.lossScaleWindow = fp16.lossScaleWindow;
  options.hysteresis = fp16.hysteresis;
  options.consecutiveHysteresis = fp16.consecutiveHysteresis;
  options.minLossScale = fp16.minLossScale;
  // Where the key has no effect its warning is the config's, naming the key
  // (the pass would warn again). DeepSpeed's fp16 optimizer without ZeRO
  // always loads the fp32 weights.
  if (config.bf16.enabled || (fp16.enabled && config.zero.stage >= 1))
    options.loadFromFp32Weights = config.zero.loadFromFp32Weights;
  else
    noEffectUnlessDefault("zero_optimization.load_from_fp32_weights",
                          config.zero.loadFromFp32Weights,
                          fp16.enabled
                              ? "DeepSpeed's fp16 optimizer at stage 0 always "
                                "loads the fp32 master weights"
                              : "fp32 training has no fp32 master weights "
                                "besides the parameters");

  if (fp16.enabled && fp16.autoCast)
    error("fp16.auto_cast",
          "true is not supported yet: zero-mixed-precision stores parameters "
          "and gradients in fp16 but keeps the inputs and the arithmetic in "
          "the training step's own type; casting the inputs to fp16 would "
          "change the model's arithmetic");
  // Knobs of the fp16 section without fp16, and dynamic-scaling knobs with a
  // static scale.
  if (!fp16.enabled) {
    StringRef why = "fp16.enabled is false";
    noEffectUnlessDefault("fp16.auto_cast", fp16.autoCast, why);
    noEffectUnlessDefault("fp16.loss_scale", fp16.lossScale, why);
    noEffectUnlessDefault("fp16.initial_scale_power", fp16.initialScalePower,
                          why);
    noEffectUnlessDefault("fp16.loss_scale_window", fp16.lossScaleWindow, why);
    noEffectUnlessDefault("fp16.hysteresis", fp16.hysteresis, why);
    noEffectUnlessDefault("fp16.consecutive_hysteresis",
                          fp16.consecutiveHysteresis, why);
    noEffectUnlessDefault("fp16.min_loss_scale", fp16.minLossScale, why);
  } else if (fp16.lossScale > 0) {
    char scale[32];
    snprintf(scale, sizeof(scale), "%g", fp16.lossScale);
    std::string why = std::string("fp16.loss_scale is ") + scale +
                      ", a static scale (0 selects dynamic loss scaling)";
    noEffectUnlessDefault("fp16.initial_scale_power", fp16.initialScalePower,
                          why);
    noEffectUnlessDefault("fp16.loss_scale_window", fp16.lossScaleWindow, why);
    noEffectUnlessDefault("fp16.hysteresis", fp16.hysteresis, why);
    noEffectUnlessDefault("fp16.consecutive_hysteresis",
                          fp16.consecutiveHysteresis, why);
    noEffectUnlessDefault("fp16.min_loss_scale", fp16.minLossScale, why);
  }
}

void Mapper::mapOptimizer(ZeroPipelineOptions &options) {
  const ::zero::OptimizerConfig &opt = config.optimizer;
  // No optimizer section: DeepSpeed's client optimizer is outside the
  // config; zero-opt's default is Adam (adam_w_mode) with its defaults. The
  // library fills the parameters with DeepSpeed's defaults either way.
  switch (opt.kind) {
  case OptimizerKind::None:
  case OptimizerKind::Adam:
    options.optimizer = OptimizerType::Adam;
    break;
  case OptimizerKind::AdamW:
    options.optimizer = OptimizerType::AdamW;
    break;
  case OptimizerKind::SGD:
    options.optimizer = OptimizerType::Sgd;
    break;
  }
  options.lr = opt.lr;
  options.weightDecay = opt.weightDecay;
  if (opt.kind == OptimizerKind::SGD) {
    options.momentum = opt.momentum;
    options.dampening = opt.dampening;
    options.nesterov = opt.nesterov;
  } else {
    options.beta1 = opt.betas[0];
    options.beta2 = opt.betas[1];
    options.eps = opt.eps;
    options.adamWMode = opt.adamWMode;
    options.biasCorrection = opt.biasCorrection;
    options.amsgrad = opt.amsgrad;
  }
  options.gradientClipping = config.gradientClipping;
}

void Mapper::mapScheduler(ZeroPipelineOptions &options) {
  const ::zero::SchedulerConfig &sched = config.scheduler;
  switch (sched.kind) {
  case SchedulerKind::None:
    options.lrSchedule = "constant";
    return;
  case SchedulerKind::WarmupLR:
    options.lrSchedule = "warmup";
    break;
  case SchedulerKind::WarmupDecayLR:
    options.lrSchedule = "warmup-decay";
    break;
  case SchedulerKind::WarmupCosineLR:
    options.lrSchedule = "warmup-cosine";
    break;
  case SchedulerKind::OneCycle:
    options.lrSchedule = "one-cycle";
    break;
  case SchedulerKind::LRRangeTest:
    options.lrSchedule = "range-test";
    break;
  }
  options.lastBatchIteration = sched.lastBatchIteration;
  options.warmupMinLr = sched.warmupMinLr;
  options.warmupMaxLr = sched.warmupMaxLr;
  options.warmupNumSteps = sched.warmupNumSteps;
  options.warmupType =
      sched.warmupType == ::zero::WarmupType::Linear ? "linear" : "log";
  options.totalNumSteps = sched.totalNumSteps;
  options.warmupMinRatio = sched.warmupMinRatio;
  options.cosMinRatio = sched.cosMinRatio;
  options.cycleMinLr = sched.cycleMinLr;
  options.cycleMaxLr = sched.cycleMaxLr;
  options.decayLrRate = sched.decayLrRate;
  options.cycleFirstStepSize = sched.cycleFirstStepSize;
  options.cycleSecondStepSize = sched.cycleSecondStepSize;
  options.cycleFirstStairCount = sched.cycleFirstStairCount;
  options.cycleSecondStairCount = sched.cycleSecondStairCount;
  options.decayStepSize = sched.decayStepSize;
  options.cycleMomentum = sched.cycleMomentum;
  options.cycleMinMom = sched.cycleMinMom;
  options.cycleMaxMom = sched.cycleMaxMom;
  options.decayMomRate = sched.decayMomRate;
  options.rangeTestMinLr = sched.lrRangeTestMinLr;
  options.rangeTestStepSize = sched.lrRangeTestStepSize;
  options.rangeTestStepRate = sched.lrRangeTestStepRate;
  options.rangeTestStaircase = sched.lrRangeTestStaircase;
}

/// DeepSpeed's name of a gradient data type, "" for null.
StringRef getDataTypeName(DataType type) {
  switch (type) {
  case DataType::None:
    return "";
  case DataType::FP16:
    return "fp16";
  case DataType::BF16:
    return "bf16";
  case DataType::FP32:
    return "fp32";
  }
  llvm_unreachable("unknown data type");
}

void Mapper::mapGradientTypes(ZeroPipelineOptions &options) {
  options.communicationDataType =
      getDataTypeName(config.communicationDataType).str();
  options.gradAccumDtype =
      getDataTypeName(config.dataTypes.gradAccumDtype).str();
  options.prescaleGradients = config.prescaleGradients;
  options.gradientPredivideFactor = config.gradientPredivideFactor;

  // The type zero-mixed-precision stores gradients in.
  DataType gradType = config.bf16.enabled   ? DataType::BF16
                      : config.fp16.enabled ? DataType::FP16
                                            : DataType::FP32;
  StringRef gradName = getDataTypeName(gradType);
  StringRef why = config.bf16.enabled   ? "bf16.enabled is true"
                  : config.fp16.enabled ? "fp16.enabled is true"
                                        : "fp16 and bf16 are not enabled";
  // Under fp32 the step's own type may be f64, which fp32 does change.
  if (gradType != DataType::FP32 && config.communicationDataType == gradType)
    warning("communication_data_type",
            "the gradients are " + gradName + " already (" + why + ")");
  DataType sumType = config.dataTypes.gradAccumDtype;
  if (sumType != DataType::None && sumType != DataType::FP32 &&
      sumType != gradType)
    error("data_types.grad_accum_dtype",
          "\"" + getDataTypeName(sumType) + "\": the gradients are " +
              gradName + " (" + why + "), and " + getDataTypeName(sumType) +
              " cannot hold every " + gradName + " value; accumulate them in " +
              (gradType == DataType::FP32 ? "fp32"
                                          : (gradName + " or fp32").str()));
  else if (sumType != DataType::None && config.gradientAccumulationSteps <= 1)
    warning("data_types.grad_accum_dtype", "gradient_accumulation_steps is 1");
  if (config.prescaleGradients)
    noEffectUnlessDefault("gradient_predivide_factor",
                          config.gradientPredivideFactor,
                          "prescale_gradients is true, which divides by the "
                          "world size instead");
}

std::vector<ConfigFinding> Mapper::run(ZeroPipelineOptions &options) {
  const ::zero::ZeroOptimizationConfig &z = config.zero;
  options.worldSize = config.worldSize;
  // Partitioning (zero-partition, zero-shard-parameters).
  options.stage = z.stage;
  options.paramPersistenceThreshold = z.paramPersistenceThreshold;
  options.modelPersistenceThreshold = z.modelPersistenceThreshold;
  options.maxReuseDistance = z.maxReuseDistance;
  options.ignoreUnusedParameters = z.ignoreUnusedParameters;
  mapMics(options);
  mapHpz(options);
  mapQuantizedWeights(options);
  mapQuantizedNontrainableWeights(options);
  mapQuantizedGradients(options);
  // Gradients (zero-accumulate-gradients, zero-reduce-gradients).
  options.gradientAccumulationSteps = config.gradientAccumulationSteps;
  options.reduceScatter = z.reduceScatter;
  mapGradientTypes(options);
  // Communication schedule (zero-bucket, zero-schedule-prefetch).
  options.reduceBucketSize = z.reduceBucketSize;
  options.allgatherBucketSize = z.allgatherBucketSize;
  options.overlapComm = z.overlapComm;
  options.prefetchBucketSize = z.prefetchBucketSize;
  options.maxLiveParameters = z.maxLiveParameters;
  // Optimizer step (zero-insert-optimizer) and memory plan.
  options.subGroupSize = z.subGroupSize;
  options.contiguousGradients = z.contiguousGradients;
  mapPrecision(options);
  mapOptimizer(options);
  mapScheduler(options);
  mapOffload(options);

  // Activation checkpointing: the section tunes it, the driver's
  // --zero-checkpoint-activations (options.checkpointActivations, set by the
  // caller) turns it on, as the model code does in DeepSpeed.
  options.numberCheckpoints = config.activationCheckpointing.numberCheckpoints;
  options.cpuCheckpointing = config.activationCheckpointing.cpuCheckpointing;
  StringRef off = "activation checkpointing is off: zero-opt "
                  "--zero-checkpoint-activations (the pipeline's "
                  "checkpoint-activations) turns it on";
  // null (0) is the default.
  bool on = options.checkpointActivations != CheckpointActivations::None;
  if (!on && config.activationCheckpointing.numberCheckpoints != 0)
    warning("activation_checkpointing.number_checkpoints", off);
  if (!on && config.activationCheckpointing.cpuCheckpointing)
    warning("activation_checkpointing.cpu_checkpointing", off);

  // Knobs that only some stages read (the library warns about the stage-3
  // ones below stage 3).
  if (z.stage == 0) {
    noEffectUnlessDefault("zero_optimization.reduce_scatter", z.reduceScatter,
                          "stage 0 all-reduces every gradient");
    noEffectUnlessDefault("zero_optimization.allgather_bucket_size",
                          z.allgatherBucketSize, "stage 0 all-gathers nothing");
  }
  return std::move(findings);
}

/// Where each knob that the config library supports goes: a pipeline option
/// (and the pass that reads it), or the reason applyDeepSpeedConfig refuses
/// it or warns about it. getKnobRoutes() checks this list against the
/// library's table, so that a new knob cannot be ignored silently.
struct KnobRoute {
  llvm::StringLiteral path;
  llvm::StringLiteral route;
};

const KnobRoute kKnobRoutes[] = {
    {"zero_optimization.stage", "stage (zero-partition)"},
    {"activation_checkpointing.number_checkpoints",
     "number-checkpoints (zero-checkpoint-activations); no effect without "
     "--zero-checkpoint-activations (a warning)"},
    {"activation_checkpointing.cpu_checkpointing",
     "cpu-checkpointing (zero-checkpoint-activations); no effect without "
     "--zero-checkpoint-activations (a warning)"},
    {"zero_optimization.contiguous_gradients",
     "contiguous-gradients (zero-plan-memory)"},
    {"zero_optimization.reduce_scatter",
     "reduce-scatter (zero-reduce-gradients)"},
    {"zero_optimization.reduce_bucket_size",
     "reduce-bucket-size (zero-bucket)"},
    {"zero_optimization.allgather_bucket_size",
     "allgather-bucket-size (zero-bucket)"},
    {"zero_optimization.overlap_comm", "overlap-comm (zero-schedule-prefetch)"},
    {"zero_optimization.offload_optimizer.device",
     "offload-optimizer (zero-offload-optimizer)"},
    {"zero_optimization.offload_optimizer.nvme_path",
     "offload-optimizer-nvme-path (zero-offload-optimizer), recorded in the "
     "schedule; with offload_param on NVMe it must be the same path"},
    {"zero_optimization.offload_optimizer.buffer_count",
     "offload-optimizer-buffer-count (zero-offload-optimizer), with NVMe"},
    {"zero_optimization.offload_optimizer.pin_memory",
     "no effect (a warning): the host arena is always page-locked on CUDA"},
    {"zero_optimization.offload_optimizer.pipeline_read",
     "offload-optimizer-pipeline-read (zero-offload-optimizer), with NVMe"},
    {"zero_optimization.offload_optimizer.pipeline_write",
     "offload-optimizer-pipeline-write (zero-offload-optimizer), with NVMe"},
    {"zero_optimization.offload_optimizer.fast_init",
     "no effect (a warning): zero-run writes the initial states itself"},
    {"zero_optimization.offload_optimizer.ratio",
     "offload-optimizer-ratio (zero-offload-optimizer); no effect without "
     "offload"},
    {"zero_optimization.offload_param.device",
     "offload-params (zero-offload-params)"},
    {"aio.block_size",
     "aio-block-size (zero-offload-optimizer, zero-offload-params), with "
     "NVMe"},
    {"aio.queue_depth",
     "aio-queue-depth (zero-offload-optimizer, zero-offload-params), with "
     "NVMe"},
    {"aio.thread_count", "no effect (a warning): io_uring needs no threads"},
    {"aio.single_submit",
     "aio-single-submit (zero-offload-optimizer, zero-offload-params), with "
     "NVMe"},
    {"aio.overlap_events",
     "aio-overlap-events (zero-offload-optimizer, zero-offload-params), with "
     "NVMe"},
    {"zero_optimization.offload_param.nvme_path",
     "offload-params-nvme-path (zero-offload-params), recorded in the "
     "schedule"},
    {"zero_optimization.offload_param.buffer_count",
     "offload-params-buffer-count (zero-offload-params), with NVMe: shards "
     "swapped in at once"},
    {"zero_optimization.offload_param.buffer_size",
     "offload-params-buffer-size (zero-offload-params), with NVMe: the "
     "largest shard"},
    {"zero_optimization.offload_param.max_in_cpu",
     "offload-params-max-in-cpu (zero-offload-params), with NVMe: shard "
     "elements kept in host memory"},
    {"zero_optimization.offload_param.pin_memory",
     "no effect (a warning): the host arena is always page-locked on CUDA"},
    {"zero_optimization.sub_group_size",
     "sub-group-size (zero-insert-optimizer; zero-offload-optimizer with "
     "NVMe)"},
    {"zero_optimization.prefetch_bucket_size",
     "prefetch-bucket-size (zero-bucket, zero-schedule-prefetch)"},
    {"zero_optimization.param_persistence_threshold",
     "param-persistence-threshold (zero-partition)"},
    {"zero_optimization.model_persistence_threshold",
     "model-persistence-threshold (zero-partition)"},
    {"zero_optimization.max_live_parameters",
     "max-live-parameters (zero-schedule-prefetch)"},
    {"zero_optimization.max_reuse_distance",
     "max-reuse-distance (zero-shard-parameters)"},
    {"zero_optimization.ignore_unused_parameters",
     "ignore-unused-parameters (zero-verify-train-step)"},
    {"zero_optimization.gather_16bit_weights_on_model_save",
     "no effect: a warning when true (zero-run --export always gathers)"},
    {"zero_optimization.load_from_fp32_weights",
     "load-from-fp32-weights (zero-insert-optimizer), recorded in the "
     "schedule; no effect in fp32 (a warning)"},
    {"zero_optimization.mics_shard_size",
     "mics-shard-size (zero-partition): a divisor of the world size, whole "
     "nodes (a multiple of --zero-ranks-per-node), stage 3"},
    {"zero_optimization.zero_quantized_weights",
     "quantize-weights-block-size = 2048 (zero-shard-parameters), stage 3"},
    {"zero_optimization.zero_quantized_nontrainable_weights",
     "quantize-frozen-weights-block-size = 2048 (zero-shard-parameters), "
     "stage 3, not with offload_param"},
    {"zero_optimization.zero_quantized_gradients",
     "quantize-gradients-block-size = 128 (zero-reduce-gradients), stage 3"},
    {"zero_optimization.zero_hpz_partition_size",
     "hpz-partition-size (zero-shard-parameters): 1, the world size or the "
     "ranks of one node (--zero-ranks-per-node), stage 3"},
    {"zero_optimization.mics_hierarchical_params_gather",
     "mics-hierarchical-params-gather (zero-shard-parameters) where a MiCS "
     "group spans nodes, stage 3; else no effect (a warning)"},
    {"zero_optimization.round_robin_gradients",
     "no effect: a warning when true (every parameter is cut across the "
     "ranks of its group, so the copies to the host are spread already)"},
    {"fp16.enabled", "precision=fp16 (zero-mixed-precision)"},
    {"fp16.auto_cast", "refused unless false (would change the arithmetic)"},
    {"fp16.loss_scale", "loss-scale (zero-mixed-precision)"},
    {"fp16.initial_scale_power", "initial-scale-power (zero-mixed-precision)"},
    {"fp16.loss_scale_window", "loss-scale-window (zero-insert-optimizer)"},
    {"fp16.hysteresis", "hysteresis (zero-insert-optimizer)"},
    {"fp16.consecutive_hysteresis",
     "consecutive-hysteresis (zero-insert-optimizer)"},
    {"fp16.min_loss_scale", "min-loss-scale (zero-insert-optimizer)"},
    {"bf16.enabled", "precision=bf16 (zero-mixed-precision)"},
    {"optimizer.type", "optimizer (zero-insert-optimizer)"},
    {"optimizer.params.lr", "lr (zero-insert-optimizer)"},
    {"optimizer.params.betas", "beta1, beta2 (zero-insert-optimizer)"},
    {"optimizer.params.eps", "eps (zero-insert-optimizer)"},
    {"optimizer.params.weight_decay", "weight-decay (zero-insert-optimizer)"},
    {"optimizer.params.adam_w_mode", "adam-w-mode (zero-insert-optimizer)"},
    {"optimizer.params.bias_correction",
     "bias-correction (zero-insert-optimizer)"},
    {"optimizer.params.amsgrad", "amsgrad (zero-insert-optimizer)"},
    {"optimizer.params.momentum", "momentum (zero-insert-optimizer)"},
    {"optimizer.params.dampening", "dampening (zero-insert-optimizer)"},
    {"optimizer.params.nesterov", "nesterov (zero-insert-optimizer)"},
    {"train_batch_size",
     "gradient-accumulation-steps (zero-accumulate-gradients), by the batch "
     "rule"},
    {"train_micro_batch_size_per_gpu",
     "checked against the training step's micro-batch; "
     "gradient-accumulation-steps by the batch rule"},
    {"gradient_accumulation_steps",
     "gradient-accumulation-steps (zero-accumulate-gradients)"},
    {"prescale_gradients", "prescale-gradients (zero-reduce-gradients)"},
    {"gradient_predivide_factor",
     "gradient-predivide-factor (zero-reduce-gradients)"},
    {"communication_data_type",
     "communication-data-type (zero-reduce-gradients)"},
    {"data_types.grad_accum_dtype",
     "grad-accum-dtype (zero-accumulate-gradients, zero-reduce-gradients)"},
    {"gradient_clipping", "gradient-clipping (zero-insert-optimizer)"},
    {"scheduler.type", "lr-schedule (zero-insert-optimizer)"},
    {"scheduler.params.last_batch_iteration",
     "last-batch-iteration (zero-insert-optimizer)"},
    {"scheduler.params.warmup_min_lr", "warmup-min-lr (zero-insert-optimizer)"},
    {"scheduler.params.warmup_max_lr", "warmup-max-lr (zero-insert-optimizer)"},
    {"scheduler.params.warmup_num_steps",
     "warmup-num-steps (zero-insert-optimizer)"},
    {"scheduler.params.warmup_type", "warmup-type (zero-insert-optimizer)"},
    {"scheduler.params.total_num_steps",
     "total-num-steps (zero-insert-optimizer)"},
    {"scheduler.params.warmup_min_ratio",
     "warmup-min-ratio (zero-insert-optimizer)"},
    {"scheduler.params.cos_min_ratio", "cos-min-ratio (zero-insert-optimizer)"},
    {"scheduler.params.cycle_min_lr", "cycle-min-lr (zero-insert-optimizer)"},
    {"scheduler.params.cycle_max_lr", "cycle-max-lr (zero-insert-optimizer)"},
    {"scheduler.params.decay_lr_rate", "decay-lr-rate (zero-insert-optimizer)"},
    {"scheduler.params.cycle_first_step_size",
     "cycle-first-step-size (zero-insert-optimizer)"},
    {"scheduler.params.cycle_second_step_size",
     "cycle-second-step-size (zero-insert-optimizer)"},
    {"scheduler.params.cycle_first_stair_count",
     "cycle-first-stair-count (zero-insert-optimizer)"},
    {"scheduler.params.cycle_second_stair_count",
     "cycle-second-stair-count (zero-insert-optimizer)"},
    {"scheduler.params.decay_step_size",
     "decay-step-size (zero-insert-optimizer)"},
    {"scheduler.params.cycle_momentum",
     "cycle-momentum (zero-insert-optimizer)"},
    {"scheduler.params.cycle_min_mom", "cycle-min-mom (zero-insert-optimizer)"},
    {"scheduler.params.cycle_max_mom", "cycle-max-mom (zero-insert-optimizer)"},
    {"scheduler.params.decay_mom_rate",
     "decay-mom-rate (zero-insert-optimizer)"},
    {"scheduler.params.lr_range_test_min_lr",
     "range-test-min-lr (zero-insert-optimizer)"},
    {"scheduler.params.lr_range_test_step_size",
     "range-test-step-size (zero-insert-optimizer)"},
    {"scheduler.params.lr_range_test_step_rate",
     "range-test-step-rate (zero-insert-optimizer)"},
    {"scheduler.params.lr_range_test_staircase",
     "range-test-staircase (zero-insert-optimizer)"},
};

} // namespace

std::vector<ConfigFinding>
mlir::zero::applyDeepSpeedConfig(const ::zero::DeepSpeedConfig &config,
                                 ZeroPipelineOptions &options) {
  return Mapper(config).run(options);
}

::zero::ResolveContext mlir::zero::inferResolveContext(ModuleOp module,
                                                       StringRef entry,
                                                       int64_t worldSize) {
  ::zero::ResolveContext context;
  context.worldSize = worldSize;
  // lookupTrainStep reports a missing step; the pipeline reports it again.
  ScopedDiagnosticHandler silence(module.getContext(),
                                  [](Diagnostic &) { return success(); });
  FailureOr<func::FuncOp> step = lookupTrainStep(module, entry);
  if (failed(step))
    return context;

  llvm::DenseMap<int64_t, int64_t> dimCount;
  std::optional<::zero::ParamPrecision> precision;
  for (const ParamArg &param : getParamArgs(*step)) {
    auto type = dyn_cast<RankedTensorType>(param.arg.getType());
    if (!type)
      continue;
    for (int64_t dim : type.getShape())
      if (!ShapedType::isDynamic(dim))
        ++dimCount[dim];
    Type element = type.getElementType();
    ::zero::ParamPrecision mine =
        element.isBF16()          ? ::zero::ParamPrecision::BF16
        : element.isF16()         ? ::zero::ParamPrecision::F16
        : isa<FloatType>(element) ? ::zero::ParamPrecision::F32
                                  : ::zero::ParamPrecision::Unknown;
    if (!precision)
      precision = mine;
    else if (*precision != mine)
      precision = ::zero::ParamPrecision::Unknown;
  }
  context.precision = precision.value_or(::zero::ParamPrecision::Unknown);
  int64_t bestCount = 0;
  for (auto [dim, count] : dimCount)
    if (count > bestCount || (count == bestCount && dim > context.hiddenSize)) {
      context.hiddenSize = dim;
      bestCount = count;
    }

  for (unsigned i = 0, e = step->getNumArguments(); i < e; ++i) {
    if (!step->getArgAttr(i, ZeroDialect::getDataAttrName()))
      continue;
    auto type = dyn_cast<RankedTensorType>(step->getArgumentTypes()[i]);
    if (type && type.getRank() > 0 && !type.isDynamicDim(0)) {
      context.microBatchSize = type.getDimSize(0);
      break;
    }
  }
  return context;
}

llvm::SMDiagnostic
mlir::zero::diagnoseFinding(const ::zero::DeepSpeedConfigSettings &settings,
                            const ConfigFinding &finding) {
  bool error = finding.kind == ConfigFinding::Kind::Error;
  ::zero::DeepSpeedConfigSettings::KnobOrigin origin =
      settings.getKnobOrigin(finding.key);
  return settings.diagnose(
      origin.loc,
      error ? llvm::SourceMgr::DK_Error : llvm::SourceMgr::DK_Warning,
      origin.name + (error ? ": " : " has no effect: ") + finding.message);
}

std::vector<std::pair<std::string, std::string>> mlir::zero::getKnobRoutes() {
  std::vector<std::pair<std::string, std::string>> routes;
  for (const ::zero::KnobInfo &knob : ::zero::getKnobs()) {
    std::string route;
    if (knob.support == ::zero::KnobSupport::RefusedUnlessDefault)
      route = "refused by the config library unless at its default";
    else if (knob.support == ::zero::KnobSupport::NoEffect)
      route = "no effect: a warning from the config library";
    else if (knob.kind == ::zero::KnobKind::Section)
      route = "section";
    for (const KnobRoute &known : kKnobRoutes)
      if (known.path == knob.path)
        route = known.route.str();
    if (route.empty())
      route = "UNHANDLED";
    routes.push_back({knob.path.str(), route});
  }
  return routes;
}
