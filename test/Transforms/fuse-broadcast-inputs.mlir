// zero-fuse-broadcast-inputs: a map that reads broadcasts becomes a generic
// with the same body that reads the broadcasts' sources through indexing
// maps without the broadcast dimensions; broadcasts nothing else reads go,
// with their fresh inits. A broadcast that another op still reads stays.
// RUN: zero-opt %s --zero-fuse-broadcast-inputs | FileCheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @step(
// CHECK-NEXT:  %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// The row statistic is also a matmul's init: its broadcast stays.
// CHECK-NEXT:  %[[E3:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:  %[[SB:.*]] = linalg.broadcast ins(%arg2 : tensor<2xf32>) outs(%[[E3]] : tensor<2x4xf32>) dimensions = [1]
// CHECK-NEXT:  %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[COL]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:    ins(%arg1, %arg0, %arg2 : tensor<2x4xf32>, tensor<4xf32>, tensor<2xf32>) outs(%[[E]] : tensor<2x4xf32>)
// CHECK-SAME:    attrs = {zero.segment = 0 : i64}
// CHECK-NEXT:  ^bb0(%[[X:.*]]: f32, %[[G:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[X]], %[[G]] : f32
// CHECK-NEXT:    %[[Q:.*]] = arith.subf %[[P]], %[[S]] : f32
// CHECK-NEXT:    linalg.yield %[[Q]] : f32
// CHECK:       linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x4xf32>) outs(%[[SB]] : tensor<2x4xf32>)
// CHECK-NOT:   linalg.broadcast
func.func @step(%g: tensor<4xf32> {zero.param = "g"}, %x: tensor<2x4xf32> {zero.data = "x"},
                %s: tensor<2xf32> {zero.data = "s"}, %w: tensor<4x4xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "g"}, tensor<2x4xf32> {zero.data = "z"}) {
  %e = tensor.empty() : tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %e3 = tensor.empty() : tensor<2x4xf32>
  %gb = linalg.broadcast ins(%g : tensor<4xf32>) outs(%e2 : tensor<2x4xf32>) dimensions = [0]
  %sb = linalg.broadcast ins(%s : tensor<2xf32>) outs(%e3 : tensor<2x4xf32>) dimensions = [1]
  %y = linalg.map ins(%x, %gb, %sb : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {zero.segment = 0 : i64}
    (%a: f32, %b: f32, %c: f32, %init: f32) {
      %p = arith.mulf %a, %b : f32
      %q = arith.subf %p, %c : f32
      linalg.yield %q : f32
    }
  %z = linalg.matmul ins(%y, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%sb : tensor<2x4xf32>) -> tensor<2x4xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %g, %z : tensor<f32>, tensor<4xf32>, tensor<2x4xf32>
}
