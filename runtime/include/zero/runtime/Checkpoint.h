//===- Checkpoint.h - a run's whole state, saved and resumed ----*- C++ -*-===//
//
// A checkpoint (docs/Runtime.md, "Checkpoints") is a directory per step,
// DIR/step-<S>/, with one safetensors file per rank holding every argument
// the schedule carries from step to step (parameters, master weights,
// optimizer states, the step count, the loss scaler's state) as the rank
// holds it, and a manifest.json that describes the model, the layouts, the
// schedule and each file's size and CRC-32. A step directory is written
// under a temporary name, fsynced and renamed into place; DIR/latest names
// the newest one and is replaced atomically, so a save that fails or is
// killed leaves the previous checkpoint as it was.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CHECKPOINT_H
#define ZERO_RUNTIME_CHECKPOINT_H

#include "zero/runtime/Safetensors.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime {

class Executor;
class Session;

/// The format version this runtime writes and reads (manifest "version").
constexpr int64_t kCheckpointVersion = 1;

/// What fills the data arguments: a resumed run must read the same data
/// from where the saved one stopped.
struct CheckpointData {
  uint64_t seed = 0;
  /// The token file, empty for synthetic data.
  std::string tokenFile;
  /// Whether array files (--data NAME=FILE) feed the data, and their order.
  bool arrays = false;
  bool shuffle = true;
  /// The global rows of each data argument read before the checkpoint's
  /// step (DataSource::rowsRead): a resumed run reads on from there, at any
  /// world size and batch.
  std::map<std::string, int64_t> rowsRead;
};

struct CheckpointSaveOptions {
  std::string directory;
  /// The step directories to keep, the new one included; 0: all.
  int64_t keep = 0;
  /// CheckpointSaver::start: write this rank's file on a thread of its own
  /// while training goes on, the save completing at a later
  /// CheckpointSaver::complete; false: complete it before returning.
  bool background = false;
  /// Tests: called after this rank's file is written, before the ranks
  /// agree (a rank that kills itself there dies in the middle of a save); on
  /// the writer thread of a background save.
  std::function<void()> afterRankFile;
  /// Tests: this rank's file fails half written, as on a full disk.
  bool failRankFile = false;
};

/// This rank's share of one save, for metrics.
struct CheckpointSaveStats {
  int64_t step = 0;
  bool background = false;
  /// The size of this rank's file.
  uint64_t bytesWritten = 0;
  /// Copying the state into the snapshot (training stopped).
  double snapshotSeconds = 0;
  /// Writing the file from the snapshot: checksums, writes, fsync, rename.
  double writeSeconds = 0;
  /// At completion, waiting for this rank's writer to finish.
  double waitSeconds = 0;
  /// At completion, the agreement, the manifest, the renames and pruning.
  double completeSeconds = 0;
};

/// This rank's share of loading a checkpoint, for metrics.
struct CheckpointLoadStats {
  int64_t step = 0;
  /// The run that saved the checkpoint (its manifest's "run"; empty for a
  /// checkpoint of an older runtime): a resumed run saves as that run.
  std::string runId;
  /// The bytes of the rank files read: this rank's, or every rank's when
  /// the checkpoint is resharded.
  uint64_t bytesRead = 0;
  double seconds = 0;
};

/// Creates the checkpoint directory `directory` (and its parents) and checks
/// that it can be written, so that a run fails before its first step rather
/// than at its first save. Rank 0 calls it.
Status prepareCheckpointDirectory(const std::string &directory);

/// Rank 0, before a run's first step: checks that the run may save into
/// `directory` (as each save checks it again): that no checkpoint of
/// another run is there (each manifest's "run"; a run resumed from a
/// checkpoint is its run) and that `latest` is no symbolic link. Sets the
/// session's run id (Session::checkpointRunId) where it has none yet.
Status checkCheckpointOwner(Session &session, const std::string &directory);

/// A rank's saves of a run, each in three parts: a snapshot of the rank's
/// state in host memory that the saver owns (the only part that stops
/// training), this rank's file written from it (on a thread of its own for
/// a background save, which makes no communicator calls), and the
/// completion (a collective): the ranks wait for their writers and agree,
/// rank 0 writes the manifest, renames the step directory into place,
/// replaces `latest` and prunes. Rank 0 holds the directory's lock from
/// the start of a save to its completion. The snapshot's memory, the size
/// of the rank's file, is kept for the next save.
class CheckpointSaver {
public:
  explicit CheckpointSaver(Session &session);
  /// Abandons a pending save (abandon()).
  ~CheckpointSaver();
  CheckpointSaver(const CheckpointSaver &) = delete;
  CheckpointSaver &operator=(const CheckpointSaver &) = delete;

  /// Saves the state after the steps taken so far as
  /// `options.directory`/step-<S> (a collective): completes a pending save
  /// first, then makes the temporary directory, takes the snapshot and
  /// writes this rank's file; completes the save too unless
  /// `options.background`. On failure every rank returns an error, rank 0's
  /// naming the file (Session::agree), and the previous checkpoint stays as
  /// it was.
  Status start(const CheckpointSaveOptions &options);
  /// Whether a background save awaits complete().
  bool isPending() const { return pending_ != nullptr; }
  /// The step of the pending save.
  int64_t pendingStep() const;
  /// Completes the pending save, if any (a collective, called by every rank
  /// at the same point), waiting for this rank's writer: a write that failed
  /// on any rank is reported here, naming the file, and the save's
  /// temporary directory removed.
  Status complete();
  /// Completes the pending save if every rank's writer is through, else
  /// leaves it pending (a collective: one all-reduce, and complete()'s
  /// when they are): true when it completed. Called between steps, it
  /// publishes the checkpoint at the first step boundary after the writes
  /// without waiting for them.
  StatusOr<bool> completeIfWritten();
  /// Drops the pending save without a collective, for a run that fails:
  /// stops this rank's writer; rank 0 removes the temporary directory as far
  /// as it can (the next save removes what is left) and releases the lock.
  /// `latest` keeps naming the previous checkpoint.
  void abandon();
  /// This rank's numbers of the saves completed since the last call.
  std::vector<CheckpointSaveStats> takeStats();

  struct Pending;

private:
  Session &session_;
  std::unique_ptr<Pending> pending_;
  /// The snapshot's memory, reused by the next save.
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  std::vector<CheckpointSaveStats> stats_;
};

/// Saves every rank's state after the steps taken so far as
/// `directory`/step-<S>, then points `directory`/latest at it and prunes
/// old step directories (options.keep); synchronous (CheckpointSaver,
/// `options.background` ignored). A collective: on failure every rank
/// returns an error, rank 0's naming the file (Session::agree), and the
/// previous checkpoint stays as it was.
Status saveCheckpoint(Session &session, const CheckpointSaveOptions &options);

/// The step directory that `path` names: a step directory itself, a
/// checkpoint directory (the step its `latest` names, or without one its
/// newest complete step), or a `latest` file.
StatusOr<std::string> findCheckpoint(const std::string &path);

/// Loads this rank's state from the checkpoint that `path` names
/// (findCheckpoint) into `executor`, after checking, before anything is
/// written, that the manifest matches the schedule (world size, stage, every
/// tensor's name, dtype, shape and layout), the data, and that every rank's
/// file is there with its size and this rank's with its checksum. Errors
/// name the file, the tensor and what differs. A checkpoint of another
/// world size or stage is resharded as it loads: every rank file is read
/// (and checked), each tensor put together and this rank's part cut as the
/// schedule cuts it. A schedule without `loadFromFp32Weights()` sets the
/// fp32 master weights from the checkpoint's 16-bit parameters instead of
/// loading them (DeepSpeed's `load_from_fp32_weights: false`), and reads
/// every rank file as resharding does. The executor continues at the saved
/// step; the result is the saved data, whose `rowsRead` the run's
/// DataSource resumes at. `stats`, when given, receives the bytes read and
/// the time taken.
StatusOr<CheckpointData> loadCheckpoint(Executor &executor,
                                        const std::string &path,
                                        const CheckpointData &data,
                                        CheckpointLoadStats *stats = nullptr);

/// A tensor as a checkpoint's manifest lists it.
struct CheckpointTensorInfo {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  /// A rank file's tensor: whether it is the rank's shard.
  bool sharded = false;
};

struct CheckpointFileInfo {
  int64_t rank = 0;
  /// Relative to the step directory.
  std::string path;
  uint64_t bytes = 0;
  std::string crc32;
};

/// What a checkpoint's manifest says (docs/Runtime.md, "Checkpoints").
struct CheckpointInfo {
  /// The step directory.
  std::string directory;
  int64_t version = 0;
  int64_t step = 0;
  int64_t worldSize = 0;
  int64_t stage = 0;
  /// The schedule that saved it, and the CRC-32 of its JSON.
  std::string schedule;
  std::string scheduleCrc32;
  CheckpointData data;
  /// The model's parameters, whole.
  std::vector<CheckpointTensorInfo> parameters;
  /// The tensors of each rank's file.
  std::vector<CheckpointTensorInfo> tensors;
  std::vector<CheckpointFileInfo> files;
};

/// The manifest of the checkpoint that `path` names (findCheckpoint),
/// checked for form; the files are not read.
StatusOr<CheckpointInfo> readCheckpointInfo(const std::string &path);

/// Checks the checkpoint that `path` names on its own, as a resumed run
/// checks it but for every rank and without a schedule: every rank's file
/// there with its size and CRC-32, and holding the manifest's tensors.
Status verifyCheckpoint(const std::string &path);

/// Every parameter of the checkpoint that `path` names, whole and by name,
/// in `dtype` ("F32", "BF16" or "F16"; DeepSpeed's zero_to_fp32, and its
/// 16-bit model save): the parameter itself where it has that dtype, else
/// its fp32 master weights where the checkpoint has them, else the
/// parameter rounded to nearest even; shards joined in rank order, padding
/// dropped; a tiled weight whole at the place of its first tile. The files
/// are checked as verifyCheckpoint checks them.
StatusOr<std::vector<RawTensor>>
consolidateCheckpoint(const std::string &path, const std::string &dtype);

/// Writes the checkpoint that `path` names (saved at world size N, stage s)
/// as one of world size `worldSize` and stage `stage` (s when negative) in
/// the checkpoint directory `output` (its step-<S> and `latest`), after
/// checking every rank file. Each sharded tensor is put together from the N
/// shards and cut for `worldSize` ranks with the layout of
/// PartitionLayout::create (padded to the least multiple of the world
/// size); a stage changes which tensors are sharded (parameters at 3,
/// optimizer states from 1). The same run back to N and s gives the
/// original rank files byte for byte.
Status reshardCheckpoint(const std::string &path, int64_t worldSize,
                         int64_t stage, const std::string &output);

/// Checks that writing `output` (a file or a directory, existing or not)
/// cannot touch the checkpoint that `path` names: refused where `output`,
/// with its links resolved, is the checkpoint's step directory or its
/// checkpoint directory or lies inside either, or is (same device and
/// inode) one of the step's files.
Status checkOutsideCheckpoint(const std::string &path,
                              const std::string &output);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_CHECKPOINT_H
