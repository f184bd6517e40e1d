//===- Communicator.h - collectives between the ranks -----------*- C++ -*-===//
//
// The data-parallel group as the executor sees it: the collectives of a
// schedule (one call per bucket) and the few the tools need (averaging the
// loss for printing, gathering traces and metrics to rank 0). Two
// implementations: MPI (Open MPI, any number of processes) and a
// single-process one for world size 1.
//
// The base class counts, for each collective that completes, the bytes a
// bandwidth-optimal ring algorithm moves for it, as the compiler's report
// does (docs/ScheduleFormat.md, end): with P the bytes of the padded flat
// bucket on N ranks, (N-1)*P/N sent and received by an all-gather or a
// reduce-scatter, twice that by an all-reduce (P rounded up to a multiple of
// N). Implementations only move data, so none can drift from the report.
// An all-to-all (the quantized reduce-scatter's hops) moves what it is
// given: (N-1)*b each way for b bytes per peer, of which b per peer on
// another node crosses the node boundary. A sub-communicator (split) counts
// the same over its own ranks.
//
// A simulated slow link between nodes (setInterNodeNsPerByte, opt-in): on
// one machine the "nodes" of a topology share the host, so bytes across
// them cost nothing. With X > 0 ns per byte, the rank that sent B bytes
// across the node boundary in a collective (the bytesSentInterNode that the
// collective adds) waits B * X ns after the implementation moved the data
// and before the call returns: each rank's link to the next node runs at
// 1/X GB/s. The wait is on the calling thread, the executor's comm stream
// during a step, so that it overlaps compute as a slow transfer would.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_COMMUNICATOR_H
#define ZERO_RUNTIME_COMMUNICATOR_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Status.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime {

/// What a call is, for messages ("all_gather of bucket at model.mlir:12:3
/// (step 3)"), and a flag that abandons it early (another stream failed).
struct CollectiveContext {
  std::string what;
  const std::atomic<bool> *cancel = nullptr;
  /// The device stream the collective is ordered on (Device::nativeStream):
  /// a cudaStream_t for the CUDA communicators, null for host buffers.
  void *stream = nullptr;
};

struct CommunicationCounters {
  int64_t bytesSent = 0;
  int64_t bytesReceived = 0;
  int64_t calls = 0;
  /// What of bytesSent and bytesReceived crossed to or from another node
  /// (Communicator::setRanksPerNode).
  int64_t bytesSentInterNode = 0;
  int64_t bytesReceivedInterNode = 0;
  /// The nanoseconds of delay the simulated inter-node link injected
  /// (Communicator::setInterNodeNsPerByte): round(B * X) per collective that
  /// sent B > 0 bytes across nodes.
  int64_t delayInjectedNs = 0;
};

/// Blocks of `blockBytes` bytes in a buffer, one at every byte offset
/// sum over d of i_d * strides[d], 0 <= i_d < counts[d] (no dimension: one
/// block at offset 0): what a rank holds before a hop of a hierarchical
/// all-gather.
struct BlockGrid {
  int64_t blockBytes = 0;
  std::vector<int64_t> counts;
  std::vector<int64_t> strides;

  int64_t bytes() const {
    int64_t total = blockBytes;
    for (int64_t count : counts)
      total *= count;
    return total;
  }
  /// The bytes from the first block's start to the last block's end (0
  /// when there is no block).
  int64_t extent() const {
    if (bytes() == 0)
      return 0;
    int64_t end = blockBytes;
    for (size_t d = 0; d < counts.size(); ++d)
      end += (counts[d] - 1) * strides[d];
    return end;
  }
  /// Every block's offset, the last dimension fastest: the order in which
  /// the device communicators move them.
  std::vector<int64_t> offsets() const {
    std::vector<int64_t> at = {0};
    for (size_t d = 0; d < counts.size(); ++d) {
      std::vector<int64_t> next;
      next.reserve(at.size() * static_cast<size_t>(counts[d]));
      for (int64_t base : at)
        for (int64_t i = 0; i < counts[d]; ++i)
          next.push_back(base + i * strides[d]);
      at = std::move(next);
    }
    return at;
  }
};

/// Collectives over `size()` ranks. The element types are f32, f64, bf16,
/// f16, i64, i32 and index; avg sums and then divides by size() in the
/// element type. Buffers may be the same for the in-place forms noted below;
/// otherwise they must not overlap. Calls are not thread-safe: one thread at
/// a time (the executor's comm stream during a step, the caller between
/// steps).
class Communicator {
public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "MPI (Open MPI v4.1.4)" or "self".
  virtual std::string describe() const = 0;

  /// recv[r * count, (r + 1) * count) = rank r's send[0, count). send may be
  /// recv + rank() * count (in place).
  Status allGather(const void *send, void *recv, int64_t count, DType type,
                   const CollectiveContext &context);
  /// In place in `buffer`: every rank p holds the blocks `held` at buffer +
  /// p * peerStride, and each gets every other's at the same place (one hop
  /// of a hierarchical all-gather; the blocks of different ranks must not
  /// overlap). Counted as a ring of held.bytes() per rank: (size() - 1) *
  /// held.bytes() sent and received.
  Status allGatherBlocks(void *buffer, const BlockGrid &held,
                         int64_t peerStride, const CollectiveContext &context);
  /// recv[0, count) = the reduction over ranks of send[rank() * count,
  /// (rank() + 1) * count). send may be recv (in place: send holds size() *
  /// count elements, the result lands at its start).
  Status reduceScatter(const void *send, void *recv, int64_t count, DType type,
                       ReduceOp op, const CollectiveContext &context);
  /// recv[0, count) = the reduction over ranks of send[0, count). send may
  /// be recv.
  Status allReduce(const void *send, void *recv, int64_t count, DType type,
                   ReduceOp op, const CollectiveContext &context);
  /// recv[p * b, (p + 1) * b) = rank p's send[rank() * b, (rank() + 1) *
  /// b), b = bytesPerPeer; send and recv must not overlap. Byte-exact, no
  /// element type. Counts (size() - 1) * b sent and received, and b for
  /// every peer on another node as inter-node bytes.
  Status allToAll(const void *send, void *recv, int64_t bytesPerPeer,
                  const CollectiveContext &context);
  virtual Status barrier(const CollectiveContext &context) = 0;
  /// Every rank's `bytes`, in rank order, on rank 0; an empty list elsewhere.
  /// Host memory, whatever the communicator's buffers are.
  virtual StatusOr<std::vector<std::string>>
  gatherBytes(const std::string &bytes, const CollectiveContext &context) = 0;
  /// Rank `root`'s `bytes` on every rank (each passes a string of the same
  /// length). Host memory.
  virtual Status broadcastBytes(std::string &bytes, int root,
                                const CollectiveContext &context) = 0;

  /// A communicator of the ranks that pass the same `color`, ranked in the
  /// order of their `key` (MPI_Comm_split). Collective: every rank makes the
  /// same calls in the same order. The result counts its own collectives,
  /// split between nodes by its members' world ranks under this
  /// communicator's setRanksPerNode; it must be destroyed before this one.
  StatusOr<std::unique_ptr<Communicator>>
  split(int color, int key, const CollectiveContext &context);

  /// Totals of the ring volume over all calls so far.
  CommunicationCounters counters() const {
    return {sent_.load(),
            received_.load(),
            calls_.load(),
            sentInterNode_.load(),
            receivedInterNode_.load(),
            delayInjectedNs_.load()};
  }

  /// The world's ranks are node-major in nodes of `ranks` (the schedule's
  /// topology.grid): the counters split what crosses between nodes. Each
  /// collective's volume is a ring over this communicator's ranks in order,
  /// so a rank's bytes sent cross iff its successor in the ring is on
  /// another node, and its bytes received iff its predecessor is
  /// (docs/ScheduleFormat.md, "Topology"); an all-to-all's cross for the
  /// peers on other nodes. Default: one node.
  void setRanksPerNode(int64_t ranks);

  /// Simulates a slow link between nodes: after each collective, this rank
  /// waits round(B * nsPerByte) ns, B the bytes it sent across nodes in that
  /// collective (what bytesSentInterNode counts for it; see the top of this
  /// file). 0 (the default) injects nothing. A split inherits the value.
  /// nsPerByte must be finite and >= 0 (checkInterNodeNsPerByte).
  void setInterNodeNsPerByte(double nsPerByte);
  double interNodeNsPerByte() const { return nsPerInterNodeByte_; }

protected:
  // The collectives as the implementation moves them; the public calls
  // above count their volume when these succeed.
  virtual Status doAllGather(const void *send, void *recv, int64_t count,
                             DType type, const CollectiveContext &context) = 0;
  virtual Status doReduceScatter(const void *send, void *recv, int64_t count,
                                 DType type, ReduceOp op,
                                 const CollectiveContext &context) = 0;
  virtual Status doAllReduce(const void *send, void *recv, int64_t count,
                             DType type, ReduceOp op,
                             const CollectiveContext &context) = 0;
  /// The all-to-all as the implementation moves it. Default: an error
  /// ("<describe()> has no all-to-all"), for communicators without one.
  virtual Status doAllToAll(const void *send, void *recv, int64_t bytesPerPeer,
                            const CollectiveContext &context);
  /// allGatherBlocks as the implementation moves it. Default: an error
  /// ("<describe()> cannot gather blocks in place"), for communicators
  /// without it.
  virtual Status doAllGatherBlocks(void *buffer, const BlockGrid &held,
                                   int64_t peerStride,
                                   const CollectiveContext &context);
  /// The new communicator of split(), whose counters split() sets up.
  virtual StatusOr<std::unique_ptr<Communicator>>
  doSplit(int color, int key, const CollectiveContext &context) = 0;

private:
  /// The world rank of this communicator's rank `r`.
  int64_t worldRank(int r) const {
    return worldRanks_.empty() ? r : worldRanks_[r];
  }
  /// Completes one ring collective that moved `bytes` each way.
  Status finish(int64_t bytes, const CollectiveContext &context) {
    return finish(bytes, bytesSentAcrossNodes(bytes),
                  bytesReceivedAcrossNodes(bytes), context);
  }
  /// Completes one collective that moved `bytes` each way, `sentAcross` and
  /// `receivedAcross` of them between nodes: the simulated inter-node delay
  /// of `sentAcross`, then the counters.
  Status finish(int64_t bytes, int64_t sentAcross, int64_t receivedAcross,
                const CollectiveContext &context);
  /// Of a collective's `bytes` each way, those this rank sent across nodes.
  int64_t bytesSentAcrossNodes(int64_t bytes) const {
    return sendsAcrossNodes_ ? bytes : 0;
  }
  /// Of a collective's `bytes` each way, those it received across nodes.
  int64_t bytesReceivedAcrossNodes(int64_t bytes) const {
    return receivesAcrossNodes_ ? bytes : 0;
  }

  std::atomic<int64_t> sent_{0};
  std::atomic<int64_t> received_{0};
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> sentInterNode_{0};
  std::atomic<int64_t> receivedInterNode_{0};
  std::atomic<int64_t> delayInjectedNs_{0};
  int64_t ranksPerNode_ = 0; // 0: one node
  double nsPerInterNodeByte_ = 0; // 0: no simulated delay
  /// The members' world ranks in rank order; empty for the world.
  std::vector<int64_t> worldRanks_;
  // Whether this rank's ring successor and predecessor are on other nodes.
  bool sendsAcrossNodes_ = false;
  bool receivesAcrossNodes_ = false;
};

/// The largest simulated inter-node delay: a second per byte.
inline constexpr double kMaxInterNodeNsPerByte = 1e9;

/// Ok when `nsPerByte` is a valid simulated inter-node delay, in [0,
/// kMaxInterNodeNsPerByte]; otherwise "the inter-node delay must be a number
/// of nanoseconds per byte in [0, 1e9], not V".
Status checkInterNodeNsPerByte(double nsPerByte);

/// World size 1: the collectives are copies (and avg a division by one).
std::unique_ptr<Communicator> createSelfCommunicator();

/// Whether this process was started by an MPI launcher (mpirun sets
/// OMPI_COMM_WORLD_SIZE, PMIx launchers PMIX_RANK).
bool isLaunchedByMpi();

struct MpiOptions {
  /// A collective that does not complete within this many seconds fails
  /// (a peer rank stopped) instead of hanging.
  double timeoutSeconds = 60;
};

/// Initializes MPI (MPI_Init_thread, MPI_THREAD_SERIALIZED) on
/// MPI_COMM_WORLD, with errors returned rather than fatal. The communicator
/// finalizes MPI when destroyed, unless abort() ended the job.
StatusOr<std::unique_ptr<Communicator>>
createMpiCommunicator(const MpiOptions &options);

/// How the ranks of a CUDA run exchange device buffers.
enum class DeviceCommunication {
  /// NCCL, one rank per GPU; the collectives are enqueued on the
  /// communicator's stream (CollectiveContext::stream).
  Nccl,
  /// MPI through pinned host buffers, so that several ranks may share one
  /// GPU (tests); the stream is synchronized around each call.
  StagedMpi,
};

struct DeviceCommunicatorOptions {
  DeviceCommunication kind = DeviceCommunication::Nccl;
  /// The GPU of this rank.
  int deviceOrdinal = 0;
  /// A collective that does not complete within this many seconds fails
  /// with the collective, rank and step named (CollectiveContext::what).
  double timeoutSeconds = 60;
  /// The largest buffer one collective moves, in bytes (StagedMpi sizes its
  /// pinned staging with it, once).
  int64_t maxCollectiveBytes = 0;
};

/// A communicator of device buffers for the CUDA backend. `host` is the
/// job's host communicator (MPI, or self for one rank): NCCL's unique id is
/// broadcast over it, and StagedMpi moves the staged bytes with it. `host`
/// must outlive the result. Fails with one line when this build has no CUDA
/// backend.
StatusOr<std::unique_ptr<Communicator>>
createDeviceCommunicator(Communicator &host,
                         const DeviceCommunicatorOptions &options);

/// Ends every rank of the job (MPI_Abort) after an error that leaves peers
/// waiting in a collective; a no-op when `communicator` is not MPI.
void abortJob(Communicator &communicator, int exitCode);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_COMMUNICATOR_H
