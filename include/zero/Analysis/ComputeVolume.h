//===- ComputeVolume.h - the arithmetic a rank step does --------*- C++ -*-===//
//
// The GEMM arithmetic of a rank step by compute type, and the transposes
// that only rearrange a GEMM's operand: the report's `compute` section
// (docs/Passes.md, "The report"), which says before anything runs how much
// of the step tensor cores could take and how many bytes are moved only to
// change a layout.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_COMPUTEVOLUME_H
#define ZERO_ANALYSIS_COMPUTEVOLUME_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>

namespace mlir {
namespace zero {

struct ComputeVolume {
  /// 2 * M * N * K of every linalg.matmul and linalg.batch_matmul (times
  /// the batch), per step (a micro-step loop's body once per iteration), by
  /// compute type: the operands' element type (f32 on the GPU is
  /// CUBLAS_COMPUTE_32F_PEDANTIC); tf32: f32 operands rounded to tf32
  /// (`zero.round_operands`, compute-type=tf32), on tensor cores.
  int64_t gemmFlopsF32 = 0;
  int64_t gemmFlopsTf32 = 0;
  int64_t gemmFlopsBf16 = 0;
  int64_t gemmFlopsF16 = 0;
  int64_t gemmFlopsF64 = 0;
  int64_t gemms = 0;
  /// linalg.transpose ops whose result a GEMM reads as its A or B operand,
  /// per step like the FLOPs.
  int64_t transposesFeedingGemm = 0;
};

/// Fails (with an error on `func`) if a GEMM has a dynamic shape or a count
/// overflows int64.
FailureOr<ComputeVolume> computeComputeVolume(func::FuncOp func);

} // namespace zero
} // namespace mlir

#endif // ZERO_ANALYSIS_COMPUTEVOLUME_H
