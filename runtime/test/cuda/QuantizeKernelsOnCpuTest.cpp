//===- QuantizeKernelsOnCpuTest.cpp - the quantizer's kernels on the CPU --===//
//
// Quantize.cu's kernels (QuantizeKernels.cuh: qwZ's quantized blocks, qgZ's
// int4 hops and their sums) run here on the CPU (KernelsOnCpu.h's shim) on
// QuantizeGpuTest's cases: every byte must be the host quantizer's
// (ops/Quantize.h), scales at an odd offset as in the packed blocks, NaN
// scales and 16-bit NaNs included. Each quantize case runs on its launch
// shape (a block per quantization block) and on fewer blocks than
// quantization blocks (the grid-stride loop going round, the shared absmax
// tree reused); the element kernels on their grid and on one block.
//
//===----------------------------------------------------------------------===//

#include "KernelsOnCpu.h"
#include "QuantizeCases.h"

#include "cuda/GridStride.h"
#include "cuda/QuantizeParams.h"
#include "ops/Quantize.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

constexpr unsigned kThreads = cuda::kQuantizeThreads;

const char *getTypeName(DType type) {
  return type == DType::F32    ? "zero::runtime::DType::F32"
         : type == DType::BF16 ? "zero::runtime::DType::BF16"
                               : "zero::runtime::DType::F16";
}

/// The kernels, with a launcher of each per element type:
/// zk_quantize_<type>, zk_dequantize_<type>, zk_round_<type>, and
/// zk_accumulate.
std::string getQuantizeSource() {
  std::string source =
      std::string(kCudaShim) + "#include \"cuda/QuantizeKernels.cuh\"\n" +
      makeLauncher("zk_accumulate", "zero::runtime::cuda::accumulateKernel");
  for (DType type : {DType::F32, DType::BF16, DType::F16}) {
    const std::string name = getDTypeName(type);
    const std::string as = std::string("<") + getTypeName(type) + ">";
    source += makeLauncher("zk_quantize_" + name,
                           "zero::runtime::cuda::quantizeKernel" + as);
    source += makeLauncher("zk_dequantize_" + name,
                           "zero::runtime::cuda::dequantizeKernel" + as);
    source += makeLauncher("zk_round_" + name,
                           "zero::runtime::cuda::roundSumsKernel" + as);
  }
  return source;
}

/// `bytes` of garbage in CPU memory aligned as cudaMalloc aligns it.
struct Buffer {
  explicit Buffer(size_t bytes) : arena(static_cast<int64_t>(bytes), 0) {
    std::memset(arena.base(), 0xA5, bytes);
  }
  std::byte *get() const { return arena.base(); }
  std::vector<uint8_t> read(size_t bytes, size_t at = 0) const {
    const auto *from = reinterpret_cast<const uint8_t *>(get() + at);
    return std::vector<uint8_t>(from, from + bytes);
  }
  Arena arena;
};

/// The cases small enough to run a block's 256 threads as fibers: at most
/// 64 quantization blocks.
std::vector<QuantizeCase> getCpuCases() {
  std::vector<QuantizeCase> small;
  for (const QuantizeCase &c : getQuantizeCases())
    if (getNumBlocks(c.n, c.blockSize) <= 64)
      small.push_back(c);
  return small;
}

TEST(QuantizeKernelsOnCpuTest, QuantizesAsTheHostBitForBit) {
  const KernelLibrary library(getQuantizeSource());
  ASSERT_NE(library.get(), nullptr);
  unsigned seed = 1;
  int runs = 0;
  for (const QuantizeCase &c : getCpuCases())
    for (bool nonFinite : {false, true}) {
      SCOPED_TRACE(describeQuantizeCase(c) +
                   (nonFinite ? ", with inf and NaN" : ""));
      const Runner run = findFunction(
          library.get(), std::string("zk_quantize_") + getDTypeName(c.type));
      ASSERT_NE(run, nullptr);
      const std::vector<uint8_t> in =
          asElements(makeFloats(c.n, c.blockSize, nonFinite, seed++), c.type);
      const size_t valueBytes =
          static_cast<size_t>(getQuantizedBytes(c.n, c.bits));
      const int64_t numBlocks = getNumBlocks(c.n, c.blockSize);
      const size_t scaleBytes = static_cast<size_t>(4 * numBlocks);
      std::vector<uint8_t> values(valueBytes),
          scales(kScaleOffset + scaleBytes);
      quantize::quantizeElements(
          in.data(), quantize::getQuantizedFormat(c.type), c.n, c.bits,
          c.blockSize, values.data(), scales.data() + kScaleOffset);

      for (unsigned grid : {static_cast<unsigned>(numBlocks), 3u}) {
        SCOPED_TRACE(std::to_string(grid) + " blocks");
        Buffer input(in.size()), outValues(valueBytes),
            outScales(kScaleOffset + scaleBytes);
        std::memcpy(input.get(), in.data(), in.size());
        const void *inArg = input.get();
        int64_t n = c.n, blockSize = c.blockSize, blocks = numBlocks;
        int bits = c.bits;
        auto *valuesArg = reinterpret_cast<uint8_t *>(outValues.get());
        void *scalesArg = outScales.get() + kScaleOffset;
        void *args[] = {&inArg,  &n,         &bits,     &blockSize,
                        &blocks, &valuesArg, &scalesArg};
        ASSERT_EQ(run(args, grid, kThreads), 0);
        ++runs;
        EXPECT_EQ(
            outScales.read(scaleBytes, kScaleOffset),
            std::vector<uint8_t>(scales.begin() + kScaleOffset, scales.end()));
        EXPECT_EQ(outValues.read(valueBytes), values);
      }
    }
  EXPECT_GT(runs, 300);
}

TEST(QuantizeKernelsOnCpuTest, DequantizesAsTheHostBitForBit) {
  const KernelLibrary library(getQuantizeSource());
  ASSERT_NE(library.get(), nullptr);
  unsigned seed = 100;
  int runs = 0;
  for (const QuantizeCase &c : getQuantizeCases()) {
    SCOPED_TRACE(describeQuantizeCase(c));
    const Runner run = findFunction(
        library.get(), std::string("zk_dequantize_") + getDTypeName(c.type));
    ASSERT_NE(run, nullptr);
    const PackedCase host = packOnHost(c, seed++);
    const size_t scaleBytes = host.scaleBytes;
    const std::vector<uint8_t> &packed = host.packed;
    const std::vector<uint8_t> &expected = host.dequantized;

    for (unsigned grid : {cuda::gridFor(c.n, kThreads), 1u}) {
      Buffer device(packed.size()), out(expected.size());
      std::memcpy(device.get(), packed.data(), packed.size());
      const uint8_t *valuesArg = reinterpret_cast<const uint8_t *>(
          device.get() + kScaleOffset + scaleBytes);
      const void *scalesArg = device.get() + kScaleOffset;
      int64_t n = c.n, blockSize = c.blockSize;
      int bits = c.bits;
      void *outArg = out.get();
      void *args[] = {&valuesArg, &scalesArg, &n, &bits, &blockSize, &outArg};
      ASSERT_EQ(run(args, grid, kThreads), 0);
      ++runs;
      EXPECT_EQ(out.read(expected.size()), expected) << grid << " blocks";
    }
  }
  EXPECT_GT(runs, 300);
}

// qgZ's hop: sums += dequantized, in f32, sender after sender; then the
// results rounded, divided by the group size for avg.
TEST(QuantizeKernelsOnCpuTest, AccumulatesAndRoundsTheSumsAsTheHost) {
  const KernelLibrary library(getQuantizeSource());
  ASSERT_NE(library.get(), nullptr);
  const Runner accumulate = findFunction(library.get(), "zk_accumulate");
  ASSERT_NE(accumulate, nullptr);
  int64_t n = 1001, blockSize = 64;
  std::vector<float> expected = makeFloats(n, blockSize, false, 7);
  Buffer sums(n * 4);
  std::memcpy(sums.get(), expected.data(), n * 4);
  for (unsigned sender = 0; sender < 3; ++sender) {
    SCOPED_TRACE("sender " + std::to_string(sender));
    const std::vector<float> x =
        makeFloats(n, blockSize, sender == 2, 20 + sender);
    const PackedHop hop = packHopOnHost(x, blockSize, expected);
    const std::vector<uint8_t> &packed = hop.packed;
    const size_t scaleBytes = hop.scaleBytes;
    Buffer device(packed.size());
    std::memcpy(device.get(), packed.data(), packed.size());
    const uint8_t *valuesArg =
        reinterpret_cast<const uint8_t *>(device.get() + 1 + scaleBytes);
    const void *scalesArg = device.get() + 1;
    int bits = 4;
    float *sumsArg = reinterpret_cast<float *>(sums.get());
    void *args[] = {&valuesArg, &scalesArg, &n, &bits, &blockSize, &sumsArg};
    // Alternate grids: the sums must not depend on the shape.
    ASSERT_EQ(accumulate(args, sender % 2 ? 1u : cuda::gridFor(n, kThreads),
                         kThreads),
              0);
    std::vector<uint8_t> bytes(n * 4);
    std::memcpy(bytes.data(), expected.data(), bytes.size());
    EXPECT_EQ(sums.read(n * 4), bytes);
  }
  for (DType type : {DType::F32, DType::BF16, DType::F16})
    for (int64_t divisor : {1, 3, 4}) {
      SCOPED_TRACE(std::string(getDTypeName(type)) + ", divisor " +
                   std::to_string(divisor));
      const Runner round = findFunction(
          library.get(), std::string("zk_round_") + getDTypeName(type));
      ASSERT_NE(round, nullptr);
      const size_t bytes = static_cast<size_t>(n * getDTypeWidth(type));
      std::vector<uint8_t> rounded(bytes);
      quantize::roundSums(expected.data(), n, divisor,
                          quantize::getQuantizedFormat(type), rounded.data());
      Buffer out(bytes);
      const float *sumsArg = reinterpret_cast<const float *>(sums.get());
      int64_t divisorArg = divisor;
      void *outArg = out.get();
      void *args[] = {&sumsArg, &n, &divisorArg, &outArg};
      ASSERT_EQ(round(args, cuda::gridFor(n, kThreads), kThreads), 0);
      EXPECT_EQ(out.read(bytes), rounded);
    }
}

} // namespace
