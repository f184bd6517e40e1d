//===- TensorBuilder.h - tensor-level building blocks ----------*- C++ -*-===//
//
// Helpers that build the training-step op set of docs/TrainingStepIR.md on
// statically shaped tensors: named linalg ops for the heavy lifting, fused
// `linalg.map`s for elementwise math, and the few index-dependent
// `linalg.generic`s (gather, one-hot, causal mask). Every helper creates its
// own destination (`tensor.empty`, optionally filled), so that the models read
// like the math they implement.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TOOLS_ZERO_MODEL_TENSORBUILDER_H
#define ZERO_TOOLS_ZERO_MODEL_TENSORBUILDER_H

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace zero_model {

/// Builds scalar arith/math ops inside the region of a linalg op. Constants
/// are created in the region too, so that every payload is self-contained.
class ScalarBuilder {
public:
  ScalarBuilder(OpBuilder &b, Location loc, FloatType type)
      : b(b), loc(loc), type(type) {}

  Value cst(double value);
  /// The constant 1 that seeds the backward pass (d loss / d loss), marked
  /// zero.backward_seed: under fp16 zero-opt puts the loss scale there.
  Value backwardSeed();
  Value add(Value lhs, Value rhs);
  Value sub(Value lhs, Value rhs);
  Value mul(Value lhs, Value rhs);
  Value div(Value lhs, Value rhs);
  Value max(Value lhs, Value rhs);
  Value exp(Value x);
  Value log(Value x);
  Value tanh(Value x);
  Value rsqrt(Value x);
  /// `lhs > rhs` (ordered), as an i1.
  Value greater(Value lhs, Value rhs);
  Value select(Value cond, Value ifTrue, Value ifFalse);

private:
  OpBuilder &b;
  Location loc;
  FloatType type;
  /// One constant per value and region, keyed by the double's bits.
  llvm::SmallDenseMap<uint64_t, Value> constants;
};

/// The scalar payload of a `linalg.map`: element values in, result out.
using ScalarFn = llvm::function_ref<Value(ScalarBuilder &, ValueRange)>;

enum class ReduceKind { Sum, Max };

/// State saved by the LayerNorm forward pass for its backward pass.
struct LayerNormSaved {
  Value xhat;        // (x - mean) * rstd, [M, N]
  Value rstdRows;    // rstd broadcast along the rows, [M, N]
  Value gammaRows;   // gamma broadcast along the columns, [M, N]
};

struct LayerNormGrads {
  Value dx, dgamma, dbeta;
};

struct LinearGrads {
  Value dx, dw, db;
};

struct CrossEntropy {
  Value loss;    // 0-d mean loss
  Value dlogits; // d loss / d logits
};

/// Builds tensor-level ops at the current insertion point of `b`, with
/// `floatType` as the float element type of everything it creates.
class TensorBuilder {
public:
  TensorBuilder(OpBuilder &b, Location loc, FloatType floatType)
      : b(b), loc(loc), floatType(floatType) {}

  OpBuilder &getBuilder() { return b; }
  FloatType getFloatType() const { return floatType; }
  Location getLoc() const { return loc; }
  void setLoc(Location newLoc) { loc = newLoc; }
  /// Sets a `NameLoc` naming the part of the model being built; it shows with
  /// `--mlir-print-debuginfo` and in diagnostics.
  void setName(const Twine &name);

  /// Segments (docs/TrainingStepIR.md): `markSegment(beginSegment(), i)`
  /// around the building of layer i's forward pass marks every op built in
  /// between with `zero.segment = i`. Ops inside regions (payloads) belong to
  /// their op and are not marked.
  Operation *beginSegment() const;
  void markSegment(Operation *begin, int64_t index);

  RankedTensorType tensorType(ArrayRef<int64_t> shape, Type elementType = {});
  static ArrayRef<int64_t> shapeOf(Value tensor);

  //===--------------------------------------------------------------------===//
  // Creation and data movement
  //===--------------------------------------------------------------------===//

  Value empty(ArrayRef<int64_t> shape, Type elementType = {});
  /// `linalg.fill` of a new tensor with a scalar constant.
  Value fill(ArrayRef<int64_t> shape, double value);
  /// `linalg.transpose`: result dimension i is input dimension perm[i].
  Value transpose(Value x, ArrayRef<int64_t> perm);
  /// 2-D transpose.
  Value transpose(Value x) { return transpose(x, {1, 0}); }
  /// `linalg.broadcast` of `x` to `shape`, adding the dimensions `addedDims`.
  Value broadcast(Value x, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> addedDims);
  /// [M] -> [M, N]: one value per row.
  Value broadcastRows(Value x, int64_t n);
  /// [N] -> [M, N]: one value per column.
  Value broadcastCols(Value x, int64_t m);
  Value expandShape(Value x, ArrayRef<int64_t> shape,
                    ArrayRef<ReassociationIndices> reassociation);
  Value collapseShape(Value x, ArrayRef<ReassociationIndices> reassociation);
  /// Columns [offset, offset + size) of a 2-D tensor.
  Value extractCols(Value x, int64_t offset, int64_t size);
  /// Writes `x` into columns starting at `offset` of the 2-D tensor `dest`.
  Value insertCols(Value x, Value dest, int64_t offset);

  //===--------------------------------------------------------------------===//
  // Compute
  //===--------------------------------------------------------------------===//

  /// [M, K] x [K, N]; accumulates into `init` (e.g. a broadcast bias) or into
  /// zeros.
  Value matmul(Value lhs, Value rhs, Value init = {});
  /// [P, M, K] x [P, K, N] into zeros.
  Value batchMatmul(Value lhs, Value rhs);
  /// Fused elementwise `linalg.map` over same-shaped inputs; the result has
  /// the shape of the inputs and the float element type.
  Value map(ValueRange inputs, ScalarFn fn);
  /// `linalg.reduce` of `x` over `dims`.
  Value reduce(Value x, ArrayRef<int64_t> dims, ReduceKind kind);
  /// Reduction over the last dimension.
  Value rowReduce(Value x, ReduceKind kind);
  Value rowSum(Value x) { return rowReduce(x, ReduceKind::Sum); }
  /// Sum over the rows of a 2-D tensor: [M, N] -> [N].
  Value colSum(Value x) { return reduce(x, {0}, ReduceKind::Sum); }

  //===--------------------------------------------------------------------===//
  // Index-dependent ops (the only `linalg.generic`s)
  //===--------------------------------------------------------------------===//

  /// out[n, h] = table[ids[n], h] for i32 `ids` [N] and `table` [V, H].
  Value gatherRows(Value table, Value ids);
  /// One-hot float matrix of i32 `labels` [N]: [N, C], or [C, N] when
  /// `transposed`.
  Value oneHot(Value labels, int64_t numClasses, bool transposed = false);
  /// [S, S] additive causal mask: 0 on and below the diagonal, -inf above.
  Value causalMask(int64_t seqLength);

  //===--------------------------------------------------------------------===//
  // Layers
  //===--------------------------------------------------------------------===//

  /// y = x W + b with x [M, K], W [K, N] (stored [in, out]), b [N].
  Value linear(Value x, Value w, Value bias);
  /// Gradients of `linear`; dx only when `needDx`.
  LinearGrads linearBackward(Value x, Value w, Value dy, bool needDx = true);

  /// Row-wise LayerNorm of x [M, N] with biased variance.
  Value layerNorm(Value x, Value gamma, Value beta, double eps,
                  LayerNormSaved &saved);
  /// Gradients of `layerNorm`; `residual` (optional) is added to dx, for the
  /// gradient reaching a residual stream from both of its uses.
  LayerNormGrads layerNormBackward(Value dy, const LayerNormSaved &saved,
                                   Value residual = {});

  /// Softmax over the last dimension.
  Value softmax(Value x);
  /// Gradient of `softmax` times `scale`: scale * P * (dP - rowsum(dP * P)).
  Value softmaxBackward(Value probs, Value dprobs, double scale = 1.0);

  Value gelu(Value x);
  Value geluBackward(Value x, Value dy);
  Value relu(Value x);
  /// dy where x > 0, else 0.
  Value reluBackward(Value x, Value dy);

  /// Mean cross-entropy of logits [N, C] against i32 labels [N], and its
  /// gradient for a loss gradient of 1.
  CrossEntropy crossEntropy(Value logits, Value labels);

private:
  OpBuilder &b;
  Location loc;
  FloatType floatType;
};

} // namespace zero_model
} // namespace mlir

#endif // ZERO_TOOLS_ZERO_MODEL_TENSORBUILDER_H
