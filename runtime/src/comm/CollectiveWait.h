//===- CollectiveWait.h - a collective's deadline and errors ----*- C++ -*-===//
//
// What every communicator says when a collective fails, and the deadline
// that a thread polling a collective holds it to. MPI (host buffers) and the
// CUDA backend's NCCL and staged communicators word their errors alike, so
// that a stuck job reads the same whatever moved its bytes:
//
//   rank 0: reduce_scatter of bucket at gpt.mlir:615:20 (step 2) did not
//   complete within 5 s: a peer rank stopped
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_COMM_COLLECTIVEWAIT_H
#define ZERO_RUNTIME_COMM_COLLECTIVEWAIT_H

#include "zero/runtime/Communicator.h"

#include <chrono>
#include <string>

namespace zero::runtime::comm {

/// "rank R: <what>": how every error of a collective starts.
std::string describeCall(int rank, const CollectiveContext &context);

/// "rank R: <what> failed in <library>: <detail>", where library is "MPI",
/// "NCCL (ncclAllGather)" or "CUDA (cudaMemcpyAsync)".
Status collectiveFailure(int rank, const CollectiveContext &context,
                         const std::string &library, const std::string &detail);

/// The deadline of a collective that a thread polls until it completes.
class CollectiveDeadline {
public:
  explicit CollectiveDeadline(double seconds) : seconds_(seconds) { restart(); }
  /// Gives the call its whole time again, from now.
  void restart();
  bool passed() const { return Clock::now() > deadline_; }
  /// Ok while the call may still complete; otherwise the error that ends
  /// the wait: "rank R: <what> abandoned: another stream of this rank
  /// failed" when the context is cancelled, "rank R: <what> did not complete
  /// within T s: a peer rank stopped" past the deadline.
  Status check(int rank, const CollectiveContext &context) const;

private:
  using Clock = std::chrono::steady_clock;
  double seconds_;
  Clock::time_point deadline_;
};

} // namespace zero::runtime::comm

#endif // ZERO_RUNTIME_COMM_COLLECTIVEWAIT_H
