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
  /// The ranks per node (the grid's last size; the world size for one
  /// node) and, per local rank (the same on every node), what of each kind's
  /// ring bytes crosses to and from other nodes (getRingCrossing).
  int64_t ranksPerNode = 1;
  struct Crossing {
    int64_t allGather = 0, reduceScatter = 0, allReduce = 0;
    int64_t received = 0;
    int64_t getSent() const { return allGather + reduceScatter + allReduce; }
  };
  SmallVector<Crossing> interNodeByLocalRank;
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

/// Whether a rank's ring neighbours in a collective are on other nodes
/// (docs/ScheduleFormat.md, "Topology"). A collective over `axes` of the
/// process `grid` (all axes when empty; getProcessGrid) runs in each group
/// as a ring in the group's order: a rank sends its ring bytes to the next
/// rank of its group and receives them from the previous one. The ranks are
/// node-major, the grid's last axis the ranks of a node when it has two; on
/// a one-axis grid every rank is on one node.
struct RingCrossing {
  bool sendsAcross = false;
  bool receivesAcross = false;
};
RingCrossing getRingCrossing(ArrayRef<int64_t> grid, ArrayRef<int16_t> axes,
                             int64_t rank);

/// The communication volume of the collectives and swaps of `func`, whose
/// all-reduces run on `worldSize` ranks; an error on the function if it does
/// not fit int64.
FailureOr<CommunicationVolume> computeCommunicationVolume(func::FuncOp func,
                                                          int64_t worldSize);

/// `sum += a * b`, or clears `sum` if that overflows int64 or it already did.
void addCheckedProduct(std::optional<int64_t> &sum, int64_t a, int64_t b = 1);

/// How many times `op` runs per step: the trip count of the micro-step loop
/// around it, if any (the step has at most one).
int64_t getStepTripCount(Operation *op);

} // namespace zero
} // namespace mlir

#endif // ZERO_ANALYSIS_COMMUNICATIONVOLUME_H
