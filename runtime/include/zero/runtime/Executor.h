//===- Executor.h - runs a schedule, one step at a time ---------*- C++ -*-===//
//
// The executor runs a schedule on a Device (Device.h), which owns the rank's
// memory (one arena per space, docs/Runtime.md, "Memory") and the compute
// kernels. It issues the schedule's streams side by side: `compute` from the
// caller's thread, `comm` from a thread of its own that issues the
// collectives. Events (record/wait) are the only synchronization between
// them: a wait is issued once its record has been, and the device orders the
// work (the host runs it there and then; CUDA enqueues it). When one stream
// fails, the other stops at its next wait or collective, and the step
// returns the first error.
//
// A step: the data arguments are filled (a callback), the streams run, the
// `update` results are copied into their arguments' buffers where they
// differ, and the step's statistics are collected.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_EXECUTOR_H
#define ZERO_RUNTIME_EXECUTOR_H

#include "zero/runtime/Communicator.h"
#include "zero/runtime/Device.h"
#include "zero/runtime/Memory.h"
#include "zero/runtime/NvmeSwap.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Safetensors.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"
#include "zero/runtime/Trace.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime {

struct ExecutorOptions {
  /// Checks at run time that no instruction touches a buffer after the
  /// `free` that ended it.
  bool debug = false;
  /// Records a TraceEvent per instruction (takeTraceEvents).
  bool trace = false;
  /// Bytes of memory the plan may use (Schedule::checkLaunch); 0: no limit.
  int64_t memoryLimit = 0;
  /// A simulated slow link between the schedule's nodes: nanoseconds a rank
  /// waits per byte it sent across nodes, after each collective, on the comm
  /// stream (Communicator::setInterNodeNsPerByte); 0: none.
  double interNodeNsPerByte = 0;
  /// Average the loss over the ranks after each step (an all-reduce of one
  /// double): StepStats::meanLoss.
  bool averageLoss = true;
  /// The communicator for host buffers (the loss average, the export); null:
  /// the schedule's communicator, which then must take host buffers.
  Communicator *hostCommunicator = nullptr;
  /// The directory of the nvme arena's swap file (NvmeSwap.h); empty: the
  /// schedule's `memory.nvme_path`. A schedule with an nvme arena needs one.
  std::string nvmePath;
  /// Tests: failures the NVMe swap store injects.
  NvmeSwapFaults nvmeFaults;
  /// Keep a copy of each parameter's gradient as the optimizer consumes it
  /// (the grad operand of each instruction the schedule's `gradients`
  /// records), in fp32, for keptGradient (docs/Runtime.md, "State
  /// accessors").
  bool keepGradients = false;
  /// Called on the comm stream before each collective with the 1-based step
  /// number; tests use it to stop a rank in the middle of a step.
  std::function<void(int64_t step, const Instruction &)> beforeCollective;
};

struct StepStats {
  /// 1-based number of the step.
  int64_t step = 0;
  /// This rank's loss result (NaN when the schedule has none).
  double loss = 0;
  /// The loss averaged over the ranks (equal to loss without averageLoss).
  double meanLoss = 0;
  double stepTimeSeconds = 0;
  /// The most bytes the runtime held for tensors so far.
  int64_t peakBytes = 0;
  /// The ring volume of the step's collectives (Communicator.h).
  int64_t bytesSent = 0;
  int64_t bytesReceived = 0;
  /// What of them crossed between nodes (the schedule's topology).
  int64_t bytesSentInterNode = 0;
  int64_t bytesReceivedInterNode = 0;
  /// The delay the simulated inter-node link injected into the step's
  /// collectives on this rank (ExecutorOptions::interNodeNsPerByte).
  int64_t interNodeDelayNs = 0;
  /// The bytes the step's swaps moved (docs/ScheduleFormat.md, "Swaps"):
  /// onto and off the device, and read from and written to NVMe. A swap
  /// between the device and NVMe passes through host memory and counts in
  /// both.
  int64_t bytesHostToDevice = 0;
  int64_t bytesDeviceToHost = 0;
  int64_t bytesNvmeRead = 0;
  int64_t bytesNvmeWrite = 0;
  /// The most bytes held per memory space so far (peakBytes: the device's).
  std::array<int64_t, kNumMemorySpaces> peakBytesBySpace{};
};

/// Writes data argument `argument` (an element of Schedule::arguments()) for
/// the step with 0-based index `step` into `tensor` (host memory; the
/// executor moves it to the device).
using DataFiller = std::function<Status(const ArgumentInfo &argument,
                                        int64_t step, TensorRef tensor)>;

/// The initial values of the arguments (docs/Runtime.md,
/// "Initialization").
struct InitOptions {
  /// Keys the counter-based generator of Init.h.
  uint64_t seed = 0;
  /// Full fp32 parameters by name, instead of the generator: each rank
  /// reads the ranges it holds.
  const SafetensorsReader *parameters = nullptr;
};

class Executor {
public:
  /// Checks the launch (world size, memory limit), loads the schedule on
  /// `device` (arenas, streams), prepares every compute instruction and
  /// starts the comm stream's thread. The arguments start at zero: call
  /// initialize before the first step.
  static StatusOr<std::unique_ptr<Executor>>
  create(std::shared_ptr<const Schedule> schedule,
         std::unique_ptr<Device> device, Communicator &communicator,
         ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  /// Sets every param, state and step argument to its initial value:
  /// parameters from the generator (keyed by name, so every world size gets
  /// the same model) or from `options.parameters`, master weights to the
  /// parameter's fp32 value, moments to zero, step-level states and the step
  /// count to their values.
  Status initialize(const InitOptions &options);

  /// Runs one step. `fill` writes the data arguments; without it they keep
  /// what the caller wrote through argumentData. After a failed step the
  /// executor refuses further steps.
  StatusOr<StepStats> step(const DataFiller &fill = nullptr);

  /// The memory of tensor value `id` on the device (host memory only on the
  /// host device).
  TensorRef tensorData(int64_t id);
  TensorRef argumentData(size_t index);
  /// Copies tensor value `id` (all its bytes) to or from host memory,
  /// between steps.
  Status readTensor(int64_t id, void *host);
  Status writeTensor(int64_t id, const void *host);
  /// Reads tensor value `id` into `bytes`, resized to hold it.
  Status readTensor(int64_t id, std::string &bytes);

  /// The gradient of parameter argument `param` that the optimizer consumed
  /// in the last step, as the rank holds its optimizer states
  /// (Schedule::stateNumel elements, fp32); null without keepGradients,
  /// before the first step or for a parameter without gradient records.
  const std::vector<float> *keptGradient(int64_t param) const;
  bool keepsGradients() const { return options_.keepGradients; }

  /// Every parameter as full fp32, by name, taken from the fp32 master
  /// weights where the schedule has them, else from the parameters; shards
  /// are all-gathered. A collective: every rank calls it; rank 0 gets the
  /// tensors, the others an empty list.
  StatusOr<std::vector<NamedTensor>> exportParameters();
  /// The same, tensor by tensor: every rank takes part in each tensor's
  /// gather, and rank 0 passes each tensor to `emit` as it is complete, in
  /// the order of exportedTensors(), so that no rank holds more than one
  /// full tensor (a tiled weight is complete after its last tile). After an
  /// error of `emit` the gathers go on (the other ranks are in them) and
  /// the first error is returned.
  Status exportParameters(const std::function<Status(NamedTensor &&)> &emit);
  /// The names and shapes (NamedTensor::data empty) of the tensors the
  /// export gives, in its order.
  std::vector<NamedTensor> exportedTensors() const;

  /// The events recorded since the last call (with options.trace).
  std::vector<TraceEvent> takeTraceEvents();

  const Schedule &schedule() const { return *schedule_; }
  Device &device() { return *device_; }
  Communicator &communicator() { return communicator_; }
  int64_t stepsTaken() const { return stepsTaken_; }
  /// Continues the count of steps (and with it the data, which each step
  /// takes by its index) at `steps`, for a run resumed from a checkpoint.
  void resumeAt(int64_t steps) { stepsTaken_ = steps; }
  const MemoryTracker &memory() const { return tracker_; }

  class Impl;

  /// The NVMe swap store holding the nvme arena, or null when the schedule
  /// has none.
  NvmeSwapSpace *nvmeSwap() const { return nvme_.get(); }

private:
  Executor(std::shared_ptr<const Schedule> schedule,
           std::unique_ptr<Device> device, Communicator &communicator,
           ExecutorOptions options);
  Communicator &hostCommunicator() {
    return options_.hostCommunicator ? *options_.hostCommunicator
                                     : communicator_;
  }
  /// Splits the communicator once for each set of grid axes the schedule's
  /// collectives run over, in sorted order on every rank (at the first
  /// step).
  Status createGroupCommunicators();
  bool groupsCreated_ = false;
  /// The counters of the world's communicator and its groups', summed.
  CommunicationCounters countersOfAllGroups() const;

  /// Moves `bytes` between host memory and the nvme arena at `offset`,
  /// waiting for the store; `label` names the tensor in errors.
  Status writeNvme(int64_t offset, const void *host, int64_t bytes,
                   const std::string &label);
  Status readNvme(int64_t offset, void *host, int64_t bytes,
                  const std::string &label);

  std::shared_ptr<const Schedule> schedule_;
  /// Before the device, whose allocations it counts until they are freed.
  MemoryTracker tracker_;
  /// The nvme arena; the executor's threads (impl_) stop before it goes.
  std::unique_ptr<NvmeSwapSpace> nvme_;
  std::unique_ptr<Device> device_;
  Communicator &communicator_;
  /// The communicators of the collectives over some grid axes
  /// (Instruction::gridAxes), by axes.
  std::map<std::vector<int64_t>, std::unique_ptr<Communicator>>
      groupCommunicators_;
  ExecutorOptions options_;
  /// Host memory for the data arguments of a device without host memory.
  std::vector<std::vector<std::byte>> dataStaging_;
  /// keepGradients: each gradient record's grad operand as the step copied
  /// it (its dtype), and the fp32 gradients of the last step by parameter
  /// argument.
  std::vector<std::vector<std::byte>> gradientStaging_;
  std::map<int64_t, std::vector<float>> keptGradients_;
  int64_t stepsTaken_ = 0;
  std::unique_ptr<Impl> impl_;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_EXECUTOR_H
