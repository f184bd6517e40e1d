//===- ExecutorTest.cpp - running hand-written schedules ------------------===//

#include "zero/runtime/Executor.h"
#include "zero/runtime/DataSource.h"
#include "zero/runtime/Init.h"
#include "zero/runtime/zero_runtime.h"

#include "TempDirTest.h"
#include "TestSchedules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <unistd.h>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

std::shared_ptr<const Schedule> parse(const json &schedule) {
  StatusOr<Schedule> parsed = Schedule::parse(schedule.dump(), "t.json");
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  if (!parsed.isOk())
    return nullptr;
  return std::make_shared<const Schedule>(std::move(*parsed));
}

std::unique_ptr<Executor> create(std::shared_ptr<const Schedule> schedule,
                                 Communicator &comm,
                                 ExecutorOptions options = {}) {
  StatusOr<std::unique_ptr<Executor>> executor = Executor::create(
      std::move(schedule), createHostDevice(), comm, std::move(options));
  EXPECT_TRUE(executor.isOk()) << executor.status().toString();
  return executor.isOk() ? std::move(*executor) : nullptr;
}

/// makeBucketSchedule(1)'s inputs: A = {1..5}, B = {-1, -2, -3}.
void fillBucketInputs(Executor &executor) {
  float *a = static_cast<float *>(executor.tensorData(0).data);
  float *b = static_cast<float *>(executor.tensorData(1).data);
  for (int i = 0; i < 5; ++i)
    a[i] = 1.0f + i;
  for (int i = 0; i < 3; ++i)
    b[i] = -1.0f - i;
}

std::vector<float> floatsOf(TensorRef tensor) {
  const float *data = static_cast<const float *>(tensor.data);
  return std::vector<float>(data, data + tensor.numel);
}

/// x = {1, 2, 3, 4} + 10 * step.
Status fillX(const ArgumentInfo &arg, int64_t step, TensorRef tensor) {
  EXPECT_EQ(arg.name, "x");
  for (int64_t i = 0; i < tensor.numel; ++i)
    static_cast<float *>(tensor.data)[i] = 1.0f + i + 10.0f * step;
  return Status::ok();
}

TEST(Executor, RunsStepsAndCopiesUpdates) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  std::unique_ptr<Executor> executor =
      create(parse(makeAverageSchedule()), *comm);
  ASSERT_TRUE(executor);
  EXPECT_EQ(executor->memory().current(), 256); // the device arena
  for (int step = 1; step <= 3; ++step) {
    StatusOr<StepStats> stats = executor->step(fillX);
    ASSERT_TRUE(stats.isOk()) << stats.status().toString();
    EXPECT_EQ(stats->step, step);
    EXPECT_EQ(stats->loss, 3.0);
    EXPECT_EQ(stats->meanLoss, 3.0);
    EXPECT_EQ(stats->peakBytes, 256);
    EXPECT_EQ(stats->bytesSent, 0);
    EXPECT_EQ(stats->bytesReceived, 0);
    // w' = avg(x) over one rank = x, copied into w's buffer.
    float base = 10.0f * (step - 1);
    EXPECT_EQ(floatsOf(executor->argumentData(0)),
              (std::vector<float>{base + 1, base + 2, base + 3, base + 4}));
  }
  EXPECT_EQ(executor->stepsTaken(), 3);
}

class ExecutorFiles : public test::TempDirTest {};

TEST_F(ExecutorFiles, InitializesAndExportsParameters) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  std::unique_ptr<Executor> executor =
      create(parse(makeAverageSchedule()), *comm);
  ASSERT_TRUE(executor);
  InitOptions init;
  init.seed = 7;
  ASSERT_TRUE(executor->initialize(init).isOk());
  std::vector<float> expected(4);
  fillNormal(7, "w", 0, 4, 0.02f, expected.data());
  EXPECT_EQ(floatsOf(executor->argumentData(0)), expected);

  // From full parameters by name; errors name the tensor and the file.
  std::vector<NamedTensor> given = {{"w", {4}, {5, 6, 7, 8}}};
  const std::string file = path("given.safetensors");
  std::optional<SafetensorsReader> reader;
  auto initializeFrom = [&](const std::vector<NamedTensor> &tensors) {
    EXPECT_TRUE(writeSafetensors(file, tensors).isOk());
    StatusOr<SafetensorsReader> opened = SafetensorsReader::open(file);
    EXPECT_TRUE(opened.isOk()) << opened.status().toString();
    reader.emplace(std::move(*opened));
    init.parameters = &*reader;
    return executor->initialize(init);
  };
  ASSERT_TRUE(initializeFrom(given).isOk());
  EXPECT_EQ(floatsOf(executor->argumentData(0)),
            (std::vector<float>{5, 6, 7, 8}));
  StatusOr<std::vector<NamedTensor>> exported = executor->exportParameters();
  ASSERT_TRUE(exported.isOk());
  ASSERT_EQ(exported->size(), 1u);
  EXPECT_EQ((*exported)[0].name, "w");
  EXPECT_EQ((*exported)[0].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ((*exported)[0].data, (std::vector<float>{5, 6, 7, 8}));

  // The first non-finite element, by flat index and index.
  given[0].data = {5, 6, -std::numeric_limits<float>::infinity(),
                   std::numeric_limits<float>::quiet_NaN()};
  EXPECT_EQ(initializeFrom(given).message(),
            file + ": tensor 'w' holds -inf at element 2 (index "
                   "[2]): initial weights must be finite");
  given[0].data = {5, 6, 7, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_EQ(initializeFrom(given).message(),
            file + ": tensor 'w' holds nan at element 3 (index "
                   "[3]): initial weights must be finite");

  given[0].shape = {2, 2};
  EXPECT_EQ(initializeFrom(given).message(),
            file + ": tensor 'w' has shape [2, 2], but the "
                   "parameter of t.json has shape [4]");
  given[0].name = "v";
  EXPECT_EQ(initializeFrom(given).message(),
            file + ": no tensor 'w', a parameter of t.json");
}

TEST(Executor, PacksBucketsThroughTheStagingBuffer) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  std::shared_ptr<const Schedule> schedule = parse(makeBucketSchedule(1));
  ASSERT_TRUE(schedule);
  std::unique_ptr<Executor> executor = create(schedule, *comm);
  ASSERT_TRUE(executor);
  fillBucketInputs(*executor);
  ASSERT_TRUE(executor->step().isOk());
  std::vector<float> fullA = {1, 2, 3, 4, 5}, fullB = {-1, -2, -3};
  for (int id : {2, 4, 6})
    EXPECT_EQ(floatsOf(executor->tensorData(id)), fullA) << "value " << id;
  for (int id : {3, 5, 7})
    EXPECT_EQ(floatsOf(executor->tensorData(id)), fullB) << "value " << id;
}

TEST(Executor, RecordsATraceEventPerInstruction) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  ExecutorOptions options;
  options.trace = true;
  std::unique_ptr<Executor> executor =
      create(parse(makeAverageSchedule()), *comm, options);
  ASSERT_TRUE(executor);
  ASSERT_TRUE(executor->step(fillX).isOk());
  std::vector<TraceEvent> events = executor->takeTraceEvents();
  std::vector<std::string> compute, communication, steps;
  for (const TraceEvent &event : events) {
    EXPECT_GE(event.durationUs, 0);
    (event.stream == "compute" ? compute
     : event.stream == "comm"  ? communication
                               : steps)
        .push_back(event.name);
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"step 1"}));
  // Records take no time and leave no event.
  EXPECT_EQ(compute, (std::vector<std::string>{"arith.constant", "linalg.fill",
                                               "wait 1"}));
  EXPECT_EQ(communication, (std::vector<std::string>{"wait 0", "all_reduce"}));
  EXPECT_TRUE(executor->takeTraceEvents().empty());
}

TEST(Executor, AFailureOnComputeReleasesTheCommStream) {
  // A free of the loss buffer before the fill that writes it: in debug mode
  // the fill fails, so event 0 is never recorded and comm, waiting on it,
  // must stop instead of hanging.
  json s = makeAverageSchedule();
  json free = {
      {"op", "free"}, {"point", 1}, {"loc", "test.mlir:9:1"}, {"values", {3}}};
  s["instructions"]["compute"].insert(s["instructions"]["compute"].begin() + 1,
                                      free);
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  ExecutorOptions options;
  options.debug = true;
  std::unique_ptr<Executor> executor = create(parse(s), *comm, options);
  ASSERT_TRUE(executor);
  StatusOr<StepStats> stats = executor->step(fillX);
  ASSERT_FALSE(stats.isOk());
  EXPECT_EQ(stats.status().message(),
            "t.json: instructions.compute[2] (linalg.fill at test.mlir:3:3): "
            "operand 1 (value 3 (%empty)) uses buffer 3 'loss' after its free "
            "at instructions.compute[1] (free at test.mlir:9:1) (step 1)");
  EXPECT_EQ(executor->step(fillX).status().message(),
            "t.json: an earlier step failed; the rank's state is undefined");

  // Without debug mode the free is only a hint of the plan.
  std::unique_ptr<Executor> plain = create(parse(s), *comm);
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->step(fillX).isOk());
}

/// A world of one whose all-reduce fails, to stop the comm stream, after
/// `succeeding` all-reduces that work.
class FailingCommunicator final : public Communicator {
public:
  explicit FailingCommunicator(int succeeding = 0) : succeeding(succeeding) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "failing"; }
  Status barrier(const CollectiveContext &) override { return Status::ok(); }
  StatusOr<std::vector<std::string>>
  gatherBytes(const std::string &bytes, const CollectiveContext &) override {
    return std::vector<std::string>{bytes};
  }
  Status broadcastBytes(std::string &, int,
                        const CollectiveContext &) override {
    return Status::ok();
  }

protected:
  Status doAllGather(const void *, void *, int64_t, DType,
                     const CollectiveContext &) override {
    return Status::ok();
  }
  Status doReduceScatter(const void *, void *, int64_t, DType, ReduceOp,
                         const CollectiveContext &) override {
    return Status::ok();
  }
  Status doAllReduce(const void *in, void *out, int64_t count, DType dtype,
                     ReduceOp, const CollectiveContext &context) override {
    if (succeeding-- > 0) {
      std::memmove(out, in, count * getDTypeWidth(dtype));
      return Status::ok();
    }
    return ZERO_ERROR(kUnavailable, "rank 0: " + context.what + " failed");
  }
  StatusOr<std::unique_ptr<Communicator>>
  doSplit(int, int, const CollectiveContext &context) override {
    return ZERO_ERROR(kFailedPrecondition,
                      "failing: no groups (" + context.what + ")");
  }

private:
  int succeeding;
};

TEST(Executor, AFailureOnCommReleasesTheComputeStream) {
  FailingCommunicator comm;
  std::unique_ptr<Executor> executor =
      create(parse(makeAverageSchedule()), comm);
  ASSERT_TRUE(executor);
  StatusOr<StepStats> stats = executor->step(fillX);
  ASSERT_FALSE(stats.isOk());
  EXPECT_EQ(stats.status().message(),
            "rank 0: all_reduce of bucket at test.mlir:4:3 (step 1) failed");
}

TEST(Executor, SelfCommunicatorSplitsIntoItself) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  comm->setRanksPerNode(1);
  StatusOr<std::unique_ptr<Communicator>> group =
      comm->split(0, 0, {"split", nullptr});
  ASSERT_TRUE(group.isOk()) << group.status().toString();
  EXPECT_EQ((*group)->rank(), 0);
  EXPECT_EQ((*group)->size(), 1);
  float in[2] = {1, 2}, out[2] = {};
  ASSERT_TRUE(
      (*group)->allGather(in, out, 2, DType::F32, {"ag", nullptr}).isOk());
  EXPECT_EQ(out[1], 2.0f);
  CommunicationCounters counters = (*group)->counters();
  EXPECT_EQ(counters.calls, 1);
  EXPECT_EQ(counters.bytesSent, 0);
  EXPECT_EQ(comm->counters().calls, 0);
}

// One rank on grid [1]: every collective over axis 0 runs on a group of one.
TEST(Executor, RunsCollectivesOverAGroupOfOne) {
  json s = makeBucketSchedule(1);
  s["version"] = 3;
  for (json &inst : s["instructions"]["comm"])
    inst["grid_axes"] = {0};
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  std::unique_ptr<Executor> executor = create(parse(s), *comm);
  ASSERT_TRUE(executor);
  fillBucketInputs(*executor);
  StatusOr<StepStats> stats = executor->step();
  ASSERT_TRUE(stats.isOk()) << stats.status().toString();
  EXPECT_EQ(floatsOf(executor->tensorData(2)),
            (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(floatsOf(executor->tensorData(4)),
            (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(floatsOf(executor->tensorData(7)),
            (std::vector<float>{-1, -2, -3}));
  EXPECT_EQ(stats->bytesSent, 0);
}

// A communicator that makes no groups (the CUDA ones) fails the first step
// (where the groups are made, after every rank's set-up), naming the
// schedule and the axes.
TEST(Executor, ReportsACommunicatorWithoutGroups) {
  json s = makeAverageSchedule();
  s["version"] = 3;
  s["instructions"]["comm"][1]["grid_axes"] = {0};
  FailingCommunicator comm;
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(parse(s), createHostDevice(), comm);
  ASSERT_TRUE(executor.isOk()) << executor.status().toString();
  StatusOr<StepStats> step = (*executor)->step();
  ASSERT_FALSE(step.isOk());
  EXPECT_EQ(step.status().message(), "t.json: failing: no groups "
                                     "(splitting the group over "
                                     "grid_axes [0])");
}

TEST(Executor, ChecksTheLaunch) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  StatusOr<std::unique_ptr<Executor>> executor = Executor::create(
      parse(makeAverageSchedule(2)), createHostDevice(), *comm);
  ASSERT_FALSE(executor.isOk());
  EXPECT_EQ(executor.status().message(),
            "t.json: world_size: the schedule is compiled for 2 ranks, but 1 "
            "was launched");
  ExecutorOptions options;
  options.memoryLimit = 100;
  executor = Executor::create(parse(makeAverageSchedule()), createHostDevice(),
                              *comm, options);
  ASSERT_FALSE(executor.isOk());
  EXPECT_EQ(executor.status().message(),
            "t.json: memory.arenas: the plan needs 256 bytes of memory "
            "(device 256 + host 0), but --memory-limit allows 100");
}

/// Loops: the data of makeLoopSchedule, row i element j, varied enough that
/// the order of the additions shows in the rounding.
float loopData(int64_t step, int64_t i, int64_t j) {
  return 1.0f / (3.0f + i) + 0.37f * j - 0.011f * i * i + 100.0f * step;
}

Status fillLoopData(const ArgumentInfo &, int64_t step, TensorRef tensor) {
  const int64_t n = (*tensor.shape)[1];
  for (int64_t k = 0; k < tensor.numel; ++k)
    static_cast<float *>(tensor.data)[k] = loopData(step, k / n, k % n);
  return Status::ok();
}

/// acc = 0.5, then acc = acc + row i for i in 0 .. count-1, in float.
std::vector<float> expectedLoopSum(int64_t step, int count, int n) {
  std::vector<float> acc(n, 0.5f);
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < n; ++j)
      acc[j] = acc[j] + loopData(step, i, j);
  return acc;
}

/// Whether two float vectors are the same bits.
::testing::AssertionResult sameBits(const std::vector<float> &a,
                                    const std::vector<float> &b) {
  if (a.size() == b.size() &&
      std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0)
    return ::testing::AssertionSuccess();
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    failure << a[i] << " vs " << b[i] << "; ";
  return failure;
}

TEST(ExecutorLoop, SumsSlicesIntoACarriedAccumulator) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  for (int count : {3, 64}) {
    json s = makeLoopSchedule(count, 4, false);
    // A free of the slice in the body: debug mode must not take iteration
    // 2's slice for a use after iteration 1's free.
    s["instructions"]["compute"].insert(
        s["instructions"]["compute"].begin() + 4, json{{"op", "free"},
                                                       {"point", 5},
                                                       {"loc", "loop.mlir:6:9"},
                                                       {"values", {5}}});
    ExecutorOptions options;
    options.debug = true;
    std::unique_ptr<Executor> executor = create(parse(s), *comm, options);
    ASSERT_TRUE(executor);
    for (int step = 0; step < 2; ++step) {
      StatusOr<StepStats> stats = executor->step(fillLoopData);
      ASSERT_TRUE(stats.isOk()) << stats.status().toString();
      std::vector<float> expected = expectedLoopSum(step, count, 4);
      EXPECT_TRUE(sameBits(floatsOf(executor->tensorData(4)), expected))
          << "count " << count << " step " << step;
      EXPECT_TRUE(sameBits(floatsOf(executor->tensorData(10)), expected))
          << "count " << count << " step " << step;
    }
  }
}

TEST(ExecutorLoop, RunsATwoStreamLoopWithEventsPerIteration) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  ExecutorOptions options;
  options.trace = true;
  const int count = 5;
  std::unique_ptr<Executor> executor =
      create(parse(makeLoopSchedule(count, 4, true)), *comm, options);
  ASSERT_TRUE(executor);
  for (int step = 0; step < 3; ++step) {
    StatusOr<StepStats> stats = executor->step(fillLoopData);
    ASSERT_TRUE(stats.isOk()) << stats.status().toString();
    // The all-reduce over one rank is the slice itself.
    EXPECT_TRUE(sameBits(floatsOf(executor->tensorData(10)),
                         expectedLoopSum(step, count, 4)));
  }
  // One trace event per instance: the body's carry their iteration.
  std::vector<TraceEvent> events = executor->takeTraceEvents();
  std::map<std::string, std::vector<int64_t>> iterations;
  for (const TraceEvent &event : events) {
    if (event.stream == "step" || std::get<int64_t>(event.args.at("step")) != 3)
      continue;
    auto it = event.args.find("iteration");
    iterations[event.stream + " " + event.name].push_back(
        it == event.args.end() ? -1 : std::get<int64_t>(it->second));
  }
  std::vector<int64_t> body = {0, 1, 2, 3, 4};
  EXPECT_EQ(iterations["compute loop_slice"], body);
  EXPECT_EQ(iterations["compute wait 1"], body);
  EXPECT_EQ(iterations["compute linalg.map"], body);
  EXPECT_EQ(iterations["comm all_reduce"], body);
  EXPECT_EQ(iterations["compute linalg.copy"], (std::vector<int64_t>{-1}));
  EXPECT_EQ(iterations["compute linalg.fill"], (std::vector<int64_t>{-1}));
}

// A loop of one iteration computes what the program without it does.
TEST(ExecutorLoop, ALoopOfOneIterationIsTheLoopFreeProgram) {
  json loop = makeLoopSchedule(1, 4, false);
  json flat = loop;
  flat["version"] = 1;
  flat.erase("loops");
  json &compute = flat["instructions"]["compute"];
  compute[2]["op"] = "tensor.collapse_shape";
  compute[2]["reassociation"] = {{0, 1}};
  compute[3]["operands"][0] = 3; // the init for the carried value
  compute[4]["operands"][0] = 8; // the next for the loop's result
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  std::unique_ptr<Executor> looped = create(parse(loop), *comm);
  std::unique_ptr<Executor> unrolled = create(parse(flat), *comm);
  ASSERT_TRUE(looped && unrolled);
  ASSERT_TRUE(looped->step(fillLoopData).isOk());
  ASSERT_TRUE(unrolled->step(fillLoopData).isOk());
  EXPECT_TRUE(sameBits(floatsOf(looped->tensorData(10)),
                       floatsOf(unrolled->tensorData(10))));
  EXPECT_TRUE(
      sameBits(floatsOf(looped->tensorData(10)), expectedLoopSum(0, 1, 4)));
}

// A stream that fails in an iteration releases the other, wherever it waits
// (on an event, or for the iteration's end).
TEST(ExecutorLoop, AFailureInAnIterationReleasesTheOtherStream) {
  for (int succeeding : {0, 1, 3}) {
    FailingCommunicator comm(succeeding);
    std::unique_ptr<Executor> executor =
        create(parse(makeLoopSchedule(5, 4, true)), comm);
    ASSERT_TRUE(executor);
    StatusOr<StepStats> stats = executor->step(fillLoopData);
    ASSERT_FALSE(stats.isOk());
    EXPECT_EQ(stats.status().message(),
              "rank 0: all_reduce of bucket at loop.mlir:4:3 (step 1) failed");
  }
}

/// tokens and targets [2, 4] (bound 10), labels [2] (bound 3), inputs [2, 3].
json makeDataSchedule() {
  json s = makeAverageSchedule();
  s["memory"]["arenas"]["device"] = 512;
  s["buffers"].push_back(makeBuffer(4, "tokens", "input", 256, 32, 0, 5));
  s["buffers"].push_back(makeBuffer(5, "targets", "input", 320, 32, 0, 5));
  s["buffers"].push_back(makeBuffer(6, "labels", "input", 384, 8, 0, 5));
  s["values"].push_back(makeTensor(6, "%tokens", {2, 4}, 4, "i32"));
  s["values"].push_back(makeTensor(7, "%targets", {2, 4}, 5, "i32"));
  s["values"].push_back(makeTensor(8, "%labels", {2}, 6, "i32"));
  s["arguments"].push_back(
      {{"value", 6}, {"kind", "data"}, {"name", "tokens"}, {"bound", 10}});
  s["arguments"].push_back(
      {{"value", 7}, {"kind", "data"}, {"name", "targets"}, {"bound", 10}});
  s["arguments"].push_back(
      {{"value", 8}, {"kind", "data"}, {"name", "labels"}, {"bound", 3}});
  return s;
}

TEST(DataSource, FillsTokenWindowsAndSyntheticData) {
  std::shared_ptr<const Schedule> schedule = parse(makeDataSchedule());
  ASSERT_TRUE(schedule);
  DataOptions options;
  options.seed = 3;
  StatusOr<DataSource> source = DataSource::create(*schedule, options, 0, 1);
  ASSERT_TRUE(source.isOk()) << source.status().toString();
  EXPECT_EQ(source->tokensPerStep(), 8);
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  std::unique_ptr<Executor> executor = create(schedule, *comm);
  ASSERT_TRUE(executor);
  ASSERT_TRUE(executor->step(source->filler()).isOk());
  const int32_t *tokens =
      static_cast<const int32_t *>(executor->argumentData(2).data);
  const int32_t *targets =
      static_cast<const int32_t *>(executor->argumentData(3).data);
  const int32_t *labels =
      static_cast<const int32_t *>(executor->argumentData(4).data);
  TokenStream stream = TokenStream::synthetic(3, 10);
  for (int row = 0; row < 2; ++row) {
    int32_t expectedTokens[4], expectedTargets[4];
    stream.window(row, 4, expectedTokens, expectedTargets);
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(tokens[row * 4 + j], expectedTokens[j]);
      EXPECT_EQ(targets[row * 4 + j], expectedTargets[j]);
      if (j < 3)
        EXPECT_EQ(targets[row * 4 + j], tokens[row * 4 + j + 1]);
    }
    EXPECT_EQ(labels[row], syntheticInt(3, "labels", row, 0, 3));
  }
  // The data argument x (f32 [4]): four rows of one element.
  const float *x = static_cast<const float *>(executor->argumentData(1).data);
  for (int row = 0; row < 4; ++row)
    EXPECT_EQ(x[row], syntheticFloat(3, "x", row, 0));

  options.tokenFile = "/nonexistent/train.bin";
  source = DataSource::create(*schedule, options, 0, 1);
  ASSERT_FALSE(source.isOk());
  EXPECT_NE(source.status().message().find("/nonexistent/train.bin"),
            std::string::npos);
  options.tokenFile = "train.bin";
  source = DataSource::create(*parse(makeAverageSchedule()), options, 0, 1);
  ASSERT_FALSE(source.isOk());
  EXPECT_EQ(source.status().message(),
            "train.bin: t.json has no token data argument (an integer data "
            "argument named tokens or targets) to read it into");
}

/// makeAverageSchedule written to a new temporary file, whose path it
/// returns (empty on failure).
std::string writeAverageSchedule(const char *prefix) {
  std::string path = std::string("/tmp/") + prefix + "-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0)
    return "";
  close(fd);
  std::ofstream(path) << makeAverageSchedule().dump();
  return path;
}

TEST(CApi, LoadsCreatesAndSteps) {
  std::string file = writeAverageSchedule("zero-capi");
  ASSERT_FALSE(file.empty());
  const char *path = file.c_str();

  zero_schedule *schedule = nullptr;
  ASSERT_EQ(zero_runtime_load(path, &schedule), nullptr);
  zero_runtime_options options;
  zero_runtime_options_init(&options);
  options.seed = 1;
  zero_runtime *runtime = nullptr;
  ASSERT_EQ(zero_runtime_create(schedule, &options, &runtime), nullptr);
  EXPECT_TRUE(std::isnan(zero_runtime_get_loss(runtime)));
  EXPECT_EQ(zero_runtime_step(runtime), nullptr);
  EXPECT_EQ(zero_runtime_get_loss(runtime), 3.0);
  EXPECT_EQ(zero_runtime_get_steps(runtime), 1);
  EXPECT_EQ(zero_runtime_get_rank(runtime), 0);
  EXPECT_EQ(zero_runtime_get_world_size(runtime), 1);
  zero_runtime_destroy(runtime);
  zero_schedule_destroy(schedule);
  std::remove(path);

  const char *error = zero_runtime_load("/nonexistent.json", &schedule);
  ASSERT_NE(error, nullptr);
  EXPECT_STREQ(error, "/nonexistent.json: cannot open: No such file or directory");
}

TEST(CApi, StateAccessorsWithoutGradientRecords) {
  std::string file = writeAverageSchedule("zero-capi-state");
  ASSERT_FALSE(file.empty());
  const char *path = file.c_str();
  zero_schedule *schedule = nullptr;
  ASSERT_EQ(zero_runtime_load(path, &schedule), nullptr);
  zero_runtime_options options;
  zero_runtime_options_init(&options);
  EXPECT_EQ(options.keep_gradients, 0);
  options.keep_gradients = 1;
  zero_runtime *runtime = nullptr;
  ASSERT_EQ(zero_runtime_create(schedule, &options, &runtime), nullptr);

  int64_t numel = 0;
  ASSERT_EQ(zero_runtime_get_full_numel(runtime, "w", &numel), nullptr);
  EXPECT_EQ(numel, 4);
  ASSERT_EQ(zero_runtime_get_local_numel(runtime, "w", &numel), nullptr);
  EXPECT_EQ(numel, 4);
  float set[4] = {1.5f, -2.0f, 0.25f, 8.0f}, got[4] = {};
  ASSERT_EQ(zero_runtime_set_full_fp32_param(runtime, "w", set, 4), nullptr);
  ASSERT_EQ(zero_runtime_get_local_fp32_param(runtime, "w", got, 4), nullptr);
  EXPECT_EQ(std::memcmp(got, set, sizeof(set)), 0);

  const std::string name = path;
  EXPECT_STREQ(
      zero_runtime_get_full_fp32_param(runtime, "ww", got, 4),
      ("getFullFp32Param: no parameter 'ww' in " + name + "; did you mean 'w'?")
          .c_str());
  EXPECT_STREQ(zero_runtime_get_full_fp32_param(runtime, "w", got, 3),
               "zero_runtime_get_full_fp32_param: parameter 'w': the result "
               "has 4 elements, but numel is 3");
  EXPECT_STREQ(zero_runtime_set_local_fp32_param(runtime, "w", set, 3),
               "setLocalFp32Param: parameter 'w': 3 elements given, but its "
               "local fp32 value has 4");
  EXPECT_STREQ(
      zero_runtime_get_full_optimizer_state(runtime, "w", "exp_avg", got, 4),
      "getFullOptimizerState: parameter 'w' has no optimizer state "
      "'exp_avg'; it has none (an optimizer without state)");
  ASSERT_EQ(zero_runtime_step(runtime), nullptr);
  EXPECT_STREQ(zero_runtime_get_full_grad(runtime, "w", got, 4),
               ("getFullGrad: " + name +
                " has no gradient record (its `gradients`); compile it again "
                "with this zero-opt")
                   .c_str());
  EXPECT_NE(zero_runtime_get_full_grad(nullptr, "w", got, 4), nullptr);
  zero_runtime_destroy(runtime);
  zero_schedule_destroy(schedule);
  std::remove(path);
}

TEST(CApi, SavesAndResumes) {
  char directory[] = "/tmp/zero-capi-ckpt-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  std::string root = directory;
  std::ofstream(root + "/t.json") << makeAverageSchedule().dump();
  zero_schedule *schedule = nullptr;
  ASSERT_EQ(zero_runtime_load((root + "/t.json").c_str(), &schedule), nullptr);
  zero_runtime_options options;
  zero_runtime_options_init(&options);
  options.seed = 4;

  // Three steps straight, and two, a save and one resumed: the same weights.
  auto run = [&](int steps, const char *resumeFrom, const std::string &save,
                 const std::string &exportTo) {
    options.resume_from = resumeFrom;
    zero_runtime *runtime = nullptr;
    const char *error = zero_runtime_create(schedule, &options, &runtime);
    EXPECT_EQ(error, nullptr) << error;
    if (error)
      return;
    for (int i = 0; i < steps; ++i)
      EXPECT_EQ(zero_runtime_step(runtime), nullptr);
    // Saved twice by one run: both saves are the run's (its id is the
    // session's), so the second replaces the first.
    for (int i = 0; i < 2 && !save.empty(); ++i)
      EXPECT_EQ(zero_runtime_save(runtime, save.c_str(), 0), nullptr);
    EXPECT_EQ(zero_runtime_export(runtime, exportTo.c_str()), nullptr);
    zero_runtime_destroy(runtime);
  };
  std::string checkpoint = root + "/ck";
  run(3, nullptr, "", root + "/straight.safetensors");
  run(2, nullptr, checkpoint, root + "/first.safetensors");
  run(1, checkpoint.c_str(), "", root + "/resumed.safetensors");
  auto read = [](const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_NE(read(root + "/first.safetensors"),
            read(root + "/straight.safetensors"));
  EXPECT_EQ(read(root + "/resumed.safetensors"),
            read(root + "/straight.safetensors"));

  // Another run may not save into the directory; the one resumed from it
  // (above) may.
  options.resume_from = nullptr;
  zero_runtime *other = nullptr;
  ASSERT_EQ(zero_runtime_create(schedule, &options, &other), nullptr);
  const char *refused = zero_runtime_save(other, checkpoint.c_str(), 0);
  ASSERT_NE(refused, nullptr);
  EXPECT_NE(std::string(refused).find(checkpoint + ": belongs to run \""),
            std::string::npos)
      << refused;
  zero_runtime_destroy(other);

  options.resume_from = "/nonexistent/ck";
  zero_runtime *runtime = nullptr;
  const char *error = zero_runtime_create(schedule, &options, &runtime);
  ASSERT_NE(error, nullptr);
  EXPECT_STREQ(error, "/nonexistent/ck: no checkpoint there");
  zero_schedule_destroy(schedule);
  std::filesystem::remove_all(root);
}

// A quantized all-gather (qwZ) on one rank: the rank's own shard comes back
// through the quantizer, and nothing crosses the ring.
TEST(Executor, GathersQuantizedOnOneRank) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(parse(makeQuantizedGatherSchedule(1, {5, 2}, "f32", 2)),
                       createHostDevice(), *comm);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  Executor &executor = **created;
  float *a = static_cast<float *>(executor.tensorData(0).data);
  float *b = static_cast<float *>(executor.tensorData(1).data);
  // Blocks of 2: [127, 2.5] scale 1, [3.5, 0] scale 3.5 / 127, [-1.5];
  // [0, 0] scale 0.
  const float in[5] = {127, 2.5f, 3.5f, 0, -1.5f};
  std::memcpy(a, in, sizeof(in));
  b[0] = b[1] = 0;
  StatusOr<StepStats> stats = executor.step();
  ASSERT_TRUE(stats.isOk()) << stats.status().toString();
  const float *full = static_cast<const float *>(executor.tensorData(2).data);
  EXPECT_EQ(full[0], 127.0f);
  EXPECT_EQ(full[1], 2.0f); // ties to even
  EXPECT_EQ(full[2], 127 * (3.5f / 127));
  EXPECT_EQ(full[3], 0.0f);
  EXPECT_EQ(full[4], -127 * (1.5f / 127));
  const float *zeros = static_cast<const float *>(executor.tensorData(3).data);
  EXPECT_EQ(zeros[0], 0.0f);
  EXPECT_EQ(zeros[1], 0.0f);
  EXPECT_EQ(stats->bytesSent, 0);
}

// A quantized reduce-scatter (qgZ) in a group of one rank has no hop: its shard
// is its own tensor, exact (no quantization to round it) and unpadded.
TEST(Executor, ReduceScattersQuantizedOnOneRankExactly) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  StatusOr<std::unique_ptr<Executor>> created = Executor::create(
      parse(makeQuantizedReduceScatterSchedule(1, {5, 2}, "f32", 2, "avg")),
      createHostDevice(), *comm);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  Executor &executor = **created;
  float *a = static_cast<float *>(executor.tensorData(0).data);
  float *b = static_cast<float *>(executor.tensorData(1).data);
  // Quantized in blocks of 2, 3.5 would come back 4 and 1 as 7 * (1 / 7).
  const float in[5] = {7, 3.5f, -7, 0, 1};
  std::memcpy(a, in, sizeof(in));
  b[0] = 0.25f;
  b[1] = -0.1f;
  StatusOr<StepStats> stats = executor.step();
  ASSERT_TRUE(stats.isOk()) << stats.status().toString();
  const float *shard = static_cast<const float *>(executor.tensorData(2).data);
  EXPECT_EQ(std::vector<float>(shard, shard + 5),
            std::vector<float>(in, in + 5));
  const float *other = static_cast<const float *>(executor.tensorData(3).data);
  EXPECT_EQ(other[0], 0.25f);
  EXPECT_EQ(other[1], -0.1f);
  EXPECT_EQ(stats->bytesSent, 0);
}

// The self communicator's all-to-all is a copy of its one block.
TEST(Executor, SelfAllToAllCopiesItsBlock) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  const uint8_t send[3] = {1, 2, 3};
  uint8_t recv[3] = {};
  ASSERT_TRUE(comm->allToAll(send, recv, 3, {"a2a", nullptr}).isOk());
  EXPECT_EQ(std::vector<uint8_t>(recv, recv + 3),
            std::vector<uint8_t>(send, send + 3));
  EXPECT_EQ(comm->counters().bytesSent, 0);
  EXPECT_EQ(comm->counters().calls, 1);
}

/// A device whose memory the CPU cannot touch, as the CUDA backend's: only
/// its name and isHostMemory are ever asked for here.
class OpaqueMemoryDevice final : public Device {
public:
  std::string describe() const override { return "opaque"; }
  bool isHostMemory() const override { return false; }
  Status load(const Schedule &, int, int, MemoryTracker &) override {
    return ZERO_ERROR(kInternal, "not loaded");
  }
  std::byte *arenaBase(MemorySpace) const override { return nullptr; }
  StatusOr<std::unique_ptr<PreparedOp>> prepare(const Instruction &) override {
    return ZERO_ERROR(kInternal, "not prepared");
  }
  Status recordEvent(size_t, int64_t) override { return Status::ok(); }
  Status waitEvent(size_t, int64_t) override { return Status::ok(); }
  Status copy(size_t, void *, const void *, int64_t) override {
    return Status::ok();
  }
  Status fillZero(size_t, void *, int64_t) override { return Status::ok(); }
  Status quantizeBlocks(size_t, const void *, DType, int64_t, int, int64_t,
                        void *, void *) override {
    return Status::ok();
  }
  Status dequantizeBlocks(size_t, const void *, const void *, int64_t, int,
                          int64_t, DType, void *) override {
    return Status::ok();
  }
  Status accumulateDequantized(size_t, const void *, const void *, int64_t,
                               int, int64_t, float *) override {
    return Status::ok();
  }
  Status roundSums(size_t, const float *, int64_t, int64_t, DType,
                   void *) override {
    return Status::ok();
  }
  void *nativeStream(size_t) const override { return nullptr; }
  Status synchronize() override { return Status::ok(); }
  Status read(void *, const void *, int64_t) override { return Status::ok(); }
  Status write(void *, const void *, int64_t) override { return Status::ok(); }
  StatusOr<Scalar> readScalar(int64_t) override { return Scalar{}; }
  int64_t markTime(size_t) override { return 0; }
  double resolveTime(int64_t) const override { return 0; }
  void clearTimeMarks() override {}
};

// The quantized collectives run on any device (its quantizer, Device.h):
// past the checks, to the opaque device's load.
TEST(Executor, LeavesQuantizedCollectivesToTheDevice) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  for (std::shared_ptr<const Schedule> schedule :
       {parse(makeQuantizedGatherSchedule(1, {5, 2}, "bf16", 2)),
        parse(makeQuantizedReduceScatterSchedule(1, {5, 2}, "bf16", 2,
                                                 "sum"))}) {
    StatusOr<std::unique_ptr<Executor>> created = Executor::create(
        schedule, std::make_unique<OpaqueMemoryDevice>(), *comm);
    ASSERT_FALSE(created.isOk());
    EXPECT_EQ(created.status().message(), "not loaded");
  }
}

// A parameter stored quantized (zero_quantized_nontrainable_weights), read
// by its quantized gather: refused for the parameter, first.
TEST(Executor, RefusesParametersStoredQuantizedOutsideHostMemory) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  StatusOr<std::unique_ptr<Executor>> created = Executor::create(
      parse(makeQuantizedGatherSchedule(1, {7, 3}, "bf16", 3, {true, false})),
      std::make_unique<OpaqueMemoryDevice>(), *comm);
  ASSERT_FALSE(created.isOk());
  EXPECT_EQ(created.status().message(),
            "t.json: arguments[0] (value 0 (%w0)): a parameter stored "
            "quantized (ZeRO++ zero_quantized_nontrainable_weights) runs on "
            "the host backend only");
}

} // namespace
