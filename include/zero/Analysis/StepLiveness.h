//===- StepLiveness.h - program points and tensor lifetimes -----*- C++ -*-===//
//
// The liveness of every tensor of a rank step (docs/Passes.md, "The rank
// step"), as the runtime executes it: ops in program order, the micro-step
// loop's body once right after the loop op, a start op's operands read until
// its wait, a collective's results written from its start. The memory plan
// places buffers on these lifetimes; recomputation and offload decide what to
// keep from them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_STEPLIVENESS_H
#define ZERO_ANALYSIS_STEPLIVENESS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace zero {

/// The byte width of one element of a tensor of `elementType` (i1: 1 byte),
/// or failure for a type the plan cannot size.
FailureOr<int64_t> getElementByteWidth(Type elementType);

/// Bytes of a statically shaped tensor, or failure, also when the size does
/// not fit int64.
FailureOr<int64_t> getTensorByteSize(RankedTensorType type);

/// Bytes of one element of `value`'s tensor type; 0 if it cannot be sized.
int64_t getElementBytes(Value value);

class StepLiveness {
public:
  /// A tracked tensor value: its bytes, where it lives, the program point
  /// that defines it and the last one that reads it.
  struct ValueLiveness {
    int64_t size;
    MemorySpace space;
    int64_t def;
    int64_t lastUse;
    /// The value whose memory this one is: the source of a view
    /// (expand/collapse_shape), a loop result's running sum, else itself.
    Value root;
  };

  /// The points at which a root and all of its views are live, both
  /// included.
  struct Interval {
    int64_t start = 0;
    int64_t end = 0;
  };

  /// Computes the liveness of the single-block function `func`. Emits an
  /// error and fails on a tensor it cannot size (dynamic shape, unknown
  /// element type or encoding) and on a second micro-step loop.
  static FailureOr<StepLiveness> compute(func::FuncOp func);

  func::FuncOp getFunction() const { return func; }

  /// The ops of the body; program point `i` is `getProgram()[i]`.
  llvm::ArrayRef<Operation *> getProgram() const { return program; }
  int64_t getNumPoints() const { return program.size(); }
  int64_t getLastPoint() const { return program.size() - 1; }

  /// The program point of an op of the program.
  int64_t getPoint(Operation *op) const { return pointOf.lookup(op); }

  /// The op of the program that `op` is or is nested in; null outside.
  Operation *getProgramOp(Operation &op) const;

  /// The micro-step loop, if any, and the point of its body's terminator
  /// (where every iteration ends), or -1.
  scf::ForOp getLoop() const { return loop; }
  int64_t getLoopEnd() const { return loopEnd; }

  /// Every tracked value in program order (arguments first); the loop's
  /// running sums right before the loop op's results.
  const llvm::MapVector<Value, ValueLiveness> &getValues() const {
    return values;
  }
  const ValueLiveness *lookup(Value value) const;

  /// The lifetime of a root and its views.
  Interval getInterval(Value root) const { return intervals.lookup(root); }

private:
  explicit StepLiveness(func::FuncOp func) : func(func) {}

  LogicalResult build();
  LogicalResult addValue(Value value, int64_t def, Location loc);
  int64_t getUseEnd(OpOperand &use) const;

  // Op handles are not const-correct; liveness never changes the IR.
  mutable func::FuncOp func;
  Block *block = nullptr;
  mutable scf::ForOp loop;
  int64_t loopEnd = -1;
  llvm::SmallVector<Operation *> program;
  llvm::DenseMap<Operation *, int64_t> pointOf;
  llvm::MapVector<Value, ValueLiveness> values;
  llvm::DenseMap<Value, Interval> intervals;
};

} // namespace zero
} // namespace mlir

#endif // ZERO_ANALYSIS_STEPLIVENESS_H
