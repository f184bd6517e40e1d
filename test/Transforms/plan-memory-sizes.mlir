// Without zero-verify-train-step, the passes that size tensors still refuse
// a size that wraps int64 instead of partitioning or planning with it.
// RUN: not zero-opt %s -split-input-file --zero-partition=stage=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PARTITION
// RUN: zero-opt %s -split-input-file --zero-plan-memory -verify-diagnostics

// PARTITION: plan-memory-sizes.mlir:[[@LINE+2]]:23: error: element count of the shape overflows int64
// expected-error @+1 {{the size in bytes of a value of type 'tensor<100000000000x100000000000xf32>' does not fit int64}}
func.func @train_step(%w: tensor<100000000000x100000000000xf32> {zero.param = "w"},
                      %x: tensor<4xf32>)
    -> (tensor<f32> {zero.loss},
        tensor<100000000000x100000000000xf32> {zero.grad = "w"})
    attributes {zero.train_step, zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<100000000000x100000000000xf32>
}

// -----

// An activation: the plan names the op's position.
func.func @train_step(%w: tensor<4xf32> {zero.param = "w"},
                      %x: tensor<4xf32>)
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.train_step, zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{the size in bytes of a value of type 'tensor<3000000000000000000xf32>' does not fit int64}}
  %e = tensor.empty() : tensor<3000000000000000000xf32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Two gradients of 8 * 10^18 bytes each in one bucket: their contiguous
// region, or without one their staging buffer, does not fit.
// RUN: not zero-opt %s -split-input-file \
// RUN:   --zero-plan-memory=contiguous-gradients=false 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STAGING
func.func @train_step(%w: tensor<4xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.param = "w"})
    attributes {zero.train_step, zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  %a = tensor.empty() : tensor<2000000000000000000xf32>
  %b = tensor.empty() : tensor<2000000000000000000xf32>
  // STAGING: plan-memory-sizes.mlir:[[@LINE+2]]:8: error: the staging buffer of this collective needs more than int64 bytes
  // expected-error @+1 {{the gradients this op reduces total more than int64 bytes}}
  %h = zero.all_reduce_start avg %a, %b {zero.grads = ["a", "b"]}
      : tensor<2000000000000000000xf32>, tensor<2000000000000000000xf32>
  %ra, %rb = zero.wait %h
      : tensor<2000000000000000000xf32>, tensor<2000000000000000000xf32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
