//===- TranslateRegistration.cpp - --zero-to-schedule ---------------------===//

#include "zero/Target/Schedule/ScheduleEmitter.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "zero/InitAllDialects.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

void zero::registerToScheduleTranslation() {
  static llvm::cl::opt<std::string> entry(
      "zero-entry",
      llvm::cl::desc("Name of the training-step function, for modules with "
                     "several candidates"),
      llvm::cl::value_desc("NAME"), llvm::cl::init(""));

  TranslateFromMLIRRegistration registration(
      "zero-to-schedule",
      "Write the schedule of a compiled rank step (docs/ScheduleFormat.md)",
      [](ModuleOp module, llvm::raw_ostream &os) {
        // mlir-translate prints the op on every diagnostic; a rank step is
        // thousands of lines, and the location already names the op.
        module->getContext()->printOpOnDiagnostic(false);
        return translateModuleToSchedule(module, os, entry);
      },
      // The dialects zero-opt reads, so that its output translates as is.
      registerZeroDialects);
}
