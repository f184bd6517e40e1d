//===- TensorUtils.cpp - building tensor code in the passes ---------------===//

#include "TensorUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::zero;

SmallVector<ReassociationIndices> zero::getFlatReassociation(int64_t rank) {
  if (rank == 0)
    return {};
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

Value zero::buildElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Type elementType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  auto shape = cast<RankedTensorType>(inputs.front().getType()).getShape();
  Value init = tensor::EmptyOp::create(b, loc, shape, elementType);
  size_t numInputs = inputs.size();
  auto map = linalg::MapOp::create(
      b, loc, inputs, init,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        // The payload also receives the init element; it is not read.
        Value result = fn(nested, nestedLoc, args.take_front(numInputs));
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return map.getResult()[0];
}

Value zero::buildFloatCast(OpBuilder &b, Location loc, Value tensor,
                           Type elementType) {
  auto from = cast<FloatType>(
      cast<RankedTensorType>(tensor.getType()).getElementType());
  auto to = cast<FloatType>(elementType);
  if (from == to)
    return tensor;
  return buildElementwise(b, loc, tensor, to,
                          [&](OpBuilder &nb, Location l, ValueRange args) {
                            return buildScalarCast(nb, l, args[0], to);
                          });
}

Value zero::buildScalarCast(OpBuilder &b, Location loc, Value scalar,
                            Type type) {
  auto from = cast<FloatType>(scalar.getType());
  auto to = cast<FloatType>(type);
  if (from == to)
    return scalar;
  if (to.getWidth() > from.getWidth())
    return arith::ExtFOp::create(b, loc, to, scalar);
  // truncf needs a narrower result; f32 holds every bf16 and f16 value.
  if (to.getWidth() == from.getWidth())
    scalar = arith::ExtFOp::create(b, loc, b.getF32Type(), scalar);
  return arith::TruncFOp::create(b, loc, to, scalar);
}

Type zero::getFloatTypeByName(MLIRContext *ctx, StringRef name) {
  Builder b(ctx);
  if (name == "fp32")
    return b.getF32Type();
  if (name == "bf16")
    return b.getBF16Type();
  if (name == "fp16")
    return b.getF16Type();
  return nullptr;
}

/// Folds every element of a float tensor, starting from 0, with `CombineOp`
/// into a scalar of its element type.
template <typename CombineOp>
static Value reduceToScalar(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Type elementType = type.getElementType();
  Value zeroScalar =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, 0.0));
  Value init =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, elementType);
  init = linalg::FillOp::create(b, loc, zeroScalar, init).getResult(0);
  auto dims = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  auto reduced =
      linalg::ReduceOp::create(b, loc, tensor, init, dims,
                               [](OpBuilder &nb, Location l, ValueRange args) {
                                 Value acc =
                                     CombineOp::create(nb, l, args[0], args[1]);
                                 linalg::YieldOp::create(nb, l, acc);
                               });
  return tensor::ExtractOp::create(b, loc, reduced.getResult(0), ValueRange{});
}

Value zero::buildSumOfSquares(OpBuilder &b, Location loc, Value tensor,
                              FloatType accumulator) {
  Value squares =
      buildElementwise(b, loc, tensor, accumulator,
                       [&](OpBuilder &nb, Location l, ValueRange args) {
                         Value x = buildScalarCast(nb, l, args[0], accumulator);
                         return arith::MulFOp::create(nb, l, x, x).getResult();
                       });
  return reduceToScalar<arith::AddFOp>(b, loc, squares);
}

Value zero::buildSelect(OpBuilder &b, Location loc, Value cond, Value ifTrue,
                        Value ifFalse) {
  Type elementType = cast<RankedTensorType>(ifTrue.getType()).getElementType();
  return buildElementwise(b, loc, {ifTrue, ifFalse}, elementType,
                          [&](OpBuilder &nb, Location l, ValueRange args) {
                            return arith::SelectOp::create(nb, l, cond, args[0],
                                                           args[1])
                                .getResult();
                          });
}

Type zero::getArithmeticType(OpBuilder &b, ArrayRef<Type> types) {
  Type result = b.getF32Type();
  for (Type type : types)
    if (cast<FloatType>(type).getWidth() > cast<FloatType>(result).getWidth())
      result = type;
  return result;
}

bool zero::holdsExactly(Type to, Type from) {
  return to == from ||
         cast<FloatType>(to).getWidth() > cast<FloatType>(from).getWidth();
}

Value zero::buildFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        Type type, double value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, type);
  Value constant =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return linalg::FillOp::create(b, loc, constant, empty).getResult(0);
}

Value zero::buildMean(OpBuilder &b, Location loc, ArrayRef<Value> values,
                      double scale, Type sumType) {
  Type valueType = getElementTypeOrSelf(values.front().getType());
  if (!sumType)
    sumType = valueType;
  auto combine = [&](OpBuilder &nb, Location l, ValueRange xs) -> Value {
    Value sum = buildScalarCast(nb, l, xs.front(), sumType);
    for (Value x : xs.drop_front())
      sum =
          arith::AddFOp::create(nb, l, sum, buildScalarCast(nb, l, x, sumType));
    Value factor =
        arith::ConstantOp::create(nb, l, nb.getFloatAttr(sumType, scale));
    return arith::MulFOp::create(nb, l, sum, factor);
  };
  if (isa<RankedTensorType>(values.front().getType()))
    return buildElementwise(b, loc, values, sumType, combine);
  return combine(b, loc, values);
}

Value zero::buildRoundedSum(OpBuilder &b, Location loc, Value sum, Value value,
                            Type resultType) {
  Type compute = getArithmeticType(
      b, {getElementTypeOrSelf(sum), getElementTypeOrSelf(value), resultType});
  return buildElementwise(b, loc, {sum, value}, resultType,
                          [&](OpBuilder &nb, Location l, ValueRange args) {
                            Value total = arith::AddFOp::create(
                                nb, l, buildScalarCast(nb, l, args[0], compute),
                                buildScalarCast(nb, l, args[1], compute));
                            return buildScalarCast(nb, l, total, resultType);
                          });
}
