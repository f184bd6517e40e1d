//===- ScalarOp.h - the scalar arith and math ops, checked ------*- C++ -*-===//
//
// The scalar ops of a schedule (docs/ScheduleFormat.md, "Scalar ops"), at
// top level and in bodies: the one check of an op's operands, result and
// fields, and the checked op's description (what it computes, on which
// types), whose value ScalarMath.h defines for every backend.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_SCALAROP_H
#define ZERO_RUNTIME_OPS_SCALAROP_H

#include "ops/OpContext.h"
#include "ops/Predicates.h"
#include "ops/ScalarMath.h"

#include <string>
#include <vector>

namespace zero::runtime::ops {

/// True if `code` is a scalar op of the schedule ("arith.addf").
bool isScalarOp(OpCode code);

/// Checks a scalar op (a scalar op of OpSet.def): operand and result
/// counts, kinds (scalars) and dtypes, and its fields ("predicate", "value").
StatusOr<ScalarOp> checkScalarOp(const OpContext &ctx,
                                 const std::vector<const ValueInfo *> &operands,
                                 const std::vector<const ValueInfo *> &results);

/// A constant of `type` as a register: floats rounded to the type, integers
/// wrapped to its width. False for a float where an integer is expected;
/// `error` says why.
bool parseConstant(const Number &number, DType type, Scalar &value,
                   std::string &error);

/// The register of a constant parseConstant accepts (checked): floats
/// rounded to `type`, integers wrapped to its width.
Scalar getConstantRegister(const Number &number, DType type);

/// The bytes of a tensor constant with `numel` elements of `dtype`, from
/// its checked registers (CheckedOp::constantElements: a splat's one
/// repeated, or the data's in order).
std::vector<char> encodeConstantTensor(const std::vector<Scalar> &elements,
                                       DType dtype, int64_t numel);

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_SCALAROP_H
