// ZeRO++'s quantized non-trainable weights: the shards of frozen parameters
// are stored block-quantized and every gather of them moves the stored
// blocks (quantize-frozen-weights-block-size).
// RUN: zero-opt %S/Inputs/frozen-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters="max-reuse-distance=0 quantize-frozen-weights-block-size=4" \
// RUN:   | FileCheck %s
// RUN: zero-opt %S/Inputs/frozen-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters="max-reuse-distance=0 quantize-frozen-weights-block-size=2 quantize-weights-block-size=4" \
// RUN:   | FileCheck %s --check-prefix=QWZ
// RUN: zero-opt %S/Inputs/frozen-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=8" \
// RUN:   --zero-shard-parameters="quantize-frozen-weights-block-size=4" \
// RUN:   | FileCheck %s --check-prefix=PERSISTENT
// RUN: zero-opt %S/Inputs/frozen-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=1 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters="quantize-frozen-weights-block-size=4" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-fold-single-rank-collectives | FileCheck %s --check-prefix=ONE-RANK
// RUN: not zero-opt %S/Inputs/frozen-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4" \
// RUN:   --zero-shard-parameters="quantize-frozen-weights-block-size=-1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NEGATIVE
// RUN: not zero-opt %S/Inputs/frozen-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters="quantize-frozen-weights-block-size=4" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params=device=cpu 2>&1 | FileCheck %s --check-prefix=OFFLOAD

// The frozen shards (w0's 4 elements, b1's 6 padded to 8 over 4 ranks: 2)
// carry the encoding; the trainable w1 does not. w0's two gathers, the
// forward's and the backward's (w1's 16 elements are gathered between
// them, more than max-reuse-distance), are both quantized in its blocks;
// b1, read by nothing, is stored quantized and never gathered.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %arg0: tensor<4xf32, #zero.quantized<bits = 8, block_size = 4>> {zero.frozen, zero.layout = #zero.layout<shape = [4, 4], world_size = 4>, zero.param = "w0"}
// CHECK-SAME: %arg1: tensor<4xf32> {zero.layout = #zero.layout<shape = [4, 4], world_size = 4>, zero.param = "w1"}
// CHECK-SAME: %arg2: tensor<2xf32, #zero.quantized<bits = 8, block_size = 4>> {zero.frozen, zero.layout = #zero.layout<shape = [6], world_size = 4>, zero.param = "b1"}
// CHECK:      %[[H0:.*]] = zero.all_gather_start %arg0 quantize_block_size = 4 layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32, #zero.quantized<bits = 8, block_size = 4>>
// CHECK-NEXT: %[[W0:.*]] = zero.wait %[[H0]] : tensor<4x4xf32>
// CHECK-NEXT: linalg.matmul ins(%arg3, %[[W0]] : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT: zero.release %[[W0]] : tensor<4x4xf32>
// CHECK:      zero.all_gather_start %arg1 layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// CHECK:      %[[H1:.*]] = zero.all_gather_start %arg0 quantize_block_size = 4 layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32, #zero.quantized<bits = 8, block_size = 4>>
// CHECK-NEXT: %[[W0B:.*]] = zero.wait %[[H1]] : tensor<4x4xf32>
// CHECK-NEXT: linalg.transpose ins(%[[W0B]] : tensor<4x4xf32>)
// CHECK-NOT:  %arg2

// With qwZ as well, each parameter's gathers use its own block size: the
// frozen w0's every gather its stored blocks of 2, the trainable w1's first
// gather qwZ's blocks of 4.
// QWZ-LABEL: func.func @step(
// QWZ-SAME:    %arg0: tensor<4xf32, #zero.quantized<bits = 8, block_size = 2>>
// QWZ:         zero.all_gather_start %arg0 quantize_block_size = 2 layouts
// QWZ:         zero.all_gather_start %arg1 quantize_block_size = 4 layouts
// QWZ:         zero.all_gather_start %arg0 quantize_block_size = 2 layouts

// A persistent frozen parameter (b1's 6 elements, within the threshold of
// 8) stays whole and unquantized, as every persistent parameter.
// PERSISTENT-LABEL: func.func @step(
// PERSISTENT-SAME:    %arg0: tensor<4xf32, #zero.quantized<bits = 8, block_size = 4>>
// PERSISTENT-SAME:    %arg2: tensor<6xf32> {zero.frozen, zero.layout = #zero.layout<shape = [6], world_size = 4>, zero.param = "b1", zero.persistent}

// On one rank the trainable w1's gather folds into a view of its shard; the
// frozen w0's stays: it dequantizes.
// ONE-RANK-LABEL: func.func @step(
// ONE-RANK:         zero.all_gather_start %arg0 quantize_block_size = 4 layouts [#zero.layout<shape = [4, 4], world_size = 1>] : tensor<16xf32, #zero.quantized<bits = 8, block_size = 4>>
// ONE-RANK:         tensor.expand_shape %arg1 {{\[}}[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
// ONE-RANK-NOT:     zero.all_gather_start %arg1

// NEGATIVE: error: quantize-frozen-weights-block-size must be >= 0, got -1

// OFFLOAD: frozen-step.mlir:4:17: error: zero-offload-params: the shard of 'w0' is stored quantized (quantize-frozen-weights-block-size), which keeps it in device memory; offload_param and zero_quantized_nontrainable_weights exclude each other
