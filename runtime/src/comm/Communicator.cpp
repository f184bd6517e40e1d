//===- Communicator.cpp - the ring volume of each collective --------------===//
//
// Also the errors and deadlines every communicator shares (CollectiveWait.h).
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"

#include "CollectiveWait.h"

#include <sstream>

#include <cstdlib>

namespace zero::runtime {

// With or without MPI in the build: a launcher's environment is the same.
bool isLaunchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") ||
         std::getenv("PMI_SIZE");
}

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
  if (ranksPerNode_ > 0 && ranksPerNode_ < size()) {
    const int64_t local = rank() % ranksPerNode_;
    if (local == ranksPerNode_ - 1)
      sentInterNode_ += bytes;
    if (local == 0)
      receivedInterNode_ += bytes;
  }
}

namespace comm {

std::string describeCall(int rank, const CollectiveContext &context) {
  return "rank " + std::to_string(rank) + ": " + context.what;
}

Status collectiveFailure(int rank, const CollectiveContext &context,
                         const std::string &library,
                         const std::string &detail) {
  return ZERO_ERROR(kUnavailable, describeCall(rank, context) + " failed in " +
                                      library + ": " + detail);
}

void CollectiveDeadline::restart() {
  deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(seconds_));
}

Status CollectiveDeadline::check(int rank,
                                 const CollectiveContext &context) const {
  if (context.cancel && context.cancel->load())
    return ZERO_ERROR(kUnavailable, describeCall(rank, context) +
                                        " abandoned: another stream of this "
                                        "rank failed");
  if (!passed())
    return Status::ok();
  std::ostringstream seconds; // "60", "2.5"
  seconds << seconds_;
  return ZERO_ERROR(kUnavailable,
                    describeCall(rank, context) + " did not complete within " +
                        seconds.str() + " s: a peer rank stopped");
}

} // namespace comm

} // namespace zero::runtime
