//===- ConfigValue.cpp - Typed values of configuration knobs --------------===//

#include "ConfigValue.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <charconv>
#include <cmath>
#include <limits>

using namespace zero;
using llvm::StringRef;

ConfigValue ConfigValue::makeBool(bool value) {
  ConfigValue result;
  result.kind = Bool;
  result.boolean = value;
  return result;
}

ConfigValue ConfigValue::makeInt(int64_t value) {
  ConfigValue result;
  result.kind = Int;
  result.integer = value;
  return result;
}

ConfigValue ConfigValue::makeFloat(double value) {
  ConfigValue result;
  result.kind = Float;
  result.number = value;
  return result;
}

ConfigValue ConfigValue::makeString(std::string value) {
  ConfigValue result;
  result.kind = String;
  result.text = std::move(value);
  return result;
}

bool ConfigValue::operator==(const ConfigValue &other) const {
  if (kind != other.kind)
    return false;
  switch (kind) {
  case Null:
  case Auto:
    return true;
  case Bool:
    return boolean == other.boolean;
  case Int:
    return integer == other.integer;
  case Float:
    return number == other.number;
  case String:
  case Json:
    return text == other.text;
  case Pair:
    return pair == other.pair;
  }
  llvm_unreachable("unknown value kind");
}

std::string zero::formatDouble(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value,
                                 std::chars_format::general);
  std::string text(buffer, ec == std::errc() ? end : buffer);
  // Keep floats recognizable as such: 1.0, not 1.
  if (std::isfinite(value) && text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

std::string ConfigValue::toJSON() const {
  switch (kind) {
  case Null:
    return "null";
  case Auto:
    return "\"auto\"";
  case Bool:
    return boolean ? "true" : "false";
  case Int:
    return std::to_string(integer);
  case Float:
    return formatDouble(number);
  case String:
    return llvm::formatv("{0}", llvm::json::Value(text)).str();
  case Pair:
    return "[" + formatDouble(pair[0]) + ", " + formatDouble(pair[1]) + "]";
  case Json:
    return text;
  }
  llvm_unreachable("unknown value kind");
}

namespace {

llvm::json::Value toJsonValue(const JsonNode &node) {
  switch (node.kind) {
  case JsonNode::Null:
    return nullptr;
  case JsonNode::Bool:
    return node.text == "true";
  case JsonNode::String:
    return node.text;
  case JsonNode::Number: {
    int64_t integer;
    if (!StringRef(node.text).getAsInteger(10, integer))
      return integer;
    double number = 0;
    (void)StringRef(node.text).getAsDouble(number);
    return number;
  }
  case JsonNode::Array: {
    llvm::json::Array array;
    for (const JsonNode &element : node.elements)
      array.push_back(toJsonValue(element));
    return array;
  }
  case JsonNode::Object: {
    llvm::json::Object object;
    for (const JsonMember &member : node.members)
      object[member.key] = toJsonValue(member.value);
    return object;
  }
  }
  llvm_unreachable("unknown JSON kind");
}

std::string formatBound(double value) {
  return value == std::floor(value) ? std::to_string(int64_t(value))
                                    : formatDouble(value);
}

/// What a knob expects, for messages: "a non-negative integer", "an integer
/// in [0, 3]", "one of "none", "cpu", "nvme"".
std::string describeExpectation(const KnobInfo &knob) {
  bool integral = knob.kind == KnobKind::Int;
  std::string noun = integral ? "integer" : "number";
  bool bounded = std::isfinite(knob.max);
  auto ranged = [&](StringRef article, StringRef noun) {
    std::string text = (article + noun).str();
    if (bounded)
      return text + (knob.hasFlag(MinExclusive) ? " in (" : " in [") +
             formatBound(knob.min) + ", " + formatBound(knob.max) +
             (knob.hasFlag(MaxExclusive) ? ")" : "]");
    if (knob.min == 0)
      return (knob.hasFlag(MinExclusive) ? "a positive " : "a non-negative ") +
             noun.str();
    if (knob.min == 1 && integral)
      return "a positive " + noun.str();
    if (std::isfinite(knob.min))
      return text + (knob.hasFlag(MinExclusive) ? " > " : " >= ") +
             formatBound(knob.min);
    return text;
  };
  switch (knob.kind) {
  case KnobKind::Section:
    return "an object";
  case KnobKind::Bool:
    return "true or false";
  case KnobKind::Int:
    return ranged("an ", noun);
  case KnobKind::Float:
    return ranged("a ", noun);
  case KnobKind::FloatPair:
    return ranged("two ", "numbers");
  case KnobKind::String:
    return "a string";
  case KnobKind::Enum: {
    llvm::SmallVector<StringRef> choices;
    knob.choices.split(choices, '|');
    std::string text = "one of";
    for (StringRef choice : choices)
      text += (text.size() > 6 ? ", \"" : " \"") + choice.str() + "\"";
    return text;
  }
  case KnobKind::Any:
    return "a JSON value";
  }
  llvm_unreachable("unknown knob kind");
}

bool inRange(const KnobInfo &knob, double value) {
  if (value < knob.min || (knob.hasFlag(MinExclusive) && value == knob.min))
    return false;
  return knob.hasFlag(MaxExclusive) ? value < knob.max : value <= knob.max;
}

/// A Float knob's value as the f32 the compiled step computes with: why that
/// f32 is not an acceptable value of the knob (" (...)", for the message), or
/// "" if it is. It must be finite, nonzero and normal unless the value is 0
/// (GPU kernels may flush subnormals to zero), and in the knob's range after
/// rounding.
std::string checkAsF32(const KnobInfo &knob, double value) {
  // The shortest text that reads back as the same f32: 3.4028235e+38.
  auto format = [](float number) {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), number);
    std::string text(buffer, ec == std::errc() ? end : buffer);
    if (text.find_first_of(".e") == std::string::npos)
      text += ".0";
    return text;
  };
  // Rounds to the nearest f32; beyond the largest, to an infinity.
  float rounded = static_cast<float>(value);
  if (!std::isfinite(rounded))
    return " (beyond the largest f32, " +
           format(std::numeric_limits<float>::max()) +
           "; the compiled step computes in f32)";
  if (value != 0 && !std::isnormal(rounded))
    return " (below the smallest normal f32, " +
           format(std::numeric_limits<float>::min()) +
           "; the compiled step computes in f32)";
  if (!inRange(knob, double(rounded)))
    return " (" + format(rounded) +
           " as an f32, the type the compiled step computes in)";
  return "";
}

/// Reads a JSON number as an int64; false if it is not integral or too big.
bool readInteger(StringRef text, int64_t &result) {
  if (text.find_first_of(".eE") == StringRef::npos)
    return !text.getAsInteger(10, result);
  double value;
  if (text.getAsDouble(value) || value != std::floor(value) ||
      !(std::fabs(value) < 9223372036854775808.0))
    return false;
  result = static_cast<int64_t>(value);
  return true;
}

/// Matches `value` against the choices of an Enum knob (and the choices
/// DeepSpeed has that zero-opt refuses later) and returns the canonical
/// spelling, or "".
StringRef matchChoice(const KnobInfo &knob, StringRef value) {
  auto matches = [&](StringRef choice) {
    return knob.hasFlag(CaseInsensitive) ? choice.equals_insensitive(value)
                                         : choice == value;
  };
  llvm::SmallVector<StringRef> choices;
  knob.choices.split(choices, '|');
  for (StringRef choice : choices)
    if (matches(choice))
      return choice;
  for (const UnsupportedChoice &unsupported : getUnsupportedChoices())
    if (unsupported.path == knob.path && matches(unsupported.value))
      return unsupported.value;
  return {};
}

std::string suggestChoice(const KnobInfo &knob, StringRef value) {
  llvm::SmallVector<StringRef> choices;
  knob.choices.split(choices, '|');
  StringRef best;
  unsigned bestDistance = value.size() / 2 + 1;
  for (StringRef choice : choices) {
    unsigned distance = StringRef(choice.lower()).edit_distance(value.lower());
    if (distance < bestDistance) {
      best = choice;
      bestDistance = distance;
    }
  }
  return best.empty() ? "" : "; did you mean \"" + best.str() + "\"?";
}

} // namespace

std::optional<ConfigValue> zero::convertValue(const KnobInfo &knob,
                                              const JsonNode &node,
                                              std::string &error) {
  ConfigValue value;
  auto fail = [&](StringRef hint = "") -> std::optional<ConfigValue> {
    error = "expected " + describeExpectation(knob) + ", got " +
            describeJson(node) + hint.str();
    return std::nullopt;
  };

  if (node.isString("auto")) {
    if (knob.autoRule == AutoRule::None)
      return fail(" (\"auto\" is not accepted for this key)");
    value.kind = ConfigValue::Auto;
    return value;
  }
  if (node.kind == JsonNode::Null) {
    if (knob.defaultValue == "null")
      return value;
    return fail();
  }

  switch (knob.kind) {
  case KnobKind::Section:
    return fail();
  case KnobKind::Bool:
    if (node.kind != JsonNode::Bool)
      return fail();
    return ConfigValue::makeBool(node.text == "true");
  case KnobKind::Int: {
    if (node.kind != JsonNode::Number ||
        !readInteger(node.text, value.integer) ||
        !inRange(knob, double(value.integer)))
      return fail();
    value.kind = ConfigValue::Int;
    return value;
  }
  case KnobKind::Float: {
    if (node.kind != JsonNode::Number ||
        StringRef(node.text).getAsDouble(value.number) ||
        !std::isfinite(value.number) || !inRange(knob, value.number))
      return fail();
    if (std::string why = checkAsF32(knob, value.number); !why.empty())
      return fail(why);
    value.kind = ConfigValue::Float;
    return value;
  }
  case KnobKind::String:
    if (node.kind != JsonNode::String)
      return fail();
    return ConfigValue::makeString(node.text);
  case KnobKind::Enum: {
    if (node.kind != JsonNode::String)
      return fail();
    StringRef choice = matchChoice(knob, node.text);
    if (choice.empty())
      return fail(suggestChoice(knob, node.text));
    return ConfigValue::makeString(choice.str());
  }
  case KnobKind::FloatPair: {
    if (node.kind != JsonNode::Array || node.elements.size() != 2)
      return fail();
    for (auto [index, element] : llvm::enumerate(node.elements)) {
      double &number = value.pair[index];
      if (element.kind != JsonNode::Number ||
          StringRef(element.text).getAsDouble(number) ||
          !std::isfinite(number) || !inRange(knob, number))
        return fail();
      if (std::string why = checkAsF32(knob, number); !why.empty())
        return fail(why);
    }
    value.kind = ConfigValue::Pair;
    return value;
  }
  case KnobKind::Any:
    value.kind = ConfigValue::Json;
    value.text = llvm::formatv("{0}", toJsonValue(node)).str();
    return value;
  }
  llvm_unreachable("unknown knob kind");
}

ConfigValue zero::getDefaultValue(const KnobInfo &knob) {
  // Defaults are simple JSON: null, booleans, numbers, strings, a pair.
  StringRef text = knob.defaultValue;
  JsonNode node;
  if (text == "null") {
    node.kind = JsonNode::Null;
  } else if (text == "true" || text == "false") {
    node.kind = JsonNode::Bool;
  } else if (text.consume_front("\"")) {
    node.kind = JsonNode::String;
    text.consume_back("\"");
  } else if (text.consume_front("[")) {
    node.kind = JsonNode::Array;
    llvm::SmallVector<StringRef> elements;
    text.drop_back().split(elements, ',');
    for (StringRef element : elements) {
      node.elements.emplace_back();
      node.elements.back().kind = JsonNode::Number;
      node.elements.back().text = element.trim().str();
    }
  } else {
    node.kind = JsonNode::Number;
  }
  if (node.kind != JsonNode::Array)
    node.text = text.str();
  std::string error;
  std::optional<ConfigValue> value = convertValue(knob, node, error);
  if (!value)
    llvm::report_fatal_error(llvm::Twine("invalid default of ") + knob.path +
                             ": " + error);
  return *value;
}
