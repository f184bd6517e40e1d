//===- DeviceCommunicators.h - the CUDA communicators' base -----*- C++ -*-===//
//
// NCCL (NcclCommunicator.cpp) and MPI staged through pinned host memory
// (StagedMpiCommunicator.cpp) differ only in how they move a collective of
// GPU buffers. Everything else is DeviceCommunicator's: the calls that are
// not collectives of device buffers go to the host communicator, and a
// collective starts the same way in both: the rank's GPU made current on
// the calling thread, the buffers checked against Communicator.h's rules,
// an empty call done, pageable host buffers handed to the host
// communicator, and the stream picked. A split makes the group's host
// communicator (Communicator::split of the host's) and a device communicator
// of the same kind on it, which owns it. The factory,
// createDeviceCommunicator, is in DeviceCommunicators.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_DEVICECOMMUNICATORS_H
#define ZERO_RUNTIME_CUDA_DEVICECOMMUNICATORS_H

#include "zero/runtime/Communicator.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime::cuda {

class DeviceCommunicator;

/// `host` must outlive the result.
StatusOr<std::unique_ptr<DeviceCommunicator>>
createNcclCommunicator(Communicator &host,
                       const DeviceCommunicatorOptions &options);
StatusOr<std::unique_ptr<DeviceCommunicator>>
createStagedMpiCommunicator(Communicator &host,
                            const DeviceCommunicatorOptions &options);

/// The collectives of device buffers. AllToAll moves `count` bytes per peer
/// (DType::I1); AllGatherBlocks gathers a BlockGrid in place.
enum class CollectiveKind {
  AllGather,
  ReduceScatter,
  AllReduce,
  AllToAll,
  AllGatherBlocks
};

/// One call's buffers, checked.
struct CollectiveBuffers {
  int64_t sendBytes = 0;
  int64_t recvBytes = 0;
  /// The in-place form Communicator.h allows for the collective (always
  /// for AllGatherBlocks, whose bytes are the span of every rank's blocks).
  bool inPlace = false;
  /// Both buffers are pageable host memory (not reachable by the GPU): the
  /// call goes to the host communicator as it is. Buffers in device memory,
  /// pinned host memory or managed memory are the device communicators'.
  bool pageable = false;
};

/// A failed CUDA call during a collective: "rank R: <what> failed in CUDA
/// (<call>): <cudaGetErrorString>".
Status collectiveCudaError(cudaError_t code, const char *call, int rank,
                           const CollectiveContext &context);

class DeviceCommunicator : public Communicator {
public:
  /// `host` must outlive the communicator (a group's is its own).
  DeviceCommunicator(Communicator &host,
                     const DeviceCommunicatorOptions &options)
      : host_(host), options_(options), rank_(host.rank()), size_(host.size()) {
  }
  ~DeviceCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Host memory: the host communicator's.
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
  /// One collective: its arguments, its checked buffers and the stream it
  /// is ordered on.
  struct Call {
    CollectiveKind kind;
    const void *send;
    void *recv;
    int64_t count;
    DType type;
    ReduceOp op; // not for all-gather
    const CollectiveContext &context;
    CollectiveBuffers buffers;
    cudaStream_t stream;
    // AllGatherBlocks: what each rank holds, at recv + p * peerStride.
    const BlockGrid *held = nullptr;
    int64_t peerStride = 0;
  };

  /// Makes the GPU current and the stream of calls that name none; first in
  /// an implementation's initialization.
  Status initializeDevice();
  /// Moves a checked collective of `count > 0` elements in buffers the GPU
  /// reaches, ordered on `call.stream`; the GPU is current.
  virtual Status runOnDevice(const Call &call) = 0;
  /// `call` by the host communicator, on `send` and `recv`.
  Status runOnHost(const Call &call, const void *send, void *recv);

  Communicator &host_;
  DeviceCommunicatorOptions options_;
  int rank_;
  int size_;

private:
  Status doAllGather(const void *send, void *recv, int64_t count, DType type,
                     const CollectiveContext &context) final;
  Status doReduceScatter(const void *send, void *recv, int64_t count,
                         DType type, ReduceOp op,
                         const CollectiveContext &context) final;
  Status doAllReduce(const void *send, void *recv, int64_t count, DType type,
                     ReduceOp op, const CollectiveContext &context) final;
  Status doAllToAll(const void *send, void *recv, int64_t bytesPerPeer,
                    const CollectiveContext &context) final;
  Status doAllGatherBlocks(void *buffer, const BlockGrid &held,
                           int64_t peerStride,
                           const CollectiveContext &context) final;
  /// The host communicator's split, and a communicator of this kind on it.
  StatusOr<std::unique_ptr<Communicator>>
  doSplit(int color, int key, const CollectiveContext &context) final;
  Status run(CollectiveKind kind, const void *send, void *recv, int64_t count,
             DType type, ReduceOp op, const CollectiveContext &context,
             const BlockGrid *held = nullptr, int64_t peerStride = 0);

  /// For calls that name no stream.
  cudaStream_t ownStream_ = nullptr;
  /// A group's host communicator (split), which host_ refers to: destroyed
  /// after the derived class has finalized what it built on it.
  std::unique_ptr<Communicator> ownedHost_;
};

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_DEVICECOMMUNICATORS_H
