//===- GeneratedOnCpuTest.cpp - generated kernels run on the CPU ----------===//
//
// A generated kernel's own code (its index arithmetic, loops, loads and
// stores, its vector path, the shuffles, shared memory and barriers of the
// cooperative and column reductions) would otherwise run only on a GPU. Its
// source is C++ but for a few CUDA names: with the shim below, the host
// compiler builds it, and a launch runs every block's threads as fibers
// that meet at their barriers as the GPU's threads do. Every case of
// StructuredCases.h runs here against the host backend, compared as
// StructuredGpuTest compares the GPU; those on the vector path also with
// tensors that their vectors cannot load aligned, which take the scalar
// loop (every access is checked for alignment). So do the row programs of
// RowPrograms.h (softmax and layer norm as one kernel, RowFusion.h),
// within RowFusionGpuTest's bound of the host. ElementMath.h takes its
// host paths here where the GPU has conversion instructions;
// ElementMathTest shows they agree.
//
//===----------------------------------------------------------------------===//

#include "Checked.h"
#include "HostStep.h"
#include "KernelsOnCpu.h"
#include "RowPrograms.h"
#include "StructuredCaseRun.h"
#include "StructuredCases.h"
#include "cuda/Codegen.h"
#include "cuda/RowFusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using zero::runtime::test::Arena;
using zero::runtime::test::buildSchedule;
using zero::runtime::test::CaseData;
using zero::runtime::test::CaseSchedule;
using zero::runtime::test::compareCaseResult;
using zero::runtime::test::findFunction;
using zero::runtime::test::getStructuredCases;
using zero::runtime::test::HostRun;
using zero::runtime::test::HostStep;
using zero::runtime::test::kCudaShim;
using zero::runtime::test::KernelLibrary;
using zero::runtime::test::makeAllCaseData;
using zero::runtime::test::makeCaseData;
using zero::runtime::test::makeLauncher;
using zero::runtime::test::Runner;
using zero::runtime::test::runOnHost;
using zero::runtime::test::StructuredCase;

namespace {

/// The device's error record as the kernels write it (ZkError).
struct ErrorRecord {
  unsigned long long flag = 0;
  int site = 0;
  int dim = 0;
  long long value = 0;
  long long step = 0;
};

/// Multiprocessors the launch shapes are made for: few, so that the
/// grid-stride loops go round more than once on the larger cases.
constexpr int kMultiProcessors = 2;

/// A case, its schedule and kernel.
struct CpuCase {
  const StructuredCase *c = nullptr;
  CaseSchedule schedule;
  LoopNest nest;
  GeneratedKernel kernel;
  size_t runner = 0; // its launcher's index in the library
};

bool overlaps(int64_t a, int64_t aBytes, int64_t b, int64_t bBytes) {
  return a < b + bBytes && b < a + aBytes;
}

/// The case's kernel as the CUDA device generates it (restricted inputs
/// where no input shares a byte with a result).
bool makeCpuCase(const StructuredCase &c, CpuCase &out) {
  std::string error;
  out.c = &c;
  out.schedule = buildSchedule(c, error);
  EXPECT_TRUE(out.schedule.schedule) << c.name << ": " << error;
  if (!out.schedule.schedule)
    return false;
  const ValueTable &values = out.schedule.schedule->values();
  StatusOr<LoopNest> nest =
      zero::runtime::cudatest::buildCheckedLoopNest(*out.schedule.op, values);
  EXPECT_TRUE(nest.isOk()) << c.name << ": " << nest.status().toString();
  if (!nest.isOk())
    return false;
  out.nest = *nest;
  CodegenOptions options;
  options.restrictInputs = true;
  for (const NestOperand &input : out.nest.inputs)
    for (int64_t result : out.nest.results)
      if (overlaps(out.schedule.offsets[input.value],
                   values.values[input.value].bytes(),
                   out.schedule.offsets[result], values.values[result].bytes()))
        options.restrictInputs = false;
  StatusOr<GeneratedKernel> kernel = generateKernel(out.nest, values, options);
  EXPECT_TRUE(kernel.isOk()) << c.name << ": " << kernel.status().toString();
  if (!kernel.isOk())
    return false;
  out.kernel = *kernel;
  return true;
}

/// A generated kernel to compile: its name and source (the prelude first).
struct KernelSource {
  std::string name;
  std::string source;
};

/// One source for all kernels: the shim, the prelude once, then each kernel
/// under a name of its own with a launcher, "zk_run<i>".
std::string makeSource(const std::vector<KernelSource> &kernels) {
  const std::string &prelude = getKernelPrelude();
  std::string source = std::string(kCudaShim) + prelude;
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(kernels[i].source.compare(0, prelude.size(), prelude), 0)
        << kernels[i].name << " does not start with the prelude";
    std::string text = kernels[i].source.substr(prelude.size());
    const std::string name = "zk_case" + std::to_string(i);
    const std::string &old = kernels[i].name;
    for (size_t at = text.find(old); at != std::string::npos;
         at = text.find(old, at + name.size()))
      text.replace(at, old.size(), name);
    source += text + makeLauncher("zk_run" + std::to_string(i), name);
  }
  return source;
}

/// Runs case `k` through its kernel on a fresh arena, `shift` bytes past a
/// 256-byte boundary, and compares it with the host backend's run.
void runCase(const CpuCase &k, void *library, int64_t shift) {
  const StructuredCase &c = *k.c;
  SCOPED_TRACE(c.name + (shift ? " at +" + std::to_string(shift) : ""));
  const HostRun host = runOnHost(c, k.schedule);
  const Schedule &schedule = *k.schedule.schedule;
  const ValueTable &values = schedule.values();

  const Arena arena(schedule.arenaBytes(MemorySpace::Device), shift);
  std::byte *const base = arena.base();
  for (size_t i = 0; i < c.values.size(); ++i)
    if (c.values[i].isTensor && c.values[i].aliasOf < 0 &&
        c.values[i].numel() > 0) {
      const std::vector<uint8_t> data = makeCaseData(c.values[i], i + 1);
      std::memcpy(base + k.schedule.offsets[i], data.data(), data.size());
    }
  auto tensor = [&](int64_t id) -> void * {
    return base + k.schedule.offsets[id];
  };
  std::vector<Scalar> registers = host.registers;
  ErrorRecord record;
  int firstSite = 0;
  long long step = 1;

  // Arguments in the kernel's order, as prepareStructured binds them.
  std::vector<void *> pointers;
  for (const KernelArgument &argument : getKernelArguments(k.nest, k.kernel))
    pointers.push_back(argument.isRegister
                           ? static_cast<void *>(&registers[argument.value])
                           : tensor(argument.value));
  // A destination sharing bytes with a result, without being it, is moved
  // into its result first (the device does the same).
  for (size_t o = 0; o < k.nest.outputs.size(); ++o) {
    const int64_t from = k.schedule.offsets[k.nest.outputs[o].value];
    const int64_t to = k.schedule.offsets[k.nest.results[o]];
    const int64_t bytes = values.values[k.nest.outputs[o].value].bytes();
    bool shared = false;
    for (int64_t result : k.nest.results)
      shared |= overlaps(from, bytes, k.schedule.offsets[result],
                         values.values[result].bytes());
    if (from == to || !shared)
      continue;
    std::memmove(base + to, base + from, static_cast<size_t>(bytes));
    pointers[2 * o + 1] = base + to;
  }
  std::vector<void *> args;
  for (void *&pointer : pointers)
    args.push_back(&pointer);
  void *recordPointer = &record;
  if (!k.kernel.extractSites.empty()) {
    args.push_back(&recordPointer);
    args.push_back(&firstSite);
    args.push_back(&step);
  }
  ASSERT_EQ(args.size(), k.kernel.numParameters());

  const Runner run =
      findFunction(library, "zk_run" + std::to_string(k.runner));
  ASSERT_NE(run, nullptr);
  const LaunchShape shape = getLaunchShape(k.kernel, kMultiProcessors);
  if (shape.blocks > 0) {
    ASSERT_EQ(run(args.data(), static_cast<unsigned>(shape.blocks),
                  static_cast<unsigned>(shape.threads)),
              0)
        << "threads waited at barriers that none of them could release";
  }

  if (!c.runError.empty()) {
    ASSERT_FALSE(host.status.isOk());
    EXPECT_EQ(record.flag, 1u) << "no out-of-range index was recorded";
    EXPECT_EQ(record.step, 1);
    return;
  }
  ASSERT_TRUE(host.status.isOk()) << host.status.toString();
  EXPECT_EQ(record.flag, 0u);
  const CaseData data = makeAllCaseData(c);
  for (size_t r = 0; r < c.checked.size(); ++r) {
    const int64_t id = c.checked[r];
    const std::byte *bytes = base + k.schedule.offsets[id];
    const std::vector<uint8_t> result(reinterpret_cast<const uint8_t *>(bytes),
                                      reinterpret_cast<const uint8_t *>(bytes) +
                                          values.values[id].bytes());
    EXPECT_EQ(compareCaseResult(c, r, host.results[r], result, data), "")
        << "value " << id << " (" << getDTypeName(c.values[id].dtype) << ")";
  }
}

TEST(GeneratedOnCpuTest, EveryGeneratedKernelMatchesTheHost) {
  const std::vector<StructuredCase> all = getStructuredCases();
  std::vector<CpuCase> cases;
  for (const StructuredCase &c : all) {
    CpuCase k;
    if (makeCpuCase(c, k))
      cases.push_back(std::move(k));
  }
  ASSERT_EQ(cases.size(), all.size());
  std::vector<KernelSource> sources;
  for (CpuCase &k : cases) {
    k.runner = sources.size();
    sources.push_back({k.kernel.name, k.kernel.source});
  }
  const KernelLibrary library(makeSource(sources));
  if (library.get()) {
    // Kernels on the vector path run again with every tensor moved by the
    // case's widest element: each element stays aligned, the vectors (two
    // elements or more) mostly do not, and those take the scalar loop.
    int vectorKernels = 0, warpKernels = 0, blockKernels = 0, columnKernels = 0;
    for (const CpuCase &k : cases) {
      runCase(k, library.get(), 0);
      if (k.nest.pointsPerBlock > 0)
        ++columnKernels;
      else if (k.nest.pointThreads > kWarpThreads)
        ++blockKernels;
      else if (k.nest.pointThreads > 1)
        ++warpKernels;
      if (k.kernel.vectorWidth > 1) {
        ++vectorKernels;
        int64_t widest = 1;
        for (const auto &value : k.c->values)
          if (value.isTensor)
            widest = std::max(widest, getDTypeWidth(value.dtype));
        runCase(k, library.get(), widest);
      }
    }
    EXPECT_GE(vectorKernels, 15);
    // The threads that meet: a warp's shuffles, a block's shared memory.
    EXPECT_GE(warpKernels, 3);
    EXPECT_GE(blockKernels, 3);
    EXPECT_GE(columnKernels, 2);
  }
}

//===----------------------------------------------------------------------===//
// Row programs (RowFusion.h): softmax and layer norm as one kernel
//===----------------------------------------------------------------------===//

struct RowCase {
  std::string name;
  cudatest::RowProgramSchedule s;
  DType dtype;
  int64_t rowLength;
};

/// The programs of RowFusionGpuTest: rows of 200 (not a multiple of the
/// warp), 96 (a multiple), 768 (GPT-2's layer norm) and 5000 (a block per
/// row).
std::vector<RowCase> getRowCases() {
  std::vector<RowCase> cases;
  for (DType dtype : {DType::F32, DType::F64, DType::BF16})
    cases.push_back({std::string("softmax ") + getDTypeName(dtype),
                     cudatest::makeSoftmax(dtype, {3, 5}, 200), dtype, 200});
  cases.push_back({"softmax, a block per row",
                   cudatest::makeSoftmax(DType::F32, {2}, 5000), DType::F32,
                   5000});
  for (DType dtype : {DType::F32, DType::F64})
    cases.push_back({std::string("layer norm ") + getDTypeName(dtype),
                     cudatest::makeLayerNorm(dtype, 6, 96), dtype, 96});
  cases.push_back({"layer norm, GPT-2 rows",
                   cudatest::makeLayerNorm(DType::F32, 16, 768), DType::F32,
                   768});
  return cases;
}

/// Runs the row program at the start of `c`'s schedule through its kernel
/// and compares what it writes with the host backend's run of the same
/// instructions: maxima exact, sums reassociated, so every value within
/// 4 R u (1 + |host|) of the host's (RowFusionGpuTest's bound).
void runRowCase(const RowCase &c, const Schedule &schedule,
                const RowProgram &program, void *library, size_t runner) {
  SCOPED_TRACE(c.name);
  const ValueTable &values = schedule.values();
  HostStep host(schedule);
  ASSERT_TRUE(host.isLoaded());
  auto offsetOf = [&](int64_t id) { return host.offsetOf(id); };
  std::mt19937_64 rng(7);
  for (int64_t id : c.s.inputs) {
    const cudatest::Bytes data =
        cudatest::randomBytes(c.dtype, values.values[id].numel, rng, 3.0);
    host.write(id, data.data(), static_cast<int64_t>(data.size()));
  }
  // The kernel starts from the memory the host's step starts from; its
  // scalars (the program's constants) are the host's registers.
  const Arena arena(host.arenaBytes(), 0);
  host.run(arena.base());
  std::vector<Scalar> registers = host.registers();

  // Arguments in RowKernel's order, as prepareRowProgram binds them.
  std::vector<void *> pointers;
  for (int64_t id : program.outputs())
    pointers.push_back(arena.base() + offsetOf(id));
  for (const RowInput &input : program.inputs)
    pointers.push_back(arena.base() + offsetOf(input.value));
  for (int64_t id : program.scalars)
    pointers.push_back(&registers[id]);
  std::vector<void *> args;
  for (void *&pointer : pointers)
    args.push_back(&pointer);
  StatusOr<RowKernel> kernel = generateRowKernel(program, values);
  ASSERT_TRUE(kernel.isOk());
  GeneratedKernel shapeOf;
  shapeOf.pointThreads = kernel->pointThreads;
  shapeOf.numPoints = kernel->numPoints;
  shapeOf.numThreads = kernel->numPoints * kernel->pointThreads;
  const LaunchShape shape = getLaunchShape(shapeOf, kMultiProcessors);
  const Runner run = findFunction(library, "zk_run" + std::to_string(runner));
  ASSERT_NE(run, nullptr);
  ASSERT_EQ(run(args.data(), static_cast<unsigned>(shape.blocks),
                static_cast<unsigned>(shape.threads)),
            0)
      << "threads waited at barriers that none of them could release";

  const double bound =
      4.0 * static_cast<double>(c.rowLength) * cudatest::unitRoundoff(c.dtype);
  for (int64_t id : program.outputs()) {
    const ValueInfo &value = values.values[id];
    const std::vector<std::byte> hostBytes = host.read(id);
    cudatest::Bytes expected(value.bytes()), actual(value.bytes());
    std::memcpy(expected.data(), hostBytes.data(), expected.size());
    std::memcpy(actual.data(), arena.base() + offsetOf(id), actual.size());
    int64_t worst = -1;
    double worstError = 0;
    for (int64_t k = 0; k < value.numel; ++k) {
      const double x = cudatest::floatAt(expected, value.dtype, k);
      const double y = cudatest::floatAt(actual, value.dtype, k);
      const double error = std::fabs(x - y) / (1.0 + std::fabs(x));
      if (!(error <= worstError)) {
        worstError = error;
        worst = k;
      }
    }
    EXPECT_LE(worstError, bound)
        << "value " << id << " element " << worst << ": host "
        << cudatest::floatAt(expected, value.dtype, worst) << ", kernel "
        << cudatest::floatAt(actual, value.dtype, worst);
  }
}

TEST(GeneratedOnCpuTest, EveryRowProgramMatchesTheHost) {
  const std::vector<RowCase> cases = getRowCases();
  std::vector<Schedule> schedules;
  std::vector<std::unique_ptr<zero::runtime::cudatest::RowSearch>> searches;
  std::vector<RowProgram> programs;
  std::vector<KernelSource> sources;
  schedules.reserve(cases.size()); // the searches hold them by reference
  for (const RowCase &c : cases) {
    StatusOr<Schedule> schedule = Schedule::parse(c.s.b.text(), "rows.json");
    ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
    schedules.push_back(std::move(*schedule));
    searches.push_back(
        std::make_unique<zero::runtime::cudatest::RowSearch>(schedules.back()));
    std::optional<RowProgram> program = searches.back()->find(0);
    ASSERT_TRUE(program) << c.name;
    ASSERT_EQ(program->steps.size(), c.s.programLength) << c.name;
    StatusOr<RowKernel> kernel =
        generateRowKernel(*program, schedules.back().values());
    ASSERT_TRUE(kernel.isOk()) << c.name << ": " << kernel.status().toString();
    sources.push_back({kernel->name, kernel->source});
    programs.push_back(std::move(*program));
  }
  const KernelLibrary library(makeSource(sources));
  if (!library.get())
    return;
  for (size_t i = 0; i < cases.size(); ++i)
    runRowCase(cases[i], schedules[i], programs[i], library.get(), i);
}

} // namespace
