//===- Checked.h - the code generator's inputs, checked ---------*- C++ -*-===//
//
// The CUDA backend lowers what ops::checkComputeOp found (its ComputePlan
// checks every instruction once, at load). Tests that call the code
// generator and the row-program planner directly check first, here.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_CHECKED_H
#define ZERO_RUNTIME_TEST_CUDA_CHECKED_H

#include "cuda/Codegen.h"
#include "cuda/RowFusion.h"
#include "ops/Check.h"

#include "zero/runtime/Schedule.h"

#include <gtest/gtest.h>

#include <optional>

namespace zero::runtime::cudatest {

/// The loop nest of linalg.map, linalg.reduce or linalg.generic `inst`,
/// after its check; a refusal is the error.
inline StatusOr<cuda::LoopNest> buildCheckedLoopNest(const Instruction &inst,
                                                     const ValueTable &values) {
  StatusOr<ops::CheckedOp> checked =
      ops::checkComputeOp(ops::getInstructionContext(inst, "", values));
  if (!checked.isOk())
    return checked.status();
  return cuda::buildLoopNest(inst, values, checked->body);
}

/// What findRowProgram reads beside the schedule: its checks and its
/// values' uses. The programs found point into it: keep it while they are
/// used.
class RowSearch {
public:
  explicit RowSearch(const Schedule &schedule)
      : schedule_(schedule), uses_(schedule) {
    StatusOr<ops::CheckedSchedule> checks =
        ops::CheckedSchedule::create(schedule);
    EXPECT_TRUE(checks.isOk()) << checks.status().toString();
    if (checks.isOk())
      checks_ = std::move(*checks);
  }

  /// The row program that starts at instruction `first` of stream 0.
  std::optional<cuda::RowProgram> find(size_t first) const {
    return cuda::findRowProgram(schedule_, checks_, uses_, 0, first);
  }

private:
  const Schedule &schedule_;
  ops::CheckedSchedule checks_;
  cuda::ValueUses uses_;
};

} // namespace zero::runtime::cudatest

#endif // ZERO_RUNTIME_TEST_CUDA_CHECKED_H
