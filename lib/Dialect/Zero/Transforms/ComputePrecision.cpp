//===- ComputePrecision.cpp - GEMMs in 16 bits, f32 accumulation ----------===//
//
// DeepSpeed's bf16 and fp16 compute in the type they store (the module is
// `.bfloat16()` or `.half()`); the GEMMs, nearly all of a transformer's
// arithmetic, then run on tensor cores: 16-bit operands, f32 accumulation.
// This pass gives every f32 GEMM of the step 16-bit operands and keeps its
// init and result f32, which is that arithmetic exactly (upstream linalg
// extends the operands to the init's type, then multiplies and adds in it).
// `tf32` keeps the f32 operands and marks each GEMM as rounding them to tf32
// (zero.round_operands), the f32 mode of tensor cores.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "TensorUtils.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROCOMPUTEPRECISIONPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// Whether a matmul or batch_matmul casts its operands signed (the default).
bool hasDefaultCast(linalg::LinalgOp op) {
  linalg::TypeFn typeFn = isa<linalg::MatmulOp>(op)
                              ? cast<linalg::MatmulOp>(op).getCast()
                              : cast<linalg::BatchMatmulOp>(op).getCast();
  return typeFn == linalg::TypeFn::cast_signed;
}

/// The value `tensor` extends (a `linalg.map` of one `arith.extf`, as
/// zero-mixed-precision reads a 16-bit parameter), when it is of `type`.
Value getExtendedSource(Value tensor, Type type) {
  auto map = tensor.getDefiningOp<linalg::MapOp>();
  if (!map || map.getInputs().size() != 1)
    return {};
  Block &body = map.getMapper().front();
  if (body.getOperations().size() != 2)
    return {};
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  if (!ext || ext.getIn() != body.getArgument(0))
    return {};
  auto yield = cast<linalg::YieldOp>(body.back());
  if (yield.getNumOperands() != 1 || yield.getOperand(0) != ext.getResult())
    return {};
  Value source = map.getInputs()[0];
  if (cast<ShapedType>(source.getType()).getElementType() != type)
    return {};
  return source;
}

struct ZeroComputePrecisionPass
    : public zero::impl::ZeroComputePrecisionPassBase<
          ZeroComputePrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step))
      return signalPassFailure();
    Type compute = getComputeElementType(&getContext(), computeType, precision,
                                         hasScaledBackward(*step));
    if (!compute && computeType != ComputeType::TF32)
      return;
    truncated.clear();
    SmallVector<linalg::LinalgOp> gemms;
    step->walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        return;
      // Only the signed-cast products, which the rebuilt op is again (with
      // the same maps: an operand read transposed stays so).
      if (!hasDefaultCast(op))
        return;
      auto isF32 = [](Value v) {
        return cast<ShapedType>(v.getType()).getElementType().isF32();
      };
      if (llvm::all_of(op->getOperands(), isF32))
        gemms.push_back(op);
    });
    for (linalg::LinalgOp gemm : gemms) {
      if (computeType == ComputeType::TF32)
        gemm->setAttr(ZeroDialect::getRoundOperandsAttrName(),
                      TypeAttr::get(FloatTF32Type::get(&getContext())));
      else
        narrowOperands(gemm, compute);
    }
  }

  /// `operand` of `gemm` in `type`: the value an extension widened, or a
  /// transpose narrowed before it moves the bytes, or a truncation.
  Value narrow(OpBuilder &b, Value operand, Operation *gemm, Type type) {
    if (Value source = getExtendedSource(operand, type))
      return source;
    // A transpose read only here moves 16-bit elements instead.
    if (auto transpose = operand.getDefiningOp<linalg::TransposeOp>();
        transpose && operand.hasOneUse()) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(transpose);
      Value input = narrow(b, transpose.getInput(), transpose, type);
      auto init = transpose.getInit().getType().clone(type);
      Value empty = tensor::EmptyOp::create(b, transpose.getLoc(),
                                            init.getShape(), type);
      auto narrowed = linalg::TransposeOp::create(
          b, transpose.getLoc(), input, empty, transpose.getPermutation());
      narrowed->setDiscardableAttrs(
          transpose->getDiscardableAttrDictionary());
      return narrowed->getResult(0);
    }
    // One truncation per value, right after it is made, for all its GEMMs.
    Value &narrowed = truncated[operand];
    if (!narrowed) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(operand);
      narrowed = buildFloatCast(b, operand.getLoc(), operand, type);
    }
    return narrowed;
  }

  /// The truncations made so far, by the value they truncate.
  DenseMap<Value, Value> truncated;

  void narrowOperands(linalg::LinalgOp gemm, Type type) {
    OpBuilder b(gemm);
    Value lhs = narrow(b, gemm.getDpsInputs()[0], gemm, type);
    Value rhs = narrow(b, gemm.getDpsInputs()[1], gemm, type);
    Value init = gemm.getDpsInits()[0];
    b.setInsertionPoint(gemm);
    // Rebuilt: a named op's body extends its operands' element types. The
    // indexing maps stay (an operand read transposed: zero-fold-transposes).
    SmallVector<NamedAttribute> attrs;
    if (Attribute maps = gemm->getAttr("indexing_maps"))
      attrs.push_back(b.getNamedAttr("indexing_maps", maps));
    Operation *narrowed =
        isa<linalg::MatmulOp>(gemm)
            ? linalg::MatmulOp::create(b, gemm.getLoc(),
                                       TypeRange{init.getType()},
                                       ValueRange{lhs, rhs}, ValueRange{init},
                                       attrs)
                  .getOperation()
            : linalg::BatchMatmulOp::create(b, gemm.getLoc(),
                                            TypeRange{init.getType()},
                                            ValueRange{lhs, rhs},
                                            ValueRange{init}, attrs)
                  .getOperation();
    narrowed->setDiscardableAttrs(gemm->getDiscardableAttrDictionary());
    // 16-bit operands are not rounded to tf32 (the dialect refuses it).
    narrowed->removeAttr(ZeroDialect::getRoundOperandsAttrName());
    llvm::SetVector<Operation *> unused;
    for (Value input : gemm.getDpsInputs())
      if (Operation *def = input.getDefiningOp())
        unused.insert(def);
    gemm->replaceAllUsesWith(narrowed);
    gemm->erase();
    eraseUnused(unused);
  }

  /// Erases the wide extensions and transposes (and their empty inits) that
  /// nothing reads any more, and what only they read.
  static void eraseUnused(llvm::SetVector<Operation *> &worklist) {
    llvm::SmallPtrSet<Operation *, 8> erased;
    for (size_t i = 0; i < worklist.size(); ++i) {
      Operation *op = worklist[i];
      if (erased.contains(op) || !op->use_empty() ||
          !isa<linalg::MapOp, linalg::TransposeOp, tensor::EmptyOp>(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          worklist.insert(def);
      erased.insert(op);
      op->erase();
    }
  }
};

} // namespace
