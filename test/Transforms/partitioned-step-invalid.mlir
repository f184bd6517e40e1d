// The passes after zero-partition need what it records. A hand-written step
// that claims a stage but lacks a parameter's layout, or names a gradient of
// no parameter, is rejected with the pass and the name.
// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-reduce-gradients

// expected-error @+1 {{'zero-reduce-gradients': parameter 'w' has no 'zero.layout'; run 'zero-partition' first}}
func.func @no_layout(%w: tensor<4xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{result #1 is the gradient of 'v', which is no parameter of the step}}
func.func @grad_of_nothing(
    %w: tensor<4xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [4], world_size = 2>})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "v"})
    attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Nodes of 3 ranks cannot hold a world of 4.
// expected-error @+1 {{'zero.ranks_per_node' (3) must divide 'zero.world_size' (4)}}
func.func @nodes_of_three(
    %w: tensor<4xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [4], world_size = 4>})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.stage = 2 : i64, zero.world_size = 4 : i64,
                zero.ranks_per_node = 3 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
