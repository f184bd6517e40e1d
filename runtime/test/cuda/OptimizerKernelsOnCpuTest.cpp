//===- OptimizerKernelsOnCpuTest.cpp - optimizer kernels on the CPU -------===//
//
// The fused optimizer kernels (OptimizerKernels.cuh: one multi-tensor
// launch for a run of zero.adam or zero.sgd steps and the casts of their
// new parameters, four elements per thread where every tensor allows it)
// would otherwise run only on a GPU. Here OptimizerGroups.h's groups (f32,
// bf16 and f64 parameters, bf16 gradients, f16 and bf16 casts; sizes with a
// vector path and a tail, one that crosses the 64K-element chunks, an empty
// one) are planned over CPU memory (OptimizerTables.h) and their kernels,
// compiled by the host compiler with KernelsOnCpu.h's shim, run on the CPU
// from the state the host backend's step starts from. The host and the
// kernels compute with the same functions (ops/OptimizerMath.h,
// ops/ElementMath.h) and the same libm here, so every result must be the
// host's bit for bit. zero.any_nonfinite's kernel, whose last block writes
// the flag, runs over tensors with and without an infinity.
//
//===----------------------------------------------------------------------===//

#include "HostStep.h"
#include "KernelsOnCpu.h"
#include "OptimizerGroups.h"
#include "cuda/DeviceErrorRecord.h"
#include "cuda/OptimizerTables.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using namespace zero::runtime::cudatest;
using zero::runtime::test::Arena;
using zero::runtime::test::findFunction;
using zero::runtime::test::HostStep;
using zero::runtime::test::kCudaShim;
using zero::runtime::test::KernelLibrary;
using zero::runtime::test::makeLauncher;
using KernelRunner = zero::runtime::test::Runner;

namespace {

/// The kernels and their launchers.
std::string getOptimizerSource() {
  std::string source = std::string(kCudaShim) +
                       "#include \"cuda/OptimizerKernels.cuh\"\n"
                       "using namespace zero::runtime::cuda;\n";
  for (const std::string kernel : {"adam", "sgd", "anyNonFinite"})
    source += makeLauncher("zk_" + kernel, kernel + "Kernel");
  return source;
}

/// One step of group `g` on the host and through its kernel on the CPU,
/// from the same memory; every result compared bit for bit.
void expectStepMatchesTheHost(const GroupSchedule &g,
                              const std::vector<GroupMember> &members,
                              bool adam, int64_t step, std::mt19937_64 &rng,
                              void *library) {
  StatusOr<Schedule> parsed = Schedule::parse(g.b.text(), "group.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  const Schedule &schedule = *parsed;
  const ValueTable &values = schedule.values();
  HostStep host(schedule);
  ASSERT_TRUE(host.isLoaded());
  auto offsetOf = [&](int64_t id) { return host.offsetOf(id); };
  auto write = [&](int64_t id, const Bytes &bytes) {
    host.write(id, bytes.data(), static_cast<int64_t>(bytes.size()));
  };
  for (size_t k = 0; k < members.size(); ++k) {
    const OptimizerTypes &t = members[k].types;
    const int64_t n = members[k].numel;
    write(g.ids[k].param, randomBytes(t.param, n, rng));
    write(g.ids[k].grad, randomBytes(t.grad, n, rng, 0.5));
    write(g.ids[k].m, randomBytes(t.m, n, rng, 0.1));
    if (adam) {
      Bytes v = randomBytes(t.v, n, rng, 0.01);
      for (int64_t i = 0; i < n; ++i)
        setFloat(v, t.v, i, std::fabs(floatAt(v, t.v, i)));
      write(g.ids[k].v, v);
    }
  }
  Bytes stepBytes = makeBytes(DType::I64, 1);
  setInt(stepBytes, DType::I64, 0, step);
  write(g.stepTensor, stepBytes);
  Bytes lrBytes = makeBytes(DType::F32, 1);
  setFloat(lrBytes, DType::F32, 0, 1e-3 * static_cast<double>(step));
  write(g.lrTensor, lrBytes);

  // The kernels start from the memory the host's step starts from, and
  // read the registers the schedule extracts before the group (step, lr).
  const Arena arena(host.arenaBytes(), 0);
  host.run(arena.base());
  const std::vector<Scalar> registers = host.registers();

  int32_t sites = 0;
  StatusOr<OptimizerTables> tables = planOptimizerGroup(
      optimizerSteps(schedule), values, adam,
      [&](int64_t id) -> void * { return arena.base() + offsetOf(id); },
      [&](const Instruction &, size_t, bool) { return sites++; },
      [](const Instruction &inst) { return inst.path; });
  ASSERT_TRUE(tables.isOk()) << tables.status().toString();
  ASSERT_EQ(tables->tensors.size(), members.size());
  // Both paths run: four elements per thread, and one at a time (an f64
  // parameter, and every tail).
  int vectorTensors = 0;
  for (const OptimizerTensor &t : tables->tensors)
    vectorTensors += t.vec4;
  EXPECT_GE(vectorTensors, 3);
  for (const OptimizerMove &move : tables->moves)
    if (offsetOf(move.result) != offsetOf(move.operand))
      std::memmove(arena.base() + offsetOf(move.result),
                   arena.base() + offsetOf(move.operand),
                   static_cast<size_t>(values.values[move.operand].bytes()));
  const OptimizerTensor *tensorTable = tables->tensors.data();
  const Chunk *chunkTable = tables->chunks.data();
  const Scalar *registerFile = registers.data();
  DeviceErrorRecord record{};
  DeviceErrorRecord *recordPointer = &record;
  long long stepNumber = 1;
  std::vector<void *> args = {&tensorTable, &chunkTable, &registerFile};
  if (adam) {
    args.push_back(&recordPointer);
    args.push_back(&stepNumber);
  }
  const KernelRunner run = findFunction(library, adam ? "zk_adam" : "zk_sgd");
  ASSERT_NE(run, nullptr);
  ASSERT_EQ(run(args.data(), static_cast<unsigned>(tables->chunks.size()),
                kOptimizerThreads),
            0);
  EXPECT_EQ(record.flag, 0u);

  for (size_t k = 0; k < members.size(); ++k) {
    const GroupIds &ids = g.ids[k];
    std::vector<int64_t> results = {ids.param2, ids.m2};
    if (adam)
      results.push_back(ids.v2);
    if (ids.copy >= 0)
      results.push_back(ids.copy);
    for (int64_t id : results) {
      const std::vector<std::byte> expected = host.read(id);
      EXPECT_EQ(std::memcmp(expected.data(), arena.base() + offsetOf(id),
                            expected.size()),
                0)
          << (adam ? "adam" : "sgd") << " member " << k << " value " << id
          << " (" << getDTypeName(values.values[id].dtype) << ") step " << step;
    }
  }
}

TEST(OptimizerKernelsOnCpuTest, GroupsMatchTheHostBitForBit) {
  const KernelLibrary library(getOptimizerSource());
  ASSERT_NE(library.get(), nullptr);
  std::mt19937_64 rng(5);
  for (bool adam : {true, false}) {
    const GroupSchedule g = optimizerGroup(adam, mixedMembers(), false);
    for (int64_t step = 1; step <= 2; ++step)
      expectStepMatchesTheHost(g, mixedMembers(), adam, step, rng,
                               library.get());
  }
}

TEST(OptimizerKernelsOnCpuTest, AnyNonFiniteFlagsAnInfinityInAnyChunk) {
  const KernelLibrary library(getOptimizerSource());
  ASSERT_NE(library.get(), nullptr);
  const KernelRunner run = findFunction(library.get(), "zk_anyNonFinite");
  ASSERT_NE(run, nullptr);
  // Three gradients over four chunks; an infinity nowhere, then in the last
  // element of each tensor in turn. The tally is left zeroed for the next
  // launch, which must not see an earlier launch's find.
  const std::vector<int64_t> sizes = {5, kOptimizerChunk + 7, 0};
  std::vector<std::vector<float>> data;
  for (int64_t n : sizes)
    data.emplace_back(static_cast<size_t>(n), 1.5f);
  NonFiniteTally tally{0, 0};
  for (int64_t poisoned = -1; poisoned < 2; ++poisoned) {
    SCOPED_TRACE("infinity in tensor " + std::to_string(poisoned));
    std::vector<CheckedTensor> tensors;
    std::vector<Chunk> chunks;
    for (size_t t = 0; t < sizes.size(); ++t) {
      std::fill(data[t].begin(), data[t].end(), 1.5f);
      if (static_cast<int64_t>(t) == poisoned)
        data[t].back() = std::numeric_limits<float>::infinity();
      addChunks(static_cast<int32_t>(tensors.size()), sizes[t], chunks);
      tensors.push_back({data[t].data(), DType::F32});
    }
    ASSERT_EQ(chunks.size(), 4u);
    std::vector<Scalar> registers(2);
    registers[1].f = -1;
    const CheckedTensor *tensorTable = tensors.data();
    const Chunk *chunkTable = chunks.data();
    NonFiniteTally *tallyPointer = &tally;
    Scalar *registerFile = registers.data();
    int64_t flag = 1;
    void *args[] = {&tensorTable, &chunkTable, &tallyPointer, &registerFile,
                    &flag};
    ASSERT_EQ(
        run(args, static_cast<unsigned>(chunks.size()), kOptimizerThreads), 0);
    EXPECT_EQ(registers[1].f, poisoned >= 0 ? 1.0 : 0.0);
    EXPECT_EQ(tally.found, 0u);
    EXPECT_EQ(tally.finished, 0u);
  }
}

} // namespace
