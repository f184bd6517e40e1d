//===- zero-translate.cpp - MLIR to the runtime's schedule ----------------===//
//
// mlir-translate with the zero translations:
//
//   zero-translate --zero-to-schedule step.mlir -o step.json
//
// writes the schedule (docs/ScheduleFormat.md) of a rank step compiled by
// zero-opt; `--zero-entry=NAME` picks the training step in a module with
// several candidates.
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "zero/Target/Schedule/ScheduleEmitter.h"

using namespace mlir;

int main(int argc, char **argv) {
  zero::registerToScheduleTranslation();
  return failed(mlirTranslateMain(argc, argv,
                                  "zero-translate: MLIR to the "
                                  "zero-opt schedule"));
}
