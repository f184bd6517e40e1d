//===- Structured.cpp - linalg.map/reduce/generic on the GPU --------------===//

#include "Structured.h"

#include "Codegen.h"
#include "CudaOps.h"
#include "KernelCache.h"
#include "RowFusion.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zero::runtime::cuda {

namespace {

class StructuredOp final : public PreparedOp {
public:
  /// `arguments` are the kernel's pointer parameters (GeneratedKernel's
  /// order, the error record last when `reportsErrors`); the kernel then
  /// also takes its first error site and the step.
  StructuredOp(cudaStream_t stream, cudaKernel_t kernel, dim3 grid, dim3 block,
               std::vector<void *> arguments, std::vector<PreparedMove> moves,
               bool reportsErrors, int32_t firstSite)
      : stream_(stream), kernel_(kernel), grid_(grid), block_(block),
        arguments_(std::move(arguments)), moves_(std::move(moves)),
        firstSite_(firstSite) {
    for (void *&argument : arguments_)
      argumentPointers_.push_back(&argument);
    if (reportsErrors) {
      argumentPointers_.push_back(&firstSite_);
      argumentPointers_.push_back(&step_);
    }
  }

  Status run(int64_t step) override {
    for (const PreparedMove &move : moves_)
      ZERO_RETURN_IF_ERROR(move.enqueue(stream_));
    if (grid_.x == 0)
      return Status::ok();
    step_ = step; // cudaLaunchKernel copies the arguments
    ZERO_CUDA_RETURN_IF_ERROR(
        cudaLaunchKernel(reinterpret_cast<const void *>(kernel_), grid_, block_,
                         argumentPointers_.data(), 0, stream_));
    return Status::ok();
  }

private:
  cudaStream_t stream_;
  cudaKernel_t kernel_;
  dim3 grid_, block_;
  std::vector<void *> arguments_;
  std::vector<PreparedMove> moves_;
  int32_t firstSite_;
  long long step_ = 0;
  std::vector<void *> argumentPointers_;
};

// The generated ZkError (Codegen.cpp's prelude) is this record.
static_assert(sizeof(DeviceErrorRecord) == 32 &&
                  offsetof(DeviceErrorRecord, site) == 8 &&
                  offsetof(DeviceErrorRecord, dim) == 12 &&
                  offsetof(DeviceErrorRecord, value) == 16 &&
                  offsetof(DeviceErrorRecord, step) == 24,
              "the layout of ZkError in generated kernels");

bool overlaps(const void *a, int64_t aBytes, const void *b, int64_t bBytes) {
  if (aBytes <= 0 || bBytes <= 0)
    return false;
  const uintptr_t x = reinterpret_cast<uintptr_t>(a);
  const uintptr_t y = reinterpret_cast<uintptr_t>(b);
  return x < y + static_cast<uintptr_t>(bBytes) &&
         y < x + static_cast<uintptr_t>(aBytes);
}

/// The loaded kernel of generated `source`; errors carry `where`.
StatusOr<cudaKernel_t> loadGenerated(const CudaContext &ctx,
                                     const std::string &where,
                                     const Status &generated,
                                     const std::string &source,
                                     const std::string &name) {
  if (!generated.isOk())
    return Status(generated.code(), where + ": " + generated.message(),
                  __FILE__, __LINE__);
  StatusOr<cudaKernel_t> handle = ctx.kernels->getKernel(source, name);
  if (!handle.isOk())
    return Status(handle.status().code(),
                  where + ": " + handle.status().message(), __FILE__, __LINE__);
  return handle;
}

/// How many threads of `kernel` a multiprocessor holds at once in blocks of
/// kMaxBlockSize, as its registers and shared memory allow (getLaunchShape's
/// wave); the most a multiprocessor holds where the driver does not say.
int getResidentThreads(cudaKernel_t kernel) {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &blocks, reinterpret_cast<const void *>(kernel), kMaxBlockSize, 0) !=
          cudaSuccess ||
      blocks <= 0) {
    clearStaleError(); // not sticky: keep it from later checks
    return kThreadsPerMultiprocessor;
  }
  return blocks * kMaxBlockSize;
}

/// Ops in order: a row program's constants, then its kernel.
class SequenceOp final : public PreparedOp {
public:
  explicit SequenceOp(std::vector<std::unique_ptr<PreparedOp>> ops)
      : ops_(std::move(ops)) {}
  Status run(int64_t step) override {
    for (const std::unique_ptr<PreparedOp> &op : ops_)
      ZERO_RETURN_IF_ERROR(op->run(step));
    return Status::ok();
  }

private:
  std::vector<std::unique_ptr<PreparedOp>> ops_;
};

} // namespace

PreparedOpOr prepareRowProgram(const RowProgram &program,
                               const CudaContext &ctx) {
  const Instruction &head = *program.steps.front().inst;
  const std::string where = ctx.where(head) + " (a row program of " +
                            std::to_string(program.steps.size()) +
                            " instructions)";
  if (!ctx.kernels)
    return ZERO_ERROR(kInternal, where + ": the CUDA device has no kernel "
                                         "cache");
  StatusOr<RowKernel> kernel =
      generateRowKernel(program, ctx.schedule->values());
  StatusOr<cudaKernel_t> handle = loadGenerated(
      ctx, where, kernel.status(), kernel.isOk() ? kernel->source : "",
      kernel.isOk() ? kernel->name : "");
  if (!handle.isOk())
    return handle.status();

  std::vector<std::unique_ptr<PreparedOp>> ops;
  for (const RowStep &step : program.steps) {
    if (step.kind != RowStep::Kind::Constant)
      continue;
    PreparedOpOr constant =
        prepareScalarOp(*step.inst, step.checked->scalar, ctx);
    if (!constant.isOk())
      return constant.status();
    ops.push_back(std::move(*constant));
  }

  // Arguments in RowKernel's order.
  std::vector<void *> arguments;
  for (int64_t id : program.outputs())
    arguments.push_back(ctx.tensor(id));
  for (const RowInput &input : program.inputs)
    arguments.push_back(ctx.tensor(input.value));
  for (int64_t id : program.scalars)
    arguments.push_back(ctx.registers + id);

  StatusOr<int> multiProcessors = ctx.kernels->multiProcessorCount();
  if (!multiProcessors.isOk())
    return multiProcessors.status();
  GeneratedKernel shapeOf;
  shapeOf.pointThreads = kernel->pointThreads;
  shapeOf.numPoints = kernel->numPoints;
  shapeOf.numThreads = kernel->numPoints * kernel->pointThreads;
  const LaunchShape shape =
      getLaunchShape(shapeOf, *multiProcessors, getResidentThreads(*handle));
  ops.push_back(std::make_unique<StructuredOp>(
      ctx.compute, *handle, dim3(static_cast<unsigned>(shape.blocks)),
      dim3(static_cast<unsigned>(shape.threads)), std::move(arguments),
      std::vector<PreparedMove>(), /*reportsErrors=*/false, 0));
  return std::unique_ptr<PreparedOp>(new SequenceOp(std::move(ops)));
}

PreparedOpOr prepareStructured(const Instruction &inst,
                               const ops::BodyProgram &program,
                               const CudaContext &ctx) {
  const std::string where = ctx.where(inst);
  if (!ctx.kernels)
    return ZERO_ERROR(kInternal, where + ": the CUDA device has no kernel "
                                         "cache");
  const ValueTable &values = ctx.schedule->values();
  StatusOr<LoopNest> nest = buildLoopNest(inst, values, program);
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
                   out.bytes()))
        restrictInputs = false;
    }
  CodegenOptions options;
  options.restrictInputs = restrictInputs;
  options.maxBlockSize = kMaxBlockSize;
  StatusOr<GeneratedKernel> kernel = generateKernel(*nest, values, options);
  StatusOr<cudaKernel_t> handle = loadGenerated(
      ctx, where, kernel.status(), kernel.isOk() ? kernel->source : "",
      kernel.isOk() ? kernel->name : "");
  if (!handle.isOk())
    return handle.status();

  std::vector<void *> arguments;
  for (const KernelArgument &argument : getKernelArguments(*nest, *kernel))
    arguments.push_back(
        argument.isRegister
            ? static_cast<void *>(ctx.registers + argument.value)
            : ctx.tensor(argument.value));

  // The launch shape (getLaunchShape): at most one wave of the blocks the
  // kernel's occupancy allows, the grid-stride loops doing the rest.
  int multiProcessors = 1;
  if (kernel->numThreads != 0 && !kernel->sequential) {
    StatusOr<int> count = ctx.kernels->multiProcessorCount();
    if (!count.isOk())
      return count.status();
    multiProcessors = *count;
  }
  const LaunchShape shape =
      getLaunchShape(*kernel, multiProcessors, getResidentThreads(*handle));
  const dim3 grid(static_cast<unsigned>(shape.blocks));
  const dim3 block(static_cast<unsigned>(shape.threads));

  // A destination that shares bytes with a result without being it: the
  // host moves it into its result first and reads it there; so does the op
  // (through counted scratch memory where the ranges overlap).
  std::vector<PreparedMove> moves;
  for (size_t o = 0; o < nest->outputs.size(); ++o) {
    const NestOperand &dest = nest->outputs[o];
    const int64_t bytes = dest.numel * getDTypeWidth(dest.dtype);
    const void *from = ctx.tensor(dest.value);
    void *to = ctx.tensor(nest->results[o]);
    if (from == to)
      continue;
    bool shared = false;
    for (int64_t result : nest->results)
      shared |= overlaps(from, bytes, ctx.tensor(result),
                         ctx.value(result).numel *
                             getDTypeWidth(ctx.value(result).dtype));
    if (!shared)
      continue;
    StatusOr<PreparedMove> move =
        PreparedMove::create(to, from, bytes, *ctx.tracker);
    if (!move.isOk())
      return Status(move.status().code(),
                    where + ": " + move.status().message(), __FILE__, __LINE__);
    moves.push_back(std::move(*move));
    arguments[2 * o + 1] = to;
  }

  // Out-of-range tensor.extract indices go to the device's error record,
  // under sites numbered consecutively from the op's first.
  const bool reportsErrors = !kernel->extractSites.empty();
  int32_t firstSite = 0;
  for (size_t i = 0; i < kernel->extractSites.size(); ++i) {
    const ExtractSite &site = kernel->extractSites[i];
    const int32_t id = ctx.errors->addExtractSite(
        ctx, inst, "body.ops[" + std::to_string(site.bodyOp) + "]",
        site.tensor);
    if (i == 0)
      firstSite = id;
    else if (id != firstSite + static_cast<int32_t>(i))
      return ZERO_ERROR(kInternal, where + ": error sites out of order");
  }
  if (reportsErrors)
    arguments.push_back(ctx.errors->record());

  auto op = std::make_unique<StructuredOp>(
      ctx.compute, *handle, grid, block, std::move(arguments), std::move(moves),
      reportsErrors, firstSite);
  return std::unique_ptr<PreparedOp>(std::move(op));
}

} // namespace zero::runtime::cuda
