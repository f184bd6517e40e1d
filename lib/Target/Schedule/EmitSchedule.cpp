//===- EmitSchedule.cpp - zero-emit-schedule ------------------------------===//
//
// Writes the schedule of the training step to a file, so that zero-opt can
// compile and emit in one run (`--zero-emit-schedule=FILE`).
//
//===----------------------------------------------------------------------===//

#include "zero/Target/Schedule/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "zero/Support/OutputFile.h"
#include "zero/Target/Schedule/ScheduleEmitter.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROEMITSCHEDULEPASS
#include "zero/Target/Schedule/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroEmitSchedulePass
    : public mlir::zero::impl::ZeroEmitSchedulePassBase<ZeroEmitSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (file.empty()) {
      module.emitError("'") << getArgument() << "' needs the 'file' option";
      return signalPassFailure();
    }
    // Nothing is written unless the whole schedule translates.
    std::string schedule;
    llvm::raw_string_ostream os(schedule);
    if (failed(translateModuleToSchedule(module, os, entry)))
      return signalPassFailure();

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(file, &error);
    if (!output) {
      module.emitError("cannot write the schedule: ") << error;
      return signalPassFailure();
    }
    output->os() << schedule;
    if (llvm::Error error = ::zero::keepOutputFile(*output)) {
      module.emitError("the schedule: ") << llvm::toString(std::move(error));
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
