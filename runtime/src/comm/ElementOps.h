//===- ElementOps.h - element arithmetic for collectives --------*- C++ -*-===//
//
// The element-wise reductions that MPI has no built-in for (bf16, f16), plus
// the avg division. 16-bit results are rounded once, to nearest even, from
// the exact double (FloatFormats.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_COMM_ELEMENTOPS_H
#define ZERO_RUNTIME_COMM_ELEMENTOPS_H

#include "zero/runtime/Program.h"
#include "zero/runtime/Schedule.h"

#include <cstdint>

namespace zero::runtime::comm {

/// inout[i] = op(in[i], inout[i]) for `count` elements of 16-bit type
/// `type` (bf16 or f16), each result rounded to the type; avg combines as
/// sum.
void reduce16(const uint16_t *in, uint16_t *inout, int64_t count, DType type,
              ReduceOp op);

/// data[i] /= divisor, in the element type (integers truncate).
void divideElements(void *data, int64_t count, DType type, int64_t divisor);

} // namespace zero::runtime::comm

#endif // ZERO_RUNTIME_COMM_ELEMENTOPS_H
