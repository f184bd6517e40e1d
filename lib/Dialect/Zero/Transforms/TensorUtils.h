//===- TensorUtils.h - building tensor code in the passes -------*- C++ -*-===//
//
// The few tensor computations the passes insert (casts, scaling, norms) are
// written in the training-step op set of docs/TrainingStepIR.md, so that the
// runtime executes them like the rest of the step.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_DIALECT_ZERO_TRANSFORMS_TENSORUTILS_H
#define ZERO_LIB_DIALECT_ZERO_TRANSFORMS_TENSORUTILS_H

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace zero {

/// The reassociation that views a tensor of rank `rank` as its flat 1-d
/// shard and back: all dimensions in one group, none for a 0-d tensor.
SmallVector<ReassociationIndices> getFlatReassociation(int64_t rank);

/// `linalg.map` of same-shaped `inputs` into a new tensor of their shape
/// with `elementType`; `fn` computes one element from the input elements.
Value buildElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Type elementType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn);

/// Converts a float tensor to `elementType` (extf or truncf); returns it
/// unchanged when it already has that element type.
Value buildFloatCast(OpBuilder &b, Location loc, Value tensor,
                     Type elementType);

/// Converts a float scalar to `type` (extf or truncf; between bf16 and f16
/// through f32), or returns it.
Value buildScalarCast(OpBuilder &b, Location loc, Value scalar, Type type);

/// The float type DeepSpeed names `name` (fp32, bf16, fp16), or null.
Type getFloatTypeByName(MLIRContext *ctx, StringRef name);

/// The sum of the squares of the elements of a float tensor, accumulated in
/// `accumulator` (f32 or f64, at least as wide as the elements), as a scalar
/// of that type.
Value buildSumOfSquares(OpBuilder &b, Location loc, Value tensor,
                        FloatType accumulator);

/// The type float arithmetic on `types` is done in: the widest of them,
/// and at least f32 (16-bit values are added in f32).
Type getArithmeticType(OpBuilder &b, ArrayRef<Type> types);

/// Whether every value of float type `from` is one of float type `to`.
bool holdsExactly(Type to, Type from);

/// A new tensor of `shape` and element type `type` filled with `value`.
Value buildFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type type, double value);

/// The mean of same-typed float tensors or scalars, (x_0 + ...) * scale,
/// each summand cast to `sumType` (null: theirs) and added in it.
Value buildMean(OpBuilder &b, Location loc, ArrayRef<Value> values,
                double scale, Type sumType = {});

/// `sum + value` of two same-shaped float tensors, computed in their
/// arithmetic type (getArithmeticType, `resultType` included) and rounded
/// once to `resultType`.
Value buildRoundedSum(OpBuilder &b, Location loc, Value sum, Value value,
                      Type resultType);

/// Elementwise choice between two tensors of one type by an `i1` scalar:
/// a `linalg.map` of `arith.select %cond, %t, %f` over (ifTrue, ifFalse).
Value buildSelect(OpBuilder &b, Location loc, Value cond, Value ifTrue,
                  Value ifFalse);

} // namespace zero
} // namespace mlir

#endif // ZERO_LIB_DIALECT_ZERO_TRANSFORMS_TENSORUTILS_H
