//===- Communicator.cpp - the ring volume of each collective --------------===//
//
// Also the errors and deadlines every communicator shares (CollectiveWait.h).
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"

#include "CollectiveWait.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>

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
  return finish((size() - 1) * count * getDTypeWidth(type), context);
}

Status Communicator::allGatherBlocks(void *buffer, const BlockGrid &held,
                                     int64_t peerStride,
                                     const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(doAllGatherBlocks(buffer, held, peerStride, context));
  return finish((size() - 1) * held.bytes(), context);
}

Status Communicator::reduceScatter(const void *send, void *recv, int64_t count,
                                   DType type, ReduceOp op,
                                   const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(doReduceScatter(send, recv, count, type, op, context));
  return finish((size() - 1) * count * getDTypeWidth(type), context);
}

Status Communicator::allReduce(const void *send, void *recv, int64_t count,
                               DType type, ReduceOp op,
                               const CollectiveContext &context) {
  ZERO_RETURN_IF_ERROR(doAllReduce(send, recv, count, type, op, context));
  // A reduce-scatter and an all-gather of N equal chunks.
  int64_t chunk = (count * getDTypeWidth(type) + size() - 1) / size();
  return finish(2 * (size() - 1) * chunk, context);
}

Status Communicator::allToAll(const void *send, void *recv,
                              int64_t bytesPerPeer,
                              const CollectiveContext &context) {
  if (bytesPerPeer < 0)
    return ZERO_ERROR(kInvalidArgument, comm::describeCall(rank(), context) +
                                            ": " +
                                            std::to_string(bytesPerPeer) +
                                            " bytes per peer in an all-to-all");
  ZERO_RETURN_IF_ERROR(doAllToAll(send, recv, bytesPerPeer, context));
  // Every peer gets its own b bytes: those on other nodes cross, each way.
  int64_t across = 0;
  if (ranksPerNode_ > 0) {
    const int64_t node = worldRank(rank()) / ranksPerNode_;
    for (int p = 0; p < size(); ++p)
      across += worldRank(p) / ranksPerNode_ != node ? bytesPerPeer : 0;
  }
  return finish((size() - 1) * bytesPerPeer, across, across, context);
}

Status Communicator::doAllToAll(const void *, void *, int64_t,
                                const CollectiveContext &context) {
  return ZERO_ERROR(kInvalidArgument, comm::describeCall(rank(), context) +
                                          ": " + describe() +
                                          " has no all-to-all");
}

Status Communicator::doAllGatherBlocks(void *, const BlockGrid &, int64_t,
                                       const CollectiveContext &context) {
  return ZERO_ERROR(kInvalidArgument,
                    comm::describeCall(rank(), context) + ": " + describe() +
                        " cannot gather blocks in place");
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
  group.setInterNodeNsPerByte(nsPerInterNodeByte_);
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

void Communicator::setInterNodeNsPerByte(double nsPerByte) {
  nsPerInterNodeByte_ = nsPerByte;
}

Status checkInterNodeNsPerByte(double nsPerByte) {
  // At most a second per byte: B * X ns then fits int64 for any B below
  // 2^33 bytes per collective and rank.
  if (std::isfinite(nsPerByte) && nsPerByte >= 0 &&
      nsPerByte <= kMaxInterNodeNsPerByte)
    return Status::ok();
  std::ostringstream text;
  text << nsPerByte;
  return ZERO_ERROR(kInvalidArgument,
                    "the inter-node delay must be a number of nanoseconds "
                    "per byte in [0, 1e9], not " +
                        text.str());
}

Status Communicator::finish(int64_t bytes, int64_t sentAcross,
                            int64_t receivedAcross,
                            const CollectiveContext &context) {
  if (nsPerInterNodeByte_ > 0 && sentAcross > 0) {
    // The data has moved; the rank's link to the next node is still busy
    // for B * X ns. Slept to an absolute deadline in slices, so that a
    // cancelled step is not held up and oversleeping does not add up.
    // Saturated: a huge collective waits as long as int64 ns allow.
    const double wait = static_cast<double>(sentAcross) * nsPerInterNodeByte_;
    const int64_t ns =
        wait >= 9.2e18 ? INT64_C(9200000000000000000) : std::llround(wait);
    using Clock = std::chrono::steady_clock;
    const Clock::time_point end = Clock::now() + std::chrono::nanoseconds(ns);
    for (Clock::time_point now = Clock::now(); now < end; now = Clock::now()) {
      if (context.cancel && context.cancel->load())
        return ZERO_ERROR(kUnavailable,
                          comm::describeCall(rank(), context) +
                              " abandoned: another stream of this rank "
                              "failed");
      std::this_thread::sleep_for(
          std::min<Clock::duration>(end - now, std::chrono::milliseconds(10)));
    }
    delayInjectedNs_ += ns;
  }
  sent_ += bytes;
  received_ += bytes;
  ++calls_;
  sentInterNode_ += sentAcross;
  receivedInterNode_ += receivedAcross;
  return Status::ok();
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
