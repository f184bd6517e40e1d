//===- FoldTransposes.cpp - zero-fold-transposes --------------------------===//
//
// A GEMM operand made by a transpose of its last two dimensions is the
// transpose's input read with the GEMM's two loops swapped: upstream
// linalg.matmul and linalg.batch_matmul carry that as their indexing maps
// (A: (m, k) -> (k, m); B: (k, n) -> (n, k); batch_matmul the same after
// the batch loop), the schedule as the instruction's `indexing_maps`, and
// BLAS as its transpose flags. Folding saves the transpose's launch, its
// write and the GEMM's read of the copy, and the copy's memory.
//
// Runs before activation checkpointing (a recomputed segment then
// recomputes no transpose, and keeps what its GEMMs read) and before
// zero-shard-parameters (which then releases a gathered parameter after the
// GEMM that reads it); a transpose that something else reads stays for that
// reader.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROFOLDTRANSPOSESPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The input of `value`'s transpose when it swaps the last two of `rank`
/// dimensions and keeps the others.
Value getSwappedSource(Value value, int64_t rank) {
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (!transpose)
    return {};
  SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(swap[rank - 2], swap[rank - 1]);
  if (transpose.getPermutation() != ArrayRef<int64_t>(swap))
    return {};
  return transpose.getInput();
}

/// `map` with its last two results swapped.
AffineMap swapLastResults(AffineMap map) {
  SmallVector<AffineExpr> results = llvm::to_vector(map.getResults());
  std::swap(results[results.size() - 2], results.back());
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

/// Folds the transposes that make `gemm`'s A and B; true if it changed.
template <typename GemmOp>
bool foldOperandTransposes(GemmOp gemm, int64_t rank) {
  auto linalgOp = cast<linalg::LinalgOp>(gemm.getOperation());
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  // Only the default maps: a GEMM already reading a transposed or
  // broadcast operand is left as it is.
  if (maps != GemmOp::getDefaultIndexingMaps(gemm.getContext()))
    return false;
  bool changed = false;
  for (unsigned operand : {0u, 1u}) {
    Value source = getSwappedSource(gemm->getOperand(operand), rank);
    if (!source)
      continue;
    gemm->setOperand(operand, source);
    maps[operand] = swapLastResults(maps[operand]);
    changed = true;
  }
  if (changed) {
    SmallVector<Attribute> attrs = llvm::map_to_vector(
        maps, [](AffineMap map) -> Attribute { return AffineMapAttr::get(map); });
    gemm.setIndexingMapsAttr(ArrayAttr::get(gemm.getContext(), attrs));
  }
  return changed;
}

struct ZeroFoldTransposesPass
    : public zero::impl::ZeroFoldTransposesPassBase<ZeroFoldTransposesPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step))
      return signalPassFailure();
    llvm::SetVector<Operation *> folded;
    step->walk([&](Operation *op) {
      SmallVector<Value, 2> inputs(op->getOperands().take_front(2));
      bool changed = false;
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
        changed = foldOperandTransposes(matmul, 2);
      else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op))
        changed = foldOperandTransposes(batch, 3);
      if (!changed)
        return;
      for (Value input : inputs)
        if (auto transpose = input.getDefiningOp<linalg::TransposeOp>())
          folded.insert(transpose);
    });
    // A transpose may have fed several GEMMs, or something else too.
    for (Operation *transpose : folded) {
      if (!transpose->use_empty())
        continue;
      Operation *init =
          cast<linalg::TransposeOp>(transpose).getInit().getDefiningOp();
      transpose->erase();
      if (init && isa<tensor::EmptyOp>(init) && init->use_empty())
        init->erase();
    }
  }
};

} // namespace
