//===- CopyShapeTest.cpp - the one plan of a strided copy -----------------===//
//
// ops/CopyShape.h: how a copy is simplified and how far CUDA's strided
// copy widens its elements (which the cost model prices the same way).
// The ops' strides themselves are the host backend's, tested through it.
//
//===----------------------------------------------------------------------===//

#include "ops/CopyShape.h"

#include <gtest/gtest.h>

#include <vector>

namespace zero::runtime::ops {
namespace {

using Sizes = std::vector<int64_t>;

TEST(CopyShapeTest, MergesContiguousDimensionsAndDropsUnitOnes) {
  // [8192, 1, 768] into columns 768..1535 of [8192, 2304]: two dimensions.
  CopyShape copy = simplifyCopy({8192, 1, 768}, {2304, 768, 1}, {768, 768, 1});
  EXPECT_EQ(copy.sizes, (Sizes{8192, 768}));
  EXPECT_EQ(copy.dstStrides, (Sizes{2304, 1}));
  EXPECT_EQ(copy.srcStrides, (Sizes{768, 1}));
  EXPECT_FALSE(copy.isContiguous());
  // A whole tensor: one run.
  copy = simplifyCopy({4, 6}, {6, 1}, {6, 1});
  EXPECT_TRUE(copy.isContiguous());
  EXPECT_TRUE(simplifyCopy({4, 0}, {0, 1}, {0, 1}).empty);
}

TEST(CopyShapeTest, WidensContiguousRowsToSixteenBytes) {
  // f32 rows of 768 into a [8192, 2304] buffer: four elements at a time.
  CopyShape copy = simplifyCopy({8192, 768}, {2304, 1}, {768, 1});
  EXPECT_EQ(widenCopyElements(copy, 4, 768 * 4, 0), 16);
  EXPECT_EQ(copy.sizes, (Sizes{8192, 192}));
  EXPECT_EQ(copy.dstStrides, (Sizes{576, 1}));
  EXPECT_EQ(copy.srcStrides, (Sizes{192, 1}));
  // bf16: eight.
  copy = simplifyCopy({64, 768}, {2304, 1}, {768, 1});
  EXPECT_EQ(widenCopyElements(copy, 2, 0, 0), 16);
  EXPECT_EQ(copy.sizes, (Sizes{64, 96}));
}

TEST(CopyShapeTest, WidensOnlyAsFarAsEverythingAllows) {
  // A start address 8 bytes off 16: two f32 at a time.
  CopyShape copy = simplifyCopy({16, 768}, {2304, 1}, {768, 1});
  EXPECT_EQ(widenCopyElements(copy, 4, 8, 0), 8);
  // An outer stride of 6 elements: two at a time.
  copy = simplifyCopy({16, 4}, {6, 1}, {4, 1});
  EXPECT_EQ(widenCopyElements(copy, 4, 0, 0), 8);
  EXPECT_EQ(copy.dstStrides, (Sizes{3, 1}));
  // Rows of 3: not at all.
  copy = simplifyCopy({16, 3}, {6, 1}, {3, 1});
  EXPECT_EQ(widenCopyElements(copy, 4, 0, 0), 4);
  EXPECT_EQ(copy.sizes, (Sizes{16, 3}));
  // A broadcast along the rows (source stride 0 innermost), a transposed
  // source: element by element.
  copy = simplifyCopy({8192, 768}, {768, 1}, {1, 0});
  EXPECT_EQ(widenCopyElements(copy, 4, 0, 0), 4);
  copy = simplifyCopy({64, 32}, {32, 1}, {1, 64});
  EXPECT_EQ(widenCopyElements(copy, 2, 0, 0), 2);
  // A bias broadcast down the rows reads its row contiguously: widened.
  copy = simplifyCopy({8192, 768}, {768, 1}, {0, 1});
  EXPECT_EQ(widenCopyElements(copy, 4, 0, 0), 16);
  EXPECT_EQ(copy.srcStrides, (Sizes{0, 1}));
  // f64: two; 16-byte elements stay.
  copy = simplifyCopy({4, 6}, {12, 1}, {6, 1});
  EXPECT_EQ(widenCopyElements(copy, 8, 0, 0), 16);
  EXPECT_EQ(widenCopyElements(copy, 16, 0, 0), 16);
}

} // namespace
} // namespace zero::runtime::ops
