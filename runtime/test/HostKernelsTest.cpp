//===- HostKernelsTest.cpp - host kernels over another device's memory ----===//
//
// HostKernels (src/HostKernels.h) is how a device other than the host runs
// instructions with the host backend's kernels: the CUDA device runs its
// offloaded optimizer this way, against its own pinned arenas and register
// mirror. Here the stream of OffloadedStep.h (Adam with its 16-bit cast,
// SGD, a norm, scalars in and out) runs through it against arenas and
// registers the test owns, and must leave the bytes the host device leaves;
// CI has no GPU, so this is where that binding runs in CI.
//
//===----------------------------------------------------------------------===//

#include "HostKernels.h"
#include "ops/Check.h"

#include "cuda/OffloadedStep.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

/// A rank's arenas and registers outside any device, as the CUDA device's
/// pinned host arena and register mirror are.
class OwnMemory {
public:
  explicit OwnMemory(const Schedule &schedule) : schedule_(schedule) {
    for (int space = 0; space < kNumMemorySpaces; ++space) {
      const int64_t bytes =
          schedule.arenaBytes(static_cast<MemorySpace>(space));
      // 64-byte aligned, as the devices' arenas are.
      bases_[space] =
          bytes > 0 ? static_cast<std::byte *>(std::aligned_alloc(
                          64, static_cast<size_t>((bytes + 63) / 64 * 64)))
                    : nullptr;
      if (bases_[space])
        std::memset(bases_[space], 0, static_cast<size_t>(bytes));
    }
    registers_.assign(schedule.values().values.size(), Scalar{});
  }
  ~OwnMemory() {
    for (std::byte *base : bases_)
      std::free(base);
  }
  OwnMemory(const OwnMemory &) = delete;
  OwnMemory &operator=(const OwnMemory &) = delete;

  const std::array<std::byte *, kNumMemorySpaces> &bases() const {
    return bases_;
  }
  Scalar *registers() { return registers_.data(); }

  std::byte *data(int64_t id) const {
    const BufferInfo &buffer = schedule_.bufferOf(id);
    return bases_[static_cast<int>(buffer.space)] + buffer.offset;
  }
  void write(int64_t id, const Bytes &bytes) {
    std::memcpy(data(id), bytes.data(), bytes.size());
  }
  Bytes read(int64_t id) const {
    const ValueInfo &value = schedule_.values().values[id];
    Bytes bytes(static_cast<size_t>(value.numel * getDTypeWidth(value.dtype)));
    std::memcpy(bytes.data(), data(id), bytes.size());
    return bytes;
  }

private:
  const Schedule &schedule_;
  std::array<std::byte *, kNumMemorySpaces> bases_{};
  std::vector<Scalar> registers_;
};

struct OffloadedRun {
  OffloadedStep step;
  std::shared_ptr<const Schedule> schedule;
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  std::unique_ptr<Executor> host;
  std::unique_ptr<OwnMemory> memory;
  std::unique_ptr<HostKernels> kernels;
  std::vector<const Instruction *> stream;

  explicit OffloadedRun(int64_t n) : step(makeOffloadedStep(n)) {
    StatusOr<Schedule> parsed = Schedule::parse(step.b.text(), "t.json");
    EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
    if (!parsed.isOk())
      return;
    schedule = std::make_shared<const Schedule>(std::move(*parsed));
    StatusOr<std::unique_ptr<Executor>> executor =
        Executor::create(schedule, createHostDevice(), *comm, {});
    EXPECT_TRUE(executor.isOk()) << executor.status().toString();
    if (!executor.isOk())
      return;
    host = std::move(*executor);
    memory = std::make_unique<OwnMemory>(*schedule);
    kernels = HostKernels::create(*schedule, memory->bases(),
                                  memory->registers(), 0, 1);
    for (const Instruction &inst : schedule->streams()[0].instructions)
      stream.push_back(&inst);
  }

  void write(int64_t id, const Bytes &bytes) {
    ASSERT_TRUE(host->writeTensor(id, bytes.data()).isOk());
    memory->write(id, bytes);
  }
};

TEST(HostKernels, RunTheOffloadedStepAsTheHostDevice) {
  OffloadedRun s(4099);
  ASSERT_TRUE(s.host && s.kernels);
  ASSERT_EQ(s.stream.size(), 14u);
  StatusOr<std::unique_ptr<HostKernelRun>> run = s.kernels->prepare(s.stream);
  ASSERT_TRUE(run.isOk()) << run.status().toString();

  const OffloadedStep &o = s.step;
  std::mt19937_64 rng(11);
  const int64_t qn = o.n / 3 + 1;
  s.write(o.p, randomBytes(DType::F32, o.n, rng));
  s.write(o.m, randomBytes(DType::F32, o.n, rng, 0.1));
  Bytes v = randomBytes(DType::F32, o.n, rng, 0.01);
  for (int64_t i = 0; i < o.n; ++i) // a second moment is >= 0
    setFloat(v, DType::F32, i, std::fabs(floatAt(v, DType::F32, i)));
  s.write(o.v, v);
  s.write(o.q, randomBytes(DType::F32, qn, rng));
  s.write(o.qBuf, randomBytes(DType::F32, qn, rng, 0.1));
  // Two steps: the second starts from the state the first left in place.
  for (int64_t step = 1; step <= 2; ++step) {
    s.write(o.g, randomBytes(DType::F32, o.n, rng, 300.0));
    s.write(o.qg, randomBytes(DType::F32, qn, rng, 0.5));
    s.write(o.stepTensor, scalarBytes(DType::I64, step));
    s.write(o.lrTensor, scalarBytes(DType::F32, 1e-3 * step));
    s.write(o.scaleTensor, scalarBytes(DType::F32, 1.0 / 512));
    StatusOr<StepStats> stats = s.host->step();
    ASSERT_TRUE(stats.isOk()) << stats.status().toString();
    Status status = (*run)->run();
    ASSERT_TRUE(status.isOk()) << status.toString();
    for (int64_t id : {o.p2, o.m2, o.v2, o.p16, o.q2, o.qBuf2, o.norm,
                       o.hostNorm, o.deviceNorm, o.deviceP16}) {
      std::string expected;
      ASSERT_TRUE(s.host->readTensor(id, expected).isOk());
      const Bytes actual = s.memory->read(id);
      EXPECT_EQ(Bytes(expected.begin(), expected.end()), actual)
          << "step " << step << ": value " << id;
    }
    EXPECT_EQ(s.memory->registers()[o.normScalar].f,
              floatAt(s.memory->read(o.norm), DType::F32, 0))
        << "step " << step << ": the norm's register";
  }
}

TEST(HostKernels, ARunStopsAtItsFirstError) {
  OffloadedRun s(5);
  ASSERT_TRUE(s.kernels);
  StatusOr<std::unique_ptr<HostKernelRun>> run = s.kernels->prepare(s.stream);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  s.memory->write(s.step.stepTensor, scalarBytes(DType::I64, 0));
  Status status = (*run)->run();
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find(
                "the step is 0, but Adam's bias correction needs a step >= 1"),
            std::string::npos)
      << status.toString();
  // The norm after Adam was not computed: its register is still 0.
  EXPECT_EQ(s.memory->registers()[s.step.normScalar].f, 0.0);
}

TEST(HostKernels, PreparingChecksEachInstruction) {
  OffloadedRun s(5);
  ASSERT_TRUE(s.kernels);
  // zero.adam without its cast: checked alone, and valid.
  ASSERT_TRUE(s.kernels->prepare({s.stream[5]}).isOk());
  // A run is prepared whole or not at all: tensor.extract's result is a
  // scalar, which linalg.fill may fill with but not into.
  Instruction fill = *s.stream[11];
  std::swap(fill.operands[0], fill.operands[1]);
  StatusOr<std::unique_ptr<HostKernelRun>> run =
      s.kernels->prepare({s.stream[4], &fill});
  ASSERT_FALSE(run.isOk());
  EXPECT_EQ(
      run.status().message(),
      ops::checkComputeOp(ops::getInstructionContext(fill, s.schedule->name(),
                                                     s.schedule->values()))
          .status()
          .message());
}

} // namespace
