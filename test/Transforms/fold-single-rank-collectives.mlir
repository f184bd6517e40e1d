// zero-fold-single-rank-collectives: at world size 1 every collective is an
// identity and becomes a view of its operands, placed at its wait.
//
// Stage 3: each parameter gather is the shard (tensor<16xf32>) viewed in the
// parameter's shape, its release goes (the view aliases the shard argument,
// which lives on), and each reduce-scatter is the gradient viewed flat. No
// collective, wait or release is left.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=1 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-fold-single-rank-collectives | FileCheck %s --check-prefix=STAGE3 \
// RUN:   --implicit-check-not=zero.all_gather_start --implicit-check-not=zero.wait \
// RUN:   --implicit-check-not=zero.reduce_scatter_start --implicit-check-not=zero.release
// STAGE3-LABEL: func.func @step(
// STAGE3:       %[[W0:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
// STAGE3-NEXT:  linalg.matmul ins(%arg13, %[[W0]] : tensor<2x4xf32>, tensor<4x4xf32>)
// STAGE3:       %[[W1:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
// STAGE3:       %[[GW1:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<2x4xf32>)
// STAGE3-NEXT:  %[[G1:.*]] = tensor.collapse_shape %[[GW1]] {{\[\[}}0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// STAGE3:       %[[GW0:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<2x4xf32>)
// STAGE3-NEXT:  %[[G0:.*]] = tensor.collapse_shape %[[GW0]] {{\[\[}}0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// STAGE3:       zero.adam %arg0, %[[G0]],
// STAGE3:       zero.adam %arg2, %[[G1]],

// Stage 1: the local shards of the gradients and of the parameters (which
// the optimizer steps) are flat views, and the post-step gathers of the new
// parameters views in the parameters' shapes; 1-d parameters need no view.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=1 world-size=1" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-fold-single-rank-collectives | FileCheck %s --check-prefix=STAGE1 \
// RUN:   --implicit-check-not=zero.all_gather_start --implicit-check-not=zero.wait \
// RUN:   --implicit-check-not=zero.local_shard --implicit-check-not=zero.all_reduce_start
// STAGE1-LABEL: func.func @step(
// STAGE1:       %[[P0:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// STAGE1-NEXT:  %[[NEW0:.*]], %{{.*}}, %{{.*}} = zero.adam %[[P0]],
// STAGE1-NEXT:  %[[FULL0:.*]] = tensor.expand_shape %[[NEW0]] {{\[\[}}0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
// STAGE1-NEXT:  %[[NEW1:.*]], %{{.*}}, %{{.*}} = zero.adam %arg1,
// STAGE1:       return %{{.*}}, %[[FULL0]], %[[NEW1]],

// Two ranks: nothing changes.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-fold-single-rank-collectives | FileCheck %s --check-prefix=TWO
// TWO: zero.all_gather_start
// TWO: zero.release
// TWO: zero.reduce_scatter_start

// A layout padded beyond its elements at world size 1 keeps its collective:
// the shard is not a view of the full tensor. The all-reduce (no layout)
// yields its operand.
// RUN: zero-opt %s --zero-fold-single-rank-collectives | FileCheck %s --check-prefix=PADDED
// PADDED-LABEL: func.func @padded(
// PADDED-NEXT:  %[[H:.*]] = zero.all_gather_start %arg0
// PADDED-NEXT:  %[[FULL:.*]] = zero.wait %[[H]] : tensor<3xf32>
// PADDED-NEXT:  return %arg1, %[[FULL]] : tensor<f32>, tensor<3xf32>
func.func @padded(%w: tensor<4xf32> {zero.param = "w",
                      zero.layout = #zero.layout<shape = [3], world_size = 1, padded_numel = 4>},
                  %x: tensor<f32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<3xf32> {zero.grad = "w"})
    attributes {zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  %h = zero.all_gather_start %w layouts [#zero.layout<shape = [3], world_size = 1, padded_numel = 4>] : tensor<4xf32>
  %full = zero.wait %h : tensor<3xf32>
  %a = zero.all_reduce_start sum %x : tensor<f32>
  %loss = zero.wait %a : tensor<f32>
  return %loss, %full : tensor<f32>, tensor<3xf32>
}

// A 0-d parameter: its shard is tensor<1xf32>, so the gather's view collapses
// to rank 0 and the reduce-scatter's expands from it, with no dimension
// groups.
// RUN: zero-opt %S/Inputs/scalar-param-step.mlir --zero-stage=3 --zero-world-size=1 \
// RUN:   --zero-set=zero_optimization.stage3_param_persistence_threshold=0 \
// RUN:   | FileCheck %s --check-prefix=SCALAR
// SCALAR: tensor.collapse_shape %arg1 [] {{.*}} : tensor<1xf32> into tensor<f32>
// SCALAR: tensor.expand_shape %{{.*}} [] output_shape [1] {{.*}} : tensor<f32> into tensor<1xf32>
