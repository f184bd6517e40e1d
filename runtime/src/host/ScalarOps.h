//===- ScalarOps.h - the scalar arith and math ops --------------*- C++ -*-===//
//
// The host's evaluation of the scalar ops (checked by ops/ScalarOp.h), on
// registers in canonical form (Elements.h). One op is applied to columns of
// registers at once, so that a body is interpreted a block of iteration points
// at a time and the dispatch on the op costs once per block, not per element.
// What each op computes is ops/ScalarMath.h's, which the CUDA device's
// scalar kernel shares: floats in double rounded to the result type after
// every op, integers wrapped to their width.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_SCALAROPS_H
#define ZERO_RUNTIME_HOST_SCALAROPS_H

#include "HostOps.h"

#include "ops/ElementMath.h"
#include "ops/ScalarOp.h"

#include <memory>
#include <string_view>
#include <vector>

namespace zero::runtime::host {

using ops::Predicate;

using ops::ScalarOp;
using ops::ScalarOpKind;

/// Applies `op` to `count` points: out[k] = op(in[0][k], in[1][k], ...);
/// `in` holds three column pointers, one per operand (null past the op's
/// operands).
void applyScalarOp(const ScalarOp &op, const Scalar *const *in, Scalar *out,
                   int64_t count);

/// A compute instruction that is scalar op `op` on registers.
std::unique_ptr<ComputeOp> buildScalarInstruction(const OpContext &ctx,
                                                  const ScalarOp &op);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_SCALAROPS_H
