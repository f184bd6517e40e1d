//===- ScalarOps.cu - arith and math ops on the device's registers --------===//
//
// A top-level scalar op reads and writes the register file in device memory
// (CudaContext::registers), so it runs as a one-thread kernel on the compute
// stream, ordered with the kernels that produce and consume its operands; a
// host round trip per scalar would stall the stream. A constant is the
// exception: its register is written once, when the schedule is loaded (a
// GPT-2 step has some 400 of them). The semantics are
// host/ScalarOps.cpp's, case by case: floats in double rounded to the result
// type after every op, integers wrapped, division by zero 0, shifts by the
// width or more 0 (or the sign), fptosi saturating, maximumf/minimumf
// propagating NaN with -0 < +0. Transcendentals are CUDA's double libm
// (within 2 ulp of glibc's), which rounding to f32 or narrower nearly always
// hides.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"

#include "ops/Predicates.h"
#include "ops/ScalarOp.h"

#include <cstring>

namespace zero::runtime::cuda {

namespace {

using ops::Predicate;

struct ScalarParams {
  OpCode code;
  DType resultType;
  DType operandType; // of the first operand
  Predicate pred;
  int numOperands;
  int64_t operands[3];
  int64_t result;
};

/// The float result of a float-valued op before rounding.
__device__ double floatValue(const ScalarParams &p, Scalar a, Scalar b) {
  const double x = a.f, y = b.f;
  switch (p.code) {
  case OpCode::AddF:
    return x + y;
  case OpCode::SubF:
    return x - y;
  case OpCode::MulF:
    return x * y;
  case OpCode::DivF:
    return x / y;
  case OpCode::NegF:
    return -x;
  case OpCode::MaximumF:
    return ops::maximumF(x, y);
  case OpCode::MinimumF:
    return ops::minimumF(x, y);
  case OpCode::RemF:
    return fmod(x, y);
  case OpCode::ExtF:
  case OpCode::TruncF:
    return x;
  case OpCode::SIToFP:
    return ops::signedToFloat(toSigned(a.i, bitWidthOf(p.operandType)),
                              p.resultType);
  case OpCode::UIToFP:
    return ops::unsignedToFloat(toUnsigned(a.i, bitWidthOf(p.operandType)),
                                p.resultType);
  case OpCode::Exp:
    return exp(x);
  case OpCode::Exp2:
    return exp2(x);
  case OpCode::Log:
    return log(x);
  case OpCode::Log2:
    return log2(x);
  case OpCode::Log1p:
    return log1p(x);
  case OpCode::Sqrt:
    return sqrt(x);
  case OpCode::Rsqrt:
    return 1.0 / sqrt(x); // two correctly rounded ops, as the host
  case OpCode::Tanh:
    return p.resultType == DType::F64 ? tanh(x)
                                      : ops::tanhForNarrowResult(x);
  case OpCode::AbsF:
    return fabs(x);
  case OpCode::Erf:
    return erf(x);
  case OpCode::PowF:
    return pow(x, y);
  case OpCode::Sin:
    return sin(x);
  case OpCode::Cos:
    return cos(x);
  case OpCode::Floor:
    return floor(x);
  case OpCode::Ceil:
    return ceil(x);
  default:
    return 0;
  }
}

/// The integer result of an integer-valued op before wrapping.
__device__ unsigned long long intValue(const ScalarParams &p, Scalar a,
                                       Scalar b) {
  using u64 = unsigned long long;
  const int width = bitWidthOf(p.operandType);
  switch (p.code) {
  case OpCode::AddI:
    return static_cast<u64>(a.i) + static_cast<u64>(b.i);
  case OpCode::SubI:
    return static_cast<u64>(a.i) - static_cast<u64>(b.i);
  case OpCode::MulI:
    return static_cast<u64>(a.i) * static_cast<u64>(b.i);
  case OpCode::DivSI:
    return ops::divSI(a.i, b.i, width);
  case OpCode::DivUI:
    return ops::divUI(a.i, b.i, width);
  case OpCode::RemSI:
    return ops::remSI(a.i, b.i, width);
  case OpCode::RemUI:
    return ops::remUI(a.i, b.i, width);
  case OpCode::MaxSI:
    return ops::maxSI(a.i, b.i, width);
  case OpCode::MinSI:
    return ops::minSI(a.i, b.i, width);
  case OpCode::AndI:
    return static_cast<u64>(a.i & b.i);
  case OpCode::OrI:
    return static_cast<u64>(a.i | b.i);
  case OpCode::XOrI:
    return static_cast<u64>(a.i ^ b.i);
  case OpCode::ShLI:
    return ops::shLI(a.i, b.i, width);
  case OpCode::ShRSI:
    return ops::shRSI(a.i, b.i, width);
  case OpCode::ShRUI:
    return ops::shRUI(a.i, b.i, width);
  case OpCode::FPToSI:
    return static_cast<u64>(floatToSigned(a.f, bitWidthOf(p.resultType)));
  case OpCode::FPToUI:
    return floatToUnsigned(a.f, bitWidthOf(p.resultType));
  case OpCode::IndexCast:
  case OpCode::ExtSI:
    return static_cast<u64>(toSigned(a.i, width));
  case OpCode::ExtUI:
    return toUnsigned(a.i, width);
  case OpCode::TruncI:
    return static_cast<u64>(a.i);
  default:
    return 0;
  }
}

__device__ Scalar applyScalarOp(const ScalarParams &p, Scalar a, Scalar b,
                                Scalar c) {
  const DType rt = p.resultType, ot = p.operandType;
  Scalar out;
  out.i = 0;
  switch (p.code) {
  case OpCode::CmpF:
    out.i = ops::compareFloats(p.pred, a.f, b.f) ? 1 : 0;
    return out;
  case OpCode::CmpI:
    out.i = ops::compareInts(p.pred, a.i, b.i, bitWidthOf(ot)) ? 1 : 0;
    return out;
  case OpCode::Select:
    return a.i ? b : c;
  case OpCode::Bitcast:
    if (ot == rt)
      return a;
    if (ot == DType::F32) {
      out.i = static_cast<int32_t>(ops::bitsOfFloat(static_cast<float>(a.f)));
    } else if (rt == DType::F32) {
      out.f = ops::floatOfBits(static_cast<uint32_t>(a.i));
    } else { // f64 <-> i64/index: the register bits are the value's bits
      out = a;
    }
    return out;
  default:
    break;
  }
  if (isFloatType(rt))
    out.f = roundFloat(floatValue(p, a, b), rt);
  else
    out.i = wrapInt(static_cast<long long>(intValue(p, a, b)), rt);
  return out;
}

__global__ void scalarOpKernel(Scalar *registers, ScalarParams p) {
  Scalar in[3];
  for (int i = 0; i < 3; ++i)
    in[i].i = 0;
  for (int i = 0; i < p.numOperands; ++i)
    in[i] = registers[p.operands[i]];
  registers[p.result] = applyScalarOp(p, in[0], in[1], in[2]);
}

class ScalarInstruction final : public PreparedOp {
public:
  ScalarInstruction(const CudaContext &ctx, ScalarParams params)
      : ctx_(ctx), params_(params) {}
  Status run(int64_t) override {
    clearStaleError();
    scalarOpKernel<<<1, 1, 0, ctx_.compute>>>(ctx_.registers, params_);
    ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  ScalarParams params_;
};

/// A scalar constant, whose register was written at load.
class LoadedConstant final : public PreparedOp {
public:
  Status run(int64_t) override { return Status::ok(); }
};

} // namespace

PreparedOpOr prepareScalarOp(const Instruction &inst, const CudaContext &ctx) {
  ScalarParams p;
  std::memset(&p, 0, sizeof(p));
  p.code = inst.code();
  p.numOperands = static_cast<int>(inst.operands.size());
  if (p.numOperands > 3)
    return ZERO_ERROR(kInternal, ctx.where(inst) +
                                     ": a scalar op with more than 3 operands");
  for (int i = 0; i < p.numOperands; ++i)
    p.operands[i] = inst.operands[i];
  p.result = inst.results[0];
  p.resultType = ctx.value(p.result).dtype;
  p.operandType =
      p.numOperands ? ctx.value(inst.operands[0]).dtype : p.resultType;
  if (p.code == OpCode::Constant) {
    // Written once, now (the schedule's load): nothing else writes a
    // value's register, and every step would write the same bits.
    const Scalar value = ops::getConstantRegister(
        inst.fields.getConstant(Field::Value).elements[0], p.resultType);
    ZERO_CUDA_RETURN_IF_ERROR(cudaMemcpy(ctx.registers + p.result, &value,
                                         sizeof(Scalar),
                                         cudaMemcpyHostToDevice));
    return std::unique_ptr<PreparedOp>(new LoadedConstant());
  }
  if (p.code == OpCode::CmpF || p.code == OpCode::CmpI) {
    const std::string &name = inst.fields.getString(Field::Predicate);
    const ops::PredicateName *predicate =
        ops::lookupPredicate(name, p.code == OpCode::CmpF);
    if (!predicate) // the host's checks refuse it first
      return ZERO_ERROR(kInvalidArgument,
                        ctx.siteMessage(inst, "predicate",
                                        "unknown predicate '" + name + "'"));
    p.pred = predicate->predicate;
  }
  return std::unique_ptr<PreparedOp>(new ScalarInstruction(ctx, p));
}

} // namespace zero::runtime::cuda
