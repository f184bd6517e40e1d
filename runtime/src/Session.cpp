//===- Session.cpp - a rank's whole run of a schedule ---------------------===//

#include "zero/runtime/Session.h"

#include "zero/runtime/Checkpoint.h"

#include "zero/runtime/host/Threads.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <thread>

namespace zero::runtime {

static int getEnvInt(std::initializer_list<const char *> names, int fallback) {
  for (const char *name : names)
    if (const char *value = std::getenv(name))
      return std::max(0, std::atoi(value));
  return fallback;
}

int getLocalRank() {
  return getEnvInt({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                    "SLURM_LOCALID", "LOCAL_RANK"},
                   0);
}

int getLocalSize() {
  return std::max(1, getEnvInt({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                "SLURM_NTASKS_PER_NODE", "LOCAL_WORLD_SIZE"},
                               1));
}

int chooseGpu(int localRank, int gpusPerNode, int visible, bool visibleSet) {
  if (gpusPerNode > 0)
    return localRank % gpusPerNode;
  return visibleSet && visible == 1 ? 0 : localRank;
}

/// The most bytes one collective of `schedule` moves through its buffers.
static int64_t getMaxCollectiveBytes(const Schedule &schedule) {
  int64_t most = 0;
  for (const Stream &stream : schedule.streams())
    for (const Instruction &inst : stream.instructions) {
      if (!inst.isCollective())
        continue;
      int64_t elements =
          inst.kind == Instruction::Kind::AllReduce
              ? inst.bucketNumel
              : inst.bucketNumel * schedule.groupSize(inst.gridAxes);
      most = std::max(most, elements * getDTypeWidth(inst.dtype));
      // The gathered packed blocks (N * P), or a quantized reduce-scatter's
      // largest all-to-all, its first (G * C).
      if (inst.quantize)
        most = std::max(most, inst.quantize->packedBytes *
                                  schedule.groupSize(inst.gridAxes));
    }
  return most;
}

CheckpointData getCheckpointData(const SessionOptions &options) {
  CheckpointData data;
  data.seed = options.seed;
  data.tokenFile = options.dataFile;
  data.arrays = !options.dataArrays.empty();
  data.shuffle = options.shuffleData;
  return data;
}

Session::~Session() {
  // The executor (and its comm thread) before the communicators it uses.
  executor_.reset();
  deviceComm_.reset();
}

StatusOr<std::unique_ptr<Session>> Session::create(const std::string &path,
                                                   SessionOptions options) {
  return create(std::shared_ptr<const Schedule>(), std::move(options), path);
}

StatusOr<std::unique_ptr<Session>>
Session::create(std::shared_ptr<const Schedule> schedule,
                SessionOptions options) {
  return create(std::move(schedule), std::move(options), "");
}

StatusOr<std::unique_ptr<Session>>
Session::create(std::shared_ptr<const Schedule> schedule,
                SessionOptions options, const std::string &path) {
  std::unique_ptr<Session> session(new Session());
  session->options_ = std::move(options);
  const SessionOptions &o = session->options_;
  if (o.device == DeviceKind::Cuda)
    prepareProcessForCuda(); // before MPI, which may initialize CUDA
  if (o.useMpi) {
    MpiOptions mpi;
    mpi.timeoutSeconds = o.commTimeoutSeconds;
    StatusOr<std::unique_ptr<Communicator>> created =
        createMpiCommunicator(mpi);
    if (!created.isOk())
      return created.status();
    session->host_ = std::move(*created);
  } else {
    session->host_ = createSelfCommunicator();
  }
  // The ranks on this machine share its cores.
  int threads = o.hostThreads;
  if (threads <= 0)
    threads = static_cast<int>(std::thread::hardware_concurrency()) /
              std::max(getLocalSize(), 1);
  setHostThreads(std::max(threads, 1));

  Status local = Status::ok();
  if (!schedule) {
    StatusOr<Schedule> loaded = Schedule::load(path);
    if (loaded.isOk())
      schedule = std::make_shared<const Schedule>(std::move(*loaded));
    else
      local = loaded.status();
  }
  if (local.isOk())
    local = session->setUp(std::move(schedule));
  Status agreed = session->agree(local);
  if (!agreed.isOk()) {
    if (o.reportSetUpFailure) {
      o.reportSetUpFailure(agreed);
      // Leave together: a rank returning first could exit, and its launcher
      // end rank 0 before it has reported. Best effort: a communicator that
      // failed in the agreement fails here too.
      (void)session->host_->barrier(
          CollectiveContext{"barrier after the failed set-up", nullptr});
    }
    return agreed;
  }
  return session;
}

Status Session::setUp(std::shared_ptr<const Schedule> schedule) {
  schedule_ = std::move(schedule);
  const SessionOptions &o = options_;

  std::unique_ptr<Device> device;
  Communicator *collectives = host_.get();
  if (o.device == DeviceKind::Cuda) {
    const int visible = countVisibleCudaDevices();
    const int ordinal =
        chooseGpu(getLocalRank(), o.gpusPerNode, visible,
                  std::getenv("CUDA_VISIBLE_DEVICES") != nullptr);
    StatusOr<std::unique_ptr<Device>> created = createCudaDevice(ordinal);
    if (!created.isOk() && visible > 0 && ordinal >= visible)
      return ZERO_ERROR(
          kInvalidArgument,
          "rank " + std::to_string(host_->rank()) + " (local rank " +
              std::to_string(getLocalRank()) +
              "): " + created.status().message() +
              (o.gpusPerNode > 0
                   ? "; --gpus-per-node " + std::to_string(o.gpusPerNode) +
                         " is more GPUs than it sees"
                   : "; ranks that share GPUs take --gpus-per-node"));
    if (!created.isOk())
      return created.status();
    device = std::move(*created);
    DeviceCommunicatorOptions comm;
    // NCCL takes one rank per GPU; ranks sharing one stage through MPI.
    bool shared = o.gpusPerNode > 0 && getLocalSize() > o.gpusPerNode;
    comm.kind =
        shared ? DeviceCommunication::StagedMpi : DeviceCommunication::Nccl;
    comm.deviceOrdinal = ordinal;
    comm.timeoutSeconds = o.commTimeoutSeconds;
    comm.maxCollectiveBytes = getMaxCollectiveBytes(*schedule_);
    StatusOr<std::unique_ptr<Communicator>> deviceComm =
        createDeviceCommunicator(*host_, comm);
    if (!deviceComm.isOk())
      return deviceComm.status();
    deviceComm_ = std::move(*deviceComm);
    collectives = deviceComm_.get();
  } else {
    device = createHostDevice();
  }

  ExecutorOptions executorOptions;
  executorOptions.debug = o.debug;
  executorOptions.trace = o.trace;
  executorOptions.memoryLimit = o.memoryLimit;
  executorOptions.interNodeNsPerByte = o.interNodeNsPerByte;
  executorOptions.hostCommunicator = host_.get();
  executorOptions.beforeCollective = o.beforeCollective;
  executorOptions.nvmePath = o.nvmePath;
  executorOptions.nvmeFaults = o.nvmeFaults;
  executorOptions.keepGradients = o.keepGradients;
  StatusOr<std::unique_ptr<Executor>> executor = Executor::create(
      schedule_, std::move(device), *collectives, executorOptions);
  if (!executor.isOk())
    return executor.status();
  executor_ = std::move(*executor);

  std::optional<CheckpointData> resumed;
  if (!o.resumeFrom.empty()) {
    CheckpointLoadStats loaded;
    StatusOr<CheckpointData> saved = loadCheckpoint(
        *executor_, o.resumeFrom, getCheckpointData(o), &loaded);
    if (!saved.isOk())
      return saved.status();
    resumed = std::move(*saved);
    resumeStats_ = loaded;
  } else {
    InitOptions init;
    init.seed = o.seed;
    std::optional<SafetensorsReader> parameters;
    if (!o.initFrom.empty()) {
      StatusOr<SafetensorsReader> opened = SafetensorsReader::open(o.initFrom);
      if (!opened.isOk())
        return opened.status();
      parameters.emplace(std::move(*opened));
      init.parameters = &*parameters;
    }
    ZERO_RETURN_IF_ERROR(executor_->initialize(init));
  }

  DataOptions data;
  data.seed = o.seed;
  data.tokenFile = o.dataFile;
  data.arrayFiles = o.dataArrays;
  data.shuffle = o.shuffleData;
  StatusOr<DataSource> source =
      DataSource::create(*schedule_, data, host_->rank(), host_->size());
  if (!source.isOk())
    return source.status();
  // A checkpoint that records no rows (an older one) continues by the step's
  // index, as its run read.
  if (resumed && !resumed->rowsRead.empty()) {
    Status status =
        source->resumeAt(executor_->stepsTaken(), resumed->rowsRead);
    if (!status.isOk())
      return Status(status.code(), o.resumeFrom + ": " + status.message(),
                    __FILE__, __LINE__);
  }
  data_.emplace(std::move(*source));
  return Status::ok();
}

Status Session::agree(const Status &local, const std::string &what) {
  Communicator &comm = *host_;
  if (comm.size() == 1)
    return local;
  int32_t failed = local.isOk() ? 0 : 1;
  CollectiveContext context{what, nullptr};
  ZERO_RETURN_IF_ERROR(
      comm.allReduce(&failed, &failed, 1, DType::I32, ReduceOp::Max, context));
  if (!failed)
    return Status::ok();
  StatusOr<std::vector<std::string>> messages =
      comm.gatherBytes(local.isOk() ? std::string() : local.message(), context);
  if (!messages.isOk())
    return messages.status();
  if (comm.rank() != 0)
    return Status(StatusCode::kFailedPrecondition, "", __FILE__, __LINE__);
  std::map<std::string, std::vector<int>> ranksOf;
  for (size_t r = 0; r < messages->size(); ++r)
    if (!(*messages)[r].empty())
      ranksOf[(*messages)[r]].push_back(static_cast<int>(r));
  std::string report;
  for (const auto &[message, ranks] : ranksOf) {
    if (static_cast<int>(ranks.size()) == comm.size()) {
      report += (report.empty() ? "" : "\n") + message;
      continue;
    }
    for (int r : ranks) {
      std::string prefix = "rank " + std::to_string(r) + ": ";
      report += (report.empty() ? "" : "\n") +
                (message.rfind(prefix, 0) == 0 ? message : prefix + message);
    }
  }
  StatusCode code =
      local.isOk() ? StatusCode::kFailedPrecondition : local.code();
  return Status(code, report, __FILE__, __LINE__);
}

StatusOr<StepStats> Session::step() { return executor_->step(data_->filler()); }

StatusOr<std::vector<NamedTensor>> Session::exportParameters() {
  return executor_->exportParameters();
}

Status Session::exportTo(const std::string &path,
                         const std::map<std::string, std::string> &metadata) {
  StatusOr<std::vector<NamedTensor>> tensors = exportParameters();
  if (!tensors.isOk())
    return tensors.status();
  if (rank() != 0)
    return Status::ok();
  return writeSafetensors(path, *tensors, metadata);
}

StatusOr<std::vector<TraceEvent>> Session::gatherTrace() {
  CollectiveContext context{"gather of the trace", nullptr};
  StatusOr<std::vector<std::string>> parts = host_->gatherBytes(
      serializeTraceEvents(executor_->takeTraceEvents()), context);
  if (!parts.isOk())
    return parts.status();
  std::vector<TraceEvent> events;
  for (const std::string &part : *parts) {
    StatusOr<std::vector<TraceEvent>> rankEvents = deserializeTraceEvents(part);
    if (!rankEvents.isOk())
      return rankEvents.status();
    events.insert(events.end(), rankEvents->begin(), rankEvents->end());
  }
  // Ranks share the machine's monotonic clock: start the trace at zero.
  double first = std::numeric_limits<double>::infinity();
  for (const TraceEvent &event : events)
    first = std::min(first, event.startUs);
  for (TraceEvent &event : events)
    event.startUs -= first;
  return events;
}

void Session::abortJob(int exitCode) {
  if (host_->size() > 1)
    runtime::abortJob(*host_, exitCode);
}

} // namespace zero::runtime
