//===- zero-lsp-server.cpp - MLIR's language server with zero -------------===//
//
// mlir-lsp-server with the zero dialect and the dialects a training step is
// written in, for editors (diagnostics, hover, go-to-definition on zero IR).
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"
#include "zero/InitAllDialects.h"

using namespace mlir;

int main(int argc, char **argv) {
  DialectRegistry registry;
  zero::registerZeroDialects(registry);
  return failed(MlirLspServerMain(argc, argv, registry));
}
