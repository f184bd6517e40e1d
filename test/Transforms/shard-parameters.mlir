// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=4" \
// RUN:   --zero-shard-parameters="max-reuse-distance=0" | FileCheck %s
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=4" \
// RUN:   --zero-shard-parameters="max-reuse-distance=16" | FileCheck %s --check-prefix=REUSE
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" --zero-shard-parameters \
// RUN:   | FileCheck %s --check-prefix=STAGE2
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 ranks-per-node=2 param-persistence-threshold=4" \
// RUN:   --zero-shard-parameters="max-reuse-distance=0 hpz-partition-size=2" \
// RUN:   | FileCheck %s --check-prefix=HPZ
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=4" \
// RUN:   --zero-shard-parameters="max-reuse-distance=0 quantize-weights-block-size=4" \
// RUN:   | FileCheck %s --check-prefix=QWZ
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=8 ranks-per-node=2" \
// RUN:   --zero-shard-parameters="hpz-partition-size=4" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HPZ-SIZE
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-shard-parameters 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNPARTITIONED

// Partitioned parameters become shards (16 elements / 4 ranks, b1's 6 padded
// to 8); the persistent b0 stays whole.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W0:.*]]: tensor<4xf32> {zero.layout = #zero.layout<shape = [4, 4], world_size = 4>, zero.param = "w0"}
// CHECK-SAME: %[[B0:.*]]: tensor<4xf32> {zero.layout = #zero.layout<shape = [4], world_size = 4>, zero.param = "b0", zero.persistent}
// CHECK-SAME: %[[W1:.*]]: tensor<4xf32> {zero.layout = #zero.layout<shape = [4, 4], world_size = 4>, zero.param = "w1"}
// CHECK-SAME: %[[B1:.*]]: tensor<2xf32> {zero.layout = #zero.layout<shape = [6], world_size = 4>, zero.param = "b1"}

// With no reuse allowed, w0 is gathered for its forward use, released, and
// gathered again for its backward use; w1's two uses are adjacent (nothing
// gathered between them), so one gather serves both.
// CHECK:      %[[H0:.*]] = zero.all_gather_start %[[W0]] layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// CHECK-NEXT: %[[F0:.*]] = zero.wait %[[H0]] : tensor<4x4xf32>
// CHECK-NEXT: linalg.matmul ins(%{{.*}}, %[[F0]] :
// CHECK-NEXT: zero.release %[[F0]] : tensor<4x4xf32>
// CHECK-NEXT: %[[H1:.*]] = zero.all_gather_start %[[W1]]
// CHECK-NEXT: %[[F1:.*]] = zero.wait %[[H1]] : tensor<4x4xf32>
// CHECK-NEXT: linalg.matmul ins(%{{.*}}, %[[F1]] :
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.transpose ins(%[[F1]] :
// CHECK-NEXT: zero.release %[[F1]]
// CHECK:      %[[H2:.*]] = zero.all_gather_start %[[W0]]
// CHECK-NEXT: %[[F2:.*]] = zero.wait %[[H2]] : tensor<4x4xf32>
// CHECK-NEXT: linalg.transpose ins(%[[F2]] :
// CHECK-NEXT: zero.release %[[F2]]
// The persistent b0 and the partitioned b1 are returned as they are (the
// gradient of a bias used nowhere else); b1 is gathered for the return and
// lives to the end of the step.
// CHECK:      %[[H3:.*]] = zero.all_gather_start %[[B1]]
// CHECK-NEXT: %[[F3:.*]] = zero.wait %[[H3]] : tensor<6xf32>
// CHECK-NEXT: return %{{.*}}, %{{.*}}, %[[B0]], %{{.*}}, %[[F3]] :
// CHECK-NOT: zero.all_gather_start

// w1 (16 elements) is the only traffic between w0's two uses: a reuse
// distance of 16 keeps w0 gathered across it.
// REUSE:     %[[H0:.*]] = zero.all_gather_start %{{.*}} layouts [#zero.layout<shape = [4, 4], world_size = 4>]
// REUSE-NEXT: %[[F0:.*]] = zero.wait %[[H0]] : tensor<4x4xf32>
// REUSE-COUNT-1: zero.release %[[F0]]{{[ ,]}}
// REUSE-NOT: zero.release %[[F0]]{{[ ,]}}
// REUSE: return

// Below stage 3 the step is unchanged.
// STAGE2-NOT: zero.all_gather_start
// STAGE2: return

// UNPARTITIONED: error: 'zero-shard-parameters' needs the 'zero.stage' and 'zero.world_size' attributes that 'zero-partition' writes; run it first

// A parameter that no op reads is partitioned all the same (DeepSpeed's
// ignore_unused_parameters): its argument is the rank's shard and nothing is
// gathered for it; the whole stage-3 pipeline then gives valid IR, with one
// optimizer step per parameter.
// RUN: zero-opt %S/Inputs/unused-param-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters | FileCheck %s --check-prefix=UNUSED
// RUN: zero-opt %S/Inputs/unused-param-step.mlir --zero-stage=3 --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.stage3_param_persistence_threshold=0 \
// RUN:   | FileCheck %s --check-prefix=UNUSED-PIPELINE
// UNUSED-LABEL: func.func @train_step(
// UNUSED-SAME: %[[W:.*]]: tensor<2xf32> {zero.layout = #zero.layout<shape = [4], world_size = 2>, zero.param = "w"}
// UNUSED-SAME: %[[U:.*]]: tensor<2xf32> {zero.layout = #zero.layout<shape = [4], world_size = 2>, zero.param = "u"}
// UNUSED:     zero.all_gather_start %[[W]]
// UNUSED-NOT: zero.all_gather_start %[[U]]
// UNUSED-PIPELINE-COUNT-2: zero.adam

// hpZ on 4 ranks in 2 nodes of 2: w0's one use in the forward gathers it
// across the world and keeps the rank's shard of a copy cut across the node
// (16 elements over 2 ranks: 8); the backward's use gathers that copy within
// the node. w1, gathered once for two adjacent uses, and b1, used once,
// keep no copy.
// HPZ-LABEL: func.func @step(
// HPZ:         %[[H0:.*]] = zero.all_gather_start %arg0 layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// HPZ-NEXT:    %[[W0:.*]] = zero.wait %[[H0]] : tensor<4x4xf32>
// HPZ-NEXT:    %[[COPY:.*]] = zero.local_shard %[[W0]] layout #zero.layout<shape = [4, 4], world_size = 2> into tensor<8xf32> : tensor<4x4xf32>
// HPZ-NEXT:    linalg.matmul ins(%arg4, %[[W0]]
// HPZ-NEXT:    zero.release %[[W0]]
// HPZ:         zero.all_gather_start %arg2 layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// HPZ-NOT:     zero.local_shard
// HPZ:         %[[H1:.*]] = zero.all_gather_start %[[COPY]] grid_axes = [1] layouts [#zero.layout<shape = [4, 4], world_size = 2>] : tensor<8xf32>
// HPZ-NEXT:    zero.wait %[[H1]] : tensor<4x4xf32>
// HPZ-NOT:     zero.local_shard
// HPZ:         zero.all_gather_start %arg3 layouts [#zero.layout<shape = [6], world_size = 4>] : tensor<2xf32>
// HPZ-NOT:     grid_axes

// HPZ-SIZE: error: hpz-partition-size (4) must be 0, 1, the world size (8) or the ranks of one node (ranks-per-node, 2): the secondary partition is a node's

// qwZ: each parameter's first gather (the forward's) is quantized in blocks
// of 4; w0's second gather (the backward's) is exact.
// QWZ-LABEL: func.func @step(
// QWZ:         zero.all_gather_start %arg0 quantize_block_size = 4 layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// QWZ:         zero.all_gather_start %arg2 quantize_block_size = 4 layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// QWZ:         zero.all_gather_start %arg0 layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// QWZ:         zero.all_gather_start %arg3 quantize_block_size = 4 layouts [#zero.layout<shape = [6], world_size = 4>] : tensor<2xf32>
