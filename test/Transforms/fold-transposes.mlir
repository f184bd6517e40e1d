// zero-fold-transposes: a transpose of a GEMM operand's last two dimensions
// becomes the GEMM's indexing maps, and goes when nothing else reads it.
// RUN: zero-opt %s --zero-fold-transposes | FileCheck %s

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[QA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[KT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x3xf32>
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x5x8xf32>
// CHECK-SAME: %[[K:[^:]*]]: tensor<2x6x8xf32>
// The forward GEMM keeps the default maps.
// CHECK:      %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] :
// w's transpose also leaves the step: it stays, for that reader only.
// CHECK:      %[[WT:.*]] = linalg.transpose ins(%[[W]] :
// The input gradient reads w as B transposed; the weight gradient reads x
// as A transposed (its transpose and that one's init go); the scores read
// the keys as B transposed.
// CHECK:      linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%[[Y]], %[[W]] : tensor<2x3xf32>, tensor<4x3xf32>)
// CHECK-NOT:  tensor<4x2xf32>
// CHECK:      linalg.matmul indexing_maps = [#[[AT]], #[[B]], #[[C]]] ins(%[[X]], %[[Y]] : tensor<2x4xf32>, tensor<2x3xf32>)
// CHECK-NOT:  tensor<2x8x6xf32>
// CHECK:      linalg.batch_matmul indexing_maps = [#[[QA]], #[[KT]], #[[S]]] ins(%[[Q]], %[[K]] : tensor<2x5x8xf32>, tensor<2x6x8xf32>)
// A transpose of other dimensions is not a GEMM's operand layout.
// CHECK:      %[[P:.*]] = linalg.transpose ins(%[[Q]] : tensor<2x5x8xf32>) outs(%{{.*}} : tensor<5x2x8xf32>) permutation = [1, 0, 2]
// CHECK:      linalg.batch_matmul ins(%[[P]], %{{.*}} :
// CHECK:      return %[[Y]], %{{.*}}, %{{.*}}, %{{.*}}, %[[WT]], %{{.*}} :

func.func @step(%w: tensor<4x3xf32> {zero.param = "w"},
                %x: tensor<2x4xf32> {zero.data = "x"},
                %q: tensor<2x5x8xf32> {zero.data = "q"},
                %k: tensor<2x6x8xf32> {zero.data = "k"},
                %v: tensor<5x8x8xf32> {zero.data = "v"})
    -> (tensor<2x3xf32>, tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x5x6xf32>,
        tensor<3x4xf32>, tensor<5x2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e23 = tensor.empty() : tensor<2x3xf32>
  %c23 = linalg.fill ins(%zero : f32) outs(%e23 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%c23 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e34 = tensor.empty() : tensor<3x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x3xf32>) outs(%e34 : tensor<3x4xf32>) permutation = [1, 0]
  %e24 = tensor.empty() : tensor<2x4xf32>
  %c24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %dx = linalg.matmul ins(%y, %wt : tensor<2x3xf32>, tensor<3x4xf32>) outs(%c24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e42 = tensor.empty() : tensor<4x2xf32>
  %xt = linalg.transpose ins(%x : tensor<2x4xf32>) outs(%e42 : tensor<4x2xf32>) permutation = [1, 0]
  %e43 = tensor.empty() : tensor<4x3xf32>
  %c43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %dw = linalg.matmul ins(%xt, %y : tensor<4x2xf32>, tensor<2x3xf32>) outs(%c43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e286 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%e286 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %e256 = tensor.empty() : tensor<2x5x6xf32>
  %c256 = linalg.fill ins(%zero : f32) outs(%e256 : tensor<2x5x6xf32>) -> tensor<2x5x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x5x8xf32>, tensor<2x8x6xf32>) outs(%c256 : tensor<2x5x6xf32>) -> tensor<2x5x6xf32>
  %e528 = tensor.empty() : tensor<5x2x8xf32>
  %qp = linalg.transpose ins(%q : tensor<2x5x8xf32>) outs(%e528 : tensor<5x2x8xf32>) permutation = [1, 0, 2]
  %c528 = linalg.fill ins(%zero : f32) outs(%e528 : tensor<5x2x8xf32>) -> tensor<5x2x8xf32>
  %o = linalg.batch_matmul ins(%qp, %v : tensor<5x2x8xf32>, tensor<5x8x8xf32>) outs(%c528 : tensor<5x2x8xf32>) -> tensor<5x2x8xf32>
  return %y, %dx, %dw, %s, %wt, %o : tensor<2x3xf32>, tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x5x6xf32>, tensor<3x4xf32>, tensor<5x2x8xf32>
}
