//===- Gemm.h - linalg.matmul and batch_matmul as GEMMs ---------*- C++ -*-===//
//
// The one reading of a matmul instruction's layout, which the host's check
// and kernel, the CUDA backend and the cost model share: per batch,
// C[m][n] += sum_k A[m][k] B[k][n], where A may be stored transposed ([k,
// m]) and B too ([n, k]), as the instruction's optional `indexing_maps`
// say (docs/ScheduleFormat.md): a transpose the compiler folded into the
// GEMM (zero-fold-transposes) is read in place, by BLAS's transpose flags.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_GEMM_H
#define ZERO_RUNTIME_GEMM_H

#include "zero/runtime/GemmLayout.h"
#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Status.h"

#include <cstdint>

namespace zero::runtime {

/// The layout the instruction's indexing maps give: none (the default
/// maps), or the default with A's or B's last two loops swapped. Anything
/// else is an error that quotes the maps (the caller adds where).
StatusOr<GemmLayout> getGemmLayout(const OpRecord &inst);

/// Whether the GEMM rounds its f32 operands to tf32 before it multiplies
/// them (`round_operands: "tf32"`; absent: no rounding). Another value is an
/// error (the caller adds where).
StatusOr<bool> roundsOperandsToTf32(const OpRecord &inst);

/// The sizes of a checked matmul or batch_matmul (ops::checkComputeOp
/// has verified its shapes against its layout).
struct GemmShape {
  GemmLayout layout;
  int64_t batch = 1, m = 0, n = 0, k = 0;
};
GemmShape getGemmShape(const OpRecord &inst, const ValueTable &values);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_GEMM_H
