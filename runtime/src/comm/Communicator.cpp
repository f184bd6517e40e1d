//===- Communicator.cpp - the ring volume of each collective --------------===//

#include "zero/runtime/Communicator.h"

namespace zero::runtime {

Status Communicator::allGather(const void *send, void *recv, int64_t count,
                               DType type, const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(doAllGather(send, recv, count, type, context));
  int64_t bytes = (size() - 1) * count * getDTypeWidth(type);
  record(bytes);
  return Status::ok();
}

Status Communicator::reduceScatter(const void *send, void *recv, int64_t count,
                                   DType type, ReduceOp op,
                                   const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(doReduceScatter(send, recv, count, type, op, context));
  int64_t bytes = (size() - 1) * count * getDTypeWidth(type);
  record(bytes);
  return Status::ok();
}

Status Communicator::allReduce(const void *send, void *recv, int64_t count,
                               DType type, ReduceOp op,
                               const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(doAllReduce(send, recv, count, type, op, context));
  // A reduce-scatter and an all-gather of N equal chunks.
  int64_t chunk = (count * getDTypeWidth(type) + size() - 1) / size();
  record(2 * (size() - 1) * chunk);
  return Status::ok();
}

void Communicator::record(int64_t bytes) {
  sent_ += bytes;
  received_ += bytes;
  ++calls_;
}

} // namespace zero::runtime
