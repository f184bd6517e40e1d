//===- ConfigSettings.cpp - Reading knobs from JSON and overrides ---------===//
//
// Maps each key as written to the canonical knob it sets. A key is found in
// one place (resolveSpelling) whether it is canonical, a `stage3_` alias or a
// deprecated spelling, and one place (record) rejects two spellings of the
// same knob, so aliases and deprecated keys share all their logic.
//
//===----------------------------------------------------------------------===//

#include "ConfigSettings.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace zero;
using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

namespace {

constexpr StringRef kStage3Prefix = "stage3_";
constexpr StringRef kZeroSection = "zero_optimization";

std::string joinPath(StringRef section, StringRef key) {
  return section.empty() ? key.str() : (section + "." + key).str();
}

/// One knob that a key as written sets.
struct Spelling {
  const KnobInfo *knob;
  LegacyRewrite rewrite = LegacyRewrite::SameValue;
  const LegacyKey *legacy = nullptr;
};

/// The knobs that `key` inside `section` (canonical) sets; empty if unknown.
llvm::SmallVector<Spelling, 2> resolveSpelling(StringRef section,
                                               StringRef key) {
  std::string path = joinPath(section, key);
  if (const KnobInfo *knob = lookupKnob(path))
    return {Spelling{knob}};
  if (section == kZeroSection && key.starts_with(kStage3Prefix))
    if (const KnobInfo *knob =
            lookupKnob(joinPath(section, key.drop_front(kStage3Prefix.size())));
        knob && knob->hasFlag(Stage3Alias))
      return {Spelling{knob}};
  llvm::SmallVector<Spelling, 2> spellings;
  for (const LegacyKey &legacy : getLegacyKeys())
    if (legacy.path == path)
      spellings.push_back({lookupKnob(legacy.target), legacy.rewrite, &legacy});
  return spellings;
}

/// The closest valid key of `section`, or a knob of that name elsewhere, as
/// "; did you mean 'x'?".
std::string suggestKey(StringRef section, StringRef key) {
  std::string best;
  // One edit for short keys, then a third of the key (two at least).
  size_t allowed = key.size() <= 3 ? 1 : std::max<size_t>(2, key.size() / 3);
  unsigned bestDistance = allowed + 1;
  auto consider = [&](StringRef candidate) {
    // The distance is at least the difference in length: a key of a
    // megabyte is not compared character by character.
    size_t lengthDifference = candidate.size() > key.size()
                                  ? candidate.size() - key.size()
                                  : key.size() - candidate.size();
    if (lengthDifference >= bestDistance)
      return;
    unsigned distance =
        candidate.edit_distance(key, /*AllowReplacements=*/true, bestDistance);
    if (distance < bestDistance) {
      best = candidate.str();
      bestDistance = distance;
    }
  };
  for (const KnobInfo &knob : getKnobs()) {
    if (knob.getParent() != section)
      continue;
    consider(knob.getName());
    if (knob.hasFlag(Stage3Alias))
      consider((kStage3Prefix + knob.getName()).str());
  }
  if (!best.empty())
    return "; did you mean '" + best + "'?";
  // A key written in the wrong section: `"stage": 3` at the top level.
  for (const KnobInfo &knob : getKnobs())
    if (knob.getName() == key && knob.getParent() != section)
      return "; did you mean '" + knob.path.str() + "'?";
  return "";
}

class SettingsBuilder {
public:
  SettingsBuilder(DeepSpeedConfigSettings::Impl &impl, DiagnosticList &errors,
                  bool fromOverride)
      : impl(impl), errors(errors), fromOverride(fromOverride) {}

  void walkObject(const JsonNode &object, StringRef section,
                  StringRef spelledSection) {
    for (const JsonMember &member : object.members)
      setKey(section, spelledSection, member.key, member.keyLoc, member.value);
  }

  /// Sets `key` of `section` to `node`. `spelledSection` is the section's
  /// path as written (it differs for "bfloat16").
  void setKey(StringRef section, StringRef spelledSection, StringRef key,
              SMLoc keyLoc, const JsonNode &node) {
    std::string spelled = joinPath(spelledSection, key);
    llvm::SmallVector<Spelling, 2> spellings = resolveSpelling(section, key);
    if (spellings.empty()) {
      // Past the limit, neither the line nor a suggestion is looked up.
      errors.add(
          [&] {
            return impl.diagnose(keyLoc, llvm::SourceMgr::DK_Error,
                                 "unknown key '" + shorten(spelled) + "'" +
                                     suggestKey(section, key));
          },
          "unknown keys");
      return;
    }
    if (spellings.front().legacy)
      warnDeprecated(keyLoc, spelled, spellings, node);
    for (const Spelling &spelling : spellings)
      set(spelling, spelled, keyLoc, node);
  }

  void error(SMLoc loc, const Twine &message) {
    errors.add(
        [&] { return impl.diagnose(loc, llvm::SourceMgr::DK_Error, message); });
  }

private:
  void set(const Spelling &spelling, StringRef spelled, SMLoc keyLoc,
           const JsonNode &node) {
    const KnobInfo &knob = *spelling.knob;
    bool deprecated = spelling.legacy;
    if (knob.kind == KnobKind::Section)
      return setSection(knob, spelled, deprecated, keyLoc, node);

    std::optional<ConfigValue> value;
    std::string message;
    if (spelling.rewrite == LegacyRewrite::TrueMeansCpu) {
      KnobInfo flag;
      flag.kind = KnobKind::Bool;
      flag.defaultValue = "false";
      if ((value = convertValue(flag, node, message)))
        *value = ConfigValue::makeString(value->boolean ? "cpu" : "none");
    } else {
      value = convertValue(knob, node, message);
    }
    if (!value)
      return error(node.loc, spelled + ": " + message);
    record(knob, std::move(*value), node.loc, keyLoc, spelled, deprecated);
  }

  void setSection(const KnobInfo &section, StringRef spelled, bool deprecated,
                  SMLoc keyLoc, const JsonNode &node) {
    if (node.kind != JsonNode::Object && node.kind != JsonNode::Null)
      return error(node.loc,
                   spelled + ": expected an object, got " + describeJson(node));
    // An override of a whole section replaces what the file says in it.
    if (fromOverride) {
      std::string prefix = (section.path + ".").str();
      for (auto &entry : llvm::make_early_inc_range(impl.settings))
        if (entry.getKey() == section.path ||
            entry.getKey().starts_with(prefix))
          impl.settings.erase(entry.getKey());
    }
    if (node.kind == JsonNode::Null)
      return; // DeepSpeed's None: every member at its default.
    ConfigValue present;
    present.kind = ConfigValue::Json;
    present.text = "{}";
    if (record(section, present, node.loc, keyLoc, spelled, deprecated))
      walkObject(node, section.path, spelled);
  }

  /// Stores a knob's value; two spellings of one knob in the file are an
  /// error, an override replaces whatever the file says.
  bool record(const KnobInfo &knob, ConfigValue value, SMLoc loc, SMLoc keyLoc,
              StringRef spelled, bool deprecated) {
    Setting setting{std::move(value), loc,          keyLoc,
                    spelled.str(),    fromOverride, deprecated};
    auto [it, inserted] = impl.settings.try_emplace(knob.path, setting);
    if (inserted)
      return true;
    Setting &previous = it->second;
    if (fromOverride) {
      previous = std::move(setting);
      return true;
    }
    // Keep the current spelling: drop the deprecated one, else this one.
    StringRef remove =
        previous.deprecated && !deprecated ? previous.spelling : spelled;
    error(keyLoc, "'" + spelled + "' and '" + previous.spelling + "' (at " +
                      impl.describeLoc(previous.keyLoc) + ") both set '" +
                      knob.path + "'; remove '" + remove + "'");
    return false;
  }

  void warnDeprecated(SMLoc loc, StringRef spelled,
                      llvm::ArrayRef<Spelling> spellings,
                      const JsonNode &node) {
    std::string replacement;
    for (const Spelling &spelling : spellings) {
      if (!replacement.empty())
        replacement += " and ";
      replacement += "'" + spelling.knob->path.str() + "'";
      if (spelling.rewrite == LegacyRewrite::TrueMeansCpu &&
          node.kind == JsonNode::Bool)
        replacement += node.text == "true" ? ": \"cpu\"" : ": \"none\"";
    }
    impl.warnings.push_back(impl.diagnose(loc, llvm::SourceMgr::DK_Warning,
                                          "'" + spelled + "' is deprecated (" +
                                              spellings.front().legacy->origin +
                                              "); write " + replacement));
  }

  DeepSpeedConfigSettings::Impl &impl;
  DiagnosticList &errors;
  bool fromOverride;
};

} // namespace

void zero::readSettings(DeepSpeedConfigSettings::Impl &impl,
                        const JsonNode &root, DiagnosticList &errors) {
  SettingsBuilder(impl, errors, /*fromOverride=*/false)
      .walkObject(root, "", "");
}

void zero::applyOverride(DeepSpeedConfigSettings::Impl &impl, StringRef key,
                         StringRef value, DiagnosticList &errors) {
  // The override lives in its own buffer, "key=value", so that its errors
  // point into it like errors in the file.
  unsigned id = impl.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy((key + "=" + value).str(),
                                           "<override>"),
      SMLoc());
  StringRef text = impl.sourceMgr.getMemoryBuffer(id)->getBuffer();
  StringRef keyText = text.take_front(key.size());
  StringRef valueText = text.drop_front(key.size() + 1);
  SettingsBuilder builder(impl, errors, /*fromOverride=*/true);

  // Walk down the sections of the dotted key; every prefix must be a section.
  llvm::SmallVector<StringRef> components;
  keyText.split(components, '.');
  std::string section, spelledSection;
  for (StringRef component : llvm::ArrayRef(components).drop_back()) {
    std::string spelled = joinPath(spelledSection, component);
    auto spellings = resolveSpelling(section, component);
    SMLoc loc = SMLoc::getFromPointer(component.data());
    if (spellings.empty())
      return builder.error(loc, "unknown key '" + spelled + "'" +
                                    suggestKey(section, component));
    if (spellings.front().knob->kind != KnobKind::Section)
      return builder.error(loc, "'" + spelled +
                                    "' is not a section; it has "
                                    "no key '" +
                                    keyText.drop_front(spelled.size() + 1) +
                                    "'");
    section = spellings.front().knob->path.str();
    spelledSection = spelled;
  }
  StringRef name = components.back();
  SMLoc keyLoc = SMLoc::getFromPointer(name.data());
  if (name.empty())
    return builder.error(keyLoc, "empty key in override '" + keyText + "'");

  // Strings may be written without quotes on a command line: `device=cpu`.
  auto spellings = resolveSpelling(section, name);
  bool takesString =
      !spellings.empty() &&
      llvm::all_of(spellings, [](const Spelling &spelling) {
        KnobKind kind = spelling.knob->kind;
        return spelling.rewrite == LegacyRewrite::SameValue &&
               (kind == KnobKind::String || kind == KnobKind::Enum);
      });
  JsonNode node;
  if (takesString && !valueText.trim().starts_with("\"") &&
      valueText.trim() != "null") {
    node.kind = JsonNode::String;
    node.text = valueText.str();
    node.loc = SMLoc::getFromPointer(valueText.data());
  } else if (!readJson(impl.sourceMgr, valueText, /*requireObject=*/false, node,
                       errors)) {
    return;
  }
  builder.setKey(section, spelledSection, name, keyLoc, node);
}
