//===- ScalarOps.cu - arith and math ops on the device's registers --------===//
//
// A top-level scalar op reads and writes the register file in device memory
// (CudaContext::registers), so it runs as a one-thread kernel on the compute
// stream, ordered with the kernels that produce and consume its operands; a
// host round trip per scalar would stall the stream. A constant is the
// exception: its register is written once, when the schedule is loaded (a
// GPT-2 step has some 400 of them). What an op computes is
// ops/ScalarMath.h's, the host's: floats in double rounded to the result
// type after every op, integers wrapped. Transcendentals are CUDA's double
// libm (within 2 ulp of glibc's), which rounding to f32 or narrower nearly
// always hides.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "ScalarKernels.cuh"

#include "ops/ScalarOp.h"

namespace zero::runtime::cuda {

namespace {

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

PreparedOpOr prepareScalarOp(const Instruction &inst, const ops::ScalarOp &op,
                             const CudaContext &ctx) {
  StatusOr<ScalarParams> p = getScalarParams(inst, op);
  if (!p.isOk())
    return ZERO_ERROR(kInternal, ctx.where(inst) + ": " + p.status().message());
  if (p->op.kind == ops::ScalarOpKind::Constant) {
    // Written once, now (the schedule's load): nothing else writes a
    // value's register, and every step would write the same bits.
    ZERO_RETURN_IF_ERROR(copyToDeviceNow(ctx.registers + p->result,
                                         &p->op.constant, sizeof(Scalar)));
    return std::unique_ptr<PreparedOp>(new LoadedConstant());
  }
  return std::unique_ptr<PreparedOp>(new ScalarInstruction(ctx, *p));
}

} // namespace zero::runtime::cuda
