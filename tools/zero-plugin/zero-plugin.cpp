//===- zero-plugin.cpp - zero-opt as a plugin of mlir-opt -----------------===//
//
// Loads the zero dialects, passes and pipeline into an upstream mlir-opt:
//
//   mlir-opt --load-dialect-plugin=ZeroPlugin.so \
//            --load-pass-plugin=ZeroPlugin.so \
//            --pass-pipeline='builtin.module(zero-pipeline{stage=3})' step.mlir
//
// The plugin links libMLIR.so, as Debian's mlir-opt does, so that both see
// one copy of MLIR's registries and TypeIDs.
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Pipelines/Pipeline.h"
#include "zero/InitAllDialects.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {
      MLIR_PLUGIN_API_VERSION, "ZeroDialects", LLVM_VERSION_STRING,
      [](DialectRegistry *registry) { zero::registerZeroDialects(*registry); }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "ZeroPasses", LLVM_VERSION_STRING, []() {
            zero::registerZeroPasses();
            zero::registerZeroPipeline();
          }};
}
