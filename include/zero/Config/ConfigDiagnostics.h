//===- ConfigDiagnostics.h - Errors of the DeepSpeed config model -*- C++
//-*-===//
//
// Every problem found in a DeepSpeed configuration is an llvm::SMDiagnostic
// with its file:line:col, so that the driver prints them like any LLVM tool
// and tests can check positions. Library code never prints: the diagnostics
// travel in a ConfigError inside an llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONFIG_CONFIGDIAGNOSTICS_H
#define ZERO_CONFIG_CONFIGDIAGNOSTICS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <string>
#include <vector>

namespace zero {

/// All errors found in one step (reading, an override, resolution), in the
/// order of the file.
class ConfigError : public llvm::ErrorInfo<ConfigError> {
public:
  static char ID;

  explicit ConfigError(std::vector<llvm::SMDiagnostic> diagnostics)
      : diagnostics(std::move(diagnostics)) {}

  llvm::ArrayRef<llvm::SMDiagnostic> getDiagnostics() const {
    return diagnostics;
  }

  /// Prints formatDiagnostics() of the errors.
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::vector<llvm::SMDiagnostic> diagnostics;
};

/// Source lines longer than this are quoted as an excerpt around the column:
/// a one-line (minified) config of 50 MB must not make 50 MB diagnostics.
constexpr size_t kMaxQuotedColumns = 160;

/// At most this many errors of one step (reading the file, one override) are
/// reported in full; the rest are counted in one summary line, so that a
/// config with 50,000 unknown keys is refused as fast as one with 20.
constexpr size_t kMaxReportedDiagnostics = 20;

/// The diagnostic at `loc`, a position in one of the buffers of `sourceMgr`,
/// as SourceMgr::GetMessage makes it, except that a line longer than
/// kMaxQuotedColumns is quoted as an excerpt of that many columns around the
/// column ("..." where it is cut): then the diagnostic's one range (a config
/// diagnostic has none otherwise) is the caret's column in the excerpt, and
/// getColumnNo() is still the column in the file. Its memory does not depend
/// on the length of the line.
llvm::SMDiagnostic makeDiagnostic(const llvm::SourceMgr &sourceMgr,
                                  llvm::SMLoc loc,
                                  llvm::SourceMgr::DiagKind kind,
                                  const llvm::Twine &message);

/// The errors of one step: the first kMaxReportedDiagnostics in full, the
/// others only counted (their diagnostic is never made: no line is looked
/// up, no key suggested).
class DiagnosticList {
public:
  /// `fileName` is named by the summary line.
  explicit DiagnosticList(std::string fileName)
      : fileName(std::move(fileName)) {}

  /// Adds the diagnostic that `make` returns or, past the limit, counts one
  /// more `what` (a plural noun for the summary: "unknown keys").
  void add(llvm::function_ref<llvm::SMDiagnostic()> make,
           llvm::StringRef what = "errors");
  /// Adds a diagnostic made elsewhere (the YAML parser's), quoting at most
  /// kMaxQuotedColumns of its line.
  void add(const llvm::SMDiagnostic &diagnostic);

  /// Every error added, counted or not.
  size_t count() const { return total; }
  bool empty() const { return total == 0; }

  /// The diagnostics, then one line for each kind of error left out:
  /// "and 7980 more unknown keys (only the first 20 errors are listed)".
  std::vector<llvm::SMDiagnostic> take();

private:
  std::string fileName;
  std::vector<llvm::SMDiagnostic> diagnostics;
  /// Plural noun -> errors of that kind left out, in order of appearance.
  llvm::MapVector<llvm::StringRef, size_t> omitted;
  size_t total = 0;
};

/// Formats diagnostics as LLVM tools print them: `file:line:col: error: msg`,
/// then the source line and a caret (when the diagnostic has a position).
std::string formatDiagnostics(llvm::ArrayRef<llvm::SMDiagnostic> diagnostics,
                              bool showSourceLine = true);

/// Consumes `error` and returns its diagnostics. Errors that are not a
/// ConfigError become one diagnostic without position.
std::vector<llvm::SMDiagnostic> takeDiagnostics(llvm::Error error);

} // namespace zero

#endif // ZERO_CONFIG_CONFIGDIAGNOSTICS_H
