//===- NcclCommunicator.cpp - collectives of device buffers over NCCL -----===//
//
// One rank per GPU. The unique id is made on rank 0 and broadcast over the
// host communicator; the communicator is non-blocking
// (ncclCommInitRankConfig with blocking = 0), so that no NCCL call can hang
// the calling thread: every call that answers ncclInProgress is polled with
// ncclCommGetAsyncError against a deadline.
//
// Each collective of a bucket is one NCCL call enqueued on the stream the
// executor gives (CollectiveContext::stream). The calling thread (the
// executor's comm thread) then polls an event recorded behind it, and NCCL's
// asynchronous error, until the call completes, the deadline passes or the
// step is cancelled; the last two abort the communicator (ncclCommAbort stops
// the kernels in flight), so that a peer that stopped turns into an error
// instead of a hang:
//
//   rank 0: all_gather of bucket at m.mlir:3:4 (step 3) did not complete
//   within 60 s: a peer rank stopped
//
// The deadline counts from the moment the work before the call on the
// stream has finished (an event recorded in front of it), so that compute
// the collective waits for does not eat into it.
//
// barrier, gatherBytes and broadcastBytes are host memory: they go to the
// host communicator, and so does a collective whose buffers are both
// pageable host memory (the export gathers host vectors).
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"
#include "DeviceCommunicators.h"
#include "NcclSupport.h"

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

using Clock = std::chrono::steady_clock;

Clock::time_point deadlineAfter(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

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

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(Communicator &host, const DeviceCommunicatorOptions &options)
      : host_(host), options_(options), rank_(host.rank()),
        size_(host.size()) {}
  ~NcclCommunicator() override;

  Status initialize();

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override { return library_; }

  Status barrier(const CollectiveContext &context) override {
    return host_.barrier(context);
  }
  StatusOr<std::vector<std::string>>
  gatherBytes(const std::string &bytes,
              const CollectiveContext &context) override {
    return host_.gatherBytes(bytes, context);
  }
  Status broadcastBytes(std::string &bytes, int root,
                        const CollectiveContext &context) override {
    return host_.broadcastBytes(bytes, root, context);
  }

protected:
  Status doAllGather(const void *send, void *recv, int64_t count, DType type,
                     const CollectiveContext &context) override;
  Status doReduceScatter(const void *send, void *recv, int64_t count,
                         DType type, ReduceOp op,
                         const CollectiveContext &context) override;
  Status doAllReduce(const void *send, void *recv, int64_t count, DType type,
                     ReduceOp op, const CollectiveContext &context) override;

private:
  /// Checks the call (buffers.pageable: it is the host communicator's) and
  /// picks the stream to enqueue on: the context's, or an own one after a
  /// device-wide synchronize when it names none. Records `started_` there.
  Status begin(CollectiveKind kind, const void *send, void *recv,
               int64_t count, DType type, const CollectiveContext &context,
               CollectiveBuffers &buffers, cudaStream_t &stream);
  /// After the NCCL call (its result `enqueued`) and any copy behind it:
  /// waits for the call to complete on `stream`.
  Status complete(ncclResult_t enqueued, const char *call, cudaStream_t stream,
                  const CollectiveContext &context);
  /// Polls the communicator's state while NCCL completes a call in the
  /// background (ncclInProgress), for at most `seconds`.
  Status settle(const char *call, const CollectiveContext &context,
                double seconds);
  /// Aborts the communicator (peers may be waiting in a collective) and
  /// returns `error`.
  Status fail(Status error);
  Status ncclFailure(ncclResult_t code, const char *call,
                     const CollectiveContext &context);

  Communicator &host_;
  DeviceCommunicatorOptions options_;
  int rank_;
  int size_;
  std::string library_ = "NCCL";
  ncclComm_t comm_ = nullptr;
  /// Recorded in front of and behind each call.
  cudaEvent_t started_ = nullptr;
  cudaEvent_t done_ = nullptr;
  /// For calls that name no stream.
  cudaStream_t ownStream_ = nullptr;
  /// Why the communicator was aborted (empty while it works).
  std::string aborted_;
};

Status NcclCommunicator::initialize() {
  ZERO_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.deviceOrdinal));
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&started_, cudaEventDisableTiming));
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaStreamCreateWithFlags(&ownStream_, cudaStreamNonBlocking));
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
  config.commName = "zero";
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
    Clock::time_point deadline =
        deadlineAfter(std::max(options_.timeoutSeconds, 10.0));
    Backoff backoff;
    while (finalized) {
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess ||
          (state != ncclSuccess && state != ncclInProgress) ||
          Clock::now() > deadline) {
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
  if (ownStream_)
    (void)cudaStreamDestroy(ownStream_);
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
  return ZERO_ERROR(kUnavailable, describeCall(rank_, context) +
                                      " failed in NCCL (" + call +
                                      "): " + describeNcclError(code) + hint);
}

Status NcclCommunicator::settle(const char *call,
                                const CollectiveContext &context,
                                double seconds) {
  Clock::time_point deadline = deadlineAfter(seconds);
  Backoff backoff;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(comm_, &state);
    if (result != ncclSuccess)
      return fail(ncclFailure(result, "ncclCommGetAsyncError", context));
    if (state == ncclSuccess)
      return Status::ok();
    if (state != ncclInProgress)
      return fail(ncclFailure(state, call, context));
    if (context.cancel && context.cancel->load())
      return fail(ZERO_ERROR(kUnavailable,
                             describeCall(rank_, context) +
                                 " abandoned: another stream of this rank "
                                 "failed"));
    if (Clock::now() > deadline)
      return fail(ZERO_ERROR(kUnavailable, describeCall(rank_, context) +
                                               " did not complete within " +
                                               formatSeconds(seconds) +
                                               " s: a peer rank stopped"));
    backoff.pause();
  }
}

Status NcclCommunicator::begin(CollectiveKind kind, const void *send,
                               void *recv, int64_t count, DType type,
                               const CollectiveContext &context,
                               CollectiveBuffers &buffers,
                               cudaStream_t &stream) {
  if (!aborted_.empty())
    return ZERO_ERROR(kFailedPrecondition,
                      describeCall(rank_, context) +
                          ": the NCCL communicator was aborted after an "
                          "earlier failure (" +
                          aborted_ + ")");
  // The executor's comm thread is not the thread that made the
  // communicator: NCCL and the events need the rank's GPU current here.
  cudaError_t code = cudaSetDevice(options_.deviceOrdinal);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaSetDevice", rank_, context, __FILE__,
                               __LINE__);
  StatusOr<CollectiveBuffers> checked =
      checkCollective(kind, send, recv, count, type, rank_, size_,
                      options_.deviceOrdinal, context);
  if (!checked.isOk())
    return checked.status();
  buffers = *checked;
  stream = static_cast<cudaStream_t>(context.stream);
  if (!stream && !buffers.pageable && count > 0) {
    // No stream: the caller's buffers are ready once the device's work so
    // far is done, and the call completes before it returns.
    code = cudaDeviceSynchronize();
    if (code != cudaSuccess)
      return collectiveCudaError(code, "cudaDeviceSynchronize", rank_,
                                 context, __FILE__, __LINE__);
    stream = ownStream_;
  }
  if (!buffers.pageable && count > 0) {
    code = cudaEventRecord(started_, stream);
    if (code != cudaSuccess)
      return collectiveCudaError(code, "cudaEventRecord", rank_, context,
                                 __FILE__, __LINE__);
  }
  return Status::ok();
}

Status NcclCommunicator::complete(ncclResult_t enqueued, const char *call,
                                  cudaStream_t stream,
                                  const CollectiveContext &context) {
  if (enqueued != ncclSuccess && enqueued != ncclInProgress)
    return fail(ncclFailure(enqueued, call, context));
  if (enqueued == ncclInProgress)
    ZERO_RETURN_IF_ERROR(settle(call, context, options_.timeoutSeconds));
  Clock::time_point deadline = deadlineAfter(options_.timeoutSeconds);
  cudaError_t code = cudaEventRecord(done_, stream);
  if (code != cudaSuccess)
    return fail(collectiveCudaError(code, "cudaEventRecord", rank_, context,
                                    __FILE__, __LINE__));
  bool running = false; // the work in front of the call has finished
  Backoff backoff;
  for (;;) {
    code = cudaEventQuery(done_);
    if (code == cudaSuccess)
      break;
    if (code != cudaErrorNotReady)
      return fail(collectiveCudaError(code, "cudaEventQuery", rank_, context,
                                      __FILE__, __LINE__));
    if (!running) {
      code = cudaEventQuery(started_);
      if (code == cudaSuccess) {
        running = true;
        deadline = deadlineAfter(options_.timeoutSeconds);
      } else if (code != cudaErrorNotReady) {
        return fail(collectiveCudaError(code, "cudaEventQuery", rank_,
                                        context, __FILE__, __LINE__));
      }
    }
    ncclResult_t state = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(comm_, &state);
    if (result != ncclSuccess)
      return fail(ncclFailure(result, "ncclCommGetAsyncError", context));
    if (state != ncclSuccess && state != ncclInProgress)
      return fail(ncclFailure(state, call, context));
    if (context.cancel && context.cancel->load())
      return fail(ZERO_ERROR(kUnavailable,
                             describeCall(rank_, context) +
                                 " abandoned: another stream of this rank "
                                 "failed"));
    if (Clock::now() > deadline)
      return fail(ZERO_ERROR(
          kUnavailable, describeCall(rank_, context) +
                            " did not complete within " +
                            formatSeconds(options_.timeoutSeconds) +
                            " s: a peer rank stopped"));
    backoff.pause();
  }
  return Status::ok();
}

Status NcclCommunicator::doAllGather(const void *send, void *recv,
                                     int64_t count, DType type,
                                     const CollectiveContext &context) {
  CollectiveBuffers buffers;
  cudaStream_t stream = nullptr;
  ZERO_RETURN_IF_ERROR(begin(CollectiveKind::AllGather, send, recv, count,
                             type, context, buffers, stream));
  if (count == 0)
    return Status::ok();
  if (buffers.pageable)
    return host_.allGather(send, recv, count, type, context);
  StatusOr<ncclDataType_t> nccl = getNcclType(type);
  if (!nccl.isOk())
    return nccl.status();
  // In place when send is recv + rank * count: NCCL's in-place form.
  ncclResult_t result = ncclAllGather(send, recv, static_cast<size_t>(count),
                                      *nccl, comm_, stream);
  return complete(result, "ncclAllGather", stream, context);
}

Status NcclCommunicator::doReduceScatter(const void *send, void *recv,
                                         int64_t count, DType type,
                                         ReduceOp op,
                                         const CollectiveContext &context) {
  CollectiveBuffers buffers;
  cudaStream_t stream = nullptr;
  ZERO_RETURN_IF_ERROR(begin(CollectiveKind::ReduceScatter, send, recv, count,
                             type, context, buffers, stream));
  if (count == 0)
    return Status::ok();
  if (buffers.pageable)
    return host_.reduceScatter(send, recv, count, type, op, context);
  StatusOr<ncclDataType_t> nccl = getNcclType(type);
  if (!nccl.isOk())
    return nccl.status();
  const size_t bytes = static_cast<size_t>(count * getDTypeWidth(type));
  // Communicator.h's in-place form leaves the result at the start of send;
  // NCCL's reads send and writes recv = send + rank * count. Rank 0's are
  // the same; the others reduce in NCCL's form and move their block down.
  void *target = recv;
  if (buffers.inPlace)
    target = static_cast<std::byte *>(recv) + rank_ * bytes;
  ncclResult_t result =
      ncclReduceScatter(send, target, static_cast<size_t>(count), *nccl,
                        getNcclOp(op), comm_, stream);
  if (result == ncclSuccess || result == ncclInProgress) {
    if (target != recv) {
      // Behind the call on the stream; cudaMemcpyAsync is not a kernel, but
      // NCCL wants nothing on its stream until its state has settled.
      if (result == ncclInProgress) {
        ZERO_RETURN_IF_ERROR(
            settle("ncclReduceScatter", context, options_.timeoutSeconds));
        result = ncclSuccess;
      }
      cudaError_t code = cudaMemcpyAsync(recv, target, bytes,
                                         cudaMemcpyDeviceToDevice, stream);
      if (code != cudaSuccess)
        return fail(collectiveCudaError(code, "cudaMemcpyAsync", rank_,
                                        context, __FILE__, __LINE__));
    }
  }
  return complete(result, "ncclReduceScatter", stream, context);
}

Status NcclCommunicator::doAllReduce(const void *send, void *recv,
                                     int64_t count, DType type, ReduceOp op,
                                     const CollectiveContext &context) {
  CollectiveBuffers buffers;
  cudaStream_t stream = nullptr;
  ZERO_RETURN_IF_ERROR(begin(CollectiveKind::AllReduce, send, recv, count,
                             type, context, buffers, stream));
  if (count == 0)
    return Status::ok();
  if (buffers.pageable)
    return host_.allReduce(send, recv, count, type, op, context);
  StatusOr<ncclDataType_t> nccl = getNcclType(type);
  if (!nccl.isOk())
    return nccl.status();
  ncclResult_t result =
      ncclAllReduce(send, recv, static_cast<size_t>(count), *nccl,
                    getNcclOp(op), comm_, stream);
  return complete(result, "ncclAllReduce", stream, context);
}

} // namespace

StatusOr<std::unique_ptr<Communicator>>
createNcclCommunicator(Communicator &host,
                       const DeviceCommunicatorOptions &options) {
  auto communicator = std::make_unique<NcclCommunicator>(host, options);
  ZERO_RETURN_IF_ERROR(communicator->initialize());
  return std::unique_ptr<Communicator>(std::move(communicator));
}

} // namespace zero::runtime::cuda
