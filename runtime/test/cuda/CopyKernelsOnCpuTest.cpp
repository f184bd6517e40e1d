//===- CopyKernelsOnCpuTest.cpp - strided copies' kernels on the CPU ------===//
//
// The CUDA backend's strided copies (transpose, broadcast, slices: CopyPlan.h
// and CopyKernels.cuh) would otherwise run only on a GPU. Here the planner
// plans each copy over CPU memory, and its kernel, compiled by the host
// compiler with KernelsOnCpu.h's shim, runs on the launch shape the device
// uses (the transpose's 32 x 8 threads meeting at their barriers); the
// bytes written must be exactly those of the copy's definition,
// dst[dstOffset + i . ds] = src[srcOffset + i . ss], and no other byte may
// change. Every grid-stride plan also runs with 64-bit index math, which a
// test's small tensors would not otherwise reach.
//
//===----------------------------------------------------------------------===//

#include "KernelsOnCpu.h"
#include "cuda/CopyPlan.h"
#include "ops/CopyShape.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::cuda;
using zero::runtime::test::Arena;
using zero::runtime::test::findFunction;
using zero::runtime::test::kCudaShim;
using zero::runtime::test::KernelLibrary;

namespace {

/// The launchers: zk_generic_<width>_<32|64> and zk_transpose_<width>.
std::string makeCopySource() {
  std::string source = std::string(kCudaShim) +
                       "#include \"cuda/CopyKernels.cuh\"\n"
                       "using namespace zero::runtime::cuda;\n";
  const std::map<int, std::string> types = {{1, "uint8_t"},
                                            {2, "uint16_t"},
                                            {4, "uint32_t"},
                                            {8, "uint64_t"},
                                            {16, "uint4"}};
  auto launcher = [](const std::string &name, const std::string &kernel) {
    return "extern \"C\" int " + name +
           "(void **args, const unsigned *grid, const unsigned *block) {\n"
           "  return zkLaunch(" +
           kernel +
           ", args, ZkDim3{grid[0], grid[1], grid[2]},\n"
           "                  ZkDim3{block[0], block[1], block[2]});\n}\n";
  };
  for (const auto &[width, type] : types) {
    const std::string w = std::to_string(width);
    source += launcher("zk_generic_" + w + "_32",
                       "stridedCopyKernel<" + type + ", uint32_t>");
    source += launcher("zk_generic_" + w + "_64",
                       "stridedCopyKernel<" + type + ", int64_t>");
    if (width <= 8)
      source += launcher("zk_transpose_" + w, "transposeKernel<" + type + ">");
  }
  return source;
}

using CopyLauncher = int (*)(void **, const unsigned *, const unsigned *);

/// One strided copy: dst[dstOffset + i . ds] = src[srcOffset + i . ss] for
/// each index i of `shape`, elements of `width` bytes, each buffer `shift`
/// bytes past a 256-byte boundary.
struct CopyCase {
  std::string name;
  std::vector<int64_t> shape, dstStrides, srcStrides;
  int64_t dstOffset = 0, srcOffset = 0;
  int64_t width = 4;
  int64_t dstShift = 0, srcShift = 0;
};

std::vector<int64_t> rowMajor(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;)
    strides[k - 1] = strides[k] * shape[k];
  return strides;
}

/// linalg.transpose of a row-major `input` by `permutation`.
CopyCase transposeOf(const std::vector<int64_t> &input,
                     const std::vector<int64_t> &permutation, int64_t width) {
  CopyCase c;
  const std::vector<int64_t> inputStrides = rowMajor(input);
  for (int64_t dim : permutation) {
    c.shape.push_back(input[dim]);
    c.srcStrides.push_back(inputStrides[dim]);
  }
  c.dstStrides = rowMajor(c.shape);
  c.width = width;
  c.name = "transpose of [";
  for (size_t k = 0; k < input.size(); ++k)
    c.name += (k ? ", " : "") + std::to_string(input[k]);
  c.name += "] by [";
  for (size_t k = 0; k < permutation.size(); ++k)
    c.name += (k ? ", " : "") + std::to_string(permutation[k]);
  c.name += "], " + std::to_string(width) + "-byte elements";
  return c;
}

std::vector<CopyCase> getCopyCases() {
  std::vector<CopyCase> cases;
  // Tiles: partial ones at both edges, outer dimensions, every width.
  for (int64_t width : {1, 2, 4, 8})
    cases.push_back(transposeOf({70, 45}, {1, 0}, width));
  cases.push_back(transposeOf({3, 40, 33}, {0, 2, 1}, 4));
  cases.push_back(transposeOf({2, 3, 31, 65}, {1, 0, 3, 2}, 2));
  // The grid-stride kernel: a reversal of the dimensions, and a swap of the
  // outer ones (innermost contiguous on both sides: widened elements).
  cases.push_back(transposeOf({5, 6, 7}, {2, 1, 0}, 4));
  cases.push_back(transposeOf({6, 5, 8}, {1, 0, 2}, 2));
  // linalg.broadcast of [37] along a new outer dimension (stride 0 outside:
  // widened), and of [5] along a new inner one (stride 0 innermost).
  cases.push_back({"broadcast [37] to [5, 37]", {5, 37}, {37, 1}, {0, 1}});
  cases.push_back({"broadcast [36] to [5, 36]", {5, 36}, {36, 1}, {0, 1}});
  cases.push_back({"broadcast [5] to [5, 37]", {5, 37}, {37, 1}, {1, 0}});
  // tensor.extract_slice [4, 6] at (2, 3) step (2, 1) of [10, 20], and
  // insert_slice of [4, 8] at (1, 4) of [6, 16] (bf16).
  cases.push_back({"extract_slice", {4, 6}, {6, 1}, {40, 1}, 0, 2 * 20 + 3, 4});
  cases.push_back({"insert_slice", {4, 8}, {16, 1}, {8, 1}, 1 * 16 + 4, 0, 2});
  // A contiguous copy: one memcpy.
  cases.push_back({"contiguous", {3, 16}, {16, 1}, {16, 1}, 0, 0, 8});
  // The same widenable copies with addresses their widest elements do not
  // allow: narrower elements.
  for (size_t k = 0, n = cases.size(); k < n; ++k) {
    CopyCase c = cases[k];
    if (c.shape.empty() || c.width > 4)
      continue;
    c.dstShift = c.width;
    c.srcShift = 2 * c.width;
    c.name += ", shifted";
    cases.push_back(c);
  }
  return cases;
}

int64_t spanOf(const std::vector<int64_t> &shape,
               const std::vector<int64_t> &strides, int64_t offset) {
  int64_t last = offset;
  for (size_t k = 0; k < shape.size(); ++k)
    last += (shape[k] - 1) * strides[k];
  return last + 1;
}

/// The copy by its definition, one element at a time.
void copyByDefinition(const CopyCase &c, std::byte *dst, const std::byte *src) {
  int64_t numel = 1;
  for (int64_t size : c.shape)
    numel *= size;
  for (int64_t i = 0; i < numel; ++i) {
    int64_t rest = i, d = c.dstOffset, s = c.srcOffset;
    for (size_t k = c.shape.size(); k-- > 0;) {
      const int64_t index = rest % c.shape[k];
      rest /= c.shape[k];
      d += index * c.dstStrides[k];
      s += index * c.srcStrides[k];
    }
    std::memcpy(dst + d * c.width, src + s * c.width, c.width);
  }
}

TEST(CopyKernelsOnCpuTest, EveryPlanCopiesByTheDefinition) {
  const KernelLibrary library(makeCopySource());
  ASSERT_NE(library.get(), nullptr);
  std::map<CopyKind, int> kinds;
  int widened = 0;
  std::mt19937_64 rng(11);
  for (const CopyCase &c : getCopyCases()) {
    SCOPED_TRACE(c.name);
    const int64_t dstBytes =
        spanOf(c.shape, c.dstStrides, c.dstOffset) * c.width;
    const int64_t srcBytes =
        spanOf(c.shape, c.srcStrides, c.srcOffset) * c.width;
    const Arena src(srcBytes, c.srcShift), dst(dstBytes, c.dstShift);
    for (int64_t k = 0; k < srcBytes; ++k)
      src.base()[k] = static_cast<std::byte>(rng());
    // Bytes the copy does not write keep their pattern.
    std::memset(dst.base(), 0xAB, static_cast<size_t>(dstBytes));
    std::vector<std::byte> expected(dst.base(), dst.base() + dstBytes);
    copyByDefinition(c, expected.data(), src.base());

    StatusOr<CopyPlan> plan =
        planCopy(c.name, reinterpret_cast<char *>(dst.base()),
                 reinterpret_cast<const char *>(src.base()), c.shape,
                 c.dstStrides, c.srcStrides, c.dstOffset, c.srcOffset, c.width);
    ASSERT_TRUE(plan.isOk()) << plan.status().toString();
    ++kinds[plan->kind];
    widened += plan->width > c.width;
    const std::string width = std::to_string(plan->width);
    std::vector<std::string> launchers;
    switch (plan->kind) {
    case CopyKind::Empty:
      break;
    case CopyKind::Memcpy:
      std::memcpy(plan->params.dst, plan->params.src,
                  static_cast<size_t>(plan->params.numel * plan->width));
      break;
    case CopyKind::Transpose:
      launchers = {"zk_transpose_" + width};
      break;
    case CopyKind::Generic:
      launchers = {"zk_generic_" + width + (plan->index32 ? "_32" : "_64"),
                   "zk_generic_" + width + "_64"};
      break;
    }
    const CopyLaunch launch = getCopyLaunch(*plan);
    for (const std::string &symbol : launchers) {
      SCOPED_TRACE(symbol);
      std::memset(dst.base(), 0xAB, static_cast<size_t>(dstBytes));
      const auto run = findFunction<CopyLauncher>(library.get(), symbol);
      ASSERT_NE(run, nullptr);
      CopyParams params = plan->params;
      void *args[] = {&params};
      ASSERT_EQ(run(args, launch.grid, launch.block), 0)
          << "threads waited at barriers that none of them could release";
      EXPECT_EQ(std::memcmp(dst.base(), expected.data(), dstBytes), 0);
    }
    if (launchers.empty()) {
      EXPECT_EQ(std::memcmp(dst.base(), expected.data(), dstBytes), 0);
    }
  }
  // Every kind of plan ran, and the grid-stride kernel widened elements.
  EXPECT_GE(kinds[CopyKind::Memcpy], 1);
  EXPECT_GE(kinds[CopyKind::Transpose], 6);
  EXPECT_GE(kinds[CopyKind::Generic], 6);
  EXPECT_GE(widened, 3);
}

TEST(CopyKernelsOnCpuTest, TooManyDimensionsAreRefused) {
  // Nine dimensions none of which merge: strides that skip elements.
  std::vector<int64_t> shape(9, 2), strides(9);
  for (size_t k = 0; k < 9; ++k)
    strides[k] = int64_t(3) << (2 * (8 - k));
  char byte = 0;
  StatusOr<CopyPlan> plan = planCopy("instructions.compute[4]", &byte, &byte,
                                     shape, strides, strides, 0, 0, 1);
  ASSERT_FALSE(plan.isOk());
  EXPECT_EQ(plan.status().message(),
            "instructions.compute[4]: the CUDA backend copies tensors of at "
            "most 8 dimensions once contiguous ones are merged, got 9");
}

} // namespace
