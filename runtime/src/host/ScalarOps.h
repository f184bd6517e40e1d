//===- ScalarOps.h - the scalar arith and math ops --------------*- C++ -*-===//
//
// The scalar ops of a schedule (docs/ScheduleFormat.md, "Scalar ops"), on
// registers in canonical form (Elements.h). One op is applied to columns of
// registers at once, so that a body is interpreted a block of iteration points
// at a time and the dispatch on the op costs once per block, not per element.
// Floats are computed in double and rounded to the result type after every
// op; integers wrap to their width.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_SCALAROPS_H
#define ZERO_RUNTIME_HOST_SCALAROPS_H

#include "HostOps.h"

#include "ops/ElementMath.h"

#include <memory>
#include <string_view>
#include <vector>

namespace zero::runtime::host {

enum class ScalarOpKind {
  Constant,
  // Floats.
  AddF,
  SubF,
  MulF,
  DivF,
  NegF,
  MaximumF,
  MinimumF,
  RemF,
  CmpF,
  // Integers.
  AddI,
  SubI,
  MulI,
  DivSI,
  DivUI,
  RemSI,
  RemUI,
  MaxSI,
  MinSI,
  AndI,
  OrI,
  XOrI,
  ShLI,
  ShRSI,
  ShRUI,
  CmpI,
  Select,
  // Casts.
  ExtF,
  TruncF,
  SIToFP,
  UIToFP,
  FPToSI,
  FPToUI,
  IndexCast,
  ExtSI,
  ExtUI,
  TruncI,
  Bitcast,
  // math.
  Exp,
  Exp2,
  Log,
  Log2,
  Log1p,
  Sqrt,
  Rsqrt,
  Tanh,
  AbsF,
  Erf,
  PowF,
  Sin,
  Cos,
  Floor,
  Ceil,
};

using ops::Predicate;

/// One checked scalar op: out[k] = op(in[0][k], in[1][k], ...).
struct ScalarOp {
  ScalarOpKind kind = ScalarOpKind::Constant;
  DType resultType = DType::F32;
  DType operandType = DType::F32; // of the first operand
  Predicate predicate = Predicate::AlwaysFalse;
  Scalar constant{}; // arith.constant, canonical

  /// Applies the op to `count` points; `in` holds three column pointers, one
  /// per operand (null past the op's operands).
  void apply(const Scalar *const *in, Scalar *out, int64_t count) const;
};

/// True if `name` is a scalar op of the schedule ("arith.addf").
bool isScalarOp(OpCode code);

/// Checks a scalar op (a scalar op of OpSet.def): operand and result
/// counts, kinds (scalars) and dtypes, and its fields ("predicate", "value").
StatusOr<ScalarOp>
prepareScalarOp(const OpContext &ctx,
                const std::vector<const ValueInfo *> &operands,
                const std::vector<const ValueInfo *> &results);

/// A constant of `type` as a register: floats rounded to the type, integers
/// wrapped to its width. False for a float where an integer is expected;
/// `error` says why.
bool parseConstant(const Number &number, DType type, Scalar &value,
                   std::string &error);

/// A compute instruction that is a scalar op on registers.
StatusOr<std::unique_ptr<ComputeOp>>
prepareScalarInstruction(const OpContext &ctx);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_SCALAROPS_H
