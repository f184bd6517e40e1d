//===- ConfigBinding.cpp - DeepSpeed config -> pipeline options ---------===//
//
// Every knob of a resolved DeepSpeed configuration either sets a pipeline
// option or is returned as a finding: an error for a value the pipeline
// does not implement yet, a warning for a value that cannot change the
// compiled step in this configuration. ConfigBindings.def says which: its
// plain rows are applied by one loop, the rules here do what is really
// conditional. Keys that the config library itself refuses or accepts
// without effect (KnobSupport) never reach this file.
//
//===----------------------------------------------------------------------===//

#include "zero/Pipelines/ConfigBinding.h"

#include "zero/Config/ConfigSchema.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cstdio>
#include <optional>

using namespace mlir;
using namespace mlir::zero;
using ::zero::DataType;
using ::zero::OffloadDevice;
using ::zero::OptimizerKind;
using ::zero::SchedulerKind;

namespace {

// The predicates of ConfigBindings.def's ZERO_CONFIG_OPTION_IF rows.
bool offloadsOptimizer(const ::zero::DeepSpeedConfig &config) {
  return config.zero.offloadOptimizer.device != OffloadDevice::None;
}
bool offloadsOptimizerToNvme(const ::zero::DeepSpeedConfig &config) {
  return config.zero.offloadOptimizer.device == OffloadDevice::Nvme;
}
bool offloadsParamsToNvme(const ::zero::DeepSpeedConfig &config) {
  return config.zero.offloadParam.device == OffloadDevice::Nvme;
}
bool offloadsToNvme(const ::zero::DeepSpeedConfig &config) {
  return offloadsOptimizerToNvme(config) || offloadsParamsToNvme(config);
}
/// Adam, AdamW, or no optimizer section (zero-opt's default is Adam).
bool isAdamFamily(const ::zero::DeepSpeedConfig &config) {
  return config.optimizer.kind != OptimizerKind::SGD;
}
bool isSgd(const ::zero::DeepSpeedConfig &config) {
  return config.optimizer.kind == OptimizerKind::SGD;
}
bool hasScheduler(const ::zero::DeepSpeedConfig &config) {
  return config.scheduler.kind != SchedulerKind::None;
}
/// Whether the step keeps fp32 master weights besides its 16-bit
/// parameters, which load_from_fp32_weights restores from: bf16, and
/// DeepSpeed's fp16 optimizer under ZeRO (at stage 0 it always loads them).
bool hasFp32MasterWeights(const ::zero::DeepSpeedConfig &config) {
  return config.bf16.enabled ||
         (config.fp16.enabled && config.zero.stage >= 1);
}

/// The value type of a pipeline option.
template <typename T, typename Parser>
T getOptionValueType(const mlir::detail::PassOptions::Option<T, Parser> &);

/// The resolved value of `key`, of the type of `option`.
template <typename Option>
auto getKeyValue(const ::zero::DeepSpeedConfig &config, StringRef key,
                 const Option &option) {
  using T = decltype(getOptionValueType(option));
  const T *value = config.lookupValue<T>(key);
  if (!value)
    llvm::report_fatal_error("ConfigBindings.def: " + Twine(key) +
                             " has no value of its pipeline option's type");
  return *value;
}

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

  void applyTable(ZeroPipelineOptions &options);
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

/// The plain rows of ConfigBindings.def: each key's value as it is, where
/// the row's predicate holds, with the sentinels translated.
void Mapper::applyTable(ZeroPipelineOptions &options) {
#define ZERO_CONFIG_OPTION(KEY, OPTION)                                        \
  options.OPTION = getKeyValue(config, KEY, options.OPTION);
#define ZERO_CONFIG_OPTION_IF(KEY, OPTION, WHEN, NOTE)                         \
  if (WHEN(config))                                                            \
    options.OPTION = getKeyValue(config, KEY, options.OPTION);
#define ZERO_CONFIG_OPTION_OFF(KEY, OPTION, OFF, PIPELINE_OFF)                 \
  {                                                                            \
    auto value = getKeyValue(config, KEY, options.OPTION);                     \
    options.OPTION = value == OFF ? PIPELINE_OFF : value;                      \
  }
#include "zero/Pipelines/ConfigBindings.def"
}

void Mapper::mapOffload(ZeroPipelineOptions &options) {
  const ::zero::ZeroOptimizationConfig &z = config.zero;
  // The library has checked the stage and nvme_path rules already.
  const ::zero::OffloadOptimizerConfig &opt = z.offloadOptimizer;
  StringRef p = "zero_optimization.offload_optimizer.";
  if (opt.device == OffloadDevice::Nvme) {
    options.offloadOptimizer = "nvme";
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
  if (offloadsToNvme(config)) {
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
  // An error stops the compile; the option is left off meanwhile, so that
  // no later rule reads MiCS as on.
  if (groups && z.stage != 3) {
    options.micsShardSize = 0;
    error("zero_optimization.mics_shard_size",
          "MiCS partitions the parameters: it needs stage 3, but the stage "
          "is " +
              Twine(z.stage));
    return;
  }
  if (groups &&
      (shardSize % nodeRanks != 0 || config.worldSize % shardSize != 0)) {
    options.micsShardSize = 0;
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
  // One group of the whole world is MiCS off, which the pipeline says with
  // 0 as it says -1 (ConfigBindings.def).
  if (shardSize == config.worldSize)
    options.micsShardSize = 0;
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
  // A partition of the whole world is the primary one: hpZ off, which the
  // pipeline says with 0 as it says 1 (ConfigBindings.def).
  if (size == config.worldSize)
    options.hpzPartitionSize = 0;
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
  // Where the key has no effect its warning is the config's, naming the key
  // (the pass would warn again). DeepSpeed's fp16 optimizer without ZeRO
  // always loads the fp32 weights.
  if (!hasFp32MasterWeights(config))
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
  if (isAdamFamily(config)) {
    options.beta1 = opt.betas[0];
    options.beta2 = opt.betas[1];
  }
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
  options.warmupType =
      sched.warmupType == ::zero::WarmupType::Linear ? "linear" : "log";
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
  applyTable(options);
  // The rules: what the table's plain rows cannot say.
  mapMics(options);
  mapHpz(options);
  mapQuantizedWeights(options);
  mapQuantizedNontrainableWeights(options);
  mapQuantizedGradients(options);
  mapGradientTypes(options);
  mapPrecision(options);
  mapOptimizer(options);
  mapScheduler(options);
  mapOffload(options);

  // Activation checkpointing: the section tunes it, the driver's
  // --zero-checkpoint-activations (options.checkpointActivations, set by the
  // caller) turns it on, as the model code does in DeepSpeed.
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

} // namespace

std::vector<ConfigFinding>
mlir::zero::applyDeepSpeedConfig(const ::zero::DeepSpeedConfig &config,
                                 ZeroPipelineOptions &options) {
  return Mapper(config).run(options);
}

::zero::ResolveContext mlir::zero::inferResolveContext(ModuleOp module,
                                                       StringRef entry,
                                                       int64_t worldSize) {
  TrainStepShape shape = inferTrainStepShape(module, entry);
  ::zero::ResolveContext context;
  context.worldSize = worldSize;
  context.hiddenSize = shape.hiddenSize;
  context.microBatchSize = shape.microBatchSize;
  // One precision when every parameter has it (any float type other than
  // bf16 and f16 is fp32's).
  std::optional<::zero::ParamPrecision> precision;
  for (Type element : shape.paramElementTypes) {
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

namespace {

/// "ARGUMENT (zero-PASS, ...)" of the pipeline option whose field is `name`.
std::string describeOption(StringRef name) {
  const PipelineOptionInfo *info = lookupPipelineOption(name);
  if (!info)
    llvm::report_fatal_error("ConfigBindings.def: " + Twine(name) +
                             " is not a row of PipelineOptions.def");
  return (info->argument + " (" + llvm::join(info->passArguments, ", ") + ")")
      .str();
}

/// The route text of each key with rows in ConfigBindings.def: its options
/// and notes in row order, an option named once.
llvm::StringMap<std::string> getTableRoutes() {
  llvm::StringMap<std::string> routes;
  llvm::StringMap<std::string> lastOption;
  auto add = [&](StringRef key, StringRef option, const Twine &note) {
    std::string &route = routes[key];
    std::string &last = lastOption[key];
    std::string text;
    if (!option.empty() && option != last)
      text = describeOption(option);
    if (!note.isTriviallyEmpty())
      text += (text.empty() ? "" : ", ") + note.str();
    if (!route.empty())
      route += "; ";
    route += text;
    last = option.str();
  };
#define ZERO_CONFIG_OPTION(KEY, OPTION) add(KEY, #OPTION, "");
#define ZERO_CONFIG_OPTION_IF(KEY, OPTION, WHEN, NOTE) add(KEY, #OPTION, NOTE);
#define ZERO_CONFIG_OPTION_OFF(KEY, OPTION, OFF, PIPELINE_OFF)                 \
  add(KEY, #OPTION, #OFF " (off) as " #PIPELINE_OFF);
#define ZERO_CONFIG_RULE(KEY, OPTION, NOTE) add(KEY, #OPTION, NOTE);
#define ZERO_CONFIG_NOTE(KEY, NOTE) add(KEY, "", NOTE);
#include "zero/Pipelines/ConfigBindings.def"
  return routes;
}

} // namespace

std::vector<std::pair<std::string, std::string>> mlir::zero::getKnobRoutes() {
  llvm::StringMap<std::string> table = getTableRoutes();
  std::vector<std::pair<std::string, std::string>> routes;
  for (const ::zero::KnobInfo &knob : ::zero::getKnobs()) {
    std::string route;
    if (knob.support == ::zero::KnobSupport::RefusedUnlessDefault)
      route = "refused by the config library unless at its default";
    else if (knob.support == ::zero::KnobSupport::NoEffect)
      route = "no effect: a warning from the config library";
    else if (knob.kind == ::zero::KnobKind::Section)
      route = "section";
    if (auto it = table.find(knob.path); it != table.end())
      route = it->second;
    if (route.empty())
      route = "UNHANDLED";
    routes.push_back({knob.path.str(), route});
  }
  return routes;
}
