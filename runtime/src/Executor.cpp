//===- Executor.cpp - runs a schedule, one step at a time -----------------===//

#include "zero/runtime/Executor.h"

#include "ops/ElementMath.h"
#include "ops/OptimizerMath.h"
#include "ops/OptimizerOperands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace zero::runtime {

namespace {
using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point epoch, Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - epoch).count();
}

/// "[0, 1]".
std::string joinAxes(const std::vector<int64_t> &axes) {
  std::string text = "[";
  for (size_t i = 0; i < axes.size(); ++i)
    text += (i ? ", " : "") + std::to_string(axes[i]);
  return text + "]";
}

/// Where each operand's f32 scales and values start in a packed block
/// (qwZ) or chunk (qgZ) of a quantized collective: every operand's scales,
/// then every operand's values, in operand order (docs/ScheduleFormat.md).
struct PackedOffsets {
  std::vector<int64_t> scales, values;
};

PackedOffsets getPackedOffsets(const Instruction &inst) {
  const Instruction::Quantization &q = *inst.quantize;
  PackedOffsets at;
  int64_t scaleBytes = 0, valueBytes = 0;
  for (const PartitionLayout &layout : inst.layouts) {
    at.scales.push_back(scaleBytes);
    at.values.push_back(valueBytes);
    scaleBytes += getPackedScaleBytes(layout.shardNumel, q.blockSize);
    valueBytes +=
        getQuantizedBytes(layout.shardNumel, static_cast<int>(q.bits));
  }
  for (int64_t &value : at.values)
    value += scaleBytes;
  return at;
}

} // namespace

/// The streams' shared state and the comm thread.
class Executor::Impl {
public:
  explicit Impl(Executor &executor)
      : executor(executor), schedule(*executor.schedule_),
        device(*executor.device_), comm(executor.communicator_),
        prepared(schedule.streams().size()), grouped(schedule.streams().size()),
        recordCount(static_cast<size_t>(schedule.numEvents()), 0),
        recordInBody(static_cast<size_t>(schedule.numEvents()), 0),
        iterationsDone(schedule.streams().size(), 0),
        freedBy(schedule.buffers().size(), nullptr),
        pendingEvents(schedule.streams().size()),
        streamEvents(schedule.streams().size()), epoch(Clock::now()) {
    if (const std::optional<LoopInfo> &loop = schedule.loop())
      for (size_t s = 0; s < schedule.streams().size(); ++s)
        for (size_t i = loop->bodyBegin[s]; i < loop->bodyEnd[s]; ++i) {
          const Instruction &inst = schedule.streams()[s].instructions[i];
          if (inst.kind == Instruction::Kind::Record)
            recordInBody[inst.event] = 1;
        }
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    workCv.notify_all();
    for (std::thread &thread : workers)
      thread.join();
  }

  void startWorkers() {
    for (size_t s = 1; s < schedule.streams().size(); ++s)
      workers.emplace_back([this, s] { workerLoop(s); });
  }

  /// Prepares every compute instruction on the device.
  Status prepareAll();
  /// Runs the streams of one step; the first error, if any.
  Status runStep(int64_t stepNumber);
  /// The trace events of the step that just ran (after synchronize).
  void resolveTrace();

  std::byte *address(int64_t id) const {
    const BufferInfo &buffer = schedule.bufferOf(id);
    std::byte *base = device.arenaBase(buffer.space);
    return base ? base + buffer.offset : nullptr;
  }

  Executor &executor;
  const Schedule &schedule;
  Device &device;
  Communicator &comm;
  /// Per stream, per instruction: the prepared compute op (null otherwise),
  /// and whether the op of an earlier instruction runs this one too (a
  /// group, Device::prepareGroup).
  std::vector<std::vector<std::unique_ptr<PreparedOp>>> prepared;
  std::vector<std::vector<bool>> grouped;

  std::mutex mutex;
  std::condition_variable eventCv; // an event recorded, or a failure
  std::condition_variable workCv;  // a step to run, or stopping
  std::condition_variable doneCv;  // a worker finished its stream
  /// Per event: the records issued in this step. In a loop a record of the
  /// body is issued once per iteration, and a wait waits for the record of
  /// its own iteration (the last one after the loop).
  std::vector<int64_t> recordCount;
  std::vector<char> recordInBody;
  /// Per stream: the iterations of the loop it has finished in this step.
  std::vector<int64_t> iterationsDone;
  std::atomic<bool> failed{false};
  Status firstError;
  int64_t generation = 0;
  size_t workersDone = 0;
  bool stopping = false;
  int64_t currentStep = 0;
  std::vector<std::thread> workers;

  /// The bytes this step's swaps moved (StepStats), by direction.
  std::atomic<int64_t> hostToDevice{0}, deviceToHost{0}, nvmeRead{0},
      nvmeWrite{0};
  /// Copies each operand of a swap into its result and counts the bytes.
  Status runSwap(size_t stream, const Instruction &inst);
  /// The communicator of the ranks that differ from this one only on
  /// `hop`'s axis (createGroupCommunicators).
  Communicator &groupCommunicator(const GroupHop &hop);
  /// Gathers the blocks of `count` elements of `type` of `comm`'s ranks in
  /// place in `flat`, rank-major, this rank's at comm.rank(): in one call,
  /// or hop by hop for a hierarchical all_gather (docs/ScheduleFormat.md,
  /// "Collectives").
  Status gatherBlocks(Communicator &comm, const Instruction &inst,
                      std::byte *flat, int64_t count, DType type,
                      const CollectiveContext &context);
  /// A quantized all_gather (qwZ): quantize this rank's shards into its
  /// packed block of `flat`, gather the blocks, dequantize them into the
  /// results; the device's quantizer on `stream`.
  Status runQuantizedGather(size_t stream, Communicator &comm,
                            const Instruction &inst, std::byte *flat,
                            const CollectiveContext &context);
  /// A quantized reduce_scatter (qgZ): one all-to-all of int4 chunks per
  /// grid axis of the group, last axis first, the partial sums in f32 in
  /// `staging` (docs/ScheduleFormat.md, "Quantized reduce-scatters").
  Status runQuantizedReduceScatter(size_t stream, Communicator &comm,
                                   const Instruction &inst, std::byte *staging,
                                   const CollectiveContext &context);
  /// One tensor of a swap to or from the nvme arena in the NVMe swap store.
  Status swapThroughStore(size_t stream, const ValueInfo &from,
                          const ValueInfo &to, int64_t bytes);
  /// Host bytes for swaps between device memory and the store.
  std::vector<std::byte> swapStaging;

  /// Debug mode: the free that ended each buffer in this step.
  std::vector<const Instruction *> freedBy;
  /// An instruction's time marks (Device::markTime), resolved after the
  /// step's synchronize.
  struct PendingEvent {
    const Instruction *inst;
    int64_t start, end;
    int64_t iteration; // -1 outside the loop
  };
  std::vector<std::vector<PendingEvent>> pendingEvents;
  std::vector<std::vector<TraceEvent>> streamEvents;
  Clock::time_point epoch;
  /// keepGradients: the gradient record of each compute instruction, by
  /// index.
  std::map<size_t, size_t> gradientRecordAt;

private:
  void workerLoop(size_t stream);
  Status runStream(size_t stream);
  /// Runs instructions [begin, end) of `stream`; `iteration` is the loop's
  /// (0-based) for the body, -1 outside it.
  Status runRange(size_t stream, size_t begin, size_t end, int64_t iteration);
  Status runInstruction(size_t stream, size_t index, int64_t iteration);
  /// Copies the carried values' inits (`entry`) or nexts into them on the
  /// compute stream.
  Status copyCarried(bool entry);
  /// Marks `stream` done with `iteration` iterations and waits until every
  /// stream is; false when a stream failed.
  bool awaitIteration(size_t stream, int64_t iteration);
  Status runCollective(size_t stream, const Instruction &inst);
  Status checkNotFreed(const Instruction &inst) const;
  /// keepGradients: copies the grad operands of the optimizer instructions
  /// [index, end of its group) of the compute stream that the schedule
  /// records, on that stream, before they run.
  Status captureGradients(size_t index);
  void fail(const Status &status);
};

void Executor::Impl::fail(const Status &status) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (firstError.isOk())
      firstError = status;
    failed = true;
  }
  eventCv.notify_all();
}

void Executor::Impl::workerLoop(size_t stream) {
  int64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      workCv.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
    }
    Status status = runStream(stream);
    if (!status.isOk())
      fail(status);
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++workersDone;
    }
    doneCv.notify_all();
  }
}

Status Executor::Impl::runStep(int64_t stepNumber) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    std::fill(recordCount.begin(), recordCount.end(), 0);
    std::fill(iterationsDone.begin(), iterationsDone.end(), 0);
    std::fill(freedBy.begin(), freedBy.end(), nullptr);
    failed = false;
    firstError = Status::ok();
    workersDone = 0;
    currentStep = stepNumber;
    if (executor.nvme_)
      executor.nvme_->setStep(stepNumber);
    ++generation;
  }
  workCv.notify_all();
  Status status = runStream(0);
  if (!status.isOk())
    fail(status);
  std::unique_lock<std::mutex> lock(mutex);
  doneCv.wait(lock, [&] { return workersDone == workers.size(); });
  return firstError;
}

Status Executor::Impl::prepareAll() {
  for (size_t si = 0; si < schedule.streams().size(); ++si) {
    const std::vector<Instruction> &list = schedule.streams()[si].instructions;
    prepared[si].resize(list.size());
    grouped[si].assign(list.size(), false);
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].kind != Instruction::Kind::Compute)
        continue;
      // The device may run a group of instructions as one op (a
      // multi-tensor optimizer update, a fused row program).
      const size_t limit = getGroupLimit(schedule, si, i);
      const size_t count = std::min(device.groupLength(si, i), list.size() - i);
      if (count > 1 && i + count <= limit) {
        StatusOr<std::unique_ptr<PreparedOp>> op =
            device.prepareGroup(si, i, count);
        if (!op.isOk())
          return op.status();
        if (*op) {
          prepared[si][i] = std::move(*op);
          for (size_t k = i + 1; k < i + count; ++k)
            grouped[si][k] = true;
          i += count - 1;
          continue;
        }
      }
      StatusOr<std::unique_ptr<PreparedOp>> op = device.prepare(list[i]);
      if (!op.isOk())
        return op.status();
      prepared[si][i] = std::move(*op);
    }
  }
  return Status::ok();
}

Status Executor::Impl::runStream(size_t stream) {
  const size_t size = schedule.streams()[stream].instructions.size();
  const std::optional<LoopInfo> &loop = schedule.loop();
  if (!loop)
    return runRange(stream, 0, size, -1);
  const size_t begin = loop->bodyBegin[stream], end = loop->bodyEnd[stream];
  ZERO_RETURN_IF_ERROR(runRange(stream, 0, begin, -1));
  if (stream == 0)
    ZERO_RETURN_IF_ERROR(copyCarried(/*entry=*/true));
  for (int64_t iteration = 0; iteration < loop->count; ++iteration) {
    if (iteration > 0 && !awaitIteration(stream, iteration))
      return Status::ok(); // another stream failed: its error is the step's
    ZERO_RETURN_IF_ERROR(runRange(stream, begin, end, iteration));
    if (stream == 0)
      ZERO_RETURN_IF_ERROR(copyCarried(/*entry=*/false));
  }
  return runRange(stream, end, size, -1);
}

Status Executor::Impl::runRange(size_t stream, size_t begin, size_t end,
                                int64_t iteration) {
  const Stream &list = schedule.streams()[stream];
  bool trace = executor.options_.trace;
  for (size_t i = begin; i < end; ++i) {
    if (failed.load())
      return Status::ok(); // another stream failed: its error is the step's
    const Instruction &inst = list.instructions[i];
    bool timed = trace && inst.kind != Instruction::Kind::Record;
    int64_t start = timed ? device.markTime(stream) : -1;
    ZERO_RETURN_IF_ERROR(runInstruction(stream, i, iteration));
    if (timed)
      pendingEvents[stream].push_back(
          {&inst, start, device.markTime(stream), iteration});
  }
  return Status::ok();
}

Status Executor::Impl::copyCarried(bool entry) {
  if (failed.load())
    return Status::ok();
  for (const CarriedValue &carried : schedule.loop()->carried) {
    std::byte *to = address(carried.value);
    const std::byte *from = address(entry ? carried.init : carried.next);
    int64_t bytes = schedule.values().values[carried.value].bytes();
    if (bytes > 0 && to != from) // the loader allows the same bytes
      ZERO_RETURN_IF_ERROR(device.copy(0, to, from, bytes));
  }
  return Status::ok();
}

// A barrier of the streams between iterations. On CUDA, cudaStreamWaitEvent
// takes the record of an event most recently enqueued when it is called: a
// stream that ran ahead into the next iteration and recorded the event again
// would make a wait of this iteration take that later record. Past the
// barrier, every stream has enqueued all of the previous iteration, waits
// included, before any enqueues a record of this one. It costs a rendezvous
// of the host threads per iteration, while the device runs on.
bool Executor::Impl::awaitIteration(size_t stream, int64_t iteration) {
  auto allDone = [&] {
    return std::all_of(iterationsDone.begin(), iterationsDone.end(),
                       [&](int64_t done) { return done >= iteration; });
  };
  std::unique_lock<std::mutex> lock(mutex);
  iterationsDone[stream] = iteration;
  if (allDone()) {
    // The last to arrive: the body's frees end their buffers for one
    // iteration only.
    const LoopInfo &loop = *schedule.loop();
    for (const Instruction *&free : freedBy)
      if (free && free->point >= loop.begin && free->point <= loop.end)
        free = nullptr;
    lock.unlock();
    eventCv.notify_all();
    return !failed.load();
  }
  eventCv.wait(lock, [&] { return failed.load() || allDone(); });
  return !failed.load();
}

void Executor::Impl::resolveTrace() {
  for (size_t stream = 0; stream < pendingEvents.size(); ++stream) {
    for (const PendingEvent &pending : pendingEvents[stream]) {
      // A mark the device could not take (its pool spent): no span rather
      // than one at the wrong time.
      if (pending.start < 0 || pending.end < 0)
        continue;
      const Instruction &inst = *pending.inst;
      TraceEvent event;
      event.name = inst.kind == Instruction::Kind::Wait
                       ? "wait " + std::to_string(inst.event)
                       : inst.op;
      bool compute = inst.kind == Instruction::Kind::Compute ||
                     inst.kind == Instruction::Kind::LoopSlice;
      event.category = inst.isCollective()                    ? "collective"
                       : inst.kind == Instruction::Kind::Swap ? "swap"
                       : compute                              ? "compute"
                                                              : "sync";
      event.rank = comm.rank();
      event.stream = schedule.streams()[stream].name;
      event.startUs = device.resolveTime(pending.start);
      event.durationUs = device.resolveTime(pending.end) - event.startUs;
      event.args = {{"step", currentStep}, {"point", inst.point}};
      if (pending.iteration >= 0)
        event.args["iteration"] = pending.iteration;
      // Ran inside the op of an earlier instruction (Device::prepareGroup).
      if (grouped[stream][pending.inst -
                          schedule.streams()[stream].instructions.data()])
        event.args["grouped"] = true;
      if (!inst.loc.empty())
        event.args["loc"] = inst.loc;
      streamEvents[stream].push_back(std::move(event));
    }
    pendingEvents[stream].clear();
  }
  device.clearTimeMarks();
}

Status Executor::Impl::checkNotFreed(const Instruction &inst) const {
  auto check = [&](const std::vector<int64_t> &ids,
                   const char *what) -> Status {
    for (size_t i = 0; i < ids.size(); ++i) {
      const ValueInfo &value = schedule.values().values[ids[i]];
      if (!value.isTensor)
        continue;
      const Instruction *free = freedBy[value.buffer];
      if (!free)
        continue;
      const BufferInfo &buffer = schedule.buffers()[value.buffer];
      return ZERO_ERROR(kFailedPrecondition,
                        schedule.name() + ": " + inst.describe() + ": " + what +
                            " " + std::to_string(i) + " (" +
                            schedule.describeValue(ids[i]) + ") uses buffer " +
                            std::to_string(buffer.id) + " '" + buffer.name +
                            "' after its free at " + free->describe() +
                            " (step " + std::to_string(currentStep) + ")");
    }
    return Status::ok();
  };
  ZERO_RETURN_IF_ERROR(check(inst.operands, "operand"));
  return check(inst.results, "result");
}

Status Executor::Impl::runInstruction(size_t stream, size_t index,
                                      int64_t iteration) {
  const Instruction &inst = schedule.streams()[stream].instructions[index];
  if (executor.options_.debug && inst.kind != Instruction::Kind::Free) {
    std::lock_guard<std::mutex> lock(mutex);
    ZERO_RETURN_IF_ERROR(checkNotFreed(inst));
  }
  switch (inst.kind) {
  case Instruction::Kind::Compute: {
    if (grouped[stream][index])
      return Status::ok(); // the group's op ran at its first instruction
    if (stream == 0 && !gradientRecordAt.empty())
      ZERO_RETURN_IF_ERROR(captureGradients(index));
    Status status = prepared[stream][index]->run(currentStep);
    if (!status.isOk())
      return Status(status.code(),
                    "rank " + std::to_string(comm.rank()) + ": step " +
                        std::to_string(currentStep) + ": " + status.message(),
                    status.file(), status.line());
    return Status::ok();
  }
  case Instruction::Kind::Record: {
    ZERO_RETURN_IF_ERROR(device.recordEvent(stream, inst.event));
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++recordCount[inst.event];
    }
    eventCv.notify_all();
    return Status::ok();
  }
  case Instruction::Kind::Wait: {
    // The record of this iteration is the iteration-th of the body's; the
    // last after the loop; a record outside the body is issued once.
    int64_t needed = !recordInBody[inst.event] ? 1
                     : iteration >= 0          ? iteration + 1
                                               : schedule.loop()->count;
    {
      std::unique_lock<std::mutex> lock(mutex);
      eventCv.wait(lock, [&] {
        return recordCount[inst.event] >= needed || failed.load();
      });
      if (failed.load())
        return Status::ok(); // runStream stops next
    }
    // The record has been issued: the device can order on it.
    return device.waitEvent(stream, inst.event);
  }
  case Instruction::Kind::Free:
    if (executor.options_.debug) {
      std::lock_guard<std::mutex> lock(mutex);
      for (int64_t id : inst.values)
        freedBy[schedule.values().values[id].buffer] = &inst;
    }
    return Status::ok();
  case Instruction::Kind::LoopSlice: {
    // The loader checked that the operand is `count` blocks of the result.
    const int64_t bytes = schedule.values().values[inst.results[0]].bytes();
    if (bytes == 0)
      return Status::ok();
    return device.copy(stream, address(inst.results[0]),
                       address(inst.operands[0]) + iteration * bytes, bytes);
  }
  case Instruction::Kind::AllGather:
  case Instruction::Kind::ReduceScatter:
  case Instruction::Kind::AllReduce:
    return runCollective(stream, inst);
  case Instruction::Kind::Swap:
    return runSwap(stream, inst);
  }
  return Status::ok();
}

Status Executor::Impl::captureGradients(size_t index) {
  const std::vector<bool> &members = grouped[0];
  for (size_t i = index; i < members.size() && (i == index || members[i]);
       ++i) {
    auto it = gradientRecordAt.find(i);
    if (it == gradientRecordAt.end())
      continue;
    const GradientRecord &record = schedule.gradientRecords()[it->second];
    std::vector<std::byte> &to = executor.gradientStaging_[it->second];
    // On the compute stream, ordered after whatever wrote the operand; the
    // conversion to fp32 waits for the end of the step.
    ZERO_RETURN_IF_ERROR(device.copy(0, to.data(), address(record.grad),
                                     static_cast<int64_t>(to.size())));
  }
  return Status::ok();
}

Status Executor::Impl::runSwap(size_t stream, const Instruction &inst) {
  const ValueTable &values = schedule.values();
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    const ValueInfo &from = values.values[inst.operands[i]];
    const ValueInfo &to = values.values[inst.results[i]];
    const int64_t bytes = from.bytes();
    if (bytes == 0)
      continue;
    const BufferInfo &fromBuffer = schedule.bufferOf(from.id);
    const BufferInfo &toBuffer = schedule.bufferOf(to.id);
    MemorySpace fromSpace = fromBuffer.space;
    MemorySpace toSpace = toBuffer.space;
    Status status;
    if (executor.nvme_ &&
        (fromSpace == MemorySpace::Nvme || toSpace == MemorySpace::Nvme)) {
      status = swapThroughStore(stream, from, to, bytes);
    } else {
      status = device.copy(stream, address(to.id), address(from.id), bytes);
    }
    if (!status.isOk())
      return Status(status.code(),
                    "rank " + std::to_string(comm.rank()) + ": step " +
                        std::to_string(currentStep) + ": " + inst.describe() +
                        ": swapping " + schedule.describeValue(from.id) + ": " +
                        status.message(),
                    status.file(), status.line());
    // NVMe traffic passes through host memory: a device <-> NVMe swap also
    // crosses the device boundary.
    if (fromSpace == MemorySpace::Device)
      deviceToHost += bytes;
    if (toSpace == MemorySpace::Device)
      hostToDevice += bytes;
    if (fromSpace == MemorySpace::Nvme)
      nvmeRead += bytes;
    if (toSpace == MemorySpace::Nvme)
      nvmeWrite += bytes;
  }
  return Status::ok();
}

Status Executor::Impl::swapThroughStore(size_t stream, const ValueInfo &from,
                                        const ValueInfo &to, int64_t bytes) {
  const BufferInfo &fromBuffer = schedule.bufferOf(from.id);
  const BufferInfo &toBuffer = schedule.bufferOf(to.id);
  // The CPU touches the tensors: on a device that runs asynchronously, the
  // work this swap waited for (a kernel writing a host tensor) must be done.
  if (!device.isHostMemory())
    ZERO_RETURN_IF_ERROR(device.synchronizeStream(stream));
  // Memory the store can read and write with the CPU: host memory, or a
  // staging copy of device memory on a device without it.
  bool staged =
      !device.isHostMemory() && (fromBuffer.space == MemorySpace::Device ||
                                 toBuffer.space == MemorySpace::Device);
  if (staged && swapStaging.size() < static_cast<size_t>(bytes))
    swapStaging.resize(static_cast<size_t>(bytes));
  if (toBuffer.space == MemorySpace::Nvme) {
    const std::byte *source = address(from.id);
    if (staged) {
      ZERO_RETURN_IF_ERROR(device.read(swapStaging.data(), source, bytes));
      source = swapStaging.data();
    }
    return executor.writeNvme(toBuffer.offset, source, bytes, toBuffer.name);
  }
  std::byte *target = staged ? swapStaging.data() : address(to.id);
  ZERO_RETURN_IF_ERROR(
      executor.readNvme(fromBuffer.offset, target, bytes, fromBuffer.name));
  if (staged)
    return device.write(address(to.id), target, bytes);
  return Status::ok();
}

Status Executor::Impl::runCollective(size_t stream, const Instruction &inst) {
  if (executor.options_.beforeCollective)
    executor.options_.beforeCollective(currentStep, inst);
  CollectiveContext context;
  context.what = inst.op + " of bucket " +
                 (inst.loc.empty() ? inst.path : "at " + inst.loc) + " (step " +
                 std::to_string(currentStep) + ")";
  context.cancel = &failed;
  context.stream = device.nativeStream(stream);
  // A collective over some grid axes runs among its group: the layouts are
  // cut for the group, and the group's rank picks this rank's shard.
  Communicator &comm = inst.gridAxes.empty()
                           ? this->comm
                           : *executor.groupCommunicators_.at(inst.gridAxes);
  const int64_t n = comm.size();
  const int64_t rank = comm.rank();
  const int64_t width = getDTypeWidth(inst.dtype);
  const int64_t block = inst.bucketNumel;
  const size_t count = inst.operands.size();
  auto bytes = [&](int64_t id) { return address(id); };
  // Packing and unpacking the flat bucket: copies on the comm stream.
  auto copy = [&](std::byte *to, const std::byte *from,
                  int64_t elements) -> Status {
    if (elements <= 0 || to == from)
      return Status::ok();
    return device.copy(stream, to, from, elements * width);
  };

  if (!inst.staging) {
    // One tensor, no padding: MPI reads the operand and writes the result.
    std::byte *in = bytes(inst.operands[0]);
    std::byte *out = bytes(inst.results[0]);
    switch (inst.kind) {
    case Instruction::Kind::AllGather:
      if (inst.hierarchical) {
        // In place in the result, which is the flat bucket.
        ZERO_RETURN_IF_ERROR(copy(out + rank * block * width, in, block));
        return gatherBlocks(comm, inst, out, block, inst.dtype, context);
      }
      return comm.allGather(in, out, block, inst.dtype, context);
    case Instruction::Kind::ReduceScatter:
      return comm.reduceScatter(in, out, block, inst.dtype, inst.reduction,
                                context);
    default:
      return comm.allReduce(in, out, block, inst.dtype, inst.reduction,
                            context);
    }
  }

  std::byte *flat =
      device.arenaBase(inst.staging->space) + inst.staging->offset;
  if (inst.quantize)
    return inst.kind == Instruction::Kind::AllGather
               ? runQuantizedGather(stream, comm, inst, flat, context)
               : runQuantizedReduceScatter(stream, comm, inst, flat, context);
  switch (inst.kind) {
  case Instruction::Kind::AllGather: {
    // Rank-major: this rank's block holds its shard of every operand.
    int64_t offset = 0;
    for (size_t i = 0; i < count; ++i) {
      int64_t shard = inst.layouts[i].shardNumel;
      ZERO_RETURN_IF_ERROR(copy(flat + (rank * block + offset) * width,
                                bytes(inst.operands[i]), shard));
      offset += shard;
    }
    ZERO_RETURN_IF_ERROR(
        gatherBlocks(comm, inst, flat, block, inst.dtype, context));
    offset = 0;
    for (size_t i = 0; i < count; ++i) {
      const PartitionLayout &layout = inst.layouts[i];
      std::byte *out = bytes(inst.results[i]);
      for (int64_t r = 0; r < n; ++r) {
        ElementRange owned = layout.ownedRange(r); // no padding
        ZERO_RETURN_IF_ERROR(copy(out + owned.begin * width,
                                  flat + (r * block + offset) * width,
                                  owned.size()));
      }
      offset += layout.shardNumel;
    }
    return Status::ok();
  }
  case Instruction::Kind::ReduceScatter: {
    int64_t offset = 0;
    for (size_t i = 0; i < count; ++i) {
      const PartitionLayout &layout = inst.layouts[i];
      const std::byte *in = bytes(inst.operands[i]);
      for (int64_t r = 0; r < n; ++r) {
        ElementRange owned = layout.ownedRange(r);
        std::byte *to = flat + (r * block + offset) * width;
        ZERO_RETURN_IF_ERROR(copy(to, in + owned.begin * width, owned.size()));
        if (owned.size() < layout.shardNumel)
          ZERO_RETURN_IF_ERROR(
              device.fillZero(stream, to + owned.size() * width,
                              (layout.shardNumel - owned.size()) * width));
      }
      offset += layout.shardNumel;
    }
    // In place: the rank's reduced block lands at the start.
    ZERO_RETURN_IF_ERROR(comm.reduceScatter(flat, flat, block, inst.dtype,
                                            inst.reduction, context));
    offset = 0;
    for (size_t i = 0; i < count; ++i) {
      ZERO_RETURN_IF_ERROR(copy(bytes(inst.results[i]), flat + offset * width,
                                inst.layouts[i].shardNumel));
      offset += inst.layouts[i].shardNumel;
    }
    return Status::ok();
  }
  default: {
    int64_t offset = 0;
    for (size_t i = 0; i < count; ++i) {
      int64_t elements = schedule.values().values[inst.operands[i]].numel;
      ZERO_RETURN_IF_ERROR(
          copy(flat + offset * width, bytes(inst.operands[i]), elements));
      offset += elements;
    }
    ZERO_RETURN_IF_ERROR(
        comm.allReduce(flat, flat, block, inst.dtype, inst.reduction, context));
    offset = 0;
    for (size_t i = 0; i < count; ++i) {
      int64_t elements = schedule.values().values[inst.results[i]].numel;
      ZERO_RETURN_IF_ERROR(
          copy(bytes(inst.results[i]), flat + offset * width, elements));
      offset += elements;
    }
    return Status::ok();
  }
  }
}

Communicator &Executor::Impl::groupCommunicator(const GroupHop &hop) {
  return *executor.groupCommunicators_.at(std::vector<int64_t>{hop.axis});
}

Status Executor::Impl::gatherBlocks(Communicator &comm, const Instruction &inst,
                                    std::byte *flat, int64_t count, DType type,
                                    const CollectiveContext &context) {
  const int64_t blockBytes = count * getDTypeWidth(type);
  const std::vector<GroupHop> hops = inst.hierarchical
                                         ? schedule.groupHops(inst.gridAxes)
                                         : std::vector<GroupHop>{};
  // Flat, or hierarchical over one axis of several ranks: the same call.
  if (hops.size() <= 1)
    return comm.allGather(flat + comm.rank() * blockBytes, flat, count, type,
                          context);
  // Hop by hop, the first axis first: before each, this rank holds the
  // blocks of every coordinate on the axes hopped over and its own on the
  // others. Those on the later axes (the in-group rank modulo the hop's
  // stride) place them; the hop's group, the ranks that differ only on its
  // axis, are ranked by that axis' coordinate, stride blocks apart.
  BlockGrid held;
  held.blockBytes = blockBytes;
  for (const GroupHop &hop : hops) {
    ZERO_RETURN_IF_ERROR(groupCommunicator(hop).allGatherBlocks(
        flat + comm.rank() % hop.stride * blockBytes, held,
        hop.stride * blockBytes, context));
    held.counts.push_back(hop.size);
    held.strides.push_back(hop.stride * blockBytes);
  }
  return Status::ok();
}

Status Executor::Impl::runQuantizedGather(size_t stream, Communicator &comm,
                                          const Instruction &inst,
                                          std::byte *flat,
                                          const CollectiveContext &context) {
  // Every step is the device's, on the comm stream, in the order of the
  // communicator's calls (which that stream orders too).
  const Instruction::Quantization &q = *inst.quantize;
  const int bits = static_cast<int>(q.bits);
  const int64_t n = comm.size();
  const int64_t packed = q.packedBytes;
  const int64_t width = getDTypeWidth(inst.dtype);
  const PackedOffsets at = getPackedOffsets(inst);
  std::byte *own = flat + comm.rank() * packed;
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    const int64_t shard = inst.layouts[i].shardNumel;
    const std::byte *operand = address(inst.operands[i]);
    if (schedule.values().values[inst.operands[i]].quantized) {
      // Stored quantized in this block size (the loader checked it): its
      // packed bytes are its scales, then its values, already.
      const int64_t scaleBytes = getPackedScaleBytes(shard, q.blockSize);
      ZERO_RETURN_IF_ERROR(
          device.copy(stream, own + at.scales[i], operand, scaleBytes));
      ZERO_RETURN_IF_ERROR(device.copy(stream, own + at.values[i],
                                       operand + scaleBytes,
                                       getQuantizedBytes(shard, bits)));
      continue;
    }
    ZERO_RETURN_IF_ERROR(device.quantizeBlocks(
        stream, operand, inst.dtype, shard, bits, q.blockSize,
        own + at.values[i], own + at.scales[i]));
  }
  // One byte per element: the communicator counts the P-byte ring.
  ZERO_RETURN_IF_ERROR(
      gatherBlocks(comm, inst, flat, packed, DType::I1, context));
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    const PartitionLayout &layout = inst.layouts[i];
    std::byte *out = address(inst.results[i]);
    for (int64_t r = 0; r < n; ++r) {
      // The owned elements are a prefix of the shard: padding is dropped.
      ElementRange owned = layout.ownedRange(r);
      const std::byte *block = flat + r * packed;
      ZERO_RETURN_IF_ERROR(device.dequantizeBlocks(
          stream, block + at.values[i], block + at.scales[i], owned.size(),
          bits, q.blockSize, inst.dtype, out + owned.begin * width));
    }
  }
  return Status::ok();
}

Status Executor::Impl::runQuantizedReduceScatter(
    size_t stream, Communicator &comm, const Instruction &inst,
    std::byte *staging, const CollectiveContext &context) {
  // The device's steps on the comm stream, as the quantized gather's.
  const Instruction::Quantization &q = *inst.quantize;
  const int bits = static_cast<int>(q.bits);
  const int64_t blockSize = q.blockSize;
  const int64_t groupSize = comm.size();
  const int64_t chunkBytes = q.packedBytes; // C
  const int64_t numel = inst.bucketNumel;   // S: a chunk's elements
  const int64_t width = getDTypeWidth(inst.dtype);
  const size_t count = inst.operands.size();
  // Staging: [f32 partial sums][packed chunks to send][received]. The
  // loader checked its size and that the sums are 4-byte aligned.
  float *sums = reinterpret_cast<float *>(staging);
  std::byte *send = staging + q.sumsBytes;
  std::byte *recv = send + groupSize * chunkBytes;

  // Where operand i lies in a packed chunk (its scales, its int4 values)
  // and in a chunk of sums.
  const PackedOffsets at = getPackedOffsets(inst);
  const std::vector<int64_t> &scaleAt = at.scales, &valueAt = at.values;
  std::vector<int64_t> sumAt(count);
  for (size_t i = 1; i < count; ++i)
    sumAt[i] = sumAt[i - 1] + inst.layouts[i - 1].shardNumel;

  // A group of one rank (every axis of one rank): its own tensors, exact.
  const std::vector<GroupHop> hops = schedule.groupHops(inst.gridAxes);
  if (hops.empty()) {
    for (size_t i = 0; i < count; ++i) {
      const PartitionLayout &layout = inst.layouts[i];
      ElementRange owned = layout.ownedRange(0);
      std::byte *out = address(inst.results[i]);
      ZERO_RETURN_IF_ERROR(device.copy(stream, out,
                                       address(inst.operands[i]) +
                                           owned.begin * width,
                                       owned.size() * width));
      ZERO_RETURN_IF_ERROR(
          device.fillZero(stream, out + owned.size() * width,
                          (layout.shardNumel - owned.size()) * width));
    }
    return Status::ok();
  }
  // The hops' communicators: the collective's own for its only hop, else
  // the single-axis groups (createGroupCommunicators).
  auto hopCommunicator = [&](size_t t) -> Communicator & {
    return hops.size() == 1 ? comm : groupCommunicator(hops[t]);
  };
  // A group index's coordinate on hops[t]'s axis: row-major over the axes.
  auto coordinate = [&](int64_t chunk, size_t t) {
    return chunk / hops[t].stride % hops[t].size;
  };

  // The chunks this rank holds, in increasing group index.
  std::vector<int64_t> held(static_cast<size_t>(groupSize));
  for (int64_t j = 0; j < groupSize; ++j)
    held[j] = j;
  for (size_t hop = 0; hop < hops.size(); ++hop) {
    const size_t t = hops.size() - 1 - hop;
    Communicator &hopComm = hopCommunicator(t);
    const int64_t peers = hopComm.size();
    const int64_t kept = static_cast<int64_t>(held.size()) / peers;
    // Quantize each held chunk into the place of its destination: peer k
    // gets the chunks of coordinate k, in increasing index.
    std::vector<int64_t> sent(static_cast<size_t>(peers), 0);
    std::vector<int64_t> keep;
    for (size_t h = 0; h < held.size(); ++h) {
      const int64_t chunk = held[h];
      const int64_t peer = coordinate(chunk, t);
      if (peer == hopComm.rank())
        keep.push_back(chunk);
      std::byte *packed = send + (peer * kept + sent[peer]++) * chunkBytes;
      if (hop == 0)
        // Padding quantizes to zero scales and zero values.
        ZERO_RETURN_IF_ERROR(device.fillZero(stream, packed, chunkBytes));
      for (size_t i = 0; i < count; ++i) {
        std::byte *values = packed + valueAt[i];
        if (hop == 0) {
          // Chunk j of operand i: what group rank j ends with.
          ElementRange owned = inst.layouts[i].ownedRange(chunk);
          ZERO_RETURN_IF_ERROR(device.quantizeBlocks(
              stream, address(inst.operands[i]) + owned.begin * width,
              inst.dtype, owned.size(), bits, blockSize, values,
              packed + scaleAt[i]));
        } else {
          ZERO_RETURN_IF_ERROR(device.quantizeBlocks(
              stream, sums + h * numel + sumAt[i], DType::F32,
              inst.layouts[i].shardNumel, bits, blockSize, values,
              packed + scaleAt[i]));
        }
      }
    }
    ZERO_RETURN_IF_ERROR(
        hopComm.allToAll(send, recv, kept * chunkBytes, context));
    // Every peer sent its copies of the kept chunks, in the same order:
    // add them up in the order of the senders.
    ZERO_RETURN_IF_ERROR(device.fillZero(
        stream, sums, kept * numel * static_cast<int64_t>(sizeof(float))));
    for (int64_t peer = 0; peer < peers; ++peer)
      for (int64_t h = 0; h < kept; ++h) {
        const std::byte *packed = recv + (peer * kept + h) * chunkBytes;
        for (size_t i = 0; i < count; ++i)
          ZERO_RETURN_IF_ERROR(device.accumulateDequantized(
              stream, packed + valueAt[i], packed + scaleAt[i],
              inst.layouts[i].shardNumel, bits, blockSize,
              sums + h * numel + sumAt[i]));
      }
    held = std::move(keep);
  }

  // The rank's own chunk, summed over the group.
  const int64_t divisor = inst.reduction == ReduceOp::Avg ? groupSize : 1;
  for (size_t i = 0; i < count; ++i)
    ZERO_RETURN_IF_ERROR(device.roundSums(
        stream, sums + sumAt[i], inst.layouts[i].shardNumel, divisor,
        inst.dtype, address(inst.results[i])));
  return Status::ok();
}

Executor::Executor(std::shared_ptr<const Schedule> schedule,
                   std::unique_ptr<Device> device, Communicator &communicator,
                   ExecutorOptions options)
    : schedule_(std::move(schedule)), device_(std::move(device)),
      communicator_(communicator), options_(std::move(options)) {}

Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>>
Executor::create(std::shared_ptr<const Schedule> schedule,
                 std::unique_ptr<Device> device, Communicator &communicator,
                 ExecutorOptions options) {
  if (!schedule)
    return ZERO_ERROR(kInvalidArgument, "no schedule");
  if (!device)
    return ZERO_ERROR(kInvalidArgument, "no device");
  ZERO_RETURN_IF_ERROR(
      schedule->checkLaunch(communicator.size(), options.memoryLimit));
  ZERO_RETURN_IF_ERROR(checkInterNodeNsPerByte(options.interNodeNsPerByte));
  std::unique_ptr<Executor> executor(
      new Executor(std::move(schedule), std::move(device), communicator,
                   std::move(options)));
  const Schedule &s = *executor->schedule_;
  communicator.setRanksPerNode(s.ranksPerNode());
  // Before the groups are split off, which inherit it.
  communicator.setInterNodeNsPerByte(executor->options_.interNodeNsPerByte);
  if (s.arenaBytes(MemorySpace::Nvme) > 0) {
    NvmeSwapOptions nvme;
    nvme.nvmePath = executor->options_.nvmePath.empty()
                        ? s.nvmePath()
                        : executor->options_.nvmePath;
    if (nvme.nvmePath.empty())
      return ZERO_ERROR(kInvalidArgument,
                        s.name() + ": memory.arenas.nvme: the step swaps " +
                            std::to_string(s.arenaBytes(MemorySpace::Nvme)) +
                            " bytes to NVMe, but no directory was given for "
                            "them: compile with nvme_path or pass one "
                            "(zero-run --nvme-path DIR)");
    nvme.rank = communicator.rank();
    nvme.arenaBytes = s.arenaBytes(MemorySpace::Nvme);
    nvme.blockSize = s.aio().blockSize;
    nvme.queueDepth = static_cast<int>(s.aio().queueDepth);
    nvme.singleSubmit = s.aio().singleSubmit;
    nvme.overlapEvents = s.aio().overlapEvents;
    nvme.faults = executor->options_.nvmeFaults;
    StatusOr<std::unique_ptr<NvmeSwapSpace>> store =
        NvmeSwapSpace::create(nvme);
    if (!store.isOk())
      return Status(store.status().code(),
                    "rank " + std::to_string(communicator.rank()) + ": " +
                        store.status().message(),
                    store.status().file(), store.status().line());
    executor->nvme_ = std::move(*store);
    executor->device_->setExternalArena(MemorySpace::Nvme);
    // The file holds the arena: counted as the space's bytes.
    executor->tracker_.allocate(nvme.arenaBytes, MemorySpace::Nvme);
    // Only swaps reach the file; any other instruction needs its tensors in
    // memory.
    for (const Stream &stream : s.streams())
      for (const Instruction &inst : stream.instructions) {
        if (inst.kind == Instruction::Kind::Swap)
          continue;
        for (const std::vector<int64_t> *ids : {&inst.operands, &inst.results})
          for (int64_t id : *ids)
            if (s.values().values[id].isTensor &&
                s.bufferOf(id).space == MemorySpace::Nvme)
              return ZERO_ERROR(kInvalidArgument,
                                s.name() + ": " + inst.describe() +
                                    " reads or writes " + s.describeValue(id) +
                                    " in nvme memory; only swaps move tensors "
                                    "to and from NVMe");
      }
  }
  if (!executor->device_->isHostMemory()) {
    for (size_t i = 0; i < s.arguments().size(); ++i)
      if (s.values().values[s.arguments()[i].value].quantized)
        return ZERO_ERROR(
            kInvalidArgument,
            s.name() + ": arguments[" + std::to_string(i) + "] (" +
                s.describeValue(s.arguments()[i].value) +
                "): a parameter stored quantized (ZeRO++ "
                "zero_quantized_nontrainable_weights) runs on the host "
                "backend only");
  }
  ZERO_RETURN_IF_ERROR(
      executor->device_->load(*executor->schedule_, communicator.rank(),
                              communicator.size(), executor->tracker_));
  executor->impl_ = std::make_unique<Impl>(*executor);
  ZERO_RETURN_IF_ERROR(executor->impl_->prepareAll());
  // Data arguments are written in host memory and moved to the device.
  if (!executor->device_->isHostMemory())
    for (const ArgumentInfo &arg : executor->schedule_->arguments())
      if (arg.kind == ArgumentInfo::Kind::Data) {
        const ValueInfo &value =
            executor->schedule_->values().values[arg.value];
        executor->dataStaging_.emplace_back(static_cast<size_t>(value.bytes()));
      }
  if (executor->options_.keepGradients) {
    const std::vector<GradientRecord> &records =
        executor->schedule_->gradientRecords();
    for (size_t i = 0; i < records.size(); ++i) {
      executor->impl_->gradientRecordAt[records[i].instruction] = i;
      executor->gradientStaging_.emplace_back(static_cast<size_t>(
          executor->schedule_->values().values[records[i].grad].bytes()));
    }
  }
  executor->impl_->startWorkers();
  return executor;
}

Status Executor::createGroupCommunicators() {
  const Schedule &s = *schedule_;
  for (const Stream &stream : s.streams())
    for (const Instruction &inst : stream.instructions)
      if (inst.isCollective()) {
        if (!inst.gridAxes.empty())
          groupCommunicators_[inst.gridAxes];
        // The hops of a collective taken axis by axis run over one axis
        // each; the collective's own group serves its only hop.
        if (inst.hopsByAxis())
          if (std::vector<GroupHop> hops = s.groupHops(inst.gridAxes);
              hops.size() > 1)
            for (const GroupHop &hop : hops)
              groupCommunicators_[{hop.axis}];
      }
  for (auto &[axes, group] : groupCommunicators_) {
    RankGroup place = s.rankGroup(communicator_.rank(), axes);
    std::string what = "the group over grid_axes " + joinAxes(axes);
    StatusOr<std::unique_ptr<Communicator>> made = communicator_.split(
        static_cast<int>(place.color), static_cast<int>(place.rank),
        CollectiveContext{"splitting " + what, nullptr, nullptr});
    if (!made.isOk())
      return Status(made.status().code(),
                    s.name() + ": " + made.status().message(),
                    made.status().file(), made.status().line());
    if ((*made)->size() != place.size || (*made)->rank() != place.rank)
      return ZERO_ERROR(
          kInternal,
          s.name() + ": rank " + std::to_string(communicator_.rank()) + ": " +
              what + " has rank " + std::to_string((*made)->rank()) + " of " +
              std::to_string((*made)->size()) + ", not " +
              std::to_string(place.rank) + " of " + std::to_string(place.size));
    group = std::move(*made);
  }
  return Status::ok();
}

CommunicationCounters Executor::countersOfAllGroups() const {
  CommunicationCounters total = communicator_.counters();
  for (const auto &[axes, group] : groupCommunicators_) {
    CommunicationCounters counters = group->counters();
    total.bytesSent += counters.bytesSent;
    total.bytesReceived += counters.bytesReceived;
    total.calls += counters.calls;
    total.bytesSentInterNode += counters.bytesSentInterNode;
    total.bytesReceivedInterNode += counters.bytesReceivedInterNode;
    total.delayInjectedNs += counters.delayInjectedNs;
  }
  return total;
}

TensorRef Executor::tensorData(int64_t id) {
  const ValueInfo &value = schedule_->values().values[id];
  return {impl_->address(id), value.dtype, &value.shape, value.numel};
}

TensorRef Executor::argumentData(size_t index) {
  return tensorData(schedule_->arguments()[index].value);
}

Status Executor::readTensor(int64_t id, void *host) {
  const BufferInfo &buffer = schedule_->bufferOf(id);
  int64_t bytes = schedule_->values().values[id].bytes();
  if (nvme_ && buffer.space == MemorySpace::Nvme)
    return readNvme(buffer.offset, host, bytes, buffer.name);
  return device_->read(host, impl_->address(id), bytes);
}

Status Executor::readTensor(int64_t id, std::string &bytes) {
  bytes.resize(static_cast<size_t>(schedule_->values().values[id].bytes()));
  return readTensor(id, bytes.data());
}

/// What the optimizer instruction of `record` (of the compute stream, the
/// first) did to its gradient operand (its unscale and clip scalars, as they
/// were in the step that just ran): the kept gradient is the one it
/// consumed, the loss scale divided out. `read` holds the registers read
/// so far this step: the instructions share one scale, and a device read
/// may wait for the device.
static StatusOr<ops::GradientScaling>
getGradientScaling(const Schedule &schedule, Device &device,
                   const GradientRecord &record,
                   std::map<int64_t, float> &read) {
  const Instruction &inst =
      schedule.streams()[0].instructions[record.instruction];
  const ops::GradientScalingOperands layout(inst.fields, inst.operands.size());
  ops::GradientScaling scaling;
  auto get = [&](size_t index, bool &present, float &value) -> Status {
    if (index == layout.kAbsent)
      return Status::ok();
    const int64_t id = inst.operands[index];
    auto it = read.find(id);
    if (it == read.end()) {
      StatusOr<Scalar> scalar = device.readScalar(id);
      if (!scalar.isOk())
        return scalar.status();
      it = read.emplace(id, static_cast<float>(scalar->f)).first;
    }
    present = true;
    value = it->second;
    return Status::ok();
  };
  ZERO_RETURN_IF_ERROR(get(layout.scale, scaling.unscale, scaling.scale));
  ZERO_RETURN_IF_ERROR(get(layout.coef, scaling.clip, scaling.coef));
  return scaling;
}

const std::vector<float> *Executor::keptGradient(int64_t param) const {
  auto it = keptGradients_.find(param);
  return it == keptGradients_.end() ? nullptr : &it->second;
}

Status Executor::writeTensor(int64_t id, const void *host) {
  const BufferInfo &buffer = schedule_->bufferOf(id);
  int64_t bytes = schedule_->values().values[id].bytes();
  if (nvme_ && buffer.space == MemorySpace::Nvme)
    return writeNvme(buffer.offset, host, bytes, buffer.name);
  return device_->write(impl_->address(id), host, bytes);
}

Status Executor::writeNvme(int64_t offset, const void *host, int64_t bytes,
                           const std::string &label) {
  return nvme_->wait(nvme_->write(offset, host, bytes, label));
}

Status Executor::readNvme(int64_t offset, void *host, int64_t bytes,
                          const std::string &label) {
  return nvme_->wait(nvme_->read(offset, host, bytes, label));
}

std::vector<TraceEvent> Executor::takeTraceEvents() {
  std::vector<TraceEvent> events;
  for (std::vector<TraceEvent> &stream : impl_->streamEvents) {
    events.insert(events.end(), std::make_move_iterator(stream.begin()),
                  std::make_move_iterator(stream.end()));
    stream.clear();
  }
  return events;
}

/// The loss as a double, from its bytes in `dtype`.
static double lossFromBytes(const std::byte *data, DType dtype) {
  switch (dtype) {
  case DType::F64: {
    double value;
    std::memcpy(&value, data, sizeof(value));
    return value;
  }
  case DType::F32: {
    float value;
    std::memcpy(&value, data, sizeof(value));
    return value;
  }
  default: {
    uint16_t bits;
    std::memcpy(&bits, data, sizeof(bits));
    return dtype == DType::BF16 ? ops::widenBF16(bits) : ops::widenF16(bits);
  }
  }
}

StatusOr<StepStats> Executor::step(const DataFiller &fill) {
  const Schedule &s = *schedule_;
  if (impl_->failed.load())
    return ZERO_ERROR(kFailedPrecondition,
                      s.name() + ": an earlier step failed; the rank's state "
                                 "is undefined");
  // The groups' communicators at the first step, which every rank reaches
  // only after the set-up agreed (Session::create): splitting in create()
  // would leave the other ranks in MPI_Comm_split, without a deadline, when
  // one rank failed its set-up and went on to the agreement.
  if (!groupsCreated_) {
    ZERO_RETURN_IF_ERROR(createGroupCommunicators());
    groupsCreated_ = true;
  }
  StepStats stats;
  stats.step = stepsTaken_ + 1;
  Clock::time_point start = Clock::now();
  if (fill) {
    size_t staged = 0;
    for (size_t i = 0; i < s.arguments().size(); ++i) {
      const ArgumentInfo &arg = s.arguments()[i];
      if (arg.kind != ArgumentInfo::Kind::Data)
        continue;
      if (device_->isHostMemory()) {
        ZERO_RETURN_IF_ERROR(fill(arg, stepsTaken_, argumentData(i)));
        continue;
      }
      TensorRef host = argumentData(i);
      host.data = dataStaging_[staged++].data();
      ZERO_RETURN_IF_ERROR(fill(arg, stepsTaken_, host));
      ZERO_RETURN_IF_ERROR(writeTensor(arg.value, host.data));
    }
  }
  CommunicationCounters before = countersOfAllGroups();
  Status status = impl_->runStep(stats.step);
  if (status.isOk())
    status = device_->synchronize();
  if (!status.isOk()) {
    impl_->failed = true;
    return status;
  }
  CommunicationCounters after = countersOfAllGroups();

  // The step is done: its gradients replace the last one's.
  std::map<int64_t, float> scalingRegisters;
  for (size_t i = 0; i < gradientStaging_.size(); ++i) {
    const GradientRecord &record = s.gradientRecords()[i];
    const ValueInfo &grad = s.values().values[record.grad];
    std::vector<float> &kept = keptGradients_[record.paramArgument];
    kept.resize(
        static_cast<size_t>(s.stateNumel(s.arguments()[record.paramArgument])));
    TensorRef staged{gradientStaging_[i].data(), grad.dtype, &grad.shape,
                     grad.numel};
    std::vector<float> values = loadFloats(staged, grad.numel);
    StatusOr<ops::GradientScaling> scaling =
        getGradientScaling(s, *device_, record, scalingRegisters);
    if (!scaling.isOk())
      return scaling.status();
    if (scaling->active())
      for (float &value : values)
        value = ops::scaleGradient(*scaling, value);
    std::copy(values.begin(), values.end(), kept.begin() + record.offset);
  }

  // Updates whose result lives elsewhere than the argument.
  for (const ResultInfo &result : s.results()) {
    if (result.kind != ResultInfo::Kind::Update)
      continue;
    TensorRef from = tensorData(result.value);
    TensorRef to = argumentData(static_cast<size_t>(result.argument));
    const int64_t argValue = s.arguments()[result.argument].value;
    if (nvme_ && (s.bufferOf(result.value).space == MemorySpace::Nvme ||
                  s.bufferOf(argValue).space == MemorySpace::Nvme)) {
      if (s.bufferOf(result.value).id == s.bufferOf(argValue).id)
        continue;
      std::vector<std::byte> bytes(
          static_cast<size_t>(s.values().values[result.value].bytes()));
      ZERO_RETURN_IF_ERROR(readTensor(result.value, bytes.data()));
      ZERO_RETURN_IF_ERROR(writeTensor(argValue, bytes.data()));
      continue;
    }
    ZERO_RETURN_IF_ERROR(device_->copy(0, to.data, from.data,
                                       from.numel * getDTypeWidth(to.dtype)));
  }

  stats.loss = std::numeric_limits<double>::quiet_NaN();
  if (s.lossValue() >= 0) {
    const ValueInfo &loss = s.values().values[s.lossValue()];
    if (!loss.isTensor) {
      StatusOr<Scalar> value = device_->readScalar(loss.id);
      if (!value.isOk())
        return value.status();
      stats.loss = value->f;
    } else {
      std::byte bytes[8] = {};
      ZERO_RETURN_IF_ERROR(device_->read(bytes, tensorData(loss.id).data,
                                         getDTypeWidth(loss.dtype)));
      stats.loss = lossFromBytes(bytes, loss.dtype);
    }
  }
  ZERO_RETURN_IF_ERROR(device_->synchronize());
  stats.meanLoss = stats.loss;
  stats.stepTimeSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  stats.peakBytes = tracker_.peak(MemorySpace::Device);
  if (options_.trace) {
    impl_->resolveTrace();
    // A track of its own with one span per step, above the streams'.
    TraceEvent event;
    event.name = "step " + std::to_string(stats.step);
    event.category = "step";
    event.rank = communicator_.rank();
    event.stream = "step";
    event.startUs = microsecondsSince(impl_->epoch, start);
    event.durationUs = stats.stepTimeSeconds * 1e6;
    event.args = {{"loss", stats.loss}};
    impl_->streamEvents[0].push_back(std::move(event));
  }
  stats.bytesSent = after.bytesSent - before.bytesSent;
  stats.bytesReceived = after.bytesReceived - before.bytesReceived;
  stats.bytesSentInterNode =
      after.bytesSentInterNode - before.bytesSentInterNode;
  stats.bytesReceivedInterNode =
      after.bytesReceivedInterNode - before.bytesReceivedInterNode;
  stats.interNodeDelayNs = after.delayInjectedNs - before.delayInjectedNs;
  stats.bytesHostToDevice = impl_->hostToDevice.exchange(0);
  stats.bytesDeviceToHost = impl_->deviceToHost.exchange(0);
  stats.bytesNvmeRead = impl_->nvmeRead.exchange(0);
  stats.bytesNvmeWrite = impl_->nvmeWrite.exchange(0);
  for (int i = 0; i < kNumMemorySpaces; ++i)
    stats.peakBytesBySpace[i] = tracker_.peak(static_cast<MemorySpace>(i));
  ++stepsTaken_;
  if (options_.averageLoss && communicator_.size() > 1) {
    CollectiveContext context{"all_reduce of the loss (step " +
                                  std::to_string(stats.step) + ")",
                              nullptr};
    ZERO_RETURN_IF_ERROR(
        hostCommunicator().allReduce(&stats.meanLoss, &stats.meanLoss, 1,
                                     DType::F64, ReduceOp::Avg, context));
  }
  return stats;
}

size_t getGroupLimit(const Schedule &schedule, size_t stream, size_t first) {
  const size_t size = schedule.streams()[stream].instructions.size();
  const std::optional<LoopInfo> &loop = schedule.loop();
  if (!loop)
    return size;
  return first < loop->bodyBegin[stream] ? loop->bodyBegin[stream]
         : first < loop->bodyEnd[stream] ? loop->bodyEnd[stream]
                                         : size;
}

bool isOptimizerParamCast(const Instruction &optimizer,
                          const Instruction &cast) {
  if (optimizer.kind != Instruction::Kind::Compute ||
      cast.kind != Instruction::Kind::Compute || !optimizer.info ||
      !cast.info ||
      (optimizer.code() != OpCode::Adam && optimizer.code() != OpCode::Sgd) ||
      cast.code() != OpCode::Map || optimizer.results.empty() ||
      cast.operands.size() != 2 || cast.results.size() != 1 ||
      cast.operands[0] != optimizer.results[0] ||
      !cast.fields.has(Field::Body))
    return false;
  const RegionBody &body = cast.fields.getBody(Field::Body);
  return body.arguments.size() == 2 && body.ops.size() == 1 &&
         body.ops[0].code() == OpCode::TruncF &&
         body.ops[0].operands.size() == 1 &&
         body.ops[0].operands[0] == body.arguments[0] &&
         body.yield.size() == 1 && body.yield[0] == body.ops[0].results[0];
}

size_t getOptimizerRunLength(const std::vector<Instruction> &instructions,
                             size_t first) {
  const Instruction &head = instructions[first];
  if (head.kind != Instruction::Kind::Compute ||
      (head.code() != OpCode::Adam && head.code() != OpCode::Sgd))
    return 1;
  size_t end = first + 1;
  for (size_t last = first;;) {
    if (end < instructions.size() &&
        isOptimizerParamCast(instructions[last], instructions[end]))
      ++end;
    if (end == instructions.size() ||
        instructions[end].kind != Instruction::Kind::Compute ||
        instructions[end].code() != head.code())
      break;
    last = end++;
  }
  return end - first;
}

} // namespace zero::runtime
