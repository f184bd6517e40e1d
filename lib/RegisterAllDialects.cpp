//===- RegisterAllDialects.cpp - the dialects of a zero-opt tool ----------===//
//
// Each dialect is here because something reads or writes it:
//  - zero: the pipeline's output;
//  - func, arith, linalg, math, tensor: training steps (zero-model's MLP and
//    GPT-2, docs/TrainingStepIR.md) and the ops the passes create;
//  - scf: the micro-step loop (zero-accumulate-gradients);
//  - bufferization: ops with memory effects in a training step, which the
//    passes must refuse to move or recompute (bufferization.alloc_tensor).
//
//===----------------------------------------------------------------------===//

#include "zero/InitAllDialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

void mlir::zero::registerZeroDialects(DialectRegistry &registry) {
  registry.insert<ZeroDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
}
