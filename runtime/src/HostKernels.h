//===- HostKernels.h - the host backend's services to devices -*- C++ -*-===//
//
// The host backend's service to the other devices, through this header so
// that the devices stay peers that never include each other
// (docs/Runtime.md, "Ops: one meaning per op, for every backend"): host
// kernels over another device's memory. Under offload_optimizer the CUDA
// device runs the instructions of its pinned host arena on the CPU, as
// DeepSpeed's ZeRO-Offload runs its CPU Adam. The host backend (host/)
// defines them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOSTKERNELS_H
#define ZERO_RUNTIME_HOSTKERNELS_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace zero::runtime {

/// Compute instructions prepared by HostKernels::prepare.
class HostKernelRun {
public:
  virtual ~HostKernelRun() = default;
  /// Runs the instructions in order on the calling thread, and stops at the
  /// first error (one of data: an index outside its tensor, a step below 1).
  virtual Status run() = 0;
};

/// The host kernels bound to a rank's memory that a device owns: the arenas
/// at their bases, tensors at the plan's offsets, and a register file.
class HostKernels {
public:
  /// `bases`: each space's arena (null when empty: its tensors have no
  /// elements); `registers`: one Scalar per value id. Both stay the
  /// caller's and must outlive the object and every run it prepares.
  static std::unique_ptr<HostKernels>
  create(const Schedule &schedule,
         const std::array<std::byte *, kNumMemorySpaces> &bases,
         Scalar *registers, int rank, int worldSize);
  virtual ~HostKernels() = default;

  /// Prepares `run`, consecutive compute instructions of one stream, grouped
  /// as the host backend groups them (zero.adam with the 16-bit cast of its
  /// parameter as one pass over memory); each is checked by
  /// ops::checkComputeOp.
  virtual StatusOr<std::unique_ptr<HostKernelRun>>
  prepare(const std::vector<const Instruction *> &run) = 0;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HOSTKERNELS_H
