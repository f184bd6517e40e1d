//===- ConfigDiagnostics.cpp - Errors of the DeepSpeed config model -------===//

#include "zero/Config/ConfigDiagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace zero;

char ConfigError::ID = 0;

void ConfigError::log(llvm::raw_ostream &os) const {
  // toString() joins errors with '\n': leave the last one to it.
  os << llvm::StringRef(formatDiagnostics(diagnostics)).rtrim('\n');
}

/// Source lines longer than this are quoted as an excerpt around the column:
/// a one-line config of 50 MB must not make a 50 MB message.
constexpr size_t kMaxQuotedColumns = 160;

/// `file:line:col: error: message` and a newline.
static void printHeader(const llvm::SMDiagnostic &diagnostic,
                        llvm::raw_ostream &os) {
  llvm::SMDiagnostic header(diagnostic.getFilename(), diagnostic.getKind(),
                            diagnostic.getMessage());
  os << diagnostic.getFilename();
  if (diagnostic.getLineNo() > 0) {
    os << ':' << diagnostic.getLineNo();
    if (diagnostic.getColumnNo() >= 0)
      os << ':' << diagnostic.getColumnNo() + 1;
  }
  os << ": ";
  header.print(nullptr, os, /*ShowColors=*/false, /*ShowKindLabel=*/true,
               /*ShowLocation=*/false);
}

/// The header, then the source line (or an excerpt of it) with a caret.
static void printWithSource(const llvm::SMDiagnostic &diagnostic,
                            llvm::raw_ostream &os) {
  llvm::StringRef line = diagnostic.getLineContents();
  if (line.size() <= kMaxQuotedColumns) {
    diagnostic.print(/*ProgName=*/nullptr, os, /*ShowColors=*/false);
    return;
  }
  printHeader(diagnostic, os);
  size_t column = std::max(diagnostic.getColumnNo(), 0);
  size_t begin =
      column > kMaxQuotedColumns / 2 ? column - kMaxQuotedColumns / 2 : 0;
  size_t end = std::min(line.size(), begin + kMaxQuotedColumns);
  llvm::StringRef before = begin > 0 ? "..." : "";
  os << before << line.slice(begin, end) << (end < line.size() ? "..." : "")
     << '\n';
  os.indent(before.size() + column - begin) << "^\n";
}

std::string zero::formatDiagnostics(llvm::ArrayRef<llvm::SMDiagnostic> list,
                                    bool showSourceLine) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const llvm::SMDiagnostic &diagnostic : list) {
    if (showSourceLine)
      printWithSource(diagnostic, os);
    else
      printHeader(diagnostic, os);
  }
  return text;
}

std::vector<llvm::SMDiagnostic> zero::takeDiagnostics(llvm::Error error) {
  std::vector<llvm::SMDiagnostic> result;
  llvm::handleAllErrors(
      std::move(error),
      [&](const ConfigError &configError) {
        llvm::append_range(result, configError.getDiagnostics());
      },
      [&](const llvm::ErrorInfoBase &other) {
        result.emplace_back("<config>", llvm::SourceMgr::DK_Error,
                            other.message());
      });
  return result;
}
