//===- TestSchedules.h - small hand-written schedules for tests -*- C++ -*-===//
//
// Schedules small enough to check by hand, built as JSON so that each test
// can break one field.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_TESTSCHEDULES_H
#define ZERO_RUNTIME_TEST_TESTSCHEDULES_H

#include "zero/runtime/Schedule.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace zero::runtime::test {

using nlohmann::json;

/// The error of parsing `schedule` as "s.json", which must fail.
inline std::string errorOf(const json &schedule) {
  StatusOr<Schedule> parsed = Schedule::parse(schedule.dump(), "s.json");
  EXPECT_FALSE(parsed.isOk()) << "the schedule was accepted";
  return parsed.isOk() ? std::string() : parsed.status().message();
}

#define EXPECT_SCHEDULE_ERROR(schedule, text)                                  \
  EXPECT_EQ(::zero::runtime::test::errorOf(schedule),                          \
            std::string("s.json: ") + (text))

inline json makeBuffer(int id, const char *name, const char *category,
                       int offset, int bytes, int first, int last) {
  return {{"id", id},       {"name", name},         {"category", category},
          {"role", ""},     {"space", "device"},    {"offset", offset},
          {"bytes", bytes}, {"live", {first, last}}};
}

inline json makeTensor(int id, const char *name, json shape, int buffer,
                       const char *dtype = "f32") {
  return {{"id", id},       {"kind", "tensor"}, {"dtype", dtype},
          {"shape", shape}, {"buffer", buffer}, {"name", name}};
}

/// One parameter `w` (4 floats) and one data argument `x` (4 floats):
///   loss = 3.0 (an arith.constant filled into a rank-0 tensor),
///   w' = all_reduce avg (x): the update of `w` lives in another buffer,
///   so the executor copies it into w after the step.
/// Compute records event 0 once the loss is filled; comm waits on it, runs
/// the all-reduce and records event 1, which compute waits on at the end.
inline json makeAverageSchedule(int worldSize = 1) {
  json buffers = json::array({
      makeBuffer(0, "w", "parameter", 0, 16, 0, 5),
      makeBuffer(1, "x", "input", 64, 16, 0, 5),
      makeBuffer(2, "w.new", "communication", 128, 16, 2, 5),
      makeBuffer(3, "loss", "activation", 192, 4, 0, 5),
  });
  buffers[2]["role"] = "reduced";
  json values = json::array({
      makeTensor(0, "%w", {4}, 0),
      makeTensor(1, "%x", {4}, 1),
      {{"id", 2}, {"kind", "scalar"}, {"dtype", "f32"}, {"name", "%cst"}},
      makeTensor(3, "%empty", json::array(), 3),
      makeTensor(4, "%loss", json::array(), 3),
      makeTensor(5, "%avg", {4}, 2),
  });
  json layout = {{"shape", {4}},
                 {"world_size", worldSize},
                 {"shard_numel", (4 + worldSize - 1) / worldSize},
                 {"padded_numel", (4 + worldSize - 1) / worldSize * worldSize}};
  return {
      {"format", "zero-schedule"},
      {"version", 1},
      {"producer", "hand"},
      {"source", "test.mlir"},
      {"function", "train_step"},
      {"stage", 0},
      {"world_size", worldSize},
      {"topology", {{"grid", {worldSize}}}},
      {"memory",
       {{"alignment", 64},
        {"arenas", {{"device", 256}, {"host", 0}, {"nvme", 0}}}}},
      {"buffers", buffers},
      {"values", values},
      {"arguments",
       json::array({{{"value", 0},
                     {"kind", "param"},
                     {"name", "w"},
                     {"layout", layout},
                     {"sharded", false},
                     {"persistent", false},
                     {"init", {{"kind", "normal"}, {"std", 0.02}}}},
                    {{"value", 1}, {"kind", "data"}, {"name", "x"}}})},
      {"results",
       json::array({{{"value", 4}, {"kind", "loss"}},
                    {{"value", 5}, {"kind", "update"}, {"argument", 0}}})},
      {"streams", {"compute", "comm"}},
      {"events", 2},
      {"instructions",
       {{"compute", json::array({{{"op", "arith.constant"},
                                  {"point", 0},
                                  {"loc", "test.mlir:2:3"},
                                  {"value", 3.0},
                                  {"operands", json::array()},
                                  {"results", {2}}},
                                 {{"op", "linalg.fill"},
                                  {"point", 1},
                                  {"loc", "test.mlir:3:3"},
                                  {"operands", {2, 3}},
                                  {"results", {4}}},
                                 {{"op", "record"},
                                  {"point", 2},
                                  {"loc", "test.mlir:4:3"},
                                  {"event", 0}},
                                 {{"op", "wait"},
                                  {"point", 4},
                                  {"loc", "test.mlir:5:3"},
                                  {"event", 1}}})},
        {"comm", json::array({{{"op", "wait"},
                               {"point", 2},
                               {"loc", "test.mlir:4:3"},
                               {"event", 0}},
                              {{"op", "all_reduce"},
                               {"point", 2},
                               {"loc", "test.mlir:4:3"},
                               {"reduction", "avg"},
                               {"operands", {1}},
                               {"results", {5}}},
                              {{"op", "record"},
                               {"point", 2},
                               {"loc", "test.mlir:4:3"},
                               {"event", 1}}})}}},
  };
}

/// Collectives only, with staging and padding: two shards `a` (layout [5])
/// and `b` (layout [3]) are all-gathered in one bucket into `A` and `B`;
/// `A` and `B` are reduce-scattered (sum) into the shards `ra`, `rb` in a
/// second bucket; `A` and `B` are all-reduced (max) into `MA`, `MB`.
inline json makeBucketSchedule(int worldSize) {
  auto layoutOf = [&](int numel) {
    int shard = (numel + worldSize - 1) / worldSize;
    return json{{"shape", {numel}},
                {"world_size", worldSize},
                {"shard_numel", shard},
                {"padded_numel", shard * worldSize}};
  };
  int sa = (5 + worldSize - 1) / worldSize,
      sb = (3 + worldSize - 1) / worldSize;
  int block = sa + sb;
  // Offsets in units of 64 bytes; every buffer is live all the time.
  json buffers = json::array();
  const char *names[] = {"a", "b", "A", "B", "ra", "rb", "MA", "MB", "staging"};
  int bytes[] = {
      sa * 4, sb * 4, 20, 12, sa * 4, sb * 4, 20, 12, block * worldSize * 4};
  int offset = 0;
  for (int i = 0; i < 9; ++i) {
    buffers.push_back(
        makeBuffer(i, names[i], "communication", offset, bytes[i], 0, 3));
    offset += (bytes[i] + 63) / 64 * 64;
  }
  int stagingOffset = buffers[8]["offset"];
  json values = json::array({
      makeTensor(0, "%a", {sa}, 0),
      makeTensor(1, "%b", {sb}, 1),
      makeTensor(2, "%A", {5}, 2),
      makeTensor(3, "%B", {3}, 3),
      makeTensor(4, "%ra", {sa}, 4),
      makeTensor(5, "%rb", {sb}, 5),
      makeTensor(6, "%MA", {5}, 6),
      makeTensor(7, "%MB", {3}, 7),
  });
  json staging = {{"space", "device"},
                  {"offset", stagingOffset},
                  {"bytes", block * worldSize * 4}};
  return {
      {"format", "zero-schedule"},
      {"version", 1},
      {"stage", 3},
      {"world_size", worldSize},
      {"topology", {{"grid", {worldSize}}}},
      {"memory", {{"alignment", 64}, {"arenas", {{"device", offset}}}}},
      {"buffers", buffers},
      {"values", values},
      // The shards come from the test, as data.
      {"arguments",
       json::array({{{"value", 0}, {"kind", "data"}, {"name", "a"}},
                    {{"value", 1}, {"kind", "data"}, {"name", "b"}}})},
      {"results", json::array()},
      {"streams", {"compute", "comm"}},
      {"events", 0},
      {"instructions",
       {{"compute", json::array()},
        {"comm", json::array({{{"op", "all_gather"},
                               {"point", 0},
                               {"loc", "b.mlir:1:1"},
                               {"operands", {0, 1}},
                               {"results", {2, 3}},
                               {"layouts", {layoutOf(5), layoutOf(3)}},
                               {"staging", staging}},
                              {{"op", "reduce_scatter"},
                               {"point", 1},
                               {"loc", "b.mlir:2:1"},
                               {"reduction", "sum"},
                               {"operands", {2, 3}},
                               {"results", {4, 5}},
                               {"layouts", {layoutOf(5), layoutOf(3)}},
                               {"staging", staging}},
                              {{"op", "all_reduce"},
                               {"point", 2},
                               {"loc", "b.mlir:3:1"},
                               {"reduction", "max"},
                               {"operands", {2, 3}},
                               {"results", {6, 7}},
                               {"staging", staging}}})}}},
  };
}

/// makeBucketSchedule's collectives over groups of ranks: version 3, the
/// world of `grid` (topology.grid), every collective over `axes` (its
/// layouts cut for the group of those axes' ranks).
inline json makeGridBucketSchedule(const std::vector<int> &grid,
                                   const std::vector<int> &axes) {
  int world = 1, group = 1;
  for (int size : grid)
    world *= size;
  for (int axis : axes)
    group *= grid[axis];
  json s = makeBucketSchedule(group);
  s["version"] = 3;
  s["world_size"] = world;
  s["topology"]["grid"] = grid;
  for (json &inst : s["instructions"]["comm"])
    inst["grid_axes"] = axes;
  return s;
}

/// makeGridBucketSchedule on four ranks of grid [2, 2].
inline json makeGroupBucketSchedule(const std::vector<int> &axes) {
  return makeGridBucketSchedule({2, 2}, axes);
}

/// No instructions, the state of one stage-3 parameter `w` ([5] f32, normal
/// init) and its `exp_avg`, on 4 ranks of grid [2, 2] (version 3): `w` cut
/// across `layoutRanks` ranks, 4 (the world) or 2 (one node's ranks,
/// replicated across the nodes, as MiCS cuts it).
inline json makeShardedParamSchedule(int layoutRanks) {
  const int shard = (5 + layoutRanks - 1) / layoutRanks;
  json buffers = json::array({
      makeBuffer(0, "w", "parameter", 0, shard * 4, 0, 0),
      makeBuffer(1, "w.exp_avg", "optimizer_state", 64, shard * 4, 0, 0),
  });
  json values = json::array(
      {makeTensor(0, "%w", {shard}, 0), makeTensor(1, "%exp_avg", {shard}, 1)});
  json layout = {{"shape", {5}},
                 {"world_size", layoutRanks},
                 {"shard_numel", shard},
                 {"padded_numel", shard * layoutRanks}};
  return {
      {"format", "zero-schedule"},
      {"version", 3},
      {"stage", 3},
      {"world_size", 4},
      {"topology", {{"grid", {2, 2}}}},
      {"memory", {{"alignment", 64}, {"arenas", {{"device", 128}}}}},
      {"buffers", buffers},
      {"values", values},
      {"arguments", json::array({{{"value", 0},
                                  {"kind", "param"},
                                  {"name", "w"},
                                  {"layout", layout},
                                  {"sharded", true},
                                  {"persistent", false},
                                  {"init", {{"kind", "normal"}, {"std", 1.0}}}},
                                 {{"value", 1},
                                  {"kind", "state"},
                                  {"state", "exp_avg"},
                                  {"param", "w"},
                                  {"init", {{"kind", "zeros"}}}}})},
      {"results", json::array()},
      {"streams", {"compute"}},
      {"events", 0},
      {"instructions", {{"compute", json::array()}}},
  };
}

/// A loop (version 2) that sums the `count` rows of a data tensor `data`
/// ([count, n] f32) into a carried accumulator `acc` that starts at 0.5:
///   init = fill(0.5); loop: slice = loop_slice(data); next = acc + x;
///   out = copy(acc) after the loop.
/// With `twoStreams`, x is the all-reduce (sum) of the slice on `comm`:
/// compute records event 0 after the slice, comm waits on it, reduces into
/// `red` and records event 1, which compute waits on before the add; else x
/// is the slice. Points: 0 constant, 1 fill, 2 slice, 3 record (and comm),
/// 4 wait, 5 add, 6 copy; the loop is [2, 5].
inline json makeLoopSchedule(int count, int n, bool twoStreams,
                             int worldSize = 1) {
  json buffers = json::array();
  const char *names[] = {"data", "init", "acc", "slice", "next", "red", "out"};
  int offset = 0;
  for (int i = 0; i < 7; ++i) {
    int bytes = (i == 0 ? count : 1) * n * 4;
    buffers.push_back(makeBuffer(i, names[i], i == 0 ? "input" : "activation",
                                 offset, bytes, 0, 7));
    offset += (bytes + 63) / 64 * 64;
  }
  auto scalar = [](int id, const char *name) {
    return json{
        {"id", id}, {"kind", "scalar"}, {"dtype", "f32"}, {"name", name}};
  };
  json values = json::array({
      makeTensor(0, "%data", {count, n}, 0),
      scalar(1, "%half"),
      makeTensor(2, "%init.e", {n}, 1),
      makeTensor(3, "%init", {n}, 1),
      makeTensor(4, "%acc", {n}, 2),
      makeTensor(5, "%slice", {n}, 3),
      makeTensor(6, "%red", {n}, 5),
      makeTensor(7, "%next.e", {n}, 4),
      makeTensor(8, "%next", {n}, 4),
      makeTensor(9, "%out.e", {n}, 6),
      makeTensor(10, "%out", {n}, 6),
      scalar(11, "%a"),
      scalar(12, "%b"),
      scalar(13, "%c"),
      scalar(14, "%sum"),
  });
  auto inst = [](const char *op, int point, json operands, json results) {
    return json{{"op", op},
                {"point", point},
                {"loc", "loop.mlir:" + std::to_string(point + 1) + ":3"},
                {"operands", operands},
                {"results", results}};
  };
  auto sync = [](const char *op, int point, int event) {
    return json{{"op", op},
                {"point", point},
                {"loc", "loop.mlir:4:3"},
                {"event", event}};
  };
  json constant = inst("arith.constant", 0, json::array(), {1});
  constant["value"] = 0.5;
  json add = inst("linalg.map", 5, {4, twoStreams ? 6 : 5, 7}, {8});
  add["body"] = {
      {"arguments", {11, 12, 13}},
      {"ops",
       {{{"op", "arith.addf"}, {"operands", {11, 12}}, {"results", {14}}}}},
      {"yield", {14}}};
  json compute = json::array({constant, inst("linalg.fill", 1, {1, 2}, {3}),
                              inst("loop_slice", 2, {0}, {5})});
  if (twoStreams) {
    compute.push_back(sync("record", 3, 0));
    compute.push_back(sync("wait", 4, 1));
  }
  compute.push_back(add);
  compute.push_back(inst("linalg.copy", 6, {4, 9}, {10}));
  json instructions = {{"compute", compute}};
  if (twoStreams) {
    json reduce = inst("all_reduce", 3, {5}, {6});
    reduce["loc"] = "loop.mlir:4:3";
    reduce["reduction"] = "sum";
    instructions["comm"] =
        json::array({sync("wait", 3, 0), reduce, sync("record", 3, 1)});
  }
  return {
      {"format", "zero-schedule"},
      {"version", 2},
      {"source", "loop.mlir"},
      {"stage", 0},
      {"world_size", worldSize},
      {"topology", {{"grid", {worldSize}}}},
      {"memory", {{"alignment", 64}, {"arenas", {{"device", offset}}}}},
      {"buffers", buffers},
      {"values", values},
      {"arguments",
       json::array({{{"value", 0}, {"kind", "data"}, {"name", "data"}}})},
      {"results", json::array()},
      {"streams", twoStreams ? json{"compute", "comm"} : json{"compute"}},
      {"events", twoStreams ? 2 : 0},
      {"loops",
       json::array(
           {{{"count", count},
             {"begin", 2},
             {"end", 5},
             {"carried",
              json::array({{{"value", 4}, {"init", 3}, {"next", 8}}})}}})},
      {"instructions", instructions},
  };
}

/// A quantized all_gather (qwZ, version 3) alone: data shards `t0`, `t1`,
/// ... of `numels` elements of `dtype` (f32, bf16, f16), cut across
/// `worldSize` ranks with padding, gathered into `T0`, `T1`, ... (value ids
/// i and count + i) in one bucket with "quantize" {bits 8, block_size
/// `blockSize`}. The staging is sized as the compiler sizes it, as for the
/// unquantized flat bucket (at least the packed blocks' for `blockSize` >=
/// 4; see quantizedGatherBytes).
///
/// With `quantizedParams` (one flag per operand), operand i is instead the
/// sharded parameter `w<i>` (normal(0, 1)), stored block-quantized in
/// blocks of `blockSize` where its flag is set
/// (zero_quantized_nontrainable_weights).
inline json
makeQuantizedGatherSchedule(int worldSize, const std::vector<int> &numels,
                            const char *dtype, int blockSize,
                            const std::vector<bool> &quantizedParams = {}) {
  const int width = std::string(dtype) == "f32" ? 4 : 2;
  const int count = static_cast<int>(numels.size());
  json buffers = json::array(), values = json::array(),
       arguments = json::array(), layouts = json::array();
  int offset = 0, bucket = 0;
  auto add = [&](const std::string &name, int numel, bool quantized) {
    int id = static_cast<int>(buffers.size());
    int bytes = quantized ? 4 * ((numel + blockSize - 1) / blockSize) + numel
                          : numel * width;
    buffers.push_back(
        makeBuffer(id, name.c_str(), "communication", offset, bytes, 0, 1));
    values.push_back(makeTensor(id, ("%" + name).c_str(), {numel}, id, dtype));
    if (quantized)
      values.back()["quantized"] = {{"bits", 8}, {"block_size", blockSize}};
    offset += (bytes + 63) / 64 * 64;
  };
  for (int i = 0; i < count; ++i) {
    int shard = (numels[i] + worldSize - 1) / worldSize;
    json layout = {{"shape", {numels[i]}},
                   {"world_size", worldSize},
                   {"shard_numel", shard},
                   {"padded_numel", shard * worldSize}};
    if (quantizedParams.empty()) {
      add("t" + std::to_string(i), shard, false);
      arguments.push_back(
          {{"value", i}, {"kind", "data"}, {"name", "t" + std::to_string(i)}});
    } else {
      add("w" + std::to_string(i), shard, quantizedParams[i]);
      arguments.push_back({{"value", i},
                           {"kind", "param"},
                           {"name", "w" + std::to_string(i)},
                           {"layout", layout},
                           {"sharded", true},
                           {"persistent", false},
                           {"init", {{"kind", "normal"}, {"std", 1.0}}}});
    }
    layouts.push_back(layout);
    bucket += shard;
  }
  for (int i = 0; i < count; ++i)
    add("T" + std::to_string(i), numels[i], false);
  json operands = json::array(), results = json::array();
  for (int i = 0; i < count; ++i) {
    operands.push_back(i);
    results.push_back(count + i);
  }
  // Room for the larger of the flat bucket and the packed blocks, so that
  // small block sizes load too.
  int packed = 0;
  for (const json &layout : layouts) {
    int shard = layout["shard_numel"];
    packed += 4 * ((shard + blockSize - 1) / blockSize) + shard;
  }
  int stagingBytes = std::max(bucket * width, packed) * worldSize;
  buffers.push_back(makeBuffer(2 * count, "staging", "communication", offset,
                               stagingBytes, 0, 1));
  json staging = {
      {"space", "device"}, {"offset", offset}, {"bytes", stagingBytes}};
  offset += (stagingBytes + 63) / 64 * 64;
  return {
      {"format", "zero-schedule"},
      {"version", 3},
      {"stage", 3},
      {"world_size", worldSize},
      {"topology", {{"grid", {worldSize}}}},
      {"memory", {{"alignment", 64}, {"arenas", {{"device", offset}}}}},
      {"buffers", buffers},
      {"values", values},
      {"arguments", arguments},
      {"results", json::array()},
      {"streams", {"compute", "comm"}},
      {"events", 0},
      {"instructions",
       {{"compute", json::array()},
        {"comm", json::array({{{"op", "all_gather"},
                               {"point", 0},
                               {"loc", "q.mlir:1:1"},
                               {"operands", operands},
                               {"results", results},
                               {"layouts", layouts},
                               {"staging", staging},
                               {"quantize",
                                {{"bits", 8}, {"block_size", blockSize}}}}})}}},
  };
}

/// P, the bytes of one rank's packed block of a quantized all-gather of
/// shards of `shards` elements: 4 bytes per block (its f32 scale) and one
/// per element.
inline int64_t quantizedGatherBytes(const std::vector<int64_t> &shards,
                                    int64_t blockSize) {
  int64_t bytes = 0;
  for (int64_t shard : shards)
    bytes += 4 * ((shard + blockSize - 1) / blockSize) + shard;
  return bytes;
}

/// C, the bytes of one packed chunk of a quantized reduce-scatter of shards
/// of `shards` elements: 4 bytes per block (its f32 scale) and half a byte
/// per element, rounded up per operand.
inline int64_t quantizedChunkBytes(const std::vector<int64_t> &shards,
                                   int64_t blockSize) {
  int64_t bytes = 0;
  for (int64_t shard : shards)
    bytes += 4 * ((shard + blockSize - 1) / blockSize) + (shard + 1) / 2;
  return bytes;
}

/// A quantized reduce_scatter (qgZ, version 3) alone: data tensors `T0`,
/// `T1`, ... of `numels` elements of `dtype` (f32, bf16, f16), reduced
/// (`reduction`) over a group of `groupSize` ranks into their shards `t0`,
/// `t1`, ... (value ids i and count + i, padded to a multiple of the group)
/// in one bucket with "quantize" {bits 4, block_size `blockSize`}. The
/// staging is exactly 4 * M * S + 2 * G * C bytes, M = `keptChunks` (the
/// chunks kept after the first hop). Topology [groupSize]: callers set
/// world_size, topology.grid and grid_axes for other groups.
inline json makeQuantizedReduceScatterSchedule(int groupSize,
                                               const std::vector<int> &numels,
                                               const char *dtype, int blockSize,
                                               const char *reduction,
                                               int keptChunks = 1) {
  const int width = std::string(dtype) == "f32" ? 4 : 2;
  const int count = static_cast<int>(numels.size());
  json buffers = json::array(), values = json::array(),
       arguments = json::array(), layouts = json::array();
  int offset = 0, bucket = 0;
  std::vector<int64_t> shards;
  auto add = [&](const std::string &name, int numel) {
    int id = static_cast<int>(buffers.size());
    buffers.push_back(makeBuffer(id, name.c_str(), "communication", offset,
                                 numel * width, 0, 1));
    values.push_back(makeTensor(id, ("%" + name).c_str(), {numel}, id, dtype));
    offset += (numel * width + 63) / 64 * 64;
  };
  for (int i = 0; i < count; ++i) {
    add("T" + std::to_string(i), numels[i]);
    arguments.push_back(
        {{"value", i}, {"kind", "data"}, {"name", "T" + std::to_string(i)}});
  }
  for (int i = 0; i < count; ++i) {
    int shard = (numels[i] + groupSize - 1) / groupSize;
    add("t" + std::to_string(i), shard);
    layouts.push_back({{"shape", {numels[i]}},
                       {"world_size", groupSize},
                       {"shard_numel", shard},
                       {"padded_numel", shard * groupSize}});
    bucket += shard;
    shards.push_back(shard);
  }
  json operands = json::array(), results = json::array();
  for (int i = 0; i < count; ++i) {
    operands.push_back(i);
    results.push_back(count + i);
  }
  const int stagingBytes =
      4 * keptChunks * bucket +
      2 * groupSize * static_cast<int>(quantizedChunkBytes(shards, blockSize));
  buffers.push_back(makeBuffer(2 * count, "staging", "communication", offset,
                               stagingBytes, 0, 1));
  json staging = {
      {"space", "device"}, {"offset", offset}, {"bytes", stagingBytes}};
  offset += (stagingBytes + 63) / 64 * 64;
  return {
      {"format", "zero-schedule"},
      {"version", 3},
      {"stage", 3},
      {"world_size", groupSize},
      {"topology", {{"grid", {groupSize}}}},
      {"memory", {{"alignment", 64}, {"arenas", {{"device", offset}}}}},
      {"buffers", buffers},
      {"values", values},
      {"arguments", arguments},
      {"results", json::array()},
      {"streams", {"compute", "comm"}},
      {"events", 0},
      {"instructions",
       {{"compute", json::array()},
        {"comm", json::array({{{"op", "reduce_scatter"},
                               {"point", 0},
                               {"loc", "q.mlir:2:1"},
                               {"reduction", reduction},
                               {"operands", operands},
                               {"results", results},
                               {"layouts", layouts},
                               {"staging", staging},
                               {"quantize",
                                {{"bits", 4}, {"block_size", blockSize}}}}})}}},
  };
}

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_TESTSCHEDULES_H
