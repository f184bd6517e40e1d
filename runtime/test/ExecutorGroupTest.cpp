//===- ExecutorGroupTest.cpp - multi-tensor optimizer groups --------------===//
//
// A device that proposes each run of consecutive zero.adam (or zero.sgd)
// instructions, each optionally followed by the 16-bit cast of its new
// parameter, as one group (Device::groupLength, getOptimizerRunLength) is
// handed it (Device::prepareGroup) and runs it where its first instruction
// stands. Checked with
// a device that groups on top of the host backend: the same bits as one by
// one, and the groups the schedule's runs make.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaTestUtil.h"

#include <gtest/gtest.h>

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

/// The host device, running each group's instructions in order as one op.
class GroupingDevice final : public Device {
public:
  explicit GroupingDevice(std::vector<size_t> &groups)
      : inner_(createHostDevice()), groups_(groups) {}

  std::string describe() const override { return "grouping host"; }
  bool isHostMemory() const override { return true; }
  Status load(const Schedule &schedule, int rank, int worldSize,
              MemoryTracker &tracker) override {
    schedule_ = &schedule;
    return inner_->load(schedule, rank, worldSize, tracker);
  }
  std::byte *arenaBase(MemorySpace space) const override {
    return inner_->arenaBase(space);
  }
  StatusOr<std::unique_ptr<PreparedOp>>
  prepare(const Instruction &inst) override {
    return inner_->prepare(inst);
  }
  size_t groupLength(size_t stream, size_t first) override {
    return getOptimizerRunLength(schedule_->streams()[stream].instructions,
                                 first);
  }
  StatusOr<std::unique_ptr<PreparedOp>>
  prepareGroup(size_t stream, size_t first, size_t count) override {
    auto op = std::make_unique<GroupOp>();
    const std::vector<Instruction> &list =
        schedule_->streams()[stream].instructions;
    for (size_t i = first; i < first + count; ++i) {
      StatusOr<std::unique_ptr<PreparedOp>> member = inner_->prepare(list[i]);
      if (!member.isOk())
        return member.status();
      op->members.push_back(std::move(*member));
    }
    groups_.push_back(count);
    return std::unique_ptr<PreparedOp>(std::move(op));
  }
  Status recordEvent(size_t s, int64_t e) override {
    return inner_->recordEvent(s, e);
  }
  Status waitEvent(size_t s, int64_t e) override {
    return inner_->waitEvent(s, e);
  }
  Status copy(size_t s, void *to, const void *from, int64_t bytes) override {
    return inner_->copy(s, to, from, bytes);
  }
  Status fillZero(size_t s, void *to, int64_t bytes) override {
    return inner_->fillZero(s, to, bytes);
  }
  Status quantizeBlocks(size_t s, const void *in, DType type, int64_t n,
                        int bits, int64_t blockSize, void *values,
                        void *scales) override {
    return inner_->quantizeBlocks(s, in, type, n, bits, blockSize, values,
                                  scales);
  }
  Status dequantizeBlocks(size_t s, const void *values, const void *scales,
                          int64_t n, int bits, int64_t blockSize, DType type,
                          void *out) override {
    return inner_->dequantizeBlocks(s, values, scales, n, bits, blockSize,
                                    type, out);
  }
  Status accumulateDequantized(size_t s, const void *values, const void *scales,
                               int64_t n, int bits, int64_t blockSize,
                               float *sums) override {
    return inner_->accumulateDequantized(s, values, scales, n, bits, blockSize,
                                         sums);
  }
  Status roundSums(size_t s, const float *sums, int64_t n, int64_t divisor,
                   DType type, void *out) override {
    return inner_->roundSums(s, sums, n, divisor, type, out);
  }
  void *nativeStream(size_t s) const override {
    return inner_->nativeStream(s);
  }
  Status synchronize() override { return inner_->synchronize(); }
  Status read(void *to, const void *from, int64_t bytes) override {
    return inner_->read(to, from, bytes);
  }
  Status write(void *to, const void *from, int64_t bytes) override {
    return inner_->write(to, from, bytes);
  }
  StatusOr<Scalar> readScalar(int64_t id) override {
    return inner_->readScalar(id);
  }
  int64_t markTime(size_t s) override { return inner_->markTime(s); }
  double resolveTime(int64_t mark) const override {
    return inner_->resolveTime(mark);
  }
  void clearTimeMarks() override { inner_->clearTimeMarks(); }

private:
  struct GroupOp final : PreparedOp {
    std::vector<std::unique_ptr<PreparedOp>> members;
    Status run(int64_t step) override {
      for (auto &member : members)
        ZERO_RETURN_IF_ERROR(member->run(step));
      return Status::ok();
    }
  };
  std::unique_ptr<Device> inner_;
  const Schedule *schedule_ = nullptr;
  std::vector<size_t> &groups_;
};

struct OptimizerSchedule {
  ScheduleBuilder b;
  std::vector<int64_t> tensors; // every input and state, in order
  std::vector<int64_t> results;
};

/// Three Adam steps (5, 1 and 7 elements; the first and the last cast
/// their new parameter to bf16), a fill between, two SGD steps (the first
/// casts to f16).
OptimizerSchedule makeSchedule() {
  OptimizerSchedule s;
  ScheduleBuilder &b = s.b;
  int64_t step = b.constant(DType::I64, 3);
  int64_t lr = b.constant(DType::F32, 0.01);
  for (int64_t n : {5, 1, 7}) {
    int64_t p = b.tensor(DType::F32, {n}), g = b.tensor(DType::BF16, {n}),
            m = b.tensor(DType::F32, {n}), v = b.tensor(DType::F32, {n});
    s.tensors.insert(s.tensors.end(), {p, g, m, v});
    int64_t pOut = b.tensor(DType::F32, {n}, p),
            mOut = b.tensor(DType::F32, {n}, m),
            vOut = b.tensor(DType::F32, {n}, v);
    s.results.insert(s.results.end(), {pOut, mOut, vOut});
    b.op({{"op", "zero.adam"},
          {"operands", {p, g, m, v, step, lr}},
          {"results", {pOut, mOut, vOut}},
          {"beta1", 0.9},
          {"beta2", 0.999},
          {"eps", 1e-8},
          {"weight_decay", n == 1 ? 0.0 : 0.1},
          {"mode", "adamw"},
          {"bias_correction", true},
          {"amsgrad", false}});
    if (n != 1)
      s.results.push_back(b.truncate(pOut, DType::BF16));
  }
  int64_t filled = b.tensor(DType::F32, {3});
  int64_t fillValue = b.constant(DType::F32, 2.5);
  b.op({{"op", "linalg.fill"},
        {"operands", {fillValue, filled}},
        {"results", {b.tensor(DType::F32, {3}, filled)}}});
  for (int64_t n : {4, 6}) {
    int64_t p = b.tensor(DType::F32, {n}), g = b.tensor(DType::F32, {n}),
            buf = b.tensor(DType::F32, {n});
    s.tensors.insert(s.tensors.end(), {p, g, buf});
    int64_t pOut = b.tensor(DType::F32, {n}, p),
            bufOut = b.tensor(DType::F32, {n}, buf);
    s.results.insert(s.results.end(), {pOut, bufOut});
    b.op({{"op", "zero.sgd"},
          {"operands", {p, g, buf, lr}},
          {"results", {pOut, bufOut}},
          {"momentum", 0.9},
          {"dampening", 0.0},
          {"weight_decay", 0.01},
          {"nesterov", n == 6}});
    if (n == 4)
      s.results.push_back(b.truncate(pOut, DType::F16));
  }
  return s;
}

std::vector<Bytes> runOnce(const OptimizerSchedule &s,
                           std::unique_ptr<Device> device) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  StatusOr<Schedule> parsed = Schedule::parse(s.b.text(), "o.json");
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  auto schedule = std::make_shared<const Schedule>(std::move(*parsed));
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(schedule, std::move(device), *comm);
  EXPECT_TRUE(executor.isOk()) << executor.status().toString();
  std::mt19937_64 rng(11);
  for (int64_t id : s.tensors) {
    const ValueInfo &value = schedule->values().values[id];
    Bytes data = randomBytes(value.dtype, value.numel, rng);
    EXPECT_TRUE((*executor)->writeTensor(id, data.data()).isOk());
  }
  for (int i = 0; i < 2; ++i) {
    StatusOr<StepStats> stats = (*executor)->step();
    EXPECT_TRUE(stats.isOk()) << stats.status().toString();
  }
  std::vector<Bytes> out;
  for (int64_t id : s.results) {
    const ValueInfo &value = schedule->values().values[id];
    Bytes data = makeBytes(value.dtype, value.numel);
    EXPECT_TRUE((*executor)->readTensor(id, data.data()).isOk());
    out.push_back(std::move(data));
  }
  return out;
}

} // namespace

TEST(ExecutorGroups, ConsecutiveOptimizerStepsRunAsOneGroup) {
  OptimizerSchedule s = makeSchedule();
  std::vector<Bytes> single = runOnce(s, createHostDevice());
  std::vector<size_t> groups;
  std::vector<Bytes> grouped =
      runOnce(s, std::make_unique<GroupingDevice>(groups));
  // The three Adam steps and their two casts, then (after the fill) the two
  // SGD steps and the first one's cast.
  EXPECT_EQ(groups, (std::vector<size_t>{5, 3}));
  ASSERT_EQ(single.size(), grouped.size());
  for (size_t i = 0; i < single.size(); ++i)
    EXPECT_EQ(single[i], grouped[i]) << "result " << i;
}

TEST(ExecutorGroups, OnlyTheCastOfAStepsNewParameterJoinsItsRun) {
  auto runLength = [](const ScheduleBuilder &b) {
    StatusOr<Schedule> schedule = Schedule::parse(b.text(), "o.json");
    EXPECT_TRUE(schedule.isOk()) << schedule.status().toString();
    return schedule.isOk() ? getOptimizerRunLength(
                                 schedule->streams()[0].instructions, 2)
                           : 0;
  };
  // Adam, then a cast of `castOf(p, pOut, g)`, then another Adam.
  auto build = [](auto castOf) {
    ScheduleBuilder b;
    const int64_t step = b.constant(DType::I64, 3);
    const int64_t lr = b.constant(DType::F32, 0.01);
    for (int k = 0; k < 2; ++k) {
      const int64_t p = b.tensor(DType::F32, {8}),
                    g = b.tensor(DType::F32, {8}),
                    m = b.tensor(DType::F32, {8}),
                    v = b.tensor(DType::F32, {8});
      const int64_t pOut = b.tensor(DType::F32, {8}, p);
      b.op({{"op", "zero.adam"},
            {"operands", {p, g, m, v, step, lr}},
            {"results",
             {pOut, b.tensor(DType::F32, {8}, m), b.tensor(DType::F32, {8}, v)}},
            {"beta1", 0.9},
            {"beta2", 0.999},
            {"eps", 1e-8},
            {"weight_decay", 0.0},
            {"mode", "adam"},
            {"bias_correction", true},
            {"amsgrad", false}});
      if (k == 0)
        b.truncate(castOf(p, pOut, g), DType::BF16);
    }
    return b;
  };
  EXPECT_EQ(runLength(build([](int64_t, int64_t pOut, int64_t) {
              return pOut;
            })),
            3u);
  // The old parameter, or the gradient, is not the step's output: the run
  // ends at the step.
  EXPECT_EQ(runLength(build([](int64_t p, int64_t, int64_t) { return p; })),
            1u);
  EXPECT_EQ(runLength(build([](int64_t, int64_t, int64_t g) { return g; })),
            1u);
}
