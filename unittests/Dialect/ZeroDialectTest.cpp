//===- ZeroDialectTest.cpp - zero dialect C++ API -------------------------===//

#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include <gtest/gtest.h>

using namespace mlir;

namespace {

class ZeroDialectTest : public ::testing::Test {
protected:
  ZeroDialectTest() {
    context.loadDialect<zero::ZeroDialect>();
    // Verifier failures are expected in some tests; keep them off stderr.
    context.getDiagEngine().registerHandler([](Diagnostic &) {});
  }

  MLIRContext context;
};

TEST_F(ZeroDialectTest, MemorySpaceAttrRoundTrips) {
  auto attr = zero::MemorySpaceAttr::get(&context, zero::MemorySpace::Nvme);
  EXPECT_EQ(attr.getValue(), zero::MemorySpace::Nvme);
  EXPECT_EQ(zero::stringifyMemorySpace(attr.getValue()), "nvme");
}

TEST_F(ZeroDialectTest, LayoutDefaultPaddingRoundsUpToWorldSize) {
  // 10 elements over 4 ranks: padded to 12, shards of 3 (DeepSpeed stage 3).
  auto layout = zero::LayoutAttr::get(&context, {10}, 4);
  EXPECT_EQ(layout.getNumel(), 10);
  EXPECT_EQ(layout.getPaddedNumel(), 12);
  EXPECT_EQ(layout.getShardNumel(), 3);
  EXPECT_EQ(layout.getPaddingNumel(), 2);
  EXPECT_EQ(layout.getWorldSize(), 4);
}

TEST_F(ZeroDialectTest, LayoutOfDivisibleShapeHasNoPadding) {
  auto layout = zero::LayoutAttr::get(&context, {1024, 4096}, 8);
  EXPECT_EQ(layout.getNumel(), 1024 * 4096);
  EXPECT_EQ(layout.getPaddedNumel(), 1024 * 4096);
  EXPECT_EQ(layout.getShardNumel(), 1024 * 4096 / 8);
  EXPECT_EQ(layout.getPaddingNumel(), 0);
}

TEST_F(ZeroDialectTest, LayoutWithExplicitPadding) {
  // Stage 1/2 pad flat groups to a multiple of 2 x world size.
  auto layout = zero::LayoutAttr::get(&context, {10}, 4, 16);
  EXPECT_EQ(layout.getNumel(), 10);
  EXPECT_EQ(layout.getPaddedNumel(), 16);
  EXPECT_EQ(layout.getShardNumel(), 4);
  // An explicit padding equal to the default is the same attribute.
  EXPECT_EQ(zero::LayoutAttr::get(&context, {10}, 4, 12),
            zero::LayoutAttr::get(&context, {10}, 4));
}

TEST_F(ZeroDialectTest, LayoutOfScalarAndEmptyTensors) {
  auto scalar = zero::LayoutAttr::get(&context, {}, 4);
  EXPECT_EQ(scalar.getNumel(), 1);
  EXPECT_EQ(scalar.getPaddedNumel(), 4);
  EXPECT_EQ(scalar.getShardNumel(), 1);

  auto empty = zero::LayoutAttr::get(&context, {0, 7}, 4);
  EXPECT_EQ(empty.getNumel(), 0);
  EXPECT_EQ(empty.getPaddedNumel(), 0);
  EXPECT_EQ(empty.getShardNumel(), 0);
}

TEST_F(ZeroDialectTest, LayoutTypes) {
  auto layout = zero::LayoutAttr::get(&context, {2, 5}, 4);
  Type bf16 = BFloat16Type::get(&context);
  EXPECT_EQ(layout.getFullType(bf16), RankedTensorType::get({2, 5}, bf16));
  EXPECT_EQ(layout.getShardType(bf16), RankedTensorType::get({3}, bf16));
}

TEST_F(ZeroDialectTest, LayoutVerifierRejectsInvalidLayouts) {
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(&context)); };
  EXPECT_FALSE(zero::LayoutAttr::getChecked(emitError, &context, {10}, 0));
  EXPECT_FALSE(zero::LayoutAttr::getChecked(emitError, &context,
                                            {ShapedType::kDynamic}, 2));
  EXPECT_FALSE(zero::LayoutAttr::getChecked(emitError, &context, {10}, 4, 8));
  EXPECT_FALSE(zero::LayoutAttr::getChecked(emitError, &context, {10}, 4, 14));
  EXPECT_TRUE(zero::LayoutAttr::getChecked(emitError, &context, {10}, 4, 16));
}

TEST_F(ZeroDialectTest, TensorMemorySpaces) {
  Type f32 = Float32Type::get(&context);
  auto device = RankedTensorType::get({4}, f32);
  auto nvme = zero::getTensorTypeInSpace(device, zero::MemorySpace::Nvme);
  EXPECT_EQ(zero::getMemorySpace(device), zero::MemorySpace::Device);
  EXPECT_EQ(zero::getMemorySpace(nvme), zero::MemorySpace::Nvme);
  EXPECT_EQ(nvme.getEncoding(),
            zero::MemorySpaceAttr::get(&context, zero::MemorySpace::Nvme));
  // Device tensors carry no encoding.
  EXPECT_EQ(zero::getTensorTypeInSpace(nvme, zero::MemorySpace::Device),
            device);
  auto other = RankedTensorType::get({4}, f32, StringAttr::get(&context, "x"));
  EXPECT_EQ(zero::getMemorySpace(other), std::nullopt);
}

TEST_F(ZeroDialectTest, WaitBuilderTakesTheAwaitedTypes) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  Type f32 = builder.getF32Type();
  auto shardType = RankedTensorType::get({3}, f32);

  OwningOpRef<ModuleOp> module = ModuleOp::create(builder, loc);
  builder.setInsertionPointToEnd(module->getBody());
  // A stand-in for this rank's shard.
  Value shard = UnrealizedConversionCastOp::create(
                    builder, loc, TypeRange{shardType}, ValueRange{})
                    .getResult(0);

  auto layout = zero::LayoutAttr::get(&context, {10}, 4);
  auto start = zero::AllGatherStartOp::create(builder, loc, shard,
                                              builder.getArrayAttr({layout}),
                                              /*grid_axes=*/nullptr,
                                              /*quantize_block_size=*/nullptr);
  // The handle is not waited yet.
  EXPECT_TRUE(failed(verify(*module)));

  auto wait = zero::WaitOp::create(builder, loc, start);
  ASSERT_EQ(wait.getNumResults(), 1u);
  EXPECT_EQ(wait.getResult(0).getType(), RankedTensorType::get({10}, f32));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(ZeroDialectTest, AdamBuilderTakesAmsgradStateAndScheduledBeta1) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  auto stateType = RankedTensorType::get({8}, builder.getF32Type());
  auto gradType = RankedTensorType::get({8}, builder.getBF16Type());

  OwningOpRef<ModuleOp> module = ModuleOp::create(builder, loc);
  builder.setInsertionPointToEnd(module->getBody());
  // Stand-ins for the states and scalars of a step.
  auto values = UnrealizedConversionCastOp::create(
      builder, loc,
      TypeRange{stateType, gradType, stateType, stateType, stateType,
                builder.getI64Type(), builder.getF32Type(),
                builder.getF32Type()},
      ValueRange{});
  Value param = values.getResult(0), grad = values.getResult(1),
        m = values.getResult(2), v = values.getResult(3),
        vMax = values.getResult(4), step = values.getResult(5),
        lr = values.getResult(6), beta1 = values.getResult(7);
  auto create = [&](Value maxExpAvgSq, Value beta1Value, bool amsgrad) {
    return zero::AdamOp::create(
        builder, loc, param, grad, m, v, maxExpAvgSq, step, lr, beta1Value,
        /*grad_scale=*/Value(),
        /*grad_coef=*/Value(), /*skip=*/Value(), APFloat(0.9), APFloat(0.999),
        APFloat(1e-8), APFloat(0.0), zero::AdamMode::AdamW, true, amsgrad);
  };

  // Without the variants: three results, no optional operand.
  auto plain = create(Value(), Value(), false);
  EXPECT_EQ(plain.getNumResults(), 3u);
  EXPECT_FALSE(plain.getMaxExpAvgSq());
  EXPECT_FALSE(plain.getBeta1Value());
  // amsgrad: a fourth result of the state's type; a beta1 operand.
  auto both = create(vMax, beta1, true);
  ASSERT_EQ(both.getNumResults(), 4u);
  EXPECT_EQ(both.getMaxExpAvgSqOut().getType(), stateType);
  EXPECT_EQ(both.getMaxExpAvgSq(), vMax);
  EXPECT_EQ(both.getBeta1Value(), beta1);
  EXPECT_EQ(both.getStep(), step);
  EXPECT_EQ(both.getLr(), lr);
  EXPECT_TRUE(succeeded(verify(*module)));

  // The state without the flag is refused.
  create(vMax, Value(), false);
  EXPECT_TRUE(failed(verify(*module)));
}

} // namespace
