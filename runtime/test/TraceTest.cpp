//===- TraceTest.cpp - Chrome/Perfetto traces of a run --------------------===//

#include "zero/runtime/Trace.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <unistd.h>

using namespace zero::runtime;
using nlohmann::json;

namespace {

std::vector<TraceEvent> sampleEvents() {
  return {
      {"matmul fc0", "compute", 0, "compute", 10.5, 3.25, {{"point", 4}}},
      {"all_gather wte.weight", "comm", 1, "comm", 2, 7.75, {}},
      {"matmul fc0", "compute", 1, "compute", 11, 3, {{"bytes", 1 << 20}}},
      {"swap out", "copy", 0, "copy", 20, 0.125, {{"buffer", "b3"}}},
      {"step 1", "step", 0, "step", 0, 40, {{"loss", 4.25}}},
  };
}

} // namespace

TEST(Trace, ChromeJsonStructure) {
  std::string pattern = ::testing::TempDir() + "zero-trace-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  std::string file = pattern + "/trace.json";
  ASSERT_TRUE(writeChromeTrace(file, sampleEvents()).isOk());

  std::ifstream in(file);
  json trace = json::parse(in);
  std::system(("rm -rf '" + pattern + "'").c_str());
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  const json &events = trace["traceEvents"];
  ASSERT_TRUE(events.is_array());

  std::map<int, std::string> processNames;
  std::map<std::pair<int, int>, std::string> threadNames;
  std::vector<json> complete;
  for (const json &event : events) {
    ASSERT_TRUE(event.contains("ph")) << event.dump();
    if (event["ph"] == "M" && event["name"] == "process_name")
      processNames[event["pid"]] = event["args"]["name"];
    else if (event["ph"] == "M" && event["name"] == "thread_name")
      threadNames[{event["pid"], event["tid"]}] = event["args"]["name"];
    else if (event["ph"] == "X")
      complete.push_back(event);
  }
  EXPECT_EQ(processNames,
            (std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}}));
  // tids by sorted stream name, the same on every rank: comm 1, compute 2,
  // copy 3, step 4; a rank names only the streams it used.
  EXPECT_EQ(threadNames,
            (std::map<std::pair<int, int>, std::string>{{{0, 2}, "compute"},
                                                        {{0, 3}, "copy"},
                                                        {{0, 4}, "step"},
                                                        {{1, 1}, "comm"},
                                                        {{1, 2}, "compute"}}));
  ASSERT_EQ(complete.size(), 5u);
  const json &first = complete[0];
  EXPECT_EQ(first["name"], "matmul fc0");
  EXPECT_EQ(first["cat"], "compute");
  EXPECT_EQ(first["pid"], 0);
  EXPECT_EQ(first["tid"], 2);
  EXPECT_EQ(first["ts"], 10.5);
  EXPECT_EQ(first["dur"], 3.25);
  EXPECT_EQ(first["args"]["point"], 4);
  EXPECT_FALSE(complete[1].contains("args")); // empty args are left out
  EXPECT_EQ(complete[1]["pid"], 1);
  EXPECT_EQ(complete[1]["tid"], 1);
  EXPECT_EQ(complete[3]["dur"], 0.125);
  EXPECT_EQ(complete[4]["args"]["loss"], 4.25); // a double stays one
}

TEST(Trace, EmptyTrace) {
  std::string pattern = ::testing::TempDir() + "zero-trace-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  std::string file = pattern + "/empty.json";
  ASSERT_TRUE(writeChromeTrace(file, {}).isOk());
  std::ifstream in(file);
  json trace = json::parse(in);
  std::system(("rm -rf '" + pattern + "'").c_str());
  EXPECT_EQ(trace["traceEvents"], json::array());
}

TEST(Trace, WriteErrors) {
  Status full = writeChromeTrace("/dev/full", sampleEvents());
  ASSERT_FALSE(full.isOk());
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message().rfind(
                "/dev/full: write failed: No space left on device", 0),
            0u)
      << full.message();
  // A device is no directory to create a file in.
  Status underDevice = writeChromeTrace("/dev/null/trace.json", sampleEvents());
  ASSERT_FALSE(underDevice.isOk());
  EXPECT_EQ(underDevice.message(), "/dev/null/trace.json: cannot create the "
                                   "directory '/dev/null': Not a directory");
}

TEST(Trace, SerializeRoundTrip) {
  std::vector<TraceEvent> events = sampleEvents();
  events[0].startUs = 1234567890.123456789; // needs every bit of a double
  StatusOr<std::vector<TraceEvent>> back =
      deserializeTraceEvents(serializeTraceEvents(events));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  ASSERT_EQ(back->size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ((*back)[i].name, events[i].name);
    EXPECT_EQ((*back)[i].category, events[i].category);
    EXPECT_EQ((*back)[i].rank, events[i].rank);
    EXPECT_EQ((*back)[i].stream, events[i].stream);
    EXPECT_EQ((*back)[i].startUs, events[i].startUs);
    EXPECT_EQ((*back)[i].durationUs, events[i].durationUs);
    EXPECT_EQ((*back)[i].args, events[i].args);
  }
  StatusOr<std::vector<TraceEvent>> none =
      deserializeTraceEvents(serializeTraceEvents({}));
  ASSERT_TRUE(none.isOk());
  EXPECT_TRUE(none->empty());
}

TEST(Trace, DeserializeErrors) {
  StatusOr<std::vector<TraceEvent>> garbage =
      deserializeTraceEvents("\xff\x01 not cbor");
  ASSERT_FALSE(garbage.isOk());
  EXPECT_NE(garbage.status().message().find("not a serialized event list"),
            std::string::npos);

  std::vector<std::uint8_t> object = json::to_cbor(json{{"a", 1}});
  StatusOr<std::vector<TraceEvent>> notArray =
      deserializeTraceEvents(std::string(object.begin(), object.end()));
  ASSERT_FALSE(notArray.isOk());
  EXPECT_NE(notArray.status().message().find("expected an array, got object"),
            std::string::npos);

  json events = json::array({{{"name", "a"},
                              {"cat", "c"},
                              {"rank", 0},
                              {"stream", "s"},
                              {"ts", 1},
                              {"dur", 2}},
                             {{"name", "b"},
                              {"cat", "c"},
                              {"rank", "zero"},
                              {"stream", "s"},
                              {"ts", 1},
                              {"dur", 2}}});
  std::vector<std::uint8_t> bytes = json::to_cbor(events);
  StatusOr<std::vector<TraceEvent>> badRank =
      deserializeTraceEvents(std::string(bytes.begin(), bytes.end()));
  ASSERT_FALSE(badRank.isOk());
  EXPECT_EQ(badRank.status().message(),
            "trace events[1]: 'rank' is missing or has the wrong type");
}
