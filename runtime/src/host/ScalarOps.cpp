//===- ScalarOps.cpp - the scalar arith and math ops ----------------------===//

#include "ScalarOps.h"

#include "Elements.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace zero::runtime::host {

namespace {

/// How an op's operand and result types relate; drives its checks.
enum class Signature {
  Constant,   // () -> T
  FloatUnary, // (F) -> F
  FloatBinary,
  IntBinary,  // (I, I) -> I
  CmpF,       // (F, F) -> i1
  CmpI,       // (I, I) -> i1
  Select,     // (i1, T, T) -> T
  ExtF,       // (F) -> wider F
  TruncF,     // (F) -> narrower F
  IntToFloat, // (I) -> F, no index
  FloatToInt, // (F) -> I, no index
  IndexCast,  // (I) -> I, one of them index
  ExtI,       // (I) -> wider I, no index
  TruncI,     // (I) -> narrower I, no index
  Bitcast,    // same width
};

struct ScalarOpInfo {
  OpCode code;
  ScalarOpKind kind;
  Signature signature;
};

constexpr ScalarOpInfo kScalarOps[] = {
    {OpCode::Constant, ScalarOpKind::Constant, Signature::Constant},
    {OpCode::AddF, ScalarOpKind::AddF, Signature::FloatBinary},
    {OpCode::SubF, ScalarOpKind::SubF, Signature::FloatBinary},
    {OpCode::MulF, ScalarOpKind::MulF, Signature::FloatBinary},
    {OpCode::DivF, ScalarOpKind::DivF, Signature::FloatBinary},
    {OpCode::NegF, ScalarOpKind::NegF, Signature::FloatUnary},
    {OpCode::MaximumF, ScalarOpKind::MaximumF, Signature::FloatBinary},
    {OpCode::MinimumF, ScalarOpKind::MinimumF, Signature::FloatBinary},
    {OpCode::RemF, ScalarOpKind::RemF, Signature::FloatBinary},
    {OpCode::CmpF, ScalarOpKind::CmpF, Signature::CmpF},
    {OpCode::AddI, ScalarOpKind::AddI, Signature::IntBinary},
    {OpCode::SubI, ScalarOpKind::SubI, Signature::IntBinary},
    {OpCode::MulI, ScalarOpKind::MulI, Signature::IntBinary},
    {OpCode::DivSI, ScalarOpKind::DivSI, Signature::IntBinary},
    {OpCode::DivUI, ScalarOpKind::DivUI, Signature::IntBinary},
    {OpCode::RemSI, ScalarOpKind::RemSI, Signature::IntBinary},
    {OpCode::RemUI, ScalarOpKind::RemUI, Signature::IntBinary},
    {OpCode::MaxSI, ScalarOpKind::MaxSI, Signature::IntBinary},
    {OpCode::MinSI, ScalarOpKind::MinSI, Signature::IntBinary},
    {OpCode::AndI, ScalarOpKind::AndI, Signature::IntBinary},
    {OpCode::OrI, ScalarOpKind::OrI, Signature::IntBinary},
    {OpCode::XOrI, ScalarOpKind::XOrI, Signature::IntBinary},
    {OpCode::ShLI, ScalarOpKind::ShLI, Signature::IntBinary},
    {OpCode::ShRSI, ScalarOpKind::ShRSI, Signature::IntBinary},
    {OpCode::ShRUI, ScalarOpKind::ShRUI, Signature::IntBinary},
    {OpCode::CmpI, ScalarOpKind::CmpI, Signature::CmpI},
    {OpCode::Select, ScalarOpKind::Select, Signature::Select},
    {OpCode::ExtF, ScalarOpKind::ExtF, Signature::ExtF},
    {OpCode::TruncF, ScalarOpKind::TruncF, Signature::TruncF},
    {OpCode::SIToFP, ScalarOpKind::SIToFP, Signature::IntToFloat},
    {OpCode::UIToFP, ScalarOpKind::UIToFP, Signature::IntToFloat},
    {OpCode::FPToSI, ScalarOpKind::FPToSI, Signature::FloatToInt},
    {OpCode::FPToUI, ScalarOpKind::FPToUI, Signature::FloatToInt},
    {OpCode::IndexCast, ScalarOpKind::IndexCast, Signature::IndexCast},
    {OpCode::ExtSI, ScalarOpKind::ExtSI, Signature::ExtI},
    {OpCode::ExtUI, ScalarOpKind::ExtUI, Signature::ExtI},
    {OpCode::TruncI, ScalarOpKind::TruncI, Signature::TruncI},
    {OpCode::Bitcast, ScalarOpKind::Bitcast, Signature::Bitcast},
    {OpCode::Exp, ScalarOpKind::Exp, Signature::FloatUnary},
    {OpCode::Exp2, ScalarOpKind::Exp2, Signature::FloatUnary},
    {OpCode::Log, ScalarOpKind::Log, Signature::FloatUnary},
    {OpCode::Log2, ScalarOpKind::Log2, Signature::FloatUnary},
    {OpCode::Log1p, ScalarOpKind::Log1p, Signature::FloatUnary},
    {OpCode::Sqrt, ScalarOpKind::Sqrt, Signature::FloatUnary},
    {OpCode::Rsqrt, ScalarOpKind::Rsqrt, Signature::FloatUnary},
    {OpCode::Tanh, ScalarOpKind::Tanh, Signature::FloatUnary},
    {OpCode::AbsF, ScalarOpKind::AbsF, Signature::FloatUnary},
    {OpCode::Erf, ScalarOpKind::Erf, Signature::FloatUnary},
    {OpCode::PowF, ScalarOpKind::PowF, Signature::FloatBinary},
    {OpCode::Sin, ScalarOpKind::Sin, Signature::FloatUnary},
    {OpCode::Cos, ScalarOpKind::Cos, Signature::FloatUnary},
    {OpCode::Floor, ScalarOpKind::Floor, Signature::FloatUnary},
    {OpCode::Ceil, ScalarOpKind::Ceil, Signature::FloatUnary},
};

const ScalarOpInfo *lookup(OpCode code) {
  for (const ScalarOpInfo &info : kScalarOps)
    if (code == info.code)
      return &info;
  return nullptr;
}

struct PredicateName {
  const char *name;
  Predicate predicate;
};
constexpr PredicateName kCmpFPredicates[] = {
    {"oeq", Predicate::OEQ},         {"ogt", Predicate::OGT},
    {"oge", Predicate::OGE},         {"olt", Predicate::OLT},
    {"ole", Predicate::OLE},         {"one", Predicate::ONE},
    {"ord", Predicate::ORD},         {"ueq", Predicate::UEQ},
    {"ugt", Predicate::UGT},         {"uge", Predicate::UGE},
    {"ult", Predicate::ULT},         {"ule", Predicate::ULE},
    {"une", Predicate::UNE},         {"uno", Predicate::UNO},
    {"true", Predicate::AlwaysTrue}, {"false", Predicate::AlwaysFalse},
};
constexpr PredicateName kCmpIPredicates[] = {
    {"eq", Predicate::EQ},    {"ne", Predicate::NE},
    {"slt", Predicate::SLT},  {"sle", Predicate::SLE},
    {"sgt", Predicate::SGT},  {"sge", Predicate::SGE},
    {"ult", Predicate::ULTI}, {"ule", Predicate::ULEI},
    {"ugt", Predicate::UGTI}, {"uge", Predicate::UGEI},
};

int getBitWidth(DType type) {
  switch (type) {
  case DType::I1:
    return 1;
  case DType::BF16:
  case DType::F16:
    return 16;
  case DType::F32:
  case DType::I32:
    return 32;
  default:
    return 64;
  }
}

bool isInteger(DType type) { return !isFloat(type); }

/// The signed value of a canonical integer register (i1 true is -1).
inline int64_t toSigned(int64_t value, DType type) {
  return type == DType::I1 ? -(value & 1) : value;
}

inline uint64_t toUnsigned(int64_t value, DType type) {
  switch (type) {
  case DType::I1:
    return static_cast<uint64_t>(value & 1);
  case DType::I32:
    return static_cast<uint32_t>(value);
  default:
    return static_cast<uint64_t>(value);
  }
}

/// out[k] = fn(k) rounded to the float type `type`.
template <typename Fn>
inline void floatResult(DType type, Scalar *out, int64_t count, Fn fn) {
  switch (type) {
  case DType::F32:
    for (int64_t k = 0; k < count; ++k)
      out[k].f = static_cast<double>(static_cast<float>(fn(k)));
    return;
  case DType::F64:
    for (int64_t k = 0; k < count; ++k)
      out[k].f = fn(k);
    return;
  case DType::BF16:
    for (int64_t k = 0; k < count; ++k)
      out[k].f = bf16ToFloat(roundToBF16(fn(k)));
    return;
  case DType::F16:
    for (int64_t k = 0; k < count; ++k)
      out[k].f = f16ToDouble(roundToF16(fn(k)));
    return;
  default:
    return;
  }
}

/// out[k] = fn(k) (an int64 or uint64) wrapped to the integer type `type`.
template <typename Fn>
inline void intResult(DType type, Scalar *out, int64_t count, Fn fn) {
  switch (type) {
  case DType::I1:
    for (int64_t k = 0; k < count; ++k)
      out[k].i = static_cast<int64_t>(fn(k)) & 1;
    return;
  case DType::I32:
    for (int64_t k = 0; k < count; ++k)
      out[k].i = static_cast<int32_t>(static_cast<uint32_t>(fn(k)));
    return;
  default:
    for (int64_t k = 0; k < count; ++k)
      out[k].i = static_cast<int64_t>(fn(k));
    return;
  }
}

template <typename Fn>
inline void boolResult(Scalar *out, int64_t count, Fn fn) {
  for (int64_t k = 0; k < count; ++k)
    out[k].i = fn(k) ? 1 : 0;
}

/// tanh to well within double precision of std::tanh, from exp, which is
/// several times faster than the expm1 that std::tanh uses; for results that
/// are rounded to f32 or narrower (the error, below 1e-13 relative, shows only
/// where the exact value is that close to a rounding boundary).
inline double tanhForNarrowResult(double x) {
  if (std::isnan(x))
    return x;
  const double a = std::fabs(x);
  double r;
  if (a < 0x1p-10) // the series: the next term is below 2^-70 relative
    r = a - a * a * a * (1.0 / 3.0) + a * a * a * a * a * (2.0 / 15.0);
  else if (a < 20.0)
    r = 1.0 - 2.0 / (std::exp(2.0 * a) + 1.0);
  else
    r = 1.0; // 1 - 2e-17, which every narrow type rounds to 1
  return std::copysign(r, x);
}

/// arith.maximumf / minimumf: NaN if either operand is NaN, and -0 < +0.
inline double maximumF(double x, double y) {
  if (std::isnan(x))
    return x;
  if (std::isnan(y))
    return y;
  if (x == y)
    return std::signbit(x) ? y : x;
  return x > y ? x : y;
}

inline double minimumF(double x, double y) {
  if (std::isnan(x))
    return x;
  if (std::isnan(y))
    return y;
  if (x == y)
    return std::signbit(x) ? x : y;
  return x < y ? x : y;
}

/// fptosi/fptoui saturate: LLVM leaves out-of-range conversions undefined,
/// and a run must not depend on what the host does with them.
inline int64_t floatToSigned(double value, int width) {
  if (std::isnan(value))
    return 0;
  double truncated = std::trunc(value);
  double lo = -std::ldexp(1.0, width - 1);
  double hi = std::ldexp(1.0, width - 1); // exclusive
  if (truncated <= lo)
    return width == 64 ? std::numeric_limits<int64_t>::min()
                       : static_cast<int64_t>(lo);
  if (truncated >= hi)
    return width == 64 ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(hi) - 1;
  return static_cast<int64_t>(truncated);
}

inline uint64_t floatToUnsigned(double value, int width) {
  if (std::isnan(value) || value <= 0)
    return 0;
  double truncated = std::trunc(value);
  double hi = std::ldexp(1.0, width); // exclusive
  if (truncated >= hi)
    return width == 64 ? std::numeric_limits<uint64_t>::max()
                       : (uint64_t(1) << width) - 1;
  return static_cast<uint64_t>(truncated);
}

inline double intToFloat(DType type, double exactOrNearest, float asFloat) {
  return type == DType::F32 ? static_cast<double>(asFloat) : exactOrNearest;
}

} // namespace

bool isScalarOp(OpCode code) { return lookup(code) != nullptr; }

void ScalarOp::apply(const Scalar *const *in, Scalar *out,
                     int64_t count) const {
  const Scalar *a = in[0];
  const Scalar *b = in[1];
  const DType rt = resultType;
  const DType ot = operandType;
  switch (kind) {
  case ScalarOpKind::Constant:
    for (int64_t k = 0; k < count; ++k)
      out[k] = constant;
    return;
  case ScalarOpKind::AddF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return a[k].f + b[k].f; });
  case ScalarOpKind::SubF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return a[k].f - b[k].f; });
  case ScalarOpKind::MulF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return a[k].f * b[k].f; });
  case ScalarOpKind::DivF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return a[k].f / b[k].f; });
  case ScalarOpKind::NegF:
    return floatResult(rt, out, count, [&](int64_t k) { return -a[k].f; });
  case ScalarOpKind::MaximumF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return maximumF(a[k].f, b[k].f); });
  case ScalarOpKind::MinimumF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return minimumF(a[k].f, b[k].f); });
  case ScalarOpKind::RemF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::fmod(a[k].f, b[k].f); });
  case ScalarOpKind::CmpF:
    switch (predicate) {
    case Predicate::OEQ:
      return boolResult(out, count,
                        [&](int64_t k) { return a[k].f == b[k].f; });
    case Predicate::OGT:
      return boolResult(out, count, [&](int64_t k) { return a[k].f > b[k].f; });
    case Predicate::OGE:
      return boolResult(out, count,
                        [&](int64_t k) { return a[k].f >= b[k].f; });
    case Predicate::OLT:
      return boolResult(out, count, [&](int64_t k) { return a[k].f < b[k].f; });
    case Predicate::OLE:
      return boolResult(out, count,
                        [&](int64_t k) { return a[k].f <= b[k].f; });
    case Predicate::ONE:
      return boolResult(out, count, [&](int64_t k) {
        return a[k].f < b[k].f || a[k].f > b[k].f;
      });
    case Predicate::ORD:
      return boolResult(out, count, [&](int64_t k) {
        return !std::isnan(a[k].f) && !std::isnan(b[k].f);
      });
    case Predicate::UEQ:
      return boolResult(out, count, [&](int64_t k) {
        return !(a[k].f < b[k].f || a[k].f > b[k].f);
      });
    case Predicate::UGT:
      return boolResult(out, count,
                        [&](int64_t k) { return !(a[k].f <= b[k].f); });
    case Predicate::UGE:
      return boolResult(out, count,
                        [&](int64_t k) { return !(a[k].f < b[k].f); });
    case Predicate::ULT:
      return boolResult(out, count,
                        [&](int64_t k) { return !(a[k].f >= b[k].f); });
    case Predicate::ULE:
      return boolResult(out, count,
                        [&](int64_t k) { return !(a[k].f > b[k].f); });
    case Predicate::UNE:
      return boolResult(out, count,
                        [&](int64_t k) { return a[k].f != b[k].f; });
    case Predicate::UNO:
      return boolResult(out, count, [&](int64_t k) {
        return std::isnan(a[k].f) || std::isnan(b[k].f);
      });
    case Predicate::AlwaysTrue:
      return boolResult(out, count, [](int64_t) { return true; });
    default:
      return boolResult(out, count, [](int64_t) { return false; });
    }
  case ScalarOpKind::AddI:
    return intResult(rt, out, count, [&](int64_t k) {
      return static_cast<uint64_t>(a[k].i) + static_cast<uint64_t>(b[k].i);
    });
  case ScalarOpKind::SubI:
    return intResult(rt, out, count, [&](int64_t k) {
      return static_cast<uint64_t>(a[k].i) - static_cast<uint64_t>(b[k].i);
    });
  case ScalarOpKind::MulI:
    return intResult(rt, out, count, [&](int64_t k) {
      return static_cast<uint64_t>(a[k].i) * static_cast<uint64_t>(b[k].i);
    });
  // Division by zero is undefined in arith; a run yields 0 rather than trap.
  case ScalarOpKind::DivSI:
    return intResult(rt, out, count, [&](int64_t k) -> uint64_t {
      int64_t x = toSigned(a[k].i, ot), y = toSigned(b[k].i, ot);
      if (y == 0)
        return 0;
      if (y == -1) // INT_MIN / -1 wraps
        return uint64_t(0) - static_cast<uint64_t>(x);
      return static_cast<uint64_t>(x / y);
    });
  case ScalarOpKind::DivUI:
    return intResult(rt, out, count, [&](int64_t k) -> uint64_t {
      uint64_t x = toUnsigned(a[k].i, ot), y = toUnsigned(b[k].i, ot);
      return y ? x / y : 0;
    });
  case ScalarOpKind::RemSI:
    return intResult(rt, out, count, [&](int64_t k) -> uint64_t {
      int64_t x = toSigned(a[k].i, ot), y = toSigned(b[k].i, ot);
      if (y == 0 || y == -1)
        return 0;
      return static_cast<uint64_t>(x % y);
    });
  case ScalarOpKind::RemUI:
    return intResult(rt, out, count, [&](int64_t k) -> uint64_t {
      uint64_t x = toUnsigned(a[k].i, ot), y = toUnsigned(b[k].i, ot);
      return y ? x % y : 0;
    });
  case ScalarOpKind::MaxSI:
    return intResult(rt, out, count, [&](int64_t k) {
      return std::max(toSigned(a[k].i, ot), toSigned(b[k].i, ot));
    });
  case ScalarOpKind::MinSI:
    return intResult(rt, out, count, [&](int64_t k) {
      return std::min(toSigned(a[k].i, ot), toSigned(b[k].i, ot));
    });
  case ScalarOpKind::AndI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return a[k].i & b[k].i; });
  case ScalarOpKind::OrI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return a[k].i | b[k].i; });
  case ScalarOpKind::XOrI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return a[k].i ^ b[k].i; });
  // Shifts by the width or more are poison in arith; a run yields 0 (or the
  // sign for shrsi).
  case ScalarOpKind::ShLI: {
    const uint64_t width = getBitWidth(ot);
    return intResult(rt, out, count, [&](int64_t k) -> uint64_t {
      uint64_t amount = toUnsigned(b[k].i, ot);
      return amount >= width ? 0 : static_cast<uint64_t>(a[k].i) << amount;
    });
  }
  case ScalarOpKind::ShRSI: {
    const uint64_t width = getBitWidth(ot);
    return intResult(rt, out, count, [&](int64_t k) -> int64_t {
      int64_t x = toSigned(a[k].i, ot);
      uint64_t amount = toUnsigned(b[k].i, ot);
      return amount >= width ? (x < 0 ? -1 : 0) : x >> amount;
    });
  }
  case ScalarOpKind::ShRUI: {
    const uint64_t width = getBitWidth(ot);
    return intResult(rt, out, count, [&](int64_t k) -> uint64_t {
      uint64_t amount = toUnsigned(b[k].i, ot);
      return amount >= width ? 0 : toUnsigned(a[k].i, ot) >> amount;
    });
  }
  case ScalarOpKind::CmpI:
    switch (predicate) {
    case Predicate::EQ:
      return boolResult(out, count,
                        [&](int64_t k) { return a[k].i == b[k].i; });
    case Predicate::NE:
      return boolResult(out, count,
                        [&](int64_t k) { return a[k].i != b[k].i; });
    case Predicate::SLT:
      return boolResult(out, count, [&](int64_t k) {
        return toSigned(a[k].i, ot) < toSigned(b[k].i, ot);
      });
    case Predicate::SLE:
      return boolResult(out, count, [&](int64_t k) {
        return toSigned(a[k].i, ot) <= toSigned(b[k].i, ot);
      });
    case Predicate::SGT:
      return boolResult(out, count, [&](int64_t k) {
        return toSigned(a[k].i, ot) > toSigned(b[k].i, ot);
      });
    case Predicate::SGE:
      return boolResult(out, count, [&](int64_t k) {
        return toSigned(a[k].i, ot) >= toSigned(b[k].i, ot);
      });
    case Predicate::ULTI:
      return boolResult(out, count, [&](int64_t k) {
        return toUnsigned(a[k].i, ot) < toUnsigned(b[k].i, ot);
      });
    case Predicate::ULEI:
      return boolResult(out, count, [&](int64_t k) {
        return toUnsigned(a[k].i, ot) <= toUnsigned(b[k].i, ot);
      });
    case Predicate::UGTI:
      return boolResult(out, count, [&](int64_t k) {
        return toUnsigned(a[k].i, ot) > toUnsigned(b[k].i, ot);
      });
    default:
      return boolResult(out, count, [&](int64_t k) {
        return toUnsigned(a[k].i, ot) >= toUnsigned(b[k].i, ot);
      });
    }
  case ScalarOpKind::Select: {
    const Scalar *c = in[2];
    for (int64_t k = 0; k < count; ++k)
      out[k] = a[k].i ? b[k] : c[k];
    return;
  }
  case ScalarOpKind::ExtF:
  case ScalarOpKind::TruncF:
    return floatResult(rt, out, count, [&](int64_t k) { return a[k].f; });
  case ScalarOpKind::SIToFP:
    return floatResult(rt, out, count, [&](int64_t k) {
      int64_t x = toSigned(a[k].i, ot);
      return intToFloat(rt, static_cast<double>(x), static_cast<float>(x));
    });
  case ScalarOpKind::UIToFP:
    return floatResult(rt, out, count, [&](int64_t k) {
      uint64_t x = toUnsigned(a[k].i, ot);
      return intToFloat(rt, static_cast<double>(x), static_cast<float>(x));
    });
  case ScalarOpKind::FPToSI: {
    const int width = getBitWidth(rt);
    return intResult(rt, out, count,
                     [&](int64_t k) { return floatToSigned(a[k].f, width); });
  }
  case ScalarOpKind::FPToUI: {
    const int width = getBitWidth(rt);
    return intResult(rt, out, count,
                     [&](int64_t k) { return floatToUnsigned(a[k].f, width); });
  }
  case ScalarOpKind::IndexCast:
  case ScalarOpKind::ExtSI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return toSigned(a[k].i, ot); });
  case ScalarOpKind::ExtUI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return toUnsigned(a[k].i, ot); });
  case ScalarOpKind::TruncI:
    return intResult(rt, out, count, [&](int64_t k) { return a[k].i; });
  case ScalarOpKind::Bitcast:
    for (int64_t k = 0; k < count; ++k) {
      if (ot == rt) {
        out[k] = a[k];
      } else if (ot == DType::F32) {
        float value = static_cast<float>(a[k].f);
        int32_t bits;
        std::memcpy(&bits, &value, sizeof(bits));
        out[k].i = bits;
      } else if (rt == DType::F32) {
        uint32_t bits = static_cast<uint32_t>(a[k].i);
        float value;
        std::memcpy(&value, &bits, sizeof(value));
        out[k].f = value;
      } else { // f64 <-> i64/index: the register bits are the value's bits
        std::memcpy(&out[k], &a[k], sizeof(Scalar));
      }
    }
    return;
  case ScalarOpKind::Exp:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::exp(a[k].f); });
  case ScalarOpKind::Exp2:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::exp2(a[k].f); });
  case ScalarOpKind::Log:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::log(a[k].f); });
  case ScalarOpKind::Log2:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::log2(a[k].f); });
  case ScalarOpKind::Log1p:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::log1p(a[k].f); });
  case ScalarOpKind::Sqrt:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::sqrt(a[k].f); });
  case ScalarOpKind::Rsqrt:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return 1.0 / std::sqrt(a[k].f); });
  case ScalarOpKind::Tanh:
    if (rt == DType::F64)
      return floatResult(rt, out, count,
                         [&](int64_t k) { return std::tanh(a[k].f); });
    return floatResult(rt, out, count,
                       [&](int64_t k) { return tanhForNarrowResult(a[k].f); });
  case ScalarOpKind::AbsF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::fabs(a[k].f); });
  case ScalarOpKind::Erf:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::erf(a[k].f); });
  case ScalarOpKind::PowF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::pow(a[k].f, b[k].f); });
  case ScalarOpKind::Sin:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::sin(a[k].f); });
  case ScalarOpKind::Cos:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::cos(a[k].f); });
  case ScalarOpKind::Floor:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::floor(a[k].f); });
  case ScalarOpKind::Ceil:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::ceil(a[k].f); });
  }
}

bool parseConstant(const Number &number, DType type, Scalar &value,
                   std::string &error) {
  if (isFloat(type)) {
    value.f = roundFloat(number.f, type);
    return true;
  }
  if (!number.isInteger) {
    error = std::string("expected an integer for an ") + getDTypeName(type) +
            " constant, got " + number.text;
    return false;
  }
  value.i = wrapInt(number.i, type);
  return true;
}

Scalar castScalar(Scalar value, DType from, DType to) {
  Scalar result;
  if (isFloat(from) && isFloat(to)) {
    result.f = roundFloat(value.f, to);
  } else if (isFloat(from)) {
    result.i = wrapInt(floatToSigned(value.f, getBitWidth(to)), to);
  } else if (isFloat(to)) {
    int64_t x = toSigned(value.i, from);
    result.f = to == DType::F32 ? static_cast<double>(static_cast<float>(x))
                                : roundFloat(static_cast<double>(x), to);
  } else {
    result.i = wrapInt(toSigned(value.i, from), to);
  }
  return result;
}

StatusOr<ScalarOp>
prepareScalarOp(const OpContext &ctx,
                const std::vector<const ValueInfo *> &operands,
                const std::vector<const ValueInfo *> &results) {
  const std::string name = ctx.name();
  const ScalarOpInfo *info = lookup(ctx.op().code());
  if (!info)
    return ctx.error("op", "unsupported scalar op '" + name + "'");
  const Signature sig = info->signature;

  size_t arity = 1;
  switch (sig) {
  case Signature::Constant:
    arity = 0;
    break;
  case Signature::FloatBinary:
  case Signature::IntBinary:
  case Signature::CmpF:
  case Signature::CmpI:
    arity = 2;
    break;
  case Signature::Select:
    arity = 3;
    break;
  default:
    break;
  }
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", operands, arity));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", results, 1));
  for (size_t i = 0; i < operands.size(); ++i)
    ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", i, *operands[i]));
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("results", 0, *results[0]));

  ScalarOp op;
  op.kind = info->kind;
  op.resultType = results[0]->dtype;
  op.operandType = operands.empty() ? op.resultType : operands[0]->dtype;
  const DType rt = op.resultType, ot = op.operandType;
  auto typeError = [&](const char *key, size_t index, const ValueInfo &value,
                       const std::string &expected) {
    return ctx.error(std::string(key) + "[" + std::to_string(index) + "]",
                     name + " expects " + expected + ", got " +
                         getDTypeName(value.dtype) + " for " +
                         describeValue(value));
  };
  // Every operand must have the type of operand `first`.
  auto sameAs = [&](size_t first) -> Status {
    for (size_t i = first + 1; i < operands.size(); ++i)
      ZERO_RETURN_IF_ERROR(
          ctx.expectDType("operands", i, *operands[i], operands[first]->dtype));
    return Status::ok();
  };

  switch (sig) {
  case Signature::Constant: {
    const ConstantValue &value = ctx.fields().getConstant(Field::Value);
    if (value.form != ConstantValue::Form::Number)
      return ctx.error("value", "a scalar constant is a number, got a "
                                "tensor's {\"splat\"} or {\"data\"}");
    std::string message;
    if (!parseConstant(value.elements[0], rt, op.constant, message))
      return ctx.error("value", message);
    break;
  }
  case Signature::FloatUnary:
  case Signature::FloatBinary:
    if (!isFloat(rt))
      return typeError("results", 0, *results[0], "a float result");
    for (size_t i = 0; i < operands.size(); ++i)
      ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", i, *operands[i], rt));
    break;
  case Signature::IntBinary:
    if (!isInteger(rt))
      return typeError("results", 0, *results[0], "an integer result");
    for (size_t i = 0; i < operands.size(); ++i)
      ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", i, *operands[i], rt));
    break;
  case Signature::CmpF:
  case Signature::CmpI: {
    bool floats = sig == Signature::CmpF;
    if (floats ? !isFloat(ot) : !isInteger(ot))
      return typeError("operands", 0, *operands[0],
                       floats ? "float operands" : "integer operands");
    ZERO_RETURN_IF_ERROR(sameAs(0));
    ZERO_RETURN_IF_ERROR(ctx.expectDType("results", 0, *results[0], DType::I1));
    StatusOr<std::string> text = ctx.getString("predicate");
    if (!text.isOk())
      return text.status();
    bool found = false;
    std::string known;
    auto search = [&](const auto &table) {
      for (const PredicateName &entry : table) {
        known += std::string(known.empty() ? "" : " ") + entry.name;
        if (*text == entry.name) {
          op.predicate = entry.predicate;
          found = true;
        }
      }
    };
    if (floats)
      search(kCmpFPredicates);
    else
      search(kCmpIPredicates);
    if (!found)
      return ctx.error("predicate", "unknown " + name + " predicate '" + *text +
                                        "' (expected one of: " + known + ")");
    break;
  }
  case Signature::Select:
    ZERO_RETURN_IF_ERROR(
        ctx.expectDType("operands", 0, *operands[0], DType::I1));
    ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 1, *operands[1], rt));
    ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 2, *operands[2], rt));
    break;
  case Signature::ExtF:
  case Signature::TruncF: {
    bool ext = sig == Signature::ExtF;
    if (!isFloat(ot))
      return typeError("operands", 0, *operands[0], "a float operand");
    if (!isFloat(rt) || (ext ? getBitWidth(rt) <= getBitWidth(ot)
                             : getBitWidth(rt) >= getBitWidth(ot)))
      return typeError("results", 0, *results[0],
                       std::string(ext ? "a float result wider than "
                                       : "a float result narrower than ") +
                           getDTypeName(ot));
    break;
  }
  case Signature::IntToFloat:
    if (!isInteger(ot) || ot == DType::Index)
      return typeError("operands", 0, *operands[0],
                       "a non-index integer operand");
    if (!isFloat(rt))
      return typeError("results", 0, *results[0], "a float result");
    break;
  case Signature::FloatToInt:
    if (!isFloat(ot))
      return typeError("operands", 0, *operands[0], "a float operand");
    if (!isInteger(rt) || rt == DType::Index)
      return typeError("results", 0, *results[0], "a non-index integer result");
    break;
  case Signature::IndexCast:
    if (!isInteger(ot))
      return typeError("operands", 0, *operands[0], "an integer operand");
    if (!isInteger(rt) || (ot == DType::Index) == (rt == DType::Index))
      return typeError("results", 0, *results[0],
                       ot == DType::Index ? "a non-index integer result"
                                          : "an index result");
    break;
  case Signature::ExtI:
  case Signature::TruncI: {
    bool ext = sig == Signature::ExtI;
    if (!isInteger(ot) || ot == DType::Index)
      return typeError("operands", 0, *operands[0],
                       "a non-index integer operand");
    if (!isInteger(rt) || rt == DType::Index ||
        (ext ? getBitWidth(rt) <= getBitWidth(ot)
             : getBitWidth(rt) >= getBitWidth(ot)))
      return typeError("results", 0, *results[0],
                       std::string(ext ? "an integer result wider than "
                                       : "an integer result narrower than ") +
                           getDTypeName(ot));
    break;
  }
  case Signature::Bitcast: {
    auto supported = [](DType from, DType to) {
      if (from == to)
        return true;
      auto is64 = [](DType t) {
        return t == DType::F64 || t == DType::I64 || t == DType::Index;
      };
      auto is32 = [](DType t) { return t == DType::F32 || t == DType::I32; };
      return (is64(from) && is64(to) &&
              (from == DType::F64) != (to == DType::F64)) ||
             (is32(from) && is32(to));
    };
    if (!supported(ot, rt))
      return typeError("results", 0, *results[0],
                       std::string("a type of the bit width of ") +
                           getDTypeName(ot) +
                           " (f32 <-> i32, f64 <-> i64 or index)");
    break;
  }
  }
  return op;
}

namespace {
/// A scalar op at the top level of the step, on the executor's registers.
class ScalarInstruction : public ComputeOp {
public:
  ScalarInstruction(ScalarOp op, std::vector<int64_t> operands, int64_t result)
      : op_(op), operands_(std::move(operands)), result_(result) {}

  Status run(Frame &frame) override {
    Scalar in[3];
    const Scalar *columns[3] = {in, in + 1, in + 2};
    for (size_t i = 0; i < operands_.size(); ++i)
      in[i] = frame.scalar(operands_[i]);
    Scalar out;
    op_.apply(columns, &out, 1);
    frame.scalar(result_) = out;
    return Status::ok();
  }

private:
  ScalarOp op_;
  std::vector<int64_t> operands_;
  int64_t result_;
};
} // namespace

StatusOr<std::unique_ptr<ComputeOp>>
prepareScalarInstruction(const OpContext &ctx) {
  StatusOr<std::vector<const ValueInfo *>> operands = ctx.getValues("operands");
  if (!operands.isOk())
    return operands.status();
  StatusOr<std::vector<const ValueInfo *>> results = ctx.getValues("results");
  if (!results.isOk())
    return results.status();
  StatusOr<ScalarOp> op = prepareScalarOp(ctx, *operands, *results);
  if (!op.isOk())
    return op.status();
  std::vector<int64_t> ids;
  for (const ValueInfo *value : *operands)
    ids.push_back(value->id);
  return std::unique_ptr<ComputeOp>(
      new ScalarInstruction(*op, std::move(ids), (*results)[0]->id));
}

} // namespace zero::runtime::host
