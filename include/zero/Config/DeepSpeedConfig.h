//===- DeepSpeedConfig.h - DeepSpeed configuration model --------*- C++ -*-===//
//
// Reads a DeepSpeed JSON configuration as users write it, strictly, with a
// file:line:col for every error; merges command-line overrides; resolves
// "auto" and the batch-size rule once the world size is known; and yields a
// plain struct the compiler reads. The keys, defaults and support status come
// from the table in ConfigSchema.h (documented in docs/Config.md).
//
// Typical use in a driver:
//
//   auto settings = zero::DeepSpeedConfigSettings::readFile(path);
//   if (!settings) return report(settings.takeError());
//   for (auto &[key, value] : overrides)
//     if (llvm::Error e = settings->setOverride(key, value))
//       return report(std::move(e));
//   llvm::Expected<zero::DeepSpeedConfig> config = settings->resolve(context);
//
// where report() prints llvm::toString(error) (see ConfigDiagnostics.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONFIG_DEEPSPEEDCONFIG_H
#define ZERO_CONFIG_DEEPSPEEDCONFIG_H

#include "zero/Config/ConfigDiagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace zero {

enum class OffloadDevice { None, Cpu, Nvme };
enum class OptimizerKind { None, Adam, AdamW, SGD };
enum class SchedulerKind {
  None,
  WarmupLR,
  WarmupDecayLR,
  WarmupCosineLR,
  OneCycle,
  LRRangeTest
};
enum class WarmupType { Log, Linear };

/// Element type of the training step's parameters, as the compiler sees it in
/// the IR; resolves `fp16.enabled` / `bf16.enabled` set to "auto".
enum class ParamPrecision { Unknown, F32, F16, BF16 };

/// What the compiler knows when it resolves a configuration.
struct ResolveContext {
  /// Data-parallel ranks.
  int64_t worldSize = 1;
  /// Model hidden size, for bucket sizes set to "auto"; 0 when unknown.
  int64_t hiddenSize = 0;
  /// Samples per rank in one micro-step of the training-step IR; 0 when
  /// unknown. Used when the file gives no batch size, checked otherwise.
  int64_t microBatchSize = 0;
  ParamPrecision precision = ParamPrecision::Unknown;
};

// The fields below are filled by resolve() from the knob table; the zero
// initializers only keep a default-constructed struct deterministic (they are
// not DeepSpeed's defaults).

struct OffloadOptimizerConfig {
  OffloadDevice device = OffloadDevice::None;
  std::string nvmePath;
  int64_t bufferCount = 0;
  bool pinMemory = false;
  bool pipelineRead = false;
  bool pipelineWrite = false;
  bool fastInit = false;
  double ratio = 0;
};

struct OffloadParamConfig {
  OffloadDevice device = OffloadDevice::None;
  std::string nvmePath;
  int64_t bufferCount = 0;
  int64_t bufferSize = 0;
  int64_t maxInCpu = 0;
  bool pinMemory = false;
};

/// DeepSpeed's `aio` section: how NVMe offload reads and writes its files.
struct AioConfig {
  int64_t blockSize = 0;
  int64_t queueDepth = 0;
  int64_t threadCount = 0;
  bool singleSubmit = false;
  bool overlapEvents = false;
};

struct ZeroOptimizationConfig {
  int64_t stage = 0;
  bool contiguousGradients = false;
  bool reduceScatter = false;
  /// DeepSpeed's null default resolved: true at stage 3, false below.
  bool overlapComm = false;
  bool roundRobinGradients = false;
  /// false: a resumed run sets the fp32 master weights from the 16-bit
  /// parameters of the checkpoint.
  bool loadFromFp32Weights = true;
  bool gather16BitWeightsOnModelSave = false;
  int64_t reduceBucketSize = 0;
  int64_t allgatherBucketSize = 0;
  int64_t prefetchBucketSize = 0;
  // max_live_parameters, max_reuse_distance and model_persistence_threshold
  // have no field: only the binding table reads them (otherValues).
  int64_t paramPersistenceThreshold = 0;
  int64_t subGroupSize = 0;
  /// false: a parameter that no op reads is an error (DeepSpeed: true).
  bool ignoreUnusedParameters = true;
  /// MiCS: ranks that share one copy of the model states (-1: the world).
  int64_t micsShardSize = -1;
  bool micsHierarchicalParamsGather = false;
  /// ZeRO++ hpZ: ranks of the secondary parameter partition (1: off).
  int64_t hpzPartitionSize = 1;
  /// ZeRO++ qwZ: the forward's parameter gathers carry int8 values.
  bool quantizedWeights = false;
  /// ZeRO++: frozen parameters' shards stored as int8 blocks.
  bool quantizedNontrainableWeights = false;
  /// ZeRO++ qgZ: the gradients' reduce-scatters quantized to int4.
  bool quantizedGradients = false;
  OffloadOptimizerConfig offloadOptimizer;
  OffloadParamConfig offloadParam;
};

struct FP16Config {
  bool enabled = false;
  bool autoCast = false;
  /// 0 selects dynamic loss scaling.
  double lossScale = 0;
  int64_t initialScalePower = 0;
  int64_t lossScaleWindow = 0;
  int64_t hysteresis = 0;
  bool consecutiveHysteresis = false;
  double minLossScale = 0;
};

struct BF16Config {
  bool enabled = false;
};

/// A gradient data type as DeepSpeed names it; None is DeepSpeed's null.
enum class DataType { None, FP16, BF16, FP32 };

struct DataTypesConfig {
  /// The type of the sum of the micro-step gradients.
  DataType gradAccumDtype = DataType::None;
};

/// DeepSpeed's activation_checkpointing section. It tunes checkpointing;
/// zero-opt --zero-checkpoint-activations turns it on (docs/Config.md).
struct ActivationCheckpointingConfig {
  /// Group consecutive segments into at most this many; 0 is DeepSpeed's
  /// null (one checkpoint per segment).
  int64_t numberCheckpoints = 0;
  /// The recomputation's inputs live in host memory between the passes.
  bool cpuCheckpointing = false;
};

struct OptimizerConfig {
  /// None when the file has no optimizer section.
  OptimizerKind kind = OptimizerKind::None;
  double lr = 0;
  std::array<double, 2> betas = {0, 0};
  double eps = 0;
  double weightDecay = 0;
  /// Adam family: decoupled weight decay. True for AdamW, and for Adam unless
  /// `adam_w_mode` is false (DeepSpeed's default makes "Adam" AdamW).
  bool adamWMode = false;
  /// Adam family: divide the moments by 1 - beta^t (DeepSpeed's default).
  bool biasCorrection = true;
  /// Adam family: AMSGrad, the running maximum of the second moment in the
  /// denominator.
  bool amsgrad = false;
  double momentum = 0;
  double dampening = 0;
  bool nesterov = false;
};

/// DeepSpeed's learning-rate schedules (docs/Config.md, "Learning-rate
/// schedules"); each schedule reads only its own parameters.
struct SchedulerConfig {
  /// None when the file has no scheduler section: the rate is constant.
  SchedulerKind kind = SchedulerKind::None;
  int64_t lastBatchIteration = 0;
  // WarmupLR, WarmupDecayLR, WarmupCosineLR.
  double warmupMinLr = 0;
  double warmupMaxLr = 0;
  int64_t warmupNumSteps = 0;
  WarmupType warmupType = WarmupType::Log;
  int64_t totalNumSteps = 0;
  double warmupMinRatio = 0;
  double cosMinRatio = 0;
  // OneCycle.
  double cycleMinLr = 0;
  double cycleMaxLr = 0;
  double decayLrRate = 0;
  int64_t cycleFirstStepSize = 0;
  int64_t cycleSecondStepSize = 0;
  int64_t cycleFirstStairCount = 0;
  int64_t cycleSecondStairCount = 0;
  int64_t decayStepSize = 0;
  bool cycleMomentum = false;
  double cycleMinMom = 0;
  double cycleMaxMom = 0;
  double decayMomRate = 0;
  // LRRangeTest.
  double lrRangeTestMinLr = 0;
  int64_t lrRangeTestStepSize = 0;
  double lrRangeTestStepRate = 0;
  bool lrRangeTestStaircase = false;
};

/// A resolved configuration: every value decided, every check passed.
struct DeepSpeedConfig {
  ZeroOptimizationConfig zero;
  AioConfig aio;
  FP16Config fp16;
  BF16Config bf16;
  OptimizerConfig optimizer;
  SchedulerConfig scheduler;
  /// 0 disables clipping.
  double gradientClipping = 0;
  /// The element type of the gradient reductions (None: the gradients').
  DataType communicationDataType = DataType::None;
  /// DeepSpeed's split of the gradient average around the sum-reduction.
  bool prescaleGradients = false;
  double gradientPredivideFactor = 0;
  DataTypesConfig dataTypes;
  ActivationCheckpointingConfig activationCheckpointing;
  /// train_batch_size = micro * gradient_accumulation_steps * worldSize.
  /// The two batch sizes are 0 when neither the file nor the IR gives one.
  int64_t trainBatchSize = 0;
  int64_t trainMicroBatchSizePerGpu = 0;
  int64_t gradientAccumulationSteps = 0;
  int64_t worldSize = 0;

  /// Keys accepted without effect on a compiled step (KnobSupport::NoEffect),
  /// canonical path -> value as JSON, so that toJSON shows them.
  std::map<std::string, std::string> noEffectValues;
  /// The resolved values of the supported scalar knobs that no field of
  /// this struct holds, canonical path -> value (an enum's as its choice):
  /// a knob that only the pipeline's binding table (ConfigBindings.def)
  /// reads needs a schema row and no field; lookupValue finds both.
  std::map<std::string, std::variant<bool, int64_t, double, std::string>>
      otherValues;

  /// Deprecated spellings, keys without effect, stage-3 knobs below stage 3.
  std::vector<llvm::SMDiagnostic> warnings;

  /// The whole configuration as DeepSpeed JSON: every key, canonical names,
  /// defaults filled and "auto" resolved.
  std::string toJSON() const;
  /// The resolved value of the knob at the canonical `path` when its field
  /// has type T (bool, int64_t, double or std::string), else null.
  template <typename T>
  const T *lookupValue(llvm::StringRef path) const;
};

/// The settings of a configuration as written (file, then overrides), not
/// yet resolved. Per-key checks (syntax, unknown keys, types, ranges,
/// conflicting spellings) happen when reading; checks that involve several
/// keys, support status and "auto" happen in resolve(), after the overrides.
class DeepSpeedConfigSettings {
public:
  /// No file: every key at DeepSpeed's default.
  DeepSpeedConfigSettings();
  DeepSpeedConfigSettings(DeepSpeedConfigSettings &&);
  DeepSpeedConfigSettings &operator=(DeepSpeedConfigSettings &&);
  ~DeepSpeedConfigSettings();

  static llvm::Expected<DeepSpeedConfigSettings> readFile(llvm::StringRef path);
  /// `bufferName` is the file name used in diagnostics.
  static llvm::Expected<DeepSpeedConfigSettings>
  readBuffer(llvm::StringRef json, llvm::StringRef bufferName);

  /// Sets `key` (a dotted path; aliases and deprecated spellings accepted)
  /// to `value`, replacing what the file says. `value` is JSON ("3", "5e8",
  /// "true", "[0.9, 0.99]", "{...}"); a string may be written without quotes
  /// (`cpu`). Unknown keys and invalid values are errors, positioned in a
  /// buffer named "<override>" that holds `key=value`.
  llvm::Error setOverride(llvm::StringRef key, llvm::StringRef value);

  /// Decides every value and checks the whole configuration.
  llvm::Expected<DeepSpeedConfig> resolve(const ResolveContext &context) const;

  /// Warnings found while reading (deprecated spellings).
  llvm::ArrayRef<llvm::SMDiagnostic> getWarnings() const;

  /// Where and how the knob or section at the canonical `path` was set, so
  /// that a finding about its value made after resolution (the pipeline
  /// mapping's) can point at it.
  struct KnobOrigin {
    /// The key as the last override or the file wrote it, with "(read as
    /// PATH)" after a deprecated spelling; `path` for a knob at its default.
    std::string name;
    /// Its value; invalid for a knob at its default.
    llvm::SMLoc loc;
  };
  KnobOrigin getKnobOrigin(llvm::StringRef path) const;

  /// A diagnostic at `loc`, a position in the file or an override (from
  /// getKnobOrigin); in the file, without a position, for an invalid `loc`.
  llvm::SMDiagnostic diagnose(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
                              const llvm::Twine &message) const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl;
};

/// readFile + setOverride for each (key, value) + resolve.
llvm::Expected<DeepSpeedConfig> loadDeepSpeedConfig(
    llvm::StringRef path,
    llvm::ArrayRef<std::pair<std::string, std::string>> overrides,
    const ResolveContext &context);

} // namespace zero

#endif // ZERO_CONFIG_DEEPSPEEDCONFIG_H
