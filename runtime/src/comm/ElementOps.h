//===- ElementOps.h - element arithmetic for collectives --------*- C++ -*-===//
//
// The 16-bit floating-point formats and the element-wise reductions that MPI
// has no built-in for (bf16, f16), plus the avg division. Values are rounded
// to nearest even; a double is first rounded to float "to odd" so that the
// final rounding to 16 bits is exact (no double rounding).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_COMM_ELEMENTOPS_H
#define ZERO_RUNTIME_COMM_ELEMENTOPS_H

#include "zero/runtime/Program.h"
#include "zero/runtime/Schedule.h"

#include <cstdint>

namespace zero::runtime::comm {

float bf16ToFloat(uint16_t bits);
float f16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);
uint16_t floatToF16(float value);
/// Rounds `value` once, to nearest even, into bf16 or f16.
uint16_t doubleToBf16(double value);
uint16_t doubleToF16(double value);

/// inout[i] = op(in[i], inout[i]) for `count` elements of 16-bit type
/// `type` (bf16 or f16), each result rounded to the type; avg combines as
/// sum.
void reduce16(const uint16_t *in, uint16_t *inout, int64_t count, DType type,
              ReduceOp op);

/// data[i] /= divisor, in the element type (integers truncate).
void divideElements(void *data, int64_t count, DType type, int64_t divisor);

} // namespace zero::runtime::comm

#endif // ZERO_RUNTIME_COMM_ELEMENTOPS_H
