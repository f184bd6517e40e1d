//===- DeviceCommunicators.cpp - communicators of device buffers ----------===//
//
// createDeviceCommunicator picks NCCL (one rank per GPU) or MPI staged
// through pinned host memory (several ranks per GPU), after checking the
// options and the GPU. Also what both implementations share
// (DeviceCommunicator).
//
//===----------------------------------------------------------------------===//

#include "DeviceCommunicators.h"

#include "CudaContext.h"
#include "comm/CollectiveWait.h"

namespace zero::runtime::cuda {

using comm::describeCall;

Status collectiveCudaError(cudaError_t code, const char *call, int rank,
                           const CollectiveContext &context) {
  return comm::collectiveFailure(rank, context,
                                 std::string("CUDA (") + call + ")",
                                 cudaGetErrorString(code));
}

namespace {

/// Where the bytes at `pointer` live, as far as a collective cares.
enum class Residence { Gpu, Pageable };

StatusOr<Residence> locate(const void *pointer, int ordinal, const char *role,
                           int rank, const CollectiveContext &context) {
  cudaPointerAttributes attributes{};
  cudaError_t code = cudaPointerGetAttributes(&attributes, pointer);
  if (code != cudaSuccess) {
    // Older drivers answer cudaErrorInvalidValue for memory CUDA does not
    // know: ordinary host memory. The error is not sticky; clear it.
    (void)cudaGetLastError();
    return Residence::Pageable;
  }
  switch (attributes.type) {
  case cudaMemoryTypeUnregistered:
    return Residence::Pageable;
  case cudaMemoryTypeHost:
  case cudaMemoryTypeManaged:
    return Residence::Gpu; // reachable from every device (UVA)
  case cudaMemoryTypeDevice:
    if (attributes.device != ordinal)
      return ZERO_ERROR(
          kInvalidArgument,
          describeCall(rank, context) + ": the " + role + " buffer is on GPU " +
              std::to_string(attributes.device) + ", the communicator on GPU " +
              std::to_string(ordinal));
    return Residence::Gpu;
  }
  return Residence::Pageable;
}

bool overlaps(const void *a, int64_t aBytes, const void *b, int64_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return aBytes > 0 && bBytes > 0 && x < y + static_cast<uintptr_t>(bBytes) &&
         y < x + static_cast<uintptr_t>(aBytes);
}

/// Checks a call against Communicator.h: a count of at least 0, buffers that
/// are the same bytes only in the in-place form and otherwise disjoint, and
/// both on `ordinal` (or host memory that the GPU reaches) or both pageable.
/// Errors start with "rank R: <what>: ".
StatusOr<CollectiveBuffers>
checkCollective(CollectiveKind kind, const void *send, const void *recv,
                int64_t count, DType type, const BlockGrid *held,
                int64_t peerStride, int rank, int size, int ordinal,
                const CollectiveContext &context) {
  if (count < 0)
    return ZERO_ERROR(kInvalidArgument, describeCall(rank, context) +
                                            ": a negative count (" +
                                            std::to_string(count) + ")");
  const int64_t bytes = count * getDTypeWidth(type);
  CollectiveBuffers buffers;
  switch (kind) {
  case CollectiveKind::AllGather:
    buffers.sendBytes = bytes;
    buffers.recvBytes = bytes * size;
    buffers.inPlace =
        send == static_cast<const std::byte *>(recv) + rank * bytes;
    break;
  case CollectiveKind::ReduceScatter:
    buffers.sendBytes = bytes * size;
    buffers.recvBytes = bytes;
    buffers.inPlace = send == recv;
    break;
  case CollectiveKind::AllReduce:
    buffers.sendBytes = bytes;
    buffers.recvBytes = bytes;
    buffers.inPlace = send == recv;
    break;
  case CollectiveKind::AllToAll:
    buffers.sendBytes = bytes * size;
    buffers.recvBytes = bytes * size;
    break;
  case CollectiveKind::AllGatherBlocks:
    if (held->counts.size() != held->strides.size())
      return ZERO_ERROR(kInvalidArgument,
                        describeCall(rank, context) + ": a block grid of " +
                            std::to_string(held->counts.size()) +
                            " counts and " +
                            std::to_string(held->strides.size()) + " strides");
    // From the first rank's first block to the last rank's last (the ranks'
    // blocks may interleave: a stride below the extent is allowed).
    buffers.sendBytes = buffers.recvBytes =
        held->extent() == 0 ? 0 : (size - 1) * peerStride + held->extent();
    buffers.inPlace = true;
    break;
  }
  if (buffers.recvBytes == 0)
    return buffers;
  if (!buffers.inPlace &&
      overlaps(send, buffers.sendBytes, recv, buffers.recvBytes))
    return ZERO_ERROR(kInvalidArgument,
                      describeCall(rank, context) +
                          ": the send and receive buffers overlap without "
                          "being the in-place form");
  StatusOr<Residence> from = locate(send, ordinal, "send", rank, context);
  if (!from.isOk())
    return from.status();
  StatusOr<Residence> to = locate(recv, ordinal, "receive", rank, context);
  if (!to.isOk())
    return to.status();
  if (*from != *to)
    return ZERO_ERROR(kInvalidArgument,
                      describeCall(rank, context) + ": the " +
                          (*from == Residence::Pageable ? "send" : "receive") +
                          " buffer is pageable host memory and the other "
                          "one GPU memory; a collective takes both in one "
                          "place");
  buffers.pageable = *from == Residence::Pageable;
  return buffers;
}

} // namespace

//===----------------------------------------------------------------------===//
// DeviceCommunicator
//===----------------------------------------------------------------------===//

Status DeviceCommunicator::initializeDevice() {
  ZERO_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.deviceOrdinal));
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaStreamCreateWithFlags(&ownStream_, cudaStreamNonBlocking));
  return Status::ok();
}

DeviceCommunicator::~DeviceCommunicator() {
  (void)cudaSetDevice(options_.deviceOrdinal);
  if (ownStream_)
    (void)cudaStreamDestroy(ownStream_);
}

Status DeviceCommunicator::doAllGather(const void *send, void *recv,
                                       int64_t count, DType type,
                                       const CollectiveContext &context) {
  return run(CollectiveKind::AllGather, send, recv, count, type, ReduceOp::Sum,
             context);
}

Status DeviceCommunicator::doReduceScatter(const void *send, void *recv,
                                           int64_t count, DType type,
                                           ReduceOp op,
                                           const CollectiveContext &context) {
  return run(CollectiveKind::ReduceScatter, send, recv, count, type, op,
             context);
}

Status DeviceCommunicator::doAllReduce(const void *send, void *recv,
                                       int64_t count, DType type, ReduceOp op,
                                       const CollectiveContext &context) {
  return run(CollectiveKind::AllReduce, send, recv, count, type, op, context);
}

Status DeviceCommunicator::doAllToAll(const void *send, void *recv,
                                      int64_t bytesPerPeer,
                                      const CollectiveContext &context) {
  return run(CollectiveKind::AllToAll, send, recv, bytesPerPeer, DType::I1,
             ReduceOp::Sum, context);
}

Status DeviceCommunicator::doAllGatherBlocks(void *buffer,
                                             const BlockGrid &held,
                                             int64_t peerStride,
                                             const CollectiveContext &context) {
  if (held.blockBytes < 0 || peerStride < 0)
    return ZERO_ERROR(kInvalidArgument,
                      describeCall(rank_, context) +
                          ": blocks of a negative size or stride");
  return run(CollectiveKind::AllGatherBlocks, buffer, buffer, held.bytes(),
             DType::I1, ReduceOp::Sum, context, &held, peerStride);
}

namespace {

StatusOr<std::unique_ptr<DeviceCommunicator>>
makeDeviceCommunicator(Communicator &host,
                       const DeviceCommunicatorOptions &options) {
  switch (options.kind) {
  case DeviceCommunication::Nccl:
    return createNcclCommunicator(host, options);
  case DeviceCommunication::StagedMpi:
    return createStagedMpiCommunicator(host, options);
  }
  return ZERO_ERROR(kInvalidArgument, "unknown device communication kind");
}

} // namespace

StatusOr<std::unique_ptr<Communicator>>
DeviceCommunicator::doSplit(int color, int key,
                            const CollectiveContext &context) {
  // The group's host communicator first: NCCL broadcasts the group's unique
  // id over it (a new communicator on the group's ranks, as the world's is
  // made, rather than ncclCommSplit: one way to make both), and staged MPI
  // moves the group's bytes with it.
  StatusOr<std::unique_ptr<Communicator>> hostGroup =
      host_.split(color, key, context);
  if (!hostGroup.isOk())
    return hostGroup.status();
  StatusOr<std::unique_ptr<DeviceCommunicator>> group =
      makeDeviceCommunicator(**hostGroup, options_);
  if (!group.isOk())
    return group.status();
  (*group)->ownedHost_ = std::move(*hostGroup);
  return std::unique_ptr<Communicator>(std::move(*group));
}

Status DeviceCommunicator::run(CollectiveKind kind, const void *send,
                               void *recv, int64_t count, DType type,
                               ReduceOp op, const CollectiveContext &context,
                               const BlockGrid *held, int64_t peerStride) {
  // The executor's comm thread is not the thread that made the
  // communicator, and a thread starts on GPU 0.
  cudaError_t code = cudaSetDevice(options_.deviceOrdinal);
  if (code != cudaSuccess)
    return collectiveCudaError(code, "cudaSetDevice", rank_, context);
  StatusOr<CollectiveBuffers> buffers =
      checkCollective(kind, send, recv, count, type, held, peerStride, rank_,
                      size_, options_.deviceOrdinal, context);
  if (!buffers.isOk())
    return buffers.status();
  Call call{kind,     send,     recv,    count, type, op,
            context,  *buffers, nullptr, held,  peerStride};
  if (call.count == 0)
    return Status::ok();
  if (call.buffers.pageable)
    return runOnHost(call, call.send, call.recv);
  call.stream = static_cast<cudaStream_t>(call.context.stream);
  if (!call.stream) {
    // No stream: the caller's buffers are ready once the device's work so
    // far is done; the implementations complete the call before returning.
    code = cudaDeviceSynchronize();
    if (code != cudaSuccess)
      return collectiveCudaError(code, "cudaDeviceSynchronize", rank_,
                                 call.context);
    call.stream = ownStream_;
  }
  return runOnDevice(call);
}

Status DeviceCommunicator::runOnHost(const Call &call, const void *send,
                                     void *recv) {
  switch (call.kind) {
  case CollectiveKind::AllGather:
    return host_.allGather(send, recv, call.count, call.type, call.context);
  case CollectiveKind::ReduceScatter:
    return host_.reduceScatter(send, recv, call.count, call.type, call.op,
                               call.context);
  case CollectiveKind::AllReduce:
    return host_.allReduce(send, recv, call.count, call.type, call.op,
                           call.context);
  case CollectiveKind::AllToAll:
    return host_.allToAll(send, recv, call.count, call.context);
  case CollectiveKind::AllGatherBlocks:
    // In place: `recv` is where the blocks are (a copy of the call's).
    return host_.allGatherBlocks(recv, *call.held, call.peerStride,
                                 call.context);
  }
  return ZERO_ERROR(kInternal, "unknown collective");
}

} // namespace zero::runtime::cuda

namespace zero::runtime {

StatusOr<std::unique_ptr<Communicator>>
createDeviceCommunicator(Communicator &host,
                         const DeviceCommunicatorOptions &options) {
  if (!(options.timeoutSeconds > 0))
    return ZERO_ERROR(kInvalidArgument,
                      "the collective timeout must be positive");
  if (options.maxCollectiveBytes < 0)
    return ZERO_ERROR(kInvalidArgument,
                      "the largest collective cannot be " +
                          std::to_string(options.maxCollectiveBytes) +
                          " bytes");
  int devices = 0;
  cudaError_t code = cudaGetDeviceCount(&devices);
  if (code != cudaSuccess)
    return ZERO_ERROR(kUnavailable,
                      "rank " + std::to_string(host.rank()) +
                          ": no CUDA device for the communicator: " +
                          cudaGetErrorString(code));
  if (options.deviceOrdinal < 0 || options.deviceOrdinal >= devices)
    return ZERO_ERROR(kInvalidArgument,
                      "rank " + std::to_string(host.rank()) + ": GPU " +
                          std::to_string(options.deviceOrdinal) +
                          " does not exist (" + std::to_string(devices) +
                          " visible)");
  StatusOr<std::unique_ptr<cuda::DeviceCommunicator>> made =
      cuda::makeDeviceCommunicator(host, options);
  if (!made.isOk())
    return made.status();
  return std::unique_ptr<Communicator>(std::move(*made));
}

} // namespace zero::runtime
