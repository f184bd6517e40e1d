//===- zero-reduce.cpp - MLIR's test-case reducer with zero ---------------===//
//
// mlir-reduce with the zero dialect, the dialects a training step is written
// in and the zero passes: shrinks an input that makes zero-opt fail, e.g.
//
//   zero-reduce step.mlir \
//     --reduction-tree='traversal-mode=0 test=still-fails.sh'
//
// where still-fails.sh exits 1 while the input is still interesting.
//
// It runs on the zero tools' stack (zero/Support/InputNesting.h), where
// MLIR's recursion has room for inputs far deeper than the tools' nesting
// limit; mlir-reduce's own main parses the input, so the limit itself is
// checked only by the zero-opt the test script runs.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-reduce/MlirReduceMain.h"
#include "mlir/Transforms/Passes.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Pipelines/Pipeline.h"
#include "zero/InitAllDialects.h"
#include "zero/Support/InputNesting.h"
#include "llvm/Support/ProgramStack.h"

using namespace mlir;

int main(int argc, char **argv) {
  // --opt-reduction-pass may name these.
  registerTransformsPasses();
  zero::registerZeroPasses();
  zero::registerZeroPipeline();

  DialectRegistry registry;
  zero::registerZeroDialects(registry);
  MLIRContext context(registry);
  LogicalResult result = failure();
  llvm::runOnNewStack(zero::kToolStackSize,
                      [&] { result = mlirReduceMain(argc, argv, context); });
  return failed(result);
}
