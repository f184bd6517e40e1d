//===- HostCompute.cpp - host-space instructions on the CPU ---------------===//

#include "HostCompute.h"

#include "zero/runtime/Memory.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <unordered_set>

namespace zero::runtime::cuda {

namespace {

/// The values an instruction reads and writes.
struct ValueAccess {
  std::vector<int64_t> tensors;
  std::vector<int64_t> scalarReads;
  std::vector<int64_t> scalarWrites;
};

void addValueAccess(const Instruction &inst, const ValueTable &values,
                    ValueAccess &access) {
  auto add = [&](int64_t id, bool write) {
    const ValueInfo *value = values.lookup(id);
    if (!value)
      return;
    if (value->isTensor)
      access.tensors.push_back(id);
    else
      (write ? access.scalarWrites : access.scalarReads).push_back(id);
  };
  for (int64_t id : inst.operands)
    add(id, false);
  for (int64_t id : inst.results)
    add(id, true);
  if (!inst.fields.has(Field::Body))
    return;
  // A body reads scalars and tensors defined outside it by id.
  const RegionBody &body = inst.fields.getBody(Field::Body);
  std::unordered_set<int64_t> defined(body.arguments.begin(),
                                      body.arguments.end());
  for (const OpRecord &op : body.ops)
    defined.insert(op.results.begin(), op.results.end());
  for (const OpRecord &op : body.ops)
    for (int64_t id : op.operands)
      if (!defined.count(id))
        add(id, false);
  for (int64_t id : body.yield)
    if (!defined.count(id))
      add(id, false);
}

ValueAccess getValueAccess(const std::vector<const Instruction *> &group,
                           const ValueTable &values) {
  ValueAccess access;
  for (const Instruction *inst : group)
    addValueAccess(*inst, values, access);
  return access;
}

/// Runs of consecutive register ids, one copy each.
struct RegisterRange {
  int64_t first;
  int64_t count;
};

std::vector<RegisterRange> getRanges(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<RegisterRange> ranges;
  for (int64_t id : ids) {
    if (!ranges.empty() && ranges.back().first + ranges.back().count == id)
      ++ranges.back().count;
    else
      ranges.push_back({id, 1});
  }
  return ranges;
}

std::array<std::byte *, kNumMemorySpaces> getBases(const CudaContext &ctx) {
  std::array<std::byte *, kNumMemorySpaces> bases;
  for (int i = 0; i < kNumMemorySpaces; ++i)
    bases[i] = ctx.arenas[i];
  return bases;
}

} // namespace

bool isHostSpaceGroup(const std::vector<const Instruction *> &group,
                      const Schedule &schedule) {
  const ValueAccess access = getValueAccess(group, schedule.values());
  return !access.tensors.empty() &&
         std::all_of(access.tensors.begin(), access.tensors.end(),
                     [&](int64_t id) {
                       return schedule.bufferOf(id).space == MemorySpace::Host;
                     });
}

//===----------------------------------------------------------------------===//
// HostErrors
//===----------------------------------------------------------------------===//

void HostErrors::record(const Status &status, int64_t step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_.load(std::memory_order_relaxed))
    return; // the first error stands
  status_ = status;
  step_ = step;
  failed_.store(true, std::memory_order_release);
}

Status HostErrors::check(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_.load(std::memory_order_relaxed))
    return Status::ok();
  failed_.store(false, std::memory_order_relaxed);
  return Status(status_.code(),
                "rank " + std::to_string(rank) + ": step " +
                    std::to_string(step_) + ": " + status_.message(),
                status_.file(), status_.line());
}

//===----------------------------------------------------------------------===//
// HostCompute
//===----------------------------------------------------------------------===//

bool HostTaskGate::enter() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_)
    return false;
  ++running_;
  return true;
}

void HostTaskGate::leave() {
  // Notified under the lock: once close() sees none inside, it may return
  // and the gate be destroyed.
  std::lock_guard<std::mutex> lock(mutex_);
  --running_;
  left_.notify_all();
}

void HostTaskGate::close() {
  std::unique_lock<std::mutex> lock(mutex_);
  closed_ = true;
  left_.wait(lock, [&] { return running_ == 0; });
}

bool HostTaskGate::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

/// What a host function reaches: the host kernels of a run of
/// instructions, and the step it runs in (for an error's message), set when
/// it is enqueued.
struct HostTask {
  std::unique_ptr<HostKernelRun> kernels;
  HostErrors *errors = nullptr;
  HostTaskGate *gate = nullptr;
  std::atomic<int64_t> step{0};

  /// On CUDA's host function thread: no CUDA calls, no exceptions out.
  static void CUDART_CB run(void *data) {
    HostTask &task = *static_cast<HostTask *>(data);
    if (!task.gate->enter())
      return; // the device is being torn down
    struct Leave {
      HostTaskGate &gate;
      ~Leave() { gate.leave(); }
    } leave{*task.gate};
    // After a failure the rest of the step is not run, as on the host.
    if (task.errors->failed())
      return;
    Status status;
    try {
      status = task.kernels->run();
    } catch (const std::exception &e) {
      status = ZERO_ERROR(kInternal, std::string("host op: ") + e.what());
    }
    if (!status.isOk())
      task.errors->record(status, task.step.load(std::memory_order_relaxed));
  }
};

namespace {

/// Enqueues one host op on the compute stream between the copies of its
/// scalars: registers -> mirror, the op, mirror -> registers.
class HostOp final : public PreparedOp {
public:
  HostOp(const CudaContext &ctx, Scalar *mirror, HostTask &task,
         std::vector<RegisterRange> reads, std::vector<RegisterRange> writes)
      : stream_(ctx.compute), registers_(ctx.registers), mirror_(mirror),
        task_(task), reads_(std::move(reads)), writes_(std::move(writes)) {}

  Status run(int64_t step) override {
    // Read by the host function, after this call in stream order; the same
    // value for every run in a step (a loop's body runs several times).
    task_.step.store(step, std::memory_order_relaxed);
    for (const RegisterRange &range : reads_)
      ZERO_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(mirror_ + range.first, registers_ + range.first,
                          static_cast<size_t>(range.count) * sizeof(Scalar),
                          cudaMemcpyDeviceToHost, stream_));
    ZERO_CUDA_RETURN_IF_ERROR(
        cudaLaunchHostFunc(stream_, &HostTask::run, &task_));
    for (const RegisterRange &range : writes_)
      ZERO_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(registers_ + range.first, mirror_ + range.first,
                          static_cast<size_t>(range.count) * sizeof(Scalar),
                          cudaMemcpyHostToDevice, stream_));
    return Status::ok();
  }

private:
  cudaStream_t stream_;
  Scalar *registers_;
  Scalar *mirror_;
  HostTask &task_;
  std::vector<RegisterRange> reads_;
  std::vector<RegisterRange> writes_;
};

} // namespace

StatusOr<std::unique_ptr<HostCompute>>
HostCompute::create(const CudaContext &ctx, MemoryTracker &tracker) {
  const int64_t bytes =
      std::max<int64_t>(
          static_cast<int64_t>(ctx.schedule->values().values.size()), 1) *
      static_cast<int64_t>(sizeof(Scalar));
  void *mirror = nullptr;
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaMallocHost(&mirror, static_cast<size_t>(bytes)));
  std::memset(mirror, 0, static_cast<size_t>(bytes));
  tracker.allocate(bytes);
  return std::unique_ptr<HostCompute>(
      new HostCompute(ctx, tracker, static_cast<Scalar *>(mirror), bytes));
}

HostCompute::HostCompute(const CudaContext &ctx, MemoryTracker &tracker,
                         Scalar *mirror, int64_t mirrorBytes)
    : ctx_(ctx), tracker_(tracker), mirror_(mirror), mirrorBytes_(mirrorBytes),
      kernels_(HostKernels::create(*ctx.schedule, getBases(ctx), mirror,
                                   ctx.rank, ctx.worldSize)) {}

HostCompute::~HostCompute() {
  // A host function still running after a fatal error reads the mirror,
  // the tasks and the host arena, which the device frees next.
  gate_.close();
  cudaFreeHost(mirror_);
  tracker_.release(mirrorBytes_);
}

PreparedOpOr HostCompute::prepare(const std::vector<const Instruction *> &run) {
  auto task = std::make_unique<HostTask>();
  StatusOr<std::unique_ptr<HostKernelRun>> kernels = kernels_->prepare(run);
  if (!kernels.isOk())
    return kernels.status();
  task->kernels = std::move(*kernels);
  // Scalars the run writes and reads itself stay in the mirror between its
  // instructions; the copies only cross the run's bounds.
  const ValueAccess access = getValueAccess(run, ctx_.schedule->values());
  task->errors = &errors_;
  task->gate = &gate_;
  tasks_.push_back(std::move(task));
  return std::unique_ptr<PreparedOp>(
      new HostOp(ctx_, mirror_, *tasks_.back(), getRanges(access.scalarReads),
                 getRanges(access.scalarWrites)));
}

} // namespace zero::runtime::cuda
