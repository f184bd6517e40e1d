//===- ElementKernelsOnCpuTest.cpp - element kernels on the CPU -----------===//
//
// The CUDA backend's kernels of single elements, compiled by the host
// compiler with KernelsOnCpu.h's shim and run on the CPU against the host
// backend's step (HostStep), bit for bit:
// - linalg.copy between dtypes (CopyKernels.cuh's castKernel), for every
//   pair of types over values that probe each cast (specials, values out of
//   an integer type's range, halfway cases, negative zero), on its launch
//   shape and on one block of 32 threads;
// - tensor.extract (ElementKernels.cuh's extractKernel) of every element of
//   a rank-3 tensor and of a rank-0 one, for every type, from the index
//   registers through the table TensorOps.cu uploads (getExtractTable);
//   and tensor.from_elements of those registers;
// - an index out of range: the first one raised through the device error
//   record (site, dimension, index, step), the result register untouched,
//   and a second failure not overwriting the first.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"
#include "HostStep.h"
#include "KernelsOnCpu.h"
#include "cuda/CopyParams.h"
#include "cuda/ElementParams.h"
#include "cuda/GridStride.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using namespace zero::runtime::cudatest;
using namespace zero::runtime::test;
using KernelRunner = zero::runtime::test::Runner;

namespace {

TEST(ElementKernelsOnCpuTest, CastIsTheHostsForEveryPairOfTypes) {
  const KernelLibrary library(
      std::string(kCudaShim) + "#include \"cuda/CopyKernels.cuh\"\n" +
      makeLauncher("zk_cast", "zero::runtime::cuda::castKernel"));
  ASSERT_NE(library.get(), nullptr);
  const KernelRunner run = findFunction(library.get(), "zk_cast");
  ASSERT_NE(run, nullptr);
  std::mt19937_64 rng(3);
  int runs = 0;
  for (DType from : allDTypes())
    for (DType to : allDTypes())
      for (int64_t n : {1, 61, 300}) {
        SCOPED_TRACE(std::string(dtypeName(from)) + " -> " + dtypeName(to) +
                     ", " + std::to_string(n) + " elements");
        ScheduleBuilder b;
        const int64_t in = b.tensor(from, {n});
        const int64_t init = b.tensor(to, {n});
        const int64_t result = b.tensor(to, {n}, init);
        b.op({{"op", "linalg.copy"},
              {"operands", {in, init}},
              {"results", {result}}});
        StatusOr<Schedule> schedule = Schedule::parse(b.text(), "cast.json");
        ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
        const Bytes input = makeCastInputs(from, n, rng);
        const unsigned threads[] = {kCopyThreads, 32};
        const unsigned blocks[] = {gridFor(n, kCopyThreads), 1};
        for (int launch : {0, 1}) {
          HostStep host(*schedule);
          ASSERT_TRUE(host.isLoaded());
          host.write(in, input.data(), static_cast<int64_t>(input.size()));
          const Arena arena(host.arenaBytes(), 0);
          host.run(arena.base());
          const std::vector<std::byte> expected = host.read(result);
          void *dst = arena.base() + host.offsetOf(init);
          const void *src = arena.base() + host.offsetOf(in);
          DType toArg = to, fromArg = from;
          int64_t numel = n;
          void *args[] = {&dst, &toArg, &src, &fromArg, &numel};
          ASSERT_EQ(run(args, blocks[launch], threads[launch]), 0);
          ++runs;
          EXPECT_EQ(std::memcmp(dst, expected.data(), expected.size()), 0)
              << blocks[launch] << " blocks of " << threads[launch];
        }
      }
  EXPECT_EQ(runs,
            2 * 3 * static_cast<int>(allDTypes().size() * allDTypes().size()));
}

std::string getElementSource() {
  return std::string(kCudaShim) + "#include \"cuda/ElementKernels.cuh\"\n" +
         makeLauncher("zk_extract", "zero::runtime::cuda::extractKernel") +
         makeLauncher("zk_from_elements",
                      "zero::runtime::cuda::fromElementsKernel");
}

TEST(ElementKernelsOnCpuTest, ExtractAndFromElementsAreTheHosts) {
  const KernelLibrary library(getElementSource());
  ASSERT_NE(library.get(), nullptr);
  const KernelRunner extract = findFunction(library.get(), "zk_extract");
  const KernelRunner fromElements =
      findFunction(library.get(), "zk_from_elements");
  ASSERT_NE(extract, nullptr);
  ASSERT_NE(fromElements, nullptr);
  std::mt19937_64 rng(12);
  for (DType type : allDTypes()) {
    SCOPED_TRACE(dtypeName(type));
    // Every element of a rank-3 tensor extracted, then rebuilt in reverse;
    // a rank-0 tensor's element.
    ScheduleBuilder b;
    const std::vector<int64_t> shape = {3, 4, 5};
    const int64_t source = b.tensor(type, shape);
    std::vector<int64_t> indexValues;
    for (int64_t i = 0; i < 5; ++i)
      indexValues.push_back(b.constant(DType::Index, i));
    std::vector<int64_t> scalars;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 5; ++k)
          scalars.push_back(b.extract(
              source, type, {indexValues[i], indexValues[j], indexValues[k]}));
    const int64_t zeroD = b.tensor(type, {});
    scalars.push_back(b.extract(zeroD, type));
    const std::vector<int64_t> reversed(scalars.rbegin(), scalars.rend());
    const int64_t rebuilt =
        b.tensor(type, {static_cast<int64_t>(reversed.size())});
    b.op({{"op", "tensor.from_elements"},
          {"operands", reversed},
          {"results", {rebuilt}}});
    StatusOr<Schedule> schedule = Schedule::parse(b.text(), "elements.json");
    ASSERT_TRUE(schedule.isOk()) << schedule.status().toString();
    HostStep host(*schedule);
    ASSERT_TRUE(host.isLoaded());
    const Bytes data = randomBytes(type, 60, rng, 100.0, -1000000, 1000000);
    host.write(source, data.data(), static_cast<int64_t>(data.size()));
    const Bytes one = randomBytes(type, 1, rng, 100.0, -1000000, 1000000);
    host.write(zeroD, one.data(), static_cast<int64_t>(one.size()));
    const Arena arena(host.arenaBytes(), 0);
    host.run(arena.base());
    const std::vector<Scalar> expected = host.registers();

    // Each extract from the host's registers, its result garbage first.
    std::vector<Scalar> registers = expected;
    DeviceErrorRecord errors = {};
    int extracts = 0;
    for (const Instruction &inst : schedule->streams()[0].instructions) {
      if (inst.code() != OpCode::Extract)
        continue;
      const ValueInfo &tensor = schedule->values().values[inst.operands[0]];
      const std::vector<int64_t> table = getExtractTable(
          tensor.shape,
          std::vector<int64_t>(inst.operands.begin() + 1, inst.operands.end()));
      ExtractParams p = {};
      p.tensor = arena.base() + host.offsetOf(tensor.id);
      p.type = tensor.dtype;
      p.rank = static_cast<int>(tensor.shape.size());
      p.table = table.data();
      p.result = inst.results[0];
      p.errors = &errors;
      std::memset(&registers[p.result], 0xA5, sizeof(Scalar));
      Scalar *file = registers.data();
      void *args[] = {&file, &p};
      ASSERT_EQ(extract(args, 1, 1), 0);
      ++extracts;
      EXPECT_EQ(std::memcmp(&registers[p.result], &expected[p.result],
                            sizeof(Scalar)),
                0)
          << inst.path;
    }
    EXPECT_EQ(extracts, 61);
    EXPECT_EQ(errors.flag, 0u);

    // from_elements of the registers, in the reversed order.
    const std::vector<std::byte> rebuiltBytes = host.read(rebuilt);
    std::vector<std::byte> out(rebuiltBytes.size(), std::byte{0xA5});
    void *dst = out.data();
    DType typeArg = type;
    int64_t numel = static_cast<int64_t>(reversed.size());
    const int64_t *ids = reversed.data();
    const Scalar *file = registers.data();
    void *args[] = {&dst, &typeArg, &numel, &ids, &file};
    ASSERT_EQ(fromElements(args, 1, 32), 0);
    EXPECT_EQ(out, rebuiltBytes);
  }
}

TEST(ElementKernelsOnCpuTest, ExtractRaisesTheFirstIndexOutOfRange) {
  const KernelLibrary library(getElementSource());
  ASSERT_NE(library.get(), nullptr);
  const KernelRunner extract = findFunction(library.get(), "zk_extract");
  ASSERT_NE(extract, nullptr);
  const float tensor[6] = {1, 2, 3, 4, 5, 6};
  for (int64_t bad : {3, -1, 1000}) {
    SCOPED_TRACE("index " + std::to_string(bad));
    // Registers 0 and 1 hold the indices, 2 the result.
    std::vector<Scalar> registers(3);
    registers[0].i = 1;
    registers[1].i = bad;
    registers[2].f = 42.0;
    const std::vector<int64_t> table = getExtractTable({2, 3}, {0, 1});
    DeviceErrorRecord errors = {};
    ExtractParams p = {};
    p.tensor = tensor;
    p.type = DType::F32;
    p.rank = 2;
    p.table = table.data();
    p.result = 2;
    p.errors = &errors;
    p.site = 7;
    p.step = 11;
    Scalar *file = registers.data();
    void *args[] = {&file, &p};
    ASSERT_EQ(extract(args, 1, 1), 0);
    EXPECT_EQ(errors.flag, 1u);
    EXPECT_EQ(errors.site, 7);
    EXPECT_EQ(errors.dim, 1);
    EXPECT_EQ(errors.value, bad);
    EXPECT_EQ(errors.step, 11);
    EXPECT_EQ(registers[2].f, 42.0);
    // A second failure leaves the first in the record.
    registers[0].i = -5;
    p.site = 8;
    ASSERT_EQ(extract(args, 1, 1), 0);
    EXPECT_EQ(errors.site, 7);
    EXPECT_EQ(errors.dim, 1);
  }
}

} // namespace
