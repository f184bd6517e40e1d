//===- ScalarOps.cpp - the scalar arith and math ops ----------------------===//

#include "ScalarOps.h"

#include "Elements.h"

#include "ops/ScalarMath.h"

namespace zero::runtime::host {

namespace {

#define ZERO_HOST_INLINE __attribute__((always_inline))

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

/// out[k] = fn(k) (64 bits) wrapped to the integer type `type`.
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

/// applyScalarOp for op K: ScalarMath.h's value of K, with the result
/// type's rounding or wrapping picked once for the columns.
template <ScalarOpKind K>
void applyColumns(const ScalarOp &op, const Scalar *const *in, Scalar *out,
                  int64_t count) {
  // Columns past the op's operands are null: read only its own. The
  // element functions are inlined into the loops (GCC would otherwise call
  // them per element in some of the 53 instantiations).
  constexpr int arity = ops::getScalarArity(K);
  static const Scalar kNone = {};
  auto operand = [&](int i, int64_t k) ZERO_HOST_INLINE -> const Scalar & {
    return arity > i ? in[i][k] : kNone;
  };
  auto first = [&](int64_t k)
                   ZERO_HOST_INLINE -> const Scalar & { return operand(0, k); };
  auto second = [&](int64_t k) ZERO_HOST_INLINE -> const Scalar & {
    return operand(1, k);
  };
  switch (ops::getScalarResult(K)) {
  case ops::ScalarResult::Float:
    return floatResult(op.resultType, out, count,
                       [&](int64_t k) ZERO_HOST_INLINE {
                         return ops::getFloatValue<K>(op, first(k), second(k));
                       });
  case ops::ScalarResult::Int:
    return intResult(op.resultType, out, count,
                     [&](int64_t k) ZERO_HOST_INLINE {
                       return ops::getIntValue<K>(op, first(k), second(k));
                     });
  case ops::ScalarResult::Bool:
    for (int64_t k = 0; k < count; ++k)
      out[k].i = ops::getBoolValue<K>(op, first(k), second(k)) ? 1 : 0;
    return;
  case ops::ScalarResult::Own:
    for (int64_t k = 0; k < count; ++k)
      out[k] = ops::getScalarValue<K>(op, first(k), second(k), operand(2, k));
    return;
  }
}

} // namespace

void applyScalarOp(const ScalarOp &op, const Scalar *const *in, Scalar *out,
                   int64_t count) {
  ops::visitScalarOpKind(op.kind, [&](auto kind) {
    applyColumns<decltype(kind)::value>(op, in, out, count);
  });
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
