//===- TrainStep.h - finding the training step ------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_TRAINSTEP_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_TRAINSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace zero {

/// A function takes part in the training-step contract if any of its
/// arguments or results carries a `zero.*` attribute.
bool isTrainStepCandidate(func::FuncOp func);

/// The training-step function of `module`: the one named `entry` if it is
/// not empty, else the one marked `zero.train_step`, else the only candidate.
/// Emits an error on `module` and fails when there is none or several.
FailureOr<func::FuncOp> lookupTrainStep(ModuleOp module, StringRef entry);

/// The ZeRO stage and world size that `zero-partition` recorded on `func`;
/// emits an error naming `passName` and fails when they are missing.
struct RankInfo {
  int64_t stage;
  int64_t worldSize;
  /// `zero.ranks_per_node`, else worldSize (one node).
  int64_t ranksPerNode;
};
FailureOr<RankInfo> getRankInfo(func::FuncOp func, StringRef passName);

/// The training step after `zero-partition`: found as `lookupTrainStep`
/// does, with its stage and world size, and a layout on every parameter.
/// Emits an error naming `passName` and fails otherwise.
struct PartitionedTrainStep {
  func::FuncOp func;
  RankInfo rank;
};
FailureOr<PartitionedTrainStep> lookupPartitionedTrainStep(ModuleOp module,
                                                           StringRef entry,
                                                           StringRef passName);

/// What the training step's signature says of the model: what a DeepSpeed
/// configuration's "auto" values are resolved from.
struct TrainStepShape {
  /// The most frequent dimension among the parameters' static shapes (ties:
  /// the larger); 0 without parameters.
  int64_t hiddenSize = 0;
  /// The leading dimension of the first `zero.data` argument of rank >= 1;
  /// 0 without one.
  int64_t microBatchSize = 0;
  /// The distinct element types of the parameters, in order of appearance.
  SmallVector<Type> paramElementTypes;
};

/// The shape of the training step of `module` (`entry` as for
/// lookupTrainStep); all zero/null, and nothing emitted, without a step.
TrainStepShape inferTrainStepShape(ModuleOp module, StringRef entry);

/// A parameter argument of the training step and what `zero-partition`
/// recorded on it (`layout` is null before that pass).
struct ParamArg {
  BlockArgument arg;
  StringRef name;
  LayoutAttr layout;
  bool persistent;
  bool frozen;
};
SmallVector<ParamArg> getParamArgs(func::FuncOp func);

/// Whether the fp16 loss scale seeds the step's backward pass
/// (zero-mixed-precision marks its argument zero.scales_backward).
bool hasScaledBackward(func::FuncOp func);

/// The forward pass of a single-block step: the ops of its body that the
/// result marked `zero.loss` depends on (through their operands and the
/// values their regions use from above), and that result's number. Emits an
/// error naming `passName` and fails when no result is marked.
struct ForwardPass {
  unsigned lossIndex;
  llvm::DenseSet<Operation *> ops;
};
FailureOr<ForwardPass> getForwardPass(func::FuncOp func, StringRef passName);

/// Calls `fn` on every value `op` reads: its operands and the values that
/// the ops of its regions use from above.
void forEachInput(Operation *op, function_ref<void(Value)> fn);

/// Sets the function type of `func` from its entry block's argument types
/// and its terminator's operand types, after a pass changed them.
void updateFunctionType(func::FuncOp func);

/// `op` or its ancestor that lies directly in a block of the step: the
/// function's body or the body of its micro-step loop (an `scf.for`). The
/// passes place code around such ops.
Operation *getStepLevelOp(Operation *op);

/// The blocks of the step that the scheduling passes order ops in: the
/// function's body, then the body of its micro-step loop if it has one.
SmallVector<Block *> getStepBlocks(func::FuncOp func);

} // namespace zero
} // namespace mlir

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_TRAINSTEP_H
