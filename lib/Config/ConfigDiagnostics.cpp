//===- ConfigDiagnostics.cpp - Errors of the DeepSpeed config model -------===//

#include "zero/Config/ConfigDiagnostics.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace zero;

char ConfigError::ID = 0;

void ConfigError::log(llvm::raw_ostream &os) const {
  // toString() joins errors with '\n': leave the last one to it.
  os << llvm::StringRef(formatDiagnostics(diagnostics)).rtrim('\n');
}

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

namespace {
/// A quoted excerpt of a source line and the caret's column in it.
struct Excerpt {
  std::string text;
  size_t caret;
};
} // namespace

/// The excerpt of kMaxQuotedColumns around `column` of a line that starts at
/// `lineStart` in `text`; only that much of the line is read. None if the
/// whole line is that short.
static std::optional<Excerpt> excerptLine(llvm::StringRef text,
                                          size_t lineStart, size_t column) {
  size_t begin =
      column > kMaxQuotedColumns / 2 ? column - kMaxQuotedColumns / 2 : 0;
  llvm::StringRef window =
      text.substr(lineStart + begin, kMaxQuotedColumns + 1)
          .take_until([](char c) { return c == '\n' || c == '\r'; });
  // The line up to `begin` holds no line break: the window ends the line
  // unless it is cut.
  if (begin + window.size() <= kMaxQuotedColumns)
    return std::nullopt;
  bool cutAfter = window.size() > kMaxQuotedColumns;
  llvm::StringRef before = begin > 0 ? "..." : "";
  return Excerpt{
      (before + window.take_front(kMaxQuotedColumns) + (cutAfter ? "..." : ""))
          .str(),
      before.size() + column - begin};
}

llvm::SMDiagnostic zero::makeDiagnostic(const llvm::SourceMgr &sourceMgr,
                                        llvm::SMLoc loc,
                                        llvm::SourceMgr::DiagKind kind,
                                        const llvm::Twine &message) {
  unsigned id = sourceMgr.FindBufferContainingLoc(loc);
  if (id == 0)
    return llvm::SMDiagnostic("<config>", kind, message.str());
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(id);
  llvm::StringRef text = buffer->getBuffer();
  // Both scan back to the start of the line only: a linear cost per
  // diagnostic, and DiagnosticList makes a bounded number of them.
  auto [line, column] = sourceMgr.getLineAndColumn(loc, id);
  size_t offset = loc.getPointer() - text.begin();
  size_t lineStart = offset - (column - 1);
  std::optional<Excerpt> excerpt = excerptLine(text, lineStart, column - 1);
  std::string quoted =
      excerpt ? excerpt->text
              : text.substr(lineStart)
                    .take_until([](char c) { return c == '\n' || c == '\r'; })
                    .str();
  llvm::SmallVector<std::pair<unsigned, unsigned>, 1> ranges;
  if (excerpt)
    ranges.push_back({unsigned(excerpt->caret), unsigned(excerpt->caret + 1)});
  return llvm::SMDiagnostic(sourceMgr, loc, buffer->getBufferIdentifier(), line,
                            column - 1, kind, message.str(), quoted, ranges);
}

/// The excerpt a diagnostic quotes instead of its line, and where its caret
/// goes: made by makeDiagnostic (the excerpt, with the caret as its range)
/// or elsewhere (cut from the whole line). None if the line is quoted whole.
static std::optional<Excerpt> getExcerpt(const llvm::SMDiagnostic &diagnostic) {
  llvm::StringRef line = diagnostic.getLineContents();
  int column = diagnostic.getColumnNo();
  if (diagnostic.getLineNo() <= 0 || column < 0)
    return std::nullopt;
  if (diagnostic.getRanges().size() == 1)
    return Excerpt{line.str(), diagnostic.getRanges().front().first};
  return excerptLine(line, 0, column);
}

/// The header, then the source line (or an excerpt of it) with a caret.
static void printWithSource(const llvm::SMDiagnostic &diagnostic,
                            llvm::raw_ostream &os) {
  std::optional<Excerpt> quote = getExcerpt(diagnostic);
  if (!quote) {
    diagnostic.print(/*ProgName=*/nullptr, os, /*ShowColors=*/false);
    return;
  }
  printHeader(diagnostic, os);
  os << quote->text << '\n';
  os.indent(quote->caret) << "^\n";
}

void DiagnosticList::add(llvm::function_ref<llvm::SMDiagnostic()> make,
                         llvm::StringRef what) {
  ++total;
  if (diagnostics.size() < kMaxReportedDiagnostics)
    diagnostics.push_back(make());
  else
    ++omitted[what];
}

void DiagnosticList::add(const llvm::SMDiagnostic &diagnostic) {
  add([&] {
    std::optional<Excerpt> quote = getExcerpt(diagnostic);
    if (!quote || !diagnostic.getSourceMgr())
      return diagnostic;
    llvm::SmallVector<std::pair<unsigned, unsigned>, 1> ranges{
        {unsigned(quote->caret), unsigned(quote->caret + 1)}};
    return llvm::SMDiagnostic(*diagnostic.getSourceMgr(), diagnostic.getLoc(),
                              diagnostic.getFilename(), diagnostic.getLineNo(),
                              diagnostic.getColumnNo(), diagnostic.getKind(),
                              diagnostic.getMessage(), quote->text, ranges);
  });
}

std::vector<llvm::SMDiagnostic> DiagnosticList::take() {
  std::vector<llvm::SMDiagnostic> result = std::move(diagnostics);
  for (auto [what, count] : omitted)
    result.emplace_back(
        fileName, llvm::SourceMgr::DK_Error,
        ("and " + llvm::Twine(count) + " more " + what + " (only the first " +
         llvm::Twine(kMaxReportedDiagnostics) + " errors are listed)")
            .str());
  diagnostics.clear();
  omitted.clear();
  total = 0;
  return result;
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
