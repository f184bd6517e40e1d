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
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-reduce/MlirReduceMain.h"
#include "mlir/Transforms/Passes.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Dialect/Zero/Transforms/Pipeline.h"
#include "zero/InitAllDialects.h"

using namespace mlir;

int main(int argc, char **argv) {
  // --opt-reduction-pass may name these.
  registerTransformsPasses();
  zero::registerZeroPasses();
  zero::registerZeroPipeline();

  DialectRegistry registry;
  zero::registerZeroDialects(registry);
  MLIRContext context(registry);
  return failed(mlirReduceMain(argc, argv, context));
}
