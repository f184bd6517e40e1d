//===- ScalarOps.cpp - the scalar arith and math ops ----------------------===//

#include "ScalarOps.h"

#include "Elements.h"

#include "ops/Predicates.h"

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

using ops::compareFloats;
using ops::compareInts;
using ops::toSigned;
using ops::toUnsigned;

using ops::bitWidthOf;

bool isInteger(DType type) { return !isFloat(type); }

/// out[k] = fn(k) rounded to the float type `type`.
template <typename Fn>
inline void floatResult(DType type, Scalar *out, int64_t count, Fn fn) {
  switch (type) {
  case DType::F32:
    for (int64_t k = 0; k < count; ++k)
      out[k].f = ops::roundF32(fn(k));
    return;
  case DType::F64:
    for (int64_t k = 0; k < count; ++k)
      out[k].f = fn(k);
    return;
  case DType::BF16:
    for (int64_t k = 0; k < count; ++k)
      out[k].f = ops::roundBF16(fn(k));
    return;
  case DType::F16:
    for (int64_t k = 0; k < count; ++k)
      out[k].f = ops::roundF16(fn(k));
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
      out[k].i = ops::wrapI1(static_cast<int64_t>(fn(k)));
    return;
  case DType::I32:
    for (int64_t k = 0; k < count; ++k)
      out[k].i = ops::wrapI32(static_cast<int64_t>(fn(k)));
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

} // namespace

bool isScalarOp(OpCode code) { return lookup(code) != nullptr; }

void ScalarOp::apply(const Scalar *const *in, Scalar *out,
                     int64_t count) const {
  const Scalar *a = in[0];
  const Scalar *b = in[1];
  const DType rt = resultType;
  const DType ot = operandType;
  const int width = bitWidthOf(ot); // of the operands
  // out[k] = op(a[k], b[k]) for an integer op of ElementMath.h.
  auto intColumns = [&](auto op) {
    intResult(rt, out, count,
              [&](int64_t k) { return op(a[k].i, b[k].i, width); });
  };
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
    return floatResult(rt, out, count, [&](int64_t k) {
      return ops::maximumF(a[k].f, b[k].f);
    });
  case ScalarOpKind::MinimumF:
    return floatResult(rt, out, count, [&](int64_t k) {
      return ops::minimumF(a[k].f, b[k].f);
    });
  case ScalarOpKind::RemF:
    return floatResult(rt, out, count,
                       [&](int64_t k) { return std::fmod(a[k].f, b[k].f); });
  case ScalarOpKind::CmpF:
    return boolResult(out, count, [&](int64_t k) {
      return compareFloats(predicate, a[k].f, b[k].f);
    });
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
  // Division by zero and shifts by the width or more: ElementMath.h.
  case ScalarOpKind::DivSI:
    return intColumns(ops::divSI);
  case ScalarOpKind::DivUI:
    return intColumns(ops::divUI);
  case ScalarOpKind::RemSI:
    return intColumns(ops::remSI);
  case ScalarOpKind::RemUI:
    return intColumns(ops::remUI);
  case ScalarOpKind::MaxSI:
    return intColumns(ops::maxSI);
  case ScalarOpKind::MinSI:
    return intColumns(ops::minSI);
  case ScalarOpKind::AndI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return a[k].i & b[k].i; });
  case ScalarOpKind::OrI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return a[k].i | b[k].i; });
  case ScalarOpKind::XOrI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return a[k].i ^ b[k].i; });
  case ScalarOpKind::ShLI:
    return intColumns(ops::shLI);
  case ScalarOpKind::ShRSI:
    return intColumns(ops::shRSI);
  case ScalarOpKind::ShRUI:
    return intColumns(ops::shRUI);
  case ScalarOpKind::CmpI:
    return boolResult(out, count, [&](int64_t k) {
      return compareInts(predicate, a[k].i, b[k].i, width);
    });
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
      return ops::signedToFloat(toSigned(a[k].i, width), rt);
    });
  case ScalarOpKind::UIToFP:
    return floatResult(rt, out, count, [&](int64_t k) {
      return ops::unsignedToFloat(toUnsigned(a[k].i, width), rt);
    });
  case ScalarOpKind::FPToSI: {
    const int resultWidth = bitWidthOf(rt);
    return intResult(rt, out, count, [&](int64_t k) {
      return ops::floatToSigned(a[k].f, resultWidth);
    });
  }
  case ScalarOpKind::FPToUI: {
    const int resultWidth = bitWidthOf(rt);
    return intResult(rt, out, count, [&](int64_t k) {
      return ops::floatToUnsigned(a[k].f, resultWidth);
    });
  }
  case ScalarOpKind::IndexCast:
  case ScalarOpKind::ExtSI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return toSigned(a[k].i, width); });
  case ScalarOpKind::ExtUI:
    return intResult(rt, out, count,
                     [&](int64_t k) { return toUnsigned(a[k].i, width); });
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
    return floatResult(rt, out, count, [&](int64_t k) {
      return ops::tanhForNarrowResult(a[k].f);
    });
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
    const ops::PredicateName *predicate = ops::lookupPredicate(*text, floats);
    if (predicate) {
      op.predicate = predicate->predicate;
      break;
    }
    std::string known;
    auto list = [&](const auto &table) {
      for (const ops::PredicateName &entry : table)
        known += std::string(known.empty() ? "" : " ") + entry.name;
    };
    if (floats)
      list(ops::kCmpFPredicates);
    else
      list(ops::kCmpIPredicates);
    return ctx.error("predicate", "unknown " + name + " predicate '" + *text +
                                        "' (expected one of: " + known + ")");
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
    if (!isFloat(rt) || (ext ? bitWidthOf(rt) <= bitWidthOf(ot)
                             : bitWidthOf(rt) >= bitWidthOf(ot)))
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
        (ext ? bitWidthOf(rt) <= bitWidthOf(ot)
             : bitWidthOf(rt) >= bitWidthOf(ot)))
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
