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
#include "llvm/Support/ProgramStack.h"

using namespace mlir;

int main(int argc, char **argv) {
  zero::registerToScheduleTranslation();
  LogicalResult result = failure();
  llvm::runOnNewStack(zero::kToolStackSize, [&] {
    result = mlirTranslateMain(argc, argv,
                               "zero-translate: MLIR to the "
                               "zero-opt schedule");
  });
  return failed(result);
}
