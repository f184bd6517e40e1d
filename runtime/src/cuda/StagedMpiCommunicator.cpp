//===- StagedMpiCommunicator.cpp - device buffers over the host communicator
//-===//
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
#include "comm/CollectiveWait.h"

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

class StagedMpiCommunicator final : public DeviceCommunicator {
public:
  StagedMpiCommunicator(Communicator &host,
                        const DeviceCommunicatorOptions &options)
      : DeviceCommunicator(host, options),
        capacity_(options.maxCollectiveBytes) {}
  ~StagedMpiCommunicator() override;

  Status initialize();

  std::string describe() const override {
    return host_.describe() + ", staged through 2 x " + formatBytes(capacity_) +
           " of pinned host memory";
  }

protected:
  Status runOnDevice(const Call &call) override;

private:
  /// Copies `bytes` from `from` to `to` on the call's stream and waits.
  Status copyAndWait(void *to, const void *from, int64_t bytes,
                     const Call &call);
  /// Waits for the work on the call's stream.
  Status waitFor(const Call &call);

  int64_t capacity_;
  void *sendStage_ = nullptr;
  void *recvStage_ = nullptr;
};

Status StagedMpiCommunicator::initialize() {
  ZERO_RETURN_IF_ERROR(initializeDevice());
  if (capacity_ > 0) {
    cudaError_t code = cudaHostAlloc(
        &sendStage_, static_cast<size_t>(capacity_), cudaHostAllocPortable);
    if (code == cudaSuccess)
      code = cudaHostAlloc(&recvStage_, static_cast<size_t>(capacity_),
                           cudaHostAllocPortable);
    if (code != cudaSuccess)
      return ZERO_ERROR(kResourceExhausted,
                        "rank " + std::to_string(rank_) + ": cannot pin 2 x " +
                            formatBytes(capacity_) +
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
}

Status StagedMpiCommunicator::copyAndWait(void *to, const void *from,
                                          int64_t bytes, const Call &call) {
  cudaError_t code = cudaMemcpyAsync(to, from, static_cast<size_t>(bytes),
                                     cudaMemcpyDefault, call.stream);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaMemcpyAsync", rank_, call.context);
  return waitFor(call);
}

Status StagedMpiCommunicator::waitFor(const Call &call) {
  cudaError_t code = cudaStreamSynchronize(call.stream);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaStreamSynchronize", rank_,
                               call.context);
  return Status::ok();
}

Status StagedMpiCommunicator::runOnDevice(const Call &call) {
  const CollectiveBuffers &buffers = call.buffers;
  int64_t largest = std::max(buffers.sendBytes, buffers.recvBytes);
  if (largest > capacity_)
    return ZERO_ERROR(kOutOfRange,
                      comm::describeCall(rank_, call.context) + " moves " +
                          formatBytes(largest) + " (send " +
                          std::to_string(buffers.sendBytes) + ", receive " +
                          std::to_string(buffers.recvBytes) +
                          "), more than the " + formatBytes(capacity_) +
                          " of pinned staging made for the largest "
                          "collective (DeviceCommunicatorOptions::"
                          "maxCollectiveBytes)");
  if (call.kind == CollectiveKind::AllGatherBlocks) {
    // The span of every rank's blocks, gathered in place in the staging;
    // only the peers' blocks come back, so that the bytes between blocks
    // are never written.
    ZERO_RETURN_IF_ERROR(
        copyAndWait(sendStage_, call.send, buffers.sendBytes, call));
    ZERO_RETURN_IF_ERROR(runOnHost(call, sendStage_, sendStage_));
    auto *stage = static_cast<std::byte *>(sendStage_);
    auto *buffer = static_cast<std::byte *>(call.recv);
    const std::vector<int64_t> offsets = call.held->offsets();
    for (int peer = 0; peer < size_; ++peer)
      for (int64_t offset : offsets) {
        const int64_t at = peer * call.peerStride + offset;
        cudaError_t code =
            peer == rank_
                ? cudaSuccess
                : cudaMemcpyAsync(buffer + at, stage + at,
                                  static_cast<size_t>(call.held->blockBytes),
                                  cudaMemcpyDefault, call.stream);
        if (code != cudaSuccess)
          return collectiveCudaError(code, "cudaMemcpyAsync", rank_,
                                     call.context);
      }
    return waitFor(call);
  }
  // Ordered behind the work that produced `send` on the stream. Staging is
  // distinct from the buffers, so the in-place forms need nothing special:
  // the whole send buffer is read before any of recv is written.
  ZERO_RETURN_IF_ERROR(
      copyAndWait(sendStage_, call.send, buffers.sendBytes, call));
  ZERO_RETURN_IF_ERROR(runOnHost(call, sendStage_, recvStage_));
  // The staging is reused by the next call, and the caller may read `recv`
  // from any stream once this returns.
  return copyAndWait(call.recv, recvStage_, buffers.recvBytes, call);
}

} // namespace

StatusOr<std::unique_ptr<DeviceCommunicator>>
createStagedMpiCommunicator(Communicator &host,
                            const DeviceCommunicatorOptions &options) {
  auto communicator = std::make_unique<StagedMpiCommunicator>(host, options);
  ZERO_RETURN_IF_ERROR(communicator->initialize());
  return std::unique_ptr<DeviceCommunicator>(std::move(communicator));
}

} // namespace zero::runtime::cuda
