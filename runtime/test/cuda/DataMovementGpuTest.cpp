//===- DataMovementGpuTest.cpp - strided copies on the GPU ----------------===//
//
// transpose, broadcast, copy (with and without a dtype change), the static
// slices, reshapes and local_shard against the host device, on every dtype
// (element widths 1, 2, 4 and 8) and on awkward shapes: odd sizes, tile
// edges, empty tensors, one element, unit dimensions, rank 0. Data movement
// is exact: every comparison is bit for bit (NaNs equal as NaNs).
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"
#include "ops/OpContext.h"

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

std::vector<int64_t> permuted(const std::vector<int64_t> &shape,
                              const std::vector<int64_t> &perm) {
  std::vector<int64_t> result;
  for (int64_t d : perm)
    result.push_back(shape[d]);
  return result;
}

int64_t numelOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

TEST(CudaDataMovement, Transpose) {
  ZERO_REQUIRE_GPU();
  struct Case {
    std::vector<int64_t> shape, perm;
  };
  const std::vector<Case> cases = {
      {{}, {}},
      {{1}, {0}},
      {{0, 3}, {1, 0}},
      {{1, 1}, {1, 0}},
      {{7, 5}, {1, 0}},
      {{33, 65}, {1, 0}}, // tile edges
      {{64, 96}, {1, 0}}, // whole tiles
      {{3, 4, 5}, {2, 0, 1}},
      {{2, 1, 3}, {1, 2, 0}},
      {{2, 3, 4, 5}, {0, 1, 3, 2}}, // batched inner transpose
      {{5, 33, 17}, {0, 2, 1}},
      {{2, 3, 4, 5, 6}, {4, 3, 2, 1, 0}},
      {{3, 4, 5}, {0, 1, 2}},     // identity: a memcpy
      {{4, 6, 8}, {1, 0, 2}},     // inner dim kept: widened
      {{70000, 2, 3}, {0, 2, 1}}, // more outer tiles than grid.z takes
      {{2, 2100000}, {1, 0}},     // more row tiles than grid.y: generic
  };
  std::mt19937_64 rng(1);
  for (DType type : allDTypes()) {
    for (const Case &c : cases) {
      ScheduleBuilder b;
      const std::vector<int64_t> out = permuted(c.shape, c.perm);
      int64_t in = b.tensor(type, c.shape);
      int64_t init = b.tensor(type, out);
      int64_t result = b.tensor(type, out, init);
      b.op({{"op", "linalg.transpose"},
            {"permutation", c.perm},
            {"operands", {in, init}},
            {"results", {result}}});
      Runner r(b);
      ZERO_ASSERT_RUNNER(r);
      r.write(in, randomBytes(type, numelOf(c.shape), rng));
      r.step();
      expectSameElements(r.readHost(result), r.readGpu(result), type,
                         std::string("transpose ") + dtypeName(type) + " " +
                             ops::formatShape(c.shape) + " by " +
                             ops::formatShape(c.perm));
    }
  }
}

TEST(CudaDataMovement, Broadcast) {
  ZERO_REQUIRE_GPU();
  struct Case {
    std::vector<int64_t> in, dims, out;
  };
  const std::vector<Case> cases = {
      {{5}, {0}, {3, 5}},       {{3}, {1}, {3, 4}},       {{}, {0, 1}, {2, 3}},
      {{2, 3}, {1}, {2, 7, 3}}, {{4}, {0, 2}, {3, 4, 5}}, {{1}, {1}, {1, 1}},
      {{0}, {0}, {3, 0}},       {{6, 1}, {0}, {5, 6, 1}}, {{8}, {0}, {129, 8}},
  };
  std::mt19937_64 rng(2);
  for (DType type : allDTypes()) {
    for (const Case &c : cases) {
      ScheduleBuilder b;
      int64_t in = b.tensor(type, c.in);
      int64_t init = b.tensor(type, c.out);
      int64_t result = b.tensor(type, c.out, init);
      b.op({{"op", "linalg.broadcast"},
            {"dimensions", c.dims},
            {"operands", {in, init}},
            {"results", {result}}});
      Runner r(b);
      ZERO_ASSERT_RUNNER(r);
      r.write(in, randomBytes(type, numelOf(c.in), rng));
      r.step();
      expectSameElements(r.readHost(result), r.readGpu(result), type,
                         std::string("broadcast ") + dtypeName(type) + " " +
                             ops::formatShape(c.in) + " -> " +
                             ops::formatShape(c.out));
    }
  }
}

TEST(CudaDataMovement, CopyCastsBetweenEveryPairOfTypes) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(3);
  for (DType from : allDTypes()) {
    for (DType to : allDTypes()) {
      for (int64_t n : {0, 1, 61}) {
        ScheduleBuilder b;
        int64_t in = b.tensor(from, {n});
        int64_t init = b.tensor(to, {n});
        int64_t result = b.tensor(to, {n}, init);
        b.op({{"op", "linalg.copy"},
              {"operands", {in, init}},
              {"results", {result}}});
        Runner r(b);
        ZERO_ASSERT_RUNNER(r);
        r.write(in, makeCastInputs(from, n, rng));
        r.step();
        expectSameElements(r.readHost(result), r.readGpu(result), to,
                           std::string("copy ") + dtypeName(from) + " -> " +
                               dtypeName(to) + " of " + std::to_string(n));
      }
    }
  }
}

TEST(CudaDataMovement, ExtractSlice) {
  ZERO_REQUIRE_GPU();
  struct Case {
    std::vector<int64_t> source, offsets, sizes, strides, result;
  };
  const std::vector<Case> cases = {
      {{7, 9}, {1, 2}, {3, 4}, {2, 1}, {3, 4}},
      {{7, 9}, {3, 0}, {1, 9}, {1, 1}, {9}},    // a row, unit dim dropped
      {{7, 9}, {0, 4}, {7, 1}, {1, 1}, {7}},    // a column
      {{7, 9}, {2, 3}, {0, 2}, {1, 1}, {0, 2}}, // empty
      {{5, 6, 7}, {1, 1, 1}, {2, 2, 3}, {2, 3, 2}, {2, 2, 3}},
      {{5}, {4}, {1}, {1}, {}},                    // one element, rank 0
      {{4, 64}, {1, 0}, {2, 64}, {1, 1}, {2, 64}}, // contiguous rows
  };
  std::mt19937_64 rng(4);
  for (DType type : allDTypes()) {
    for (const Case &c : cases) {
      ScheduleBuilder b;
      int64_t source = b.tensor(type, c.source);
      int64_t result = b.tensor(type, c.result);
      b.op({{"op", "tensor.extract_slice"},
            {"offsets", c.offsets},
            {"sizes", c.sizes},
            {"strides", c.strides},
            {"operands", {source}},
            {"results", {result}}});
      Runner r(b);
      ZERO_ASSERT_RUNNER(r);
      r.write(source, randomBytes(type, numelOf(c.source), rng));
      r.step();
      expectSameElements(r.readHost(result), r.readGpu(result), type,
                         std::string("extract_slice ") + dtypeName(type) +
                             " of " + ops::formatShape(c.source) + " at " +
                             ops::formatShape(c.offsets));
    }
  }
}

TEST(CudaDataMovement, InsertSliceInPlaceAndIntoANewBuffer) {
  ZERO_REQUIRE_GPU();
  struct Case {
    std::vector<int64_t> dest, offsets, sizes, strides, source;
  };
  const std::vector<Case> cases = {
      {{7, 9}, {1, 2}, {3, 4}, {2, 1}, {3, 4}},
      {{7, 9}, {3, 0}, {1, 9}, {1, 1}, {9}},
      {{5, 6, 7}, {1, 1, 1}, {2, 2, 3}, {2, 3, 2}, {2, 2, 3}},
      {{4}, {0}, {0}, {1}, {0}},
      {{3, 3}, {2, 2}, {1, 1}, {1, 1}, {}},
  };
  std::mt19937_64 rng(5);
  for (DType type : allDTypes()) {
    for (const Case &c : cases) {
      for (bool inPlace : {true, false}) {
        ScheduleBuilder b;
        int64_t source = b.tensor(type, c.source);
        int64_t dest = b.tensor(type, c.dest);
        int64_t result =
            inPlace ? b.tensor(type, c.dest, dest) : b.tensor(type, c.dest);
        b.op({{"op", "tensor.insert_slice"},
              {"offsets", c.offsets},
              {"sizes", c.sizes},
              {"strides", c.strides},
              {"operands", {source, dest}},
              {"results", {result}}});
        Runner r(b);
        ZERO_ASSERT_RUNNER(r);
        r.write(source, randomBytes(type, numelOf(c.source), rng));
        r.write(dest, randomBytes(type, numelOf(c.dest), rng));
        r.step();
        expectSameElements(r.readHost(result), r.readGpu(result), type,
                           std::string("insert_slice ") + dtypeName(type) +
                               " into " + ops::formatShape(c.dest) +
                               (inPlace ? " in place" : " into a copy"));
      }
    }
  }
}

TEST(CudaDataMovement, ReshapesAreViewsOrCopies) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(6);
  for (DType type : allDTypes()) {
    for (bool view : {true, false}) {
      ScheduleBuilder b;
      int64_t source = b.tensor(type, {3, 5, 2});
      int64_t collapsed = b.tensor(type, {15, 2}, view ? source : -1);
      int64_t expanded = b.tensor(type, {3, 5, 1, 2}, view ? collapsed : -1);
      b.op({{"op", "tensor.collapse_shape"},
            {"reassociation", {{0, 1}, {2}}},
            {"operands", {source}},
            {"results", {collapsed}}});
      b.op({{"op", "tensor.expand_shape"},
            {"reassociation", {{0, 1}, {2, 3}}},
            {"operands", {collapsed}},
            {"results", {expanded}}});
      Runner r(b);
      ZERO_ASSERT_RUNNER(r);
      r.write(source, randomBytes(type, 30, rng));
      r.step();
      expectSameElements(r.readHost(expanded), r.readGpu(expanded), type,
                         std::string("reshape ") + dtypeName(type) +
                             (view ? " (view)" : " (copy)"));
    }
  }
}

TEST(CudaDataMovement, LocalShardPadsWithZeros) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(7);
  // One rank: the shard is the whole tensor, padded to padded_numel.
  for (DType type : allDTypes()) {
    for (int64_t padded : {6, 9}) {
      ScheduleBuilder b;
      int64_t full = b.tensor(type, {2, 3});
      int64_t shard = b.tensor(type, {padded});
      b.op({{"op", "zero.local_shard"},
            {"layout",
             {{"shape", {2, 3}},
              {"world_size", 1},
              {"shard_numel", padded},
              {"padded_numel", padded}}},
            {"operands", {full}},
            {"results", {shard}}});
      Runner r(b);
      ZERO_ASSERT_RUNNER(r);
      r.write(full, randomBytes(type, 6, rng));
      // Garbage where the padding goes: the op must zero it.
      r.write(shard, randomBytes(type, padded, rng));
      r.step();
      expectSameElements(r.readHost(shard), r.readGpu(shard), type,
                         std::string("local_shard ") + dtypeName(type) +
                             " padded to " + std::to_string(padded));
    }
  }
}

} // namespace
