//===- CudaDevice.cpp - the CUDA backend ----------------------------------===//
//
// The Device of one GPU (docs/Runtime.md, "Devices"). load allocates
// everything a run needs, once, and counts it: the device arena (one
// cudaMalloc of exactly the plan's bytes), the host and nvme arenas (pinned
// host memory, so that copies to and from them are asynchronous and kernels
// can reach them), the scalar register file, the error record, the cuBLAS
// workspace, the constants of prepared ops. A step allocates nothing and
// never waits for the GPU: ops only enqueue work on the compute stream, the
// executor's record/wait pairs become cudaEventRecord/cudaStreamWaitEvent,
// and synchronize (once per step) collects what went wrong. Instructions
// whose tensors all live in the pinned host arena run on the CPU with the
// host backend's kernels, in stream order (HostCompute.h).
//
// Every entry point makes the device current on its calling thread first:
// the executor calls in from the compute thread and the comm stream's
// worker, and a CUDA thread starts on device 0.
//
//===----------------------------------------------------------------------===//

#include "ComputePlan.h"
#include "CudaOps.h"
#include "HostCompute.h"
#include "KernelCache.h"
#include "Structured.h"

#include "zero/runtime/Device.h"
#include "zero/runtime/Memory.h"
#include "zero/runtime/Schedule.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

namespace zero::runtime {

namespace cuda {
namespace {

constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20; // cuBLAS on Hopper

Status makeCurrent(int ordinal) {
  int current = -1;
  ZERO_CUDA_RETURN_IF_ERROR(cudaGetDevice(&current));
  if (current != ordinal)
    ZERO_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
  return Status::ok();
}

/// A prepared op run on the right device whatever thread runs it.
class CurrentDeviceOp final : public PreparedOp {
public:
  CurrentDeviceOp(int ordinal, std::unique_ptr<PreparedOp> op)
      : ordinal_(ordinal), op_(std::move(op)) {}
  Status run(int64_t step) override {
    ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
    return op_->run(step);
  }

private:
  int ordinal_;
  std::unique_ptr<PreparedOp> op_;
};

/// An instruction whose work another op makes unneeded.
class SkippedOp final : public PreparedOp {
public:
  Status run(int64_t) override { return Status::ok(); }
};

class CudaDevice final : public Device {
public:
  CudaDevice(int ordinal, std::string name)
      : ordinal_(ordinal), name_(std::move(name)) {}
  ~CudaDevice() override;

  std::string describe() const override {
    return "cuda:" + std::to_string(ordinal_) + " (" + name_ + ")";
  }
  bool isHostMemory() const override { return false; }

  Status load(const Schedule &schedule, int rank, int worldSize,
              MemoryTracker &tracker) override;
  std::byte *arenaBase(MemorySpace space) const override {
    return arenas_[static_cast<int>(space)];
  }
  StatusOr<std::unique_ptr<PreparedOp>>
  prepare(const Instruction &inst) override;
  size_t groupLength(size_t stream, size_t first) override;
  StatusOr<std::unique_ptr<PreparedOp>>
  prepareGroup(size_t stream, size_t first, size_t count) override;

  Status recordEvent(size_t stream, int64_t event) override;
  Status waitEvent(size_t stream, int64_t event) override;
  Status copy(size_t stream, void *to, const void *from,
              int64_t bytes) override;
  Status fillZero(size_t stream, void *to, int64_t bytes) override;
  Status quantizeBlocks(size_t stream, const void *in, DType type, int64_t n,
                        int bits, int64_t blockSize, void *values,
                        void *scales) override {
    ZERO_RETURN_IF_ERROR(checkStream(stream));
    ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
    return enqueueQuantizeBlocks(in, type, n, bits, blockSize, values, scales,
                                 streams_[stream]);
  }
  Status dequantizeBlocks(size_t stream, const void *values,
                          const void *scales, int64_t n, int bits,
                          int64_t blockSize, DType type, void *out) override {
    ZERO_RETURN_IF_ERROR(checkStream(stream));
    ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
    return enqueueDequantizeBlocks(values, scales, n, bits, blockSize, type,
                                   out, streams_[stream]);
  }
  Status accumulateDequantized(size_t stream, const void *values,
                               const void *scales, int64_t n, int bits,
                               int64_t blockSize, float *sums) override {
    ZERO_RETURN_IF_ERROR(checkStream(stream));
    ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
    return enqueueAccumulateDequantized(values, scales, n, bits, blockSize,
                                        sums, streams_[stream]);
  }
  Status roundSums(size_t stream, const float *sums, int64_t n,
                   int64_t divisor, DType type, void *out) override {
    ZERO_RETURN_IF_ERROR(checkStream(stream));
    ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
    return enqueueRoundSums(sums, n, divisor, type, out, streams_[stream]);
  }
  void *nativeStream(size_t stream) const override {
    return stream < streams_.size() ? streams_[stream] : nullptr;
  }
  Status synchronize() override;
  Status synchronizeStream(size_t stream) override {
    if (stream >= streams_.size())
      return ZERO_ERROR(kInvalidArgument,
                        "stream " + std::to_string(stream) + " does not exist");
    ZERO_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(streams_[stream]));
    return Status::ok();
  }

  Status read(void *hostTo, const void *from, int64_t bytes) override {
    return copyAndWait(hostTo, from, bytes);
  }
  Status write(void *to, const void *hostFrom, int64_t bytes) override {
    return copyAndWait(to, hostFrom, bytes);
  }
  StatusOr<Scalar> readScalar(int64_t id) override;

  int64_t markTime(size_t stream) override;
  double resolveTime(int64_t mark) const override;
  void clearTimeMarks() override;

private:
  Status loadMemory(const Schedule &schedule);
  Status loadStreams(const Schedule &schedule);
  Status loadBlas();
  Status checkStream(size_t stream) const;
  /// Prepares a run of host-space instructions for the CPU.
  PreparedOpOr prepareOnHost(const std::vector<const Instruction *> &run);
  /// Copies on the compute stream and waits for it (between steps).
  Status copyAndWait(void *to, const void *from, int64_t bytes);
  /// "rank R: cuda:N: " before an error of asynchronous work.
  Status onDevice(const Status &status) const {
    return Status(status.code(),
                  "rank " + std::to_string(rank_) + ": " + describe() + ": " +
                      status.message(),
                  status.file(), status.line());
  }

  int ordinal_;
  std::string name_;
  const Schedule *schedule_ = nullptr;
  MemoryTracker *tracker_ = nullptr;
  int rank_ = 0;
  int worldSize_ = 1;

  std::byte *arenas_[kNumMemorySpaces] = {};
  int64_t arenaBytes_[kNumMemorySpaces] = {};
  Scalar *registers_ = nullptr;
  int64_t registerBytes_ = 0;
  void *blasWorkspace_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
  DeviceErrors errors_;
  std::unique_ptr<KernelCache> kernels_;
  CudaContext ctx_;
  /// Host-space instructions on the CPU; null with
  /// ZERO_CUDA_HOST_COMPUTE=gpu, which runs them as kernels.
  std::unique_ptr<HostCompute> host_;
  /// What runs each compute instruction, and its check.
  std::optional<ComputePlan> plan_;

  // Trace timestamps: a pool of timing events (markTime), resolved against a
  // base event whose time since load is known. The base moves to the end of
  // every step that resolved its marks, so that cudaEventElapsedTime (a
  // float of milliseconds) only spans one step and keeps its microseconds.
  mutable std::mutex timeMutex_;
  std::vector<cudaEvent_t> timeEvents_;
  size_t nextMark_ = 0;
  cudaEvent_t baseEvents_[2] = {};
  int base_ = 0;
  double baseUs_ = 0;
};

CudaDevice::~CudaDevice() {
  if (!makeCurrent(ordinal_).isOk())
    return;
  for (cudaStream_t stream : streams_)
    cudaStreamSynchronize(stream);
  kernels_.reset(); // its modules go before anything they may refer to
  host_.reset();    // after the streams: host functions point into it
  if (blas_)
    cublas().cublasDestroy(blas_);
  for (cudaEvent_t event : events_)
    cudaEventDestroy(event);
  for (cudaEvent_t event : timeEvents_)
    cudaEventDestroy(event);
  for (cudaEvent_t event : baseEvents_)
    if (event)
      cudaEventDestroy(event);
  for (cudaStream_t stream : streams_)
    cudaStreamDestroy(stream);
  // tracker_ is the executor's, which outlives its device.
  if (blasWorkspace_) {
    cudaFree(blasWorkspace_);
    tracker_->release(static_cast<int64_t>(kBlasWorkspaceBytes));
  }
  if (registers_) {
    cudaFree(registers_);
    tracker_->release(registerBytes_);
  }
  for (int i = 0; i < kNumMemorySpaces; ++i) {
    if (!arenas_[i])
      continue;
    if (static_cast<MemorySpace>(i) == MemorySpace::Device)
      cudaFree(arenas_[i]);
    else
      cudaFreeHost(arenas_[i]);
    tracker_->release(arenaBytes_[i], static_cast<MemorySpace>(i));
  }
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Status CudaDevice::load(const Schedule &schedule, int rank, int worldSize,
                        MemoryTracker &tracker) {
  if (schedule_)
    return ZERO_ERROR(kFailedPrecondition,
                      describe() + ": a device loads one schedule");
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  schedule_ = &schedule;
  tracker_ = &tracker;
  rank_ = rank;
  worldSize_ = worldSize;

  // Kernels access elements at their natural alignment; the plan's offsets
  // are multiples of memory.alignment, which the format does not bound
  // below.
  for (const ValueInfo &value : schedule.values().values) {
    if (!value.isTensor)
      continue;
    const BufferInfo &buffer = schedule.bufferOf(value.id);
    const int64_t width = getDTypeWidth(value.dtype);
    if (buffer.offset % width != 0)
      return ZERO_ERROR(
          kInvalidArgument,
          schedule.name() + ": " + schedule.describeValue(value.id) +
              " starts at offset " + std::to_string(buffer.offset) +
              " of buffer '" + buffer.name + "', which the CUDA backend " +
              "cannot address as " + getDTypeName(value.dtype) +
              " (it needs offsets that are multiples of the element size)");
  }

  // Every compute instruction is checked here, before any memory is taken:
  // every device refuses exactly what the host refuses.
  StatusOr<ComputePlanOptions> planOptions = getComputePlanOptions();
  if (!planOptions.isOk())
    return planOptions.status();
  StatusOr<ComputePlan> plan = ComputePlan::create(schedule, *planOptions);
  if (!plan.isOk())
    return plan.status();
  plan_ = std::move(*plan);

  ZERO_RETURN_IF_ERROR(loadMemory(schedule));
  ZERO_RETURN_IF_ERROR(errors_.init(tracker));
  ZERO_RETURN_IF_ERROR(loadStreams(schedule));
  ZERO_RETURN_IF_ERROR(loadBlas());
  kernels_ = std::make_unique<KernelCache>(ordinal_);

  ctx_.schedule = &schedule;
  ctx_.rank = rank;
  ctx_.worldSize = worldSize;
  ctx_.ordinal = ordinal_;
  ctx_.compute = streams_.empty() ? nullptr : streams_[0];
  ctx_.blas = blas_;
  ctx_.blasWorkspace = blasWorkspace_;
  ctx_.blasWorkspaceBytes = kBlasWorkspaceBytes;
  ctx_.registers = registers_;
  ctx_.kernels = kernels_.get();
  ctx_.tracker = &tracker;
  ctx_.errors = &errors_;
  for (int i = 0; i < kNumMemorySpaces; ++i)
    ctx_.arenas[i] = arenas_[i];
  if (planOptions->hostCompute) {
    StatusOr<std::unique_ptr<HostCompute>> host =
        HostCompute::create(ctx_, tracker);
    if (!host.isOk())
      return host.status();
    host_ = std::move(*host);
  }
  // Everything above was synchronous or on the legacy stream; make sure it
  // is done before the non-blocking streams start.
  ZERO_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  // The epoch, time 0 of the trace: the end of the load, as the host
  // device's and the executor's (its step spans) are.
  ZERO_CUDA_RETURN_IF_ERROR(cudaEventRecord(baseEvents_[0], streams_[0]));
  ZERO_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(baseEvents_[0]));
  return Status::ok();
}

Status CudaDevice::loadMemory(const Schedule &schedule) {
  for (int i = 0; i < kNumMemorySpaces; ++i) {
    const MemorySpace space = static_cast<MemorySpace>(i);
    const int64_t bytes = schedule.arenaBytes(space);
    if (bytes <= 0 || hasExternalArena(space))
      continue;
    void *data = nullptr;
    const cudaError_t code =
        space == MemorySpace::Device
            ? cudaMalloc(&data, static_cast<size_t>(bytes))
            : cudaMallocHost(&data, static_cast<size_t>(bytes));
    if (code != cudaSuccess)
      return Status(
          code == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted
                                            : StatusCode::kInternal,
          schedule.name() + ": memory.arenas." + getMemorySpaceName(space) +
              ": cannot allocate " + std::to_string(bytes) + " bytes of " +
              (space == MemorySpace::Device ? "GPU" : "pinned host") +
              " memory on " + describe() + ": " + cudaGetErrorString(code),
          __FILE__, __LINE__);
    arenas_[i] = static_cast<std::byte *>(data);
    arenaBytes_[i] = bytes;
    tracker_->allocate(bytes, space);
    // Zeros: a run must not depend on what the allocator left there.
    if (space == MemorySpace::Device)
      ZERO_CUDA_RETURN_IF_ERROR(
          cudaMemset(data, 0, static_cast<size_t>(bytes)));
    else
      std::memset(data, 0, static_cast<size_t>(bytes));
  }
  const int64_t numValues =
      static_cast<int64_t>(schedule.values().values.size());
  registerBytes_ = std::max<int64_t>(numValues, 1) * sizeof(Scalar);
  void *registers = nullptr;
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaMalloc(&registers, static_cast<size_t>(registerBytes_)));
  registers_ = static_cast<Scalar *>(registers);
  tracker_->allocate(registerBytes_);
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaMemset(registers_, 0, static_cast<size_t>(registerBytes_)));
  return Status::ok();
}

Status CudaDevice::loadStreams(const Schedule &schedule) {
  size_t instructions = 0, repeated = 0;
  for (size_t s = 0; s < schedule.streams().size(); ++s) {
    const Stream &stream = schedule.streams()[s];
    cudaStream_t handle = nullptr;
    // Non-blocking: the legacy default stream (cudaMemcpy, libraries that
    // use it) must not serialize against the schedule's streams.
    ZERO_CUDA_RETURN_IF_ERROR(
        cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking));
    streams_.push_back(handle);
    instructions += stream.instructions.size();
    // The loop's body runs `count` times, each run traced; past a bound the
    // trace loses marks rather than the device holding a million events.
    if (const std::optional<LoopInfo> &loop = schedule.loop())
      repeated += (loop->bodyEnd[s] - loop->bodyBegin[s]) *
                  static_cast<size_t>(loop->count - 1);
  }
  instructions += std::min<size_t>(repeated, size_t(1) << 18);
  for (int64_t i = 0; i < schedule.numEvents(); ++i) {
    cudaEvent_t event = nullptr;
    ZERO_CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    events_.push_back(event);
  }
  // Two marks per traced instruction (its start and end), and a few more.
  const size_t marks = 2 * instructions + 16;
  timeEvents_.reserve(marks);
  for (size_t i = 0; i < marks; ++i) {
    cudaEvent_t event = nullptr;
    ZERO_CUDA_RETURN_IF_ERROR(cudaEventCreate(&event));
    timeEvents_.push_back(event);
  }
  for (cudaEvent_t &event : baseEvents_)
    ZERO_CUDA_RETURN_IF_ERROR(cudaEventCreate(&event));
  if (streams_.empty())
    return ZERO_ERROR(kInvalidArgument, schedule.name() + ": no streams");
  return Status::ok();
}

Status CudaDevice::loadBlas() {
  void *workspace = nullptr;
  ZERO_CUDA_RETURN_IF_ERROR(cudaMalloc(&workspace, kBlasWorkspaceBytes));
  blasWorkspace_ = workspace;
  tracker_->allocate(static_cast<int64_t>(kBlasWorkspaceBytes));
  StatusOr<const CublasApi *> api = loadCublas();
  if (!api.isOk())
    return api.status();
  const CublasApi &blas = **api;
  ZERO_CUBLAS_RETURN_IF_ERROR(blas.cublasCreate(&blas_));
  // cublasSetStream resets the workspace to cuBLAS's own pool, so the
  // workspace comes after it.
  ZERO_CUBLAS_RETURN_IF_ERROR(blas.cublasSetStream(blas_, streams_[0]));
  ZERO_CUBLAS_RETURN_IF_ERROR(
      blas.cublasSetWorkspace(blas_, blasWorkspace_, kBlasWorkspaceBytes));
  // No reduced-precision split-K reductions for 16-bit outputs; the f32
  // matmuls ask for CUBLAS_COMPUTE_32F_PEDANTIC themselves.
  ZERO_CUBLAS_RETURN_IF_ERROR(blas.cublasSetMathMode(
      blas_, static_cast<cublasMath_t>(
                 CUBLAS_DEFAULT_MATH |
                 CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Preparing
//===----------------------------------------------------------------------===//

size_t CudaDevice::groupLength(size_t stream, size_t first) {
  const PlannedGroup *group = plan_ ? plan_->getGroup(stream, first) : nullptr;
  return group ? group->count : 1;
}

PreparedOpOr
CudaDevice::prepareOnHost(const std::vector<const Instruction *> &run) {
  // Checked as the host checks them.
  PreparedOpOr op = host_->prepare(run);
  if (!op.isOk())
    return op;
  // Enqueued from the compute thread, like every other op.
  return std::unique_ptr<PreparedOp>(
      new CurrentDeviceOp(ordinal_, std::move(*op)));
}

StatusOr<std::unique_ptr<PreparedOp>>
CudaDevice::prepareGroup(size_t stream, size_t first, size_t count) {
  if (!plan_)
    return ZERO_ERROR(kFailedPrecondition,
                      describe() + ": prepare before load");
  const PlannedGroup *group = plan_->getGroup(stream, first);
  if (!group || group->count != count)
    return ZERO_ERROR(
        kInternal, describe() + ": no group of " + std::to_string(count) +
                       " instructions at instruction " + std::to_string(first) +
                       " of stream " + std::to_string(stream));
  const std::vector<const Instruction *> instructions =
      plan_->getInstructions(*group);
  if (group->kind == PlannedGroup::Kind::Host)
    return prepareOnHost(instructions);
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  PreparedOpOr op = [&]() -> PreparedOpOr {
    switch (group->kind) {
    case PlannedGroup::Kind::Optimizers:
      // One multi-tensor launch for the whole run.
      return instructions.front()->code() == OpCode::Adam
                 ? prepareAdamGroup(instructions, ctx_)
                 : prepareSgdGroup(instructions, ctx_);
    case PlannedGroup::Kind::Rows:
      return prepareRowProgram(*group->rows, ctx_);
    default:
      return ZERO_ERROR(kInternal, ctx_.where(*instructions.front()) +
                                       ": not the first of a group");
    }
  }();
  if (!op.isOk())
    return op.status();
  // Run from the compute thread, like every other op.
  return std::unique_ptr<PreparedOp>(
      new CurrentDeviceOp(ordinal_, std::move(*op)));
}

StatusOr<std::unique_ptr<PreparedOp>>
CudaDevice::prepare(const Instruction &inst) {
  if (!plan_)
    return ZERO_ERROR(kFailedPrecondition,
                      describe() + ": prepare before load");
  if (plan_->runsOnHost(inst))
    return prepareOnHost({&inst});
  const ops::CheckedOp *checked = plan_->getCheck(inst);
  if (!checked)
    return ZERO_ERROR(kInvalidArgument,
                      ctx_.where(inst) + ": not a compute instruction");
  // Its GEMM does not read what it fills (Instruction::zeroInit).
  if (inst.skippedZeroFill)
    return std::unique_ptr<PreparedOp>(new SkippedOp());
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  PreparedOpOr op = [&]() -> PreparedOpOr {
    switch (inst.code()) {
    case OpCode::Matmul:
    case OpCode::BatchMatmul:
      return prepareMatmulOp(inst, ctx_);
    case OpCode::Transpose:
    case OpCode::Broadcast:
    case OpCode::Copy:
    case OpCode::ExtractSlice:
    case OpCode::InsertSlice:
    case OpCode::CollapseShape:
    case OpCode::ExpandShape:
    case OpCode::LocalShard:
      return prepareDataMovementOp(inst, ctx_);
    case OpCode::Fill:
    case OpCode::Splat:
    case OpCode::FromElements:
    case OpCode::Extract:
      return prepareTensorOp(inst, ctx_);
    case OpCode::Constant:
      if (ctx_.value(inst.results[0]).isTensor)
        return prepareConstantTensor(inst, checked->constantElements, ctx_);
      return prepareScalarOp(inst, checked->scalar, ctx_);
    case OpCode::Map:
    case OpCode::Reduce:
    case OpCode::Generic:
      return prepareStructured(inst, checked->body, ctx_);
    case OpCode::Adam:
    case OpCode::Sgd:
      return prepareOptimizerOp(inst, ctx_);
    case OpCode::AnyNonFinite:
      return prepareAnyNonFiniteOp(inst, ctx_);
    default:
      if (ops::isScalarOp(inst.code()))
        return prepareScalarOp(inst, checked->scalar, ctx_);
      return ZERO_ERROR(kInvalidArgument,
                        ctx_.where(inst) + ": not a compute instruction");
    }
  }();
  if (!op.isOk())
    return op.status();
  return std::unique_ptr<PreparedOp>(
      new CurrentDeviceOp(ordinal_, std::move(*op)));
}

//===----------------------------------------------------------------------===//
// Streams, events, copies
//===----------------------------------------------------------------------===//

Status CudaDevice::checkStream(size_t stream) const {
  if (stream < streams_.size())
    return Status::ok();
  return ZERO_ERROR(kInternal,
                    describe() + ": no stream " + std::to_string(stream) +
                        " (" + std::to_string(streams_.size()) + " streams)");
}

Status CudaDevice::recordEvent(size_t stream, int64_t event) {
  ZERO_RETURN_IF_ERROR(checkStream(stream));
  if (event < 0 || event >= static_cast<int64_t>(events_.size()))
    return ZERO_ERROR(kInternal,
                      describe() + ": no event " + std::to_string(event));
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  ZERO_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[event], streams_[stream]));
  return Status::ok();
}

Status CudaDevice::waitEvent(size_t stream, int64_t event) {
  ZERO_RETURN_IF_ERROR(checkStream(stream));
  if (event < 0 || event >= static_cast<int64_t>(events_.size()))
    return ZERO_ERROR(kInternal,
                      describe() + ": no event " + std::to_string(event));
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaStreamWaitEvent(streams_[stream], events_[event], 0));
  return Status::ok();
}

Status CudaDevice::copy(size_t stream, void *to, const void *from,
                        int64_t bytes) {
  ZERO_RETURN_IF_ERROR(checkStream(stream));
  if (bytes <= 0 || to == from)
    return Status::ok();
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(to, from, static_cast<size_t>(bytes), cudaMemcpyDefault,
                      streams_[stream]));
  return Status::ok();
}

Status CudaDevice::fillZero(size_t stream, void *to, int64_t bytes) {
  ZERO_RETURN_IF_ERROR(checkStream(stream));
  if (bytes <= 0)
    return Status::ok();
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  return enqueueFillPattern(to, bytes, 1, 0, streams_[stream]);
}

Status CudaDevice::synchronize() {
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  for (cudaStream_t stream : streams_) {
    const cudaError_t code = cudaStreamSynchronize(stream);
    if (code != cudaSuccess)
      return onDevice(cudaError(code, "a kernel or copy of this step failed",
                                __FILE__, __LINE__));
  }
  // What the kernels and the host ops found wrong with the data, as the
  // host words it; both records are cleared.
  Status kernels = errors_.check(rank_);
  Status hostOps = host_ ? host_->errors().check(rank_) : Status::ok();
  return kernels.isOk() ? hostOps : kernels;
}

Status CudaDevice::copyAndWait(void *to, const void *from, int64_t bytes) {
  if (bytes <= 0)
    return Status::ok();
  ZERO_RETURN_IF_ERROR(makeCurrent(ordinal_));
  // On the compute stream, so that it follows the work enqueued there
  // (cudaMemcpy on the legacy stream would not wait for a non-blocking one).
  ZERO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
      to, from, static_cast<size_t>(bytes), cudaMemcpyDefault, streams_[0]));
  ZERO_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(streams_[0]));
  return Status::ok();
}

StatusOr<Scalar> CudaDevice::readScalar(int64_t id) {
  if (!schedule_ || id < 0 ||
      id >= static_cast<int64_t>(schedule_->values().values.size()))
    return ZERO_ERROR(kInternal,
                      describe() + ": no register " + std::to_string(id));
  Scalar value;
  ZERO_RETURN_IF_ERROR(read(&value, registers_ + id, sizeof(Scalar)));
  return value;
}

//===----------------------------------------------------------------------===//
// Trace timestamps
//===----------------------------------------------------------------------===//

int64_t CudaDevice::markTime(size_t stream) {
  if (stream >= streams_.size() || !makeCurrent(ordinal_).isOk())
    return -1;
  std::lock_guard<std::mutex> lock(timeMutex_);
  if (nextMark_ >= timeEvents_.size())
    return -1; // more marks than the pool: the trace loses them
  if (cudaEventRecord(timeEvents_[nextMark_], streams_[stream]) != cudaSuccess)
    return -1;
  return static_cast<int64_t>(nextMark_++);
}

double CudaDevice::resolveTime(int64_t mark) const {
  std::lock_guard<std::mutex> lock(timeMutex_);
  if (mark < 0 || static_cast<size_t>(mark) >= nextMark_)
    return baseUs_;
  float ms = 0;
  if (cudaEventElapsedTime(&ms, baseEvents_[base_], timeEvents_[mark]) !=
      cudaSuccess)
    return baseUs_;
  return baseUs_ + 1000.0 * static_cast<double>(ms);
}

void CudaDevice::clearTimeMarks() {
  std::lock_guard<std::mutex> lock(timeMutex_);
  if (nextMark_ == 0)
    return;
  nextMark_ = 0;
  // Between steps the streams are idle: a new base completes at once.
  if (!makeCurrent(ordinal_).isOk())
    return;
  const int next = 1 - base_;
  float ms = 0;
  if (cudaEventRecord(baseEvents_[next], streams_[0]) != cudaSuccess ||
      cudaEventSynchronize(baseEvents_[next]) != cudaSuccess ||
      cudaEventElapsedTime(&ms, baseEvents_[base_], baseEvents_[next]) !=
          cudaSuccess)
    return;
  baseUs_ += 1000.0 * static_cast<double>(ms);
  base_ = next;
}

} // namespace
} // namespace cuda

bool hasCudaBackend() { return true; }

void prepareProcessForCuda() {
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
}

int countVisibleCudaDevices() {
  prepareProcessForCuda();
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

StatusOr<std::unique_ptr<Device>> createCudaDevice(int ordinal) {
  prepareProcessForCuda();
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code == cudaErrorNoDevice || (code == cudaSuccess && count == 0))
    return ZERO_ERROR(kUnavailable, "no CUDA device");
  if (code != cudaSuccess)
    return ZERO_ERROR(kUnavailable, std::string("no CUDA driver (") +
                                        cudaGetErrorString(code) + ")");
  if (ordinal < 0 || ordinal >= count)
    return ZERO_ERROR(kInvalidArgument,
                      "CUDA device " + std::to_string(ordinal) +
                          " out of range (" + std::to_string(count) +
                          (count == 1 ? " device)" : " devices)"));
  cudaDeviceProp properties;
  ZERO_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&properties, ordinal));
  ZERO_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
  return std::unique_ptr<Device>(
      new cuda::CudaDevice(ordinal, properties.name));
}

} // namespace zero::runtime
