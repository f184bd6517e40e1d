//===- DataMovement.cu - strided copies of tensor memory ------------------===//
//
// linalg.transpose, linalg.broadcast (stride 0), linalg.copy, the static
// slices, the reshapes that need a copy, and zero.local_shard. Every one but
// the dtype-changing linalg.copy is "for each index of a shape, dst[i . ds]
// = src[i . ss]" over elements of a width, and runs through one planner:
//
//  1. drop unit dimensions and merge the ones contiguous on both sides
//     (ops/CopyShape.h, as the host does), so most copies end up rank 1 or 2;
//  2. a rank-1 contiguous copy is a cudaMemcpyAsync;
//  3. a copy that swaps the two innermost dimensions (a transpose) goes
//     through 32x32 tiles in shared memory, so that both its reads and its
//     writes are coalesced;
//  4. anything else is one grid-stride kernel that decomposes the linear
//     index, with 32-bit index math when every offset fits (64-bit
//     divisions are several times slower), and elements widened up to 16
//     bytes when the innermost dimension is contiguous on both sides and the
//     addresses allow it.
//
//===----------------------------------------------------------------------===//

#include "CopyKernels.cuh"
#include "CopyPlan.h"
#include "DeviceElements.cuh"

#include <algorithm>

namespace zero::runtime::cuda {

namespace {

dim3 getGrid(const CopyLaunch &launch) {
  return dim3(launch.grid[0], launch.grid[1], launch.grid[2]);
}
dim3 getBlock(const CopyLaunch &launch) {
  return dim3(launch.block[0], launch.block[1], launch.block[2]);
}

template <typename E>
Status launchGeneric(const CopyPlan &plan, cudaStream_t stream) {
  const CopyLaunch launch = getCopyLaunch(plan);
  clearStaleError();
  if (plan.index32)
    stridedCopyKernel<E, uint32_t>
        <<<getGrid(launch), getBlock(launch), 0, stream>>>(plan.params);
  else
    stridedCopyKernel<E, int64_t>
        <<<getGrid(launch), getBlock(launch), 0, stream>>>(plan.params);
  ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::ok();
}

template <typename E>
Status launchTranspose(const CopyPlan &plan, cudaStream_t stream) {
  const CopyLaunch launch = getCopyLaunch(plan);
  clearStaleError();
  transposeKernel<E>
      <<<getGrid(launch), getBlock(launch), 0, stream>>>(plan.params);
  ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::ok();
}

Status launchCopy(const CopyPlan &plan, cudaStream_t stream) {
  switch (plan.kind) {
  case CopyKind::Empty:
    return Status::ok();
  case CopyKind::Memcpy:
    ZERO_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(plan.params.dst, plan.params.src,
                        static_cast<size_t>(plan.params.numel * plan.width),
                        cudaMemcpyDefault, stream));
    return Status::ok();
  case CopyKind::Transpose:
    switch (plan.width) {
    case 1:
      return launchTranspose<uint8_t>(plan, stream);
    case 2:
      return launchTranspose<uint16_t>(plan, stream);
    case 4:
      return launchTranspose<uint32_t>(plan, stream);
    default:
      return launchTranspose<uint64_t>(plan, stream);
    }
  case CopyKind::Generic:
    switch (plan.width) {
    case 1:
      return launchGeneric<uint8_t>(plan, stream);
    case 2:
      return launchGeneric<uint16_t>(plan, stream);
    case 4:
      return launchGeneric<uint32_t>(plan, stream);
    case 8:
      return launchGeneric<uint64_t>(plan, stream);
    default:
      return launchGeneric<uint4>(plan, stream);
    }
  }
  return Status::ok();
}

/// A strided copy into the result, which first takes a copy of the
/// destination where one is given and lives apart (insert_slice).
class StridedCopyOp final : public PreparedOp {
public:
  StridedCopyOp(const CudaContext &ctx, PreparedMove init, CopyPlan plan)
      : ctx_(ctx), init_(std::move(init)), plan_(plan) {}
  Status run(int64_t) override {
    ZERO_RETURN_IF_ERROR(init_.enqueue(ctx_.compute));
    return launchCopy(plan_, ctx_.compute);
  }

private:
  const CudaContext &ctx_;
  PreparedMove init_;
  CopyPlan plan_;
};

/// Bytes from one place to another (a reshape that is not a view, a
/// same-type linalg.copy).
class MoveOp final : public PreparedOp {
public:
  MoveOp(const CudaContext &ctx, PreparedMove move)
      : ctx_(ctx), move_(std::move(move)) {}
  Status run(int64_t) override { return move_.enqueue(ctx_.compute); }

private:
  const CudaContext &ctx_;
  PreparedMove move_;
};

/// linalg.copy between dtypes: host castScalar per element.
class CastCopyOp final : public PreparedOp {
public:
  CastCopyOp(const CudaContext &ctx, void *dst, DType to, const void *src,
             DType from, int64_t numel)
      : ctx_(ctx), dst_(dst), src_(src), to_(to), from_(from), numel_(numel) {}
  Status run(int64_t) override {
    if (numel_ == 0)
      return Status::ok();
    clearStaleError();
    castKernel<<<gridFor(numel_, kCopyThreads), kCopyThreads, 0,
                 ctx_.compute>>>(dst_, to_, src_, from_, numel_);
    ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  void *dst_;
  const void *src_;
  DType to_, from_;
  int64_t numel_;
};

/// zero.local_shard: the rank's part of the flat tensor, zeros after it.
class LocalShardOp final : public PreparedOp {
public:
  LocalShardOp(const CudaContext &ctx, std::string worldSizeError,
               PreparedMove owned, void *padding, int64_t paddingBytes)
      : ctx_(ctx), worldSizeError_(std::move(worldSizeError)),
        owned_(std::move(owned)), padding_(padding),
        paddingBytes_(paddingBytes) {}
  Status run(int64_t) override {
    // The host fails here, when the op runs, rather than at load.
    if (!worldSizeError_.empty())
      return Status(StatusCode::kFailedPrecondition, worldSizeError_, __FILE__,
                    __LINE__);
    ZERO_RETURN_IF_ERROR(owned_.enqueue(ctx_.compute));
    return enqueueFillPattern(padding_, paddingBytes_, 1, 0, ctx_.compute);
  }

private:
  const CudaContext &ctx_;
  std::string worldSizeError_;
  PreparedMove owned_;
  void *padding_;
  int64_t paddingBytes_;
};

/// linalg.transpose, linalg.broadcast and the static slices: the strided
/// copy ops::describeStridedCopy makes of them.
PreparedOpOr prepareStridedCopy(const Instruction &inst,
                                const CudaContext &ctx) {
  const ops::StridedCopy copy =
      ops::describeStridedCopy(inst, ctx.schedule->values());
  const int64_t width = copy.width;
  char *dst = static_cast<char *>(ctx.tensor(copy.result));
  PreparedMove init;
  if (copy.dest >= 0) {
    const ValueInfo &destValue = ctx.value(copy.dest);
    StatusOr<PreparedMove> move = PreparedMove::create(
        dst, ctx.tensor(copy.dest), destValue.numel * width, *ctx.tracker);
    if (!move.isOk())
      return move.status();
    init = std::move(*move);
  }
  StatusOr<CopyPlan> plan = planCopy(
      ctx.where(inst), dst, static_cast<const char *>(ctx.tensor(copy.source)),
      copy.shape, copy.dstStrides, copy.srcStrides, copy.dstOffset,
      copy.srcOffset, width);
  if (!plan.isOk())
    return plan.status();
  return std::unique_ptr<PreparedOp>(
      new StridedCopyOp(ctx, std::move(init), *plan));
}

PreparedOpOr makeMove(const CudaContext &ctx, void *dst, const void *src,
                      int64_t bytes) {
  StatusOr<PreparedMove> move =
      PreparedMove::create(dst, src, bytes, *ctx.tracker);
  if (!move.isOk())
    return move.status();
  if (move->empty())
    return std::unique_ptr<PreparedOp>(new NoOp());
  return std::unique_ptr<PreparedOp>(new MoveOp(ctx, std::move(*move)));
}

PreparedOpOr prepareCopy(const Instruction &inst, const CudaContext &ctx) {
  const ValueInfo &input = ctx.value(inst.operands[0]);
  const ValueInfo &result = ctx.value(inst.results[0]);
  if (input.dtype == result.dtype)
    return makeMove(ctx, ctx.tensor(result.id), ctx.tensor(input.id),
                    result.numel * byteWidthOf(result.dtype));
  return std::unique_ptr<PreparedOp>(
      new CastCopyOp(ctx, ctx.tensor(result.id), result.dtype,
                     ctx.tensor(input.id), input.dtype, result.numel));
}

PreparedOpOr prepareReshape(const Instruction &inst, const CudaContext &ctx) {
  const ValueInfo &source = ctx.value(inst.operands[0]);
  return makeMove(ctx, ctx.tensor(inst.results[0]), ctx.tensor(source.id),
                  source.numel * byteWidthOf(source.dtype));
}

PreparedOpOr prepareLocalShard(const Instruction &inst,
                               const CudaContext &ctx) {
  const ValueInfo &full = ctx.value(inst.operands[0]);
  const ValueInfo &shard = ctx.value(inst.results[0]);
  const PartitionLayout &layout = inst.fields.getLayout(Field::Layout);
  const int64_t width = byteWidthOf(full.dtype);
  std::string worldSizeError;
  if (!layout.fitsRanks(ctx.worldSize))
    worldSizeError = ctx.siteMessage(
        inst, "layout",
        "the layout is for " + std::to_string(layout.worldSize) +
            " ranks, but this run has " + std::to_string(ctx.worldSize) +
            ", not a multiple of them");
  const ElementRange owned =
      worldSizeError.empty() ? layout.ownedRange(ctx.rank) : ElementRange{};
  char *dst = static_cast<char *>(ctx.tensor(shard.id));
  const char *src = static_cast<const char *>(ctx.tensor(full.id));
  StatusOr<PreparedMove> move = PreparedMove::create(
      dst, src + owned.begin * width, owned.size() * width, *ctx.tracker);
  if (!move.isOk())
    return move.status();
  return std::unique_ptr<PreparedOp>(new LocalShardOp(
      ctx, std::move(worldSizeError), std::move(*move),
      dst + owned.size() * width, (layout.shardNumel - owned.size()) * width));
}

} // namespace

PreparedOpOr prepareDataMovementOp(const Instruction &inst,
                                   const CudaContext &ctx) {
  switch (inst.code()) {
  case OpCode::Transpose:
  case OpCode::Broadcast:
  case OpCode::ExtractSlice:
  case OpCode::InsertSlice:
    return prepareStridedCopy(inst, ctx);
  case OpCode::Copy:
    return prepareCopy(inst, ctx);
  case OpCode::CollapseShape:
  case OpCode::ExpandShape:
    return prepareReshape(inst, ctx);
  case OpCode::LocalShard:
    return prepareLocalShard(inst, ctx);
  default:
    return ZERO_ERROR(kInternal, ctx.where(inst) + ": not a data movement op");
  }
}

} // namespace zero::runtime::cuda
