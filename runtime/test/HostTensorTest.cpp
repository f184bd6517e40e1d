//===- HostTensorTest.cpp - tensor ops and zero.local_shard ---------------===//

#include "HostTestUtil.h"

#include "zero/runtime/FloatFormats.h"

#include <cmath>

using namespace zero::runtime;
using namespace zero::runtime::test;
using nlohmann::json;

namespace {
json instr(const std::string &op, std::vector<int64_t> operands,
           std::vector<int64_t> results) {
  return {{"op", op}, {"operands", operands}, {"results", results}};
}
std::vector<float> iota(int n) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i)
    values[i] = static_cast<float>(i);
  return values;
}
} // namespace

TEST(HostTensor, ExtractSliceWithStridesAndDroppedUnitDims) {
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {4, 6});
  int64_t s = p.tensor(DType::F32, {2, 3});
  int64_t row = p.tensor(DType::F32, {3}); // [1, 3] with the unit dim dropped
  p.set(x, iota(24));
  json slice = instr("tensor.extract_slice", {x}, {s});
  slice["offsets"] = {1, 0};
  slice["sizes"] = {2, 3};
  slice["strides"] = {2, 2};
  p.run(slice);
  EXPECT_EQ(p.get<float>(s), (std::vector<float>{6, 8, 10, 18, 20, 22}));
  slice = instr("tensor.extract_slice", {x}, {row});
  slice["offsets"] = {2, 3};
  slice["sizes"] = {1, 3};
  slice["strides"] = {1, 1};
  p.run(slice);
  EXPECT_EQ(p.get<float>(row), (std::vector<float>{15, 16, 17}));
}

TEST(HostTensor, InsertSliceStartsFromTheDestination) {
  TestProgram p;
  int64_t src = p.tensor(DType::F32, {2, 2});
  int64_t dest = p.tensor(DType::F32, {3, 4});
  int64_t apart = p.tensor(DType::F32, {3, 4});
  int64_t inPlace = p.tensor(DType::F32, {3, 4}, "", dest);
  p.set<float>(src, {-1, -2, -3, -4});
  p.set(dest, iota(12));
  json insert = instr("tensor.insert_slice", {src, dest}, {apart});
  insert["offsets"] = {1, 1};
  insert["sizes"] = {2, 2};
  insert["strides"] = {1, 2};
  p.run(insert);
  EXPECT_EQ(p.get<float>(apart),
            (std::vector<float>{0, 1, 2, 3, 4, -1, 6, -2, 8, -3, 10, -4}));
  EXPECT_EQ(p.get<float>(dest), iota(12));
  insert["results"] = {inPlace};
  p.run(insert);
  EXPECT_EQ(p.get<float>(dest), p.get<float>(apart));
}

TEST(HostTensor, ReshapesCopyOnlyWhenTheMemoryDiffers) {
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {2, 3});
  int64_t view = p.tensor(DType::F32, {6}, "", x);
  int64_t copy = p.tensor(DType::F32, {1, 2, 3, 1});
  p.set(x, iota(6));
  json collapse = instr("tensor.collapse_shape", {x}, {view});
  collapse["reassociation"] = {{0, 1}};
  p.run(collapse);
  EXPECT_EQ(p.get<float>(view), iota(6));
  json expand = instr("tensor.expand_shape", {x}, {copy});
  expand["reassociation"] = {{0, 1}, {2, 3}};
  p.run(expand);
  EXPECT_EQ(p.get<float>(copy), iota(6));
  // Rank 0 on one side: no groups.
  int64_t one = p.tensor(DType::F32, {1, 1});
  int64_t scalar = p.tensor(DType::F32, {});
  p.set<float>(one, {5});
  json toScalar = instr("tensor.collapse_shape", {one}, {scalar});
  toScalar["reassociation"] = json::array();
  p.run(toScalar);
  EXPECT_EQ(p.get<float>(scalar)[0], 5);
}

TEST(HostTensor, ExtractFromElementsSplat) {
  TestProgram p;
  int64_t x = p.tensor(DType::BF16, {2, 3});
  int64_t i0 = p.scalar(DType::Index), i1 = p.scalar(DType::Index);
  int64_t e = p.scalar(DType::BF16);
  int64_t a = p.scalar(DType::I32), b = p.scalar(DType::I32);
  int64_t pair = p.tensor(DType::I32, {2});
  int64_t splat = p.tensor(DType::BF16, {4});
  std::vector<uint16_t> bits;
  for (int k = 0; k < 6; ++k)
    bits.push_back(roundToBF16(k + 0.5));
  p.set(x, bits);
  p.setI(i0, 1);
  p.setI(i1, 2);
  p.run(instr("tensor.extract", {x, i0, i1}, {e}));
  EXPECT_EQ(p.scalar(e).f, 5.5);
  p.setI(a, 7);
  p.setI(b, -8);
  p.run(instr("tensor.from_elements", {a, b}, {pair}));
  EXPECT_EQ(p.get<int32_t>(pair), (std::vector<int32_t>{7, -8}));
  p.run(instr("tensor.splat", {e}, {splat}));
  EXPECT_EQ(p.get<uint16_t>(splat), std::vector<uint16_t>(4, roundToBF16(5.5)));

  // An index outside the tensor fails the run, naming the op.
  p.setI(i1, 3);
  StatusOr<std::unique_ptr<host::ComputeOp>> op =
      p.prepare(instr("tensor.extract", {x, i0, i1}, {e}));
  ASSERT_TRUE(op.isOk());
  EXPECT_EQ((*op)->run(p).message(),
            "instructions.compute[0]: tensor.extract index 3 is out of range "
            "for dimension 1 (size 3) of value 0 (%0) at m.mlir:1:1");
}

TEST(HostTensor, ConstantTensors) {
  TestProgram p;
  int64_t splat = p.tensor(DType::F16, {3});
  int64_t data = p.tensor(DType::I64, {2, 2});
  int64_t mask = p.tensor(DType::F32, {2});
  json op = instr("arith.constant", {}, {splat});
  op["value"] = {{"splat", 0.1}};
  p.run(op);
  EXPECT_EQ(p.get<uint16_t>(splat), std::vector<uint16_t>(3, 0x2E66));
  op = instr("arith.constant", {}, {data});
  op["value"] = {{"data", {1, -2, 3, -4}}};
  p.run(op);
  EXPECT_EQ(p.get<int64_t>(data), (std::vector<int64_t>{1, -2, 3, -4}));
  op = instr("arith.constant", {}, {mask});
  op["value"] = {{"data", {"-inf", 0}}};
  p.run(op);
  EXPECT_EQ(p.get<float>(mask), (std::vector<float>{-INFINITY, 0}));
}

TEST(HostLocalShard, EachRankTakesItsPartPaddedWithZeros) {
  // 10 elements over 4 ranks: shards of 3, the last holds 1 and 2 zeros.
  TestProgram p;
  int64_t full = p.tensor(DType::F32, {2, 5});
  int64_t shard = p.tensor(DType::F32, {3});
  p.set(full, iota(10));
  json op = instr("zero.local_shard", {full}, {shard});
  op["layout"] = {{"shape", {2, 5}},
                  {"world_size", 4},
                  {"shard_numel", 3},
                  {"padded_numel", 12}};
  p.setRank(0, 4);
  StatusOr<std::unique_ptr<host::ComputeOp>> prepared = p.prepare(op);
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  const std::vector<std::vector<float>> expected = {
      {0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 0, 0}};
  for (int rank = 0; rank < 4; ++rank) {
    p.set<float>(shard, {-1, -1, -1});
    p.setRank(rank, 4);
    ASSERT_TRUE((*prepared)->run(p).isOk());
    EXPECT_EQ(p.get<float>(shard), expected[rank]) << "rank " << rank;
  }
  p.setRank(0, 2);
  EXPECT_EQ((*prepared)->run(p).message(),
            "instructions.compute[0].layout: the layout is for 4 ranks, but "
            "this run has 2, not a multiple of them at m.mlir:1:1");
}

TEST(HostLocalShard, ALayoutOfFewerRanksIsReplicatedAcrossTheirGroups) {
  // 10 elements cut over 2 ranks (one node of a [2, 2] grid, MiCS): rank r
  // of 4 takes shard r % 2.
  TestProgram p;
  int64_t full = p.tensor(DType::F32, {2, 5});
  int64_t shard = p.tensor(DType::F32, {5});
  p.set(full, iota(10));
  json op = instr("zero.local_shard", {full}, {shard});
  op["layout"] = {{"shape", {2, 5}},
                  {"world_size", 2},
                  {"shard_numel", 5},
                  {"padded_numel", 10}};
  p.setRank(0, 2);
  StatusOr<std::unique_ptr<host::ComputeOp>> prepared = p.prepare(op);
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  const std::vector<std::vector<float>> expected = {
      {0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}};
  for (int rank = 0; rank < 4; ++rank) {
    p.set<float>(shard, {-1, -1, -1, -1, -1});
    p.setRank(rank, 4);
    ASSERT_TRUE((*prepared)->run(p).isOk());
    EXPECT_EQ(p.get<float>(shard), expected[rank]) << "rank " << rank;
  }
  p.setRank(0, 3);
  EXPECT_EQ((*prepared)->run(p).message(),
            "instructions.compute[0].layout: the layout is for 2 ranks, but "
            "this run has 3, not a multiple of them at m.mlir:1:1");
}
