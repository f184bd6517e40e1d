// RUN: zero-opt %s -split-input-file --zero-infer-segments | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-infer-segments=cpu-checkpointing=true \
// RUN:   | FileCheck %s --check-prefix=CPU

// Three layers of a matmul and a square, as a plain chain: every point
// between two ops that read the data (the matmuls, the squares) is crossed
// by one activation, so each op is a piece of its own (with the
// tensor.empty and linalg.fill before a matmul, which read no data). Each
// piece keeps 32 bytes for the next and holds nothing else: segments of two
// pieces (a layer, Chen et al.'s sqrt(n)) keep the least. The pieces before
// the first cut (the first matmul) and the last segment (the last square,
// with the loss after it) stay unmarked.
// CHECK-LABEL: func.func @step(
// CHECK:      %[[Z0:.*]] = linalg.matmul ins(%arg3, %arg0
// CHECK-NEXT: %[[H0:.*]] = linalg.map { arith.mulf } ins(%[[Z0]], %[[Z0]] {{.*}} {zero.segment = 0 : i64}
// CHECK-NEXT: tensor.empty() {zero.segment = 0 : i64}
// CHECK-NEXT: linalg.fill {zero.segment = 0 : i64}
// CHECK-NEXT: %[[Z1:.*]] = linalg.matmul {zero.segment = 0 : i64} ins(%[[H0]], %arg1
// CHECK-NEXT: %[[H1:.*]] = linalg.map { arith.mulf } ins(%[[Z1]], %[[Z1]] {{.*}} {zero.segment = 1 : i64}
// CHECK-NEXT: tensor.empty() {zero.segment = 1 : i64}
// CHECK-NEXT: linalg.fill {zero.segment = 1 : i64}
// CHECK-NEXT: %[[Z2:.*]] = linalg.matmul {zero.segment = 1 : i64} ins(%[[H1]], %arg2
// CHECK-NEXT: linalg.map { arith.mulf } ins(%[[Z2]], %[[Z2]]
// CHECK-NOT:  zero.segment
// CHECK:      return
//
// With cpu-checkpointing what the segments keep waits in host memory: only
// the largest recomputation counts, and pieces of one op each (nothing to
// recompute inside) are the best segments.
// CPU-LABEL: func.func @step(
// CPU:      linalg.matmul ins(%arg3, %arg0
// CPU-NEXT: linalg.map { arith.mulf } {{.*}} {zero.segment = 0 : i64}
// CPU-NEXT: tensor.empty() {zero.segment = 1 : i64}
// CPU-NEXT: linalg.fill {zero.segment = 1 : i64}
// CPU-NEXT: linalg.matmul {zero.segment = 1 : i64}
// CPU-NEXT: linalg.map { arith.mulf } {{.*}} {zero.segment = 2 : i64}
// CPU-NEXT: tensor.empty() {zero.segment = 3 : i64}
// CPU-NEXT: linalg.fill {zero.segment = 3 : i64}
// CPU-NEXT: linalg.matmul {zero.segment = 3 : i64}
// CPU-NEXT: linalg.map { arith.mulf }
// CPU-NOT:  zero.segment
// CPU:      return

func.func @step(%w0: tensor<4x4xf32> {zero.param = "w0"},
                %w1: tensor<4x4xf32> {zero.param = "w1"},
                %w2: tensor<4x4xf32> {zero.param = "w2"},
                %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w0"},
        tensor<4x4xf32> {zero.grad = "w1"}, tensor<4x4xf32> {zero.grad = "w2"}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // Forward.
  %e0 = tensor.empty() : tensor<2x4xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z0 = linalg.matmul ins(%x, %w0 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h0 = linalg.map {arith.mulf} ins(%z0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>)
  %e1 = tensor.empty() : tensor<2x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z1 = linalg.matmul ins(%h0, %w1 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h1 = linalg.map {arith.mulf} ins(%z1, %z1 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>)
  %e2 = tensor.empty() : tensor<2x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z2 = linalg.matmul ins(%h1, %w2 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h2 = linalg.map {arith.mulf} ins(%z2, %z2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>)
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce {arith.addf} ins(%h2 : tensor<2x4xf32>) outs(%fl : tensor<f32>) dimensions = [0, 1]
  // Backward: dz = 2 z dh, dw = h^T dz, dh = dz w^T.
  %g = tensor.empty() : tensor<2x4xf32>
  %gt = tensor.empty() : tensor<4x2xf32>
  %gw = tensor.empty() : tensor<4x4xf32>
  %fw = linalg.fill ins(%zero : f32) outs(%gw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%g : tensor<2x4xf32>) -> tensor<2x4xf32>
  %dh2 = linalg.fill ins(%one : f32) outs(%g : tensor<2x4xf32>) -> tensor<2x4xf32>
  %t2 = linalg.map {arith.mulf} ins(%dh2, %z2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %dz2 = linalg.map {arith.addf} ins(%t2, %t2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %h1t = linalg.transpose ins(%h1 : tensor<2x4xf32>) outs(%gt : tensor<4x2xf32>) permutation = [1, 0]
  %dw2 = linalg.matmul ins(%h1t, %dz2 : tensor<4x2xf32>, tensor<2x4xf32>) outs(%fw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<4x4xf32>) outs(%gw : tensor<4x4xf32>) permutation = [1, 0]
  %dh1 = linalg.matmul ins(%dz2, %w2t : tensor<2x4xf32>, tensor<4x4xf32>) outs(%fg : tensor<2x4xf32>) -> tensor<2x4xf32>
  %t1 = linalg.map {arith.mulf} ins(%dh1, %z1 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %dz1 = linalg.map {arith.addf} ins(%t1, %t1 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %h0t = linalg.transpose ins(%h0 : tensor<2x4xf32>) outs(%gt : tensor<4x2xf32>) permutation = [1, 0]
  %dw1 = linalg.matmul ins(%h0t, %dz1 : tensor<4x2xf32>, tensor<2x4xf32>) outs(%fw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<4x4xf32>) outs(%gw : tensor<4x4xf32>) permutation = [1, 0]
  %dh0 = linalg.matmul ins(%dz1, %w1t : tensor<2x4xf32>, tensor<4x4xf32>) outs(%fg : tensor<2x4xf32>) -> tensor<2x4xf32>
  %t0 = linalg.map {arith.mulf} ins(%dh0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %dz0 = linalg.map {arith.addf} ins(%t0, %t0 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %xt = linalg.transpose ins(%x : tensor<2x4xf32>) outs(%gt : tensor<4x2xf32>) permutation = [1, 0]
  %dw0 = linalg.matmul ins(%xt, %dz0 : tensor<4x2xf32>, tensor<2x4xf32>) outs(%fw : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %loss, %dw0, %dw1, %dw2
      : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A step that marks its segments keeps them: the pass adds none.
// CHECK-LABEL: func.func @marked(
// CHECK:       linalg.matmul ins(
// CHECK-NOT:   zero.segment = 1
// CHECK:       linalg.map { arith.mulf } {{.*}} {zero.segment = 7 : i64}
// CHECK-NOT:   zero.segment
// CHECK:       return
func.func @marked(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h = linalg.map {arith.mulf} ins(%z, %z : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {zero.segment = 7 : i64}
  %k = linalg.map {arith.mulf} ins(%h, %h : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>)
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce {arith.addf} ins(%k : tensor<2x4xf32>) outs(%fl : tensor<f32>) dimensions = [0, 1]
  return %loss, %w : tensor<f32>, tensor<4x4xf32>
}

// -----

// A loss that does not depend on the data has no activations to cut.
// CHECK-LABEL: func.func @constant(
// CHECK-NOT:   zero.segment
func.func @constant(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %s = linalg.map {arith.mulf} ins(%w, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>)
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce {arith.addf} ins(%s : tensor<4x4xf32>) outs(%fl : tensor<f32>) dimensions = [0, 1]
  return %loss, %w : tensor<f32>, tensor<4x4xf32>
}
