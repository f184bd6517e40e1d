// With several candidates, --zero-entry picks the training step; the other
// functions are left alone.
// RUN: zero-opt %s --zero-verify-train-step --zero-entry=second | FileCheck %s
// RUN: zero-opt %s --zero-verify-train-step=entry=second | FileCheck %s
// RUN: not zero-opt %s --zero-verify-train-step --zero-entry=first 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FIRST
// RUN: not zero-opt %s --zero-verify-train-step --zero-entry=third 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// RUN: not zero-opt %s --zero-verify-train-step 2>&1 \
// RUN:   | FileCheck %s --check-prefix=AMBIGUOUS

// Both functions are printed as they are.
// CHECK-LABEL: func.func @first(
// CHECK-SAME:      %[[W1:.*]]: tensor<4xf32> {zero.param = "w"}) -> (tensor<4xf32> {zero.grad = "w"}) {
// CHECK-NEXT:    return %[[W1]] : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @second(
// CHECK-SAME:      %[[W2:.*]]: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) {
// CHECK-NEXT:    %[[L:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    return %[[L]], %[[W2]] : tensor<f32>, tensor<4xf32>
// CHECK-NEXT:  }

// FIRST: verify-train-step-entry.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: training step '@first' has no result marked 'zero.loss'
func.func @first(%w: tensor<4xf32> {zero.param = "w"})
    -> (tensor<4xf32> {zero.grad = "w"}) {
  return %w : tensor<4xf32>
}

func.func @second(%w: tensor<4xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// MISSING: error: no function '@third' (named by the entry option)
// AMBIGUOUS: error: 2 candidate training-step functions; choose one with --zero-entry=NAME
// AMBIGUOUS: note: candidate '@first'
// AMBIGUOUS: note: candidate '@second'
