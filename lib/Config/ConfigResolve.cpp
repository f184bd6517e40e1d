//===- ConfigResolve.cpp - Deciding every value of a configuration --------===//
//
// Runs after the file and the overrides are read: fills defaults, resolves
// "auto" from the ResolveContext, applies DeepSpeed's batch-size rule, refuses
// what the compiler does not honor, and checks the rules that involve several
// knobs. All errors are collected, each at the position of the key it names.
//
//===----------------------------------------------------------------------===//

#include "ConfigFields.h"
#include "ConfigSettings.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

using namespace zero;
using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

namespace {

/// "Adam, AdamW or SGD".
std::string describeChoices(const KnobInfo &knob) {
  llvm::SmallVector<StringRef> choices;
  knob.choices.split(choices, '|');
  std::string last = choices.pop_back_val().str();
  return choices.empty() ? last : llvm::join(choices, ", ") + " or " + last;
}

constexpr StringRef kStage = "zero_optimization.stage";
constexpr StringRef kTrainBatch = "train_batch_size";
constexpr StringRef kMicroBatch = "train_micro_batch_size_per_gpu";
constexpr StringRef kAccumulation = "gradient_accumulation_steps";

class Resolver {
public:
  Resolver(const DeepSpeedConfigSettings::Impl &impl,
           const ResolveContext &context)
      : impl(impl), context(context) {
    for (const KnobInfo &knob : getKnobs()) {
      const Setting *setting = find(knob.path);
      values[knob.path] = setting ? setting->value : getDefaultValue(knob);
    }
  }

  llvm::Expected<DeepSpeedConfig> run() {
    resolveAuto();
    checkSupport();
    checkPrecision();
    checkOffload();
    checkTypedParameters();
    checkOptimizer();
    checkScheduler();
    resolveBatch();
    if (!errors.empty())
      return llvm::make_error<ConfigError>(std::move(errors));

    DeepSpeedConfig config;
    llvm::StringSet<> withField;
    forEachField(config, [&](StringRef path, auto &field) {
      assignField(field, values[path], *lookupKnob(path));
      withField.insert(path);
    });
    for (const KnobInfo &knob : getKnobs())
      if (knob.support == KnobSupport::Supported &&
          !withField.contains(knob.path))
        storeOtherValue(config, knob);
    for (const KnobInfo &knob : getKnobs())
      if (knob.support == KnobSupport::NoEffect)
        config.noEffectValues[knob.path.str()] = values[knob.path].toJSON();
    config.worldSize = context.worldSize;
    config.warnings = impl.warnings;
    llvm::append_range(config.warnings, warnings);
    return config;
  }

private:
  /// A supported knob without a field of DeepSpeedConfig: its value in
  /// otherValues, as assignField would store it.
  void storeOtherValue(DeepSpeedConfig &config, const KnobInfo &knob) {
    auto store = [&](auto field) {
      assignField(field, values[knob.path], knob);
      config.otherValues[knob.path.str()] = field;
    };
    switch (knob.kind) {
    case KnobKind::Bool:
      return store(false);
    case KnobKind::Int:
      return store(int64_t(0));
    case KnobKind::Float:
      return store(0.0);
    case KnobKind::String:
    case KnobKind::Enum:
      return store(std::string());
    case KnobKind::Section:
    case KnobKind::FloatPair:
    case KnobKind::Any:
      // Sections hold knobs; a pair or any JSON needs a field to be read.
      return;
    }
  }

  const Setting *find(StringRef path) const {
    auto it = impl.settings.find(path);
    return it == impl.settings.end() ? nullptr : &it->second;
  }
  bool isSet(StringRef path) const { return find(path); }
  /// The key as the user wrote it (alias, deprecated spelling) or canonical.
  std::string spelled(StringRef path) const {
    const Setting *setting = find(path);
    return setting ? setting->spelling : path.str();
  }
  /// " (at ds.json:3:5)" for a key that is written somewhere.
  std::string where(StringRef path) const {
    const Setting *setting = find(path);
    return setting ? " (at " + impl.describeLoc(setting->loc) + ")" : "";
  }
  void report(std::vector<llvm::SMDiagnostic> &list, StringRef path,
              llvm::SourceMgr::DiagKind kind, const Twine &message) {
    const Setting *setting = find(path);
    list.push_back(
        impl.diagnose(setting ? setting->loc : SMLoc(), kind, message));
  }
  void error(StringRef path, const Twine &message) {
    report(errors, path, llvm::SourceMgr::DK_Error, message);
  }
  void warning(StringRef path, const Twine &message) {
    report(warnings, path, llvm::SourceMgr::DK_Warning, message);
  }

  ConfigValue &value(StringRef path) { return values[path]; }
  int64_t stage() { return value(kStage).integer; }
  StringRef text(StringRef path) { return value(path).text; }

  void resolveAuto() {
    int64_t hidden = context.hiddenSize;
    for (const KnobInfo &knob : getKnobs()) {
      ConfigValue &result = value(knob.path);
      if (!result.isAuto())
        continue;
      std::string key = spelled(knob.path);
      switch (knob.autoRule) {
      case AutoRule::None:
      case AutoRule::Batch: // Resolved with the batch rule.
        break;
      case AutoRule::HiddenSquared:
      case AutoRule::NineTenthsHiddenSquared:
      case AutoRule::TenHidden:
        // hidden^2 must fit an int64 with room for the factor 9.
        if (hidden <= 0 || hidden > (int64_t(1) << 30)) {
          error(knob.path, key + ": \"auto\" needs the model's hidden size, "
                                 "which is not known");
          break;
        }
        result = ConfigValue::makeInt(
            knob.autoRule == AutoRule::HiddenSquared ? hidden * hidden
            : knob.autoRule == AutoRule::TenHidden   ? 10 * hidden
                                                   : 9 * hidden * hidden / 10);
        break;
      case AutoRule::ParamPrecision:
        if (context.precision == ParamPrecision::Unknown) {
          error(knob.path, key + ": \"auto\" needs the element type of the "
                                 "parameters, which is not known");
          break;
        }
        result = ConfigValue::makeBool(
            knob.path == "fp16.enabled"
                ? context.precision == ParamPrecision::F16
                : context.precision == ParamPrecision::BF16);
        break;
      case AutoRule::NeedsTrainer:
        error(knob.path, key + ": \"auto\" is filled in by a HuggingFace "
                               "trainer, and zero-opt has none; write the "
                               "value");
        break;
      }
    }
    // DeepSpeed's overlap_comm default depends on the stage.
    if (value("zero_optimization.overlap_comm").isNull())
      value("zero_optimization.overlap_comm") =
          ConfigValue::makeBool(stage() == 3);
  }

  void checkSupport() {
    for (const KnobInfo &knob : getKnobs()) {
      const ConfigValue &result = value(knob.path);
      ConfigValue defaultValue = getDefaultValue(knob);
      std::string key = spelled(knob.path);
      bool scalar =
          knob.kind != KnobKind::Section && knob.kind != KnobKind::Any;
      if (knob.support == KnobSupport::RefusedUnlessDefault &&
          result != defaultValue)
        error(knob.path,
              key + ": " + knob.reason +
                  (scalar ? " (only the default, " + defaultValue.toJSON() +
                                ", is accepted)"
                          : ""));
      if (knob.support == KnobSupport::NoEffect && result != defaultValue)
        warning(knob.path,
                key + " has no effect on a compiled step: " + knob.reason);
      if (knob.hasFlag(Stage3Only) && isSet(knob.path) && stage() < 3)
        warning(knob.path, key + " only applies at stage 3 (stage is " +
                               Twine(stage()) + ")");
      if (knob.kind == KnobKind::Enum && !result.isNull())
        for (const UnsupportedChoice &choice : getUnsupportedChoices())
          if (choice.path == knob.path && choice.value == result.text)
            error(knob.path,
                  key + ": \"" + choice.value + "\": " + choice.reason);
    }
  }

  void checkPrecision() {
    if (value("fp16.enabled").boolean && value("bf16.enabled").boolean)
      error("fp16.enabled", "fp16.enabled and bf16.enabled" +
                                where("bf16.enabled") +
                                " are both true; enable at most one");
  }

  void checkOffload() {
    for (StringRef section : {"zero_optimization.offload_optimizer",
                              "zero_optimization.offload_param"}) {
      std::string device = (section + ".device").str();
      std::string path = (section + ".nvme_path").str();
      if (text(device) == "nvme" && value(path).isNull())
        error(device,
              spelled(device) + " is \"nvme\" but " + path + " is not set");
    }
    std::string stageText = Twine(stage()).str() + where(kStage);
    if (text("zero_optimization.offload_param.device") != "none" &&
        stage() != 3)
      error("zero_optimization.offload_param.device",
            spelled("zero_optimization.offload_param.device") +
                ": offloading parameters needs stage 3 (stage is " + stageText +
                ")");
    if (text("zero_optimization.offload_optimizer.device") != "none" &&
        stage() == 0)
      error("zero_optimization.offload_optimizer.device",
            spelled("zero_optimization.offload_optimizer.device") +
                ": offloading the optimizer needs stage 1, 2 or 3 (stage is " +
                stageText + ")");
    if (value("zero_optimization.offload_optimizer.ratio").number < 1 &&
        stage() != 3)
      error("zero_optimization.offload_optimizer.ratio",
            spelled("zero_optimization.offload_optimizer.ratio") +
                ": a ratio below 1 needs stage 3 (stage is " + stageText + ")");
  }

  /// A typed section (optimizer, scheduler) needs its type, and takes only
  /// the parameters of that type.
  void checkTypedParameters() {
    // The same rule for the file and overrides: an override of one
    // parameter (`scheduler.params.warmup_max_lr=0.1`) sets no section.
    for (StringRef section : {"optimizer", "scheduler"}) {
      std::string typeKey = (section + ".type").str();
      if (!value(typeKey).isNull())
        continue;
      std::string choices = describeChoices(*lookupKnob(typeKey));
      if (isSet(section)) {
        error(section,
              spelled(section) + ": 'type' is missing (" + choices + ")");
        continue;
      }
      for (const KnobInfo &knob : getKnobs())
        if (knob.path.starts_with((section + ".").str()) &&
            knob.kind != KnobKind::Section && isSet(knob.path)) {
          error(knob.path, spelled(knob.path) + " is set but " + typeKey +
                               " is missing (" + choices + ")");
          break;
        }
    }
    for (const KnobInfo &knob : getKnobs()) {
      if (knob.appliesTo.empty() || !isSet(knob.path))
        continue;
      const ConfigValue &type = value(knob.getTypeKey());
      if (type.isNull())
        continue;
      llvm::SmallVector<StringRef> types;
      knob.appliesTo.split(types, '|');
      if (!llvm::is_contained(types, type.text))
        error(knob.path, spelled(knob.path) + " is not a parameter of " +
                             type.text + " (only of " +
                             llvm::join(types, ", ") + ")");
    }
  }

  void checkOptimizer() {
    const ConfigValue &type = value("optimizer.type");
    if (type.text == "AdamW" && isSet("optimizer.params.adam_w_mode") &&
        !value("optimizer.params.adam_w_mode").boolean)
      error("optimizer.params.adam_w_mode",
            "optimizer.params.adam_w_mode is false but optimizer.type is "
            "AdamW; for Adam with L2 weight decay write type \"Adam\"");
    // Resolved meaning of adam_w_mode: decoupled weight decay.
    if (type.text == "AdamW")
      value("optimizer.params.adam_w_mode") = ConfigValue::makeBool(true);
    if (type.text == "SGD" && value("optimizer.params.nesterov").boolean &&
        (value("optimizer.params.momentum").number <= 0 ||
         value("optimizer.params.dampening").number != 0))
      error("optimizer.params.nesterov",
            "optimizer.params.nesterov needs a positive momentum and zero "
            "dampening");
  }

  /// Required parameters, and the defaults DeepSpeed derives from other
  /// values (docs/Config.md, "Learning-rate schedules").
  void checkScheduler() {
    StringRef type = text("scheduler.type");
    if (value("scheduler.type").isNull())
      return;
    auto param = [](StringRef name) {
      return "scheduler.params." + name.str();
    };
    auto require = [&](StringRef name) {
      if (value(param(name)).isNull())
        error("scheduler.type", spelled("scheduler.type") + " is " + type +
                                    ", which needs " + param(name));
    };
    auto defaultTo = [&](StringRef name, const ConfigValue &fallback) {
      ConfigValue &result = value(param(name));
      if (result.isNull())
        result = fallback;
    };
    if (type == "WarmupLR")
      defaultTo("warmup_max_lr", value("optimizer.params.lr"));
    if (type == "WarmupDecayLR")
      defaultTo("warmup_max_lr", ConfigValue::makeFloat(0.001));
    if (type == "WarmupDecayLR" || type == "WarmupCosineLR") {
      require("total_num_steps");
      int64_t total = value(param("total_num_steps")).integer;
      int64_t warmup = value(param("warmup_num_steps")).integer;
      if (!value(param("total_num_steps")).isNull() && total < warmup)
        warning(param("total_num_steps"),
                param("total_num_steps") + " (" + Twine(total) +
                    ") is less than warmup_num_steps (" + Twine(warmup) +
                    "): the rate decays from its peak at once");
    }
    if (type == "OneCycle") {
      require("cycle_min_lr");
      require("cycle_max_lr");
      defaultTo("cycle_second_step_size",
                value(param("cycle_first_step_size")));
      defaultTo("cycle_second_stair_count",
                value(param("cycle_first_stair_count")));
      // DeepSpeed cycles the betas of the optimizers that have them.
      if (text("optimizer.type") == "SGD" &&
          value(param("cycle_momentum")).boolean) {
        if (isSet(param("cycle_momentum")))
          warning(param("cycle_momentum"),
                  param("cycle_momentum") +
                      " is true but SGD has no betas to cycle; as in "
                      "DeepSpeed, the momentum stays "
                      "optimizer.params.momentum");
        value(param("cycle_momentum")) = ConfigValue::makeBool(false);
      }
    }
  }

  /// DeepSpeed's rule: train_batch_size = micro * accumulation * world size;
  /// any two of the three (or one of the batch sizes, with accumulation 1)
  /// determine the third. "auto" counts as not given. When the file gives
  /// no batch size, the micro-batch of the training-step IR is used.
  void resolveBatch() {
    auto given = [&](StringRef path) -> std::optional<int64_t> {
      const ConfigValue &result = value(path);
      if (result.kind == ConfigValue::Int)
        return result.integer;
      return std::nullopt;
    };
    std::optional<int64_t> train = given(kTrainBatch),
                           micro = given(kMicroBatch),
                           steps = given(kAccumulation);
    int64_t world = context.worldSize;
    if (world < 1) {
      error("", "the world size must be positive, got " + Twine(world));
      return;
    }
    if (micro && context.microBatchSize > 0 && *micro != context.microBatchSize)
      error(kMicroBatch, spelled(kMicroBatch) + " is " + Twine(*micro) +
                             " but the training step processes " +
                             Twine(context.microBatchSize) +
                             " samples per rank");
    // The training step fixes the micro-batch; the other two follow from it
    // (unless both are given, and then it is checked below).
    if (!micro && context.microBatchSize > 0 && !(train && steps))
      micro = context.microBatchSize;

    // Divides the train batch; false (and an error) if it does not divide.
    auto divide = [&](int64_t divisor, StringRef what, int64_t &result) {
      if (*train % divisor == 0) {
        result = *train / divisor;
        return true;
      }
      error(kTrainBatch, spelled(kTrainBatch) + " (" + Twine(*train) +
                             ") is not a multiple of " + what + " (" +
                             Twine(divisor) + ")");
      return false;
    };
    // A product that overflows is an error at the key that makes it so.
    auto overflows = [&](StringRef path, const Twine &product) {
      error(path, spelled(path) + ": " + product + " overflows");
    };
    int64_t product;
    if (train && micro && !steps) {
      int64_t result;
      if (llvm::MulOverflow(*micro, world, product)) {
        overflows(kMicroBatch, kMicroBatch + " (" + Twine(*micro) +
                                   ") * world size (" + Twine(world) + ")");
        return;
      }
      if (!divide(product, kMicroBatch.str() + " * world size", result))
        return;
      steps = result;
    } else if (train && steps && !micro) {
      int64_t result;
      if (llvm::MulOverflow(*steps, world, product)) {
        overflows(kAccumulation, kAccumulation + " (" + Twine(*steps) +
                                     ") * world size (" + Twine(world) + ")");
        return;
      }
      if (!divide(product, kAccumulation.str() + " * world size", result))
        return;
      micro = result;
    } else if (train && !micro) {
      int64_t result;
      if (!divide(world, "the world size", result))
        return;
      micro = result;
    }
    if (!steps)
      steps = 1;
    if (micro && !given(kMicroBatch) && context.microBatchSize > 0 &&
        *micro != context.microBatchSize) {
      error(kTrainBatch, spelled(kTrainBatch) + " (" + Twine(*train) +
                             ") and " + kAccumulation + " (" + Twine(*steps) +
                             ") give " + Twine(*micro) +
                             " samples per rank, but the training step "
                             "processes " +
                             Twine(context.microBatchSize));
      return;
    }
    if (micro && !train) {
      int64_t result;
      if (llvm::MulOverflow(*micro, *steps, product) ||
          llvm::MulOverflow(product, world, result)) {
        // The micro-batch may come from the IR: blame a key that is written.
        overflows(given(kAccumulation) ? kAccumulation : kMicroBatch,
                  "the train batch size, " + Twine(*micro) + " * " +
                      Twine(*steps) + " * world size (" + Twine(world) + "),");
        return;
      }
      train = result;
    }
    if (train && micro &&
        (llvm::MulOverflow(*micro, *steps, product) ||
         llvm::MulOverflow(product, world, product) || product != *train))
      error(kTrainBatch,
            spelled(kTrainBatch) + " (" + Twine(*train) + ") must equal " +
                kMicroBatch + " (" + Twine(*micro) + ") * " + kAccumulation +
                " (" + Twine(*steps) + ") * world size (" + Twine(world) + ")");
    value(kTrainBatch) = train ? ConfigValue::makeInt(*train) : ConfigValue();
    value(kMicroBatch) = micro ? ConfigValue::makeInt(*micro) : ConfigValue();
    value(kAccumulation) = ConfigValue::makeInt(*steps);
  }

  const DeepSpeedConfigSettings::Impl &impl;
  const ResolveContext &context;
  llvm::StringMap<ConfigValue> values;
  std::vector<llvm::SMDiagnostic> errors;
  std::vector<llvm::SMDiagnostic> warnings;
};

} // namespace

llvm::Expected<DeepSpeedConfig>
zero::resolveSettings(const DeepSpeedConfigSettings::Impl &impl,
                      const ResolveContext &context) {
  return Resolver(impl, context).run();
}
