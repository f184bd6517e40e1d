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
            "data: -1 rows read of 'x'");
}

} // namespace
