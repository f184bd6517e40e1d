//===- HostCompute.h - host-space instructions on the CPU -------*- C++ -*-===//
//
// Under offload_optimizer the plan puts the optimizer's states and the
// instructions that update them (zero.adam, zero.sgd, Adam with its 16-bit
// cast, the norms and scales of the step) in the host arena, which the CUDA
// device allocates as pinned memory. Such an instruction runs on the CPU
// with the host backend's kernels (DeepSpeed's ZeRO-Offload runs its step
// with its CPU Adam), not as a GPU kernel reading host memory over PCIe:
// the device enqueues it on its stream with cudaLaunchHostFunc, so that it
// runs after the stream's earlier work and before its later work, events
// keep their meaning, and the issuing thread never waits for the GPU. A run
// of consecutive such instructions is one host function.
//
// Scalars live in device registers. Before the host function the scalars
// the run reads are copied into a pinned mirror of the register file, and
// after it the scalars it writes are copied back, on the same stream. A host
// function must not call CUDA: an error of the op is recorded here and
// Device::synchronize reports it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_HOSTCOMPUTE_H
#define ZERO_RUNTIME_CUDA_HOSTCOMPUTE_H

#include "CudaContext.h"

#include "HostKernels.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace zero::runtime::cuda {

/// Whether instructions `group` touch at least one tensor and only tensors
/// of the host arena: their operands, results, and the tensors their bodies
/// read from outside.
bool isHostSpaceGroup(const std::vector<const Instruction *> &group,
                      const Schedule &schedule);

/// The first error of a host op in a step. record runs on CUDA's host
/// function thread, check on the thread that synchronized the streams.
class HostErrors {
public:
  void record(const Status &status, int64_t step);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  /// The error with the executor's prefix for a failed op ("rank R: step
  /// S: "), and clears it; OK when there is none. The streams must be idle.
  Status check(int rank);

private:
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  Status status_;
  int64_t step_ = 0;
};

/// The host functions CUDA's thread is running. A device torn down after a
/// fatal GPU error cannot wait for them on its streams (their syncs return
/// the error at once; CUDA starts no more host functions in a failed
/// context, but does not stop one that runs): it closes the gate, which
/// waits for those inside (CPU work, which ends) before their memory is
/// freed.
class HostTaskGate {
public:
  /// Whether a host function may run: false once closed.
  bool enter();
  void leave();
  /// Lets no more in and waits for those inside.
  void close();
  bool closed() const;

private:
  mutable std::mutex mutex_;
  std::condition_variable left_;
  int running_ = 0;
  bool closed_ = false;
};

struct HostTask;

/// The CUDA device's host compute: the pinned register mirror, the host
/// kernels bound to the device's arenas (the host arena is pinned, so the
/// CPU addresses it directly), the error slot, and the state each host
/// function reaches.
/// Owned by the device, which synchronizes its streams before destroying
/// it: the prepared ops only point into it.
class HostCompute {
public:
  static StatusOr<std::unique_ptr<HostCompute>> create(const CudaContext &ctx,
                                                       MemoryTracker &tracker);
  ~HostCompute();
  HostCompute(const HostCompute &) = delete;
  HostCompute &operator=(const HostCompute &) = delete;

  /// Prepares `run`, consecutive instructions of the compute stream, as the
  /// host prepares them (Adam with its cast as one op) into one host
  /// function, enqueued on the compute stream between the copies of the
  /// scalars the run reads and writes.
  PreparedOpOr prepare(const std::vector<const Instruction *> &run);

  HostErrors &errors() { return errors_; }

private:
  HostCompute(const CudaContext &ctx, MemoryTracker &tracker, Scalar *mirror,
              int64_t mirrorBytes);

  const CudaContext &ctx_;
  MemoryTracker &tracker_;
  Scalar *mirror_;
  int64_t mirrorBytes_;
  std::unique_ptr<HostKernels> kernels_;
  HostErrors errors_;
  HostTaskGate gate_;
  std::vector<std::unique_ptr<HostTask>> tasks_;
};

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_HOSTCOMPUTE_H
