// RUN: zero-opt %s --zero-verify-train-step | FileCheck %s

// A valid training step passes unchanged.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[W:.*]]: tensor<4x4xf32> {zero.param = "w"}, %{{.*}}: tensor<2x4xf32> {zero.data = "x"})
// CHECK-SAME:      -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"}) {
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    return %[[C]], %[[W]] : tensor<f32>, tensor<4x4xf32>
// CHECK-NEXT:  }
func.func @step(%w: tensor<4x4xf32> {zero.param = "w"},
                %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %w : tensor<f32>, tensor<4x4xf32>
}
