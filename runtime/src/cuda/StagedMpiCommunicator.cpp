//===- StagedMpiCommunicator.cpp - device buffers over the host communicator -===//
//
// Several ranks may share one GPU (NCCL refuses that), so tests can run a
// multi-rank CUDA job on one card: each collective copies its send buffer
// from the device into pinned host staging, runs the host communicator's
// collective (MPI, or the self communicator for one rank) on the staging,
// and copies the result back, all on the calling thread (the executor's comm
// thread) and ordered on the collective's stream:
//
//   cudaMemcpyAsync D2H on the stream, cudaStreamSynchronize (the send
//   buffer is complete, and so is the work in front of it);
//   host collective on the pinned buffers (its own deadline: a peer that
//   stopped is an error, as with MPI on host buffers);
//   cudaMemcpyAsync H2D on the stream, cudaStreamSynchronize.
//
// The staging, two buffers of DeviceCommunicatorOptions::maxCollectiveBytes
// (send and receive), is allocated once, at creation; a larger call is an
// error naming both sizes. The host communicator counts the staged calls in
// its own counters too: the executor reads this communicator's (the base
// class counts each call once), so they do not add up twice in a step.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"
#include "DeviceCommunicators.h"

#include <algorithm>
#include <cstdio>

namespace zero::runtime::cuda {

namespace {

std::string formatBytes(int64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= (int64_t(1) << 20)) {
    char mib[32];
    std::snprintf(mib, sizeof mib, " (%.1f MiB)",
                  static_cast<double>(bytes) / (1 << 20));
    text += mib;
  }
  return text;
}

class StagedMpiCommunicator final : public Communicator {
public:
  StagedMpiCommunicator(Communicator &host,
                        const DeviceCommunicatorOptions &options)
      : host_(host), options_(options), rank_(host.rank()),
        size_(host.size()), capacity_(options.maxCollectiveBytes) {}
  ~StagedMpiCommunicator() override;

  Status initialize();

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override {
    return host_.describe() + ", staged through 2 x " +
           formatBytes(capacity_) + " of pinned host memory";
  }

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
  /// Checks the call and copies its send buffer into `sendStage_`; sets
  /// `stream` and, when the buffers are host memory CUDA does not know,
  /// buffers.pageable (the host communicator takes them as they are).
  Status stageIn(CollectiveKind kind, const void *send, void *recv,
                 int64_t count, DType type, const CollectiveContext &context,
                 CollectiveBuffers &buffers, cudaStream_t &stream);
  /// Copies the result from `recvStage_` to `recv`.
  Status stageOut(void *recv, int64_t bytes, cudaStream_t stream,
                  const CollectiveContext &context);

  Communicator &host_;
  DeviceCommunicatorOptions options_;
  int rank_;
  int size_;
  int64_t capacity_;
  void *sendStage_ = nullptr;
  void *recvStage_ = nullptr;
  /// For calls that name no stream.
  cudaStream_t ownStream_ = nullptr;
};

Status StagedMpiCommunicator::initialize() {
  ZERO_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.deviceOrdinal));
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaStreamCreateWithFlags(&ownStream_, cudaStreamNonBlocking));
  if (capacity_ > 0) {
    cudaError_t code = cudaHostAlloc(&sendStage_, static_cast<size_t>(capacity_),
                                     cudaHostAllocPortable);
    if (code == cudaSuccess)
      code = cudaHostAlloc(&recvStage_, static_cast<size_t>(capacity_),
                           cudaHostAllocPortable);
    if (code != cudaSuccess)
      return ZERO_ERROR(kResourceExhausted,
                        "rank " + std::to_string(rank_) +
                            ": cannot pin 2 x " + formatBytes(capacity_) +
                            " of host memory for the staged collectives: " +
                            cudaGetErrorString(code));
  }
  return Status::ok();
}

StagedMpiCommunicator::~StagedMpiCommunicator() {
  (void)cudaSetDevice(options_.deviceOrdinal);
  if (sendStage_)
    (void)cudaFreeHost(sendStage_);
  if (recvStage_)
    (void)cudaFreeHost(recvStage_);
  if (ownStream_)
    (void)cudaStreamDestroy(ownStream_);
}

Status StagedMpiCommunicator::stageIn(CollectiveKind kind, const void *send,
                                      void *recv, int64_t count, DType type,
                                      const CollectiveContext &context,
                                      CollectiveBuffers &buffers,
                                      cudaStream_t &stream) {
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
  if (buffers.pageable || count == 0)
    return Status::ok();
  int64_t largest = std::max(buffers.sendBytes, buffers.recvBytes);
  if (largest > capacity_)
    return ZERO_ERROR(kOutOfRange,
                      describeCall(rank_, context) + " moves " +
                          formatBytes(largest) + " (send " +
                          std::to_string(buffers.sendBytes) + ", receive " +
                          std::to_string(buffers.recvBytes) +
                          "), more than the " + formatBytes(capacity_) +
                          " of pinned staging made for the largest "
                          "collective (DeviceCommunicatorOptions::"
                          "maxCollectiveBytes)");
  stream = static_cast<cudaStream_t>(context.stream);
  if (!stream) {
    // No stream: the buffers are ready once the device's work is done.
    code = cudaDeviceSynchronize();
    if (code != cudaSuccess)
      return collectiveCudaError(code, "cudaDeviceSynchronize", rank_, context,
                                 __FILE__, __LINE__);
    stream = ownStream_;
  }
  // Ordered behind the work that produced `send` on the stream. Staging is
  // distinct from the buffers, so the in-place forms need nothing special:
  // the whole send buffer is read before any of recv is written.
  code = cudaMemcpyAsync(sendStage_, send, static_cast<size_t>(buffers.sendBytes),
                         cudaMemcpyDefault, stream);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaMemcpyAsync", rank_, context,
                               __FILE__, __LINE__);
  code = cudaStreamSynchronize(stream);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaStreamSynchronize", rank_, context,
                               __FILE__, __LINE__);
  return Status::ok();
}

Status StagedMpiCommunicator::stageOut(void *recv, int64_t bytes,
                                       cudaStream_t stream,
                                       const CollectiveContext &context) {
  cudaError_t code = cudaMemcpyAsync(recv, recvStage_, static_cast<size_t>(bytes),
                                     cudaMemcpyDefault, stream);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaMemcpyAsync", rank_, context,
                               __FILE__, __LINE__);
  // The staging is reused by the next call, and the caller may read `recv`
  // from any stream once this returns.
  code = cudaStreamSynchronize(stream);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaStreamSynchronize", rank_, context,
                               __FILE__, __LINE__);
  return Status::ok();
}

Status StagedMpiCommunicator::doAllGather(const void *send, void *recv,
                                          int64_t count, DType type,
                                          const CollectiveContext &context) {
  CollectiveBuffers buffers;
  cudaStream_t stream = nullptr;
  ZERO_RETURN_IF_ERROR(stageIn(CollectiveKind::AllGather, send, recv, count,
                               type, context, buffers, stream));
  if (count == 0)
    return Status::ok();
  if (buffers.pageable)
    return host_.allGather(send, recv, count, type, context);
  ZERO_RETURN_IF_ERROR(
      host_.allGather(sendStage_, recvStage_, count, type, context));
  return stageOut(recv, buffers.recvBytes, stream, context);
}

Status StagedMpiCommunicator::doReduceScatter(const void *send, void *recv,
                                              int64_t count, DType type,
                                              ReduceOp op,
                                              const CollectiveContext &context) {
  CollectiveBuffers buffers;
  cudaStream_t stream = nullptr;
  ZERO_RETURN_IF_ERROR(stageIn(CollectiveKind::ReduceScatter, send, recv,
                               count, type, context, buffers, stream));
  if (count == 0)
    return Status::ok();
  if (buffers.pageable)
    return host_.reduceScatter(send, recv, count, type, op, context);
  ZERO_RETURN_IF_ERROR(
      host_.reduceScatter(sendStage_, recvStage_, count, type, op, context));
  return stageOut(recv, buffers.recvBytes, stream, context);
}

Status StagedMpiCommunicator::doAllReduce(const void *send, void *recv,
                                          int64_t count, DType type,
                                          ReduceOp op,
                                          const CollectiveContext &context) {
  CollectiveBuffers buffers;
  cudaStream_t stream = nullptr;
  ZERO_RETURN_IF_ERROR(stageIn(CollectiveKind::AllReduce, send, recv, count,
                               type, context, buffers, stream));
  if (count == 0)
    return Status::ok();
  if (buffers.pageable)
    return host_.allReduce(send, recv, count, type, op, context);
  ZERO_RETURN_IF_ERROR(
      host_.allReduce(sendStage_, recvStage_, count, type, op, context));
  return stageOut(recv, buffers.recvBytes, stream, context);
}

} // namespace

StatusOr<std::unique_ptr<Communicator>>
createStagedMpiCommunicator(Communicator &host,
                            const DeviceCommunicatorOptions &options) {
  auto communicator = std::make_unique<StagedMpiCommunicator>(host, options);
  ZERO_RETURN_IF_ERROR(communicator->initialize());
  return std::unique_ptr<Communicator>(std::move(communicator));
}

} // namespace zero::runtime::cuda
