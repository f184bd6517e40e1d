//===- ScheduleSizesTest.cpp - sizes in a schedule never wrap -------------===//
//
// Element counts, byte sizes, offsets and arenas that overflow int64 (or
// pass the runtime's 2^50 bound) are refused at their JSON path, never
// wrapped into a small size that passes the other checks.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Schedule.h"
#include "zero/runtime/Sizes.h"

#include "TestSchedules.h"

#include <gtest/gtest.h>

#include <limits>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t k2To62 = int64_t(1) << 62;

TEST(Sizes, CheckedArithmetic) {
  EXPECT_EQ(checkedMul(int64_t(1) << 31, int64_t(1) << 31), int64_t(1) << 62);
  EXPECT_EQ(checkedMul(int64_t(1) << 32, int64_t(1) << 31), std::nullopt);
  EXPECT_EQ(checkedAdd(kInt64Max - 1, 1), kInt64Max);
  EXPECT_EQ(checkedAdd(kInt64Max, 1), std::nullopt);
  EXPECT_EQ(getShapeNumel({}), 1);
  EXPECT_EQ(getShapeNumel({int64_t(1) << 25, int64_t(1) << 25}),
            kMaxScheduleSize);
  EXPECT_EQ(getShapeNumel({int64_t(1) << 25, (int64_t(1) << 25) + 1}),
            std::nullopt);
  // 10^22 wraps int64 to 1864712049423024128; it is refused, not wrapped.
  EXPECT_EQ(getShapeNumel({100000000000, 100000000000}), std::nullopt);
  EXPECT_EQ(getShapeNumel({0, kInt64Max, kInt64Max}), 0);
}

TEST(Sizes, RefusesAShapeWhoseProductOverflows) {
  json s = makeAverageSchedule();
  s["values"][1]["shape"] = {100000000000, 100000000000};
  EXPECT_SCHEDULE_ERROR(
      s, "values[1].shape: [100000000000, 100000000000] has more "
         "than 2^50 elements");
  s = makeAverageSchedule();
  s["values"][1]["shape"] = {int64_t(1) << 25, (int64_t(1) << 25) + 1};
  EXPECT_SCHEDULE_ERROR(
      s, "values[1].shape: [33554432, 33554433] has more than 2^50 "
         "elements");
  s = makeAverageSchedule();
  s["arguments"][0]["layout"]["shape"] = {100000000000, 100000000000};
  EXPECT_SCHEDULE_ERROR(
      s, "arguments[0].layout: shape has more than 2^50 elements");
}

TEST(Sizes, RefusesABufferWhoseEndOverflows) {
  json s = makeAverageSchedule();
  s["buffers"][3]["offset"] = k2To62;
  s["buffers"][3]["bytes"] = k2To62;
  EXPECT_SCHEDULE_ERROR(
      s, "buffers[3]: buffer 3 'loss': offset 4611686018427387904 + "
         "bytes 4611686018427387904 overflows int64");
  // Without overflow, past the arena: the end is printed as it is.
  s = makeAverageSchedule();
  s["buffers"][3]["offset"] = k2To62;
  EXPECT_SCHEDULE_ERROR(
      s, "buffers[3]: buffer 3 'loss' (bytes [4611686018427387904, "
         "4611686018427387908)) lies outside the device arena of "
         "256 bytes");
}

TEST(Sizes, RefusesAStagingRegionWhoseEndOverflows) {
  json s = makeBucketSchedule(2);
  s["instructions"]["comm"][0]["staging"]["offset"] = k2To62;
  s["instructions"]["comm"][0]["staging"]["bytes"] = k2To62;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].staging: offset 4611686018427387904 "
         "+ bytes 4611686018427387904 overflows int64");
}

TEST(Sizes, RefusesAnArenaPastTheBound) {
  json s = makeAverageSchedule();
  s["memory"]["arenas"]["device"] = kInt64Max;
  EXPECT_SCHEDULE_ERROR(
      s, "memory.arenas.device: 9223372036854775807 is out of range "
         "[0, 1125899906842624]");
  s = makeAverageSchedule();
  s["memory"]["arenas"]["host"] = kMaxScheduleSize + 1;
  EXPECT_SCHEDULE_ERROR(s,
                        "memory.arenas.host: 1125899906842625 is out of range "
                        "[0, 1125899906842624]");
}

} // namespace
