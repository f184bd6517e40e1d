//===- zero-translate.cpp - MLIR to the runtime's schedule ----------------===//
//
// mlir-translate with the zero translations:
//
//   zero-translate --zero-to-schedule step.mlir -o step.json
//
// writes the schedule (docs/ScheduleFormat.md) of a rank step compiled by
// zero-opt; `--zero-entry=NAME` picks the training step in a module with
// several candidates. It runs on the zero tools' stack, on which an input
// within their nesting limit (checked by the translation before it parses)
// cannot overflow MLIR's recursion (zero/Support/InputNesting.h).
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "zero/Support/InputNesting.h"
#include "zero/Target/Schedule/ScheduleEmitter.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/ProgramStack.h"

using namespace mlir;

/// mlirTranslateMain writes `-o` through a stream that it destroys itself
/// after keeping the file, so a failed write (a full disk) surfaces only in
/// the stream's destructor, as LLVM's fatal error "IO failure on output
/// stream: REASON", which names no file. This handler names it; LLVM then
/// removes the partial file (a regular file) and exits with 1.
static void reportFatalError(void *, const char *reason, bool) {
  llvm::StringRef text(reason);
  if (!text.consume_front("IO failure on output stream: ")) {
    llvm::errs() << "LLVM ERROR: " << reason << "\n";
    return;
  }
  std::string file = "-";
  if (llvm::cl::Option *option = llvm::cl::getRegisteredOptions().lookup("o"))
    file = static_cast<llvm::cl::opt<std::string> *>(option)->getValue();
  llvm::errs() << "zero-translate: error: cannot write '"
               << (file == "-" ? "<stdout>" : file) << "': " << text << "\n";
}

int main(int argc, char **argv) {
  llvm::install_fatal_error_handler(reportFatalError);
  zero::registerToScheduleTranslation();
  LogicalResult result = failure();
  llvm::runOnNewStack(zero::kToolStackSize, [&] {
    result = mlirTranslateMain(argc, argv,
                               "zero-translate: MLIR to the "
                               "zero-opt schedule");
  });
  return failed(result);
}
