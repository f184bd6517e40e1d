//===- MicroStepLoop.h - gradient accumulation as a loop --------*- C++ -*-===//
//
// Gradient accumulation runs the micro-step G times per optimizer step. The
// step keeps one copy of it, in an `scf.for` over the micro-steps whose
// iteration values are the running sums; the sums are the same additions, in
// the same order and types, as G unrolled copies would make, so that the
// loop changes no bit of the result.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_DIALECT_ZERO_TRANSFORMS_MICROSTEPLOOP_H
#define ZERO_LIB_DIALECT_ZERO_TRANSFORMS_MICROSTEPLOOP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace zero {

/// How one result of the micro-step is combined over the micro-steps.
struct Accumulation {
  enum class Kind {
    /// (x_0 + ... + x_{G-1}) * (1 / G), every addition in `type` (the loss,
    /// and the full gradients of stages 0-1).
    Mean,
    /// x_0 + ... + x_{G-1} of summands already scaled by 1 / G, each addition
    /// computed wide and rounded to `type` (reduced gradient shards).
    Sum,
  };
  Kind kind = Kind::Mean;
  /// The type of the sum; null: the result's own element type.
  Type type;
};

/// The `zero.data` arguments of `func`, which gain a leading dimension of
/// `steps` micro-batches; an error on `func` when one is not a statically
/// shaped tensor.
FailureOr<SmallVector<BlockArgument>> getMicroBatchedDataArgs(func::FuncOp func,
                                                              int64_t steps);

/// Moves the body of `func` (one micro-step) into an `scf.for` running
/// `steps` micro-steps: every `zero.data` argument gains a leading dimension
/// of `steps`, of which iteration i reads slice i, and result k becomes the
/// combination `accumulations[k]` of its values over the micro-steps. Fails
/// (with an error on `func`) when a data argument is not statically shaped.
LogicalResult buildMicroStepLoop(func::FuncOp func, int64_t steps,
                                 ArrayRef<Accumulation> accumulations);

} // namespace zero
} // namespace mlir

#endif // ZERO_LIB_DIALECT_ZERO_TRANSFORMS_MICROSTEPLOOP_H
