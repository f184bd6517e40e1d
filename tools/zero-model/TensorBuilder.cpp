//===- TensorBuilder.cpp - tensor-level building blocks -------------------===//

#include "TensorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "llvm/ADT/bit.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::zero_model;

//===----------------------------------------------------------------------===//
// ScalarBuilder
//===----------------------------------------------------------------------===//

Value ScalarBuilder::cst(double value) {
  Value &constant = constants[llvm::bit_cast<uint64_t>(value)];
  if (!constant)
    constant = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return constant;
}
Value ScalarBuilder::backwardSeed() {
  auto seed = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
  seed->setAttr(zero::ZeroDialect::getBackwardSeedAttrName(), b.getUnitAttr());
  return seed;
}
Value ScalarBuilder::add(Value lhs, Value rhs) {
  return arith::AddFOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::sub(Value lhs, Value rhs) {
  return arith::SubFOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::mul(Value lhs, Value rhs) {
  return arith::MulFOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::div(Value lhs, Value rhs) {
  return arith::DivFOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::max(Value lhs, Value rhs) {
  return arith::MaximumFOp::create(b, loc, lhs, rhs);
}
Value ScalarBuilder::exp(Value x) { return math::ExpOp::create(b, loc, x); }
Value ScalarBuilder::log(Value x) { return math::LogOp::create(b, loc, x); }
Value ScalarBuilder::tanh(Value x) { return math::TanhOp::create(b, loc, x); }
Value ScalarBuilder::rsqrt(Value x) {
  return math::RsqrtOp::create(b, loc, x);
}
Value ScalarBuilder::greater(Value lhs, Value rhs) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, lhs, rhs);
}
Value ScalarBuilder::select(Value cond, Value ifTrue, Value ifFalse) {
  return arith::SelectOp::create(b, loc, cond, ifTrue, ifFalse);
}

//===----------------------------------------------------------------------===//
// Creation and data movement
//===----------------------------------------------------------------------===//

void TensorBuilder::setName(const Twine &name) {
  loc = NameLoc::get(b.getStringAttr(name));
}

Operation *TensorBuilder::beginSegment() const {
  Block::iterator point = b.getInsertionPoint();
  return point == b.getInsertionBlock()->begin() ? nullptr : &*std::prev(point);
}

void TensorBuilder::markSegment(Operation *begin, int64_t index) {
  Block *block = b.getInsertionBlock();
  Block::iterator first =
      begin ? std::next(Block::iterator(begin)) : block->begin();
  auto attr = b.getI64IntegerAttr(index);
  for (Operation &op : llvm::make_range(first, b.getInsertionPoint()))
    op.setAttr(zero::ZeroDialect::getSegmentAttrName(), attr);
}

RankedTensorType TensorBuilder::tensorType(ArrayRef<int64_t> shape,
                                           Type elementType) {
  return RankedTensorType::get(shape, elementType ? elementType : floatType);
}

ArrayRef<int64_t> TensorBuilder::shapeOf(Value tensor) {
  return cast<RankedTensorType>(tensor.getType()).getShape();
}

Value TensorBuilder::empty(ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape,
                                 elementType ? elementType : floatType);
}

Value TensorBuilder::fill(ArrayRef<int64_t> shape, double value) {
  Value scalar =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  return linalg::FillOp::create(b, loc, ValueRange{scalar},
                                ValueRange{empty(shape)})
      .getResult(0);
}

Value TensorBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  ArrayRef<int64_t> inShape = shapeOf(x);
  SmallVector<int64_t> shape;
  for (int64_t dim : perm)
    shape.push_back(inShape[dim]);
  auto elementType = cast<RankedTensorType>(x.getType()).getElementType();
  return linalg::TransposeOp::create(b, loc, x, empty(shape, elementType),
                                     perm)
      .getResult()[0];
}

Value TensorBuilder::broadcast(Value x, ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> addedDims) {
  auto elementType = cast<RankedTensorType>(x.getType()).getElementType();
  return linalg::BroadcastOp::create(b, loc, x, empty(shape, elementType),
                                     addedDims)
      .getResult()[0];
}

Value TensorBuilder::broadcastRows(Value x, int64_t n) {
  return broadcast(x, {shapeOf(x)[0], n}, {1});
}

Value TensorBuilder::broadcastCols(Value x, int64_t m) {
  return broadcast(x, {m, shapeOf(x)[0]}, {0});
}

Value TensorBuilder::expandShape(Value x, ArrayRef<int64_t> shape,
                                 ArrayRef<ReassociationIndices> reassociation) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(x.getType()).getElementType());
  return tensor::ExpandShapeOp::create(b, loc, type, x, reassociation);
}

Value TensorBuilder::collapseShape(
    Value x, ArrayRef<ReassociationIndices> reassociation) {
  return tensor::CollapseShapeOp::create(b, loc, x, reassociation);
}

Value TensorBuilder::extractCols(Value x, int64_t offset, int64_t size) {
  int64_t rows = shapeOf(x)[0];
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                       b.getIndexAttr(offset)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(rows),
                                     b.getIndexAttr(size)};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
}

Value TensorBuilder::insertCols(Value x, Value dest, int64_t offset) {
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                       b.getIndexAttr(offset)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(shape[0]),
                                     b.getIndexAttr(shape[1])};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, loc, x, dest, offsets, sizes,
                                       strides);
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

Value TensorBuilder::matmul(Value lhs, Value rhs, Value init) {
  int64_t m = shapeOf(lhs)[0], n = shapeOf(rhs)[1];
  if (!init)
    init = fill({m, n}, 0.0);
  return linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                  ValueRange{lhs, rhs}, ValueRange{init})
      .getResult(0);
}

Value TensorBuilder::batchMatmul(Value lhs, Value rhs) {
  ArrayRef<int64_t> lhsShape = shapeOf(lhs);
  Value init = fill({lhsShape[0], lhsShape[1], shapeOf(rhs)[2]}, 0.0);
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                       ValueRange{lhs, rhs}, ValueRange{init})
      .getResult(0);
}

Value TensorBuilder::map(ValueRange inputs, ScalarFn fn) {
  Value init = empty(shapeOf(inputs.front()));
  FloatType type = floatType;
  return linalg::MapOp::create(
             b, loc, inputs, init,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               // The block also has an argument for the init element, which
               // elementwise payloads never read.
               ScalarBuilder s(nested, nestedLoc, type);
               Value result = fn(s, args.take_front(inputs.size()));
               linalg::YieldOp::create(nested, nestedLoc, result);
             })
      .getResult()[0];
}

Value TensorBuilder::reduce(Value x, ArrayRef<int64_t> dims, ReduceKind kind) {
  SmallVector<int64_t> shape;
  for (auto [i, size] : llvm::enumerate(shapeOf(x)))
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      shape.push_back(size);
  double identity = kind == ReduceKind::Sum
                        ? 0.0
                        : -std::numeric_limits<double>::infinity();
  Value init = fill(shape, identity);
  return linalg::ReduceOp::create(
             b, loc, ValueRange{x}, ValueRange{init}, dims,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               // (element, accumulator) in this order, so that the op prints
               // in its short form `linalg.reduce { arith.addf }`.
               Value result =
                   kind == ReduceKind::Sum
                       ? Value(arith::AddFOp::create(nested, nestedLoc,
                                                     args[0], args[1]))
                       : Value(arith::MaximumFOp::create(nested, nestedLoc,
                                                         args[0], args[1]));
               linalg::YieldOp::create(nested, nestedLoc, result);
             })
      .getResult(0);
}

Value TensorBuilder::rowReduce(Value x, ReduceKind kind) {
  int64_t last = static_cast<int64_t>(shapeOf(x).size()) - 1;
  return reduce(x, {last}, kind);
}

//===----------------------------------------------------------------------===//
// Index-dependent ops
//===----------------------------------------------------------------------===//

Value TensorBuilder::gatherRows(Value table, Value ids) {
  int64_t n = shapeOf(ids)[0], h = shapeOf(table)[1];
  MLIRContext *ctx = b.getContext();
  AffineMap idsMap = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(2, ctx);
  Value init = empty({n, h});
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{ids},
             ValueRange{init}, ArrayRef<AffineMap>{idsMap, outMap},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel},
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               Value row = arith::IndexCastOp::create(
                   nested, nestedLoc, nested.getIndexType(), args[0]);
               Value col = linalg::IndexOp::create(nested, nestedLoc, 1);
               Value elem = tensor::ExtractOp::create(nested, nestedLoc, table,
                                                      ValueRange{row, col});
               linalg::YieldOp::create(nested, nestedLoc, elem);
             })
      .getResult(0);
}

Value TensorBuilder::oneHot(Value labels, int64_t numClasses,
                            bool transposed) {
  int64_t n = shapeOf(labels)[0];
  // The label is indexed by the row dimension; the class by the other one.
  unsigned labelDim = transposed ? 1 : 0, classDim = transposed ? 0 : 1;
  MLIRContext *ctx = b.getContext();
  AffineMap labelMap =
      AffineMap::get(2, 0, {getAffineDimExpr(labelDim, ctx)}, ctx);
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(2, ctx);
  Value init = transposed ? empty({numClasses, n}) : empty({n, numClasses});
  FloatType type = floatType;
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{labels},
             ValueRange{init}, ArrayRef<AffineMap>{labelMap, outMap},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel},
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               ScalarBuilder s(nested, nestedLoc, type);
               Value label = arith::IndexCastOp::create(
                   nested, nestedLoc, nested.getIndexType(), args[0]);
               Value cls = linalg::IndexOp::create(nested, nestedLoc, classDim);
               Value hit = arith::CmpIOp::create(
                   nested, nestedLoc, arith::CmpIPredicate::eq, cls, label);
               linalg::YieldOp::create(
                   nested, nestedLoc,
                   s.select(hit, s.cst(1.0), s.cst(0.0)));
             })
      .getResult(0);
}

Value TensorBuilder::causalMask(int64_t seqLength) {
  MLIRContext *ctx = b.getContext();
  Value init = empty({seqLength, seqLength});
  FloatType type = floatType;
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(2, ctx)},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel},
             [&](OpBuilder &nested, Location nestedLoc, ValueRange) {
               ScalarBuilder s(nested, nestedLoc, type);
               Value query = linalg::IndexOp::create(nested, nestedLoc, 0);
               Value key = linalg::IndexOp::create(nested, nestedLoc, 1);
               Value future = arith::CmpIOp::create(
                   nested, nestedLoc, arith::CmpIPredicate::sgt, key, query);
               // -inf, not a large negative number: exp gives exactly 0, and
               // the diagonal keeps every row's maximum finite.
               Value masked =
                   s.select(future,
                            s.cst(-std::numeric_limits<double>::infinity()),
                            s.cst(0.0));
               linalg::YieldOp::create(nested, nestedLoc, masked);
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

Value TensorBuilder::linear(Value x, Value w, Value bias) {
  // linalg.matmul accumulates into its init, so the broadcast bias is the
  // init and no separate add is needed.
  return matmul(x, w, broadcastCols(bias, shapeOf(x)[0]));
}

LinearGrads TensorBuilder::linearBackward(Value x, Value w, Value dy,
                                          bool needDx) {
  LinearGrads grads;
  grads.dw = matmul(transpose(x), dy);
  grads.db = colSum(dy);
  if (needDx)
    grads.dx = matmul(dy, transpose(w));
  return grads;
}

Value TensorBuilder::layerNorm(Value x, Value gamma, Value beta, double eps,
                               LayerNormSaved &saved) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t m = shape[0], n = shape[1];
  double invN = 1.0 / static_cast<double>(n);

  Value sumRows = broadcastRows(rowSum(x), n);
  Value centered = map({x, sumRows}, [&](ScalarBuilder &s, ValueRange a) {
    return s.sub(a[0], s.mul(a[1], s.cst(invN)));
  });
  Value squares = map({centered}, [](ScalarBuilder &s, ValueRange a) {
    return s.mul(a[0], a[0]);
  });
  Value rstd = map({rowSum(squares)}, [&](ScalarBuilder &s, ValueRange a) {
    return s.rsqrt(s.add(s.mul(a[0], s.cst(invN)), s.cst(eps)));
  });
  saved.rstdRows = broadcastRows(rstd, n);
  saved.xhat = map({centered, saved.rstdRows},
                   [](ScalarBuilder &s, ValueRange a) {
                     return s.mul(a[0], a[1]);
                   });
  saved.gammaRows = broadcastCols(gamma, m);
  Value betaRows = broadcastCols(beta, m);
  return map({saved.xhat, saved.gammaRows, betaRows},
             [](ScalarBuilder &s, ValueRange a) {
               return s.add(s.mul(a[0], a[1]), a[2]);
             });
}

LayerNormGrads TensorBuilder::layerNormBackward(Value dy,
                                                const LayerNormSaved &saved,
                                                Value residual) {
  int64_t n = shapeOf(dy)[1];
  double invN = 1.0 / static_cast<double>(n);
  auto mul = [](ScalarBuilder &s, ValueRange a) { return s.mul(a[0], a[1]); };

  LayerNormGrads grads;
  grads.dgamma = colSum(map({dy, saved.xhat}, mul));
  grads.dbeta = colSum(dy);

  // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma.
  Value g = map({dy, saved.gammaRows}, mul);
  Value sumG = broadcastRows(rowSum(g), n);
  Value sumGX = broadcastRows(rowSum(map({g, saved.xhat}, mul)), n);
  SmallVector<Value> inputs = {g, saved.xhat, sumG, sumGX, saved.rstdRows};
  if (residual)
    inputs.push_back(residual);
  grads.dx = map(inputs, [&](ScalarBuilder &s, ValueRange a) {
    Value invNCst = s.cst(invN);
    Value inner = s.sub(s.sub(a[0], s.mul(a[2], invNCst)),
                        s.mul(a[1], s.mul(a[3], invNCst)));
    Value dx = s.mul(a[4], inner);
    return a.size() > 5 ? s.add(dx, a[5]) : dx;
  });
  return grads;
}

Value TensorBuilder::softmax(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t last = static_cast<int64_t>(shape.size()) - 1;
  Value maxRows = broadcast(rowReduce(x, ReduceKind::Max), shape, {last});
  Value exps = map({x, maxRows}, [](ScalarBuilder &s, ValueRange a) {
    return s.exp(s.sub(a[0], a[1]));
  });
  Value sumRows = broadcast(rowSum(exps), shape, {last});
  return map({exps, sumRows},
             [](ScalarBuilder &s, ValueRange a) { return s.div(a[0], a[1]); });
}

Value TensorBuilder::softmaxBackward(Value probs, Value dprobs, double scale) {
  ArrayRef<int64_t> shape = shapeOf(probs);
  int64_t last = static_cast<int64_t>(shape.size()) - 1;
  Value weighted = map({dprobs, probs}, [](ScalarBuilder &s, ValueRange a) {
    return s.mul(a[0], a[1]);
  });
  Value dots = broadcast(rowSum(weighted), shape, {last});
  return map({probs, dprobs, dots}, [&](ScalarBuilder &s, ValueRange a) {
    Value ds = s.mul(a[0], s.sub(a[1], a[2]));
    return scale == 1.0 ? ds : s.mul(ds, s.cst(scale));
  });
}

// gelu_tanh(x) = 0.5 x (1 + tanh(c (x + k x^3))), c = sqrt(2/pi), k = 0.044715.
static constexpr double kGeluCubic = 0.044715;
static double geluScale() { return std::sqrt(2.0 / M_PI); }

Value TensorBuilder::gelu(Value x) {
  return map({x}, [](ScalarBuilder &s, ValueRange a) {
    Value x = a[0];
    Value x3 = s.mul(s.mul(x, x), x);
    Value t = s.tanh(
        s.mul(s.cst(geluScale()), s.add(x, s.mul(s.cst(kGeluCubic), x3))));
    return s.mul(s.mul(s.cst(0.5), x), s.add(s.cst(1.0), t));
  });
}

Value TensorBuilder::geluBackward(Value x, Value dy) {
  // Recomputes tanh rather than saving it: one tensor less to keep alive.
  return map({x, dy}, [](ScalarBuilder &s, ValueRange a) {
    Value x = a[0];
    Value x2 = s.mul(x, x);
    Value c = s.cst(geluScale());
    Value t = s.tanh(
        s.mul(c, s.add(x, s.mul(s.cst(kGeluCubic), s.mul(x2, x)))));
    Value half = s.cst(0.5), one = s.cst(1.0);
    // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3k x^2)
    Value left = s.mul(half, s.add(one, t));
    Value sech2 = s.sub(one, s.mul(t, t));
    Value inner = s.add(one, s.mul(s.cst(3.0 * kGeluCubic), x2));
    Value right = s.mul(s.mul(s.mul(half, x), sech2), s.mul(c, inner));
    return s.mul(a[1], s.add(left, right));
  });
}

Value TensorBuilder::relu(Value x) {
  return map({x}, [](ScalarBuilder &s, ValueRange a) {
    return s.max(a[0], s.cst(0.0));
  });
}

Value TensorBuilder::reluBackward(Value x, Value dy) {
  return map({x, dy}, [](ScalarBuilder &s, ValueRange a) {
    return s.select(s.greater(a[0], s.cst(0.0)), a[1], s.cst(0.0));
  });
}

CrossEntropy TensorBuilder::crossEntropy(Value logits, Value labels) {
  ArrayRef<int64_t> shape = shapeOf(logits);
  int64_t n = shape[0], classes = shape[1];
  double invN = 1.0 / static_cast<double>(n);

  Value maxes = rowReduce(logits, ReduceKind::Max);
  Value exps = map({logits, broadcastRows(maxes, classes)},
                   [](ScalarBuilder &s, ValueRange a) {
                     return s.exp(s.sub(a[0], a[1]));
                   });
  Value sums = rowSum(exps);
  Value oneHotLabels = oneHot(labels, classes);
  Value picked = rowSum(map({logits, oneHotLabels},
                            [](ScalarBuilder &s, ValueRange a) {
                              return s.mul(a[0], a[1]);
                            }));
  // Per-token loss logsumexp - logit[label], already divided by the token
  // count so that the sum over tokens is the mean.
  Value tokenLoss =
      map({maxes, sums, picked}, [&](ScalarBuilder &s, ValueRange a) {
        Value lse = s.add(a[0], s.log(a[1]));
        return s.mul(s.sub(lse, a[2]), s.cst(invN));
      });

  CrossEntropy ce;
  ce.loss = reduce(tokenLoss, {0}, ReduceKind::Sum);
  ce.dlogits = map({exps, broadcastRows(sums, classes), oneHotLabels},
                   [&](ScalarBuilder &s, ValueRange a) {
                     Value dloss = s.mul(s.sub(s.div(a[0], a[1]), a[2]),
                                         s.cst(invN));
                     return s.mul(dloss, s.backwardSeed());
                   });
  return ce;
}
