//===- TestSchedules.h - small hand-written schedules for tests -*- C++ -*-===//
//
// Schedules small enough to check by hand, built as JSON so that each test
// can break one field.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_TESTSCHEDULES_H
#define ZERO_RUNTIME_TEST_TESTSCHEDULES_H

#include <nlohmann/json.hpp>

namespace zero::runtime::test {

using nlohmann::json;

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

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_TESTSCHEDULES_H
