// zero-reduce shrinks a module that zero-opt refuses to what still makes it
// refuse: here an op with memory effects in a segment to recompute. The
// other functions and the ops whose results nothing uses go; the step with
// the op stays, and zero-opt still refuses it.
//
// RUN: zero-reduce %s -o %t.mlir \
// RUN:   --reduction-tree='traversal-mode=0 test=%S/Inputs/refuses-to-recompute.sh' \
// RUN:   2>/dev/null
// RUN: FileCheck %s < %t.mlir
// RUN: not zero-opt %t.mlir --zero-checkpoint-activations 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STILL

// CHECK-NOT:  func.func @forward
// CHECK:      func.func @step
// CHECK-NOT:  linalg.matmul
// CHECK:      bufferization.alloc_tensor() {zero.segment = 3 : i64}
// CHECK-NOT:  linalg.matmul
// CHECK:      return
// CHECK-NOT:  func.func @forward

// STILL: error: zero-checkpoint-activations: cannot recompute an op with memory effects (segment 3)

func.func @forward(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %z = tensor.empty() : tensor<2x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

func.func @step(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<2x4xf32>, tensor<4x4xf32> {zero.grad = "w"}) {
  %z = tensor.empty() : tensor<2x4xf32>
  %unused = linalg.matmul {zero.segment = 0 : i64} ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e = bufferization.alloc_tensor() {zero.segment = 3 : i64} : tensor<2x4xf32>
  %g = tensor.empty() : tensor<2x4xf32>
  %b = linalg.map { arith.negf } ins(%e : tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %z2 = tensor.empty() : tensor<4x4xf32>
  %also_unused = linalg.matmul ins(%w, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %b, %w : tensor<f32>, tensor<2x4xf32>, tensor<4x4xf32>
}
