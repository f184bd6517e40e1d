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

StatusOr<std::unique_ptr<Communicator>>
Communicator::split(int color, int key, const CollectiveContext &context) {
  StatusOr<std::unique_ptr<Communicator>> made = doSplit(color, key, context);
  if (!made.isOk())
    return made.status();
  Communicator &group = **made;
  // The members' world ranks place the group's ring on the nodes; moved
  // uncounted, as they are no collective of the step.
  std::vector<int64_t> members(static_cast<size_t>(group.size()));
  int64_t mine = worldRank(rank());
  ZERO_RETURN_IF_ERROR(
      group.doAllGather(&mine, members.data(), 1, DType::I64, context));
  group.worldRanks_ = std::move(members);
  group.setRanksPerNode(ranksPerNode_);
  return made;
}

void Communicator::setRanksPerNode(int64_t ranks) {
  ranksPerNode_ = ranks;
  sendsAcrossNodes_ = receivesAcrossNodes_ = false;
  const int n = size();
  if (ranks <= 0 || n == 1)
    return;
  auto node = [&](int r) { return worldRank(r) / ranks; };
  const int r = rank();
  sendsAcrossNodes_ = node((r + 1) % n) != node(r);
  receivesAcrossNodes_ = node((r + n - 1) % n) != node(r);
}

void Communicator::record(int64_t bytes) {
  sent_ += bytes;
  received_ += bytes;
  ++calls_;
  if (sendsAcrossNodes_)
    sentInterNode_ += bytes;
  if (receivesAcrossNodes_)
    receivedInterNode_ += bytes;
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
