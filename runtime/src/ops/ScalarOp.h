//===- ScalarOp.h - the scalar arith and math ops, checked ------*- C++ -*-===//
//
// The scalar ops of a schedule (docs/ScheduleFormat.md, "Scalar ops"), at
// top level and in bodies: the one check of an op's operands, result and
// fields, and the checked op's description (what it computes, on which
// types), which each backend evaluates its own way (the host's columns of
// registers, host/ScalarOps.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_SCALAROP_H
#define ZERO_RUNTIME_OPS_SCALAROP_H

#include "ops/OpContext.h"
#include "ops/Predicates.h"

#include <string>
#include <vector>

namespace zero::runtime::ops {

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

/// One checked scalar op: result = op(operands...).
struct ScalarOp {
  ScalarOpKind kind = ScalarOpKind::Constant;
  DType resultType = DType::F32;
  DType operandType = DType::F32; // of the first operand
  Predicate predicate = Predicate::AlwaysFalse;
  Scalar constant{}; // arith.constant, canonical
};

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

/// The bytes of a checked tensor constant with `numel` elements of `dtype`
/// (a splat's one element repeated, or the data's elements in order).
std::vector<char> encodeConstantTensor(const ConstantValue &value, DType dtype,
                                       int64_t numel);

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_SCALAROP_H
