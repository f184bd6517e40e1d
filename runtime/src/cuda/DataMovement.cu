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

#include "DeviceElements.cuh"
#include "ops/CopyShape.h"

#include <algorithm>

namespace zero::runtime::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxRank = 8;

struct CopyParams {
  char *dst;
  const char *src;
  int rank;
  int64_t numel;
  int64_t sizes[kMaxRank];
  int64_t dstStrides[kMaxRank]; // in elements
  int64_t srcStrides[kMaxRank];
};

template <typename E, typename I>
__global__ void __launch_bounds__(kThreads) stridedCopyKernel(CopyParams p) {
  E *dst = reinterpret_cast<E *>(p.dst);
  const E *src = reinterpret_cast<const E *>(p.src);
  const I numel = static_cast<I>(p.numel);
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += stride) {
    I rest = i, d = 0, s = 0;
#pragma unroll
    for (int k = kMaxRank - 1; k >= 0; --k) {
      if (k >= p.rank)
        continue;
      const I size = static_cast<I>(p.sizes[k]);
      const I index = rest % size;
      rest /= size;
      d += index * static_cast<I>(p.dstStrides[k]);
      s += index * static_cast<I>(p.srcStrides[k]);
    }
    dst[d] = src[s];
  }
}

/// dst[outer + r * rowStride + c] = src[outer' + r + c * colStride] for the
/// two innermost dimensions (rows, cols), through a shared-memory tile; the
/// outer dimensions (rank - 2 of them) are walked by blockIdx.z.
template <typename E>
__global__ void __launch_bounds__(256) transposeKernel(CopyParams p) {
  constexpr int kTile = 32;
  __shared__ E tile[kTile][kTile + 1];
  E *dst = reinterpret_cast<E *>(p.dst);
  const E *src = reinterpret_cast<const E *>(p.src);
  const int r = p.rank;
  const int64_t rows = p.sizes[r - 2], cols = p.sizes[r - 1];
  const int64_t rowStride = p.dstStrides[r - 2]; // dst stride of a row
  const int64_t colStride = p.srcStrides[r - 1]; // src stride of a column
  const int64_t rowBase = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t colBase = static_cast<int64_t>(blockIdx.x) * kTile;
  int64_t outerCount = 1;
  for (int k = 0; k < r - 2; ++k)
    outerCount *= p.sizes[k];
  for (int64_t outer = blockIdx.z; outer < outerCount; outer += gridDim.z) {
    int64_t rest = outer, d = 0, s = 0;
    for (int k = r - 3; k >= 0; --k) {
      const int64_t index = rest % p.sizes[k];
      rest /= p.sizes[k];
      d += index * p.dstStrides[k];
      s += index * p.srcStrides[k];
    }
    // Read along rows (contiguous in src), one column per thread row.
    for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
      const int64_t row = rowBase + threadIdx.x, col = colBase + j;
      if (row < rows && col < cols)
        tile[j][threadIdx.x] = src[s + row + col * colStride];
    }
    __syncthreads();
    // Write along columns (contiguous in dst).
    for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
      const int64_t row = rowBase + j, col = colBase + threadIdx.x;
      if (row < rows && col < cols)
        dst[d + row * rowStride + col] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

/// A copy as the planner left it.
struct CopyPlan {
  CopyKind kind = CopyKind::Empty;
  int width = 1;
  bool index32 = false;
  CopyParams params{};
};

/// Plans dst[dstOffset + i . ds] = src[srcOffset + i . ss] over `shape`
/// (strides and offsets in elements of `width` bytes).
StatusOr<CopyPlan> planCopy(const CudaContext &ctx, const Instruction &inst,
                            char *dst, const char *src,
                            const std::vector<int64_t> &shape,
                            const std::vector<int64_t> &dstStrides,
                            const std::vector<int64_t> &srcStrides,
                            int64_t dstOffset, int64_t srcOffset,
                            int64_t width) {
  CopyPlan plan;
  ops::CopyShape copy = ops::simplifyCopy(shape, dstStrides, srcStrides);
  plan.kind = chooseCopyKind(copy, width);
  if (plan.kind == CopyKind::Empty)
    return plan; // nothing to copy
  std::vector<int64_t> &sizes = copy.sizes, &ds = copy.dstStrides,
                       &ss = copy.srcStrides;
  dst += dstOffset * width;
  src += srcOffset * width;
  if (sizes.empty()) { // one element
    sizes.push_back(1);
    ds.push_back(1);
    ss.push_back(1);
  }
  const size_t rank = sizes.size();
  plan.params.dst = dst;
  plan.params.src = src;
  plan.width = static_cast<int>(width);

  if (plan.kind == CopyKind::Memcpy) {
    plan.params.numel = sizes[0];
    plan.params.rank = 1;
    plan.params.sizes[0] = sizes[0];
    return plan;
  }
  if (rank > static_cast<size_t>(kMaxRank))
    return ZERO_ERROR(kInvalidArgument,
                      ctx.where(inst) +
                          ": the CUDA backend copies tensors of at most " +
                          std::to_string(kMaxRank) +
                          " dimensions once contiguous ones are merged, got " +
                          std::to_string(rank));

  // The strided copy kernel moves the widest elements the copy allows.
  if (plan.kind == CopyKind::Generic)
    width =
        ops::widenCopyElements(copy, width, reinterpret_cast<uintptr_t>(dst),
                               reinterpret_cast<uintptr_t>(src));
  plan.width = static_cast<int>(width);
  plan.params.rank = static_cast<int>(rank);
  int64_t numel = 1, dstSpan = 0, srcSpan = 0;
  for (size_t k = 0; k < rank; ++k) {
    plan.params.sizes[k] = sizes[k];
    plan.params.dstStrides[k] = ds[k];
    plan.params.srcStrides[k] = ss[k];
    numel *= sizes[k];
    dstSpan += (sizes[k] - 1) * ds[k];
    srcSpan += (sizes[k] - 1) * ss[k];
  }
  plan.params.numel = numel;
  constexpr int64_t kMax32 = int64_t(1) << 31;
  plan.index32 = numel < kMax32 && dstSpan < kMax32 && srcSpan < kMax32;
  return plan;
}

template <typename E>
Status launchGeneric(const CopyPlan &plan, cudaStream_t stream) {
  const unsigned grid = gridFor(plan.params.numel, kThreads);
  clearStaleError();
  if (plan.index32)
    stridedCopyKernel<E, uint32_t><<<grid, kThreads, 0, stream>>>(plan.params);
  else
    stridedCopyKernel<E, int64_t><<<grid, kThreads, 0, stream>>>(plan.params);
  ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::ok();
}

template <typename E>
Status launchTranspose(const CopyPlan &plan, cudaStream_t stream) {
  const CopyParams &p = plan.params;
  const int r = p.rank;
  int64_t outer = 1;
  for (int k = 0; k < r - 2; ++k)
    outer *= p.sizes[k];
  dim3 grid(static_cast<unsigned>((p.sizes[r - 1] + 31) / 32),
            static_cast<unsigned>((p.sizes[r - 2] + 31) / 32),
            static_cast<unsigned>(std::min<int64_t>(outer, 65535)));
  clearStaleError();
  transposeKernel<E><<<grid, dim3(32, 8), 0, stream>>>(p);
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

__global__ void castKernel(void *dst, DType to, const void *src, DType from,
                           int64_t numel) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel;
       i += int64_t(gridDim.x) * blockDim.x)
    storeElement(dst, to, i, castScalar(loadElement(src, from, i), from, to));
}

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
    castKernel<<<gridFor(numel_, kThreads), kThreads, 0, ctx_.compute>>>(
        dst_, to_, src_, from_, numel_);
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
      ctx, inst, dst, static_cast<const char *>(ctx.tensor(copy.source)),
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
