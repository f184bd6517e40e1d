//===- Optimizers.cu - zero.adam, zero.sgd, zero.any_nonfinite -----------===//
//
// Fused optimizer steps: one pass over memory that reads param, grad and
// the states and writes param and the states, with ops/OptimizerMath.h's
// update and ops/ElementMath.h's conversions, the host's (the kernels are
// OptimizerKernels.cuh, their tables planned by OptimizerTables.h): math in f32
// (f64 for f64 parameters), fused multiply-adds where it writes fma and none
// elsewhere (nvcc builds with
// --fmad=false), and the per-step scalars (bias corrections, -lr / bc1,
// 1 - lr * wd) computed in double from the lr, step and (if scheduled) beta1
// registers. So results equal the host's bit for bit, except where CUDA's
// double pow differs from glibc's in the last ulp and that ulp survives the
// rounding of bc1 or sqrt(bc2) to f32 (rare; see the tests' tolerances).
//
// Every launch is a multi-tensor apply: a table of tensors (one per
// instruction) and a table of chunks of up to 64K elements, one block per
// chunk, so that one launch serves every parameter of a step.
// prepareOptimizerOp uses it with one instruction; prepareAdamGroup /
// prepareSgdGroup take a run of them (getOptimizerRunLength), each
// optionally followed by the linalg.map that casts its new parameter to 16
// bits (isOptimizerParamCast), which the kernel writes as it stores the
// parameter: one pass instead of a second launch that reads it back. Each
// thread updates four elements per iteration with vector loads and stores
// (float4 for f32, 8 bytes for bf16 and f16) where every tensor of the
// instruction is f32, bf16 or f16 and aligned to four elements; the rest
// (f64 parameters, unaligned tensors, a chunk's last elements) one element
// at a time.
//
// Under a loss scale each tensor's gradient is unscaled and clipped as it
// is loaded (ops::scaleGradient), and a true skip register leaves the
// states as the operands were (the results already hold them) and writes
// only the fused 16-bit copy. zero.any_nonfinite, the overflow check that
// makes that register, is the same multi-tensor apply over the gradients,
// in one launch.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "OptimizerKernels.cuh"
#include "OptimizerTables.h"
#include "ops/OptimizerOperands.h"

#include <cstring>

namespace zero::runtime::cuda {

namespace {

class AnyNonFiniteOp final : public PreparedOp {
public:
  AnyNonFiniteOp(const CudaContext &ctx, DeviceAllocation tensors,
                 DeviceAllocation chunks, DeviceAllocation tally,
                 int64_t numChunks, int64_t flag)
      : ctx_(ctx), tensors_(std::move(tensors)), chunks_(std::move(chunks)),
        tally_(std::move(tally)), numChunks_(numChunks), flag_(flag) {}

  Status run(int64_t) override {
    // Only empty tensors to check: no element is non-finite, and a grid of
    // no blocks is not a launch.
    if (numChunks_ == 0) {
      ZERO_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(ctx_.registers + flag_, 0,
                                                sizeof(Scalar), ctx_.compute));
      return Status::ok();
    }
    clearStaleError();
    anyNonFiniteKernel<<<static_cast<unsigned>(numChunks_), kOptimizerThreads,
                         0, ctx_.compute>>>(
        static_cast<const CheckedTensor *>(tensors_.get()),
        static_cast<const Chunk *>(chunks_.get()),
        static_cast<NonFiniteTally *>(tally_.get()), ctx_.registers, flag_);
    ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  DeviceAllocation tensors_;
  DeviceAllocation chunks_;
  DeviceAllocation tally_;
  int64_t numChunks_;
  int64_t flag_;
};

//===----------------------------------------------------------------------===//
// Preparing
//===----------------------------------------------------------------------===//

/// A multi-tensor apply's tables in device memory: one entry per tensor, one
/// per chunk (a block).
struct ApplyTables {
  DeviceAllocation tensors;
  DeviceAllocation chunks;
};

template <typename Tensor>
StatusOr<ApplyTables> uploadTables(const std::vector<Tensor> &tensors,
                                   const std::vector<Chunk> &chunks,
                                   const CudaContext &ctx) {
  StatusOr<DeviceAllocation> tensorTable = DeviceAllocation::upload(
      tensors.data(), static_cast<int64_t>(tensors.size() * sizeof(Tensor)),
      *ctx.tracker);
  if (!tensorTable.isOk())
    return tensorTable.status();
  StatusOr<DeviceAllocation> chunkTable = DeviceAllocation::upload(
      chunks.data(), static_cast<int64_t>(chunks.size() * sizeof(Chunk)),
      *ctx.tracker);
  if (!chunkTable.isOk())
    return chunkTable.status();
  return ApplyTables{std::move(*tensorTable), std::move(*chunkTable)};
}

/// A group of instructions of one optimizer, as one launch.
class OptimizerOp final : public PreparedOp {
public:
  OptimizerOp(const CudaContext &ctx, DeviceErrorRecord *errors, bool adam,
              std::vector<PreparedMove> moves, DeviceAllocation tensors,
              DeviceAllocation chunks, int64_t numChunks)
      : ctx_(ctx), errors_(errors), adam_(adam), moves_(std::move(moves)),
        tensors_(std::move(tensors)), chunks_(std::move(chunks)),
        numChunks_(numChunks) {}

  Status run(int64_t step) override {
    for (const PreparedMove &move : moves_)
      ZERO_RETURN_IF_ERROR(move.enqueue(ctx_.compute));
    if (numChunks_ == 0)
      return Status::ok();
    const auto *tensors = static_cast<const OptimizerTensor *>(tensors_.get());
    const auto *chunks = static_cast<const Chunk *>(chunks_.get());
    const unsigned grid = static_cast<unsigned>(numChunks_);
    clearStaleError();
    if (adam_)
      adamKernel<<<grid, kOptimizerThreads, 0, ctx_.compute>>>(
          tensors, chunks, ctx_.registers, errors_, step);
    else
      sgdKernel<<<grid, kOptimizerThreads, 0, ctx_.compute>>>(tensors, chunks,
                                                              ctx_.registers);
    ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  DeviceErrorRecord *errors_;
  bool adam_;
  std::vector<PreparedMove> moves_;
  DeviceAllocation tensors_;
  DeviceAllocation chunks_;
  int64_t numChunks_;
};

PreparedOpOr prepareGroup(const std::vector<const Instruction *> &group,
                          const CudaContext &ctx, bool adam) {
  auto addSite = [&ctx](const Instruction &inst, size_t operand,
                        bool beta1) -> int32_t {
    const std::string head =
        ctx.sitePrefix(inst, "operands[" + std::to_string(operand) + "]");
    const std::string tail = CudaContext::siteSuffix(inst);
    if (!beta1)
      return ctx.errors->addSite(
          StatusCode::kOutOfRange, [head, tail](const DeviceErrorRecord &r) {
            return head + ops::describeAdamStepError(r.value) + tail;
          });
    return ctx.errors->addSite(
        StatusCode::kOutOfRange, [head, tail](const DeviceErrorRecord &r) {
          double beta1;
          std::memcpy(&beta1, &r.value, sizeof(beta1));
          return head + ops::describeAdamBeta1Error(beta1) + tail;
        });
  };
  StatusOr<OptimizerTables> planned = planOptimizerGroup(
      group, ctx.schedule->values(), adam,
      [&ctx](int64_t id) { return ctx.tensor(id); }, addSite,
      [&ctx](const Instruction &inst) { return ctx.where(inst); });
  if (!planned.isOk())
    return planned.status();
  std::vector<PreparedMove> moves;
  for (const OptimizerMove &m : planned->moves) {
    const ValueInfo &value = ctx.value(m.operand);
    StatusOr<PreparedMove> move = PreparedMove::create(
        ctx.tensor(m.result), ctx.tensor(m.operand),
        value.numel * byteWidthOf(value.dtype), *ctx.tracker);
    if (!move.isOk())
      return move.status();
    if (!move->empty())
      moves.push_back(std::move(*move));
  }
  StatusOr<ApplyTables> tables =
      uploadTables(planned->tensors, planned->chunks, ctx);
  if (!tables.isOk())
    return tables.status();
  return std::unique_ptr<PreparedOp>(
      new OptimizerOp(ctx, ctx.errors->record(), adam, std::move(moves),
                      std::move(tables->tensors), std::move(tables->chunks),
                      static_cast<int64_t>(planned->chunks.size())));
}

} // namespace

PreparedOpOr prepareAdamGroup(const std::vector<const Instruction *> &group,
                              const CudaContext &ctx) {
  return prepareGroup(group, ctx, true);
}

PreparedOpOr prepareSgdGroup(const std::vector<const Instruction *> &group,
                             const CudaContext &ctx) {
  return prepareGroup(group, ctx, false);
}

PreparedOpOr prepareOptimizerOp(const Instruction &inst,
                                const CudaContext &ctx) {
  return prepareGroup({&inst}, ctx, inst.code() == OpCode::Adam);
}

PreparedOpOr prepareAnyNonFiniteOp(const Instruction &inst,
                                   const CudaContext &ctx) {
  std::vector<CheckedTensor> tensors;
  std::vector<Chunk> chunks;
  for (int64_t id : inst.operands) {
    const ValueInfo &value = ctx.value(id);
    addChunks(static_cast<int32_t>(tensors.size()), value.numel, chunks);
    tensors.push_back({ctx.tensor(id), value.dtype});
  }
  if (chunks.size() > 0x7fffffffu)
    return ZERO_ERROR(kInvalidArgument,
                      ctx.where(inst) + ": more than 2^31 chunks to check");
  StatusOr<ApplyTables> tables = uploadTables(tensors, chunks, ctx);
  if (!tables.isOk())
    return tables.status();
  const NonFiniteTally zero{0, 0};
  StatusOr<DeviceAllocation> tally =
      DeviceAllocation::upload(&zero, sizeof(zero), *ctx.tracker);
  if (!tally.isOk())
    return tally.status();
  return std::unique_ptr<PreparedOp>(new AnyNonFiniteOp(
      ctx, std::move(tables->tensors), std::move(tables->chunks),
      std::move(*tally), static_cast<int64_t>(chunks.size()), inst.results[0]));
}

} // namespace zero::runtime::cuda
