//===- ConfigSchema.h - The DeepSpeed keys zero-opt knows -------*- C++ -*-===//
//
// One table describes every DeepSpeed configuration key zero-opt reads: its
// canonical dotted path, type, DeepSpeed's default, range, "auto" rule, and
// whether the compiler honors it. A second table lists the legacy spellings
// (deprecated keys) and what they mean today. Reading, validation, "auto"
// resolution, toJSON and docs/Config.md all derive from these two tables.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONFIG_CONFIGSCHEMA_H
#define ZERO_CONFIG_CONFIGSCHEMA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <limits>

namespace zero {

enum class KnobKind : uint8_t {
  Section, ///< A JSON object holding other knobs (or null: all defaults).
  Bool,    ///< true or false.
  Int,     ///< Integral number; 5e8 and 5.0e8 are accepted, 1.5 is not.
  /// A number the compiled step computes with as an f32 (the optimizer's
  /// hyperparameters, the loss scale, the rates of a schedule): it is checked
  /// as the f32 it becomes (convertValue): finite, zero or a normal f32, and
  /// in range after rounding (an eps of 1e-50 is 0, a beta of 0.999999999
  /// is 1).
  Float,
  String,    ///< A JSON string.
  Enum,      ///< A string out of `choices`.
  FloatPair, ///< An array of two numbers (Adam's betas), each as Float.
  Any,       ///< Any JSON value; only ever compared with its default.
};

enum class KnobSupport : uint8_t {
  /// The compiler honors every valid value.
  Supported,
  /// Only DeepSpeed's default is accepted; any other value is an error that
  /// gives `reason`.
  RefusedUnlessDefault,
  /// Accepted, but it cannot change a compiled step (`reason` says why); a
  /// non-default value draws a warning so that nothing is ignored silently.
  NoEffect,
};

/// The largest scheduler.params.last_batch_iteration, 2^52. The compiled step
/// evaluates its schedule at i = last_batch_iteration + the optimizer steps
/// applied so far: an i64 add (arith.addi), then an f64 (arith.sitofp). Up to
/// this bound a run can take 2^52 more steps (years at a step per
/// microsecond) with i exact in f64 and far from the i64 limit; near
/// INT64_MAX the add wraps and the rate becomes that of a negative i.
constexpr int64_t kMaxLastBatchIteration = int64_t(1) << 52;

/// How a knob's "auto" (as HuggingFace writes it) is resolved.
enum class AutoRule : uint8_t {
  None,                    ///< "auto" is an error.
  HiddenSquared,           ///< hidden * hidden.
  NineTenthsHiddenSquared, ///< floor(0.9 * hidden * hidden).
  TenHidden,               ///< 10 * hidden.
  Batch,          ///< Derived from the other batch knobs and world size.
  ParamPrecision, ///< True iff the IR's parameters have this type.
  NeedsTrainer,   ///< Accepted when read, refused at resolution: only a
                  ///< trainer could supply the value.
};

enum KnobFlags : unsigned {
  NoKnobFlags = 0,
  /// Also spelled with a `stage3_` prefix (DeepSpeed's alias).
  Stage3Alias = 1 << 0,
  /// Enum choices match case-insensitively (DeepSpeed lower-cases them).
  CaseInsensitive = 1 << 1,
  /// The range excludes `max` (betas are in [0, 1)).
  MaxExclusive = 1 << 2,
  /// Only stage 3 reads it: setting it at a lower stage draws a warning.
  Stage3Only = 1 << 3,
  /// The range excludes `min` (a divisor must be > 0).
  MinExclusive = 1 << 4,
};

struct KnobInfo {
  /// Canonical dotted path, e.g. "zero_optimization.offload_param.device".
  llvm::StringRef path;
  KnobKind kind;
  /// DeepSpeed's default as JSON text ("null" where DeepSpeed has None).
  llvm::StringRef defaultValue;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  /// Enum: the accepted values, '|'-separated, in the enum's order.
  llvm::StringRef choices;
  AutoRule autoRule = AutoRule::None;
  unsigned flags = NoKnobFlags;
  /// Parameters of a typed section (optimizer, scheduler): the section types
  /// that take it ('|'-separated), read from getTypeKey(); empty for all.
  llvm::StringRef appliesTo;
  KnobSupport support = KnobSupport::Supported;
  /// Why a knob is refused or has no effect.
  llvm::StringRef reason;
  /// One line for docs/Config.md.
  llvm::StringRef summary;

  /// The last path component ("device").
  llvm::StringRef getName() const {
    size_t dot = path.rfind('.');
    return dot == llvm::StringRef::npos ? path : path.drop_front(dot + 1);
  }
  /// The enclosing section's path ("" at the top level).
  llvm::StringRef getParent() const {
    size_t dot = path.rfind('.');
    return dot == llvm::StringRef::npos ? llvm::StringRef()
                                        : path.take_front(dot);
  }
  /// The knob naming the type of the top-level section this knob is in
  /// ("optimizer.type" for "optimizer.params.lr").
  std::string getTypeKey() const {
    return path.take_until([](char c) { return c == '.'; }).str() + ".type";
  }
  bool hasFlag(KnobFlags flag) const { return flags & flag; }
};

/// What a legacy spelling's value becomes under the canonical key.
enum class LegacyRewrite : uint8_t {
  SameValue,    ///< The value is copied.
  TrueMeansCpu, ///< true -> "cpu", false -> "none" (an offload device).
};

/// A spelling DeepSpeed still reads but that is not the canonical one.
struct LegacyKey {
  llvm::StringRef path;   ///< As users write it.
  llvm::StringRef target; ///< The canonical knob it sets.
  LegacyRewrite rewrite;
  llvm::StringRef origin; ///< Why it exists, for docs and the warning.
};

/// A value of an Enum knob that DeepSpeed accepts and zero-opt does not yet.
struct UnsupportedChoice {
  llvm::StringRef path;
  llvm::StringRef value;
  llvm::StringRef reason;
};

/// Every knob, sections before their members, in documentation order.
llvm::ArrayRef<KnobInfo> getKnobs();
llvm::ArrayRef<LegacyKey> getLegacyKeys();
llvm::ArrayRef<UnsupportedChoice> getUnsupportedChoices();

/// The knob with this canonical path, or null.
const KnobInfo *lookupKnob(llvm::StringRef path);

} // namespace zero

#endif // ZERO_CONFIG_CONFIGSCHEMA_H
