//===- ScalarMath.h - what a scalar op computes -----------------*- C++ -*-===//
//
// The one definition of the scalar arith and math ops' values on registers
// (docs/ScheduleFormat.md, "Scalar ops"), for every backend that evaluates
// them in register form: the host's columns (host/ScalarOps.cpp) and the
// CUDA device's one-thread kernel (cuda/ScalarKernels.cuh). Floats are
// computed in double and rounded to the result type after every op;
// integers in 64 bits, wrapped to the result's width; the edge cases
// (division by zero, shifts past the width, saturating fptosi, maximumf
// with NaN and signed zeros) are ElementMath.h's.
//
// Each op is a template on its kind, so that a backend that applies one op
// to many registers picks it once (visitScalarOpKind) and gets a loop with
// no dispatch inside; applyScalarOp picks it per call. Registers are taken
// by reference: a loop then reads the one field it needs, which GCC
// vectorizes, where a copy of the union would stop it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_SCALARMATH_H
#define ZERO_RUNTIME_OPS_SCALARMATH_H

#include "ops/Elements.h"

#if !defined(__CUDACC_RTC__)
#include <cmath>
#endif

namespace zero::runtime::ops {

/// What an op's register holds: a float rounded to the result type, an
/// integer wrapped to its width, an i1 from a comparison, or something the
/// op sets itself (a constant, a select, a bitcast's bits).
enum class ScalarResult { Float, Int, Bool, Own };

/// Every scalar op: its kind, its result and its number of operands.
#define ZERO_SCALAR_OP_KINDS(X)                                                \
  X(Constant, Own, 0)                                                          \
  /* Floats. */                                                                \
  X(AddF, Float, 2)                                                            \
  X(SubF, Float, 2)                                                            \
  X(MulF, Float, 2)                                                            \
  X(DivF, Float, 2)                                                            \
  X(NegF, Float, 1)                                                            \
  X(MaximumF, Float, 2)                                                        \
  X(MinimumF, Float, 2)                                                        \
  X(RemF, Float, 2)                                                            \
  X(CmpF, Bool, 2)                                                             \
  /* Integers. */                                                              \
  X(AddI, Int, 2)                                                              \
  X(SubI, Int, 2)                                                              \
  X(MulI, Int, 2)                                                              \
  X(DivSI, Int, 2)                                                             \
  X(DivUI, Int, 2)                                                             \
  X(RemSI, Int, 2)                                                             \
  X(RemUI, Int, 2)                                                             \
  X(MaxSI, Int, 2)                                                             \
  X(MinSI, Int, 2)                                                             \
  X(AndI, Int, 2)                                                              \
  X(OrI, Int, 2)                                                               \
  X(XOrI, Int, 2)                                                              \
  X(ShLI, Int, 2)                                                              \
  X(ShRSI, Int, 2)                                                             \
  X(ShRUI, Int, 2)                                                             \
  X(CmpI, Bool, 2)                                                             \
  X(Select, Own, 3)                                                            \
  /* Casts. */                                                                 \
  X(ExtF, Float, 1)                                                            \
  X(TruncF, Float, 1)                                                          \
  X(SIToFP, Float, 1)                                                          \
  X(UIToFP, Float, 1)                                                          \
  X(FPToSI, Int, 1)                                                            \
  X(FPToUI, Int, 1)                                                            \
  X(IndexCast, Int, 1)                                                         \
  X(ExtSI, Int, 1)                                                             \
  X(ExtUI, Int, 1)                                                             \
  X(TruncI, Int, 1)                                                            \
  X(Bitcast, Own, 1)                                                           \
  /* math. */                                                                  \
  X(Exp, Float, 1)                                                             \
  X(Exp2, Float, 1)                                                            \
  X(Log, Float, 1)                                                             \
  X(Log2, Float, 1)                                                            \
  X(Log1p, Float, 1)                                                           \
  X(Sqrt, Float, 1)                                                            \
  X(Rsqrt, Float, 1)                                                           \
  X(Tanh, Float, 1)                                                            \
  X(AbsF, Float, 1)                                                            \
  X(Erf, Float, 1)                                                             \
  X(PowF, Float, 2)                                                            \
  X(Sin, Float, 1)                                                             \
  X(Cos, Float, 1)                                                             \
  X(Floor, Float, 1)                                                           \
  X(Ceil, Float, 1)

enum class ScalarOpKind {
#define ZERO_SCALAR_OP_ENUMERATOR(Kind, Result, Arity) Kind,
  ZERO_SCALAR_OP_KINDS(ZERO_SCALAR_OP_ENUMERATOR)
#undef ZERO_SCALAR_OP_ENUMERATOR
};

ZERO_HD constexpr ScalarResult getScalarResult(ScalarOpKind kind) {
  switch (kind) {
#define ZERO_SCALAR_OP_RESULT(Kind, Result, Arity)                             \
  case ScalarOpKind::Kind:                                                     \
    return ScalarResult::Result;
    ZERO_SCALAR_OP_KINDS(ZERO_SCALAR_OP_RESULT)
#undef ZERO_SCALAR_OP_RESULT
  }
  return ScalarResult::Own;
}

ZERO_HD constexpr int getScalarArity(ScalarOpKind kind) {
  switch (kind) {
#define ZERO_SCALAR_OP_ARITY(Kind, Result, Arity)                              \
  case ScalarOpKind::Kind:                                                     \
    return Arity;
    ZERO_SCALAR_OP_KINDS(ZERO_SCALAR_OP_ARITY)
#undef ZERO_SCALAR_OP_ARITY
  }
  return 0;
}

/// One checked scalar op: result = op(operands...).
struct ScalarOp {
  ScalarOpKind kind = ScalarOpKind::Constant;
  DType resultType = DType::F32;
  DType operandType = DType::F32; // of the first operand
  Predicate predicate = Predicate::AlwaysFalse;
  Scalar constant{}; // arith.constant, canonical
};

/// The kind K as a type, for code that picks an op once.
template <ScalarOpKind K> struct ScalarOpKindConstant {
  static constexpr ScalarOpKind value = K;
};

/// Calls fn(ScalarOpKindConstant<kind>{}) and returns what it returns.
template <typename Fn>
ZERO_HD_INLINE auto visitScalarOpKind(ScalarOpKind kind, Fn &&fn) {
  switch (kind) {
#define ZERO_SCALAR_OP_VISIT(Kind, Result, Arity)                              \
  case ScalarOpKind::Kind:                                                     \
    return fn(ScalarOpKindConstant<ScalarOpKind::Kind>{});
    ZERO_SCALAR_OP_KINDS(ZERO_SCALAR_OP_VISIT)
#undef ZERO_SCALAR_OP_VISIT
  }
  return fn(ScalarOpKindConstant<ScalarOpKind::Constant>{});
}

#if !defined(__CUDA_ARCH__)
using std::ceil;
using std::cos;
using std::erf;
using std::exp2;
using std::floor;
using std::fmod;
using std::log;
using std::log1p;
using std::log2;
using std::pow;
using std::sin;
using std::sqrt;
using std::tanh;
#endif

/// The value of float op K (ScalarResult::Float) before it is rounded to
/// the result type.
template <ScalarOpKind K>
ZERO_HD_INLINE double getFloatValue(const ScalarOp &op, const Scalar &a,
                                    const Scalar &b) {
  const double x = a.f, y = b.f;
  switch (K) {
  case ScalarOpKind::AddF:
    return x + y;
  case ScalarOpKind::SubF:
    return x - y;
  case ScalarOpKind::MulF:
    return x * y;
  case ScalarOpKind::DivF:
    return x / y;
  case ScalarOpKind::NegF:
    return -x;
  case ScalarOpKind::MaximumF:
    return maximumF(x, y);
  case ScalarOpKind::MinimumF:
    return minimumF(x, y);
  case ScalarOpKind::RemF:
    return fmod(x, y);
  case ScalarOpKind::ExtF:
  case ScalarOpKind::TruncF:
    return x;
  case ScalarOpKind::SIToFP:
    return signedToFloat(toSigned(a.i, bitWidthOf(op.operandType)),
                         op.resultType);
  case ScalarOpKind::UIToFP:
    return unsignedToFloat(toUnsigned(a.i, bitWidthOf(op.operandType)),
                           op.resultType);
  case ScalarOpKind::Exp:
    return exp(x);
  case ScalarOpKind::Exp2:
    return exp2(x);
  case ScalarOpKind::Log:
    return log(x);
  case ScalarOpKind::Log2:
    return log2(x);
  case ScalarOpKind::Log1p:
    return log1p(x);
  case ScalarOpKind::Sqrt:
    return sqrt(x);
  case ScalarOpKind::Rsqrt: // two correctly rounded ops
    return 1.0 / sqrt(x);
  case ScalarOpKind::Tanh:
    return op.resultType == DType::F64 ? tanh(x) : tanhForNarrowResult(x);
  case ScalarOpKind::AbsF:
    return fabs(x);
  case ScalarOpKind::Erf:
    return erf(x);
  case ScalarOpKind::PowF:
    return pow(x, y);
  case ScalarOpKind::Sin:
    return sin(x);
  case ScalarOpKind::Cos:
    return cos(x);
  case ScalarOpKind::Floor:
    return floor(x);
  case ScalarOpKind::Ceil:
    return ceil(x);
  default:
    return 0;
  }
}

/// The value of integer op K (ScalarResult::Int) before it is wrapped to
/// the result's width.
template <ScalarOpKind K>
ZERO_HD_INLINE unsigned long long
getIntValue(const ScalarOp &op, const Scalar &a, const Scalar &b) {
  using u64 = unsigned long long;
  const int width = bitWidthOf(op.operandType);
  switch (K) {
  case ScalarOpKind::AddI:
    return static_cast<u64>(a.i) + static_cast<u64>(b.i);
  case ScalarOpKind::SubI:
    return static_cast<u64>(a.i) - static_cast<u64>(b.i);
  case ScalarOpKind::MulI:
    return static_cast<u64>(a.i) * static_cast<u64>(b.i);
  case ScalarOpKind::DivSI:
    return divSI(a.i, b.i, width);
  case ScalarOpKind::DivUI:
    return divUI(a.i, b.i, width);
  case ScalarOpKind::RemSI:
    return remSI(a.i, b.i, width);
  case ScalarOpKind::RemUI:
    return remUI(a.i, b.i, width);
  case ScalarOpKind::MaxSI:
    return maxSI(a.i, b.i, width);
  case ScalarOpKind::MinSI:
    return minSI(a.i, b.i, width);
  case ScalarOpKind::AndI:
    return static_cast<u64>(a.i & b.i);
  case ScalarOpKind::OrI:
    return static_cast<u64>(a.i | b.i);
  case ScalarOpKind::XOrI:
    return static_cast<u64>(a.i ^ b.i);
  case ScalarOpKind::ShLI:
    return shLI(a.i, b.i, width);
  case ScalarOpKind::ShRSI:
    return shRSI(a.i, b.i, width);
  case ScalarOpKind::ShRUI:
    return shRUI(a.i, b.i, width);
  case ScalarOpKind::FPToSI:
    return static_cast<u64>(floatToSigned(a.f, bitWidthOf(op.resultType)));
  case ScalarOpKind::FPToUI:
    return floatToUnsigned(a.f, bitWidthOf(op.resultType));
  case ScalarOpKind::IndexCast:
  case ScalarOpKind::ExtSI:
    return static_cast<u64>(toSigned(a.i, width));
  case ScalarOpKind::ExtUI:
    return toUnsigned(a.i, width);
  case ScalarOpKind::TruncI:
    return static_cast<u64>(a.i);
  default:
    return 0;
  }
}

/// The value of comparison K (ScalarResult::Bool).
template <ScalarOpKind K>
ZERO_HD_INLINE bool getBoolValue(const ScalarOp &op, const Scalar &a,
                                 const Scalar &b) {
  if (K == ScalarOpKind::CmpF)
    return compareFloats(op.predicate, a.f, b.f);
  return compareInts(op.predicate, a.i, b.i, bitWidthOf(op.operandType));
}

/// The register of op K (of `op`, whose kind is K) on registers a, b, c
/// (those past its operands are ignored).
template <ScalarOpKind K>
ZERO_HD_INLINE Scalar getScalarValue(const ScalarOp &op, const Scalar &a,
                                     const Scalar &b, const Scalar &c) {
  const DType rt = op.resultType, ot = op.operandType;
  Scalar out;
  out.i = 0;
  switch (getScalarResult(K)) {
  case ScalarResult::Float:
    out.f = roundFloat(getFloatValue<K>(op, a, b), rt);
    return out;
  case ScalarResult::Int:
    out.i = wrapInt(static_cast<long long>(getIntValue<K>(op, a, b)), rt);
    return out;
  case ScalarResult::Bool:
    out.i = getBoolValue<K>(op, a, b) ? 1 : 0;
    return out;
  case ScalarResult::Own:
    break;
  }
  switch (K) {
  case ScalarOpKind::Constant:
    return op.constant;
  case ScalarOpKind::Select:
    return a.i ? b : c;
  default: // Bitcast
    if (ot == rt)
      return a;
    if (ot == DType::F32)
      out.i = static_cast<int>(bitsOfFloat(static_cast<float>(a.f)));
    else if (rt == DType::F32)
      out.f = floatOfBits(static_cast<unsigned>(a.i));
    else // f64 <-> i64/index: the register bits are the value's bits
      out = a;
    return out;
  }
}

/// The register of `op` on registers a, b, c.
ZERO_HD_INLINE Scalar applyScalarOp(const ScalarOp &op, const Scalar &a,
                                    const Scalar &b, const Scalar &c) {
  return visitScalarOpKind(op.kind, [&](auto kind) {
    return getScalarValue<decltype(kind)::value>(op, a, b, c);
  });
}

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_SCALARMATH_H
