//===- ScalarOps.cpp - the scalar arith and math ops ----------------------===//

#include "ScalarOps.h"

#include "Elements.h"

#include "ops/Predicates.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace zero::runtime::host {

namespace {

using ops::compareFloats;
using ops::compareInts;
using ops::toSigned;
using ops::toUnsigned;

using ops::bitWidthOf;

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

void applyScalarOp(const ScalarOp &scalarOp, const Scalar *const *in,
                   Scalar *out, int64_t count) {
  const Scalar *a = in[0];
  const Scalar *b = in[1];
  const DType rt = scalarOp.resultType;
  const DType ot = scalarOp.operandType;
  const Predicate predicate = scalarOp.predicate;
  const int width = bitWidthOf(ot); // of the operands
  // out[k] = op(a[k], b[k]) for an integer op of ElementMath.h.
  auto intColumns = [&](auto op) {
    intResult(rt, out, count,
              [&](int64_t k) { return op(a[k].i, b[k].i, width); });
  };
  switch (scalarOp.kind) {
  case ScalarOpKind::Constant:
    for (int64_t k = 0; k < count; ++k)
      out[k] = scalarOp.constant;
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
    applyScalarOp(op_, columns, &out, 1);
    frame.scalar(result_) = out;
    return Status::ok();
  }

private:
  ScalarOp op_;
  std::vector<int64_t> operands_;
  int64_t result_;
};
} // namespace

std::unique_ptr<ComputeOp> buildScalarInstruction(const OpContext &ctx,
                                                  const ScalarOp &op) {
  return std::unique_ptr<ComputeOp>(
      new ScalarInstruction(op, ctx.op().operands, ctx.op().results[0]));
}

} // namespace zero::runtime::host
