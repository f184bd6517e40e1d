//===- Session.h - a rank's whole run of a schedule -------------*- C++ -*-===//
//
// Everything a rank needs to train with a compiled schedule, set up in one
// call and used by zero-run and the C API alike: the communicators (MPI
// under a launcher, else one rank; NCCL or staged MPI for device buffers),
// the schedule, the device and the executor, the initial model and the
// data. The set-up ends with a cross-rank agreement: when it fails on any
// rank it fails on every rank, rank 0 reporting each rank's error, so that
// no peer is left waiting in a collective.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SESSION_H
#define ZERO_RUNTIME_SESSION_H

#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/Communicator.h"
#include "zero/runtime/DataSource.h"
#include "zero/runtime/Executor.h"
#include "zero/runtime/NvmeSwap.h"
#include "zero/runtime/Safetensors.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/Trace.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zero::runtime {

enum class DeviceKind { Cpu, Cuda };

struct SessionOptions {
  DeviceKind device = DeviceKind::Cpu;
  /// GPUs per node for the CUDA device: a rank uses GPU (local rank mod
  /// gpusPerNode); 0: every local rank has a GPU of its own (GPU = local
  /// rank). Ranks that share a GPU exchange buffers through staged MPI,
  /// others through NCCL.
  int gpusPerNode = 0;
  /// One rank of the MPI job (MPI is initialized), or a world of one.
  bool useMpi = false;
  double commTimeoutSeconds = 60;
  /// A simulated slow link between the schedule's nodes, in nanoseconds per
  /// byte a rank sends across nodes (ExecutorOptions::interNodeNsPerByte);
  /// 0: none.
  double interNodeNsPerByte = 0;
  int64_t memoryLimit = 0;
  bool debug = false;
  bool trace = false;
  uint64_t seed = 0;
  /// A token file; empty: synthetic data.
  std::string dataFile;
  /// Array files by data argument (DataOptions::arrayFiles), and whether
  /// their samples are shuffled per epoch.
  std::map<std::string, std::string> dataArrays;
  bool shuffleData = true;
  /// Full fp32 parameters (safetensors); empty: the built-in initialization.
  std::string initFrom;
  /// A checkpoint to continue from instead of initializing
  /// (findCheckpoint, Checkpoint.h); empty: none.
  std::string resumeFrom;
  /// Host threads of the rank's kernels; 0: the machine's cores shared
  /// among the ranks that run on it.
  int hostThreads = 0;
  /// The directory of the nvme arena's swap file; empty: the schedule's
  /// (ExecutorOptions::nvmePath).
  std::string nvmePath;
  /// Tests: failures the NVMe swap store injects.
  NvmeSwapFaults nvmeFaults;
  /// Keep each step's gradients for getFullGrad/getLocalGrad
  /// (StateAccess.h; ExecutorOptions::keepGradients).
  bool keepGradients = false;
  /// Tests: called on the comm stream before each collective.
  std::function<void(int64_t step, const Instruction &)> beforeCollective;
  /// Called on every rank with its error when the set-up fails on any rank
  /// (create's error: rank 0's names every failed rank's, the others' is
  /// empty), before the ranks leave the set-up together: a tool prints it
  /// here, so that no rank can end the job (its launcher ends every rank
  /// when one exits with an error) before rank 0 has reported.
  std::function<void(const Status &)> reportSetUpFailure;
};

class Session {
public:
  /// Sets up a rank's run of the schedule at `path` (or of `schedule`).
  /// When the set-up fails on any rank, every rank returns an error: rank
  /// 0's names each failed rank's error (one line per distinct error, "rank
  /// R: " before those not every rank had), the others' is empty, since rank
  /// 0 reports for them (isReported).
  static StatusOr<std::unique_ptr<Session>> create(const std::string &path,
                                                   SessionOptions options);
  static StatusOr<std::unique_ptr<Session>>
  create(std::shared_ptr<const Schedule> schedule, SessionOptions options);
  ~Session();

  /// Whether a failed create's error is reported by another rank.
  static bool isReported(const Status &status) {
    return !status.isOk() && status.message().empty();
  }

  /// Runs one step with the next data.
  StatusOr<StepStats> step();

  /// Every parameter as full fp32 (a collective; rank 0 gets them).
  StatusOr<std::vector<NamedTensor>> exportParameters();
  /// Exports the parameters to a safetensors file that rank 0 writes (a
  /// collective; the write's error is rank 0's).
  Status exportTo(const std::string &path,
                  const std::map<std::string, std::string> &metadata = {});
  /// Every rank's trace events since the last call, on rank 0, starting at
  /// zero (a collective).
  StatusOr<std::vector<TraceEvent>> gatherTrace();

  /// Ends every rank of the job after an error that may leave peers waiting
  /// in a collective (a no-op for one rank).
  void abortJob(int exitCode);

  /// Every rank learns whether all of them succeeded (`local` is this
  /// rank's outcome), as after the set-up: on failure, rank 0's error names
  /// each failed rank's, the others' is empty (isReported). A collective.
  /// `what` names the agreement in the error of a collective that fails.
  Status agree(const Status &local,
               const std::string &what = "agreement after the set-up");

  int rank() const { return host_->rank(); }
  int worldSize() const { return host_->size(); }
  /// The communicator of host buffers (metrics, agreement).
  Communicator &communicator() { return *host_; }
  Executor &executor() { return *executor_; }
  const Schedule &schedule() const { return *schedule_; }
  const DataSource &data() const { return *data_; }
  const SessionOptions &options() const { return options_; }
  /// This rank's numbers of loading `SessionOptions::resumeFrom`; none
  /// without it.
  const std::optional<CheckpointLoadStats> &resumeStats() const {
    return resumeStats_;
  }
  /// Rank 0: the id that this run's checkpoints carry (their manifest's
  /// "run"; docs/Runtime.md, "Checkpoints"), empty until its first save,
  /// which takes the resumed checkpoint's or makes a new one.
  std::string &checkpointRunId() { return checkpointRunId_; }

private:
  Session() = default;
  static StatusOr<std::unique_ptr<Session>>
  create(std::shared_ptr<const Schedule> schedule, SessionOptions options,
         const std::string &path);
  /// The set-up after the communicator, whose error is this rank's own.
  Status setUp(std::shared_ptr<const Schedule> schedule);

  SessionOptions options_;
  std::unique_ptr<Communicator> host_;
  std::unique_ptr<Communicator> deviceComm_;
  std::shared_ptr<const Schedule> schedule_;
  std::unique_ptr<Executor> executor_;
  std::optional<DataSource> data_;
  std::optional<CheckpointLoadStats> resumeStats_;
  std::string checkpointRunId_;
};

/// The data of a run with `options`, as a checkpoint records it.
CheckpointData getCheckpointData(const SessionOptions &options);

/// This rank's index among the ranks of its machine and their number, from
/// the launcher's environment (Open MPI, PMIx, Slurm, torchrun); 0 and 1
/// otherwise.
int getLocalRank();
int getLocalSize();

/// The GPU a rank runs on, among the `visible` ones: its local rank, or
/// that mod `gpusPerNode` where given (ranks sharing GPUs), or, where the
/// launcher chose the GPUs each rank sees (`visibleSet`: CUDA_VISIBLE_DEVICES
/// is set) and it sees one, that one (`srun --gpus-per-task=1` binds each
/// rank its own; ranks that in fact share it are refused by NCCL's
/// duplicate-GPU check).
int chooseGpu(int localRank, int gpusPerNode, int visible, bool visibleSet);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_SESSION_H
