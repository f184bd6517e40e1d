//===- ComputePlanTest.cpp - what runs each compute instruction -----------===//
//
// The groups the CUDA device prepares and the cost model prices
// (ComputePlan.h): a row program, a multi-tensor optimizer run, a run on the
// CPU, and each of them off where its switch or its memory says so; and a
// schedule refused at load exactly as the host refuses it.
//
//===----------------------------------------------------------------------===//

#include "cuda/ComputePlan.h"

#include "../TestSchedules.h"
#include "OffloadedStep.h"
#include "OptimizerGroups.h"
#include "RowPrograms.h"

#include "zero/runtime/Schedule.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using json = nlohmann::json;

namespace {

Schedule parse(const std::string &text, const std::string &name) {
  StatusOr<Schedule> schedule = Schedule::parse(text, name);
  EXPECT_TRUE(schedule.isOk()) << schedule.status().toString();
  return schedule.isOk() ? std::move(*schedule) : Schedule();
}

StatusOr<ComputePlan> plan(const Schedule &schedule,
                           const ComputePlanOptions &options = {}) {
  return ComputePlan::create(schedule, options);
}

/// The plan as text: "<kind> <first>+<count>" per group, in order; or its
/// error.
std::string describe(const StatusOr<ComputePlan> &planned,
                     const Schedule &schedule) {
  if (!planned.isOk())
    return planned.status().toString();
  const ComputePlan &plan = *planned;
  std::string text;
  const size_t size = schedule.streams()[0].instructions.size();
  for (size_t i = 0; i < size; ++i) {
    const PlannedGroup *group = plan.getGroup(0, i);
    if (!group)
      continue;
    static const char *const kNames[] = {"single", "host", "optimizers",
                                         "rows"};
    text += std::string(text.empty() ? "" : ", ") +
            kNames[static_cast<int>(group->kind)] + " " +
            std::to_string(group->first) + "+" + std::to_string(group->count);
  }
  return text;
}

TEST(ComputePlanTest, SoftmaxIsOneRowProgram) {
  zero::runtime::cudatest::RowProgramSchedule s =
      zero::runtime::cudatest::makeSoftmax(DType::F32, {3, 5}, 200);
  const Schedule schedule = parse(s.b.text(), "rows.json");
  const StatusOr<ComputePlan> rows = plan(schedule);
  ASSERT_TRUE(rows.isOk()) << rows.status().toString();
  const PlannedGroup *group = rows->getGroup(0, 0);
  ASSERT_TRUE(group);
  EXPECT_EQ(group->kind, PlannedGroup::Kind::Rows);
  EXPECT_EQ(group->count, s.programLength);
  ASSERT_TRUE(group->rows);
  EXPECT_EQ(group->rows->steps.size(), s.programLength);
  // Each step carries its instruction's check.
  for (const RowStep &step : group->rows->steps)
    EXPECT_EQ(step.checked, rows->getCheck(*step.inst));
  EXPECT_EQ(describe(rows, schedule),
            "rows 0+" + std::to_string(s.programLength) + ", single " +
                std::to_string(s.programLength) + "+1");

  // ZERO_CUDA_FUSION=off: one by one.
  ComputePlanOptions off;
  off.fuseRows = false;
  const StatusOr<ComputePlan> unfused = plan(schedule, off);
  std::string ones;
  for (size_t i = 0; i <= s.programLength; ++i)
    ones += (i ? ", single " : "single ") + std::to_string(i) + "+1";
  EXPECT_EQ(describe(unfused, schedule), ones);
}

TEST(ComputePlanTest, AnOptimizerRunIsOneLaunchWhereItsMemoryAllows) {
  for (bool reuseGrads : {false, true}) {
    zero::runtime::cudatest::GroupSchedule g =
        zero::runtime::cudatest::optimizerGroup(
            true, zero::runtime::cudatest::sameMembers(), reuseGrads);
    const Schedule schedule = parse(g.b.text(), "adam.json");
    // Two tensor.extracts (the step and the lr), then three zero.adam.
    EXPECT_EQ(describe(plan(schedule), schedule),
              reuseGrads ? "single 0+1, single 1+1, single 2+1, single 3+1, "
                           "single 4+1"
                         : "single 0+1, single 1+1, optimizers 2+3")
        << "reuseGrads " << reuseGrads;
  }
}

TEST(ComputePlanTest, TheHostArenaRunsOnTheCpuAsOneRun) {
  zero::runtime::cudatest::OffloadedStep step =
      zero::runtime::cudatest::makeOffloadedStep(7);
  const Schedule schedule = parse(step.b.text(), "offload.json");
  // Instructions 4-11 touch only host tensors (OffloadedStep.h).
  const StatusOr<ComputePlan> onCpu = plan(schedule);
  EXPECT_EQ(describe(onCpu, schedule),
            "single 0+1, single 1+1, single 2+1, single 3+1, host 4+8, "
            "single 12+1, single 13+1");
  const std::vector<Instruction> &list = schedule.streams()[0].instructions;
  ASSERT_TRUE(onCpu.isOk());
  EXPECT_TRUE(onCpu->runsOnHost(list[4]));
  EXPECT_FALSE(onCpu->runsOnHost(list[12]));

  // ZERO_CUDA_HOST_COMPUTE=gpu: kernels, and zero.adam with its cast one
  // launch.
  ComputePlanOptions gpu;
  gpu.hostCompute = false;
  const StatusOr<ComputePlan> onGpu = plan(schedule, gpu);
  ASSERT_TRUE(onGpu.isOk());
  EXPECT_FALSE(onGpu->runsOnHost(list[4]));
  EXPECT_EQ(describe(onGpu, schedule),
            "single 0+1, single 1+1, single 2+1, single 3+1, single 4+1, "
            "optimizers 5+2, single 7+1, single 8+1, single 9+1, "
            "single 10+1, single 11+1, single 12+1, single 13+1");
}

TEST(ComputePlanTest, NoGroupCrossesTheLoopsBounds) {
  // TestSchedules.h's loop with every buffer in the host arena: the fill
  // before the loop, the add in its body and the copy after it are
  // host-space compute instructions (the loop's slice is a copy of the
  // executor's). The add and the copy are consecutive but on either side of
  // the body's end: two CPU runs (the executor would run a group that
  // crosses a bound instruction by instruction).
  json text = zero::runtime::test::makeLoopSchedule(3, 4, false);
  for (json &buffer : text["buffers"])
    buffer["space"] = "host";
  text["memory"]["arenas"] = {{"device", 0},
                              {"host", text["memory"]["arenas"]["device"]}};
  const Schedule schedule = parse(text.dump(), "loop.json");
  const std::vector<Instruction> &list = schedule.streams()[0].instructions;
  ASSERT_EQ(list.size(), 5u);
  ASSERT_TRUE(schedule.loop());
  EXPECT_EQ(schedule.loop()->bodyBegin[0], 2u);
  EXPECT_EQ(schedule.loop()->bodyEnd[0], 4u);
  EXPECT_EQ(describe(plan(schedule), schedule),
            "single 0+1, host 1+1, host 3+1, host 4+1");
}

TEST(ComputePlanTest, RefusesWhatTheHostRefuses) {
  zero::runtime::cudatest::RowProgramSchedule s =
      zero::runtime::cudatest::makeSoftmax(DType::F32, {3, 5}, 200);
  json text = json::parse(s.b.text());
  // The first linalg.fill fills its scalar into the tensor: swapped.
  json *fill = nullptr;
  size_t index = 0;
  for (json &inst : text["instructions"]["compute"]) {
    if (inst["op"] == "linalg.fill") {
      fill = &inst;
      break;
    }
    ++index;
  }
  ASSERT_TRUE(fill);
  json operands = (*fill)["operands"];
  (*fill)["operands"] = {operands[1], operands[0]};
  const Schedule schedule = parse(text.dump(), "rows.json");
  const Instruction &bad = schedule.streams()[0].instructions[index];
  StatusOr<ops::CheckedOp> host = ops::checkComputeOp(
      ops::getInstructionContext(bad, schedule.name(), schedule.values()));
  ASSERT_FALSE(host.isOk());
  EXPECT_EQ(host.status().message().rfind("rows.json: ", 0), 0u)
      << host.status().message();

  StatusOr<ComputePlan> refused = plan(schedule);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), host.status().code());
  EXPECT_EQ(refused.status().message(), host.status().message());
}

} // namespace
