//===- ComputePlan.cpp - what runs each compute instruction ---------------===//

#include "ComputePlan.h"

#include "CudaOps.h"
#include "HostCompute.h"

#include "zero/runtime/Device.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

namespace zero::runtime::cuda {

namespace {

/// Environment switch `name`: true when it is `on` or unset, false when it
/// is `off`, an error otherwise.
StatusOr<bool> getSwitch(const char *name, const char *on, const char *off) {
  const char *set = std::getenv(name);
  if (!set)
    return true;
  const std::string value = set;
  if (value != on && value != off)
    return ZERO_ERROR(kInvalidArgument, std::string(name) + " is '" + value +
                                            "': it is '" + on +
                                            "' (the default) or '" + off + "'");
  return value == on;
}

} // namespace

StatusOr<ComputePlanOptions> getComputePlanOptions() {
  StatusOr<bool> fuseRows = getSwitch("ZERO_CUDA_FUSION", "on", "off");
  if (!fuseRows.isOk())
    return fuseRows.status();
  StatusOr<bool> hostCompute =
      getSwitch("ZERO_CUDA_HOST_COMPUTE", "cpu", "gpu");
  if (!hostCompute.isOk())
    return hostCompute.status();
  ComputePlanOptions options;
  options.fuseRows = *fuseRows;
  options.hostCompute = *hostCompute;
  return options;
}

StatusOr<ComputePlan> ComputePlan::create(const Schedule &schedule,
                                          const ComputePlanOptions &options) {
  StatusOr<ops::CheckedSchedule> checks =
      ops::CheckedSchedule::create(schedule);
  if (!checks.isOk())
    return checks.status();
  ComputePlan plan(schedule, options, std::move(*checks));
  std::unique_ptr<ValueUses> uses;
  if (options.fuseRows)
    uses = std::make_unique<ValueUses>(schedule);
  const std::vector<Stream> &streams = schedule.streams();
  plan.groupAt_.resize(streams.size());
  for (size_t s = 0; s < streams.size(); ++s) {
    const std::vector<Instruction> &list = streams[s].instructions;
    plan.groupAt_[s].assign(list.size(), -1);
    for (size_t i = 0; i < list.size();) {
      if (list[i].kind != Instruction::Kind::Compute) {
        ++i;
        continue;
      }
      PlannedGroup group = plan.planGroup(s, i, uses.get());
      plan.groupAt_[s][i] = static_cast<int64_t>(plan.groups_.size());
      i += group.count;
      plan.groups_.push_back(std::move(group));
    }
  }
  return plan;
}

PlannedGroup ComputePlan::planGroup(size_t stream, size_t first,
                                    const ValueUses *uses) const {
  const std::vector<Instruction> &list =
      schedule_->streams()[stream].instructions;
  const size_t limit = getGroupLimit(*schedule_, stream, first);
  PlannedGroup group;
  group.stream = stream;
  group.first = first;
  auto isHostCompute = [&](size_t i) {
    return list[i].kind == Instruction::Kind::Compute && runsOnHost(list[i]);
  };

  if (runsOnHost(list[first])) {
    group.kind = PlannedGroup::Kind::Host;
    while (first + group.count < limit && isHostCompute(first + group.count))
      ++group.count;
    return group;
  }

  // A kernel's group ends before an instruction the CPU runs.
  size_t optimizerRun = getOptimizerRunLength(list, first);
  for (size_t i = first + 1; i < first + optimizerRun; ++i)
    if (isHostCompute(i)) {
      optimizerRun = i - first;
      break;
    }
  if (optimizerRun > 1) {
    PlannedGroup run = group;
    run.count = optimizerRun;
    // One by one where a later step's result reuses an earlier one's
    // memory.
    if (first + optimizerRun <= limit &&
        isFusableOptimizerGroup(getInstructions(run), *schedule_)) {
      run.kind = PlannedGroup::Kind::Optimizers;
      return run;
    }
    return group;
  }

  if (!uses)
    return group;
  std::optional<RowProgram> rows =
      findRowProgram(*schedule_, checks_, *uses, stream, first);
  if (!rows || first + rows->steps.size() > limit ||
      std::any_of(rows->steps.begin(), rows->steps.end(),
                  [&](const RowStep &s) { return runsOnHost(*s.inst); }) ||
      !checkRowProgramMemory(*rows, *schedule_).empty())
    return group;
  group.kind = PlannedGroup::Kind::Rows;
  group.count = rows->steps.size();
  group.rows = std::move(rows);
  return group;
}

const PlannedGroup *ComputePlan::getGroup(size_t stream, size_t index) const {
  if (stream >= groupAt_.size() || index >= groupAt_[stream].size() ||
      groupAt_[stream][index] < 0)
    return nullptr;
  return &groups_[static_cast<size_t>(groupAt_[stream][index])];
}

std::vector<const Instruction *>
ComputePlan::getInstructions(const PlannedGroup &group) const {
  const std::vector<Instruction> &list =
      schedule_->streams()[group.stream].instructions;
  std::vector<const Instruction *> instructions;
  for (size_t i = group.first; i < group.first + group.count; ++i)
    instructions.push_back(&list[i]);
  return instructions;
}

bool ComputePlan::runsOnHost(const Instruction &inst) const {
  return options_.hostCompute && isHostSpaceGroup({&inst}, *schedule_);
}

} // namespace zero::runtime::cuda
