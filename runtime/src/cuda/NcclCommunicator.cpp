//===- NcclCommunicator.cpp - collectives of device buffers over NCCL -----===//
//
// One rank per GPU. The unique id is made on rank 0 and broadcast over the
// host communicator; the communicator is non-blocking
// (ncclCommInitRankConfig with blocking = 0), so that no NCCL call can hang
// the calling thread: every call that answers ncclInProgress is polled with
// ncclCommGetAsyncError against a deadline.
//
// Each collective of a bucket is one NCCL call enqueued on the stream the
// executor gives (CollectiveContext::stream); an all-to-all and an in-place
// gather of blocks are one NCCL group of sends and receives. The calling thread (the
// executor's comm thread) then polls an event recorded behind it, and NCCL's
// asynchronous error, until the call completes, the deadline passes or the
// step is cancelled; the last two abort the communicator (ncclCommAbort stops
// the kernels in flight), so that a peer that stopped turns into an error
// instead of a hang:
//
//   rank 0: all_gather of bucket at m.mlir:3:4 (step 3) did not complete
//   within 60 s: a peer rank stopped
//
// The wait has two parts, each held to the whole timeout: until the work
// in front of the call on the stream has finished (an event recorded in
// front of it), then the call itself; so compute that the collective waits
// for does not eat into the call's time, but a stream that never reaches
// the call (a hung kernel, a peer's data it waits for) still fails.
//
// barrier, gatherBytes and broadcastBytes are host memory: they go to the
// host communicator, and so does a collective whose buffers are both
// pageable host memory (the export gathers host vectors).
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"
#include "DeviceCommunicators.h"
#include "NcclSupport.h"
#include "comm/CollectiveWait.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace zero::runtime::cuda {

std::string describeNcclError(ncclResult_t code) {
  std::string text = ncclGetErrorString(code);
  const char *last = ncclGetLastError(nullptr);
  if (last && *last)
    text += std::string(": ") + last;
  return text;
}

Status ncclError(ncclResult_t code, const char *what, const char *file,
                 int line) {
  StatusCode status = code == ncclInvalidArgument || code == ncclInvalidUsage
                          ? StatusCode::kInvalidArgument
                          : StatusCode::kUnavailable;
  return Status(status, std::string(what) + ": " + describeNcclError(code),
                file, line);
}

namespace {

using comm::CollectiveDeadline;
using comm::describeCall;

/// Waits between polls: spins first (most collectives of a step finish in
/// microseconds, and the next one waits for this thread), then backs off to
/// at most 100 us so that a long wait leaves the core to others.
class Backoff {
public:
  void pause() {
    if (++polls_ < 2000) {
      std::this_thread::yield();
      return;
    }
    sleep_ = std::min(std::chrono::microseconds(100),
                      std::max(std::chrono::microseconds(5), sleep_ * 2));
    std::this_thread::sleep_for(sleep_);
  }

private:
  int polls_ = 0;
  std::chrono::microseconds sleep_{0};
};

StatusOr<ncclDataType_t> getNcclType(DType type) {
  switch (type) {
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::BF16:
    return ncclBfloat16;
  case DType::F16:
    return ncclFloat16;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
  case DType::Index:
    return ncclInt64;
  case DType::I1:
    return ncclUint8;
  }
  return ZERO_ERROR(kInvalidArgument, "an element type NCCL does not move");
}

ncclRedOp_t getNcclOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return ncclSum;
  case ReduceOp::Avg:
    // NCCL's avg: integers sum and then divide; floats pre-multiply by 1/N
    // rounded to the type, the same as a division after the sum when N is a
    // power of two.
    return ncclAvg;
  case ReduceOp::Max:
    return ncclMax;
  case ReduceOp::Min:
    return ncclMin;
  }
  return ncclSum;
}

class NcclCommunicator final : public DeviceCommunicator {
public:
  using DeviceCommunicator::DeviceCommunicator;
  ~NcclCommunicator() override;

  Status initialize();

  std::string describe() const override { return library_; }

protected:
  Status runOnDevice(const Call &call) override;

private:
  /// Enqueues the NCCL call of `call` on its stream.
  ncclResult_t enqueue(const Call &call, const ncclDataType_t type, void *recv);
  /// Enqueues an all-to-all or a gather of blocks as one group of
  /// ncclSend/ncclRecv of bytes on the call's stream.
  ncclResult_t enqueuePointToPoint(const Call &call);
  /// After the NCCL call (its result `enqueued`) and any copy behind it:
  /// waits for the call to complete on `stream`.
  Status complete(ncclResult_t enqueued, const char *call, cudaStream_t stream,
                  const CollectiveContext &context);
  /// Polls the communicator's state while NCCL completes a call in the
  /// background (ncclInProgress), for at most `seconds`.
  Status settle(const char *call, const CollectiveContext &context,
                double seconds);
  /// NCCL's asynchronous state: an error (the communicator then aborted),
  /// or ok with `inProgress` while NCCL still works on a call.
  Status pollState(const char *call, const CollectiveContext &context,
                   bool &inProgress);
  /// `deadline.check`, aborting the communicator when the wait ends.
  Status keepWaiting(const CollectiveDeadline &deadline,
                     const CollectiveContext &context);
  /// Aborts the communicator (peers may be waiting in a collective) and
  /// returns `error`.
  Status fail(Status error);
  Status ncclFailure(ncclResult_t code, const char *call,
                     const CollectiveContext &context);
  Status cudaFailure(cudaError_t code, const char *call,
                     const CollectiveContext &context) {
    return fail(collectiveCudaError(code, call, rank_, context));
  }

  std::string library_ = "NCCL";
  ncclComm_t comm_ = nullptr;
  /// Recorded in front of and behind each call.
  cudaEvent_t started_ = nullptr;
  cudaEvent_t done_ = nullptr;
  /// Why the communicator was aborted (empty while it works).
  std::string aborted_;
};

Status NcclCommunicator::initialize() {
  ZERO_RETURN_IF_ERROR(initializeDevice());
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&started_, cudaEventDisableTiming));
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  int version = 0;
  ZERO_NCCL_RETURN_IF_ERROR(ncclGetVersion(&version));
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z since 2.9.
  library_ = "NCCL " + std::to_string(version / 10000) + "." +
             std::to_string(version / 100 % 100) + "." +
             std::to_string(version % 100);

  // Rank 0's id, behind a byte that says whether it could make one, so that
  // a failure there does not leave the others waiting for an id.
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::string message(1 + sizeof id, '\0');
  Status made = Status::ok();
  if (rank_ == 0) {
    made = [&]() -> Status {
      ZERO_NCCL_RETURN_IF_ERROR(ncclGetUniqueId(&id));
      return Status::ok();
    }();
    message[0] = made.isOk() ? 1 : 0;
    std::memcpy(&message[1], &id, sizeof id);
  }
  CollectiveContext context{"broadcast of the NCCL unique id", nullptr};
  ZERO_RETURN_IF_ERROR(host_.broadcastBytes(message, 0, context));
  if (!made.isOk())
    return made;
  if (message[0] != 1)
    return ZERO_ERROR(kUnavailable,
                      "rank " + std::to_string(rank_) +
                          ": rank 0 could not make the NCCL unique id");
  std::memcpy(&id, &message[1], sizeof id);

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  config.commName = "zero"; // in NCCL's logs; the field came with 2.27
#endif
  ncclResult_t result =
      ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
  CollectiveContext init{"NCCL initialization (" + std::to_string(size_) +
                             " ranks, GPU " +
                             std::to_string(options_.deviceOrdinal) + ")",
                         nullptr};
  if (result != ncclSuccess && result != ncclInProgress)
    return fail(ncclFailure(result, "ncclCommInitRankConfig", init));
  if (!comm_)
    return ZERO_ERROR(kInternal, "ncclCommInitRankConfig made no communicator");
  // Connecting to the peers takes seconds on large jobs: at least a minute.
  return settle("ncclCommInitRankConfig", init,
                std::max(options_.timeoutSeconds, 60.0));
}

NcclCommunicator::~NcclCommunicator() {
  (void)cudaSetDevice(options_.deviceOrdinal);
  if (comm_ && aborted_.empty()) {
    // Finalize flushes what is still in flight; it must not hang either.
    ncclResult_t result = ncclCommFinalize(comm_);
    bool finalized = result == ncclSuccess || result == ncclInProgress;
    CollectiveDeadline deadline(std::max(options_.timeoutSeconds, 10.0));
    Backoff backoff;
    while (finalized) {
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess ||
          (state != ncclSuccess && state != ncclInProgress) ||
          deadline.passed()) {
        finalized = false;
        break;
      }
      if (state == ncclSuccess)
        break;
      backoff.pause();
    }
    if (finalized)
      (void)ncclCommDestroy(comm_);
    else
      (void)ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  if (started_)
    (void)cudaEventDestroy(started_);
  if (done_)
    (void)cudaEventDestroy(done_);
}

Status NcclCommunicator::fail(Status error) {
  if (comm_ && aborted_.empty()) {
    // Non-blocking: the abort finishes in the background once the kernels
    // of the call (told to stop) have left the stream. The communicator
    // must not be touched after it.
    (void)ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  if (aborted_.empty())
    aborted_ = error.message();
  return error;
}

Status NcclCommunicator::ncclFailure(ncclResult_t code, const char *call,
                                     const CollectiveContext &context) {
  std::string hint;
  if (code == ncclInvalidUsage && std::string(call) == "ncclCommInitRankConfig")
    hint = " (NCCL takes one GPU per rank; ranks that share a GPU need the "
           "staged MPI communicator)";
  return comm::collectiveFailure(rank_, context,
                                 std::string("NCCL (") + call + ")",
                                 describeNcclError(code) + hint);
}

Status NcclCommunicator::pollState(const char *call,
                                   const CollectiveContext &context,
                                   bool &inProgress) {
  ncclResult_t state = ncclSuccess;
  ncclResult_t result = ncclCommGetAsyncError(comm_, &state);
  if (result != ncclSuccess)
    return fail(ncclFailure(result, "ncclCommGetAsyncError", context));
  if (state != ncclSuccess && state != ncclInProgress)
    return fail(ncclFailure(state, call, context));
  inProgress = state == ncclInProgress;
  return Status::ok();
}

Status NcclCommunicator::keepWaiting(const CollectiveDeadline &deadline,
                                     const CollectiveContext &context) {
  Status status = deadline.check(rank_, context);
  return status.isOk() ? status : fail(status);
}

Status NcclCommunicator::settle(const char *call,
                                const CollectiveContext &context,
                                double seconds) {
  CollectiveDeadline deadline(seconds);
  Backoff backoff;
  for (;;) {
    bool inProgress = false;
    ZERO_RETURN_IF_ERROR(pollState(call, context, inProgress));
    if (!inProgress)
      return Status::ok();
    ZERO_RETURN_IF_ERROR(keepWaiting(deadline, context));
    backoff.pause();
  }
}

Status NcclCommunicator::complete(ncclResult_t enqueued, const char *call,
                                  cudaStream_t stream,
                                  const CollectiveContext &context) {
  if (enqueued != ncclSuccess && enqueued != ncclInProgress)
    return fail(ncclFailure(enqueued, call, context));
  if (enqueued == ncclInProgress)
    ZERO_RETURN_IF_ERROR(settle(call, context, options_.timeoutSeconds));
  CollectiveDeadline deadline(options_.timeoutSeconds);
  cudaError_t code = cudaEventRecord(done_, stream);
  if (code != cudaSuccess)
    return cudaFailure(code, "cudaEventRecord", context);
  bool running = false; // the work in front of the call has finished
  Backoff backoff;
  for (;;) {
    code = cudaEventQuery(done_);
    if (code == cudaSuccess)
      return Status::ok();
    if (code != cudaErrorNotReady)
      return cudaFailure(code, "cudaEventQuery", context);
    if (!running) {
      code = cudaEventQuery(started_);
      if (code == cudaSuccess) {
        running = true;
        deadline.restart();
      } else if (code != cudaErrorNotReady) {
        return cudaFailure(code, "cudaEventQuery", context);
      }
    }
    bool inProgress = false;
    ZERO_RETURN_IF_ERROR(pollState(call, context, inProgress));
    ZERO_RETURN_IF_ERROR(keepWaiting(deadline, context));
    backoff.pause();
  }
}

ncclResult_t NcclCommunicator::enqueue(const Call &call,
                                       const ncclDataType_t type, void *recv) {
  const size_t count = static_cast<size_t>(call.count);
  switch (call.kind) {
  case CollectiveKind::AllGather:
    // In place when send is recv + rank * count: NCCL's in-place form.
    return ncclAllGather(call.send, recv, count, type, comm_, call.stream);
  case CollectiveKind::ReduceScatter:
    return ncclReduceScatter(call.send, recv, count, type, getNcclOp(call.op),
                             comm_, call.stream);
  case CollectiveKind::AllReduce:
    return ncclAllReduce(call.send, recv, count, type, getNcclOp(call.op),
                         comm_, call.stream);
  case CollectiveKind::AllToAll:
  case CollectiveKind::AllGatherBlocks:
    return enqueuePointToPoint(call);
  }
  return ncclInvalidArgument;
}

ncclResult_t NcclCommunicator::enqueuePointToPoint(const Call &call) {
  const auto *send = static_cast<const std::byte *>(call.send);
  auto *recv = static_cast<std::byte *>(call.recv);
  // Sends and receives between two ranks match in the order they are
  // issued in the group: every rank issues them in the same order (peers
  // ascending, blocks in BlockGrid::offsets order).
  ncclResult_t result = ncclGroupStart();
  if (result != ncclSuccess)
    return result;
  // A non-blocking communicator may answer ncclInProgress to each call of
  // the group: the group goes on; the first real error stops it.
  auto queued = [&] {
    return result == ncclSuccess || result == ncclInProgress;
  };
  auto both = [&](const std::byte *from, std::byte *to, int64_t bytes,
                  int peer) {
    if (queued())
      result = ncclSend(from, static_cast<size_t>(bytes), ncclUint8, peer,
                        comm_, call.stream);
    if (queued())
      result = ncclRecv(to, static_cast<size_t>(bytes), ncclUint8, peer,
                        comm_, call.stream);
  };
  if (call.kind == CollectiveKind::AllToAll) {
    const int64_t bytes = call.count;
    for (int peer = 0; peer < size_; ++peer)
      if (peer != rank_)
        both(send + peer * bytes, recv + peer * bytes, bytes, peer);
  } else {
    // Each held block straight from its place to its place on the peer:
    // no staging, and a rank holds few blocks (the grid's ranks on the
    // axes already gathered), so few sends.
    const std::vector<int64_t> offsets = call.held->offsets();
    const int64_t own = rank_ * call.peerStride;
    for (int peer = 0; peer < size_; ++peer)
      if (peer != rank_)
        for (int64_t offset : offsets)
          both(recv + own + offset, recv + peer * call.peerStride + offset,
               call.held->blockBytes, peer);
  }
  // The group ends even after a failed call, so that NCCL's group state is
  // left clean; the first failure is the answer.
  ncclResult_t ended = ncclGroupEnd();
  return queued() ? ended : result;
}

Status NcclCommunicator::runOnDevice(const Call &call) {
  if (!aborted_.empty())
    return ZERO_ERROR(kFailedPrecondition,
                      describeCall(rank_, call.context) +
                          ": the NCCL communicator was aborted after an "
                          "earlier failure (" +
                          aborted_ + ")");
  StatusOr<ncclDataType_t> type = getNcclType(call.type);
  if (!type.isOk())
    return type.status();
  const char *name = call.kind == CollectiveKind::AllGather ? "ncclAllGather"
                     : call.kind == CollectiveKind::ReduceScatter
                         ? "ncclReduceScatter"
                     : call.kind == CollectiveKind::AllReduce
                         ? "ncclAllReduce"
                         : "ncclSend/ncclRecv";
  // Communicator.h's in-place reduce-scatter leaves the result at the start
  // of send; NCCL's reads send and writes recv = send + rank * count. Rank
  // 0's are the same; the others reduce in NCCL's form and move their block
  // down.
  const size_t bytes = static_cast<size_t>(call.buffers.recvBytes);
  void *target = call.recv;
  if (call.kind == CollectiveKind::ReduceScatter && call.buffers.inPlace)
    target = static_cast<std::byte *>(call.recv) + rank_ * bytes;
  cudaError_t code = cudaEventRecord(started_, call.stream);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaEventRecord", rank_, call.context);
  if (call.kind == CollectiveKind::AllToAll) {
    // The rank's own part is a copy, not a send to itself.
    const int64_t own = rank_ * call.count;
    code = cudaMemcpyAsync(static_cast<std::byte *>(call.recv) + own,
                           static_cast<const std::byte *>(call.send) + own,
                           static_cast<size_t>(call.count), cudaMemcpyDefault,
                           call.stream);
    if (code != cudaSuccess)
      return collectiveCudaError(code, "cudaMemcpyAsync", rank_, call.context);
  }
  ncclResult_t result = enqueue(call, *type, target);
  if (target != call.recv &&
      (result == ncclSuccess || result == ncclInProgress)) {
    // Behind the call on the stream; cudaMemcpyAsync is not a kernel, but
    // NCCL wants nothing on its stream until its state has settled.
    if (result == ncclInProgress) {
      ZERO_RETURN_IF_ERROR(settle(name, call.context, options_.timeoutSeconds));
      result = ncclSuccess;
    }
    // Default: the buffers may be pinned host memory (checkCollective).
    code = cudaMemcpyAsync(call.recv, target, bytes, cudaMemcpyDefault,
                           call.stream);
    if (code != cudaSuccess)
      return cudaFailure(code, "cudaMemcpyAsync", call.context);
  }
  return complete(result, name, call.stream, call.context);
}

} // namespace

StatusOr<std::unique_ptr<DeviceCommunicator>>
createNcclCommunicator(Communicator &host,
                       const DeviceCommunicatorOptions &options) {
  auto communicator = std::make_unique<NcclCommunicator>(host, options);
  ZERO_RETURN_IF_ERROR(communicator->initialize());
  return std::unique_ptr<DeviceCommunicator>(std::move(communicator));
}

} // namespace zero::runtime::cuda
