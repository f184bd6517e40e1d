//===- TranslateRegistration.cpp - --zero-to-schedule ---------------------===//

#include "zero/Target/Schedule/ScheduleEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
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
      [](DialectRegistry &registry) {
        // The dialects zero-opt reads, so that its output translates as is.
        registry.insert<ZeroDialect, arith::ArithDialect,
                        bufferization::BufferizationDialect, func::FuncDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        ml_program::MLProgramDialect, scf::SCFDialect,
                        shard::ShardDialect, tensor::TensorDialect>();
      });
}
