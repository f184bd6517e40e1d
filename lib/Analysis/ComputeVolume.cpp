//===- ComputeVolume.cpp - the arithmetic a rank step does ----------------===//

#include "zero/Analysis/ComputeVolume.h"

#include "zero/Analysis/CommunicationVolume.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::zero;

FailureOr<ComputeVolume> zero::computeComputeVolume(func::FuncOp func) {
  ComputeVolume volume;
  std::optional<int64_t> f32 = 0, tf32 = 0, bf16 = 0, f16 = 0, f64 = 0;
  bool dynamic = false;
  func.walk([&](Operation *op) {
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
      for (Value result : transpose->getResults())
        if (llvm::any_of(result.getUses(), [](OpOperand &use) {
              return isa<linalg::MatmulOp, linalg::BatchMatmulOp>(
                         use.getOwner()) &&
                     use.getOperandNumber() < 2;
            })) {
          volume.transposesFeedingGemm += getStepTripCount(op);
          break;
        }
      return;
    }
    if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
      return;
    auto linalgOp = cast<linalg::LinalgOp>(op);
    auto a = cast<ShapedType>(linalgOp.getDpsInputs()[0].getType());
    auto c = cast<ShapedType>(linalgOp.getDpsInits()[0].getType());
    if (!a.hasStaticShape() || !c.hasStaticShape()) {
      dynamic = true; // the schedule takes static shapes only
      return;
    }
    // C holds batch * M * N elements; K is the last loop (A may be read
    // transposed: zero-fold-transposes).
    std::optional<int64_t> flops = llvm::checkedMul(
        c.getNumElements(), linalgOp.getStaticLoopRanges().back());
    Type element = a.getElementType();
    if (!isa<FloatType>(element))
      return; // integer products are not float arithmetic
    // f32 operands rounded to tf32 (zero-compute-precision) count as tf32.
    const bool tf32Operands =
        op->hasAttr(ZeroDialect::getRoundOperandsAttrName());
    std::optional<int64_t> &sum = element.isBF16()  ? bf16
                                  : element.isF16() ? f16
                                  : element.isF64() ? f64
                                  : tf32Operands    ? tf32
                                                    : f32;
    if (!flops)
      sum = std::nullopt;
    else
      addCheckedProduct(sum, *flops, 2 * getStepTripCount(op));
    volume.gemms += getStepTripCount(op);
  });
  if (dynamic)
    return func.emitError("a GEMM of the step has a dynamic shape: the report "
                          "counts static ones only");
  if (!f32 || !tf32 || !bf16 || !f16 || !f64)
    return func.emitError("the step's GEMM FLOPs do not fit int64");
  volume.gemmFlopsF32 = *f32;
  volume.gemmFlopsTf32 = *tf32;
  volume.gemmFlopsBf16 = *bf16;
  volume.gemmFlopsF16 = *f16;
  volume.gemmFlopsF64 = *f64;
  return volume;
}
