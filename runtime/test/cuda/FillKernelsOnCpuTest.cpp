//===- FillKernelsOnCpuTest.cpp - the fill kernel on the CPU --------------===//
//
// TensorOps.cu's fill kernel (FillKernels.cuh: linalg.fill, tensor.splat,
// splat constants, enqueueFillPattern) stores an unaligned head and tail
// element by element and the rest 16 bytes at a time. Here it runs on the
// CPU (KernelsOnCpu.h's shim) for every element width, lengths and
// addresses that give it a head, a body and a tail or only some of them,
// on its launch shape and on one block (the grid-stride loops going round):
// every element must be the host's, storeElement of castScalar of the
// register (or the given bits), and no byte around it may change.
//
//===----------------------------------------------------------------------===//

#include "KernelsOnCpu.h"
#include "cuda/FillParams.h"
#include "ops/Elements.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using zero::runtime::test::Arena;
using zero::runtime::test::findFunction;
using zero::runtime::test::kCudaShim;
using zero::runtime::test::KernelLibrary;
using zero::runtime::test::makeLauncher;
using zero::runtime::test::Runner;

namespace {

/// The kernel and its launcher, zk_fill.
std::string getFillSource() {
  return std::string(kCudaShim) + "#include \"cuda/FillKernels.cuh\"\n" +
         makeLauncher("zk_fill", "zero::runtime::cuda::fillKernel");
}

TEST(FillKernelsOnCpuTest, EveryFillStoresTheHostsElements) {
  const KernelLibrary library(getFillSource());
  ASSERT_NE(library.get(), nullptr);
  const Runner run = findFunction(library.get(), "zk_fill");
  ASSERT_NE(run, nullptr);

  Scalar f64Value, i64Value;
  f64Value.f = -1.1;
  i64Value.i = 300;
  struct Source {
    const Scalar *reg;
    DType from, to;
  };
  // A register cast to each type (rounded, wrapped, truncated to a bit).
  const std::vector<Source> sources = {
      {&f64Value, DType::F64, DType::F64},  {&f64Value, DType::F64, DType::F32},
      {&f64Value, DType::F64, DType::BF16}, {&f64Value, DType::F64, DType::F16},
      {&i64Value, DType::I64, DType::I32},  {&i64Value, DType::I64, DType::I1},
      {&f64Value, DType::F64, DType::I64}};
  int runs = 0;
  for (const Source &source : sources)
    for (int64_t numel : {1, 3, 7, 40, 1001})
      for (int64_t shift : {0, 1, 3, 8, 13}) {
        const int width = static_cast<int>(getDTypeWidth(source.to));
        const int64_t offset = shift * width; // aligned to its element
        const int64_t bytes = numel * width;
        SCOPED_TRACE(std::string(getDTypeName(source.from)) + " to " +
                     getDTypeName(source.to) + ", " + std::to_string(numel) +
                     " elements at +" + std::to_string(offset));
        // Guard bytes on both sides keep their pattern.
        std::vector<std::byte> expected(bytes + 2 * 64, std::byte{0xCD});
        const Scalar element =
            ops::castScalar(*source.reg, source.from, source.to);
        for (int64_t i = 0; i < numel; ++i)
          ops::storeElement(expected.data() + 64, source.to, i, element);
        for (unsigned blocks : {getFillBlocks(bytes), 1u}) {
          const Arena arena(static_cast<int64_t>(expected.size()) + offset, 0);
          std::byte *region = arena.base() + offset;
          std::memset(region, 0xCD, expected.size());
          char *dst = reinterpret_cast<char *>(region + 64);
          int64_t count = bytes;
          int elementWidth = width;
          FillSource fill{source.reg, source.from, source.to, 0};
          void *args[] = {&dst, &count, &elementWidth, &fill};
          ASSERT_EQ(run(args, blocks, kFillThreads), 0);
          EXPECT_EQ(std::memcmp(region, expected.data(), expected.size()), 0)
              << "on " << blocks << " blocks";
          ++runs;
        }
      }
  EXPECT_EQ(runs, 7 * 5 * 5 * 2);
}

TEST(FillKernelsOnCpuTest, PatternsFillBytes) {
  // enqueueFillPattern's source: the bits themselves, no register (a
  // shard's zero padding is a 1-byte pattern at any address).
  const KernelLibrary library(getFillSource());
  ASSERT_NE(library.get(), nullptr);
  const Runner run = findFunction(library.get(), "zk_fill");
  ASSERT_NE(run, nullptr);
  for (int64_t offset : {0, 5, 16})
    for (int64_t bytes : {0, 9, 70}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes at +" +
                   std::to_string(offset));
      const Arena arena(offset + bytes + 32, 0);
      std::memset(arena.base(), 0x11, offset + bytes + 32);
      std::vector<std::byte> expected(arena.base(),
                                      arena.base() + offset + bytes + 32);
      std::memset(expected.data() + offset, 0x5A, bytes);
      char *dst = reinterpret_cast<char *>(arena.base() + offset);
      int64_t count = bytes;
      int width = 1;
      FillSource fill{nullptr, DType::I64, DType::I64, 0x5A};
      void *args[] = {&dst, &count, &width, &fill};
      if (bytes > 0) {
        ASSERT_EQ(run(args, getFillBlocks(bytes), kFillThreads), 0);
      }
      EXPECT_EQ(std::memcmp(arena.base(), expected.data(), expected.size()), 0);
    }
}

} // namespace
