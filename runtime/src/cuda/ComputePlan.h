//===- ComputePlan.h - what runs each compute instruction -------*- C++ -*-===//
//
// The CUDA device runs a compute instruction alone (a generated kernel,
// cuBLAS, a copy) or in a group that is one prepared op:
//   - a run of host-space instructions, one CPU function (HostCompute.h);
//   - a run of optimizer updates with their 16-bit casts, one multi-tensor
//     launch (getOptimizerRunLength, isFusableOptimizerGroup);
//   - a row program, one kernel (RowFusion.h).
// The plan makes these choices once, when the schedule is loaded, from the
// schedule's checks (ops::CheckedSchedule, which it keeps): the device
// prepares the groups it names, and the cost model (CostModel.h) prices the
// same groups, so that the two cannot drift apart. No group crosses a
// loop's bounds (getGroupLimit), which the executor would run one by one.
//
// Plain C++ (no CUDA header): the cost model runs where there is no GPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_COMPUTEPLAN_H
#define ZERO_RUNTIME_CUDA_COMPUTEPLAN_H

#include "RowFusion.h"
#include "ops/Check.h"

#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace zero::runtime::cuda {

struct ComputePlanOptions {
  /// Row programs; ZERO_CUDA_FUSION=off runs their instructions one by one.
  bool fuseRows = true;
  /// Host-space instructions on the CPU; ZERO_CUDA_HOST_COMPUTE=gpu runs
  /// them as kernels.
  bool hostCompute = true;
};

/// The options the environment sets: ZERO_CUDA_FUSION (on, the default, or
/// off) and ZERO_CUDA_HOST_COMPUTE (cpu, the default, or gpu); another value
/// is an error naming the variable. The device and the cost model both
/// read them here.
StatusOr<ComputePlanOptions> getComputePlanOptions();

/// Compute instructions [first, first + count) of `stream`, run as one.
struct PlannedGroup {
  enum class Kind { Single, Host, Optimizers, Rows };
  Kind kind = Kind::Single;
  size_t stream = 0;
  size_t first = 0;
  size_t count = 1;
  /// Kind::Rows: the program.
  std::optional<RowProgram> rows;
};

class ComputePlan {
public:
  /// Checks every compute instruction of `schedule` (the first refusal is
  /// the error) and plans its groups. The schedule must outlive the plan.
  static StatusOr<ComputePlan> create(const Schedule &schedule,
                                      const ComputePlanOptions &options);
  // Its row programs point into its checks: moved, never copied.
  ComputePlan(ComputePlan &&) = default;
  ComputePlan &operator=(ComputePlan &&) = default;
  ComputePlan(const ComputePlan &) = delete;
  ComputePlan &operator=(const ComputePlan &) = delete;

  /// The group that starts at instruction `index` of `stream`; null for an
  /// instruction inside a group or not a compute instruction.
  const PlannedGroup *getGroup(size_t stream, size_t index) const;
  /// The group's instructions, in stream order.
  std::vector<const Instruction *>
  getInstructions(const PlannedGroup &group) const;
  /// The check of compute instruction `inst`; null for another instruction.
  const ops::CheckedOp *getCheck(const Instruction &inst) const {
    return checks_.find(inst);
  }
  /// Whether instruction `inst` runs on the CPU (a Host group's).
  bool runsOnHost(const Instruction &inst) const;

private:
  ComputePlan(const Schedule &schedule, const ComputePlanOptions &options,
              ops::CheckedSchedule checks)
      : schedule_(&schedule), options_(options), checks_(std::move(checks)) {}
  PlannedGroup planGroup(size_t stream, size_t first,
                         const ValueUses *uses) const;

  const Schedule *schedule_;
  ComputePlanOptions options_;
  ops::CheckedSchedule checks_;
  std::vector<PlannedGroup> groups_;
  /// [stream][index]: the group starting there, or -1.
  std::vector<std::vector<int64_t>> groupAt_;
};

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_COMPUTEPLAN_H
