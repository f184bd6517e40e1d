//===- ConfigValue.h - Typed values of configuration knobs ------*- C++ -*-===//
//
// The value of one knob after its JSON has been checked against the knob's
// type and range. Defaults in the schema are JSON text converted by the same
// code, so a default can never be something a user could not write.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_CONFIG_CONFIGVALUE_H
#define ZERO_LIB_CONFIG_CONFIGVALUE_H

#include "JsonReader.h"

#include "zero/Config/ConfigSchema.h"

#include "llvm/Support/JSON.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace zero {

struct ConfigValue {
  enum Kind { Null, Auto, Bool, Int, Float, String, Pair, Json };

  Kind kind = Null;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  /// String and Enum knobs (the canonical spelling of a choice); Json: the
  /// value of an Any knob, serialized.
  std::string text;
  std::array<double, 2> pair = {0, 0};

  static ConfigValue makeBool(bool value);
  static ConfigValue makeInt(int64_t value);
  static ConfigValue makeFloat(double value);
  static ConfigValue makeString(std::string value);

  bool isNull() const { return kind == Null; }
  bool isAuto() const { return kind == Auto; }
  /// Int and Float knobs both read as a double.
  double asDouble() const { return kind == Int ? double(integer) : number; }

  bool operator==(const ConfigValue &other) const;
  bool operator!=(const ConfigValue &other) const { return !(*this == other); }

  /// As JSON text: `true`, `500000000`, `0.9`, `"cpu"`, `[0.9, 0.999]`.
  std::string toJSON() const;
};

/// Checks `node` against `knob` (type, range, choices, "auto") and converts
/// it. On error returns nullopt and sets `error` to a message that names the
/// expectation and what was found (`expected an integer, got "abc"`).
std::optional<ConfigValue>
convertValue(const KnobInfo &knob, const JsonNode &node, std::string &error);

/// The knob's default, converted.
ConfigValue getDefaultValue(const KnobInfo &knob);

/// The shortest decimal text that reads back as `value` (0.9, not
/// 0.90000000000000002).
std::string formatDouble(double value);

} // namespace zero

#endif // ZERO_LIB_CONFIG_CONFIGVALUE_H
