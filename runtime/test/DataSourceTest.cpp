//===- DataSourceTest.cpp - which rows each rank reads, resumed or not ----===//

#include "TestSchedules.h"

#include "zero/runtime/DataSource.h"

#include <gtest/gtest.h>

#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

/// makeAverageSchedule: data argument `x` of 4 rows (one float each), for
/// `worldSize` ranks.
Schedule makeSchedule(int worldSize) {
  StatusOr<Schedule> schedule =
      Schedule::parse(makeAverageSchedule(worldSize).dump(), "s.json");
  EXPECT_TRUE(schedule.isOk()) << schedule.status().toString();
  return std::move(*schedule);
}

/// What `source` writes into `x` at step `step`.
std::vector<float> fillX(const DataSource &source, const Schedule &schedule,
                         int64_t step) {
  const ArgumentInfo &x = schedule.arguments()[1];
  const ValueInfo &value = schedule.values().values[x.value];
  std::vector<float> data(static_cast<size_t>(value.numel));
  TensorRef tensor{data.data(), DType::F32, &value.shape, value.numel};
  Status status = source.fill(x, step, tensor);
  EXPECT_TRUE(status.isOk()) << status.toString();
  return data;
}

/// Rows [first, first + count) of the job, in order.
std::vector<float> readRows(int64_t first, int64_t count) {
  Schedule schedule = makeSchedule(1);
  StatusOr<DataSource> source = DataSource::create(schedule, {}, 0, 1);
  EXPECT_TRUE(source.isOk());
  std::vector<float> rows;
  for (int64_t step = first / 4; step * 4 < first + count; ++step)
    for (float value : fillX(*source, schedule, step))
      rows.push_back(value);
  return std::vector<float>(rows.begin() + first % 4,
                            rows.begin() + first % 4 + count);
}

std::vector<float> concat(std::vector<float> a, const std::vector<float> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(DataSource, RanksReadConsecutiveRowsOfTheJob) {
  // Two ranks of 4 rows: step 1 is rows 8-11 (rank 0) and 12-15 (rank 1).
  Schedule schedule = makeSchedule(2);
  StatusOr<DataSource> rank0 = DataSource::create(schedule, {}, 0, 2);
  StatusOr<DataSource> rank1 = DataSource::create(schedule, {}, 1, 2);
  ASSERT_TRUE(rank0.isOk() && rank1.isOk());
  EXPECT_EQ(fillX(*rank0, schedule, 1), readRows(8, 4));
  EXPECT_EQ(fillX(*rank1, schedule, 1), readRows(12, 4));
  EXPECT_EQ(rank0->rowsRead(3), (std::map<std::string, int64_t>{{"x", 24}}));
  EXPECT_EQ(rank1->rowsRead(3), rank0->rowsRead(3));
}

TEST(DataSource, ResumedAtAnotherWorldSize) {
  // Saved after 2 steps of 2 ranks x 4 rows: 16 rows read. Resumed on one
  // rank, step 2 reads rows 16-19 and step 3 rows 20-23: no row skipped or
  // read twice.
  Schedule saved = makeSchedule(2);
  StatusOr<DataSource> before = DataSource::create(saved, {}, 1, 2);
  ASSERT_TRUE(before.isOk());
  std::map<std::string, int64_t> rows = before->rowsRead(2);
  EXPECT_EQ(rows, (std::map<std::string, int64_t>{{"x", 16}}));

  Schedule schedule = makeSchedule(1);
  StatusOr<DataSource> resumed = DataSource::create(schedule, {}, 0, 1);
  ASSERT_TRUE(resumed.isOk());
  ASSERT_TRUE(resumed->resumeAt(2, rows).isOk());
  EXPECT_EQ(concat(fillX(*resumed, schedule, 2), fillX(*resumed, schedule, 3)),
            readRows(16, 8));
  EXPECT_EQ(resumed->rowsRead(5), (std::map<std::string, int64_t>{{"x", 28}}));
  // By the step's index alone, step 2 of one rank would read rows 8-11.
  StatusOr<DataSource> fresh = DataSource::create(schedule, {}, 0, 1);
  ASSERT_TRUE(fresh.isOk());
  EXPECT_EQ(fillX(*fresh, schedule, 2), readRows(8, 4));
}

/// makeAverageSchedule with `tokens` and `targets` of shape [G, B, 4] (ids
/// below 50) besides `x`.
Schedule makeTokenSchedule(int64_t microSteps, int64_t batch, int worldSize) {
  json s = makeAverageSchedule(worldSize);
  int64_t bytes = microSteps * batch * 4 * 4;
  s["memory"]["arenas"]["device"] = 256 + 2 * 256;
  s["buffers"].push_back(makeBuffer(4, "tokens", "input", 256, bytes, 0, 5));
  s["buffers"].push_back(makeBuffer(5, "targets", "input", 512, bytes, 0, 5));
  s["values"].push_back(
      makeTensor(6, "%tokens", {microSteps, batch, 4}, 4, "i32"));
  s["values"].push_back(
      makeTensor(7, "%targets", {microSteps, batch, 4}, 5, "i32"));
  for (const char *name : {"tokens", "targets"})
    s["arguments"].push_back({{"value", std::string(name) == "tokens" ? 6 : 7},
                              {"kind", "data"},
                              {"name", name},
                              {"bound", 50}});
  StatusOr<Schedule> schedule = Schedule::parse(s.dump(), "s.json");
  EXPECT_TRUE(schedule.isOk()) << schedule.status().toString();
  return std::move(*schedule);
}

/// The windows `source` writes into `tokens` at step `step`, one per row.
std::vector<std::vector<int32_t>>
fillTokens(const DataSource &source, const Schedule &schedule, int64_t step) {
  const ArgumentInfo &tokens = schedule.arguments()[2];
  const ValueInfo &value = schedule.values().values[tokens.value];
  std::vector<int32_t> data(static_cast<size_t>(value.numel));
  TensorRef tensor{data.data(), DType::I32, &value.shape, value.numel};
  EXPECT_TRUE(source.fill(tokens, step, tensor).isOk());
  std::vector<std::vector<int32_t>> rows;
  for (size_t i = 0; i < data.size(); i += 4)
    rows.emplace_back(data.begin() + i, data.begin() + i + 4);
  return rows;
}

TEST(DataSource, TokenWindowsOfMicroStepsAndRanks) {
  // One rank with 2 micro-steps of 2 rows reads, at each step, the windows
  // that two ranks of 2 micro-steps of 1 row read together, in rank order:
  // the job's rows do not depend on how they are cut.
  Schedule one = makeTokenSchedule(2, 2, 1);
  Schedule two = makeTokenSchedule(2, 1, 2);
  StatusOr<DataSource> whole = DataSource::create(one, {}, 0, 1);
  StatusOr<DataSource> rank0 = DataSource::create(two, {}, 0, 2);
  StatusOr<DataSource> rank1 = DataSource::create(two, {}, 1, 2);
  ASSERT_TRUE(whole.isOk() && rank0.isOk() && rank1.isOk());
  for (int64_t step = 0; step < 3; ++step) {
    std::vector<std::vector<int32_t>> joined = fillTokens(*rank0, two, step);
    for (const std::vector<int32_t> &row : fillTokens(*rank1, two, step))
      joined.push_back(row);
    EXPECT_EQ(fillTokens(*whole, one, step), joined) << "step " << step;
  }
  // Resumed on one rank after a step of the two: step 1 reads what they
  // would have.
  std::map<std::string, int64_t> rows = rank0->rowsRead(1);
  EXPECT_EQ(rows, (std::map<std::string, int64_t>{
                      {"targets", 4}, {"tokens", 4}, {"x", 8}}));
  StatusOr<DataSource> resumed = DataSource::create(one, {}, 0, 1);
  ASSERT_TRUE(resumed.isOk());
  ASSERT_TRUE(resumed->resumeAt(1, rows).isOk());
  EXPECT_EQ(fillTokens(*resumed, one, 1), fillTokens(*whole, one, 1));
  // A single row beyond 2^53 is refused, not wrapped.
  ASSERT_TRUE(resumed
                  ->resumeAt(1, {{"targets", kMaxDataRows},
                                 {"tokens", kMaxDataRows},
                                 {"x", 0}})
                  .isOk());
  const ArgumentInfo &tokens = one.arguments()[2];
  const ValueInfo &value = one.values().values[tokens.value];
  std::vector<int32_t> data(static_cast<size_t>(value.numel));
  TensorRef tensor{data.data(), DType::I32, &value.shape, value.numel};
  EXPECT_EQ(resumed->fill(tokens, 2, tensor).message(),
            "data: step 2 of 'tokens' reads beyond row 2^53");
}

TEST(DataSource, ResumeNeedsEveryDataArgument) {
  Schedule schedule = makeSchedule(1);
  StatusOr<DataSource> source = DataSource::create(schedule, {}, 0, 1);
  ASSERT_TRUE(source.isOk());
  EXPECT_EQ(source->resumeAt(2, {}).message(),
            "data: no rows read of data argument 'x'");
  EXPECT_EQ(source->resumeAt(2, {{"x", 4}, {"y", 4}}).message(),
            "data: rows of 'y' were read, but the schedule has no data "
            "argument of that name");
  EXPECT_EQ(source->resumeAt(2, {{"x", -1}}).message(),
            "data: -1 rows read of 'x'; expected 0 to 2^53");
}

} // namespace
