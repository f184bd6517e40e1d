//===- ConfigSchema.cpp - The DeepSpeed keys zero-opt knows ---------------===//
//
// The one place that lists DeepSpeed's configuration keys, their defaults
// (DeepSpeed 0.19, shared/reference/deepspeed-zero-api-and-config.txt) and
// whether zero-opt honors them. docs/Config.md mirrors this table; a unit
// test checks that every key here is documented there.
//
//===----------------------------------------------------------------------===//

#include "zero/Config/ConfigSchema.h"

#include "llvm/ADT/StringMap.h"

using namespace zero;
using llvm::StringRef;

namespace {
/// Builds a table row; every numeric knob is >= 0 unless `range` says
/// otherwise, as in DeepSpeed.
class Knob {
public:
  Knob(StringRef path, KnobKind kind, StringRef defaultValue,
       StringRef summary) {
    info.path = path;
    info.kind = kind;
    info.defaultValue = defaultValue;
    info.summary = summary;
    if (kind == KnobKind::Int || kind == KnobKind::Float ||
        kind == KnobKind::FloatPair)
      info.min = 0;
  }
  Knob &range(double min, double max) {
    info.min = min;
    info.max = max;
    return *this;
  }
  Knob &choices(StringRef choices) {
    info.choices = choices;
    return *this;
  }
  Knob &autoRule(AutoRule rule) {
    info.autoRule = rule;
    return *this;
  }
  Knob &flags(unsigned flags) {
    info.flags |= flags;
    return *this;
  }
  Knob &appliesTo(StringRef types) {
    info.appliesTo = types;
    return *this;
  }
  Knob &refused(StringRef reason) {
    info.support = KnobSupport::RefusedUnlessDefault;
    info.reason = reason;
    return *this;
  }
  Knob &noEffect(StringRef reason) {
    info.support = KnobSupport::NoEffect;
    info.reason = reason;
    return *this;
  }
  operator KnobInfo() const { return info; }

private:
  KnobInfo info;
};

Knob section(StringRef path, StringRef summary) {
  return Knob(path, KnobKind::Section, "null", summary);
}
Knob boolean(StringRef path, StringRef defaultValue, StringRef summary) {
  return Knob(path, KnobKind::Bool, defaultValue, summary);
}
Knob integer(StringRef path, StringRef defaultValue, StringRef summary) {
  return Knob(path, KnobKind::Int, defaultValue, summary);
}
Knob number(StringRef path, StringRef defaultValue, StringRef summary) {
  return Knob(path, KnobKind::Float, defaultValue, summary);
}
Knob string(StringRef path, StringRef defaultValue, StringRef summary) {
  return Knob(path, KnobKind::String, defaultValue, summary);
}
Knob choice(StringRef path, StringRef defaultValue, StringRef choices,
            StringRef summary) {
  return Knob(path, KnobKind::Enum, defaultValue, summary).choices(choices);
}
Knob pair(StringRef path, StringRef defaultValue, StringRef summary) {
  return Knob(path, KnobKind::FloatPair, defaultValue, summary);
}
Knob any(StringRef path, StringRef summary) {
  return Knob(path, KnobKind::Any, "null", summary);
}

constexpr double kNoMax = std::numeric_limits<double>::infinity();

// Shared reasons.
constexpr StringRef kMonitor =
    "monitoring output of the DeepSpeed engine; a compiled step has no such "
    "hooks (zero-run prints progress and writes a trace on request)";
constexpr StringRef kNotCompiled =
    "a DeepSpeed feature outside ZeRO data parallelism; not supported";

const KnobInfo kKnobs[] = {
    // --- zero_optimization --------------------------------------------------
    section("zero_optimization", "ZeRO settings."),
    integer("zero_optimization.stage", "0",
            "0 disabled, 1 optimizer states, 2 + gradients, 3 + parameters "
            "partitioned.")
        .range(0, 3),
    boolean("zero_optimization.contiguous_gradients", "true",
            "Copy gradients into a contiguous buffer as they are produced."),
    boolean("zero_optimization.reduce_scatter", "true",
            "Reduce gradients with reduce-scatter instead of all-reduce."),
    integer("zero_optimization.reduce_bucket_size", "500000000",
            "Elements reduced at a time.")
        .autoRule(AutoRule::HiddenSquared),
    boolean("zero_optimization.use_multi_rank_bucket_allreduce", "true",
            "Combine the ranks' reduce buckets into one all-reduce.")
        .noEffect("how DeepSpeed's stage 1/2 issues its reductions (one "
                  "bucketed all-reduce or per-rank Reduce calls); zero-opt "
                  "chooses the collectives itself, and the reduced values "
                  "are the same either way"),
    boolean("zero_optimization.allgather_partitions", "true",
            "All-gather updated partitions (false: a series of broadcasts).")
        .noEffect("DeepSpeed parses this key but never reads it: its "
                  "updated partitions are always all-gathered, as zero-opt's "
                  "are"),
    integer("zero_optimization.allgather_bucket_size", "500000000",
            "Elements all-gathered at a time."),
    boolean("zero_optimization.overlap_comm", "null",
            "Overlap gradient reduction with the backward pass (null: true "
            "at stage 3, false below, as DeepSpeed)."),
    boolean("zero_optimization.load_from_fp32_weights", "true",
            "A resumed run loads the checkpoint's fp32 master weights (false: "
            "sets them from its 16-bit parameters, with their precision "
            "loss)."),
    boolean("zero_optimization.elastic_checkpoint", "false",
            "Load checkpoints saved at another GPU count.")
        .refused("elastic checkpoints are no longer supported by DeepSpeed "
                 "either; zero-run checkpoints do not depend on the world "
                 "size"),
    section("zero_optimization.offload_optimizer",
            "Optimizer state offload; the step runs on the CPU (stage 1-3)."),
    choice("zero_optimization.offload_optimizer.device", "\"none\"",
           "none|cpu|nvme", "Where optimizer states live."),
    string("zero_optimization.offload_optimizer.nvme_path", "null",
           "Directory for NVMe offload (required with device nvme)."),
    integer("zero_optimization.offload_optimizer.buffer_count", "4",
            "Buffers in the NVMe swap pool."),
    boolean("zero_optimization.offload_optimizer.pin_memory", "false",
            "Page-locked host memory."),
    boolean("zero_optimization.offload_optimizer.pipeline_read", "false",
            "Overlap reading the next tile with the step on this one."),
    boolean("zero_optimization.offload_optimizer.pipeline_write", "false",
            "Overlap writing the previous tile with the step on this one."),
    boolean("zero_optimization.offload_optimizer.fast_init", "false",
            "Fast optimizer initialization with NVMe offload."),
    number("zero_optimization.offload_optimizer.ratio", "1.0",
           "Fraction of optimizer states offloaded (below 1: stage 3 only).")
        .range(0, 1),
    section("zero_optimization.offload_param",
            "Parameter offload (stage 3 only)."),
    choice("zero_optimization.offload_param.device", "\"none\"",
           "none|cpu|nvme", "Where partitioned parameters live."),
    string("zero_optimization.offload_param.nvme_path", "null",
           "Directory for NVMe offload (required with device nvme)."),
    integer("zero_optimization.offload_param.buffer_count", "5",
            "Buffers in the NVMe swap pool."),
    integer("zero_optimization.offload_param.buffer_size", "100000000",
            "Elements per NVMe swap buffer."),
    integer("zero_optimization.offload_param.max_in_cpu", "1000000000",
            "Parameter elements kept in host memory with NVMe offload."),
    boolean("zero_optimization.offload_param.pin_memory", "false",
            "Page-locked host memory."),
    integer("zero_optimization.sub_group_size", "1000000000",
            "Elements per tile of the optimizer step.")
        .range(1, kNoMax),
    integer("zero_optimization.prefetch_bucket_size", "50000000",
            "Parameter elements fetched ahead of use (0: no prefetch).")
        .autoRule(AutoRule::NineTenthsHiddenSquared)
        .flags(Stage3Alias | Stage3Only),
    integer("zero_optimization.param_persistence_threshold", "100000",
            "Parameters of at most this many elements stay gathered.")
        .autoRule(AutoRule::TenHidden)
        .flags(Stage3Alias | Stage3Only),
    integer("zero_optimization.model_persistence_threshold",
            "9223372036854775807",
            "Cap on the total elements of persistent parameters.")
        .flags(Stage3Alias | Stage3Only),
    integer("zero_optimization.max_live_parameters", "1000000000",
            "Budget of gathered, unreleased parameter elements.")
        .flags(Stage3Alias | Stage3Only),
    integer("zero_optimization.max_reuse_distance", "1000000000",
            "Keep a parameter gathered if reused within this many elements.")
        .flags(Stage3Alias | Stage3Only),
    boolean("zero_optimization.gather_16bit_weights_on_model_save", "false",
            "Gather 16-bit weights when saving the model.")
        .flags(Stage3Alias | Stage3Only),
    boolean("zero_optimization.ignore_unused_parameters", "true",
            "Ignore parameters that get no gradient (false: fail)."),
    boolean("zero_optimization.legacy_stage1", "false",
            "DeepSpeed's old stage-1 implementation.")
        .refused("DeepSpeed's legacy stage-1 implementation is not "
                 "supported; zero-opt has one stage-1 implementation"),
    boolean("zero_optimization.round_robin_gradients", "false",
            "Spread the copies of gradients to the host over the ranks."),
    integer("zero_optimization.zero_hpz_partition_size", "1",
            "Ranks in the secondary parameter partition group (ZeRO++ hpZ).")
        .range(1, kNoMax),
    boolean("zero_optimization.zero_quantized_weights", "false",
            "Quantize weights for the all-gather (ZeRO++ qwZ)."),
    boolean("zero_optimization.zero_quantized_nontrainable_weights", "false",
            "Store non-trainable (frozen) weights quantized (ZeRO++)."),
    boolean("zero_optimization.zero_quantized_gradients", "false",
            "Quantize gradients for the reduction (ZeRO++ qgZ)."),
    integer("zero_optimization.mics_shard_size", "-1",
            "Ranks that share one copy of the model states (MiCS).")
        .range(-1, kNoMax),
    boolean("zero_optimization.mics_hierarchical_params_gather", "false",
            "Two-level parameter gather across nodes (MiCS)."),
    boolean("zero_optimization.memory_efficient_linear", "true",
            "DeepSpeed's memory-efficient Linear autograd function.")
        .noEffect("an autograd detail of DeepSpeed's stage 3 in PyTorch; the "
                  "compiled step's memory plan decides what stays live"),
    boolean("zero_optimization.pipeline_loading_checkpoint", "false",
            "Pipelined checkpoint loading for module injection.")
        .refused("pipelined checkpoint loading (DeepSpeed module injection) "
                 "is not supported"),
    boolean("zero_optimization.override_module_apply", "true",
            "Gather parameters inside nn.Module.apply at stage 3.")
        .noEffect("patches PyTorch's Module.apply during model construction; "
                  "zero-opt runs no model construction code"),

    // --- precision ----------------------------------------------------------
    section("fp16", "Mixed precision with fp16 and loss scaling."),
    boolean("fp16.enabled", "false", "Train in fp16.")
        .autoRule(AutoRule::ParamPrecision),
    boolean("fp16.auto_cast", "false", "Cast inputs to fp16."),
    number("fp16.loss_scale", "0", "Static loss scale; 0: dynamic."),
    integer("fp16.initial_scale_power", "16",
            "Initial dynamic loss scale is 2^this.")
        .range(0, 127),
    integer("fp16.loss_scale_window", "1000",
            "Steps without overflow before the scale grows.")
        .range(1, kNoMax),
    integer("fp16.hysteresis", "2", "Overflows tolerated before shrinking.")
        .range(1, kNoMax),
    boolean("fp16.consecutive_hysteresis", "false",
            "Refill hysteresis after a step without overflow."),
    number("fp16.min_loss_scale", "1", "Lower bound of the dynamic scale.")
        .flags(MinExclusive),
    boolean("fp16.fp16_master_weights_and_grads", "false",
            "Keep master weights and gradients in fp16.")
        .refused("fp16 master weights and gradients are not supported yet; "
                 "master weights are fp32"),
    section("bf16", "Mixed precision with bfloat16."),
    boolean("bf16.enabled", "false", "Train in bfloat16.")
        .autoRule(AutoRule::ParamPrecision),

    // --- optimizer ----------------------------------------------------------
    section("optimizer", "The optimizer the compiler inserts."),
    choice("optimizer.type", "null", "Adam|AdamW|SGD",
           "Case-insensitive, as in DeepSpeed.")
        .flags(CaseInsensitive),
    section("optimizer.params", "Optimizer hyperparameters."),
    number("optimizer.params.lr", "0.001", "Learning rate.")
        .autoRule(AutoRule::NeedsTrainer),
    pair("optimizer.params.betas", "[0.9, 0.999]",
         "Adam's moment decay rates, each in [0, 1).")
        .range(0, 1)
        .flags(MaxExclusive)
        .autoRule(AutoRule::NeedsTrainer)
        .appliesTo("Adam|AdamW"),
    number("optimizer.params.eps", "1e-08", "Adam's denominator term.")
        .flags(MinExclusive)
        .autoRule(AutoRule::NeedsTrainer)
        .appliesTo("Adam|AdamW"),
    number("optimizer.params.weight_decay", "0", "Weight decay.")
        .autoRule(AutoRule::NeedsTrainer),
    boolean("optimizer.params.adam_w_mode", "true",
            "Adam with decoupled weight decay (AdamW); DeepSpeed's default.")
        .appliesTo("Adam|AdamW"),
    boolean("optimizer.params.bias_correction", "true",
            "Adam's bias correction.")
        .appliesTo("Adam|AdamW"),
    boolean("optimizer.params.amsgrad", "false", "The AMSGrad variant.")
        .appliesTo("Adam|AdamW"),
    boolean("optimizer.params.torch_adam", "false",
            "Use torch.optim.Adam instead of DeepSpeed's fused Adam.")
        .appliesTo("Adam|AdamW")
        .noEffect("picks one of DeepSpeed's Adam implementations; zero-opt "
                  "has its own, with the same math"),
    number("optimizer.params.momentum", "0", "SGD momentum.").appliesTo("SGD"),
    number("optimizer.params.dampening", "0", "SGD dampening.")
        .appliesTo("SGD"),
    boolean("optimizer.params.nesterov", "false", "Nesterov momentum.")
        .appliesTo("SGD"),
    section("scheduler", "Learning-rate schedule, computed in the compiled "
                         "step from its step counter."),
    choice("scheduler.type", "null",
           "WarmupLR|WarmupDecayLR|WarmupCosineLR|OneCycle|LRRangeTest",
           "DeepSpeed's schedule name."),
    section("scheduler.params", "Parameters of the schedule."),
    integer("scheduler.params.last_batch_iteration", "-1",
            "Schedule iterations already taken before the first step; at "
            "most 2^52, so that it plus the steps of a run stays exact.")
        .range(-1, double(kMaxLastBatchIteration)),
    number("scheduler.params.warmup_min_lr", "0", "First warm-up rate.")
        .autoRule(AutoRule::NeedsTrainer)
        .appliesTo("WarmupLR|WarmupDecayLR"),
    number("scheduler.params.warmup_max_lr", "null",
           "Rate at the end of the warm-up; null: optimizer.params.lr "
           "(WarmupLR), 0.001 (WarmupDecayLR).")
        .autoRule(AutoRule::NeedsTrainer)
        .appliesTo("WarmupLR|WarmupDecayLR"),
    integer("scheduler.params.warmup_num_steps", "1000",
            "Warm-up length in steps.")
        .range(1, kNoMax)
        .autoRule(AutoRule::NeedsTrainer)
        .appliesTo("WarmupLR|WarmupDecayLR|WarmupCosineLR"),
    choice("scheduler.params.warmup_type", "\"log\"", "log|linear",
           "Shape of the warm-up.")
        .appliesTo("WarmupLR|WarmupDecayLR|WarmupCosineLR"),
    integer("scheduler.params.total_num_steps", "null",
            "Steps of the whole schedule, warm-up included (required).")
        .range(1, kNoMax)
        .autoRule(AutoRule::NeedsTrainer)
        .appliesTo("WarmupDecayLR|WarmupCosineLR"),
    number("scheduler.params.warmup_min_ratio", "0",
           "First warm-up rate as a fraction of optimizer.params.lr.")
        .appliesTo("WarmupCosineLR"),
    number("scheduler.params.cos_min_ratio", "0.0001",
           "Final rate as a fraction of optimizer.params.lr.")
        .appliesTo("WarmupCosineLR"),
    number("scheduler.params.cycle_min_lr", "null",
           "Lowest rate of the cycle (required).")
        .appliesTo("OneCycle"),
    number("scheduler.params.cycle_max_lr", "null",
           "Highest rate of the cycle (required).")
        .appliesTo("OneCycle"),
    number("scheduler.params.decay_lr_rate", "0", "Rate decay after the cycle.")
        .appliesTo("OneCycle"),
    integer("scheduler.params.cycle_first_step_size", "2000",
            "Steps of the rising half of the cycle.")
        .range(1, kNoMax)
        .appliesTo("OneCycle"),
    integer("scheduler.params.cycle_second_step_size", "null",
            "Steps of the falling half; null: cycle_first_step_size.")
        .range(1, kNoMax)
        .appliesTo("OneCycle"),
    integer("scheduler.params.cycle_first_stair_count", "0",
            "Stairs of the rising half; 0: continuous.")
        .appliesTo("OneCycle"),
    integer("scheduler.params.cycle_second_stair_count", "null",
            "Stairs of the falling half; null: cycle_first_stair_count.")
        .appliesTo("OneCycle"),
    integer("scheduler.params.decay_step_size", "0",
            "Steps per decay interval after the cycle; 0: no decay.")
        .appliesTo("OneCycle"),
    boolean("scheduler.params.cycle_momentum", "true",
            "Cycle Adam's beta1 against the rate (beta2 becomes 0.99).")
        .appliesTo("OneCycle"),
    number("scheduler.params.cycle_min_mom", "0.8",
           "Lowest beta1 of the cycle.")
        .range(0, 1)
        .flags(MaxExclusive)
        .appliesTo("OneCycle"),
    number("scheduler.params.cycle_max_mom", "0.9",
           "Highest beta1 of the cycle.")
        .range(0, 1)
        .flags(MaxExclusive)
        .appliesTo("OneCycle"),
    number("scheduler.params.decay_mom_rate", "0",
           "beta1 growth after the cycle.")
        .appliesTo("OneCycle"),
    number("scheduler.params.lr_range_test_min_lr", "0.001",
           "First rate of the range test.")
        .appliesTo("LRRangeTest"),
    integer("scheduler.params.lr_range_test_step_size", "2000",
            "Steps per increase interval.")
        .range(1, kNoMax)
        .appliesTo("LRRangeTest"),
    number("scheduler.params.lr_range_test_step_rate", "1.0",
           "Increase per interval, as a multiple of the first rate.")
        .appliesTo("LRRangeTest"),
    boolean("scheduler.params.lr_range_test_staircase", "false",
            "Increase in whole intervals instead of continuously.")
        .appliesTo("LRRangeTest"),

    // --- batch and gradients ------------------------------------------------
    integer("train_batch_size", "null",
            "Samples per optimizer step over all ranks.")
        .range(1, kNoMax)
        .autoRule(AutoRule::Batch),
    integer("train_micro_batch_size_per_gpu", "null",
            "Samples per rank and micro-step.")
        .range(1, kNoMax)
        .autoRule(AutoRule::Batch),
    integer("gradient_accumulation_steps", "null",
            "Micro-steps per optimizer step.")
        .range(1, kNoMax)
        .autoRule(AutoRule::Batch),
    number("gradient_clipping", "0", "Global gradient norm bound; 0: off.")
        .autoRule(AutoRule::NeedsTrainer),
    boolean("prescale_gradients", "false",
            "Divide gradients by the world size before the reduction."),
    number("gradient_predivide_factor", "1.0",
           "Divide gradients by this before the reduction.")
        .flags(MinExclusive),
    boolean("sparse_gradients", "false", "Sparse embedding gradients.")
        .refused("sparse gradient reduction is not supported yet"),
    // DeepSpeed lower-cases communication_data_type, not grad_accum_dtype.
    choice("communication_data_type", "null", "fp16|bf16|fp32",
           "Data type of the gradient reductions.")
        .flags(CaseInsensitive),
    section("data_types", "Data types of the gradients."),
    choice("data_types.grad_accum_dtype", "null", "fp16|bf16|fp32",
           "Data type gradients are accumulated in across micro-steps."),

    // --- activation checkpointing (zero-checkpoint-activations) -------------
    // The section tunes checkpointing; as in DeepSpeed, where the model code
    // checkpoints (Megatron's --checkpoint-activations), it does not turn it
    // on: zero-opt --zero-checkpoint-activations does.
    section("activation_checkpointing", "Activation checkpointing (on with "
                                        "--zero-checkpoint-activations)."),
    boolean("activation_checkpointing.partition_activations", "false",
            "Partition the checkpointed inputs across model-parallel ranks.")
        .refused("it splits the kept inputs across tensor-parallel ranks; "
                 "zero-opt is data parallel only, so there are no such "
                 "ranks"),
    boolean("activation_checkpointing.cpu_checkpointing", "false",
            "Keep the checkpointed inputs in host memory."),
    boolean("activation_checkpointing.contiguous_memory_optimization", "false",
            "Copy the checkpointed inputs into one buffer.")
        .noEffect("the memory plan places every kept input at a static "
                  "offset already, so there is no fragmentation to avoid"),
    integer("activation_checkpointing.number_checkpoints", "null",
            "Number of checkpoints: consecutive layers are grouped into at "
            "most this many segments.")
        .range(1, kNoMax),
    boolean("activation_checkpointing.synchronize_checkpoint_boundary", "false",
            "Synchronize the device at each checkpoint boundary.")
        .noEffect("a debugging barrier of DeepSpeed; the runtime orders the "
                  "recomputation by the schedule's events"),
    boolean("activation_checkpointing.profile", "false",
            "Time each checkpointed segment.")
        .noEffect("timing logs of DeepSpeed; zero-run writes a trace on "
                  "request, where the recomputed ops show as compute"),

    // --- DeepSpeed engine keys without effect on a compiled step -------------
    integer("steps_per_print", "10", "Print progress every N steps.")
        .range(1, kNoMax)
        .noEffect("progress logging of the DeepSpeed engine; zero-run prints "
                  "its own progress"),
    boolean("wall_clock_breakdown", "false", "Time forward/backward/step.")
        .noEffect("timing logs of the DeepSpeed engine; zero-run writes a "
                  "trace on request"),
    boolean("memory_breakdown", "false", "Log memory use.")
        .noEffect("memory logs of the DeepSpeed engine; zero-opt reports its "
                  "static memory plan (--zero-report)"),
    boolean("dump_state", "false", "Print the engine state at start-up.")
        .noEffect("start-up logging of the DeepSpeed engine"),
    boolean("zero_allow_untested_optimizer", "false",
            "Allow client optimizers untested with ZeRO.")
        .noEffect("guards client optimizers in DeepSpeed; zero-opt only "
                  "builds the optimizers it implements"),
    boolean("zero_force_ds_cpu_optimizer", "true",
            "Require DeepSpeedCPUAdam with offload.")
        .noEffect("guards the CPU optimizer in DeepSpeed; zero-opt always "
                  "runs its own CPU optimizer when offloading"),
    any("tensorboard", "TensorBoard monitor.").noEffect(kMonitor),
    any("wandb", "Weights & Biases monitor.").noEffect(kMonitor),
    any("csv_monitor", "CSV monitor.").noEffect(kMonitor),
    any("comms_logger", "Communication logger.").noEffect(kMonitor),
    any("flops_profiler", "FLOPS profiler.").noEffect(kMonitor),

    // --- DeepSpeed features outside the compiled ZeRO step -------------------
    any("amp", "NVIDIA Apex AMP.")
        .refused("Apex AMP is not supported; use fp16 or bf16"),
    section("aio", "Asynchronous I/O of NVMe offload."),
    integer("aio.block_size", "1048576",
            "Bytes of the largest single NVMe request.")
        .range(4096, kNoMax),
    integer("aio.queue_depth", "8", "NVMe requests in flight at most.")
        .range(1, kNoMax),
    integer("aio.thread_count", "1", "Threads submitting NVMe requests.")
        .range(1, kNoMax),
    boolean("aio.single_submit", "false",
            "Submit NVMe requests one at a time."),
    boolean("aio.overlap_events", "true",
            "Overlap the submission of requests with their completion."),
    any("checkpoint", "Checkpoint I/O options.")
        .refused("DeepSpeed checkpoint options are not supported; zero-run "
                 "checkpoints do not depend on the world size"),
    any("elasticity", "Elastic training.").refused(kNotCompiled),
    any("pipeline", "Pipeline parallelism.").refused(kNotCompiled),
    any("sparse_attention", "Sparse attention kernels.").refused(kNotCompiled),
    any("compression_training", "Compression.").refused(kNotCompiled),
    any("data_efficiency", "Data sampling and routing.").refused(kNotCompiled),
    any("curriculum_learning", "Curriculum learning.").refused(kNotCompiled),
    any("autotuning", "DeepSpeed's autotuner.").refused(kNotCompiled),
};

const LegacyKey kLegacyKeys[] = {
    {"zero_optimization.cpu_offload",
     "zero_optimization.offload_optimizer.device", LegacyRewrite::TrueMeansCpu,
     "deprecated in DeepSpeed"},
    {"zero_optimization.cpu_offload_param",
     "zero_optimization.offload_param.device", LegacyRewrite::TrueMeansCpu,
     "deprecated in DeepSpeed"},
    // The ZeRO tutorial writes this DeepSpeed 0.3 spelling; DeepSpeed 0.19
    // rejects it, zero-opt reads it as cpu_offload_param.
    {"zero_optimization.cpu_offload_params",
     "zero_optimization.offload_param.device", LegacyRewrite::TrueMeansCpu,
     "DeepSpeed 0.3 spelling of cpu_offload_param, used by the ZeRO "
     "tutorial"},
    {"zero_optimization.cpu_offload_use_pin_memory",
     "zero_optimization.offload_optimizer.pin_memory", LegacyRewrite::SameValue,
     "deprecated in DeepSpeed"},
    {"zero_optimization.cpu_offload_use_pin_memory",
     "zero_optimization.offload_param.pin_memory", LegacyRewrite::SameValue,
     "deprecated in DeepSpeed"},
    {"zero_optimization.stage3_gather_fp16_weights_on_model_save",
     "zero_optimization.gather_16bit_weights_on_model_save",
     LegacyRewrite::SameValue, "deprecated in DeepSpeed"},
    {"bfloat16", "bf16", LegacyRewrite::SameValue,
     "DeepSpeed's old name of the bf16 section"},
};

const UnsupportedChoice kUnsupportedChoices[] = {
    {"optimizer.type", "OneBitAdam",
     "1-bit Adam (compressed communication) is not supported yet"},
    {"optimizer.type", "ZeroOneAdam",
     "0/1 Adam (compressed communication) is not supported yet"},
    {"optimizer.type", "OneBitLamb",
     "1-bit LAMB (compressed communication) is not supported yet"},
    {"optimizer.type", "Lamb", "LAMB is not supported yet"},
    {"optimizer.type", "Lion", "Lion is not supported yet"},
    {"optimizer.type", "Adagrad", "Adagrad is not supported yet"},
    {"optimizer.type", "MuAdam", "MuP optimizers are not supported yet"},
    {"optimizer.type", "MuAdamW", "MuP optimizers are not supported yet"},
    {"optimizer.type", "MuSGD", "MuP optimizers are not supported yet"},
};
} // namespace

llvm::ArrayRef<KnobInfo> zero::getKnobs() { return kKnobs; }
llvm::ArrayRef<LegacyKey> zero::getLegacyKeys() { return kLegacyKeys; }
llvm::ArrayRef<UnsupportedChoice> zero::getUnsupportedChoices() {
  return kUnsupportedChoices;
}

const KnobInfo *zero::lookupKnob(StringRef path) {
  static const llvm::StringMap<const KnobInfo *> byPath = [] {
    llvm::StringMap<const KnobInfo *> map;
    for (const KnobInfo &knob : kKnobs)
      map[knob.path] = &knob;
    return map;
  }();
  return byPath.lookup(path);
}
