//===- ScalarKernels.cuh - scalar ops on the device's registers -*- CUDA
//-*-===//
//
// The one-thread kernel of a top-level scalar op (ScalarOps.cu's file
// comment says why and with what semantics: host/ScalarOps.cpp's, case by
// case). Device code with no CUDA header: nvcc compiles it in ScalarOps.cu,
// and ScalarKernelsOnCpuTest with the host compiler for the CPU
// (runtime/test/cuda/KernelsOnCpu.h), against the host's every op.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_SCALARKERNELS_CUH
#define ZERO_RUNTIME_CUDA_SCALARKERNELS_CUH

#include "ScalarParams.h"
#include "ops/ElementMath.h"
#include "ops/Elements.h"

namespace zero::runtime::cuda {

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
    return ops::signedToFloat(
        ops::toSigned(a.i, ops::bitWidthOf(p.operandType)), p.resultType);
  case OpCode::UIToFP:
    return ops::unsignedToFloat(
        ops::toUnsigned(a.i, ops::bitWidthOf(p.operandType)), p.resultType);
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
    return p.resultType == DType::F64 ? tanh(x) : ops::tanhForNarrowResult(x);
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
  const int width = ops::bitWidthOf(p.operandType);
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
    return static_cast<u64>(
        ops::floatToSigned(a.f, ops::bitWidthOf(p.resultType)));
  case OpCode::FPToUI:
    return ops::floatToUnsigned(a.f, ops::bitWidthOf(p.resultType));
  case OpCode::IndexCast:
  case OpCode::ExtSI:
    return static_cast<u64>(ops::toSigned(a.i, width));
  case OpCode::ExtUI:
    return ops::toUnsigned(a.i, width);
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
    out.i = ops::compareInts(p.pred, a.i, b.i, ops::bitWidthOf(ot)) ? 1 : 0;
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
  if (ops::isFloatType(rt))
    out.f = ops::roundFloat(floatValue(p, a, b), rt);
  else
    out.i = ops::wrapInt(static_cast<long long>(intValue(p, a, b)), rt);
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

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_SCALARKERNELS_CUH
