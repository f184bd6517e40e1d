//===- DeviceCommunicators.cpp - communicators of device buffers ----------===//
//
// createDeviceCommunicator picks NCCL (one rank per GPU) or MPI staged
// through pinned host memory (several ranks per GPU), after checking the
// options and the GPU. Also the buffer checks both implementations share.
//
//===----------------------------------------------------------------------===//

#include "DeviceCommunicators.h"

#include <algorithm>
#include <sstream>

namespace zero::runtime::cuda {

std::string formatSeconds(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

std::string describeCall(int rank, const CollectiveContext &context) {
  return "rank " + std::to_string(rank) + ": " + context.what;
}

Status collectiveCudaError(cudaError_t code, const char *call, int rank,
                           const CollectiveContext &context, const char *file,
                           int line) {
  return Status(StatusCode::kUnavailable,
                describeCall(rank, context) + " failed in CUDA (" + call +
                    "): " + cudaGetErrorString(code),
                file, line);
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
      return ZERO_ERROR(kInvalidArgument,
                        describeCall(rank, context) + ": the " + role +
                            " buffer is on GPU " +
                            std::to_string(attributes.device) +
                            ", the communicator on GPU " +
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

} // namespace

StatusOr<CollectiveBuffers> checkCollective(CollectiveKind kind,
                                            const void *send, const void *recv,
                                            int64_t count, DType type,
                                            int rank, int size, int ordinal,
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
  }
  if (bytes == 0)
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
  switch (options.kind) {
  case DeviceCommunication::Nccl:
    return cuda::createNcclCommunicator(host, options);
  case DeviceCommunication::StagedMpi:
    return cuda::createStagedMpiCommunicator(host, options);
  }
  return ZERO_ERROR(kInvalidArgument, "unknown device communication kind");
}

} // namespace zero::runtime
