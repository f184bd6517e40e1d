//===- ConfigPrinter.cpp - A resolved configuration as DeepSpeed JSON -----===//
//
// Prints every knob of the schema, in schema order, under its canonical name:
// supported knobs from the struct's fields, keys without effect as given, and
// refused knobs at their default (the only value resolution lets through).
//
//===----------------------------------------------------------------------===//

#include "ConfigFields.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace zero;
using llvm::StringRef;

namespace {

class Printer {
public:
  explicit Printer(const DeepSpeedConfig &config) : config(config) {
    forEachField(config, [&](StringRef path, const auto &field) {
      fields[path] = fieldValue(field, *lookupKnob(path)).toJSON();
    });
  }

  void printSection(llvm::json::OStream &json, StringRef section) {
    json.object([&] {
      for (const KnobInfo &knob : getKnobs()) {
        if (knob.getParent() != section || !appliesToType(knob))
          continue;
        json.attributeBegin(knob.getName());
        if (knob.kind == KnobKind::Section && !isNullSection(knob))
          printSection(json, knob.path);
        else
          json.rawValue(valueOf(knob));
        json.attributeEnd();
      }
    });
  }

private:
  /// Refused sections and a missing optimizer or scheduler print as null.
  bool isNullSection(const KnobInfo &knob) const {
    if (knob.support == KnobSupport::RefusedUnlessDefault)
      return true;
    if (knob.path == "optimizer")
      return config.optimizer.kind == OptimizerKind::None;
    if (knob.path == "scheduler")
      return config.scheduler.kind == SchedulerKind::None;
    return false;
  }

  /// Only the parameters of the configured optimizer and schedule are
  /// printed, so that the output reads back as the same configuration.
  bool appliesToType(const KnobInfo &knob) const {
    if (knob.appliesTo.empty())
      return true;
    llvm::SmallVector<StringRef> types;
    knob.appliesTo.split(types, '|');
    // The type's field prints as JSON: "\"AdamW\"".
    std::string type = fields.lookup(knob.getTypeKey());
    return llvm::is_contained(types, StringRef(type).trim('"'));
  }

  std::string valueOf(const KnobInfo &knob) const {
    if (auto it = fields.find(knob.path); it != fields.end())
      return it->second;
    if (auto it = config.noEffectValues.find(knob.path.str());
        it != config.noEffectValues.end())
      return it->second;
    if (auto it = config.otherValues.find(knob.path.str());
        it != config.otherValues.end())
      return std::visit(
          [&](const auto &value) { return fieldValue(value, knob).toJSON(); },
          it->second);
    return getDefaultValue(knob).toJSON();
  }

  const DeepSpeedConfig &config;
  llvm::StringMap<std::string> fields;
};

} // namespace

std::string DeepSpeedConfig::toJSON() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os, /*IndentSize=*/2);
  Printer(*this).printSection(json, "");
  os << "\n";
  return text;
}

template <typename T>
const T *DeepSpeedConfig::lookupValue(StringRef path) const {
  const T *found = nullptr;
  forEachField(*this, [&](StringRef fieldPath, const auto &field) {
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, T>)
      if (fieldPath == path)
        found = &field;
  });
  if (found)
    return found;
  auto it = otherValues.find(path.str());
  return it == otherValues.end() ? nullptr : std::get_if<T>(&it->second);
}

template const bool *DeepSpeedConfig::lookupValue<bool>(StringRef) const;
template const int64_t *DeepSpeedConfig::lookupValue<int64_t>(StringRef) const;
template const double *DeepSpeedConfig::lookupValue<double>(StringRef) const;
template const std::string *
DeepSpeedConfig::lookupValue<std::string>(StringRef) const;
