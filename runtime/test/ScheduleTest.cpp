//===- ScheduleTest.cpp - validation of schedules -------------------------===//
//
// One test per error message of Schedule::parse and checkLaunch, each on a
// copy of a valid hand-written schedule with one field broken.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Schedule.h"

#include "TestSchedules.h"

#include <gtest/gtest.h>

#include <functional>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

TEST(Schedule, AcceptsTheHandWrittenSchedules) {
  StatusOr<Schedule> average =
      Schedule::parse(makeAverageSchedule().dump(), "a.json");
  ASSERT_TRUE(average.isOk()) << average.status().toString();
  EXPECT_EQ(average->worldSize(), 1);
  EXPECT_EQ(average->streams().size(), 2u);
  EXPECT_EQ(average->streams()[0].name, "compute");
  EXPECT_EQ(average->lossValue(), 4);
  EXPECT_EQ(average->arguments()[0].layout.numel, 4);
  for (int ranks : {1, 2, 3}) {
    StatusOr<Schedule> bucket =
        Schedule::parse(makeBucketSchedule(ranks).dump(), "b.json");
    ASSERT_TRUE(bucket.isOk()) << bucket.status().toString();
    const Instruction &gather = bucket->streams()[1].instructions[0];
    EXPECT_EQ(gather.kind, Instruction::Kind::AllGather);
    EXPECT_EQ(gather.bucketNumel,
              (5 + ranks - 1) / ranks + (3 + ranks - 1) / ranks);
  }
}

TEST(Schedule, DecodesTheCheckpointSettings) {
  StatusOr<Schedule> plain =
      Schedule::parse(makeAverageSchedule().dump(), "s.json");
  ASSERT_TRUE(plain.isOk());
  EXPECT_TRUE(plain->loadFromFp32Weights());
  json s = makeAverageSchedule();
  s["checkpoint"] = {{"load_from_fp32_weights", false}};
  StatusOr<Schedule> lossy = Schedule::parse(s.dump(), "s.json");
  ASSERT_TRUE(lossy.isOk()) << lossy.status().toString();
  EXPECT_FALSE(lossy->loadFromFp32Weights());
  s["checkpoint"] = {{"load_from_fp32_weights", 0}};
  EXPECT_SCHEDULE_ERROR(s, "checkpoint.load_from_fp32_weights: expected true "
                           "or false, got 0");
  s["checkpoint"] = {{"load_from_fp32_weights", false}, {"load_from", 1}};
  EXPECT_SCHEDULE_ERROR(s, "checkpoint: unknown key 'load_from'");
  s["checkpoint"] = true;
  EXPECT_SCHEDULE_ERROR(s, "checkpoint: expected an object");
}

// The decoder makes typed instructions: the op's table entry, its fields,
// and one PartitionLayout per layout (a parameter's padded as the compiler
// pads it: ScheduleHostile.AParameterLayoutIsPaddedAsTheCompilerPadsIt).
TEST(Schedule, DecodesTypedInstructions) {
  json s = makeAverageSchedule(3);
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "a.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  const PartitionLayout &layout = parsed->arguments()[0].layout;
  EXPECT_EQ(layout.paddedNumel, 6);
  EXPECT_EQ(layout.shardNumel, 2);
  EXPECT_EQ(layout.ownedRange(2), (ElementRange{4, 4}));
  const Instruction &fill = parsed->streams()[0].instructions[1];
  EXPECT_EQ(fill.code(), OpCode::Fill);
  EXPECT_EQ(fill.op, "linalg.fill");
  EXPECT_EQ(fill.operands, (std::vector<int64_t>{2, 3}));
  const Instruction &constant = parsed->streams()[0].instructions[0];
  ASSERT_EQ(constant.code(), OpCode::Constant);
  const ConstantValue &value = constant.fields.getConstant(Field::Value);
  EXPECT_EQ(value.form, ConstantValue::Form::Number);
  EXPECT_EQ(value.elements[0].f, 3.0);
}

TEST(Schedule, RefusesWhatIsNotJson) {
  StatusOr<Schedule> parsed = Schedule::parse("{\"format\": ", "s.json");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().message().rfind("s.json: not valid JSON: ", 0), 0u);
}

TEST(Schedule, RefusesAMissingFile) {
  StatusOr<Schedule> loaded = Schedule::load("/nonexistent/s.json");
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().message(),
            "/nonexistent/s.json: cannot open: No such file or directory");
}

TEST(Schedule, RefusesAnotherFormatOrVersion) {
  json s = makeAverageSchedule();
  s["format"] = "zero-plan";
  EXPECT_SCHEDULE_ERROR(s, "format: 'zero-plan' is not 'zero-schedule'");
  s = makeAverageSchedule();
  s["version"] = 4;
  EXPECT_SCHEDULE_ERROR(
      s, "version: version 4 is not supported: this runtime reads "
         "versions 1 to 3");
  s = makeAverageSchedule();
  s.erase("format");
  EXPECT_SCHEDULE_ERROR(s, "format: missing: not a zero schedule");
}

TEST(Schedule, RefusesUnknownKeysAtEveryLevel) {
  json s = makeAverageSchedule();
  s["worldsize"] = 2;
  EXPECT_SCHEDULE_ERROR(s, "(top level): unknown key 'worldsize'");
  s = makeAverageSchedule();
  s["memory"]["arenas"]["gpu"] = 0;
  EXPECT_SCHEDULE_ERROR(s, "memory.arenas: unknown key 'gpu'");
  s = makeAverageSchedule();
  s["buffers"][1]["lives"] = {0, 1};
  EXPECT_SCHEDULE_ERROR(s, "buffers[1]: unknown key 'lives'");
  s = makeAverageSchedule();
  s["values"][2]["shape"] = json::array();
  EXPECT_SCHEDULE_ERROR(s,
                        "values[2].shape: a scalar has no shape: it lives in a "
                        "register");
  s = makeAverageSchedule();
  s["arguments"][0]["layout"]["numel"] = 4;
  EXPECT_SCHEDULE_ERROR(s, "arguments[0].layout: unknown key 'numel'");
  s = makeAverageSchedule();
  s["instructions"]["comm"][1]["bucket"] = 0;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[1]: unknown key 'bucket'");
  s = makeAverageSchedule();
  s["instructions"]["compute"][2]["value"] = 0;
  EXPECT_SCHEDULE_ERROR(s, "instructions.compute[2]: unknown key 'value'");
}

TEST(Schedule, RefusesUnknownOps) {
  json s = makeAverageSchedule();
  s["instructions"]["comm"][1]["op"] = "broadcast";
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[1].op: 'broadcast' on stream 'comm' "
         "(expected all_gather, reduce_scatter, all_reduce, record "
         "or wait)");
  s = makeAverageSchedule();
  s["instructions"]["compute"].push_back(
      s["instructions"]["comm"][1]); // a collective on compute
  EXPECT_SCHEDULE_ERROR(s,
                        "instructions.compute[4]: collective 'all_reduce' on "
                        "stream 'compute': collectives run on stream 'comm'");
  // An unknown compute op is named by prepareComputeOp.
  s = makeAverageSchedule();
  s["instructions"]["compute"][1]["op"] = "linalg.softmax";
  std::string message = errorOf(s);
  EXPECT_NE(message.find("instructions.compute[1]"), std::string::npos)
      << message;
  EXPECT_NE(message.find("linalg.softmax"), std::string::npos) << message;
}

TEST(Schedule, RefusesUndefinedValues) {
  json s = makeAverageSchedule();
  s["instructions"]["comm"][1]["operands"][0] = 4711;
  EXPECT_SCHEDULE_ERROR(s,
                        "instructions.comm[1].operands[0]: value 4711 is not "
                        "defined");
  s = makeAverageSchedule();
  s["results"][0]["value"] = 99;
  EXPECT_SCHEDULE_ERROR(s, "results[0].value: value 99 is not defined");
  s = makeAverageSchedule();
  s["values"].erase(3);
  EXPECT_SCHEDULE_ERROR(
      s, "values[4].id: value id 5 is out of range: ids are dense, "
         "0 .. 4");
  s = makeAverageSchedule();
  s["values"][3]["id"] = 2;
  EXPECT_SCHEDULE_ERROR(s, "values[3].id: value 2 is defined twice (first at "
                           "values[2])");
}

TEST(Schedule, RefusesTensorsWithoutTheirBuffer) {
  json s = makeAverageSchedule();
  s["values"][1]["buffer"] = 17;
  EXPECT_SCHEDULE_ERROR(
      s, "values[1].buffer: buffer 17 of value 1 is not defined");
  s = makeAverageSchedule();
  s["values"][1].erase("buffer");
  EXPECT_SCHEDULE_ERROR(s, "values[1]: tensor value 1 has no buffer");
}

TEST(Schedule, RefusesATensorLargerThanItsBuffer) {
  json s = makeAverageSchedule();
  s["values"][1]["shape"] = {8};
  EXPECT_SCHEDULE_ERROR(
      s, "values[1]: tensor value 1 [8] x f32 (32 bytes) is larger "
         "than its buffer 1 'x' (16 bytes)");
}

TEST(Schedule, RefusesBuffersOutsideTheirArena) {
  json s = makeAverageSchedule();
  s["buffers"][3]["bytes"] = 128;
  EXPECT_SCHEDULE_ERROR(s,
                        "buffers[3]: buffer 3 'loss' (bytes [192, 320)) lies "
                        "outside the device arena of 256 bytes");
  s = makeAverageSchedule();
  s["buffers"][3]["space"] = "host";
  EXPECT_SCHEDULE_ERROR(s,
                        "buffers[3]: buffer 3 'loss' (bytes [192, 196)) lies "
                        "outside the host arena of 0 bytes");
  s = makeAverageSchedule();
  s["buffers"][3]["offset"] = 100;
  EXPECT_SCHEDULE_ERROR(s, "buffers[3].offset: 100 is not a multiple of "
                           "memory.alignment (64)");
}

TEST(Schedule, RefusesBuffersThatOverlapWhileLive) {
  json s = makeAverageSchedule();
  s["buffers"][2]["offset"] = 64; // x's bytes, and both are live at 2..5
  EXPECT_SCHEDULE_ERROR(
      s, "buffers[2]: buffer 2 'w.new' (bytes [64, 80), live [2, "
         "5]) overlaps buffer 1 'x' (buffers[1], bytes [64, 80), "
         "live [0, 5]) in the device arena while both are live");
  // The same bytes at disjoint live ranges are fine.
  s = makeAverageSchedule();
  s["buffers"][1]["live"] = {0, 1};
  s["buffers"][2]["offset"] = 64;
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "s.json");
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  // Partial overlap from below.
  s = makeAverageSchedule();
  s["buffers"][2]["bytes"] = 80;
  EXPECT_SCHEDULE_ERROR(
      s, "buffers[2]: buffer 2 'w.new' (bytes [128, 208), live [2, "
         "5]) overlaps buffer 3 'loss' (buffers[3], bytes [192, "
         "196), live [0, 5]) in the device arena while both are "
         "live");
}

TEST(Schedule, RefusesEventMisuse) {
  json s = makeAverageSchedule();
  s["instructions"]["comm"][2]["event"] = 0;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[2]: event 0 is recorded twice (first "
         "at instructions.compute[2])");
  s = makeAverageSchedule();
  s["instructions"]["comm"].erase(2);
  EXPECT_SCHEDULE_ERROR(s,
                        "instructions.compute[3]: waits on event 1, which is "
                        "never recorded");
  s = makeAverageSchedule();
  s["instructions"]["comm"][0]["event"] = 5;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].event: event 5 is out of range: the "
         "schedule has 2 events");
}

TEST(Schedule, RefusesWaitsThatCanDeadlock) {
  // compute waits for 1 before it records 0; comm waits for 0 first.
  json s = makeAverageSchedule();
  std::swap(s["instructions"]["compute"][2], s["instructions"]["compute"][3]);
  std::swap(s["instructions"]["compute"][2]["point"],
            s["instructions"]["compute"][3]["point"]);
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2]: the wait on event 1 can "
         "deadlock: its record at instructions.comm[2] comes after "
         "instructions.comm[0], which waits on event 0 and cannot "
         "go on");
  // A wait before the record on its own stream.
  s = makeAverageSchedule();
  s["instructions"]["comm"][0]["event"] = 1;
  s["instructions"]["compute"][3]["event"] = 0;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0]: the wait on event 1 can deadlock: "
         "it is recorded later on the same stream, at "
         "instructions.comm[2]");
}

TEST(Schedule, RefusesMalformedArguments) {
  const json zeros = {{"kind", "zeros"}};
  json s = makeAverageSchedule();
  s["arguments"][1]["kind"] = "input";
  EXPECT_SCHEDULE_ERROR(s, "arguments[1].kind: unknown argument kind 'input' "
                           "(expected param, state, step or data)");
  s = makeAverageSchedule();
  s["arguments"].push_back(
      {{"value", 5}, {"kind", "state"}, {"state", "exp_avg"}, {"init", zeros}});
  EXPECT_SCHEDULE_ERROR(s,
                        "arguments[2]: state 'exp_avg' needs the key 'param' "
                        "naming its parameter");
  s = makeAverageSchedule();
  s["arguments"].push_back({{"value", 5},
                            {"kind", "state"},
                            {"state", "max_exp_avg"},
                            {"init", zeros}});
  EXPECT_SCHEDULE_ERROR(
      s, "arguments[2].state: unknown state 'max_exp_avg' (expected "
         "master, exp_avg, exp_avg_sq, max_exp_avg_sq, "
         "momentum_buffer, loss_scale, loss_scale_hysteresis or "
         "good_steps)");
  s = makeAverageSchedule();
  s["arguments"].push_back({{"value", 5},
                            {"kind", "state"},
                            {"state", "max_exp_avg_sq"},
                            {"init", zeros}});
  EXPECT_SCHEDULE_ERROR(s, "arguments[2]: state 'max_exp_avg_sq' needs the key "
                           "'param' naming its parameter");
  s = makeAverageSchedule();
  s["arguments"].push_back({{"value", 5},
                            {"kind", "state"},
                            {"state", "exp_avg"},
                            {"param", "v"},
                            {"init", zeros}});
  EXPECT_SCHEDULE_ERROR(s,
                        "arguments[2].param: 'v' is not a parameter argument "
                        "before it");
  s = makeAverageSchedule();
  s["arguments"][0]["layout"]["shard_numel"] = 3;
  EXPECT_SCHEDULE_ERROR(
      s, "arguments[0].layout.shard_numel: 3 is not padded_numel / "
         "world_size = 4");
  // Padding is any multiple of the world size from the element count on
  // (docs/Dialect.md, "Layouts"), nothing else.
  s = makeAverageSchedule();
  s["arguments"][0]["layout"]["padded_numel"] = 3;
  s["arguments"][0]["layout"]["shard_numel"] = 3;
  EXPECT_SCHEDULE_ERROR(
      s, "arguments[0].layout: padded_numel 3 is smaller than the "
         "element count 4");
  s = makeAverageSchedule();
  s["arguments"][0]["layout"]["shape"] = {2, 3};
  s["arguments"][0]["layout"]["shard_numel"] = 6;
  s["arguments"][0]["layout"]["padded_numel"] = 6;
  EXPECT_SCHEDULE_ERROR(s,
                        "arguments[0].value: value 0 (%w) has shape [4] x f32, "
                        "but parameter 'w' has the shape [2, 3]");
  s = makeAverageSchedule();
  s["arguments"][1]["value"] = 0;
  EXPECT_SCHEDULE_ERROR(s,
                        "arguments[1].value: value 0 is already arguments[0]");
  s = makeAverageSchedule();
  s["arguments"][0]["init"] = {{"kind", "uniform"}};
  EXPECT_SCHEDULE_ERROR(s,
                        "arguments[0].init.kind: unknown init kind 'uniform' "
                        "(expected normal, zeros, ones, file, param or value)");
  // A parameter with no initializer: its values come from --init-from.
  s = makeAverageSchedule();
  s["arguments"][0]["init"] = {{"kind", "file"}};
  StatusOr<Schedule> fromFile = Schedule::parse(s.dump(), "s.json");
  ASSERT_TRUE(fromFile.isOk()) << fromFile.status().toString();
  EXPECT_EQ(fromFile->arguments()[0].init.kind, InitSpec::Kind::File);
  s = makeAverageSchedule();
  s["values"][1]["dtype"] = "i32";
  EXPECT_SCHEDULE_ERROR(
      s, "arguments[1]: integer data argument 'x' needs a 'bound' "
         "(the vocabulary, the classes)");
}

TEST(Schedule, RefusesMalformedResults) {
  json s = makeAverageSchedule();
  s["results"][1]["argument"] = 7;
  EXPECT_SCHEDULE_ERROR(s,
                        "results[1].argument: argument 7 does not exist (the "
                        "schedule has 2)");
  s = makeAverageSchedule();
  s["results"][1]["value"] = 4;
  EXPECT_SCHEDULE_ERROR(
      s, "results[1].value: value 4 (%loss) ([] x f32) does not fit "
         "argument 0 ([4] x f32)");
  s = makeAverageSchedule();
  s["results"][0]["value"] = 5;
  EXPECT_SCHEDULE_ERROR(s, "results[0].value: value 5 (%avg) is not one "
                           "floating-point element: the loss is a scalar");
  s = makeAverageSchedule();
  s["results"].push_back(s["results"][1]);
  EXPECT_SCHEDULE_ERROR(s,
                        "results[2].argument: argument 0 is already updated by "
                        "results[1]");
  s = makeAverageSchedule();
  s["results"][0]["kind"] = "metric";
  EXPECT_SCHEDULE_ERROR(
      s, "results[0].kind: unknown result kind 'metric' (expected "
         "loss or update)");
}

TEST(Schedule, RefusesMalformedCollectives) {
  json s = makeBucketSchedule(2);
  s["instructions"]["comm"][0].erase("staging");
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0]: a bucket of 2 operands with padding "
         "needs a 'staging' region of 40 bytes");
  s = makeBucketSchedule(2);
  s["instructions"]["comm"][0]["staging"]["bytes"] = 36;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].staging.bytes: 36 bytes is less than "
         "the flat bucket's 40");
  s = makeBucketSchedule(2);
  s["instructions"]["comm"][0]["layouts"][0]["world_size"] = 4;
  EXPECT_SCHEDULE_ERROR(s,
                        "instructions.comm[0].layouts[0].world_size: 4 differs "
                        "from the schedule's world_size 2");
  s = makeBucketSchedule(2);
  s["instructions"]["comm"][1]["reduction"] = "max";
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[1].reduction: unknown reduction 'max' "
         "(expected sum or avg)");
  s = makeBucketSchedule(2);
  s["instructions"]["comm"][0]["results"] = {2};
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].results: 1 results for 2 operands");
  s = makeBucketSchedule(2);
  s["instructions"]["comm"][0]["operands"] = {2, 1};
  EXPECT_SCHEDULE_ERROR(s,
                        "instructions.comm[0].operands[0]: value 2 (%A) has 5 "
                        "elements, but the layout's shard has 3");
  // The reduce-scatter (point 1) writes value 4, whose buffer is reserved
  // only from point 2.
  s = makeBucketSchedule(2);
  int buffer = s["values"][4]["buffer"];
  s["buffers"][buffer]["live"] = {2, 10};
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[1].results[0]: value 4 (%" +
             s["values"][4]["name"].get<std::string>().substr(1) +
             ") is written from point 1 on, but its buffer '" +
             s["buffers"][buffer]["name"].get<std::string>() +
             "' is reserved only from point 2");
  s = makeBucketSchedule(2);
  s["values"][1]["dtype"] = "bf16";
  EXPECT_SCHEDULE_ERROR(s,
                        "instructions.comm[0]: value 1 (%b) is bf16, but the "
                        "bucket is f32: one collective moves one element type");
}

// Collectives over groups of ranks (version 3): docs/ScheduleFormat.md,
// "Collectives".
TEST(ScheduleGroups, AcceptsGridAxes) {
  for (std::vector<int> axes :
       {std::vector<int>{0}, std::vector<int>{1}, std::vector<int>{0, 1}}) {
    StatusOr<Schedule> parsed =
        Schedule::parse(makeGroupBucketSchedule(axes).dump(), "s.json");
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    std::vector<int64_t> expected(axes.begin(), axes.end());
    for (const Instruction &inst : parsed->streams()[1].instructions)
      EXPECT_EQ(inst.gridAxes, expected) << inst.describe();
    EXPECT_EQ(parsed->groupSize(expected), int64_t(1) << axes.size());
  }
  // Without grid_axes, a collective runs over the world.
  json s = makeGroupBucketSchedule({1});
  s["instructions"]["comm"][2].erase("grid_axes");
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_TRUE(parsed->streams()[1].instructions[2].gridAxes.empty());
  EXPECT_EQ(parsed->groupSize({}), 4);
  EXPECT_EQ(parsed->grid(), (std::vector<int64_t>{2, 2}));
}

/// makeAverageSchedule on 4 ranks of grid [2, 2] (version 3) with the layouts
/// of `w` and of a zero.local_shard of `x` (into a new value 6 of 2 floats)
/// cut across `paramRanks` and `shardRanks` ranks.
static json makeNodeLayoutSchedule(int paramRanks, int shardRanks,
                                   const std::vector<int> &grid = {2, 2}) {
  auto layoutOf = [](int ranks) {
    int shard = (4 + ranks - 1) / ranks;
    return json{{"shape", {4}},
                {"world_size", ranks},
                {"shard_numel", shard},
                {"padded_numel", shard * ranks}};
  };
  int world = 1;
  for (int size : grid)
    world *= size;
  json s = makeAverageSchedule(world);
  s["version"] = 3;
  s["topology"]["grid"] = grid;
  s["arguments"][0]["layout"] = layoutOf(paramRanks);
  s["memory"]["arenas"]["device"] = 320;
  s["buffers"].push_back(
      makeBuffer(4, "x.shard", "activation", 256,
                 4 * layoutOf(shardRanks)["shard_numel"].get<int>(), 1, 5));
  s["values"].push_back(
      makeTensor(6, "%xs", {layoutOf(shardRanks)["shard_numel"]}, 4));
  json shard = {{"op", "zero.local_shard"}, {"point", 1},
                {"loc", "test.mlir:3:5"},   {"operands", {1}},
                {"results", {6}},           {"layout", layoutOf(shardRanks)}};
  json &compute = s["instructions"]["compute"];
  compute.insert(compute.begin() + 2, shard);
  return s;
}

// MiCS: a parameter's layout, and a zero.local_shard's, may be cut across
// the ranks of one node of a [nodes, ranks per node] grid.
TEST(ScheduleGroups, AcceptsLayoutsOfOneNodesRanks) {
  for (auto [paramRanks, shardRanks] :
       {std::pair{2, 2}, std::pair{4, 2}, std::pair{2, 4}}) {
    StatusOr<Schedule> parsed = Schedule::parse(
        makeNodeLayoutSchedule(paramRanks, shardRanks).dump(), "s.json");
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    EXPECT_EQ(parsed->arguments()[0].layout.worldSize, paramRanks);
    const Instruction &shard = parsed->streams()[0].instructions[2];
    EXPECT_EQ(shard.fields.getLayout(Field::Layout).worldSize, shardRanks);
  }
}

TEST(ScheduleGroups, RefusesLayoutsOfOtherRanks) {
  EXPECT_SCHEDULE_ERROR(makeNodeLayoutSchedule(1, 2),
                        "arguments[0].layout.world_size: 1 is neither the "
                        "schedule's world_size 4 nor the ranks of the grid's "
                        "last axes (topology.grid [2, 2]): 2 (grid axes [1])");
  EXPECT_SCHEDULE_ERROR(makeNodeLayoutSchedule(2, 1),
                        "instructions.compute[2].layout.world_size: 1 is "
                        "neither the schedule's world_size 4 nor the ranks of "
                        "the grid's last axes (topology.grid [2, 2]): 2 (grid "
                        "axes [1]) at test.mlir:3:5");
  // Only the world's on one axis, and before version 3.
  json s = makeNodeLayoutSchedule(2, 4);
  s["topology"]["grid"] = {4};
  EXPECT_SCHEDULE_ERROR(s, "arguments[0].layout.world_size: 2 differs from "
                           "the schedule's world_size 4");
  s = makeNodeLayoutSchedule(4, 2);
  s["version"] = 2;
  s["topology"]["grid"] = {4};
  EXPECT_SCHEDULE_ERROR(s, "instructions.compute[2].layout.world_size: 2 "
                           "differs from the schedule's world_size 4 at "
                           "test.mlir:3:5");
  // A collective's layouts stay the world's or its group's.
  s = makeGroupBucketSchedule({0, 1});
  s["instructions"]["comm"][0]["layouts"][0] =
      makeGroupBucketSchedule({1})["instructions"]["comm"][0]["layouts"][0];
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].layouts[0].world_size: 2 "
                           "differs from the group size 4 of grid_axes [0, 1]");
}

TEST(ScheduleGroups, PlacesRanksInTheirGroups) {
  StatusOr<Schedule> parsed =
      Schedule::parse(makeGroupBucketSchedule({1}).dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  // {color, rank, size} of world ranks 0..3 on grid [2, 2].
  auto places = [&](const std::vector<int64_t> &axes) {
    std::vector<std::vector<int64_t>> all;
    for (int64_t r = 0; r < 4; ++r) {
      RankGroup group = parsed->rankGroup(r, axes);
      all.push_back({group.color, group.rank, group.size});
    }
    return all;
  };
  using Places = std::vector<std::vector<int64_t>>;
  // Within a node: {0, 1} and {2, 3}.
  EXPECT_EQ(places({1}), (Places{{0, 0, 2}, {0, 1, 2}, {1, 0, 2}, {1, 1, 2}}));
  // One rank per node: {0, 2} and {1, 3}.
  EXPECT_EQ(places({0}), (Places{{0, 0, 2}, {1, 0, 2}, {0, 1, 2}, {1, 1, 2}}));
  EXPECT_EQ(places({0, 1}),
            (Places{{0, 0, 4}, {0, 1, 4}, {0, 2, 4}, {0, 3, 4}}));
  EXPECT_EQ(places({}), places({0, 1}));
}

// A grid whose product wraps int64 to the world size is refused, not taken.
TEST(ScheduleGroups, RefusesAGridThatDoesNotMakeTheWorld) {
  json s = makeGroupBucketSchedule({1});
  s["world_size"] = 2;
  s["topology"]["grid"] = {int64_t(3), int64_t(6148914691236517206)};
  EXPECT_SCHEDULE_ERROR(s, "topology.grid: [3, 6148914691236517206] is not "
                           "[nodes, ranks per node]: at least 2 nodes whose "
                           "ranks make world_size = 2");
  s = makeGroupBucketSchedule({1});
  s["topology"]["grid"] = {2, 3};
  EXPECT_SCHEDULE_ERROR(s, "topology.grid: [2, 3] is not [nodes, ranks per "
                           "node]: at least 2 nodes whose ranks make "
                           "world_size = 4");
}

// Grids of three axes [replica groups K, nodes per group M, ranks per node
// L] (MiCS groups of several nodes): node-major, a node the last axis.
TEST(ScheduleGroups, AcceptsGridsOfThreeAxes) {
  for (std::vector<int> axes : {std::vector<int>{1, 2}, std::vector<int>{0},
                                std::vector<int>{0, 1, 2}}) {
    StatusOr<Schedule> parsed = Schedule::parse(
        makeGridBucketSchedule({2, 2, 2}, axes).dump(), "s.json");
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    EXPECT_EQ(parsed->worldSize(), 8);
    EXPECT_EQ(parsed->ranksPerNode(), 2);
    EXPECT_EQ(parsed->grid(), (std::vector<int64_t>{2, 2, 2}));
  }
  StatusOr<Schedule> parsed = Schedule::parse(
      makeGridBucketSchedule({3, 2, 2}, {1, 2}).dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->suffixGroupSizes(), (std::vector<int64_t>{4, 2}));
  // World rank 7 = (1, 1, 1): its MiCS group {4, 5, 6, 7}, its replicas
  // {3, 7, 11}.
  RankGroup group = parsed->rankGroup(7, {1, 2});
  EXPECT_EQ(std::vector<int64_t>({group.color, group.rank, group.size}),
            (std::vector<int64_t>{1, 3, 4}));
  group = parsed->rankGroup(7, {0});
  EXPECT_EQ(std::vector<int64_t>({group.color, group.rank, group.size}),
            (std::vector<int64_t>{3, 1, 3}));
  // The hops by axis: the first's coordinate weighs the later axes' ranks.
  auto hops = [&](const std::vector<int64_t> &axes) {
    std::vector<std::vector<int64_t>> all;
    for (const GroupHop &hop : parsed->groupHops(axes))
      all.push_back({hop.axis, hop.size, hop.stride});
    return all;
  };
  using Hops = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(hops({1, 2}), (Hops{{1, 2, 2}, {2, 2, 1}}));
  EXPECT_EQ(hops({}), (Hops{{0, 3, 4}, {1, 2, 2}, {2, 2, 1}}));
  EXPECT_EQ(hops({0, 2}), (Hops{{0, 3, 2}, {2, 2, 1}}));
  // Nodes of one rank: the last axis has no hop.
  parsed = Schedule::parse(makeGridBucketSchedule({2, 2, 1}, {1, 2}).dump(),
                           "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->ranksPerNode(), 1);
  EXPECT_EQ(hops({1, 2}), (Hops{{1, 2, 1}}));
  EXPECT_EQ(hops({}), (Hops{{0, 2, 2}, {1, 2, 1}}));
}

TEST(ScheduleGroups, RefusesGridsOfThreeAxesThatAreNotMiCSGroups) {
  const char *shape = " is not [replica groups, nodes per group, ranks per "
                      "node]: at least 2 groups of at least 2 nodes whose "
                      "ranks make world_size = 8";
  for (std::vector<int64_t> grid :
       {std::vector<int64_t>{1, 2, 4}, std::vector<int64_t>{2, 1, 4},
        std::vector<int64_t>{2, 2, 3}, std::vector<int64_t>{2, 2, 1},
        std::vector<int64_t>{2, 2, int64_t(4611686018427387906)}}) {
    json s = makeGridBucketSchedule({2, 2, 2}, {1, 2});
    s["topology"]["grid"] = grid;
    std::string text = "[";
    for (size_t i = 0; i < grid.size(); ++i)
      text += (i ? ", " : "") + std::to_string(grid[i]);
    EXPECT_SCHEDULE_ERROR(s, "topology.grid: " + text + "]" + shape);
  }
  json s = makeGridBucketSchedule({2, 2, 2}, {1, 2});
  s["topology"]["grid"] = {2, 2, 2, 1};
  EXPECT_SCHEDULE_ERROR(s, "topology.grid: [2, 2, 2, 1] is not [world_size] "
                           "= [8], [nodes, ranks per node] or [replica "
                           "groups, nodes per group, ranks per node]");
  s["version"] = 2;
  s["topology"]["grid"] = {2, 2, 2};
  EXPECT_SCHEDULE_ERROR(s, "topology.grid: [2, 2, 2] is not [world_size] = "
                           "[8]: versions 1 and 2 have one data-parallel "
                           "dimension");
}

// A parameter's layout: the world's, a MiCS group's (axes [1, 2]) or a
// node's (axis [2]); one rule, the sizes of the groups of the grid's last
// axes.
TEST(ScheduleGroups, AcceptsLayoutsOfTheGridsLastAxes) {
  for (int paramRanks : {8, 4, 2}) {
    StatusOr<Schedule> parsed = Schedule::parse(
        makeNodeLayoutSchedule(paramRanks, 4, {2, 2, 2}).dump(), "s.json");
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    EXPECT_EQ(parsed->arguments()[0].layout.worldSize, paramRanks);
  }
  EXPECT_SCHEDULE_ERROR(makeNodeLayoutSchedule(1, 4, {2, 2, 2}),
                        "arguments[0].layout.world_size: 1 is neither the "
                        "schedule's world_size 8 nor the ranks of the grid's "
                        "last axes (topology.grid [2, 2, 2]): 4 (grid axes "
                        "[1, 2]) or 2 (grid axes [2])");
  EXPECT_SCHEDULE_ERROR(makeNodeLayoutSchedule(4, 1, {2, 2, 2}),
                        "instructions.compute[2].layout.world_size: 1 is "
                        "neither the schedule's world_size 8 nor the ranks of "
                        "the grid's last axes (topology.grid [2, 2, 2]): 4 "
                        "(grid axes [1, 2]) or 2 (grid axes [2]) at "
                        "test.mlir:3:5");
  // On [3, 2, 2] the sizes are 4 and 2: 6 is not one of them.
  EXPECT_SCHEDULE_ERROR(makeNodeLayoutSchedule(6, 4, {3, 2, 2}),
                        "arguments[0].layout.world_size: 6 is neither the "
                        "schedule's world_size 12 nor the ranks of the grid's "
                        "last axes (topology.grid [3, 2, 2]): 4 (grid axes "
                        "[1, 2]) or 2 (grid axes [2])");
  // A collective's layouts stay its group's.
  json s = makeGridBucketSchedule({2, 2, 2}, {1, 2});
  s["instructions"]["comm"][0].erase("grid_axes");
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].layouts[0].world_size: 4 "
                           "differs from the schedule's world_size 8");
}

// `hierarchical` (version 3): on all_gather only, true or false.
TEST(ScheduleGroups, ReadsHierarchicalGathers) {
  json s = makeGridBucketSchedule({2, 2, 2}, {1, 2});
  s["instructions"]["comm"][0]["hierarchical"] = true;
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_TRUE(parsed->streams()[1].instructions[0].hierarchical);
  EXPECT_FALSE(parsed->streams()[1].instructions[1].hierarchical);
  s["instructions"]["comm"][0]["hierarchical"] = false;
  parsed = Schedule::parse(s.dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_FALSE(parsed->streams()[1].instructions[0].hierarchical);

  s["instructions"]["comm"][0]["hierarchical"] = "yes";
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].hierarchical: expected true "
                           "or false, got \"yes\"");
  s["instructions"]["comm"][0]["hierarchical"] = 1;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].hierarchical: expected true "
                           "or false, got 1");
  s = makeGridBucketSchedule({2, 2, 2}, {1, 2});
  s["instructions"]["comm"][1]["hierarchical"] = true;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[1].hierarchical: 'hierarchical' "
                           "is supported on all_gather only, not "
                           "reduce_scatter");
  s = makeGridBucketSchedule({2, 2, 2}, {1, 2});
  s["instructions"]["comm"][2]["hierarchical"] = false;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[2].hierarchical: 'hierarchical' "
                           "is supported on all_gather only, not all_reduce");
  s = makeBucketSchedule(2);
  s["version"] = 2;
  s["instructions"]["comm"][0]["hierarchical"] = true;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].hierarchical: 'hierarchical' "
                           "needs version 3 (the schedule is version 2)");
}

TEST(ScheduleGroups, RefusesMalformedGridAxes) {
  json s = makeBucketSchedule(2);
  s["version"] = 2;
  s["instructions"]["comm"][0]["grid_axes"] = {0};
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].grid_axes: 'grid_axes' needs "
                           "version 3 (the schedule is version 2)");
  s = makeGroupBucketSchedule({1});
  s["instructions"]["comm"][1]["grid_axes"] = {2};
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[1].grid_axes[0]: axis 2 is out "
                           "of range: topology.grid [2, 2] has 2 axes");
  s = makeGroupBucketSchedule({1});
  s["instructions"]["comm"][2]["grid_axes"] = {-1};
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[2].grid_axes[0]: -1 is out of "
                           "range (at least 0)");
  s = makeGroupBucketSchedule({1});
  s["instructions"]["comm"][2]["grid_axes"] = {1, 0};
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[2].grid_axes[1]: axis 0 follows "
                           "axis 1: the axes are strictly increasing");
  s["instructions"]["comm"][2]["grid_axes"] = {0, 0};
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[2].grid_axes[1]: axis 0 follows "
                           "axis 0: the axes are strictly increasing");
  s = makeGroupBucketSchedule({1});
  s["instructions"]["comm"][0]["grid_axes"] = json::array();
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].grid_axes: no axes: name at least one axis of "
         "topology.grid [2, 2], or leave grid_axes out for the whole world");
  s = makeGroupBucketSchedule({1});
  s["instructions"]["comm"][0]["grid_axes"] = "1";
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].grid_axes: expected an array");
  // A world of one axis has axis 0 only.
  s = makeBucketSchedule(2);
  s["version"] = 3;
  s["instructions"]["comm"][0]["grid_axes"] = {1};
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].grid_axes[0]: axis 1 is out "
                           "of range: topology.grid [2] has 1 axis");
}

TEST(ScheduleGroups, CutsLayoutsAndBucketsForTheGroup) {
  // Layouts of the world's 4 ranks on a collective over a group of 2.
  json s = makeGroupBucketSchedule({1});
  s["instructions"]["comm"][1]["layouts"][1] =
      makeGroupBucketSchedule({0, 1})["instructions"]["comm"][1]["layouts"][1];
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[1].layouts[1].world_size: 4 "
                           "differs from the group size 2 of grid_axes [1]");
  // And the group's layouts on a collective over the world.
  s = makeGroupBucketSchedule({0});
  s["instructions"]["comm"][0].erase("grid_axes");
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].layouts[0].world_size: 2 "
                           "differs from the schedule's world_size 4");
  // The flat bucket holds the group's blocks: 2 of 5 floats, not 4.
  s = makeGroupBucketSchedule({0});
  s["instructions"]["comm"][0]["staging"]["bytes"] = 36;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].staging.bytes: 36 bytes is less than "
         "the flat bucket's 40");
}

// Every field docs/ScheduleFormat.md lists as required is checked, and the
// names it says are unique are.
TEST(Schedule, RefusesMissingRequiredFields) {
  json s = makeAverageSchedule();
  s.erase("stage");
  EXPECT_SCHEDULE_ERROR(s, "(top level): missing key 'stage'");
  s = makeAverageSchedule();
  s.erase("topology");
  EXPECT_SCHEDULE_ERROR(s, "(top level): missing key 'topology'");
  for (const char *key : {"name", "category", "role"}) {
    s = makeAverageSchedule();
    s["buffers"][1].erase(key);
    EXPECT_SCHEDULE_ERROR(s,
                          std::string("buffers[1]: missing key '") + key + "'");
  }
  for (const char *key : {"sharded", "persistent", "init"}) {
    s = makeAverageSchedule();
    s["arguments"][0].erase(key);
    EXPECT_SCHEDULE_ERROR(s, std::string("arguments[0]: missing key '") + key +
                                 "'");
  }
  s = makeAverageSchedule();
  s["arguments"].push_back({{"value", 5}, {"kind", "step"}});
  EXPECT_SCHEDULE_ERROR(s, "arguments[2]: missing key 'init'");
  for (const char *key : {"point", "loc"}) {
    s = makeAverageSchedule();
    s["instructions"]["compute"][1].erase(key);
    EXPECT_SCHEDULE_ERROR(
        s, std::string("instructions.compute[1]: missing key '") + key + "'");
    s = makeAverageSchedule();
    s["instructions"]["comm"][0].erase(key);
    EXPECT_SCHEDULE_ERROR(
        s, std::string("instructions.comm[0]: missing key '") + key + "'");
  }
}

TEST(Schedule, RefusesDuplicateNames) {
  json s = makeAverageSchedule();
  json exp = {{"value", 5},
              {"kind", "state"},
              {"state", "exp_avg"},
              {"param", "w"},
              {"init", {{"kind", "zeros"}}}};
  s["arguments"].push_back(exp);
  s["arguments"].push_back(exp);
  s["arguments"][3]["value"] = 3;
  EXPECT_SCHEDULE_ERROR(s,
                        "arguments[3].state: state 'exp_avg' of 'w' is already "
                        "arguments[2]");
  s = makeAverageSchedule();
  s["arguments"][1] = s["arguments"][0];
  s["arguments"][1]["value"] = 1;
  EXPECT_SCHEDULE_ERROR(
      s, "arguments[1].name: parameter 'w' is named twice (first at "
         "arguments[0])");
}

// Points follow program order on each stream and buffers end by the return,
// the point after the last instruction's.
TEST(Schedule, RefusesPointsOutsideTheProgram) {
  json s = makeAverageSchedule();
  s["instructions"]["compute"][1]["point"] = 7;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2].point: point 2 comes before the "
         "point 7 of instructions.compute[1]: a stream runs in "
         "program order");
  s = makeAverageSchedule();
  s["buffers"][0]["live"] = {0, 6};
  EXPECT_SCHEDULE_ERROR(
      s, "buffers[0].live: [0, 6] ends after the program: its last "
         "point is 5, the return after the last instruction");
}

/// The average schedule where the all-reduce takes a copy of `x` that the
/// compute stream makes before it records the event the comm stream waits
/// on: value 7 (%x2) in buffer 4, copied into the destination 6 (%e).
json makeCopyingSchedule() {
  json s = makeAverageSchedule();
  s["memory"]["arenas"]["device"] = 320;
  s["buffers"].push_back(makeBuffer(4, "x2", "activation", 256, 16, 0, 5));
  s["values"].push_back(makeTensor(6, "%e", {4}, 4));
  s["values"].push_back(makeTensor(7, "%x2", {4}, 4));
  json &compute = s["instructions"]["compute"];
  compute.insert(compute.begin() + 2, json{{"op", "linalg.copy"},
                                           {"point", 1},
                                           {"loc", "test.mlir:3:9"},
                                           {"operands", {1, 6}},
                                           {"results", {7}}});
  s["instructions"]["comm"][1]["operands"] = {7};
  return s;
}

// The loader proves the dataflow (docs/ScheduleFormat.md, "What the loader
// proves"); each error names the reader and the writer.
TEST(Schedule, RefusesReadsBeforeWrites) {
  StatusOr<Schedule> copying =
      Schedule::parse(makeCopyingSchedule().dump(), "c.json");
  ASSERT_TRUE(copying.isOk()) << copying.status().toString();
  // The fill before the constant it fills with.
  json s = makeAverageSchedule();
  std::swap(s["instructions"]["compute"][0], s["instructions"]["compute"][1]);
  std::swap(s["instructions"]["compute"][0]["point"],
            s["instructions"]["compute"][1]["point"]);
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[0].operands[0]: reads value 2 (%cst) "
         "before it is written: instructions.compute[1] "
         "(arith.constant at test.mlir:2:3) writes it later on the "
         "same stream");
  // The comm stream no longer waits for the copy.
  s = makeCopyingSchedule();
  s["instructions"]["comm"].erase(0);
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].operands[0]: reads value 7 (%x2), "
         "which instructions.compute[2] (linalg.copy at "
         "test.mlir:3:9) writes on stream 'compute', without "
         "waiting on an event recorded after that write");
  // A value nothing writes, read by an instruction and as a result.
  s = makeCopyingSchedule();
  s["instructions"]["compute"].erase(2);
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[1].operands[0]: reads value 7 (%x2), "
         "which nothing writes before it: it is neither an "
         "instruction's result nor an argument, and no earlier "
         "instruction writes its buffer 4 'x2'");
  s = makeAverageSchedule();
  s["instructions"]["compute"].erase(1);
  EXPECT_SCHEDULE_ERROR(s,
                        "results[0].value: value 4 (%loss) is never written");
  // Two writers of one value.
  s = makeAverageSchedule();
  s["instructions"]["compute"][1]["results"] = {2};
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[1].results[0]: writes value 2 (%cst), "
         "which instructions.compute[0] (arith.constant at "
         "test.mlir:2:3) already writes: a value has one writer");
}

// A body reads its own values in order; nothing outside reads them.
TEST(Schedule, RefusesBodyValuesReadOutOfOrder) {
  json s = makeCopyingSchedule();
  for (int id : {8, 9, 10, 11})
    s["values"].push_back({{"id", id},
                           {"kind", "scalar"},
                           {"dtype", "f32"},
                           {"name", "%b" + std::to_string(id)}});
  json map = {
      {"op", "linalg.map"},
      {"point", 1},
      {"loc", "test.mlir:3:9"},
      {"operands", {1, 6}},
      {"results", {7}},
      {"body",
       {{"arguments", {8, 9}},
        {"ops",
         {{{"op", "arith.negf"}, {"operands", {8}}, {"results", {10}}},
          {{"op", "arith.negf"}, {"operands", {10}}, {"results", {11}}}}},
        {"yield", {11}}}}};
  s["instructions"]["compute"][2] = map;
  StatusOr<Schedule> mapped = Schedule::parse(s.dump(), "m.json");
  ASSERT_TRUE(mapped.isOk()) << mapped.status().toString();
  json swapped = s;
  swapped["instructions"]["compute"][2]["body"]["ops"][0]["operands"] = {11};
  EXPECT_SCHEDULE_ERROR(swapped,
                        "instructions.compute[2].body.ops[0].operands[0]: "
                        "reads value 11 (%b11) before it is defined: "
                        "instructions.compute[2].body.ops[1] defines it");
  s["instructions"]["compute"][1]["operands"][0] = 10;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[1].operands[0]: reads value 10 "
         "(%b10), a value of the body of instructions.compute[2] "
         "(linalg.map at test.mlir:3:9)");
}

TEST(Schedule, RefusesUnorderedAccessesOnTwoStreams) {
  // After the record, compute fills buffer 4, which the all-reduce reads.
  json s = makeCopyingSchedule();
  s["values"].push_back(makeTensor(8, "%x3", {4}, 4));
  json &compute = s["instructions"]["compute"];
  compute.insert(compute.begin() + 4, json{{"op", "linalg.fill"},
                                           {"point", 3},
                                           {"loc", "test.mlir:4:9"},
                                           {"operands", {2, 6}},
                                           {"results", {8}}});
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[4]: writes value 8 (%x3) (bytes "
         "[256, 272) of the device arena) while instructions.comm[1] "
         "(all_reduce at test.mlir:4:3) on stream 'comm' may read "
         "value 7 (%x2) (bytes [256, 272) of the device arena): no "
         "event orders the two");
  // After its wait, the same fill is ordered after the all-reduce.
  std::swap(compute[4], compute[5]);
  compute[4]["point"] = 3;
  compute[5]["point"] = 4;
  StatusOr<Schedule> ordered = Schedule::parse(s.dump(), "o.json");
  EXPECT_TRUE(ordered.isOk()) << ordered.status().toString();
}

TEST(Schedule, RefusesMalformedStreams) {
  json s = makeAverageSchedule();
  s["streams"] = {"comm"};
  EXPECT_SCHEDULE_ERROR(s, "streams: the stream 'compute' is missing");
  s = makeAverageSchedule();
  s["streams"] = {"compute", "copy"};
  EXPECT_SCHEDULE_ERROR(
      s, "streams[1]: the stream 'copy' needs version 2 (the schedule is "
         "version 1)");
  s = makeAverageSchedule();
  s["streams"] = {"compute", "comm", "disk"};
  EXPECT_SCHEDULE_ERROR(
      s, "streams[2]: unknown stream 'disk' (expected compute, comm or copy)");
  s = makeAverageSchedule();
  s["streams"] = {"compute"};
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm: stream 'comm' is not listed in "
                           "'streams'");
}

// Loops (version 2): docs/ScheduleFormat.md, "Loops".
TEST(ScheduleLoop, AcceptsLoops) {
  StatusOr<Schedule> one =
      Schedule::parse(makeLoopSchedule(3, 4, false).dump(), "l.json");
  ASSERT_TRUE(one.isOk()) << one.status().toString();
  EXPECT_EQ(one->version(), 2);
  ASSERT_TRUE(one->loop());
  EXPECT_EQ(one->loop()->count, 3);
  EXPECT_EQ(one->loop()->bodyBegin, (std::vector<size_t>{2}));
  EXPECT_EQ(one->loop()->bodyEnd, (std::vector<size_t>{4}));
  ASSERT_EQ(one->loop()->carried.size(), 1u);
  EXPECT_EQ(one->loop()->carried[0].next, 8);
  EXPECT_EQ(one->streams()[0].instructions[2].kind,
            Instruction::Kind::LoopSlice);
  for (int count : {1, 2, 5}) {
    StatusOr<Schedule> two =
        Schedule::parse(makeLoopSchedule(count, 4, true).dump(), "l.json");
    ASSERT_TRUE(two.isOk()) << two.status().toString();
    EXPECT_EQ(two->loop()->bodyBegin, (std::vector<size_t>{2, 0}));
    EXPECT_EQ(two->loop()->bodyEnd, (std::vector<size_t>{6, 3}));
  }
  // An empty list is no loop.
  json s = makeAverageSchedule();
  s["version"] = 2;
  s["loops"] = json::array();
  StatusOr<Schedule> none = Schedule::parse(s.dump(), "n.json");
  ASSERT_TRUE(none.isOk()) << none.status().toString();
  EXPECT_FALSE(none->loop());
}

TEST(ScheduleLoop, RefusesLoopsBeforeVersion2) {
  json s = makeLoopSchedule(3, 4, false);
  s["version"] = 1;
  EXPECT_SCHEDULE_ERROR(
      s, "loops: 'loops' needs version 2 (the schedule is version "
         "1)");
  s.erase("loops");
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2].op: 'loop_slice' needs version 2 "
         "(the schedule is version 1)");
}

TEST(ScheduleLoop, RefusesMalformedLoops) {
  json s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["count"] = 0;
  EXPECT_SCHEDULE_ERROR(s, "loops[0].count: 0 is out of range [1, ...]");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["begin"] = 5;
  s["loops"][0]["end"] = 2;
  EXPECT_SCHEDULE_ERROR(s, "loops[0].end: point 2 comes before begin 5");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["end"] = 8;
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].end: point 8 lies outside the program: its last "
         "point is 7, the return after the last instruction");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["begin"] = -1;
  EXPECT_SCHEDULE_ERROR(s, "loops[0].begin: -1 is out of range [0, ...]");
  s = makeLoopSchedule(3, 4, false);
  s["loops"].push_back(s["loops"][0]);
  EXPECT_SCHEDULE_ERROR(s, "loops: 2 loops: a schedule has at most one");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["step"] = 1;
  EXPECT_SCHEDULE_ERROR(s, "loops[0]: unknown key 'step'");
}

TEST(ScheduleLoop, RefusesMisplacedOrMisshapenLoopSlices) {
  json s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["begin"] = 3;
  EXPECT_SCHEDULE_ERROR(s,
                        "instructions.compute[2]: loop_slice at point 2 lies "
                        "outside the loop body (points [3, 5])");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["count"] = 2;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2].operands[0]: value 0 (%data) is "
         "[3, 4] x f32, but a slice [4] x f32 of a loop of 2 "
         "iterations takes [2, 4] x f32");
  s = makeLoopSchedule(3, 4, false);
  s["values"][5]["dtype"] = "i32";
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2].operands[0]: value 0 (%data) is "
         "[3, 4] x f32, but a slice [4] x i32 of a loop of 3 "
         "iterations takes [3, 4] x i32");
  s = makeLoopSchedule(3, 4, false);
  s["values"][5]["shape"] = {2};
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2].operands[0]: value 0 (%data) is "
         "[3, 4] x f32, but a slice [2] x f32 of a loop of 3 "
         "iterations takes [3, 2] x f32");
  s = makeLoopSchedule(3, 4, false);
  s.erase("loops");
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2]: loop_slice outside a loop: the "
         "schedule has no 'loops'");
  s = makeLoopSchedule(3, 4, false);
  s["instructions"]["compute"][2]["operands"] = {0, 0};
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2].operands: expected one tensor, got "
         "2");
}

TEST(ScheduleLoop, RefusesMalformedCarriedValues) {
  json s = makeLoopSchedule(3, 4, false);
  s["values"][8]["shape"] = {2};
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried[0].next: value 8 (%next) is [2] x f32, "
         "but value 4 (%acc) is [4] x f32: a carried value, its init "
         "and its next have one type");
  s = makeLoopSchedule(3, 4, false);
  s["values"][3]["dtype"] = "i32";
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried[0].init: value 3 (%init) is [4] x i32, "
         "but value 4 (%acc) is [4] x f32: a carried value, its init "
         "and its next have one type");
  s = makeLoopSchedule(3, 4, false);
  s["instructions"]["compute"][4]["results"] = {4};
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried[0].value: value 4 (%acc) is written by "
         "instructions.compute[4] (linalg.copy at loop.mlir:7:3): a "
         "carried value is written only by the loop");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["carried"][0]["init"] = 8;
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried[0].init: value 8 (%next) is written by "
         "instructions.compute[3] (linalg.map at loop.mlir:6:3), at "
         "point 5: the init of a carried value is written before the "
         "loop (point 2)");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["carried"][0]["init"] = 2;
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried[0].init: value 2 (%init.e) is neither an "
         "argument nor an instruction's result: the init of a "
         "carried value is written before the loop (point 2)");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["carried"][0]["next"] = 3;
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried[0].next: value 3 (%init) is written by "
         "instructions.compute[1] (linalg.fill at loop.mlir:2:3), at "
         "point 1: the next of a carried value is written in the "
         "loop body (points [2, 5])");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["carried"].push_back(s["loops"][0]["carried"][0]);
  EXPECT_SCHEDULE_ERROR(s,
                        "loops[0].carried[1].value: value 4 (%acc) is carried "
                        "twice (first at loops[0].carried[0])");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["carried"][0]["value"] = 1;
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried[0].value: value 1 (%half) is a scalar, "
         "not a tensor");
  s = makeLoopSchedule(3, 4, false);
  s["loops"][0]["carried"][0]["value"] = 0;
  s["values"][0]["shape"] = {4};
  s["instructions"]["compute"].erase(2); // the slice of %data
  s["instructions"]["compute"][2]["operands"][1] = 4;
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried[0].value: value 0 (%data) is an "
         "argument: a carried value is written only by the loop");
}

// The dataflow proof runs the body twice with the carried copies.
TEST(ScheduleLoop, RefusesAMissingWaitInTheBody) {
  json s = makeLoopSchedule(3, 4, true);
  s["instructions"]["compute"].erase(4); // compute's wait on the reduction
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[4].operands[1]: reads value 6 (%red) "
         "in iteration 1 of the loop, which instructions.comm[1] "
         "(all_reduce at loop.mlir:4:3) in iteration 1 of the loop "
         "writes on stream 'comm', without waiting on an event "
         "recorded after that write");
}

TEST(ScheduleLoop, RefusesACrossIterationRace) {
  // compute adds the slice itself and waits for the reduction only after
  // the loop: the slice of iteration 2 overwrites the bytes the reduction
  // of iteration 1 may still read.
  json s = makeLoopSchedule(3, 4, true);
  json &compute = s["instructions"]["compute"];
  compute[5]["operands"][1] = 5;
  compute[4]["point"] = 6;
  std::swap(compute[4], compute[5]);
  s["instructions"]["compute"][5]["point"] = 6;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2]: writes value 5 (%slice) (bytes "
         "[192, 208) of the device arena) in iteration 2 of the loop "
         "while instructions.comm[1] (all_reduce at loop.mlir:4:3) in "
         "iteration 1 of the loop on stream 'comm' may read value 5 "
         "(%slice) (bytes [192, 208) of the device arena): no event "
         "orders the two");
  // With one iteration there is no next one to race with.
  s["loops"][0]["count"] = 1;
  s["values"][0]["shape"] = {1, 4};
  StatusOr<Schedule> once = Schedule::parse(s.dump(), "o.json");
  EXPECT_TRUE(once.isOk()) << once.status().toString();
}

TEST(ScheduleLoop, RefusesACarriedValueReadOnAnotherStreamUnordered) {
  // comm reduces the accumulator itself, but compute's end-of-iteration
  // copy may overwrite it while the reduction reads it.
  json s = makeLoopSchedule(3, 4, true);
  json &compute = s["instructions"]["compute"];
  compute[5]["operands"][1] = 5;
  compute[4]["point"] = 6;
  std::swap(compute[4], compute[5]);
  s["instructions"]["compute"][5]["point"] = 6;
  s["instructions"]["comm"][1]["operands"] = {4};
  EXPECT_SCHEDULE_ERROR(
      s, "loops[0].carried: writes value 4 (%acc) (bytes [128, 144) "
         "of the device arena) in iteration 1 of the loop while "
         "instructions.comm[1] (all_reduce at loop.mlir:4:3) in "
         "iteration 1 of the loop on stream 'comm' may read value 4 "
         "(%acc) (bytes [128, 144) of the device arena): no event "
         "orders the two");
  // Without the wait for the slice, the read of the accumulator is not
  // ordered after its entry copy either.
  s["instructions"]["comm"].erase(0);
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].operands[0]: reads value 4 (%acc) in "
         "iteration 1 of the loop, which loops[0].carried (entry "
         "copy of the carried values) in iteration 1 of the loop "
         "writes on stream 'compute', without waiting on an event "
         "recorded after that write");
}

TEST(ScheduleLoop, RefusesAWaitBeforeTheLoopOnARecordInIt) {
  json s = makeLoopSchedule(3, 4, true);
  json &compute = s["instructions"]["compute"];
  json wait = compute[4];
  wait["point"] = 1;
  compute.insert(compute.begin() + 2, wait);
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.compute[2]: waits on event 1 before the loop, "
         "but its record at instructions.comm[2] is in the loop "
         "body");
}

TEST(Schedule, ChecksTheLaunch) {
  StatusOr<Schedule> parsed =
      Schedule::parse(makeAverageSchedule(4).dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  Status status = parsed->checkLaunch(2, 0);
  EXPECT_EQ(status.message(), "s.json: world_size: the schedule is compiled "
                              "for 4 ranks, but 2 were launched");
  EXPECT_TRUE(parsed->checkLaunch(4, 0).isOk());
  EXPECT_TRUE(parsed->checkLaunch(4, 256).isOk());
  status = parsed->checkLaunch(4, 255);
  EXPECT_EQ(status.message(),
            "s.json: memory.arenas: the plan needs 256 bytes of memory "
            "(device 256 + host 0), but --memory-limit allows 255");
}

// Quantized all-gathers (ZeRO++ qwZ, version 3): docs/ScheduleFormat.md,
// "Quantized all-gathers". Shards of 3, 2 and 6 elements in blocks of 3:
// P = 4 * (1 + 1 + 2) + 11 = 27 bytes per rank.
static json makeQuantizedSchedule() {
  return makeQuantizedGatherSchedule(2, {5, 3, 11}, "f32", 3);
}

TEST(ScheduleQuantize, AcceptsAQuantizedAllGather) {
  for (const char *dtype : {"f32", "bf16", "f16"}) {
    StatusOr<Schedule> parsed = Schedule::parse(
        makeQuantizedGatherSchedule(2, {5, 3, 11}, dtype, 3).dump(), "s.json");
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    const Instruction &inst = parsed->streams()[1].instructions[0];
    ASSERT_TRUE(inst.quantize.has_value()) << dtype;
    EXPECT_EQ(inst.quantize->bits, 8);
    EXPECT_EQ(inst.quantize->blockSize, 3);
    EXPECT_EQ(inst.quantize->packedBytes, 27);
    EXPECT_EQ(inst.quantize->packedBytes, quantizedGatherBytes({3, 2, 6}, 3));
  }
  // The staging need only hold the packed blocks, less than the flat
  // bucket's 88 bytes.
  json s = makeQuantizedSchedule();
  s["instructions"]["comm"][0]["staging"]["bytes"] = 54;
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  // An unquantized all_gather has none.
  parsed = Schedule::parse(makeBucketSchedule(2).dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_FALSE(parsed->streams()[1].instructions[0].quantize.has_value());
}

TEST(ScheduleQuantize, RejectsBadQuantizeFields) {
  auto quantized = [](const std::function<void(json &)> &edit) {
    json s = makeQuantizedSchedule();
    edit(s["instructions"]["comm"][0]["quantize"]);
    return s;
  };
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q["bits"] = 4; }),
                        "instructions.comm[0].quantize.bits: 4 is not "
                        "supported for all_gather (8)");
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q["bits"] = 16; }),
                        "instructions.comm[0].quantize.bits: 16 is not "
                        "supported for all_gather (8)");
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q["bits"] = "8"; }),
                        "instructions.comm[0].quantize.bits: expected an "
                        "integer, got \"8\"");
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q.erase("bits"); }),
                        "instructions.comm[0].quantize: missing key 'bits'");
  EXPECT_SCHEDULE_ERROR(
      quantized([](json &q) { q.erase("block_size"); }),
      "instructions.comm[0].quantize: missing key 'block_size'");
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q["signed"] = true; }),
                        "instructions.comm[0].quantize: unknown key 'signed'");
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q["block_size"] = 0; }),
                        "instructions.comm[0].quantize.block_size: 0 is out "
                        "of range [1, ...]");
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q = 8; }),
                        "instructions.comm[0].quantize: expected an object");
}

TEST(ScheduleQuantize, RejectsQuantizeWhereItDoesNotApply) {
  json s = makeQuantizedSchedule();
  s["version"] = 2;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].quantize: 'quantize' needs "
                           "version 3 (the schedule is version 2)");
  s["version"] = 1;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].quantize: 'quantize' needs "
                           "version 3 (the schedule is version 1)");
  s = makeBucketSchedule(2);
  s["version"] = 3;
  s["instructions"]["comm"][2]["quantize"] = {{"bits", 8}, {"block_size", 2}};
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[2].quantize: 'quantize' is "
                           "supported on all_gather and reduce_scatter only, "
                           "not all_reduce");
  s = makeQuantizedSchedule();
  for (json &value : s["values"])
    value["dtype"] = "i32";
  for (json &argument : s["arguments"])
    argument["bound"] = 10;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].quantize: a quantized "
                           "all_gather moves f32, bf16 or f16 tensors, but "
                           "the bucket is i32");
}

TEST(ScheduleQuantize, NeedsStagingForThePackedBlocks) {
  json s = makeQuantizedSchedule();
  s["instructions"]["comm"][0].erase("staging");
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0]: a quantized all_gather "
                           "needs a 'staging' region of 54 bytes (2 ranks of "
                           "27 packed bytes)");
  // Even a bucket of one unpadded tensor, which needs none unquantized.
  s = makeQuantizedGatherSchedule(2, {4}, "bf16", 2);
  s["instructions"]["comm"][0].erase("staging");
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0]: a quantized all_gather "
                           "needs a 'staging' region of 12 bytes (2 ranks of "
                           "6 packed bytes)");
  s = makeQuantizedSchedule();
  s["instructions"]["comm"][0]["staging"]["bytes"] = 53;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].staging.bytes: 53 bytes is "
                           "less than the quantized blocks' 54 (2 ranks of 27 "
                           "bytes)");
}

// Quantized reduce-scatters (ZeRO++ qgZ, version 3): docs/ScheduleFormat.md,
// "Quantized reduce-scatters". Tensors of 37 and 12 elements on 2 ranks:
// shards of 19 and 6, S = 25; blocks of 4: C = (4 * 5 + 10) + (4 * 2 + 3) =
// 41 bytes; one hop, M = 1: staging 4 * 25 + 2 * 2 * 41 = 264 bytes.
static json makeQuantizedScatterSchedule() {
  return makeQuantizedReduceScatterSchedule(2, {37, 12}, "f32", 4, "sum");
}

TEST(ScheduleQuantize, AcceptsAQuantizedReduceScatter) {
  for (const char *dtype : {"f32", "bf16", "f16"})
    for (const char *reduction : {"sum", "avg"}) {
      StatusOr<Schedule> parsed = Schedule::parse(
          makeQuantizedReduceScatterSchedule(2, {37, 12}, dtype, 4, reduction)
              .dump(),
          "s.json");
      ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
      const Instruction &inst = parsed->streams()[1].instructions[0];
      ASSERT_TRUE(inst.quantize.has_value()) << dtype;
      EXPECT_EQ(inst.quantize->bits, 4);
      EXPECT_EQ(inst.quantize->blockSize, 4);
      EXPECT_EQ(inst.quantize->packedBytes, 41);
      EXPECT_EQ(inst.quantize->packedBytes, quantizedChunkBytes({19, 6}, 4));
      EXPECT_EQ(inst.quantize->sumsBytes, 100);
      EXPECT_EQ(inst.staging->bytes, 264);
    }
  // The world of grid [2, 2]: G = 4, shards of 10 and 3, C = 17 + 6 = 23;
  // the first hop (a node's 2 ranks) keeps M = 2 chunks: 4 * 2 * 13 sums
  // and 2 * 4 * 23 packed bytes.
  json s = makeQuantizedReduceScatterSchedule(4, {37, 12}, "bf16", 4, "avg", 2);
  s["topology"]["grid"] = {2, 2};
  StatusOr<Schedule> parsed = Schedule::parse(s.dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  const Instruction &inst = parsed->streams()[1].instructions[0];
  EXPECT_EQ(inst.quantize->packedBytes, 23);
  EXPECT_EQ(inst.quantize->sumsBytes, 104);
  s["instructions"]["comm"][0]["staging"]["bytes"] = 287;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].staging.bytes: 287 bytes is "
                           "less than the quantized reduce_scatter's 288 (f32 "
                           "partial sums 104, packed chunks 2 * 92)");
  // Over one axis of it, one hop of 2 ranks: M = 1.
  for (int axis : {0, 1}) {
    json group = makeQuantizedScatterSchedule();
    group["world_size"] = 4;
    group["topology"]["grid"] = {2, 2};
    group["instructions"]["comm"][0]["grid_axes"] = {axis};
    parsed = Schedule::parse(group.dump(), "s.json");
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    EXPECT_EQ(parsed->streams()[1].instructions[0].quantize->sumsBytes, 100);
  }
}

TEST(ScheduleQuantize, RejectsBadQuantizedReduceScatters) {
  auto quantized = [](const std::function<void(json &)> &edit) {
    json s = makeQuantizedScatterSchedule();
    edit(s["instructions"]["comm"][0]["quantize"]);
    return s;
  };
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q["bits"] = 8; }),
                        "instructions.comm[0].quantize.bits: 8 is not "
                        "supported for reduce_scatter (4)");
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q["block_size"] = 3; }),
                        "instructions.comm[0].quantize.block_size: 3 must be "
                        "even for 4-bit blocks");
  EXPECT_SCHEDULE_ERROR(quantized([](json &q) { q["block_size"] = 0; }),
                        "instructions.comm[0].quantize.block_size: 0 is out "
                        "of range [2, ...]");
  EXPECT_SCHEDULE_ERROR(
      quantized([](json &q) { q.erase("block_size"); }),
      "instructions.comm[0].quantize: missing key 'block_size'");
  json s = makeQuantizedScatterSchedule();
  s["instructions"]["comm"][0]["reduction"] = "max";
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].quantize: a quantized "
                           "reduce_scatter reduces with sum or avg, not max");
  s = makeQuantizedScatterSchedule();
  s["version"] = 2;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].quantize: 'quantize' needs "
                           "version 3 (the schedule is version 2)");
  s = makeQuantizedScatterSchedule();
  for (json &value : s["values"])
    value["dtype"] = "i32";
  for (json &argument : s["arguments"])
    argument["bound"] = 10;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].quantize: a quantized "
                           "reduce_scatter moves f32, bf16 or f16 tensors, but "
                           "the bucket is i32");
}

TEST(ScheduleQuantize, NeedsStagingForTheSumsAndTheChunks) {
  json s = makeQuantizedScatterSchedule();
  s["instructions"]["comm"][0].erase("staging");
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0]: a quantized reduce_scatter "
                           "needs a 'staging' region of 264 bytes (f32 partial "
                           "sums 100, packed chunks 2 * 82)");
  // Even a bucket of one unpadded tensor, which needs none unquantized:
  // shards of 2, C = 4 + 1.
  s = makeQuantizedReduceScatterSchedule(2, {4}, "bf16", 2, "avg");
  s["instructions"]["comm"][0].erase("staging");
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0]: a quantized reduce_scatter "
                           "needs a 'staging' region of 28 bytes (f32 partial "
                           "sums 8, packed chunks 2 * 10)");
  s = makeQuantizedScatterSchedule();
  s["instructions"]["comm"][0]["staging"]["bytes"] = 263;
  EXPECT_SCHEDULE_ERROR(s, "instructions.comm[0].staging.bytes: 263 bytes is "
                           "less than the quantized reduce_scatter's 264 (f32 "
                           "partial sums 100, packed chunks 2 * 82)");
  // The partial sums are floats.
  s = makeQuantizedScatterSchedule();
  json &staging = s["instructions"]["comm"][0]["staging"];
  const int offset = staging["offset"].get<int>() + 2;
  staging["offset"] = offset;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].staging.offset: " + std::to_string(offset) +
             " is not a multiple of 4, as the f32 partial "
             "sums of a quantized reduce_scatter need");
}

} // namespace

// Hostile schedules: each edit below was accepted before the loader proved
// the property it breaks.

// The update of `w` written in w's own buffer (as a swap writes the new
// shard back): with its writer deleted, the buffer's bytes are the old
// value, so the update must have a writer, on whatever stream.
TEST(ScheduleHostile, AnUpdateNeedsAWriter) {
  json s = makeAverageSchedule();
  s["values"][5]["buffer"] = 0;
  json &comm = s["instructions"]["comm"];
  ASSERT_EQ(comm[1]["op"], "all_reduce");
  EXPECT_TRUE(Schedule::parse(s.dump(), "s.json").isOk());
  comm.erase(1);
  EXPECT_SCHEDULE_ERROR(s, "results[1].value: value 5 (%avg), the new value "
                           "of arguments[0] ('w'), is written by no "
                           "instruction");
  // An update that is the argument itself keeps its value.
  s["results"][1]["value"] = 0;
  EXPECT_TRUE(Schedule::parse(s.dump(), "s.json").isOk());
}

// A collective's staging region moved over the bytes of a live buffer that
// holds a value (the shard `a` it gathers).
TEST(ScheduleHostile, AStagingRegionMustNotOverlapALiveBuffer) {
  json s = makeBucketSchedule(2);
  ASSERT_TRUE(Schedule::parse(s.dump(), "s.json").isOk());
  s["instructions"]["comm"][0]["staging"]["offset"] = 0;
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].staging: bytes [0, 40) of the device arena, "
         "reserved from point 0 to 0, overlap buffer 0 'a' (buffers[0], "
         "bytes [0, 12), live [0, 3]): the collective would overwrite its "
         "values");
}

// A staging region is reserved up to the wait on the event recorded after
// its collective: a buffer holding a value that is live before that wait
// conflicts, one live only after it does not.
TEST(ScheduleHostile, AStagingRegionIsLiveUntilTheWait) {
  json s = makeAverageSchedule();
  s["memory"]["arenas"]["device"] = 320;
  s["buffers"].push_back(makeBuffer(4, "late", "activation", 256, 16, 5, 5));
  s["values"].push_back(makeTensor(6, "%late", {4}, 4));
  // The all-reduce starts at point 2; compute waits for it at point 4.
  s["instructions"]["comm"][1]["staging"] = {
      {"space", "device"}, {"offset", 256}, {"bytes", 16}};
  EXPECT_TRUE(Schedule::parse(s.dump(), "s.json").isOk());
  s["buffers"][4]["live"] = {4, 5};
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[1].staging: bytes [256, 272) of the device "
         "arena, reserved from point 2 to 4, overlap buffer 4 'late' "
         "(buffers[4], bytes [256, 272), live [4, 5]): the collective would "
         "overwrite its values");
}

// A sharded parameter's layout whose shape disagrees with its value: [0]
// or [] for a [5] tensor whose shard has 2 elements on 4 ranks.
TEST(ScheduleHostile, AParameterLayoutIsPaddedAsTheCompilerPadsIt) {
  json s = makeShardedParamSchedule(4);
  ASSERT_TRUE(Schedule::parse(s.dump(), "s.json").isOk());
  s["arguments"][0]["layout"]["shape"] = {0};
  EXPECT_SCHEDULE_ERROR(s, "arguments[0].layout.padded_numel: 8 is not the "
                           "element count 0 of shape [0] rounded up to a "
                           "multiple of world_size 4 (0), as the compiler "
                           "pads a parameter");
  s["arguments"][0]["layout"]["shape"] = json::array();
  EXPECT_SCHEDULE_ERROR(s, "arguments[0].layout.padded_numel: 8 is not the "
                           "element count 1 of shape [] rounded up to a "
                           "multiple of world_size 4 (4), as the compiler "
                           "pads a parameter");
}

// A sharded parameter's layout of shape [7] for an [8] tensor: the padding
// agrees (8 on 2 ranks), but the all-gather of its shard has the true
// layout.
TEST(ScheduleHostile, AParameterIsGatheredWithItsOwnLayout) {
  json s = makeQuantizedGatherSchedule(2, {8}, "f32", 4, {false});
  ASSERT_TRUE(Schedule::parse(s.dump(), "s.json").isOk());
  s["arguments"][0]["layout"]["shape"] = {7};
  EXPECT_SCHEDULE_ERROR(
      s, "instructions.comm[0].layouts[0]: gathers the shard of parameter "
         "'w0' (arguments[0]) with shape [8], world_size 2, padded_numel 8, "
         "but the parameter's layout has shape [7], world_size 2, "
         "padded_numel 8");
}

// zero.adam with no operands and a gradient record that reads its grad
// operand: the op table's arity is checked before anything reads one.
TEST(ScheduleHostile, ArityIsCheckedBeforeAnOperandIsRead) {
  json s = makeShardedParamSchedule(4);
  s["instructions"]["compute"] = json::array(
      {{{"op", "zero.adam"},
        {"point", 0},
        {"loc", "a.mlir:1:1"},
        {"operands", json::array()},
        {"results", json::array()},
        {"beta1", 0.9},
        {"beta2", 0.999},
        {"eps", 1e-8},
        {"weight_decay", 0.0},
        {"mode", "adamw"},
        {"bias_correction", true},
        {"amsgrad", false}}});
  s["gradients"] = json::array(
      {{{"instruction", 0}, {"param", "w"}, {"argument", 0}, {"offset", 0}}});
  EXPECT_SCHEDULE_ERROR(s, "instructions.compute[0].operands: zero.adam takes "
                           "6 to 11 operands, got 0 at a.mlir:1:1");
  // Every op of the table, in a body too.
  json map = makeAverageSchedule();
  map["instructions"]["compute"][0]["operands"] = {2};
  EXPECT_SCHEDULE_ERROR(map, "instructions.compute[0].operands: "
                             "arith.constant takes 0 operands, got 1 at "
                             "test.mlir:2:3");
  map["instructions"]["compute"][0]["operands"] = json::array();
  map["instructions"]["compute"][1]["results"] = json::array();
  EXPECT_SCHEDULE_ERROR(map, "instructions.compute[1].results: linalg.fill "
                             "takes 1 result, got 0 at test.mlir:3:3");
}

// JSON nested 100,000 deep: refused, naming the file, before the checksum's
// dump or a decoder walks it.
TEST(ScheduleHostile, DeeplyNestedJsonIsRefused) {
  const int depth = 100000;
  for (const std::string &text :
       {std::string(depth, '[') + std::string(depth, ']'),
        R"({"format": "zero-schedule", "x": )" + std::string(depth, '[') +
            std::string(depth, ']') + "}"}) {
    StatusOr<Schedule> parsed = Schedule::parse(text, "deep.json");
    ASSERT_FALSE(parsed.isOk());
    EXPECT_EQ(parsed.status().message(),
              "deep.json: not valid JSON: nested deeper than 256 levels of "
              "arrays and objects");
  }
  // As deep as allowed still parses (and is then refused as a schedule).
  StatusOr<Schedule> shallow = Schedule::parse(
      std::string(256, '[') + std::string(256, ']'), "deep.json");
  ASSERT_FALSE(shallow.isOk());
  EXPECT_EQ(shallow.status().message(),
            "deep.json: (top level): expected a JSON object");
}

/// makeAverageSchedule with a product of the parameter `m` (2x2) with
/// itself into an init that `fillValue` fills: constant, fill, matmul.
json makeZeroFilledProductSchedule(double fillValue) {
  json s = makeAverageSchedule();
  s["memory"]["arenas"]["device"] = 448;
  s["buffers"].push_back(makeBuffer(4, "m", "parameter", 256, 16, 0, 5));
  s["buffers"].push_back(makeBuffer(5, "prod", "activation", 320, 16, 1, 2));
  s["values"].push_back(makeTensor(6, "%m", {2, 2}, 4));
  s["values"].push_back(
      {{"id", 7}, {"kind", "scalar"}, {"dtype", "f32"}, {"name", "%zero"}});
  s["values"].push_back(makeTensor(8, "%e", {2, 2}, 5));
  s["values"].push_back(makeTensor(9, "%init", {2, 2}, 5));
  s["values"].push_back(makeTensor(10, "%prod", {2, 2}, 5));
  json layout = {{"shape", {2, 2}},
                 {"world_size", 1},
                 {"shard_numel", 4},
                 {"padded_numel", 4}};
  s["arguments"].push_back({{"value", 6},
                            {"kind", "param"},
                            {"name", "m"},
                            {"layout", layout},
                            {"sharded", false},
                            {"persistent", false},
                            {"init", {{"kind", "normal"}, {"std", 0.02}}}});
  json &compute = s["instructions"]["compute"];
  compute.insert(compute.begin() + 2,
                 json{{"op", "arith.constant"},
                      {"point", 1},
                      {"loc", "test.mlir:6:3"},
                      {"value", fillValue},
                      {"operands", json::array()},
                      {"results", {7}}});
  compute.insert(compute.begin() + 3, json{{"op", "linalg.fill"},
                                           {"point", 1},
                                           {"loc", "test.mlir:7:3"},
                                           {"operands", {7, 8}},
                                           {"results", {9}}});
  compute.insert(compute.begin() + 4, json{{"op", "linalg.matmul"},
                                           {"point", 2},
                                           {"loc", "test.mlir:8:3"},
                                           {"operands", {6, 6, 9}},
                                           {"results", {10}}});
  return s;
}

TEST(Schedule, MarksTheZeroFillsThatOnlyInitializeAGemm) {
  // A fill of zero that only the next GEMM reads, as its init: devices skip
  // the fill and compute the product with beta = 0.
  StatusOr<Schedule> zero =
      Schedule::parse(makeZeroFilledProductSchedule(0.0).dump(), "s.json");
  ASSERT_TRUE(zero.isOk()) << zero.status().toString();
  const std::vector<Instruction> &list = zero->streams()[0].instructions;
  ASSERT_EQ(list[3].op, "linalg.fill");
  ASSERT_EQ(list[4].op, "linalg.matmul");
  EXPECT_TRUE(list[3].skippedZeroFill);
  EXPECT_TRUE(list[4].zeroInit);
  EXPECT_FALSE(list[1].skippedZeroFill); // the loss's fill: not a GEMM's
  // -0.0 adds nothing either.
  StatusOr<Schedule> negative =
      Schedule::parse(makeZeroFilledProductSchedule(-0.0).dump(), "s.json");
  ASSERT_TRUE(negative.isOk()) << negative.status().toString();
  EXPECT_TRUE(negative->streams()[0].instructions[4].zeroInit);
  // Another value, or another reader of the init, keeps the fill.
  StatusOr<Schedule> one =
      Schedule::parse(makeZeroFilledProductSchedule(1.0).dump(), "s.json");
  ASSERT_TRUE(one.isOk()) << one.status().toString();
  EXPECT_FALSE(one->streams()[0].instructions[3].skippedZeroFill);
  EXPECT_FALSE(one->streams()[0].instructions[4].zeroInit);
  json readTwice = makeZeroFilledProductSchedule(0.0);
  readTwice["instructions"]["compute"][4]["operands"] = {9, 6, 9};
  StatusOr<Schedule> twice = Schedule::parse(readTwice.dump(), "s.json");
  ASSERT_TRUE(twice.isOk()) << twice.status().toString();
  EXPECT_FALSE(twice->streams()[0].instructions[3].skippedZeroFill);
  // Instructions between the fill and its GEMM (a cast of an operand, made
  // where the GEMM reads it) leave it skipped.
  json apart = makeZeroFilledProductSchedule(0.0);
  const int64_t between = static_cast<int64_t>(apart["values"].size());
  apart["values"].push_back({{"id", between},
                             {"kind", "scalar"},
                             {"dtype", "f32"},
                             {"name", "%between"}});
  json &apartList = apart["instructions"]["compute"];
  apartList.insert(apartList.begin() + 4, json{{"op", "arith.constant"},
                                               {"point", 1},
                                               {"loc", "test.mlir:7:9"},
                                               {"value", 2.0},
                                               {"operands", json::array()},
                                               {"results", {between}}});
  StatusOr<Schedule> gap = Schedule::parse(apart.dump(), "s.json");
  ASSERT_TRUE(gap.isOk()) << gap.status().toString();
  EXPECT_TRUE(gap->streams()[0].instructions[3].skippedZeroFill);
  EXPECT_TRUE(gap->streams()[0].instructions[5].zeroInit);
}
