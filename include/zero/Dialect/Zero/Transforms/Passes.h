//===- Passes.h - zero passes -----------------------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "zero/Dialect/Zero/Transforms/PassOptionEnums.h"

#include <functional>
#include <limits>
#include <optional>

namespace mlir {
namespace zero {

#define GEN_PASS_DECL
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

/// zero-checkpoint-activations whose `auto` measures the candidate steps
/// with the passes that `buildFitPipeline` adds, as the ZeRO pipeline gives
/// the rest of itself, instead of parsing `fit-pipeline`.
std::unique_ptr<Pass> createZeroCheckpointActivationsPass(
    ZeroCheckpointActivationsPassOptions options,
    std::function<void(OpPassManager &)> buildFitPipeline);

/// The options of `pass` if it is a zero-checkpoint-activations pass
/// (zero-opt reads the one given on its command line to configure the
/// pipeline's checkpointing), else none.
std::optional<ZeroCheckpointActivationsPassOptions>
getZeroCheckpointActivationsOptions(const Pass &pass);

#define GEN_PASS_REGISTRATION
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

} // namespace zero
} // namespace mlir

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
