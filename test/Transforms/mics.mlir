// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 ranks-per-node=2 mics-shard-size=2 param-persistence-threshold=4" \
// RUN:   --zero-mixed-precision="precision=fp16" --zero-shard-parameters \
// RUN:   --zero-reduce-gradients="gradient-predivide-factor=2 communication-data-type=fp32" \
// RUN:   --zero-insert-optimizer="gradient-clipping=1.0" | FileCheck %s
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=8 ranks-per-node=2 mics-shard-size=4 param-persistence-threshold=4" \
// RUN:   --zero-shard-parameters="mics-hierarchical-params-gather=true" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer | FileCheck %s --check-prefix=NODES

// MiCS on 4 ranks in 2 nodes of 2 (layouts for 2 ranks), fp16 with dynamic
// loss scaling, gradient clipping and a predivide factor: every collective
// over a layout runs within the node (grid axis 1): the gathers of the
// partitioned parameters, the gradients' reduce-scatters and the post-step
// gather of the persistent b0. With a predivide factor both hops of the
// gradients sum (1/2 before, 2/4 after): the replicas' all-reduce across
// the nodes (axis 0) sums the post-scaled shards, in the communication type
// (f32). The overflow flag (max) and the squared norm (sum) are all-reduced
// within the node, whose ranks hold every shard once; summed across the
// world they would count each shard twice.
// CHECK-LABEL: func.func @step(
// CHECK:       zero.all_gather_start %arg0 grid_axes = [1] layouts [#zero.layout<shape = [4, 4], world_size = 2>] : tensor<8xf16>
// CHECK:       zero.all_gather_start %arg2 grid_axes = [1] layouts [#zero.layout<shape = [4, 4], world_size = 2>] : tensor<8xf16>
// CHECK:       zero.reduce_scatter_start sum %{{.*}} grid_axes = [1] layouts [#zero.layout<shape = [4, 4], world_size = 2>] {zero.grads = ["w1"]} : tensor<4x4xf32>
// CHECK:       zero.reduce_scatter_start sum %{{.*}} grid_axes = [1] layouts [#zero.layout<shape = [4, 4], world_size = 2>] {zero.grads = ["w0"]} : tensor<4x4xf32>
// CHECK:       zero.reduce_scatter_start sum %{{.*}} grid_axes = [1] layouts [#zero.layout<shape = [4], world_size = 2>] {zero.grads = ["b0"]} : tensor<4xf32>
// CHECK:       zero.all_gather_start %arg3 grid_axes = [1] layouts [#zero.layout<shape = [6], world_size = 2>] : tensor<3xf16>
// CHECK:       zero.reduce_scatter_start sum %{{.*}} grid_axes = [1] layouts [#zero.layout<shape = [6], world_size = 2>] {zero.grads = ["b1"]} : tensor<6xf32>
// CHECK:       %[[SCALED:.*]] = linalg.map ins(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT:    (%{{.*}}: f32, %{{.*}}: f32) {
// CHECK-NEXT:      arith.constant 5.000000e-01 : f32
// CHECK:       zero.all_reduce_start sum %[[SCALED]] grid_axes = [0] {zero.grads = ["w0"]} : tensor<8xf32>
// CHECK:       zero.all_reduce_start sum %{{.*}} grid_axes = [0] {zero.grads = ["b0"]} : tensor<2xf32>
// CHECK:       zero.all_reduce_start sum %{{.*}} grid_axes = [0] {zero.grads = ["w1"]} : tensor<8xf32>
// CHECK:       zero.all_reduce_start sum %{{.*}} grid_axes = [0] {zero.grads = ["b1"]} : tensor<3xf32>
// CHECK:       zero.all_reduce_start max %{{.*}} grid_axes = [1] : tensor<f32>
// CHECK:       zero.all_reduce_start sum %{{.*}} grid_axes = [1] : tensor<f32>
// CHECK:       zero.all_gather_start %{{.*}} grid_axes = [1] layouts [#zero.layout<shape = [4], world_size = 2>] : tensor<2xf16>
// CHECK-NOT:   _start
// CHECK:       return

// MiCS groups of 2 nodes (8 ranks in nodes of 2, groups of 4: the grid
// [2, 2, 2]): gathers and reduce-scatters over the group's axes [1, 2], the
// gathers hierarchical (across the 2 nodes, then within each); the
// replicas' all-reduce over axis 0.
// NODES-LABEL: func.func @step(
// NODES:       zero.all_gather_start %arg0 grid_axes = [1, 2] hierarchical layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// NODES:       zero.reduce_scatter_start avg %{{.*}} grid_axes = [1, 2] layouts [#zero.layout<shape = [4, 4], world_size = 4>] {zero.grads = ["w1"]} : tensor<4x4xf32>
// NODES:       zero.all_reduce_start avg %{{.*}} grid_axes = [0] {zero.grads = ["w0"]} : tensor<4xf32>
