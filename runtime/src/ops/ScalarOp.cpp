//===- ScalarOp.cpp - the scalar arith and math ops, checked --------------===//

#include "ops/ScalarOp.h"

#include "ops/Elements.h"

namespace zero::runtime::ops {

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

bool isInteger(DType type) { return !isFloat(type); }

} // namespace

bool isScalarOp(OpCode code) { return lookup(code) != nullptr; }

bool parseConstant(const Number &number, DType type, Scalar &value,
                   std::string &error) {
  if (!isFloat(type) && !number.isInteger) {
    error = std::string("expected an integer for an ") + getDTypeName(type) +
            " constant, got " + number.text;
    return false;
  }
  value = getConstantRegister(number, type);
  return true;
}

Scalar getConstantRegister(const Number &number, DType type) {
  Scalar value;
  if (isFloat(type))
    value.f = roundFloat(number.f, type);
  else
    value.i = wrapInt(number.i, type);
  return value;
}

std::vector<char> encodeConstantTensor(const std::vector<Scalar> &elements,
                                       DType dtype, int64_t numel) {
  std::vector<char> bytes(numel * getDTypeWidth(dtype));
  const bool isSplat = elements.size() == 1;
  for (int64_t i = 0; i < numel; ++i)
    storeElement(bytes.data(), dtype, i, elements[isSplat ? 0 : i]);
  return bytes;
}

StatusOr<ScalarOp>
checkScalarOp(const OpContext &ctx,
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
    const PredicateName *predicate = lookupPredicate(*text, floats);
    if (predicate) {
      op.predicate = predicate->predicate;
      break;
    }
    std::string known;
    auto list = [&](const auto &table) {
      for (const PredicateName &entry : table)
        known += std::string(known.empty() ? "" : " ") + entry.name;
    };
    if (floats)
      list(kCmpFPredicates);
    else
      list(kCmpIPredicates);
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

} // namespace zero::runtime::ops
