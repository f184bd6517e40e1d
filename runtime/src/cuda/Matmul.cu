//===- Matmul.cu - linalg.matmul and linalg.batch_matmul ------------------===//
//
// C += A B per batch, row-major, into the result (which starts as a copy of
// C where it lives apart). cuBLAS is column-major, so the row-major product
// is computed as its transpose (MatmulParams.h's BlasGemmCall): an operand
// stored transposed (Gemm.h: a transpose the compiler folded into the GEMM)
// is read with CUBLAS_OP_T. beta = 1 accumulates into the result.
//
// Precision: f32 uses CUBLAS_COMPUTE_32F_PEDANTIC, so no TF32 or other
// reduced-precision path whatever the handle's math mode (the host computes
// in f32), unless the instruction rounds its operands to tf32
// (`round_operands`, compute-type=tf32): CUBLAS_COMPUTE_32F_FAST_TF32, the
// tensor cores' f32 mode, which the host emulates by rounding the operands
// to nearest even (ops::roundF32ToTF32) before its f32 product (the
// hardware's conversion is its own: a tie may round the other way, within
// the tolerance of a different summation order); f64 computes in f64; bf16
// and f16 operands accumulate in f32 (CUBLAS_COMPUTE_32F; the handle
// disallows reduced-precision reductions) into a C of their type or f32.
// These agree with the host within the
// rounding of a different summation order (and, for 16-bit C, much better
// than the host's per-op rounding to 16 bits: see the tests). A 16-bit C is
// rounded twice: cuBLAS rounds A B to 16 bits, then adds C and rounds again
// (measured on an H100, every algorithm and reduction scheme:
// benchmarks/gpu/diag/gemm16.cu); zero-model's mixed-precision matmuls
// accumulate into f32 C and round once.
//
// Every other combination (mixed operand types, integers) is a simple
// kernel with the host's exact semantics (MatmulKernels.cuh); it agrees
// with the host bit for bit.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "Gemm.h"
#include "MatmulKernels.cuh"

#include <optional>

namespace zero::runtime::cuda {

namespace {

constexpr int kThreads = 256;

/// How cuBLAS takes a combination of types, if it does.
struct BlasTypes {
  cudaDataType_t ab, c;
  cublasComputeType_t compute;
};

bool getBlasTypes(DType a, DType b, DType c, BlasTypes &types) {
  if (a != b)
    return false;
  switch (a) {
  case DType::F32:
    if (c != DType::F32)
      return false;
    types = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
    return true;
  case DType::F64:
    if (c != DType::F64)
      return false;
    types = {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    return true;
  case DType::BF16:
  case DType::F16: {
    const cudaDataType_t t = a == DType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
    if (c != a && c != DType::F32)
      return false;
    types = {t, c == a ? t : CUDA_R_32F, CUBLAS_COMPUTE_32F};
    return true;
  }
  default:
    return false;
  }
}

class MatmulOp final : public PreparedOp {
public:
  /// `init` is empty for a zero init (Instruction::zeroInit), which is not
  /// read: cuBLAS's beta is 0, and only the fallback kernel and an empty
  /// product need the result zeroed first.
  MatmulOp(const CudaContext &ctx, std::optional<PreparedMove> init,
           FallbackParams params, bool useBlas, BlasTypes types)
      : ctx_(ctx), init_(std::move(init)), p_(params), useBlas_(useBlas),
        types_(types) {}

  Status run(int64_t) override {
    const MatmulShape &s = p_.shape;
    const bool empty = s.batch == 0 || s.m == 0 || s.n == 0 || s.k == 0;
    if (init_) {
      ZERO_RETURN_IF_ERROR(init_->enqueue(ctx_.compute));
    } else if (empty || !useBlas_) {
      const int width = byteWidthOf(p_.cType);
      ZERO_RETURN_IF_ERROR(enqueueFillPattern(
          p_.c, s.batch * s.m * s.n * width, width, 0, ctx_.compute));
    }
    if (empty)
      return Status::ok();
    if (!useBlas_) {
      clearStaleError();
      matmulFallbackKernel<<<gridFor(s.batch * s.m * s.n, kThreads), kThreads,
                             0, ctx_.compute>>>(p_);
      ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      return Status::ok();
    }
    // The handle is bound to the compute stream and its workspace at load.
    const float oneF = 1.0f, zeroF = 0.0f;
    const double oneD = 1.0, zeroD = 0.0;
    const bool f64 = types_.compute == CUBLAS_COMPUTE_64F;
    const void *one = f64 ? static_cast<const void *>(&oneD)
                          : static_cast<const void *>(&oneF);
    const void *beta = init_ ? one
                       : f64 ? static_cast<const void *>(&zeroD)
                             : static_cast<const void *>(&zeroF);
    const BlasGemmCall call = getBlasGemmCall(s);
    ZERO_CUBLAS_RETURN_IF_ERROR(cublas().cublasGemmStridedBatchedEx_64(
        ctx_.blas, call.transposeFirst ? CUBLAS_OP_T : CUBLAS_OP_N,
        call.transposeSecond ? CUBLAS_OP_T : CUBLAS_OP_N, call.m, call.n,
        call.k, one, p_.b, types_.ab, call.firstLd, call.firstStride, p_.a,
        types_.ab, call.secondLd, call.secondStride, beta, p_.c, types_.c,
        call.resultLd, call.resultStride, call.batch, types_.compute,
        CUBLAS_GEMM_DEFAULT));
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  std::optional<PreparedMove> init_;
  FallbackParams p_;
  bool useBlas_;
  BlasTypes types_;
};

} // namespace

PreparedOpOr prepareMatmulOp(const Instruction &inst, const CudaContext &ctx) {
  const ValueInfo &a = ctx.value(inst.operands[0]);
  const ValueInfo &b = ctx.value(inst.operands[1]);
  const ValueInfo &c = ctx.value(inst.operands[2]);
  const ValueInfo &result = ctx.value(inst.results[0]);
  const GemmShape gemm = getGemmShape(inst, ctx.schedule->values());
  FallbackParams params;
  params.shape = getMatmulShape(gemm);
  params.a = ctx.tensor(a.id);
  params.b = ctx.tensor(b.id);
  params.c = ctx.tensor(result.id);
  params.aType = a.dtype;
  params.bType = b.dtype;
  params.cType = c.dtype;
  std::optional<PreparedMove> init;
  if (!inst.zeroInit) {
    StatusOr<PreparedMove> move =
        PreparedMove::create(params.c, ctx.tensor(c.id),
                             c.numel * byteWidthOf(c.dtype), *ctx.tracker);
    if (!move.isOk())
      return move.status();
    init = std::move(*move);
  }
  BlasTypes types{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
  const bool useBlas = getBlasTypes(a.dtype, b.dtype, c.dtype, types);
  // The host's check has read the field (f32 operands only).
  if (StatusOr<bool> tf32 = roundsOperandsToTf32(inst);
      useBlas && tf32.isOk() && *tf32)
    types.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  return std::unique_ptr<PreparedOp>(
      new MatmulOp(ctx, std::move(init), params, useBlas, types));
}

} // namespace zero::runtime::cuda
