// Sizes never wrap. A parameter of 10^11 x 10^11 f32 has 4 * 10^22 bytes;
// its element count wraps int64 to 1864712049423024128, with which stage 0
// built billions of optimizer tiles and stages 1-2 planned an arena smaller
// than one buffer. zero-verify-train-step refuses it where it is declared,
// at every stage, before any pass sizes it.
//
// RUN: not zero-opt %s -split-input-file --zero-stage=0 --zero-world-size=2 2>&1 \
// RUN:   | FileCheck %s
// RUN: not zero-opt %s -split-input-file --zero-stage=1 --zero-world-size=2 2>&1 \
// RUN:   | FileCheck %s
// RUN: not zero-opt %s -split-input-file --zero-stage=2 --zero-world-size=2 2>&1 \
// RUN:   | FileCheck %s
// RUN: not zero-opt %s -split-input-file --zero-stage=3 --zero-world-size=2 2>&1 \
// RUN:   | FileCheck %s

// CHECK: sizes.mlir:[[@LINE+1]]:23: error: parameter 'w' (argument #0) has type 'tensor<100000000000x100000000000xf32>', whose size does not fit int64 bytes
func.func @train_step(%w: tensor<100000000000x100000000000xf32> {zero.param = "w"},
                      %x: tensor<4xf32>)
    -> (tensor<f32> {zero.loss},
        tensor<100000000000x100000000000xf32> {zero.grad = "w"}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<100000000000x100000000000xf32>
}

// -----

// A data argument and an activation that do not fit, at their positions.
// CHECK: sizes.mlir:[[@LINE+3]]:23: error: argument #1 has type 'tensor<4611686018427387904xf16>', whose size does not fit int64 bytes
// CHECK: sizes.mlir:[[@LINE+5]]:8: error: result #0 of 'tensor.empty' has type 'tensor<3000000000000000000xf32>', whose size does not fit int64 bytes
func.func @train_step(%w: tensor<4xf32> {zero.param = "w"},
                      %x: tensor<4611686018427387904xf16>)
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  %e = tensor.empty() : tensor<3000000000000000000xf32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Two parameters of 8 * 10^18 bytes each fit int64; together they do not.
// CHECK: sizes.mlir:[[@LINE+1]]:1: error: the parameters of '@train_step' total more than int64 bytes
func.func @train_step(%a: tensor<2000000000000000000xf32> {zero.param = "a"},
                      %b: tensor<2000000000000000000xf32> {zero.param = "b"})
    -> (tensor<f32> {zero.loss},
        tensor<2000000000000000000xf32> {zero.grad = "a"},
        tensor<2000000000000000000xf32> {zero.grad = "b"}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %a, %b : tensor<f32>, tensor<2000000000000000000xf32>,
                      tensor<2000000000000000000xf32>
}
