// Sizes that fit where the verifier checks them but not in what later passes
// build from them: an error, never a wrapped size or a program without end.
// One parameter of 10^18 f32 (4 * 10^18 bytes, below int64's 9.2 * 10^18).
//
// At the default sub_group_size (10^9) its optimizer step would be 10^9 tiles
// of one op each.
// RUN: not zero-opt %s --zero-stage=0 --zero-world-size=2 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TILES
// TILES: sizes-plan.mlir:[[@LINE+21]]:23: error: the optimizer step of parameter 'w' (1000000000000000000 elements) needs 1000000000 tiles of sub-group-size = 1000000000 elements, more than 65536; raise zero_optimization.sub_group_size
//
// In one tile, the parameter, its gradient and its two Adam states need
// 1.6 * 10^19 bytes (half of it sharded on 2 ranks, the whole parameter and
// gradient besides): the memory plan refuses them, at every stage.
// RUN: not zero-opt %s --zero-stage=0 --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.sub_group_size=1000000000000000000 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: not zero-opt %s --zero-stage=1 --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.sub_group_size=1000000000000000000 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: not zero-opt %s --zero-stage=2 --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.sub_group_size=1000000000000000000 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PLAN
// Stage 3 gathers the whole parameter at once: allowed here, so that the
// plan sees it.
// RUN: not zero-opt %s --zero-stage=3 --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.sub_group_size=1000000000000000000 \
// RUN:   --zero-set=zero_optimization.stage3_max_live_parameters=1000000000000000000 \
// RUN:   2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN: sizes-plan.mlir:[[@LINE+1]]:1: error: the buffers of the memory plan total more than int64 bytes
func.func @train_step(%w: tensor<1000000000000000000xf32> {zero.param = "w"},
                      %x: tensor<4xf32>)
    -> (tensor<f32> {zero.loss},
        tensor<1000000000000000000xf32> {zero.grad = "w"}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<1000000000000000000xf32>
}
