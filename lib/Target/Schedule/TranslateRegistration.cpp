//===- TranslateRegistration.cpp - --zero-to-schedule ---------------------===//

#include "zero/Target/Schedule/ScheduleEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "zero/InitAllDialects.h"
#include "zero/Support/InputNesting.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

void zero::registerToScheduleTranslation() {
  static llvm::cl::opt<std::string> entry(
      "zero-entry",
      llvm::cl::desc("Name of the training-step function, for modules with "
                     "several candidates"),
      llvm::cl::value_desc("NAME"), llvm::cl::init(""));

  // From the source rather than from the module mlir-translate would parse:
  // the input's nesting is checked before anything parses it
  // (zero/Support/InputNesting.h).
  TranslateRegistration registration(
      "zero-to-schedule",
      "Write the schedule of a compiled rank step (docs/ScheduleFormat.md)",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *context) -> LogicalResult {
        // mlir-translate prints the op on every diagnostic; a rank step is
        // thousands of lines, and the location already names the op.
        context->printOpOnDiagnostic(false);
        const llvm::MemoryBuffer *buffer =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        if (const char *past = findNestingPastLimit(buffer->getBuffer())) {
          auto [line, column] =
              sourceMgr->getLineAndColumn(llvm::SMLoc::getFromPointer(past));
          return emitError(FileLineColLoc::get(context,
                                               buffer->getBufferIdentifier(),
                                               line, column),
                           getNestingPastLimitMessage(kMaxInputNesting));
        }
        // The dialects zero-opt reads, so that its output translates as is.
        DialectRegistry registry;
        registerZeroDialects(registry);
        context->appendDialectRegistry(registry);
        OwningOpRef<ModuleOp> module =
            parseSourceFile<ModuleOp>(*sourceMgr, ParserConfig(context));
        if (!module)
          return failure();
        return translateModuleToSchedule(*module, os, entry);
      });
}
