//===- Executor.cpp - runs a schedule, one step at a time -----------------===//

#include "zero/runtime/Executor.h"

#include "comm/ElementOps.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

namespace zero::runtime {

namespace {
using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point epoch, Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - epoch).count();
}

/// A tensor of a rank's arenas.
class HostFrame final : public Frame {
public:
  HostFrame(const Schedule &schedule, const HostArenas &arenas, int rank,
            int worldSize)
      : values_(schedule.values().values), rank_(rank), worldSize_(worldSize) {
    data_.resize(values_.size(), nullptr);
    registers_.resize(values_.size());
    for (const ValueInfo &value : values_) {
      if (!value.isTensor)
        continue;
      const BufferInfo &buffer = schedule.buffers()[value.buffer];
      // An empty arena has no memory; its tensors have no elements.
      std::byte *base = arenas.base(buffer.space);
      data_[value.id] = base ? base + buffer.offset : nullptr;
    }
  }

  TensorRef tensor(int64_t id) override {
    const ValueInfo &value = values_[id];
    return {data_[id], value.dtype, &value.shape, value.numel};
  }
  Scalar &scalar(int64_t id) override { return registers_[id]; }
  int rank() const override { return rank_; }
  int worldSize() const override { return worldSize_; }

private:
  const std::vector<ValueInfo> &values_;
  std::vector<void *> data_;
  std::vector<Scalar> registers_;
  int rank_;
  int worldSize_;
};
} // namespace

/// The streams' shared state and the comm thread.
class Executor::Impl {
public:
  Impl(Executor &executor, HostArenas arenas)
      : executor(executor), schedule(*executor.schedule_),
        comm(executor.communicator_), arenas(std::move(arenas)),
        frame(schedule, this->arenas, comm.rank(), comm.size()),
        recorded(static_cast<size_t>(schedule.numEvents()), 0),
        freedBy(schedule.buffers().size(), nullptr),
        streamEvents(schedule.streams().size()), epoch(Clock::now()) {}

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

  /// Runs the streams of one step; the first error, if any.
  Status runStep(int64_t stepNumber);

  Executor &executor;
  const Schedule &schedule;
  Communicator &comm;
  HostArenas arenas;
  HostFrame frame;

  std::mutex mutex;
  std::condition_variable eventCv; // an event recorded, or a failure
  std::condition_variable workCv;  // a step to run, or stopping
  std::condition_variable doneCv;  // a worker finished its stream
  std::vector<char> recorded;
  std::atomic<bool> failed{false};
  Status firstError;
  int64_t generation = 0;
  size_t workersDone = 0;
  bool stopping = false;
  int64_t currentStep = 0;
  std::vector<std::thread> workers;

  /// Debug mode: the free that ended each buffer in this step.
  std::vector<const Instruction *> freedBy;
  std::vector<std::vector<TraceEvent>> streamEvents;
  Clock::time_point epoch;

private:
  void workerLoop(size_t stream);
  Status runStream(size_t stream);
  Status runInstruction(const Instruction &inst);
  Status runCollective(const Instruction &inst);
  Status checkNotFreed(const Instruction &inst) const;
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
    std::fill(recorded.begin(), recorded.end(), 0);
    std::fill(freedBy.begin(), freedBy.end(), nullptr);
    failed = false;
    firstError = Status::ok();
    workersDone = 0;
    currentStep = stepNumber;
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

Status Executor::Impl::runStream(size_t stream) {
  const Stream &list = schedule.streams()[stream];
  bool trace = executor.options_.trace;
  std::vector<TraceEvent> &events = streamEvents[stream];
  for (const Instruction &inst : list.instructions) {
    if (failed.load())
      return Status::ok(); // another stream failed: its error is the step's
    Clock::time_point start = trace ? Clock::now() : Clock::time_point();
    ZERO_RETURN_IF_ERROR(runInstruction(inst));
    if (trace && inst.kind != Instruction::Kind::Record) {
      Clock::time_point end = Clock::now();
      TraceEvent event;
      event.name = inst.kind == Instruction::Kind::Wait
                       ? "wait " + std::to_string(inst.event)
                       : inst.op;
      event.category = inst.isCollective()                       ? "collective"
                       : inst.kind == Instruction::Kind::Compute ? "compute"
                                                                 : "sync";
      event.rank = comm.rank();
      event.stream = list.name;
      event.startUs = microsecondsSince(epoch, start);
      event.durationUs = microsecondsSince(start, end);
      event.args = {{"step", currentStep}, {"point", inst.point}};
      if (!inst.loc.empty())
        event.args["loc"] = inst.loc;
      events.push_back(std::move(event));
    }
  }
  return Status::ok();
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

Status Executor::Impl::runInstruction(const Instruction &inst) {
  if (executor.options_.debug && inst.kind != Instruction::Kind::Free) {
    std::lock_guard<std::mutex> lock(mutex);
    ZERO_RETURN_IF_ERROR(checkNotFreed(inst));
  }
  switch (inst.kind) {
  case Instruction::Kind::Compute: {
    Status status = inst.compute->run(frame);
    if (!status.isOk())
      return Status(status.code(),
                    "rank " + std::to_string(comm.rank()) + ": step " +
                        std::to_string(currentStep) + ": " + status.message(),
                    status.file(), status.line());
    return Status::ok();
  }
  case Instruction::Kind::Record: {
    {
      std::lock_guard<std::mutex> lock(mutex);
      recorded[inst.event] = 1;
    }
    eventCv.notify_all();
    return Status::ok();
  }
  case Instruction::Kind::Wait: {
    std::unique_lock<std::mutex> lock(mutex);
    eventCv.wait(lock, [&] { return recorded[inst.event] || failed.load(); });
    return Status::ok(); // on a failure, runStream stops next
  }
  case Instruction::Kind::Free:
    if (executor.options_.debug) {
      std::lock_guard<std::mutex> lock(mutex);
      for (int64_t id : inst.values)
        freedBy[schedule.values().values[id].buffer] = &inst;
    }
    return Status::ok();
  case Instruction::Kind::AllGather:
  case Instruction::Kind::ReduceScatter:
  case Instruction::Kind::AllReduce:
    return runCollective(inst);
  }
  return Status::ok();
}

Status Executor::Impl::runCollective(const Instruction &inst) {
  if (executor.options_.beforeCollective)
    executor.options_.beforeCollective(currentStep, inst);
  CollectiveContext context;
  context.what = inst.op + " of bucket " +
                 (inst.loc.empty() ? inst.path : "at " + inst.loc) + " (step " +
                 std::to_string(currentStep) + ")";
  context.cancel = &failed;
  const int64_t n = comm.size();
  const int64_t rank = comm.rank();
  const int64_t width = getDTypeWidth(inst.dtype);
  const int64_t block = inst.bucketNumel;
  const size_t count = inst.operands.size();
  auto bytes = [&](int64_t id) {
    return static_cast<std::byte *>(frame.tensor(id).data);
  };
  auto copy = [&](std::byte *to, const std::byte *from, int64_t elements) {
    if (elements > 0 && to != from)
      std::memmove(to, from, static_cast<size_t>(elements * width));
  };

  if (!inst.staging) {
    // One tensor, no padding: MPI reads the operand and writes the result.
    std::byte *in = bytes(inst.operands[0]);
    std::byte *out = bytes(inst.results[0]);
    switch (inst.kind) {
    case Instruction::Kind::AllGather:
      return comm.allGather(in, out, block, inst.dtype, context);
    case Instruction::Kind::ReduceScatter:
      return comm.reduceScatter(in, out, block, inst.dtype, inst.reduction,
                                context);
    default:
      return comm.allReduce(in, out, block, inst.dtype, inst.reduction,
                            context);
    }
  }

  std::byte *flat = arenas.at(inst.staging->space, inst.staging->offset);
  switch (inst.kind) {
  case Instruction::Kind::AllGather: {
    // Rank-major: this rank's block holds its shard of every operand.
    int64_t offset = 0;
    for (size_t i = 0; i < count; ++i) {
      int64_t shard = inst.layouts[i].shardNumel;
      copy(flat + (rank * block + offset) * width, bytes(inst.operands[i]),
           shard);
      offset += shard;
    }
    ZERO_RETURN_IF_ERROR(comm.allGather(flat + rank * block * width, flat,
                                        block, inst.dtype, context));
    offset = 0;
    for (size_t i = 0; i < count; ++i) {
      const LayoutInfo &layout = inst.layouts[i];
      std::byte *out = bytes(inst.results[i]);
      for (int64_t r = 0; r < n; ++r) {
        int64_t begin = r * layout.shardNumel;
        int64_t elements =
            std::min(layout.shardNumel, layout.numel - begin); // no padding
        copy(out + begin * width, flat + (r * block + offset) * width,
             elements);
      }
      offset += layout.shardNumel;
    }
    return Status::ok();
  }
  case Instruction::Kind::ReduceScatter: {
    int64_t offset = 0;
    for (size_t i = 0; i < count; ++i) {
      const LayoutInfo &layout = inst.layouts[i];
      const std::byte *in = bytes(inst.operands[i]);
      for (int64_t r = 0; r < n; ++r) {
        int64_t begin = r * layout.shardNumel;
        int64_t elements = std::max<int64_t>(
            0, std::min(layout.shardNumel, layout.numel - begin));
        std::byte *to = flat + (r * block + offset) * width;
        copy(to, in + begin * width, elements);
        std::memset(
            to + elements * width, 0,
            static_cast<size_t>((layout.shardNumel - elements) * width));
      }
      offset += layout.shardNumel;
    }
    // In place: the rank's reduced block lands at the start.
    ZERO_RETURN_IF_ERROR(comm.reduceScatter(flat, flat, block, inst.dtype,
                                            inst.reduction, context));
    offset = 0;
    for (size_t i = 0; i < count; ++i) {
      copy(bytes(inst.results[i]), flat + offset * width,
           inst.layouts[i].shardNumel);
      offset += inst.layouts[i].shardNumel;
    }
    return Status::ok();
  }
  default: {
    int64_t offset = 0;
    for (size_t i = 0; i < count; ++i) {
      int64_t elements = schedule.values().values[inst.operands[i]].numel;
      copy(flat + offset * width, bytes(inst.operands[i]), elements);
      offset += elements;
    }
    ZERO_RETURN_IF_ERROR(
        comm.allReduce(flat, flat, block, inst.dtype, inst.reduction, context));
    offset = 0;
    for (size_t i = 0; i < count; ++i) {
      int64_t elements = schedule.values().values[inst.results[i]].numel;
      copy(bytes(inst.results[i]), flat + offset * width, elements);
      offset += elements;
    }
    return Status::ok();
  }
  }
}

Executor::Executor(std::shared_ptr<const Schedule> schedule,
                   Communicator &communicator, ExecutorOptions options)
    : schedule_(std::move(schedule)), communicator_(communicator),
      options_(std::move(options)) {}

Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>>
Executor::create(std::shared_ptr<const Schedule> schedule,
                 Communicator &communicator, ExecutorOptions options) {
  if (!schedule)
    return ZERO_ERROR(kInvalidArgument, "no schedule");
  ZERO_RETURN_IF_ERROR(
      schedule->checkLaunch(communicator.size(), options.memoryLimit));
  std::unique_ptr<Executor> executor(
      new Executor(std::move(schedule), communicator, std::move(options)));
  StatusOr<HostArenas> arenas =
      HostArenas::create(*executor->schedule_, executor->tracker_);
  if (!arenas.isOk())
    return arenas.status();
  executor->impl_ = std::make_unique<Impl>(*executor, std::move(*arenas));
  executor->impl_->startWorkers();
  return executor;
}

TensorRef Executor::tensorData(int64_t id) { return impl_->frame.tensor(id); }

TensorRef Executor::argumentData(size_t index) {
  return tensorData(schedule_->arguments()[index].value);
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

StatusOr<StepStats> Executor::step(const DataFiller &fill) {
  const Schedule &s = *schedule_;
  if (impl_->failed.load())
    return ZERO_ERROR(kFailedPrecondition,
                      s.name() + ": an earlier step failed; the rank's state "
                                 "is undefined");
  StepStats stats;
  stats.step = stepsTaken_ + 1;
  Clock::time_point start = Clock::now();
  if (fill) {
    for (size_t i = 0; i < s.arguments().size(); ++i) {
      const ArgumentInfo &arg = s.arguments()[i];
      if (arg.kind == ArgumentInfo::Kind::Data)
        ZERO_RETURN_IF_ERROR(fill(arg, stepsTaken_, argumentData(i)));
    }
  }
  CommunicationCounters before = communicator_.counters();
  Status status = impl_->runStep(stats.step);
  if (!status.isOk())
    return status;
  CommunicationCounters after = communicator_.counters();

  // Updates whose result lives elsewhere than the argument.
  for (const ResultInfo &result : s.results()) {
    if (result.kind != ResultInfo::Kind::Update)
      continue;
    TensorRef from = tensorData(result.value);
    TensorRef to = argumentData(static_cast<size_t>(result.argument));
    if (from.data != to.data && from.numel > 0)
      std::memmove(to.data, from.data,
                   static_cast<size_t>(from.numel * getDTypeWidth(to.dtype)));
  }

  stats.loss = std::numeric_limits<double>::quiet_NaN();
  if (s.lossValue() >= 0) {
    const ValueInfo &loss = s.values().values[s.lossValue()];
    if (!loss.isTensor) {
      stats.loss = impl_->frame.scalar(loss.id).f;
    } else {
      const void *data = tensorData(loss.id).data;
      switch (loss.dtype) {
      case DType::F64:
        stats.loss = *static_cast<const double *>(data);
        break;
      case DType::F32:
        stats.loss = *static_cast<const float *>(data);
        break;
      case DType::BF16:
        stats.loss = comm::bf16ToFloat(*static_cast<const uint16_t *>(data));
        break;
      default:
        stats.loss = comm::f16ToFloat(*static_cast<const uint16_t *>(data));
        break;
      }
    }
  }
  stats.meanLoss = stats.loss;
  stats.stepTimeSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  stats.peakBytes = tracker_.peak();
  if (options_.trace) {
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
  ++stepsTaken_;
  if (options_.averageLoss && communicator_.size() > 1) {
    CollectiveContext context{"all_reduce of the loss (step " +
                                  std::to_string(stats.step) + ")",
                              nullptr};
    ZERO_RETURN_IF_ERROR(communicator_.allReduce(&stats.meanLoss,
                                                 &stats.meanLoss, 1, DType::F64,
                                                 ReduceOp::Avg, context));
  }
  return stats;
}

} // namespace zero::runtime
