//===- Executor.h - runs a schedule, one step at a time ---------*- C++ -*-===//
//
// The executor owns a rank's memory (one arena per space, docs/Runtime.md,
// "Memory") and runs the schedule's streams side by side: `compute` on the
// caller's thread, `comm` on a thread of its own that issues the collectives.
// Events (record/wait) are the only synchronization between them; when one
// stream fails, the other stops at its next wait or collective, and the step
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
#include "zero/runtime/Memory.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Safetensors.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"
#include "zero/runtime/Trace.h"

#include <cstdint>
#include <functional>
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
  /// Average the loss over the ranks after each step (an all-reduce of one
  /// double): StepStats::meanLoss.
  bool averageLoss = true;
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
};

/// Writes data argument `argument` (an element of Schedule::arguments()) for
/// the step with 0-based index `step` into `tensor`.
using DataFiller = std::function<Status(const ArgumentInfo &argument,
                                        int64_t step, TensorRef tensor)>;

/// The initial values of the arguments (docs/Runtime.md,
/// "Initialization").
struct InitOptions {
  /// Keys the counter-based generator of Init.h.
  uint64_t seed = 0;
  /// Full fp32 parameters by name, instead of the generator; the name of
  /// their file for messages.
  const std::vector<NamedTensor> *parameters = nullptr;
  std::string parametersFile;
};

class Executor {
public:
  /// Checks the launch (world size, memory limit), allocates the arenas and
  /// starts the comm stream's thread. The arguments start at zero: call
  /// initialize before the first step.
  static StatusOr<std::unique_ptr<Executor>>
  create(std::shared_ptr<const Schedule> schedule, Communicator &communicator,
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

  /// The memory of argument `index` (Schedule::arguments()), to read
  /// results or write inputs between steps.
  TensorRef argumentData(size_t index);
  /// The memory of tensor value `id`.
  TensorRef tensorData(int64_t id);

  /// Every parameter as full fp32, by name, taken from the fp32 master
  /// weights where the schedule has them, else from the parameters; shards
  /// are all-gathered. A collective: every rank calls it; rank 0 gets the
  /// tensors, the others an empty list.
  StatusOr<std::vector<NamedTensor>> exportParameters();

  /// The events recorded since the last call (with options.trace).
  std::vector<TraceEvent> takeTraceEvents();

  const Schedule &schedule() const { return *schedule_; }
  Communicator &communicator() { return communicator_; }
  int64_t stepsTaken() const { return stepsTaken_; }
  const MemoryTracker &memory() const { return tracker_; }

  class Impl;

private:
  Executor(std::shared_ptr<const Schedule> schedule, Communicator &communicator,
           ExecutorOptions options);

  std::shared_ptr<const Schedule> schedule_;
  Communicator &communicator_;
  ExecutorOptions options_;
  MemoryTracker tracker_;
  int64_t stepsTaken_ = 0;
  std::unique_ptr<Impl> impl_;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_EXECUTOR_H
