//===- Structured.cpp - linalg.map/reduce/generic on the GPU --------------===//

#include "Structured.h"

#include "Codegen.h"
#include "KernelCache.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

namespace zero::runtime::cuda {

namespace {

constexpr int kMaxBlockSize = 256;
constexpr int kMinBlockSize = 32;
/// Threads an H100-class multiprocessor keeps resident.
constexpr int kThreadsPerMultiprocessor = 2048;

/// How to name an out-of-range tensor.extract of the body, as the host does.
struct ExtractMessage {
  std::string prefix; // "<schedule>: <path>.body.ops[i]: "
  std::string tensor; // "value 5 (%t)"
  std::vector<int64_t> shape;
  std::string suffix; // " at <loc>"
};

class StructuredOp final : public PreparedOp {
public:
  StructuredOp(cudaStream_t stream, cudaKernel_t kernel, dim3 grid, dim3 block,
               std::vector<void *> arguments)
      : stream_(stream), kernel_(kernel), grid_(grid), block_(block),
        arguments_(std::move(arguments)) {
    for (void *&argument : arguments_)
      argumentPointers_.push_back(&argument);
  }

  ~StructuredOp() override {
    for (const Move &move : moves_)
      (void)cudaFree(move.scratch);
    if (deviceRecord_)
      (void)cudaFree(deviceRecord_);
    if (hostRecord_)
      (void)cudaFreeHost(hostRecord_);
  }

  /// Copies `bytes` from `src` to `dst` (ranges that overlap) before each
  /// launch, through scratch memory allocated here.
  Status addMove(void *dst, const void *src, int64_t bytes) {
    void *scratch = nullptr;
    ZERO_CUDA_RETURN_IF_ERROR(cudaMalloc(&scratch, static_cast<size_t>(bytes)));
    moves_.push_back({dst, src, static_cast<size_t>(bytes), scratch});
    return Status::ok();
  }

  /// Allocates the error record (the last kernel argument) for a body with
  /// tensor.extract.
  Status addErrorRecord(std::vector<ExtractMessage> messages) {
    messages_ = std::move(messages);
    void *device = nullptr;
    ZERO_CUDA_RETURN_IF_ERROR(cudaMalloc(&device, sizeof(KernelErrorRecord)));
    deviceRecord_ = device;
    // Ordered before every launch of the op, whatever the stream's flags.
    ZERO_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(device, 0, sizeof(KernelErrorRecord), stream_));
    void *host = nullptr;
    ZERO_CUDA_RETURN_IF_ERROR(
        cudaHostAlloc(&host, sizeof(KernelErrorRecord), cudaHostAllocDefault));
    hostRecord_ = new (host) KernelErrorRecord();
    arguments_.push_back(deviceRecord_);
    argumentPointers_.clear();
    for (void *&argument : arguments_)
      argumentPointers_.push_back(&argument);
    return Status::ok();
  }

  Status run(int64_t step) override {
    if (hostRecord_ &&
        *static_cast<volatile int32_t *>(&hostRecord_->found) != 0)
      return extractError(step);
    for (const Move &move : moves_) {
      ZERO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
          move.scratch, move.src, move.bytes, cudaMemcpyDefault, stream_));
      ZERO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
          move.dst, move.scratch, move.bytes, cudaMemcpyDefault, stream_));
    }
    if (grid_.x == 0)
      return Status::ok();
    ZERO_CUDA_RETURN_IF_ERROR(
        cudaLaunchKernel(reinterpret_cast<const void *>(kernel_), grid_, block_,
                         argumentPointers_.data(), 0, stream_));
    if (hostRecord_)
      ZERO_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(hostRecord_, deviceRecord_, sizeof(KernelErrorRecord),
                          cudaMemcpyDeviceToHost, stream_));
    return Status::ok();
  }

private:
  Status extractError(int64_t step) const {
    const KernelErrorRecord record = *hostRecord_;
    if (record.site < 0 ||
        record.site >= static_cast<int32_t>(messages_.size()) ||
        record.dim < 0 ||
        record.dim >= static_cast<int32_t>(messages_[record.site].shape.size()))
      return ZERO_ERROR(kInternal, "a generated kernel reported an error "
                                   "from an unknown tensor.extract");
    const ExtractMessage &message = messages_[record.site];
    return Status(StatusCode::kOutOfRange,
                  message.prefix + "tensor.extract index " +
                      std::to_string(record.index) +
                      " is out of range for dimension " +
                      std::to_string(record.dim) + " (size " +
                      std::to_string(message.shape[record.dim]) + ") of " +
                      message.tensor + message.suffix +
                      " (found on the GPU, in a step before step " +
                      std::to_string(step) + ")",
                  __FILE__, __LINE__);
  }

  struct Move {
    void *dst;
    const void *src;
    size_t bytes;
    void *scratch;
  };

  cudaStream_t stream_;
  cudaKernel_t kernel_;
  dim3 grid_, block_;
  std::vector<void *> arguments_;
  std::vector<void *> argumentPointers_;
  std::vector<Move> moves_;
  void *deviceRecord_ = nullptr;
  KernelErrorRecord *hostRecord_ = nullptr;
  std::vector<ExtractMessage> messages_;
};

bool overlaps(const void *a, int64_t aBytes, const void *b, int64_t bBytes) {
  if (aBytes <= 0 || bBytes <= 0)
    return false;
  const uintptr_t x = reinterpret_cast<uintptr_t>(a);
  const uintptr_t y = reinterpret_cast<uintptr_t>(b);
  return x < y + static_cast<uintptr_t>(bBytes) &&
         y < x + static_cast<uintptr_t>(aBytes);
}

} // namespace

PreparedOpOr prepareStructured(const Instruction &inst, CudaContext &ctx) {
  const std::string where = ctx.where(inst);
  if (!ctx.kernels)
    return ZERO_ERROR(kInternal, where + ": the CUDA device has no kernel "
                                         "cache");
  const ValueTable &values = ctx.schedule->values();
  StatusOr<LoopNest> nest = buildLoopNest(inst, values);
  if (!nest.isOk())
    return Status(nest.status().code(), where + ": " + nest.status().message(),
                  __FILE__, __LINE__);

  // Inputs sharing no byte with a result are read through __restrict__.
  bool restrictInputs = true;
  for (const NestOperand &input : nest->inputs)
    for (int64_t result : nest->results) {
      const ValueInfo &out = ctx.value(result);
      if (overlaps(ctx.tensor(input.value),
                   input.numel * getDTypeWidth(input.dtype), ctx.tensor(result),
                   out.numel * getDTypeWidth(out.dtype)))
        restrictInputs = false;
    }
  CodegenOptions options;
  options.restrictInputs = restrictInputs;
  options.maxBlockSize = kMaxBlockSize;
  StatusOr<GeneratedKernel> kernel = generateKernel(*nest, values, options);
  if (!kernel.isOk())
    return Status(kernel.status().code(),
                  where + ": " + kernel.status().message(), __FILE__, __LINE__);
  StatusOr<cudaKernel_t> handle =
      ctx.kernels->getKernel(kernel->source, kernel->name);
  if (!handle.isOk())
    return Status(handle.status().code(),
                  where + ": " + handle.status().message(), __FILE__, __LINE__);

  // Arguments in GeneratedKernel's order.
  std::vector<void *> arguments;
  for (size_t o = 0; o < nest->outputs.size(); ++o) {
    arguments.push_back(ctx.tensor(nest->results[o]));
    arguments.push_back(ctx.tensor(nest->outputs[o].value));
  }
  for (const NestOperand &input : nest->inputs)
    arguments.push_back(ctx.tensor(input.value));
  for (int64_t id : kernel->scalars)
    arguments.push_back(ctx.registers + id);
  for (int64_t id : kernel->tensors)
    arguments.push_back(ctx.tensor(id));

  // The launch shape: one thread per parallel point; smaller blocks when
  // the points are few, so that every multiprocessor gets some; at most one
  // wave of resident blocks, the grid-stride loop doing the rest.
  dim3 grid(1), block(1);
  const int64_t numThreads = kernel->numThreads;
  if (numThreads == 0) {
    grid.x = 0; // nothing to compute: every output is empty
  } else if (!nest->sequential) {
    StatusOr<int> multiprocessors = ctx.kernels->multiProcessorCount();
    if (!multiprocessors.isOk())
      return multiprocessors.status();
    const int64_t sms = std::max(1, *multiprocessors);
    int blockSize = kMaxBlockSize;
    while (blockSize > kMinBlockSize && numThreads < blockSize * sms)
      blockSize /= 2;
    const int64_t blocks = (numThreads + blockSize - 1) / blockSize;
    const int64_t maxBlocks = sms * (kThreadsPerMultiprocessor / blockSize);
    block.x = static_cast<unsigned>(blockSize);
    grid.x = static_cast<unsigned>(std::min(blocks, maxBlocks));
  }

  // A destination that shares bytes with a result without being it: the
  // host moves it into its result first and reads it there; so does the op
  // (through scratch memory, since the ranges overlap).
  std::vector<size_t> moved;
  for (size_t o = 0; o < nest->outputs.size(); ++o) {
    const NestOperand &dest = nest->outputs[o];
    const int64_t bytes = dest.numel * getDTypeWidth(dest.dtype);
    const void *from = ctx.tensor(dest.value);
    if (from == ctx.tensor(nest->results[o]))
      continue;
    bool shared = false;
    for (int64_t result : nest->results)
      shared |= overlaps(from, bytes, ctx.tensor(result),
                         ctx.value(result).numel *
                             getDTypeWidth(ctx.value(result).dtype));
    if (shared) {
      moved.push_back(o);
      arguments[2 * o + 1] = ctx.tensor(nest->results[o]);
    }
  }

  auto op = std::make_unique<StructuredOp>(ctx.compute, *handle, grid, block,
                                           std::move(arguments));
  for (size_t o : moved) {
    const NestOperand &dest = nest->outputs[o];
    Status status =
        op->addMove(ctx.tensor(nest->results[o]), ctx.tensor(dest.value),
                    dest.numel * getDTypeWidth(dest.dtype));
    if (!status.isOk())
      return Status(status.code(), where + ": " + status.message(), __FILE__,
                    __LINE__);
  }
  if (!kernel->extractSites.empty()) {
    std::vector<ExtractMessage> messages;
    for (const ExtractSite &site : kernel->extractSites) {
      ExtractMessage message;
      message.prefix = ctx.schedule->name() + ": " + inst.path + ".body.ops[" +
                       std::to_string(site.bodyOp) + "]: ";
      message.tensor = ctx.schedule->describeValue(site.tensor);
      message.shape = ctx.value(site.tensor).shape;
      message.suffix =
          " at " +
          (inst.loc.empty() ? std::string("an unknown location") : inst.loc);
      messages.push_back(std::move(message));
    }
    Status status = op->addErrorRecord(std::move(messages));
    if (!status.isOk())
      return Status(status.code(), where + ": " + status.message(), __FILE__,
                    __LINE__);
  }
  return std::unique_ptr<PreparedOp>(std::move(op));
}

} // namespace zero::runtime::cuda
