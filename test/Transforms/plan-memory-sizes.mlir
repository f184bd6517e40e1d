// Without zero-verify-train-step, the passes that size tensors still refuse
// a size that wraps int64 instead of planning or tiling with it.
// RUN: zero-opt %s --zero-partition=stage=1 --zero-plan-memory \
// RUN:   -verify-diagnostics
// RUN: not zero-opt %s --zero-partition=stage=0 --zero-insert-optimizer 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TILES

// TILES: plan-memory-sizes.mlir:[[@LINE+2]]:23: error: the element count of parameter 'w' does not fit int64
// expected-error @+1 {{the size in bytes of a value of type 'tensor<100000000000x100000000000xf32>' does not fit int64}}
func.func @train_step(%w: tensor<100000000000x100000000000xf32> {zero.param = "w"},
                      %x: tensor<4xf32>)
    -> (tensor<f32> {zero.loss},
        tensor<100000000000x100000000000xf32> {zero.grad = "w"}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<100000000000x100000000000xf32>
}
