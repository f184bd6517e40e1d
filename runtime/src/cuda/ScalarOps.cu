//===- ScalarOps.cu - arith and math ops on the device's registers --------===//
//
// A top-level scalar op reads and writes the register file in device memory
// (CudaContext::registers), so it runs as a one-thread kernel on the compute
// stream, ordered with the kernels that produce and consume its operands; a
// host round trip per scalar would stall the stream. The semantics are
// host/ScalarOps.cpp's, case by case: floats in double rounded to the result
// type after every op, integers wrapped, division by zero 0, shifts by the
// width or more 0 (or the sign), fptosi saturating, maximumf/minimumf
// propagating NaN with -0 < +0. Transcendentals are CUDA's double libm
// (within 2 ulp of glibc's), which rounding to f32 or narrower nearly always
// hides.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"

#include <cstring>

namespace zero::runtime::cuda {

namespace {

/// arith.cmpf and arith.cmpi predicates.
enum class Pred : int8_t {
  OEQ,
  OGT,
  OGE,
  OLT,
  OLE,
  ONE,
  ORD,
  UEQ,
  UGT,
  UGE,
  ULT,
  ULE,
  UNE,
  UNO,
  True,
  False,
  EQ,
  NE,
  SLT,
  SLE,
  SGT,
  SGE,
  ULTI,
  ULEI,
  UGTI,
  UGEI,
};

struct PredicateName {
  const char *name;
  Pred pred;
};
constexpr PredicateName kCmpF[] = {
    {"oeq", Pred::OEQ},    {"ogt", Pred::OGT}, {"oge", Pred::OGE},
    {"olt", Pred::OLT},    {"ole", Pred::OLE}, {"one", Pred::ONE},
    {"ord", Pred::ORD},    {"ueq", Pred::UEQ}, {"ugt", Pred::UGT},
    {"uge", Pred::UGE},    {"ult", Pred::ULT}, {"ule", Pred::ULE},
    {"une", Pred::UNE},    {"uno", Pred::UNO}, {"true", Pred::True},
    {"false", Pred::False}};
constexpr PredicateName kCmpI[] = {{"eq", Pred::EQ},    {"ne", Pred::NE},
                                   {"slt", Pred::SLT},  {"sle", Pred::SLE},
                                   {"sgt", Pred::SGT},  {"sge", Pred::SGE},
                                   {"ult", Pred::ULTI}, {"ule", Pred::ULEI},
                                   {"ugt", Pred::UGTI}, {"uge", Pred::UGEI}};

struct ScalarParams {
  OpCode code;
  DType resultType;
  DType operandType; // of the first operand
  Pred pred;
  int numOperands;
  int64_t operands[3];
  int64_t result;
  Scalar constant; // arith.constant, canonical
};

__device__ __forceinline__ double maximumF(double x, double y) {
  if (isnan(x))
    return x;
  if (isnan(y))
    return y;
  if (x == y)
    return signbit(x) ? y : x;
  return x > y ? x : y;
}

__device__ __forceinline__ double minimumF(double x, double y) {
  if (isnan(x))
    return x;
  if (isnan(y))
    return y;
  if (x == y)
    return signbit(x) ? x : y;
  return x < y ? x : y;
}

/// host tanhForNarrowResult: tanh from exp, for results of f32 or narrower.
__device__ __forceinline__ double tanhForNarrowResult(double x) {
  if (isnan(x))
    return x;
  const double a = fabs(x);
  double r;
  if (a < 0x1p-10)
    r = a - a * a * a * (1.0 / 3.0) + a * a * a * a * a * (2.0 / 15.0);
  else if (a < 20.0)
    r = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
  else
    r = 1.0;
  return copysign(r, x);
}

__device__ bool compareFloats(Pred pred, double a, double b) {
  switch (pred) {
  case Pred::OEQ:
    return a == b;
  case Pred::OGT:
    return a > b;
  case Pred::OGE:
    return a >= b;
  case Pred::OLT:
    return a < b;
  case Pred::OLE:
    return a <= b;
  case Pred::ONE:
    return a < b || a > b;
  case Pred::ORD:
    return !isnan(a) && !isnan(b);
  case Pred::UEQ:
    return !(a < b || a > b);
  case Pred::UGT:
    return !(a <= b);
  case Pred::UGE:
    return !(a < b);
  case Pred::ULT:
    return !(a >= b);
  case Pred::ULE:
    return !(a > b);
  case Pred::UNE:
    return a != b;
  case Pred::UNO:
    return isnan(a) || isnan(b);
  case Pred::True:
    return true;
  default:
    return false;
  }
}

__device__ bool compareInts(Pred pred, long long a, long long b, DType t) {
  switch (pred) {
  case Pred::EQ:
    return a == b;
  case Pred::NE:
    return a != b;
  case Pred::SLT:
    return toSigned(a, t) < toSigned(b, t);
  case Pred::SLE:
    return toSigned(a, t) <= toSigned(b, t);
  case Pred::SGT:
    return toSigned(a, t) > toSigned(b, t);
  case Pred::SGE:
    return toSigned(a, t) >= toSigned(b, t);
  case Pred::ULTI:
    return toUnsigned(a, t) < toUnsigned(b, t);
  case Pred::ULEI:
    return toUnsigned(a, t) <= toUnsigned(b, t);
  case Pred::UGTI:
    return toUnsigned(a, t) > toUnsigned(b, t);
  default:
    return toUnsigned(a, t) >= toUnsigned(b, t);
  }
}

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
    return maximumF(x, y);
  case OpCode::MinimumF:
    return minimumF(x, y);
  case OpCode::RemF:
    return fmod(x, y);
  case OpCode::ExtF:
  case OpCode::TruncF:
    return x;
  case OpCode::SIToFP: {
    const long long v = toSigned(a.i, p.operandType);
    return p.resultType == DType::F32 ? static_cast<double>(__ll2float_rn(v))
                                      : __ll2double_rn(v);
  }
  case OpCode::UIToFP: {
    const unsigned long long v = toUnsigned(a.i, p.operandType);
    return p.resultType == DType::F32 ? static_cast<double>(__ull2float_rn(v))
                                      : __ull2double_rn(v);
  }
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
    return p.resultType == DType::F64 ? tanh(x) : tanhForNarrowResult(x);
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
  const DType ot = p.operandType;
  const u64 width = static_cast<u64>(bitWidthOf(ot));
  switch (p.code) {
  case OpCode::AddI:
    return static_cast<u64>(a.i) + static_cast<u64>(b.i);
  case OpCode::SubI:
    return static_cast<u64>(a.i) - static_cast<u64>(b.i);
  case OpCode::MulI:
    return static_cast<u64>(a.i) * static_cast<u64>(b.i);
  case OpCode::DivSI: {
    const long long x = toSigned(a.i, ot), y = toSigned(b.i, ot);
    if (y == 0)
      return 0;
    if (y == -1) // INT_MIN / -1 wraps
      return u64(0) - static_cast<u64>(x);
    return static_cast<u64>(x / y);
  }
  case OpCode::DivUI: {
    const u64 x = toUnsigned(a.i, ot), y = toUnsigned(b.i, ot);
    return y ? x / y : 0;
  }
  case OpCode::RemSI: {
    const long long x = toSigned(a.i, ot), y = toSigned(b.i, ot);
    if (y == 0 || y == -1)
      return 0;
    return static_cast<u64>(x % y);
  }
  case OpCode::RemUI: {
    const u64 x = toUnsigned(a.i, ot), y = toUnsigned(b.i, ot);
    return y ? x % y : 0;
  }
  case OpCode::MaxSI: {
    const long long x = toSigned(a.i, ot), y = toSigned(b.i, ot);
    return static_cast<u64>(x > y ? x : y);
  }
  case OpCode::MinSI: {
    const long long x = toSigned(a.i, ot), y = toSigned(b.i, ot);
    return static_cast<u64>(x < y ? x : y);
  }
  case OpCode::AndI:
    return static_cast<u64>(a.i & b.i);
  case OpCode::OrI:
    return static_cast<u64>(a.i | b.i);
  case OpCode::XOrI:
    return static_cast<u64>(a.i ^ b.i);
  case OpCode::ShLI: {
    const u64 amount = toUnsigned(b.i, ot);
    return amount >= width ? 0 : static_cast<u64>(a.i) << amount;
  }
  case OpCode::ShRSI: {
    const long long x = toSigned(a.i, ot);
    const u64 amount = toUnsigned(b.i, ot);
    return static_cast<u64>(amount >= width ? (x < 0 ? -1 : 0) : x >> amount);
  }
  case OpCode::ShRUI: {
    const u64 amount = toUnsigned(b.i, ot);
    return amount >= width ? 0 : toUnsigned(a.i, ot) >> amount;
  }
  case OpCode::FPToSI:
    return static_cast<u64>(floatToSigned(a.f, bitWidthOf(p.resultType)));
  case OpCode::FPToUI:
    return floatToUnsigned(a.f, bitWidthOf(p.resultType));
  case OpCode::IndexCast:
  case OpCode::ExtSI:
    return static_cast<u64>(toSigned(a.i, ot));
  case OpCode::ExtUI:
    return toUnsigned(a.i, ot);
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
  case OpCode::Constant:
    return p.constant;
  case OpCode::CmpF:
    out.i = compareFloats(p.pred, a.f, b.f) ? 1 : 0;
    return out;
  case OpCode::CmpI:
    out.i = compareInts(p.pred, a.i, b.i, ot) ? 1 : 0;
    return out;
  case OpCode::Select:
    return a.i ? b : c;
  case OpCode::Bitcast:
    if (ot == rt)
      return a;
    if (ot == DType::F32) {
      out.i = static_cast<int32_t>(__float_as_uint(__double2float_rn(a.f)));
    } else if (rt == DType::F32) {
      out.f = static_cast<double>(__uint_as_float(static_cast<uint32_t>(a.i)));
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

} // namespace

bool isScalarOpCode(OpCode code) {
  const OpInfo &info = getOpInfo(code);
  return info.placement == OpPlacement::Scalar;
}

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
  if (p.code == OpCode::Constant)
    p.constant = constantRegister(
        inst.fields.getConstant(Field::Value).elements[0], p.resultType);
  if (p.code == OpCode::CmpF || p.code == OpCode::CmpI) {
    const std::string &name = inst.fields.getString(Field::Predicate);
    bool found = false;
    auto search = [&](const auto &table) {
      for (const PredicateName &entry : table)
        if (name == entry.name) {
          p.pred = entry.pred;
          found = true;
        }
    };
    if (p.code == OpCode::CmpF)
      search(kCmpF);
    else
      search(kCmpI);
    if (!found) // the host's checks refuse it first
      return ZERO_ERROR(kInvalidArgument,
                        ctx.siteMessage(inst, "predicate",
                                        "unknown predicate '" + name + "'"));
  }
  return std::unique_ptr<PreparedOp>(new ScalarInstruction(ctx, p));
}

} // namespace zero::runtime::cuda
