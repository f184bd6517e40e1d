//===- DeviceCommunicators.h - the CUDA communicators' shared parts -*- C++ -*-===//
//
// What NcclCommunicator.cpp and StagedMpiCommunicator.cpp share: their
// constructors (the factory, createDeviceCommunicator, is in
// DeviceCommunicators.cpp), the check of a collective's buffers against
// Communicator.h's rules, and the messages.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_DEVICECOMMUNICATORS_H
#define ZERO_RUNTIME_CUDA_DEVICECOMMUNICATORS_H

#include "zero/runtime/Communicator.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

namespace zero::runtime::cuda {

StatusOr<std::unique_ptr<Communicator>>
createNcclCommunicator(Communicator &host,
                       const DeviceCommunicatorOptions &options);
StatusOr<std::unique_ptr<Communicator>>
createStagedMpiCommunicator(Communicator &host,
                            const DeviceCommunicatorOptions &options);

enum class CollectiveKind { AllGather, ReduceScatter, AllReduce };

/// One call's buffers, checked.
struct CollectiveBuffers {
  int64_t sendBytes = 0;
  int64_t recvBytes = 0;
  /// The in-place form Communicator.h allows for the collective.
  bool inPlace = false;
  /// Both buffers are pageable host memory (not reachable by the GPU): the
  /// call goes to the host communicator as it is. Buffers in device memory,
  /// pinned host memory or managed memory are the device communicators'.
  bool pageable = false;
};

/// Checks a call against Communicator.h: a count of at least 0, buffers that
/// are the same bytes only in the in-place form and otherwise disjoint, and
/// both on `ordinal` (or host memory that the GPU reaches) or both pageable.
/// Errors start with "rank R: <what>: ".
StatusOr<CollectiveBuffers> checkCollective(CollectiveKind kind,
                                            const void *send, const void *recv,
                                            int64_t count, DType type,
                                            int rank, int size, int ordinal,
                                            const CollectiveContext &context);

/// "rank R: <what>".
std::string describeCall(int rank, const CollectiveContext &context);

/// A failed CUDA call during a collective: "rank R: <what> failed in CUDA
/// (<call>): <cudaGetErrorString>".
Status collectiveCudaError(cudaError_t code, const char *call, int rank,
                           const CollectiveContext &context, const char *file,
                           int line);

/// "60", "2.5": seconds as the host MPI communicator prints them.
std::string formatSeconds(double seconds);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_DEVICECOMMUNICATORS_H
