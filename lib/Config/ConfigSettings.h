//===- ConfigSettings.h - Knob values as written, with positions -*- C++
//-*-===//
//
// The state between reading and resolution: for each canonical knob path the
// value that the file or an override gave, where it was written and how it
// was spelled (alias, deprecated key), so that later checks can point at it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_CONFIG_CONFIGSETTINGS_H
#define ZERO_LIB_CONFIG_CONFIGSETTINGS_H

#include "ConfigValue.h"

#include "zero/Config/ConfigDiagnostics.h"
#include "zero/Config/DeepSpeedConfig.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"

namespace zero {

struct Setting {
  ConfigValue value;
  /// Where the value and its key are written.
  llvm::SMLoc loc;
  llvm::SMLoc keyLoc;
  /// The full path as written: "zero_optimization.stage3_max_live_parameters".
  std::string spelling;
  bool fromOverride = false;
  /// Written with a deprecated key (cpu_offload, bfloat16, ...).
  bool deprecated = false;
};

struct DeepSpeedConfigSettings::Impl {
  /// Owns the file and every override text; settings point into them.
  llvm::SourceMgr sourceMgr;
  /// Named in diagnostics that have no position.
  std::string fileName = "<config>";
  /// Canonical knob path -> setting (sections too, when present).
  llvm::StringMap<Setting> settings;
  std::vector<llvm::SMDiagnostic> warnings;

  llvm::SMDiagnostic diagnose(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
                              const llvm::Twine &message) const;
  /// "ds.json:3:5" for a position in one of the buffers.
  std::string describeLoc(llvm::SMLoc loc) const;
};

/// Records the members of a configuration object read from a file.
void readSettings(DeepSpeedConfigSettings::Impl &impl, const JsonNode &root,
                  DiagnosticList &errors);

/// Sets one knob or section from the command line, replacing the file's value.
void applyOverride(DeepSpeedConfigSettings::Impl &impl, llvm::StringRef key,
                   llvm::StringRef value, DiagnosticList &errors);

/// Resolves "auto", the batch rule and defaults; checks support status and
/// the rules that involve several knobs.
llvm::Expected<DeepSpeedConfig>
resolveSettings(const DeepSpeedConfigSettings::Impl &impl,
                const ResolveContext &context);

} // namespace zero

#endif // ZERO_LIB_CONFIG_CONFIGSETTINGS_H
