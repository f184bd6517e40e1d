//===- CommunicationVolume.h - bytes a rank step moves ----------*- C++ -*-===//
//
// The bytes the collectives and swaps of a rank step move, counted from the
// IR as the ZeRO paper counts them and as a ring moves them; the report
// prints them and each rank's measured counters must equal them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_COMMUNICATIONVOLUME_H
#define ZERO_ANALYSIS_COMMUNICATIONVOLUME_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace mlir {
namespace zero {

/// Bytes moved per step by this rank, as the ZeRO paper counts them: the full
/// (unsharded, unpadded) size of every tensor all-gathered or reduce-scattered,
/// twice the size of every tensor all-reduced.
struct CommunicationVolume {
  int64_t allGather = 0;
  int64_t reduceScatter = 0;
  int64_t allReduce = 0;
  /// Bytes one rank sends and receives with a bandwidth-optimal (ring)
  /// algorithm (docs/ScheduleFormat.md, "Collectives"): for a bucket of P
  /// padded bytes on N ranks, (N-1)*P/N for an all-gather or a
  /// reduce-scatter, twice that for an all-reduce (P rounded up to a multiple
  /// of N). Sent and received are equal.
  int64_t sent = 0;
  int64_t received = 0;
  /// `sent` by kind of collective.
  int64_t sentAllGather = 0;
  int64_t sentReduceScatter = 0;
  int64_t sentAllReduce = 0;
  /// Bytes the swaps move: onto and off the device, and read from and
  /// written to NVMe. NVMe traffic passes through host memory, so a swap
  /// between the device and NVMe counts in both of its pairs (as the
  /// runtime counts them, docs/ScheduleFormat.md, "Swaps").
  int64_t hostToDevice = 0;
  int64_t deviceToHost = 0;
  int64_t nvmeRead = 0;
  int64_t nvmeWrite = 0;

  int64_t getCollectiveTotal() const {
    return allGather + reduceScatter + allReduce;
  }
};

/// Which of a rank's ring bytes stay in its node and which cross to another
/// (docs/ScheduleFormat.md, "Topology"). The world's N ranks are node-major
/// in nodes of L, and every collective is a ring over the world in rank
/// order: rank r sends to r + 1 and receives from r - 1 (mod N). So with
/// more than one node, the last rank of each node sends all its bytes to
/// the next node and the first receives all of its from the previous one;
/// every other byte stays in the node.
struct NodeSplit {
  int64_t intraSent = 0;
  int64_t interSent = 0;
  int64_t intraReceived = 0;
  int64_t interReceived = 0;
};
NodeSplit splitRingBytes(int64_t ringBytes, int64_t worldSize,
                         int64_t ranksPerNode, int64_t localRank);

/// The communication volume of the collectives and swaps of `func`, whose
/// all-reduces run on `worldSize` ranks; an error on the function if it does
/// not fit int64.
FailureOr<CommunicationVolume> computeCommunicationVolume(func::FuncOp func,
                                                          int64_t worldSize);

/// `sum += a * b`, or clears `sum` if that overflows int64 or it already did.
void addCheckedProduct(std::optional<int64_t> &sum, int64_t a, int64_t b = 1);

} // namespace zero
} // namespace mlir

#endif // ZERO_ANALYSIS_COMMUNICATIONVOLUME_H
