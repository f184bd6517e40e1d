//===- ConfigFields.h - Knob paths of DeepSpeedConfig's fields --*- C++ -*-===//
//
// The single list that binds the canonical path of a supported knob to its
// field in DeepSpeedConfig, for the knobs that code reads as fields (the
// config library's checks, the pipeline's conditional rules). Resolution
// writes the fields through it and toJSON reads them back through it, so
// the two cannot disagree; a supported knob without a field is kept in
// DeepSpeedConfig::otherValues.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_CONFIG_CONFIGFIELDS_H
#define ZERO_LIB_CONFIG_CONFIGFIELDS_H

#include "ConfigValue.h"

#include "zero/Config/DeepSpeedConfig.h"

#include "llvm/ADT/SmallVector.h"

#include <type_traits>

namespace zero {

/// Calls `fn(path, field)` for every field of `config` (const or not).
template <typename Config, typename Fn>
void forEachField(Config &config, Fn &&fn) {
  auto &zero = config.zero;
  fn("zero_optimization.stage", zero.stage);
  fn("zero_optimization.contiguous_gradients", zero.contiguousGradients);
  fn("zero_optimization.reduce_scatter", zero.reduceScatter);
  fn("zero_optimization.reduce_bucket_size", zero.reduceBucketSize);
  fn("zero_optimization.allgather_bucket_size", zero.allgatherBucketSize);
  fn("zero_optimization.overlap_comm", zero.overlapComm);
  fn("zero_optimization.sub_group_size", zero.subGroupSize);
  fn("zero_optimization.prefetch_bucket_size", zero.prefetchBucketSize);
  fn("zero_optimization.param_persistence_threshold",
     zero.paramPersistenceThreshold);
  fn("zero_optimization.gather_16bit_weights_on_model_save",
     zero.gather16BitWeightsOnModelSave);
  fn("zero_optimization.round_robin_gradients", zero.roundRobinGradients);
  fn("zero_optimization.load_from_fp32_weights", zero.loadFromFp32Weights);
  fn("zero_optimization.ignore_unused_parameters", zero.ignoreUnusedParameters);
  fn("zero_optimization.mics_shard_size", zero.micsShardSize);
  fn("zero_optimization.zero_hpz_partition_size", zero.hpzPartitionSize);
  fn("zero_optimization.zero_quantized_weights", zero.quantizedWeights);
  fn("zero_optimization.zero_quantized_nontrainable_weights",
     zero.quantizedNontrainableWeights);
  fn("zero_optimization.zero_quantized_gradients", zero.quantizedGradients);
  fn("zero_optimization.mics_hierarchical_params_gather",
     zero.micsHierarchicalParamsGather);

  auto &optimizerOffload = zero.offloadOptimizer;
  fn("zero_optimization.offload_optimizer.device", optimizerOffload.device);
  fn("zero_optimization.offload_optimizer.nvme_path",
     optimizerOffload.nvmePath);
  fn("zero_optimization.offload_optimizer.buffer_count",
     optimizerOffload.bufferCount);
  fn("zero_optimization.offload_optimizer.pin_memory",
     optimizerOffload.pinMemory);
  fn("zero_optimization.offload_optimizer.pipeline_read",
     optimizerOffload.pipelineRead);
  fn("zero_optimization.offload_optimizer.pipeline_write",
     optimizerOffload.pipelineWrite);
  fn("zero_optimization.offload_optimizer.fast_init",
     optimizerOffload.fastInit);
  fn("zero_optimization.offload_optimizer.ratio", optimizerOffload.ratio);

  auto &paramOffload = zero.offloadParam;
  fn("zero_optimization.offload_param.device", paramOffload.device);
  fn("zero_optimization.offload_param.nvme_path", paramOffload.nvmePath);
  fn("zero_optimization.offload_param.buffer_count", paramOffload.bufferCount);
  fn("zero_optimization.offload_param.buffer_size", paramOffload.bufferSize);
  fn("zero_optimization.offload_param.max_in_cpu", paramOffload.maxInCpu);
  fn("zero_optimization.offload_param.pin_memory", paramOffload.pinMemory);

  auto &aio = config.aio;
  fn("aio.block_size", aio.blockSize);
  fn("aio.queue_depth", aio.queueDepth);
  fn("aio.thread_count", aio.threadCount);
  fn("aio.single_submit", aio.singleSubmit);
  fn("aio.overlap_events", aio.overlapEvents);

  auto &fp16 = config.fp16;
  fn("fp16.enabled", fp16.enabled);
  fn("fp16.auto_cast", fp16.autoCast);
  fn("fp16.loss_scale", fp16.lossScale);
  fn("fp16.initial_scale_power", fp16.initialScalePower);
  fn("fp16.loss_scale_window", fp16.lossScaleWindow);
  fn("fp16.hysteresis", fp16.hysteresis);
  fn("fp16.consecutive_hysteresis", fp16.consecutiveHysteresis);
  fn("fp16.min_loss_scale", fp16.minLossScale);
  fn("bf16.enabled", config.bf16.enabled);

  auto &optimizer = config.optimizer;
  fn("optimizer.type", optimizer.kind);
  fn("optimizer.params.lr", optimizer.lr);
  fn("optimizer.params.betas", optimizer.betas);
  fn("optimizer.params.eps", optimizer.eps);
  fn("optimizer.params.weight_decay", optimizer.weightDecay);
  fn("optimizer.params.adam_w_mode", optimizer.adamWMode);
  fn("optimizer.params.bias_correction", optimizer.biasCorrection);
  fn("optimizer.params.amsgrad", optimizer.amsgrad);
  fn("optimizer.params.momentum", optimizer.momentum);
  fn("optimizer.params.dampening", optimizer.dampening);
  fn("optimizer.params.nesterov", optimizer.nesterov);

  auto &scheduler = config.scheduler;
  fn("scheduler.type", scheduler.kind);
  fn("scheduler.params.last_batch_iteration", scheduler.lastBatchIteration);
  fn("scheduler.params.warmup_min_lr", scheduler.warmupMinLr);
  fn("scheduler.params.warmup_max_lr", scheduler.warmupMaxLr);
  fn("scheduler.params.warmup_num_steps", scheduler.warmupNumSteps);
  fn("scheduler.params.warmup_type", scheduler.warmupType);
  fn("scheduler.params.total_num_steps", scheduler.totalNumSteps);
  fn("scheduler.params.warmup_min_ratio", scheduler.warmupMinRatio);
  fn("scheduler.params.cos_min_ratio", scheduler.cosMinRatio);
  fn("scheduler.params.cycle_min_lr", scheduler.cycleMinLr);
  fn("scheduler.params.cycle_max_lr", scheduler.cycleMaxLr);
  fn("scheduler.params.decay_lr_rate", scheduler.decayLrRate);
  fn("scheduler.params.cycle_first_step_size", scheduler.cycleFirstStepSize);
  fn("scheduler.params.cycle_second_step_size", scheduler.cycleSecondStepSize);
  fn("scheduler.params.cycle_first_stair_count",
     scheduler.cycleFirstStairCount);
  fn("scheduler.params.cycle_second_stair_count",
     scheduler.cycleSecondStairCount);
  fn("scheduler.params.decay_step_size", scheduler.decayStepSize);
  fn("scheduler.params.cycle_momentum", scheduler.cycleMomentum);
  fn("scheduler.params.cycle_min_mom", scheduler.cycleMinMom);
  fn("scheduler.params.cycle_max_mom", scheduler.cycleMaxMom);
  fn("scheduler.params.decay_mom_rate", scheduler.decayMomRate);
  fn("scheduler.params.lr_range_test_min_lr", scheduler.lrRangeTestMinLr);
  fn("scheduler.params.lr_range_test_step_size", scheduler.lrRangeTestStepSize);
  fn("scheduler.params.lr_range_test_step_rate", scheduler.lrRangeTestStepRate);
  fn("scheduler.params.lr_range_test_staircase",
     scheduler.lrRangeTestStaircase);

  fn("gradient_clipping", config.gradientClipping);
  fn("prescale_gradients", config.prescaleGradients);
  fn("gradient_predivide_factor", config.gradientPredivideFactor);
  fn("communication_data_type", config.communicationDataType);
  fn("data_types.grad_accum_dtype", config.dataTypes.gradAccumDtype);
  fn("activation_checkpointing.cpu_checkpointing",
     config.activationCheckpointing.cpuCheckpointing);
  fn("activation_checkpointing.number_checkpoints",
     config.activationCheckpointing.numberCheckpoints);
  fn("train_batch_size", config.trainBatchSize);
  fn("train_micro_batch_size_per_gpu", config.trainMicroBatchSizePerGpu);
  fn("gradient_accumulation_steps", config.gradientAccumulationSteps);
}

/// Enum fields follow the order of the knob's choices; a knob whose default
/// is null keeps value 0 of the enum for null (OptimizerKind::None).
inline int enumOffset(const KnobInfo &knob) {
  return knob.defaultValue == "null" ? 1 : 0;
}

/// Stores a resolved value in a field.
template <typename Field>
void assignField(Field &field, const ConfigValue &value, const KnobInfo &knob) {
  if constexpr (std::is_same_v<Field, bool>) {
    field = value.boolean;
  } else if constexpr (std::is_same_v<Field, int64_t>) {
    field = value.isNull() ? 0 : value.integer;
  } else if constexpr (std::is_same_v<Field, double>) {
    field = value.asDouble();
  } else if constexpr (std::is_same_v<Field, std::string>) {
    field = value.isNull() ? "" : value.text;
  } else if constexpr (std::is_same_v<Field, std::array<double, 2>>) {
    field = value.pair;
  } else {
    static_assert(std::is_enum_v<Field>, "unhandled field type");
    int index = 0;
    if (!value.isNull()) {
      llvm::SmallVector<llvm::StringRef> choices;
      knob.choices.split(choices, '|');
      index =
          llvm::find(choices, value.text) - choices.begin() + enumOffset(knob);
    }
    field = static_cast<Field>(index);
  }
}

/// Reads a field back as the knob's value (0 or "" is null for knobs whose
/// default is null).
template <typename Field>
ConfigValue fieldValue(const Field &field, const KnobInfo &knob) {
  bool nullable = knob.defaultValue == "null";
  ConfigValue value;
  if constexpr (std::is_same_v<Field, bool>) {
    value = ConfigValue::makeBool(field);
  } else if constexpr (std::is_same_v<Field, int64_t>) {
    if (!(nullable && field == 0))
      value = ConfigValue::makeInt(field);
  } else if constexpr (std::is_same_v<Field, double>) {
    value.kind = ConfigValue::Float;
    value.number = field;
  } else if constexpr (std::is_same_v<Field, std::string>) {
    if (!(nullable && field.empty()))
      value = ConfigValue::makeString(field);
  } else if constexpr (std::is_same_v<Field, std::array<double, 2>>) {
    value.kind = ConfigValue::Pair;
    value.pair = field;
  } else {
    static_assert(std::is_enum_v<Field>, "unhandled field type");
    int index = static_cast<int>(field) - enumOffset(knob);
    llvm::SmallVector<llvm::StringRef> choices;
    knob.choices.split(choices, '|');
    if (index >= 0 && index < static_cast<int>(choices.size()))
      value = ConfigValue::makeString(choices[index].str());
  }
  return value;
}

} // namespace zero

#endif // ZERO_LIB_CONFIG_CONFIGFIELDS_H
