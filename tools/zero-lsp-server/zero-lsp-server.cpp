//===- zero-lsp-server.cpp - MLIR's language server with zero -------------===//
//
// mlir-lsp-server with the zero dialect and the dialects a training step is
// written in, for editors (diagnostics, hover, go-to-definition on zero IR).
// It runs on the zero tools' stack (zero/Support/InputNesting.h), where
// MLIR's recursion has room for documents far deeper than the tools'
// nesting limit; the server parses the editor's text itself, so the limit
// is not checked here.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"
#include "zero/InitAllDialects.h"
#include "zero/Support/InputNesting.h"
#include "llvm/Support/ProgramStack.h"

using namespace mlir;

int main(int argc, char **argv) {
  DialectRegistry registry;
  zero::registerZeroDialects(registry);
  LogicalResult result = failure();
  llvm::runOnNewStack(zero::kToolStackSize, [&] {
    result = MlirLspServerMain(argc, argv, registry);
  });
  return failed(result);
}
