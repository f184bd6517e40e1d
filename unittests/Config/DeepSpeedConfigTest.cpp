//===- DeepSpeedConfigTest.cpp - DeepSpeed configuration model ------------===//

#include "zero/Config/DeepSpeedConfig.h"
#include "zero/Config/ConfigDiagnostics.h"
#include "zero/Config/ConfigSchema.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using namespace zero;
using llvm::StringRef;

namespace {

std::string sourcePath(StringRef relative) {
  return (StringRef(ZERO_SOURCE_DIR) + "/" + relative).str();
}

std::string example(StringRef name) {
  return sourcePath(("examples/deepspeed/" + name).str());
}

std::string readText(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << path.str();
  return buffer ? (*buffer)->getBuffer().str() : "";
}

/// The first line of each diagnostic, as the driver will print it.
std::string messages(llvm::Error error) {
  return formatDiagnostics(takeDiagnostics(std::move(error)),
                           /*showSourceLine=*/false);
}
std::string messages(llvm::ArrayRef<llvm::SMDiagnostic> diagnostics) {
  return formatDiagnostics(diagnostics, /*showSourceLine=*/false);
}

/// Reads `json` (named ds.json) and resolves it.
llvm::Expected<DeepSpeedConfig> load(StringRef json,
                                     const ResolveContext &context = {}) {
  auto settings = DeepSpeedConfigSettings::readBuffer(json, "ds.json");
  if (!settings)
    return settings.takeError();
  return settings->resolve(context);
}

/// Errors of reading or resolving `json`, "" if it is valid.
std::string errorsOf(StringRef json, const ResolveContext &context = {}) {
  auto config = load(json, context);
  if (config)
    return "";
  return messages(config.takeError());
}

DeepSpeedConfig loadOrDie(StringRef json, const ResolveContext &context = {}) {
  auto config = load(json, context);
  if (!config) {
    ADD_FAILURE() << messages(config.takeError());
    return DeepSpeedConfig();
  }
  return std::move(*config);
}

//===----------------------------------------------------------------------===//
// The tutorials' configurations, exactly as written.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigTutorials, Stage1) {
  auto config = loadDeepSpeedConfig(example("ds_zero_stage_1.json"), {}, {});
  ASSERT_TRUE(bool(config)) << messages(config.takeError());
  EXPECT_EQ(config->zero.stage, 1);
  EXPECT_EQ(config->zero.reduceBucketSize, 500000000);
  EXPECT_TRUE(config->warnings.empty()) << messages(config->warnings);
}

TEST(DeepSpeedConfigTutorials, Stage2) {
  auto config = loadDeepSpeedConfig(example("ds_zero_stage_2.json"), {}, {});
  ASSERT_TRUE(bool(config)) << messages(config.takeError());
  EXPECT_EQ(config->zero.stage, 2);
  EXPECT_TRUE(config->zero.contiguousGradients);
  EXPECT_TRUE(config->zero.overlapComm);
  EXPECT_TRUE(config->zero.reduceScatter);
  EXPECT_EQ(config->zero.reduceBucketSize, 500000000);
  EXPECT_EQ(config->zero.allgatherBucketSize, 500000000);
}

TEST(DeepSpeedConfigTutorials, Stage3FailsOnTheMisspelledKeyOnly) {
  std::string path = example("ds_zero_stage_3_offload.json");
  auto settings = DeepSpeedConfigSettings::readFile(path);
  ASSERT_FALSE(bool(settings));
  EXPECT_EQ(messages(settings.takeError()),
            path + ":11:5: error: unknown key "
                   "'zero_optimization.stage3_param_persitance_threshold'; did "
                   "you mean 'stage3_param_persistence_threshold'?\n");
}

TEST(DeepSpeedConfigTutorials, Stage3WithTheSpellingFixed) {
  std::string text = readText(example("ds_zero_stage_3_offload.json"));
  size_t at = text.find("persitance");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "persistence");
  DeepSpeedConfig config = loadOrDie(text);
  EXPECT_EQ(config.zero.stage, 3);
  EXPECT_EQ(config.zero.offloadOptimizer.device, OffloadDevice::Cpu);
  EXPECT_EQ(config.zero.offloadParam.device, OffloadDevice::Cpu);
  // Knobs without a field of their own (otherValues).
  ASSERT_TRUE(config.lookupValue<int64_t>("zero_optimization.max_live_parameters"));
  EXPECT_EQ(*config.lookupValue<int64_t>("zero_optimization.max_live_parameters"),
            6000000);
  EXPECT_EQ(*config.lookupValue<int64_t>("zero_optimization.max_reuse_distance"),
            100000000);
  EXPECT_FALSE(config.lookupValue<bool>("zero_optimization.max_reuse_distance"));
  EXPECT_EQ(config.zero.prefetchBucketSize, 200000);
  EXPECT_EQ(config.zero.paramPersistenceThreshold, 100000);
  EXPECT_EQ(config.zero.reduceBucketSize, 3000000);
  EXPECT_EQ(config.zero.subGroupSize, 1000000);
  EXPECT_EQ(messages(config.warnings),
            "ds.json:4:5: warning: 'zero_optimization.cpu_offload' is "
            "deprecated (deprecated in DeepSpeed); write "
            "'zero_optimization.offload_optimizer.device': \"cpu\"\n"
            "ds.json:5:5: warning: 'zero_optimization.cpu_offload_params' is "
            "deprecated (DeepSpeed 0.3 spelling of cpu_offload_param, used by "
            "the ZeRO tutorial); write 'zero_optimization.offload_param.device'"
            ": \"cpu\"\n");
}

TEST(DeepSpeedConfigTutorials, OffloadTutorialIsNotValidJson) {
  // The offload tutorial has a trailing ',' and a missing ','; DeepSpeed's
  // json.load rejects it too.
  std::string path = example("ds_zero_offload.json");
  auto settings = DeepSpeedConfigSettings::readFile(path);
  ASSERT_FALSE(bool(settings));
  EXPECT_EQ(messages(settings.takeError()),
            path + ":5:28: error: trailing ',' before '}' is not valid JSON\n" +
                path +
                ":7:9: error: missing ',' before \"contiguous_gradients\"\n");
}

TEST(DeepSpeedConfigTutorials, OffloadTutorialFixed) {
  DeepSpeedConfig config = loadOrDie(R"({
    "zero_optimization": {
        "stage": 2,
        "offload_optimizer": {
            "device": "cpu"
        },
        "contiguous_gradients": true,
        "overlap_comm": true
    }
})");
  EXPECT_EQ(config.zero.stage, 2);
  EXPECT_EQ(config.zero.offloadOptimizer.device, OffloadDevice::Cpu);
  EXPECT_EQ(config.zero.offloadParam.device, OffloadDevice::None);
}

TEST(DeepSpeedConfigTutorials, ReferenceZero3AdamW) {
  // The reference's first ZeRO-3 example, without its "...".
  DeepSpeedConfig config = loadOrDie(R"({
    "zero_optimization": {
        "stage": 3
    },
    "fp16": {
        "enabled": true
    },
    "optimizer": {
        "type": "AdamW",
        "params": {
        "lr": 0.001,
        "betas": [
            0.8,
            0.999
        ],
        "eps": 1e-8,
        "weight_decay": 3e-7
        }
    }
})");
  EXPECT_TRUE(config.fp16.enabled);
  EXPECT_EQ(config.optimizer.kind, OptimizerKind::AdamW);
  EXPECT_DOUBLE_EQ(config.optimizer.betas[0], 0.8);
  EXPECT_DOUBLE_EQ(config.optimizer.betas[1], 0.999);
  EXPECT_DOUBLE_EQ(config.optimizer.eps, 1e-8);
  EXPECT_DOUBLE_EQ(config.optimizer.weightDecay, 3e-7);
  EXPECT_TRUE(config.optimizer.adamWMode);
  EXPECT_TRUE(config.zero.overlapComm); // DeepSpeed's default at stage 3.
}

//===----------------------------------------------------------------------===//
// Defaults are DeepSpeed's.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigDefaults, EmptyFileMatchesTheReference) {
  DeepSpeedConfig config = loadOrDie("{}");
  const ZeroOptimizationConfig &zero = config.zero;
  EXPECT_EQ(zero.stage, 0);
  EXPECT_TRUE(zero.contiguousGradients);
  EXPECT_TRUE(zero.reduceScatter);
  EXPECT_FALSE(zero.overlapComm);
  EXPECT_FALSE(zero.roundRobinGradients);
  EXPECT_FALSE(zero.gather16BitWeightsOnModelSave);
  EXPECT_EQ(zero.reduceBucketSize, 500000000);
  EXPECT_EQ(zero.allgatherBucketSize, 500000000);
  EXPECT_EQ(zero.subGroupSize, 1000000000);
  EXPECT_EQ(zero.prefetchBucketSize, 50000000);
  EXPECT_EQ(zero.paramPersistenceThreshold, 100000);
  auto integer = [&](StringRef path) {
    const int64_t *value = config.lookupValue<int64_t>(path);
    return value ? *value : -1;
  };
  EXPECT_EQ(integer("zero_optimization.model_persistence_threshold"),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(integer("zero_optimization.max_live_parameters"), 1000000000);
  EXPECT_EQ(integer("zero_optimization.max_reuse_distance"), 1000000000);

  const OffloadOptimizerConfig &optimizerOffload = zero.offloadOptimizer;
  EXPECT_EQ(optimizerOffload.device, OffloadDevice::None);
  EXPECT_EQ(optimizerOffload.nvmePath, "");
  EXPECT_EQ(optimizerOffload.bufferCount, 4);
  EXPECT_FALSE(optimizerOffload.pinMemory);
  EXPECT_FALSE(optimizerOffload.pipelineRead);
  EXPECT_FALSE(optimizerOffload.pipelineWrite);
  EXPECT_FALSE(optimizerOffload.fastInit);
  EXPECT_EQ(optimizerOffload.ratio, 1.0);

  const OffloadParamConfig &paramOffload = zero.offloadParam;
  EXPECT_EQ(paramOffload.device, OffloadDevice::None);
  EXPECT_EQ(paramOffload.bufferCount, 5);
  EXPECT_EQ(paramOffload.bufferSize, 100000000);
  EXPECT_EQ(paramOffload.maxInCpu, 1000000000);
  EXPECT_FALSE(paramOffload.pinMemory);

  EXPECT_FALSE(config.fp16.enabled);
  EXPECT_FALSE(config.fp16.autoCast);
  EXPECT_EQ(config.fp16.lossScale, 0);
  EXPECT_EQ(config.fp16.initialScalePower, 16);
  EXPECT_EQ(config.fp16.lossScaleWindow, 1000);
  EXPECT_EQ(config.fp16.hysteresis, 2);
  EXPECT_FALSE(config.fp16.consecutiveHysteresis);
  EXPECT_EQ(config.fp16.minLossScale, 1);
  EXPECT_FALSE(config.bf16.enabled);

  EXPECT_EQ(config.optimizer.kind, OptimizerKind::None);
  EXPECT_EQ(config.gradientClipping, 0);
  EXPECT_EQ(config.communicationDataType, DataType::None);
  EXPECT_FALSE(config.prescaleGradients);
  EXPECT_EQ(config.gradientPredivideFactor, 1.0);
  EXPECT_EQ(config.dataTypes.gradAccumDtype, DataType::None);
  EXPECT_EQ(config.trainBatchSize, 0);
  EXPECT_EQ(config.trainMicroBatchSizePerGpu, 0);
  EXPECT_EQ(config.gradientAccumulationSteps, 1);
  EXPECT_EQ(config.worldSize, 1);
}

TEST(DeepSpeedConfigDefaults, OptimizerDefaults) {
  DeepSpeedConfig adam = loadOrDie(R"({"optimizer": {"type": "adam"}})");
  EXPECT_EQ(adam.optimizer.kind, OptimizerKind::Adam);
  EXPECT_DOUBLE_EQ(adam.optimizer.lr, 1e-3);
  EXPECT_DOUBLE_EQ(adam.optimizer.betas[0], 0.9);
  EXPECT_DOUBLE_EQ(adam.optimizer.betas[1], 0.999);
  EXPECT_DOUBLE_EQ(adam.optimizer.eps, 1e-8);
  EXPECT_EQ(adam.optimizer.weightDecay, 0);
  // DeepSpeed's "Adam" decouples weight decay unless adam_w_mode is false.
  EXPECT_TRUE(adam.optimizer.adamWMode);
  EXPECT_FALSE(adam.optimizer.amsgrad);

  DeepSpeedConfig l2 = loadOrDie(
      R"({"optimizer": {"type": "Adam", "params": {"adam_w_mode": false}}})");
  EXPECT_FALSE(l2.optimizer.adamWMode);

  DeepSpeedConfig amsgrad = loadOrDie(
      R"({"optimizer": {"type": "AdamW", "params": {"amsgrad": true}}})");
  EXPECT_TRUE(amsgrad.optimizer.amsgrad);
  EXPECT_NE(amsgrad.toJSON().find("\"amsgrad\": true"), std::string::npos)
      << amsgrad.toJSON();

  DeepSpeedConfig sgd = loadOrDie(R"({"optimizer": {"type": "SGD",
      "params": {"lr": 0.1, "momentum": 0.9, "nesterov": true}}})");
  EXPECT_EQ(sgd.optimizer.kind, OptimizerKind::SGD);
  EXPECT_DOUBLE_EQ(sgd.optimizer.momentum, 0.9);
  EXPECT_EQ(sgd.optimizer.dampening, 0);
  EXPECT_TRUE(sgd.optimizer.nesterov);
}

TEST(DeepSpeedConfigDefaults, EveryDefaultIsValid) {
  // getDefaultValue aborts on a default its own knob rejects; resolving an
  // empty file converts them all.
  DeepSpeedConfigSettings settings;
  EXPECT_TRUE(bool(settings.resolve({})));
  for (const KnobInfo &knob : getKnobs()) {
    EXPECT_FALSE(knob.summary.empty()) << knob.path.str();
    EXPECT_EQ(knob.support == KnobSupport::Supported, knob.reason.empty())
        << knob.path.str();
  }
}

//===----------------------------------------------------------------------===//
// Aliases and deprecated keys.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigSpellings, Stage3Aliases) {
  static const char *const names[] = {
      "prefetch_bucket_size", "param_persistence_threshold",
      "model_persistence_threshold", "max_live_parameters",
      "max_reuse_distance"};
  for (StringRef name : names) {
    DeepSpeedConfig plain = loadOrDie(
        R"({"zero_optimization": {"stage": 3, ")" + name.str() + R"(": 7}})");
    DeepSpeedConfig prefixed = loadOrDie(R"({"zero_optimization": {"stage": 3,
        "stage3_)" + name.str() + R"(": 7}})");
    EXPECT_EQ(plain.toJSON(), prefixed.toJSON()) << name.str();
    EXPECT_NE(plain.toJSON(),
              loadOrDie(R"({"zero_optimization": {"stage": 3}})").toJSON())
        << name.str();
  }
  DeepSpeedConfig gather = loadOrDie(R"({"zero_optimization": {"stage": 3,
      "stage3_gather_16bit_weights_on_model_save": true}})");
  EXPECT_TRUE(gather.zero.gather16BitWeightsOnModelSave);
}

TEST(DeepSpeedConfigSpellings, BothSpellingsOfOneKnob) {
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {
  "prefetch_bucket_size": 1,
  "stage3_prefetch_bucket_size": 2}})"),
            "ds.json:3:3: error: "
            "'zero_optimization.stage3_prefetch_bucket_size' and "
            "'zero_optimization.prefetch_bucket_size' (at ds.json:2:3) both "
            "set 'zero_optimization.prefetch_bucket_size'; remove "
            "'zero_optimization.stage3_prefetch_bucket_size'\n");
}

TEST(DeepSpeedConfigSpellings, DeprecatedKeys) {
  DeepSpeedConfig config = loadOrDie(R"({"zero_optimization": {"stage": 3,
      "cpu_offload": true, "cpu_offload_param": true,
      "cpu_offload_use_pin_memory": true,
      "stage3_gather_fp16_weights_on_model_save": true},
      "bfloat16": {"enabled": true}})");
  EXPECT_EQ(config.zero.offloadOptimizer.device, OffloadDevice::Cpu);
  EXPECT_EQ(config.zero.offloadParam.device, OffloadDevice::Cpu);
  EXPECT_TRUE(config.zero.offloadOptimizer.pinMemory);
  EXPECT_TRUE(config.zero.offloadParam.pinMemory);
  EXPECT_TRUE(config.zero.gather16BitWeightsOnModelSave);
  EXPECT_TRUE(config.bf16.enabled);
  EXPECT_EQ(config.warnings.size(), 5u) << messages(config.warnings);
  EXPECT_NE(messages(config.warnings)
                .find("'zero_optimization.cpu_offload_use_pin_memory' is "
                      "deprecated (deprecated in DeepSpeed); write "
                      "'zero_optimization.offload_optimizer.pin_memory' and "
                      "'zero_optimization.offload_param.pin_memory'"),
            std::string::npos)
      << messages(config.warnings);

  DeepSpeedConfig off =
      loadOrDie(R"({"zero_optimization": {"stage": 2, "cpu_offload": false}})");
  EXPECT_EQ(off.zero.offloadOptimizer.device, OffloadDevice::None);
}

TEST(DeepSpeedConfigSpellings, OldAndNewSpellingTogether) {
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"stage": 2,
"cpu_offload": true,
"offload_optimizer": {"device": "cpu"}}})"),
            "ds.json:3:23: error: "
            "'zero_optimization.offload_optimizer.device' and "
            "'zero_optimization.cpu_offload' (at ds.json:2:1) both set "
            "'zero_optimization.offload_optimizer.device'; remove "
            "'zero_optimization.cpu_offload'\n");
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {
"stage3_gather_fp16_weights_on_model_save": true,
"stage3_gather_16bit_weights_on_model_save": true}})"),
            "ds.json:3:1: error: "
            "'zero_optimization.stage3_gather_16bit_weights_on_model_save' "
            "and 'zero_optimization.stage3_gather_fp16_weights_on_model_save' "
            "(at ds.json:2:1) both set "
            "'zero_optimization.gather_16bit_weights_on_model_save'; remove "
            "'zero_optimization.stage3_gather_fp16_weights_on_model_save'\n");
  EXPECT_EQ(errorsOf(R"({"bf16": {"enabled": true}, "bfloat16": {}})"),
            "ds.json:1:29: error: 'bfloat16' and 'bf16' (at ds.json:1:2) "
            "both set 'bf16'; remove 'bfloat16'\n");
}

//===----------------------------------------------------------------------===//
// Numbers and booleans.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigValues, IntegersInAnyJsonSpelling) {
  for (StringRef text : {"5e8", "5.0e8", "500000000", "5E+8", "0.5e9"}) {
    DeepSpeedConfig config = loadOrDie(
        (R"({"zero_optimization": {"reduce_bucket_size": )" + text + "}}")
            .str());
    EXPECT_EQ(config.zero.reduceBucketSize, 500000000) << text.str();
  }
  EXPECT_EQ(*loadOrDie(R"({"zero_optimization": {"model_persistence_threshold":
                9223372036854775807}})")
                 .lookupValue<int64_t>(
                     "zero_optimization.model_persistence_threshold"),
            std::numeric_limits<int64_t>::max());
}

TEST(DeepSpeedConfigValues, WrongTypesAndRanges) {
  auto error = [](StringRef key, StringRef value) {
    return errorsOf(
        ("{\"zero_optimization\": {\"" + key + "\": " + value + "}}").str());
  };
  EXPECT_EQ(error("reduce_bucket_size", "1.5"),
            "ds.json:1:46: error: zero_optimization.reduce_bucket_size: "
            "expected a non-negative integer, got 1.5\n");
  EXPECT_EQ(error("reduce_bucket_size", "\"abc\""),
            "ds.json:1:46: error: zero_optimization.reduce_bucket_size: "
            "expected a non-negative integer, got \"abc\"\n");
  EXPECT_EQ(error("reduce_bucket_size", "\"5e8\""),
            "ds.json:1:46: error: zero_optimization.reduce_bucket_size: "
            "expected a non-negative integer, got \"5e8\"\n");
  EXPECT_EQ(error("reduce_bucket_size", "-1"),
            "ds.json:1:46: error: zero_optimization.reduce_bucket_size: "
            "expected a non-negative integer, got -1\n");
  EXPECT_EQ(error("reduce_bucket_size", "1e19"),
            "ds.json:1:46: error: zero_optimization.reduce_bucket_size: "
            "expected a non-negative integer, got 1e19\n");
  EXPECT_EQ(error("stage", "4"),
            "ds.json:1:33: error: zero_optimization.stage: expected an "
            "integer in [0, 3], got 4\n");
  EXPECT_EQ(error("overlap_comm", "\"true\""),
            "ds.json:1:40: error: zero_optimization.overlap_comm: expected "
            "true or false, got \"true\"\n");
  EXPECT_EQ(error("overlap_comm", "1"),
            "ds.json:1:40: error: zero_optimization.overlap_comm: expected "
            "true or false, got 1\n");
  EXPECT_EQ(error("offload_optimizer", "{\"ratio\": 1.5}"),
            "ds.json:1:55: error: zero_optimization.offload_optimizer.ratio: "
            "expected a number in [0, 1], got 1.5\n");
  EXPECT_EQ(error("offload_param", "{\"device\": \"gpu\"}"),
            "ds.json:1:52: error: zero_optimization.offload_param.device: "
            "expected one of \"none\", \"cpu\", \"nvme\", got \"gpu\"; did "
            "you mean \"cpu\"?\n");
  EXPECT_EQ(error("offload_param", "true"),
            "ds.json:1:41: error: zero_optimization.offload_param: expected "
            "an object, got true\n");
  EXPECT_EQ(errorsOf(R"({"optimizer": {"type": "Adam", "params":
                         {"betas": [0.9, 1.0]}}})"),
            "ds.json:2:36: error: optimizer.params.betas: expected two "
            "numbers in [0, 1), got [0.9, 1.0]\n");
}

TEST(DeepSpeedConfigValues, GradientDataTypes) {
  DeepSpeedConfig config = loadOrDie(R"({"communication_data_type": "fp32",
      "data_types": {"grad_accum_dtype": "bf16"}, "prescale_gradients": true,
      "gradient_predivide_factor": 2.5})");
  EXPECT_EQ(config.communicationDataType, DataType::FP32);
  EXPECT_EQ(config.dataTypes.gradAccumDtype, DataType::BF16);
  EXPECT_TRUE(config.prescaleGradients);
  EXPECT_EQ(config.gradientPredivideFactor, 2.5);
  std::string text = config.toJSON();
  EXPECT_NE(text.find("\"communication_data_type\": \"fp32\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"data_types\": {\n    \"grad_accum_dtype\": \"bf16\""),
            std::string::npos)
      << text;
  EXPECT_EQ(loadOrDie(text).toJSON(), text);

  // DeepSpeed lower-cases communication_data_type; its DtypeEnum does not
  // accept "BF16" for grad_accum_dtype.
  EXPECT_EQ(
      loadOrDie(R"({"communication_data_type": "BF16"})").communicationDataType,
      DataType::BF16);
  EXPECT_EQ(errorsOf(R"({"data_types": {"grad_accum_dtype": "BF16"}})"),
            "ds.json:1:37: error: data_types.grad_accum_dtype: expected one "
            "of \"fp16\", \"bf16\", \"fp32\", got \"BF16\"; did you mean "
            "\"bf16\"?\n");
  // The predivide factor is a divisor.
  EXPECT_EQ(errorsOf(R"({"gradient_predivide_factor": 0})"),
            "ds.json:1:31: error: gradient_predivide_factor: expected a "
            "positive number, got 0\n");
  EXPECT_EQ(errorsOf(R"({"gradient_predivide_factor": -1.5})"),
            "ds.json:1:31: error: gradient_predivide_factor: expected a "
            "positive number, got -1.5\n");
  EXPECT_EQ(errorsOf(R"({"data_types": {"grad_accum_type": "fp32"}})"),
            "ds.json:1:17: error: unknown key 'data_types.grad_accum_type'; "
            "did you mean 'grad_accum_dtype'?\n");
}

TEST(DeepSpeedConfigValues, StrictJson) {
  EXPECT_EQ(errorsOf("{\"fp16\": {\"enabled\": True}}"),
            "ds.json:1:22: error: 'True' is not a JSON value; write true\n");
  EXPECT_EQ(errorsOf("{\"fp16\": {'enabled': true}}"),
            "ds.json:1:11: error: strings must be in double quotes\n");
  EXPECT_EQ(errorsOf("{\n  # comment\n  \"fp16\": {}\n}"),
            "ds.json:2:3: error: comments are not valid JSON\n");
  EXPECT_EQ(errorsOf("{\"train_batch_size\": 08}"),
            "ds.json:1:22: error: invalid number '08'\n");
  EXPECT_EQ(errorsOf("{\"fp16\": {}} {}"),
            "ds.json:1:14: error: expected the end of the file after the "
            "JSON value, got '{'\n");
  EXPECT_EQ(errorsOf("[1, 2]"),
            "ds.json:1:1: error: a DeepSpeed configuration must be a JSON "
            "object ('{...}')\n");
  EXPECT_EQ(errorsOf("  "), "ds.json:1:3: error: the configuration is "
                            "empty; expected a JSON object\n");
  EXPECT_EQ(errorsOf("{\"fp16\": {\"enabled\": true}"),
            "ds.json:1:1: error: this '{' is never closed\n"
            "ds.json:1:27: error: unexpected end of file; expected ',' or "
            "'}' after the member\n");
  EXPECT_EQ(errorsOf("{\"a\": \"x\\q\"}"),
            "ds.json:1:9: error: invalid escape '\\q' in a string\n");
  EXPECT_EQ(errorsOf("\xEF\xBB\xBF{}"), ""); // A byte order mark is fine.
  EXPECT_EQ(errorsOf("{\"zero_optimization\":{\"stage\":3}}"), "");
}

TEST(DeepSpeedConfigValues, DuplicateKeysNameBothPositions) {
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {
    "stage": 1,
    "stage": 2}})"),
            "ds.json:3:5: error: duplicate key 'zero_optimization.stage' "
            "(first at line 2, column 5)\n");
}

//===----------------------------------------------------------------------===//
// Unknown keys.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigKeys, UnknownKeysWithSuggestions) {
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"stgae": 1}})"),
            "ds.json:1:24: error: unknown key 'zero_optimization.stgae'; "
            "did you mean 'stage'?\n");
  EXPECT_EQ(errorsOf(R"({"overlap_comm": true})"),
            "ds.json:1:2: error: unknown key 'overlap_comm'; did you mean "
            "'zero_optimization.overlap_comm'?\n");
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"offload_param":
                         {"nvme_pth": "/x"}}})"),
            "ds.json:2:27: error: unknown key "
            "'zero_optimization.offload_param.nvme_pth'; did you mean "
            "'nvme_path'?\n");
  EXPECT_EQ(errorsOf(R"({"xyzzy": 1, "fp16": {"enabeld": true}})"),
            "ds.json:1:2: error: unknown key 'xyzzy'\n"
            "ds.json:1:23: error: unknown key 'fp16.enabeld'; did you mean "
            "'enabled'?\n");
}

//===----------------------------------------------------------------------===//
// Rules between keys, support status.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigRules, Conflicts) {
  EXPECT_EQ(errorsOf(R"({"fp16": {"enabled": true},
  "bf16": {"enabled": true}})"),
            "ds.json:1:22: error: fp16.enabled and bf16.enabled (at "
            "ds.json:2:23) are both true; enable at most one\n");
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"stage": 3,
  "offload_param": {"device": "nvme"}}})"),
            "ds.json:2:31: error: zero_optimization.offload_param.device is "
            "\"nvme\" but zero_optimization.offload_param.nvme_path is not "
            "set\n");
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"stage": 2,
  "offload_param": {"device": "cpu"}}})"),
            "ds.json:2:31: error: zero_optimization.offload_param.device: "
            "offloading parameters needs stage 3 (stage is 2 (at "
            "ds.json:1:33))\n");
  EXPECT_EQ(errorsOf(R"({"zero_optimization":
  {"offload_optimizer": {"device": "cpu", "ratio": 0.5}}})"),
            "ds.json:2:36: error: zero_optimization.offload_optimizer.device: "
            "offloading the optimizer needs stage 1, 2 or 3 (stage is 0)\n"
            "ds.json:2:52: error: zero_optimization.offload_optimizer.ratio: "
            "a ratio below 1 needs stage 3 (stage is 0)\n");
  EXPECT_EQ(errorsOf(R"({"optimizer": {"type": "AdamW",
  "params": {"momentum": 0.9, "adam_w_mode": false}}})"),
            "ds.json:2:26: error: optimizer.params.momentum is not a "
            "parameter of AdamW (only of SGD)\n"
            "ds.json:2:46: error: optimizer.params.adam_w_mode is false but "
            "optimizer.type is AdamW; for Adam with L2 weight decay write "
            "type \"Adam\"\n");
  EXPECT_EQ(errorsOf(R"({"optimizer": {"params": {"lr": 0.1}}})"),
            "ds.json:1:15: error: optimizer: 'type' is missing (Adam, AdamW "
            "or SGD)\n");
  EXPECT_EQ(errorsOf(R"({"optimizer": {"type": "Adamw"}})"), "");
  EXPECT_EQ(errorsOf(R"({"optimizer": {"type": "Adamx"}})"),
            "ds.json:1:24: error: optimizer.type: expected one of \"Adam\", "
            "\"AdamW\", \"SGD\", got \"Adamx\"; did you mean \"Adam\"?\n");
}

TEST(DeepSpeedConfigRules, SchedulerParameters) {
  EXPECT_EQ(errorsOf(R"({"scheduler": {"type": "WarmupLR",
                         "params": {"warmup_num_steps": 100}}})"),
            "");
  EXPECT_EQ(errorsOf(R"({"scheduler": {"params": {"warmup_num_steps": 1}}})"),
            "ds.json:1:15: error: scheduler: 'type' is missing (WarmupLR, "
            "WarmupDecayLR, WarmupCosineLR, OneCycle or LRRangeTest)\n");
  EXPECT_EQ(errorsOf(R"({"scheduler": {"type": "WarmupLR",
                         "params": {"cos_min_ratio": 0.1}}})"),
            "ds.json:2:54: error: scheduler.params.cos_min_ratio is not a "
            "parameter of WarmupLR (only of WarmupCosineLR)\n");
  EXPECT_EQ(errorsOf(R"({"scheduler": {"type": "WarmupCosineLR"}})"),
            "ds.json:1:24: error: scheduler.type is WarmupCosineLR, which "
            "needs scheduler.params.total_num_steps\n");
  EXPECT_EQ(errorsOf(R"({"scheduler": {"type": "OneCycle",
                         "params": {"cycle_min_lr": 0.1}}})"),
            "ds.json:1:24: error: scheduler.type is OneCycle, which needs "
            "scheduler.params.cycle_max_lr\n");
  EXPECT_EQ(errorsOf(R"({"scheduler": {"type": "WarmupLR",
                         "params": {"warmup_num_steps": 0}}})"),
            "ds.json:2:57: error: scheduler.params.warmup_num_steps: expected "
            "a positive integer, got 0\n");
}

TEST(DeepSpeedConfigJson, SchedulerDefaults) {
  ResolveContext context;
  // warmup_max_lr defaults to the optimizer's rate for WarmupLR only.
  DeepSpeedConfig warmup = loadOrDie(R"({"optimizer": {"type": "AdamW",
      "params": {"lr": 0.0003}}, "scheduler": {"type": "WarmupLR"}})",
                                     context);
  EXPECT_EQ(warmup.scheduler.kind, SchedulerKind::WarmupLR);
  EXPECT_EQ(warmup.scheduler.warmupMaxLr, 0.0003);
  EXPECT_EQ(warmup.scheduler.lastBatchIteration, -1);
  EXPECT_EQ(warmup.scheduler.warmupType, WarmupType::Log);
  DeepSpeedConfig decay = loadOrDie(R"({"scheduler": {"type": "WarmupDecayLR",
      "params": {"total_num_steps": 50, "warmup_type": "linear"}}})",
                                    context);
  EXPECT_EQ(decay.scheduler.warmupMaxLr, 0.001);
  EXPECT_EQ(decay.scheduler.totalNumSteps, 50);
  EXPECT_EQ(decay.scheduler.warmupType, WarmupType::Linear);
  // OneCycle's second half copies the first; SGD turns momentum cycling off.
  DeepSpeedConfig cycle = loadOrDie(R"({"optimizer": {"type": "SGD"},
      "scheduler": {"type": "OneCycle", "params": {"cycle_min_lr": 0.01,
      "cycle_max_lr": 0.1, "cycle_first_step_size": 7,
      "cycle_first_stair_count": 2}}})",
                                    context);
  EXPECT_EQ(cycle.scheduler.cycleSecondStepSize, 7);
  EXPECT_EQ(cycle.scheduler.cycleSecondStairCount, 2);
  EXPECT_FALSE(cycle.scheduler.cycleMomentum);
  // Only the schedule's own parameters print, and they read back the same.
  std::string text = cycle.toJSON();
  EXPECT_NE(text.find("\"cycle_second_step_size\": 7"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("warmup_num_steps"), std::string::npos) << text;
  EXPECT_EQ(loadOrDie(text, context).toJSON(), text);
}

TEST(DeepSpeedConfigRules, RefusedKeys) {
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"stage": 1,
  "legacy_stage1": true}})"),
            "ds.json:2:20: error: zero_optimization.legacy_stage1: DeepSpeed's "
            "legacy stage-1 implementation is not supported; zero-opt has one "
            "stage-1 implementation (only the default, false, is accepted)\n");
  // Keys that cannot change a compiled step are accepted at every value.
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"allgather_partitions": false,
      "use_multi_rank_bucket_allreduce": false}})"),
            "");
  // Defaults are accepted, as HuggingFace templates write them.
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"allgather_partitions": true,
      "zero_quantized_weights": false, "mics_shard_size": -1}})"),
            "");
  EXPECT_EQ(errorsOf(R"({"optimizer": {"type": "OneBitAdam"}})"),
            "ds.json:1:24: error: optimizer.type: \"OneBitAdam\": 1-bit Adam "
            "(compressed communication) is not supported yet\n");
  EXPECT_EQ(errorsOf(R"({"amp": {"enabled": true}})"),
            "ds.json:1:9: error: amp: Apex AMP is not supported; use fp16 or "
            "bf16\n");
}

TEST(DeepSpeedConfigRules, KeysWithoutEffectWarn) {
  DeepSpeedConfig config = loadOrDie(R"({"steps_per_print": 100,
      "wall_clock_breakdown": false, "tensorboard": {"enabled": true},
      "zero_optimization": {"stage": 2, "stage3_max_live_parameters": 1e6}})");
  EXPECT_EQ(messages(config.warnings),
            "ds.json:3:71: warning: zero_optimization.stage3_max_live_"
            "parameters only applies at stage 3 (stage is 2)\n"
            "ds.json:1:21: warning: steps_per_print has no effect on a "
            "compiled step: progress logging of the DeepSpeed engine; "
            "zero-run prints its own progress\n"
            "ds.json:2:53: warning: tensorboard has no effect on a compiled "
            "step: monitoring output of the DeepSpeed engine; a compiled "
            "step has no such hooks (zero-run prints progress and writes a "
            "trace on request)\n");
  EXPECT_EQ(config.noEffectValues["steps_per_print"], "100");
  EXPECT_EQ(config.noEffectValues["tensorboard"], "{\"enabled\":true}");
}

//===----------------------------------------------------------------------===//
// "auto" and the batch-size rule.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigAuto, BucketSizesFromHiddenSize) {
  const char *json = R"({"zero_optimization": {"stage": 3,
      "reduce_bucket_size": "auto",
      "stage3_prefetch_bucket_size": "auto",
      "stage3_param_persistence_threshold": "auto"}})";
  ResolveContext context;
  context.hiddenSize = 1024;
  DeepSpeedConfig config = loadOrDie(json, context);
  EXPECT_EQ(config.zero.reduceBucketSize, 1024 * 1024);
  EXPECT_EQ(config.zero.prefetchBucketSize, 943718); // 0.9 * 1024^2.
  EXPECT_EQ(config.zero.paramPersistenceThreshold, 10240);

  EXPECT_EQ(errorsOf(json),
            "ds.json:2:29: error: zero_optimization.reduce_bucket_size: "
            "\"auto\" needs the model's hidden size, which is not known\n"
            "ds.json:3:38: error: zero_optimization.stage3_prefetch_bucket_"
            "size: \"auto\" needs the model's hidden size, which is not known\n"
            "ds.json:4:45: error: zero_optimization.stage3_param_persistence_"
            "threshold: \"auto\" needs the model's hidden size, which is not "
            "known\n");
}

TEST(DeepSpeedConfigAuto, PrecisionFromTheIR) {
  const char *json =
      R"({"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}})";
  ResolveContext context;
  context.precision = ParamPrecision::BF16;
  DeepSpeedConfig config = loadOrDie(json, context);
  EXPECT_FALSE(config.fp16.enabled);
  EXPECT_TRUE(config.bf16.enabled);
  EXPECT_EQ(errorsOf(json),
            "ds.json:1:22: error: fp16.enabled: \"auto\" needs the element "
            "type of the parameters, which is not known\n"
            "ds.json:1:51: error: bf16.enabled: \"auto\" needs the element "
            "type of the parameters, which is not known\n");
}

TEST(DeepSpeedConfigAuto, TrainerValuesAreErrors) {
  EXPECT_EQ(errorsOf(R"({"optimizer": {"type": "AdamW",
      "params": {"lr": "auto", "betas": "auto"}}, "gradient_clipping": "auto"})"),
            "ds.json:2:24: error: optimizer.params.lr: \"auto\" is filled in "
            "by a HuggingFace trainer, and zero-opt has none; write the value\n"
            "ds.json:2:41: error: optimizer.params.betas: \"auto\" is filled "
            "in by a HuggingFace trainer, and zero-opt has none; write the "
            "value\n"
            "ds.json:2:72: error: gradient_clipping: \"auto\" is filled in by "
            "a HuggingFace trainer, and zero-opt has none; write the value\n");
  EXPECT_EQ(errorsOf(R"({"zero_optimization": {"stage": "auto"}})"),
            "ds.json:1:33: error: zero_optimization.stage: expected an "
            "integer in [0, 3], got \"auto\" (\"auto\" is not accepted for "
            "this key)\n");
}

TEST(DeepSpeedConfigAuto, BatchSizes) {
  ResolveContext context;
  context.worldSize = 8;
  auto batch = [&](StringRef json) {
    DeepSpeedConfig config = loadOrDie(json, context);
    return std::make_tuple(config.trainBatchSize,
                           config.trainMicroBatchSizePerGpu,
                           config.gradientAccumulationSteps);
  };
  EXPECT_EQ(batch(R"({"train_batch_size": "auto",
      "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2})"),
            std::make_tuple(64, 4, 2));
  EXPECT_EQ(batch(R"({"train_batch_size": 64,
      "train_micro_batch_size_per_gpu": 4})"),
            std::make_tuple(64, 4, 2));
  EXPECT_EQ(
      batch(R"({"train_batch_size": 64, "gradient_accumulation_steps": 4})"),
      std::make_tuple(64, 2, 4));
  EXPECT_EQ(batch(R"({"train_batch_size": 64})"), std::make_tuple(64, 8, 1));
  EXPECT_EQ(batch(R"({"train_micro_batch_size_per_gpu": 3})"),
            std::make_tuple(24, 3, 1));
  EXPECT_EQ(batch(R"({"gradient_accumulation_steps": 2})"),
            std::make_tuple(0, 0, 2));
  context.microBatchSize = 2;
  EXPECT_EQ(batch(R"({"gradient_accumulation_steps": "auto"})"),
            std::make_tuple(16, 2, 1));

  EXPECT_EQ(errorsOf(R"({"train_batch_size": 32,
      "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2})",
                     context),
            "ds.json:2:41: error: train_micro_batch_size_per_gpu is 4 but "
            "the training step processes 2 samples per rank\n"
            "ds.json:1:22: error: train_batch_size (32) must equal "
            "train_micro_batch_size_per_gpu (4) * gradient_accumulation_steps "
            "(2) * world size (8)\n");
  context.microBatchSize = 0;
  EXPECT_EQ(errorsOf(R"({"train_batch_size": 20,
      "train_micro_batch_size_per_gpu": 2})",
                     context),
            "ds.json:1:22: error: train_batch_size (20) is not a multiple of "
            "train_micro_batch_size_per_gpu * world size (16)\n");
}

//===----------------------------------------------------------------------===//
// Overrides.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigOverrides, OverridesWinOverTheFile) {
  auto settings =
      DeepSpeedConfigSettings::readFile(example("ds_zero_stage_1.json"));
  ASSERT_TRUE(bool(settings)) << messages(settings.takeError());
  EXPECT_FALSE(bool(settings->setOverride("zero_optimization.stage", "3")));
  EXPECT_FALSE(bool(
      settings->setOverride("zero_optimization.reduce_bucket_size", "1e6")));
  EXPECT_FALSE(bool(
      settings->setOverride("zero_optimization.offload_param.device", "cpu")));
  EXPECT_FALSE(bool(settings->setOverride(
      "zero_optimization.stage3_max_live_parameters", "5e7")));
  EXPECT_FALSE(bool(settings->setOverride(
      "zero_optimization.offload_optimizer",
      R"({"device": "nvme", "nvme_path": "/local_nvme"})")));
  auto config = settings->resolve({});
  ASSERT_TRUE(bool(config)) << messages(config.takeError());
  EXPECT_EQ(config->zero.stage, 3);
  EXPECT_EQ(config->zero.reduceBucketSize, 1000000);
  EXPECT_EQ(config->zero.offloadParam.device, OffloadDevice::Cpu);
  EXPECT_EQ(
      *config->lookupValue<int64_t>("zero_optimization.max_live_parameters"),
      50000000);
  EXPECT_EQ(config->zero.offloadOptimizer.device, OffloadDevice::Nvme);
  EXPECT_EQ(config->zero.offloadOptimizer.nvmePath, "/local_nvme");
}

TEST(DeepSpeedConfigOverrides, OverrideReplacesAnySpelling) {
  auto settings = DeepSpeedConfigSettings::readBuffer(
      R"({"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 1,
          "cpu_offload": true},
          "fp16": {"enabled": true}, "bf16": {"enabled": true}})",
      "ds.json");
  ASSERT_TRUE(bool(settings)) << messages(settings.takeError());
  EXPECT_FALSE(bool(
      settings->setOverride("zero_optimization.prefetch_bucket_size", "2")));
  EXPECT_FALSE(bool(settings->setOverride(
      "zero_optimization.offload_optimizer.device", "none")));
  // An override can settle a conflict of the file.
  EXPECT_FALSE(bool(settings->setOverride("bf16.enabled", "false")));
  auto config = settings->resolve({});
  ASSERT_TRUE(bool(config)) << messages(config.takeError());
  EXPECT_EQ(config->zero.prefetchBucketSize, 2);
  EXPECT_EQ(config->zero.offloadOptimizer.device, OffloadDevice::None);
  EXPECT_FALSE(config->bf16.enabled);
}

TEST(DeepSpeedConfigOverrides, OverrideErrors) {
  DeepSpeedConfigSettings settings;
  EXPECT_EQ(messages(settings.setOverride("zero_optimization.stag", "3")),
            "<override>:1:19: error: unknown key 'zero_optimization.stag'; "
            "did you mean 'stage'?\n");
  EXPECT_EQ(messages(settings.setOverride("zero_optimizaton.stage", "3")),
            "<override>:1:1: error: unknown key 'zero_optimizaton'; did you "
            "mean 'zero_optimization'?\n");
  EXPECT_EQ(messages(settings.setOverride("zero_optimization.stage", "x")),
            "<override>:1:25: error: unexpected 'x'; strings must be in "
            "double quotes\n");
  EXPECT_EQ(messages(settings.setOverride("zero_optimization.stage", "7")),
            "<override>:1:25: error: zero_optimization.stage: expected an "
            "integer in [0, 3], got 7\n");
  EXPECT_EQ(
      messages(settings.setOverride("zero_optimization.stage.x", "1")),
      "<override>:1:19: error: 'zero_optimization.stage' is not a section; "
      "it has no key 'x'\n");
  EXPECT_EQ(messages(settings.setOverride(
                "zero_optimization.offload_param.device", "disk")),
            "<override>:1:40: error: zero_optimization.offload_param.device: "
            "expected one of \"none\", \"cpu\", \"nvme\", got \"disk\"\n");
  // Errors are kept out of the settings.
  auto config = settings.resolve({});
  ASSERT_TRUE(bool(config)) << messages(config.takeError());
  EXPECT_EQ(config->zero.stage, 0);
}

//===----------------------------------------------------------------------===//
// toJSON and documentation.
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfigJson, PrintsEveryKeyAndReadsBack) {
  ResolveContext context;
  context.worldSize = 4;
  DeepSpeedConfig config = loadOrDie(R"({"zero_optimization": {"stage": 3,
      "cpu_offload": true, "stage3_max_live_parameters": 5e8},
      "optimizer": {"type": "adamw", "params": {"lr": 3e-4}},
      "train_micro_batch_size_per_gpu": 2, "steps_per_print": 50})",
                                     context);
  std::string text = config.toJSON();
  auto json = llvm::json::parse(text);
  ASSERT_TRUE(bool(json)) << llvm::toString(json.takeError());
  for (const KnobInfo &knob : getKnobs()) {
    if (!knob.appliesTo.empty() && !knob.appliesTo.contains("AdamW"))
      continue; // SGD's parameters are not printed for AdamW.
    const llvm::json::Object *object = json->getAsObject();
    llvm::SmallVector<StringRef> parts;
    knob.path.split(parts, '.');
    for (StringRef part : llvm::ArrayRef(parts).drop_back())
      object = object ? object->getObject(part) : nullptr;
    if (!object) // Inside a section printed as null (scheduler).
      continue;
    EXPECT_TRUE(object->get(parts.back())) << knob.path.str();
  }
  const llvm::json::Object *zero =
      json->getAsObject()->getObject("zero_optimization");
  EXPECT_EQ(zero->getInteger("stage"), 3);
  EXPECT_EQ(zero->getInteger("max_live_parameters"), 500000000);
  EXPECT_EQ(zero->getObject("offload_optimizer")->getString("device"), "cpu");
  EXPECT_EQ(zero->getBoolean("overlap_comm"), true);
  EXPECT_EQ(zero->get("cpu_offload"), nullptr); // Canonical names only.
  EXPECT_EQ(json->getAsObject()->getObject("optimizer")->getString("type"),
            "AdamW");
  EXPECT_EQ(json->getAsObject()->getInteger("train_batch_size"), 8);
  EXPECT_EQ(json->getAsObject()->getInteger("steps_per_print"), 50);
  EXPECT_NE(text.find("\"lr\": 0.0003"), std::string::npos) << text;

  // The printed configuration means the same when read again.
  EXPECT_EQ(loadOrDie(text, context).toJSON(), text);
}

TEST(DeepSpeedConfigJson, DocsListEveryKey) {
  std::string docs = readText(sourcePath("docs/Config.md"));
  for (const KnobInfo &knob : getKnobs())
    EXPECT_NE(docs.find("`" + knob.path.str() + "`"), std::string::npos)
        << knob.path.str() << " is missing from docs/Config.md";
  for (const LegacyKey &legacy : getLegacyKeys())
    EXPECT_NE(docs.find("`" + legacy.path.str() + "`"), std::string::npos)
        << legacy.path.str() << " is missing from docs/Config.md";
}

// The keys' table of docs/Config.md gives each knob's default as the schema
// has it: a default changed in one place only fails here.
TEST(DeepSpeedConfigJson, DocsGiveTheSchemaDefaults) {
  std::string docs = readText(sourcePath("docs/Config.md"));
  size_t keys = docs.find("\n## Keys\n");
  ASSERT_NE(keys, std::string::npos) << "docs/Config.md has no Keys section";
  int rows = 0;
  for (const KnobInfo &knob : getKnobs()) {
    if (knob.kind == KnobKind::Section)
      continue;
    std::string row = "| `" + knob.path.str() + "` | ";
    size_t at = docs.find(row, keys);
    if (at == std::string::npos)
      continue; // DocsListEveryKey reports it.
    ++rows;
    llvm::StringRef cell = llvm::StringRef(docs)
                               .substr(at + row.size())
                               .take_until([](char c) { return c == '|'; })
                               .trim();
    EXPECT_EQ(cell.str(), "`" + knob.defaultValue.str() + "`")
        << knob.path.str() << ": docs/Config.md and ConfigSchema.cpp differ";
  }
  EXPECT_GT(rows, 100);
}

TEST(DeepSpeedConfigErrors, MissingFileAndSourceLines) {
  auto settings = DeepSpeedConfigSettings::readFile("/nonexistent/ds.json");
  ASSERT_FALSE(bool(settings));
  EXPECT_EQ(messages(settings.takeError()),
            "/nonexistent/ds.json: error: cannot read the configuration: No "
            "such file or directory\n");
  // llvm::toString prints the source line and a caret, as LLVM tools do.
  auto config = load("{\n  \"fp16\": {\"enabled\": 2}\n}");
  ASSERT_FALSE(bool(config));
  EXPECT_EQ(llvm::toString(config.takeError()),
            "ds.json:2:23: error: fp16.enabled: expected true or false, got "
            "2\n"
            "  \"fp16\": {\"enabled\": 2}\n"
            "                      ^");
}

//===----------------------------------------------------------------------===//
// Hostile inputs: the cost and the messages stay bounded, and every value
// is checked as what the compiled step computes with.
//===----------------------------------------------------------------------===//

/// A minified config (one line): a misspelled key, then `count` unknown keys.
std::string manyUnknownKeys(size_t count) {
  std::string json = "{\"zero_optimization\": {\"stag\": 3";
  for (size_t i = 0; i < count; ++i)
    json += ", \"unknown_" + std::to_string(i) + "\": " + std::to_string(i);
  return json + "}}";
}

TEST(DeepSpeedConfigHostile, ManyUnknownKeysOnOneLine) {
  // Before the limit, each of 20,001 diagnostics copied the whole line.
  auto settings =
      DeepSpeedConfigSettings::readBuffer(manyUnknownKeys(20000), "ds.json");
  ASSERT_FALSE(bool(settings));
  std::vector<llvm::SMDiagnostic> diagnostics =
      takeDiagnostics(settings.takeError());
  ASSERT_EQ(diagnostics.size(), kMaxReportedDiagnostics + 1);
  // Each names its position, its key and the closest valid key.
  EXPECT_EQ(messages(llvm::ArrayRef(diagnostics).take_front(2)),
            "ds.json:1:24: error: unknown key 'zero_optimization.stag'; did "
            "you mean 'stage'?\n"
            "ds.json:1:35: error: unknown key "
            "'zero_optimization.unknown_0'\n");
  EXPECT_EQ(messages(diagnostics.back()),
            "ds.json: error: and 19981 more unknown keys (only the first 20 "
            "errors are listed)\n");
  // Each quotes an excerpt of the line around its column.
  for (const llvm::SMDiagnostic &diagnostic :
       llvm::ArrayRef(diagnostics).drop_back())
    EXPECT_LE(diagnostic.getLineContents().size(), kMaxQuotedColumns + 6);
  std::string last = formatDiagnostics(diagnostics[19]);
  llvm::SmallVector<StringRef> lines;
  StringRef(last).split(lines, '\n');
  ASSERT_EQ(lines.size(), 4u) << last;
  EXPECT_TRUE(lines[0].starts_with("ds.json:1:")) << last;
  EXPECT_TRUE(lines[1].starts_with("...") && lines[1].ends_with("...")) << last;
  // The caret under the key's quote, half an excerpt in.
  EXPECT_EQ(lines[1].substr(kMaxQuotedColumns / 2 + 3, 12), "\"unknown_18\"");
  EXPECT_EQ(lines[2], std::string(kMaxQuotedColumns / 2 + 3, ' ') + "^");
  EXPECT_LT(formatDiagnostics(diagnostics).size(), 21 * 400u);
}

TEST(DeepSpeedConfigHostile, ManySyntaxErrorsAndLongKeys) {
  // Every missing ',' is reported in one pass: at most 20 of them.
  std::string json = "{\"a\": 1";
  for (int i = 0; i < 5000; ++i)
    json += " \"k" + std::to_string(i) + "\": 1";
  json += "}";
  auto settings = DeepSpeedConfigSettings::readBuffer(json, "ds.json");
  ASSERT_FALSE(bool(settings));
  std::vector<llvm::SMDiagnostic> diagnostics =
      takeDiagnostics(settings.takeError());
  ASSERT_EQ(diagnostics.size(), kMaxReportedDiagnostics + 1);
  EXPECT_EQ(messages(llvm::ArrayRef(diagnostics).take_front(1)),
            "ds.json:1:9: error: missing ',' before \"k0\"\n");
  EXPECT_EQ(messages(diagnostics.back()),
            "ds.json: error: and 4980 more errors (only the first 20 errors "
            "are listed)\n");

  // A key of 100,000 characters is named shortened, and no suggestion is
  // sought by comparing it character by character.
  std::string key(100000, 'x');
  EXPECT_EQ(errorsOf("{\"" + key + "\": 1}"),
            "ds.json:1:2: error: unknown key '" + key.substr(0, 77) + "...'\n");
}

TEST(DeepSpeedConfigHostile, FloatKnobsAreCheckedAsF32) {
  auto adam = [](StringRef params) {
    return errorsOf(
        ("{\"optimizer\": {\"type\": \"Adam\", \"params\": " + params + "}}")
            .str());
  };
  // 0 as an f32: Adam would divide by zero.
  EXPECT_EQ(adam("{\"eps\": 1e-50}"),
            "ds.json:1:50: error: optimizer.params.eps: expected a positive "
            "number, got 1e-50 (below the smallest normal f32, "
            "1.1754944e-38; the compiled step computes in f32)\n");
  EXPECT_EQ(adam("{\"lr\": 1e39}"),
            "ds.json:1:49: error: optimizer.params.lr: expected a "
            "non-negative number, got 1e39 (beyond the largest f32, "
            "3.4028235e+38; the compiled step computes in f32)\n");
  // 1 as an f32: Adam's bias correction would divide by zero.
  EXPECT_EQ(adam("{\"betas\": [0.9, 0.999999999]}"),
            "ds.json:1:52: error: optimizer.params.betas: expected two "
            "numbers in [0, 1), got [0.9, 0.999999999] (1.0 as an f32, the "
            "type the compiled step computes in)\n");
  EXPECT_EQ(errorsOf(R"({"fp16": {"enabled": true, "loss_scale": 1e39}})"),
            "ds.json:1:42: error: fp16.loss_scale: expected a non-negative "
            "number, got 1e39 (beyond the largest f32, 3.4028235e+38; the "
            "compiled step computes in f32)\n");
  EXPECT_EQ(errorsOf(R"({"scheduler": {"type": "WarmupLR", "params":
                   {"warmup_max_lr": -1e39}}})"),
            "ds.json:2:38: error: scheduler.params.warmup_max_lr: expected a "
            "non-negative number, got -1e39\n");
  // The edges of f32 are accepted.
  DeepSpeedConfig config = loadOrDie(R"({"optimizer": {"type": "Adam",
      "params": {"lr": 3.4028234e38, "eps": 1.2e-38, "weight_decay": 0,
                 "betas": [0, 0.99999994]}}, "gradient_clipping": 1e-30})");
  EXPECT_EQ(float(config.optimizer.lr), std::numeric_limits<float>::max());
  EXPECT_GT(float(config.optimizer.eps), 0.0f);
  EXPECT_LT(float(config.optimizer.betas[1]), 1.0f);
}

TEST(DeepSpeedConfigHostile, LastBatchIterationLeavesRoomForTheSteps) {
  auto scheduler = [](StringRef iteration) {
    return ("{\"scheduler\": {\"type\": \"WarmupLR\", \"params\": "
            "{\"last_batch_iteration\": " +
            iteration + "}}}")
        .str();
  };
  // i = last_batch_iteration + applied steps wrapped in the step's i64 add.
  EXPECT_EQ(errorsOf(scheduler("9223372036854775807")),
            "ds.json:1:71: error: scheduler.params.last_batch_iteration: "
            "expected an integer in [-1, 4503599627370496], got "
            "9223372036854775807\n");
  EXPECT_EQ(errorsOf(scheduler("4503599627370497")),
            "ds.json:1:71: error: scheduler.params.last_batch_iteration: "
            "expected an integer in [-1, 4503599627370496], got "
            "4503599627370497\n");
  EXPECT_EQ(
      loadOrDie(scheduler("4503599627370496")).scheduler.lastBatchIteration,
      kMaxLastBatchIteration);
}

TEST(DeepSpeedConfigHostile, OverridesOfTypedSectionsNeedTheType) {
  // As in a file, where {"scheduler": {"params": ...}} is refused.
  for (auto [key, type] :
       {std::pair<StringRef, StringRef>{"scheduler.params.warmup_num_steps",
                                        "scheduler.type is missing "
                                        "(WarmupLR, WarmupDecayLR, "
                                        "WarmupCosineLR, OneCycle or "
                                        "LRRangeTest)"},
        {"optimizer.params.lr",
         "optimizer.type is missing (Adam, AdamW or SGD)"}}) {
    auto settings = DeepSpeedConfigSettings::readBuffer("{}", "ds.json");
    ASSERT_TRUE(bool(settings)) << messages(settings.takeError());
    ASSERT_FALSE(bool(settings->setOverride(key, "10")));
    auto config = settings->resolve({});
    ASSERT_FALSE(bool(config)) << key.str();
    EXPECT_EQ(messages(config.takeError()),
              "<override>:1:" + std::to_string(key.size() + 2) +
                  ": error: " + key.str() + " is set but " + type.str() + "\n");
  }
  // With the type, from the file or another override, it applies.
  auto settings = DeepSpeedConfigSettings::readBuffer(
      R"({"scheduler": {"type": "WarmupLR"}})", "ds.json");
  ASSERT_TRUE(bool(settings));
  ASSERT_FALSE(
      bool(settings->setOverride("scheduler.params.warmup_num_steps", "10")));
  auto config = settings->resolve({});
  ASSERT_TRUE(bool(config)) << messages(config.takeError());
  EXPECT_EQ(config->scheduler.warmupNumSteps, 10);
}

} // namespace
