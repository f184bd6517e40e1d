// zero-checkpoint-activations on three layers h_i = (h_{i-1} w_i)^2,
// loss = sum(h_2), each layer's forward ops marked zero.segment = i.
//
// RUN: zero-opt %s --zero-checkpoint-activations | FileCheck %s
// Twice is once: the clones carry no zero.segment.
// RUN: zero-opt %s --zero-checkpoint-activations \
// RUN:   | zero-opt --zero-checkpoint-activations | FileCheck %s
// At least as many checkpoints as layers: one segment per layer.
// RUN: zero-opt %s --zero-checkpoint-activations=number-checkpoints=5 \
// RUN:   | FileCheck %s
// RUN: zero-opt %s --zero-checkpoint-activations=number-checkpoints=2 \
// RUN:   | FileCheck %s --check-prefix=GROUP2
// RUN: zero-opt %s --zero-checkpoint-activations=number-checkpoints=1 \
// RUN:   | FileCheck %s --check-prefix=GROUP1
// In the pipeline, before partitioning.
// RUN: zero-opt %s --zero-pipeline="stage=3 world-size=2 checkpoint-activations=true" \
// RUN:   --mlir-print-ir-after=zero-checkpoint-activations -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPELINE

func.func @step(%w0: tensor<4x4xf32> {zero.param = "w0"},
                %w1: tensor<4x4xf32> {zero.param = "w1"},
                %w2: tensor<4x4xf32> {zero.param = "w2"},
                %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w0"},
        tensor<4x4xf32> {zero.grad = "w1"}, tensor<4x4xf32> {zero.grad = "w2"}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // Forward.
  %e0 = tensor.empty() {zero.segment = 0 : i64} : tensor<2x4xf32>
  %f0 = linalg.fill {zero.segment = 0 : i64} ins(%zero : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z0 = linalg.matmul {zero.segment = 0 : i64} ins(%x, %w0 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h0 = linalg.map {arith.mulf} ins(%z0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>) {zero.segment = 0 : i64}
  %e1 = tensor.empty() {zero.segment = 1 : i64} : tensor<2x4xf32>
  %f1 = linalg.fill {zero.segment = 1 : i64} ins(%zero : f32) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z1 = linalg.matmul {zero.segment = 1 : i64} ins(%h0, %w1 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h1 = linalg.map {arith.mulf} ins(%z1, %z1 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) {zero.segment = 1 : i64}
  %e2 = tensor.empty() {zero.segment = 2 : i64} : tensor<2x4xf32>
  %f2 = linalg.fill {zero.segment = 2 : i64} ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z2 = linalg.matmul {zero.segment = 2 : i64} ins(%h1, %w2 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h2 = linalg.map {arith.mulf} ins(%z2, %z2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {zero.segment = 2 : i64}
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

// The forward pass is unchanged: every layer's ops, still marked.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[W0:.*]]: tensor<4x4xf32> {zero.param = "w0"}, %[[W1:.*]]: tensor<4x4xf32> {zero.param = "w1"}, %[[W2:.*]]: tensor<4x4xf32> {zero.param = "w2"}, %[[X:.*]]: tensor<2x4xf32> {zero.data = "x"})
// CHECK:       %[[C0:.*]] = arith.constant 0.0
// CHECK-NEXT:  %[[C1:.*]] = arith.constant 1.0
// CHECK:       %[[Z0:.*]] = linalg.matmul {zero.segment = 0 : i64} ins(%[[X]], %[[W0]]
// CHECK-NEXT:  %[[H0:.*]] = linalg.map { arith.mulf } ins(%[[Z0]], %[[Z0]] {{.*}} {zero.segment = 0 : i64}
// CHECK:       %[[Z1:.*]] = linalg.matmul {zero.segment = 1 : i64} ins(%[[H0]], %[[W1]]
// CHECK-NEXT:  %[[H1:.*]] = linalg.map { arith.mulf } ins(%[[Z1]], %[[Z1]] {{.*}} {zero.segment = 1 : i64}
// CHECK:       %[[Z2:.*]] = linalg.matmul {zero.segment = 2 : i64} ins(%[[H1]], %[[W2]]
// CHECK-NEXT:  %[[H2:.*]] = linalg.map { arith.mulf } ins(%[[Z2]], %[[Z2]] {{.*}} {zero.segment = 2 : i64}
// CHECK:       %[[LOSS:.*]] = linalg.reduce { arith.addf } ins(%[[H2]]
// The layers' outputs h0, h1 (the next layer's input) stay for the backward
// pass; their pre-activations z0, z1, z2 are recomputed from the kept inputs
// right before the first backward op that reads them, and only there.
// CHECK:       %[[DH2:.*]] = linalg.fill ins(%[[C1]] : f32)
// CHECK-NEXT:  %[[E2:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:  %[[F2:.*]] = linalg.fill ins(%[[C0]] : f32) outs(%[[E2]] : tensor<2x4xf32>)
// CHECK-NEXT:  %[[RZ2:.*]] = linalg.matmul ins(%[[H1]], %[[W2]] : {{.*}}) outs(%[[F2]] : tensor<2x4xf32>)
// CHECK-NEXT:  linalg.map { arith.mulf } ins(%[[DH2]], %[[RZ2]] :
// CHECK-NOT:   %[[Z2]]{{[^_0-9]}}
// CHECK:       linalg.transpose ins(%[[H1]] :
// CHECK:       linalg.transpose ins(%[[W2]] :
// CHECK-NEXT:  %[[DH1:.*]] = linalg.matmul
// CHECK-NEXT:  %[[E1:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:  %[[F1:.*]] = linalg.fill ins(%[[C0]] : f32) outs(%[[E1]] : tensor<2x4xf32>)
// CHECK-NEXT:  %[[RZ1:.*]] = linalg.matmul ins(%[[H0]], %[[W1]] : {{.*}}) outs(%[[F1]] : tensor<2x4xf32>)
// CHECK-NEXT:  linalg.map { arith.mulf } ins(%[[DH1]], %[[RZ1]] :
// CHECK-NOT:   %[[Z1]]{{[^_0-9]}}
// CHECK:       linalg.transpose ins(%[[H0]] :
// CHECK:       linalg.transpose ins(%[[W1]] :
// CHECK-NEXT:  %[[DH0:.*]] = linalg.matmul
// CHECK-NEXT:  %[[E0:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:  %[[F0:.*]] = linalg.fill ins(%[[C0]] : f32) outs(%[[E0]] : tensor<2x4xf32>)
// CHECK-NEXT:  %[[RZ0:.*]] = linalg.matmul ins(%[[X]], %[[W0]] : {{.*}}) outs(%[[F0]] : tensor<2x4xf32>)
// CHECK-NEXT:  linalg.map { arith.mulf } ins(%[[DH0]], %[[RZ0]] :
// CHECK-NOT:   %[[Z0]]{{[^_0-9]}}
// CHECK-NOT:   zero.segment
// CHECK:       return %[[LOSS]],

// number_checkpoints = 2: layers {0, 1} and {2}. Segment {0, 1} keeps only
// its input x; h0, internal now, is recomputed with z0 and z1, all before the
// first backward op that reads one of them (z1's), and read from there on.
// GROUP2:       %[[Z0:.*]] = linalg.matmul {zero.segment = 0 : i64}
// GROUP2-NEXT:  %[[H0:.*]] = linalg.map { arith.mulf } {{.*}} {zero.segment = 0 : i64}
// GROUP2:       %[[Z1:.*]] = linalg.matmul {zero.segment = 1 : i64}
// GROUP2-NEXT:  %[[H1:.*]] = linalg.map { arith.mulf } {{.*}} {zero.segment = 1 : i64}
// GROUP2:       %[[RZ2:.*]] = linalg.matmul ins(%[[H1]],
// GROUP2-NEXT:  linalg.map { arith.mulf } ins(%{{.*}}, %[[RZ2]] :
// GROUP2:       linalg.transpose ins(%[[H1]] :
// GROUP2:       linalg.transpose ins(%arg2 :
// GROUP2-NEXT:  %[[DH1:.*]] = linalg.matmul
// GROUP2-NEXT:  tensor.empty()
// GROUP2-NEXT:  linalg.fill
// GROUP2-NEXT:  %[[RZ0:.*]] = linalg.matmul ins(%arg3, %arg0 :
// GROUP2-NEXT:  %[[RH0:.*]] = linalg.map { arith.mulf } ins(%[[RZ0]], %[[RZ0]] :
// GROUP2-NEXT:  tensor.empty()
// GROUP2-NEXT:  linalg.fill
// GROUP2-NEXT:  %[[RZ1:.*]] = linalg.matmul ins(%[[RH0]], %arg1 :
// GROUP2-NEXT:  linalg.map { arith.mulf } ins(%[[DH1]], %[[RZ1]] :
// GROUP2-NOT:   %[[H0]]{{[^_0-9]}}
// GROUP2:       linalg.transpose ins(%[[RH0]] :
// GROUP2:       linalg.transpose ins(%arg1 :
// GROUP2-NEXT:  %[[DH0:.*]] = linalg.matmul
// GROUP2-NEXT:  linalg.map { arith.mulf } ins(%[[DH0]], %[[RZ0]] :
// GROUP2-NOT:   %[[Z0]]{{[^_0-9]}}
// GROUP2:       return

// number_checkpoints = 1: one segment of all three layers, which keeps x and
// recomputes everything but its output h2 before the first backward op.
// GROUP1:       %[[LOSS:.*]] = linalg.reduce
// GROUP1:       %[[DH2:.*]] = linalg.fill ins(%cst_0
// GROUP1-NEXT:  tensor.empty()
// GROUP1-NEXT:  linalg.fill
// GROUP1-NEXT:  %[[RZ0:.*]] = linalg.matmul ins(%arg3, %arg0 :
// GROUP1-NEXT:  %[[RH0:.*]] = linalg.map { arith.mulf } ins(%[[RZ0]], %[[RZ0]] :
// GROUP1-NEXT:  tensor.empty()
// GROUP1-NEXT:  linalg.fill
// GROUP1-NEXT:  %[[RZ1:.*]] = linalg.matmul ins(%[[RH0]], %arg1 :
// GROUP1-NEXT:  %[[RH1:.*]] = linalg.map { arith.mulf } ins(%[[RZ1]], %[[RZ1]] :
// GROUP1-NEXT:  tensor.empty()
// GROUP1-NEXT:  linalg.fill
// GROUP1-NEXT:  %[[RZ2:.*]] = linalg.matmul ins(%[[RH1]], %arg2 :
// GROUP1-NEXT:  linalg.map { arith.mulf } ins(%[[DH2]], %[[RZ2]] :
// GROUP1:       linalg.transpose ins(%[[RH1]] :
// GROUP1:       linalg.map { arith.mulf } ins(%{{.*}}, %[[RZ1]] :
// GROUP1:       linalg.transpose ins(%[[RH0]] :
// GROUP1:       linalg.map { arith.mulf } ins(%{{.*}}, %[[RZ0]] :
// GROUP1:       return %[[LOSS]],

// (The affine maps of the GEMMs that read a transposed operand come first.)
// PIPELINE:      IR Dump After ZeroCheckpointActivationsPass (zero-checkpoint-activations)
// PIPELINE:      module {
// PIPELINE-NEXT:   func.func @step(
// PIPELINE-NOT:    zero.stage
// PIPELINE-SAME:   {
// PIPELINE:        linalg.fill ins(%cst_0
// PIPELINE-NEXT:   tensor.empty()
// PIPELINE-NEXT:   linalg.fill
// PIPELINE-NEXT:   linalg.matmul ins(%mapped_1, %arg2 :

// cpu-checkpointing: the kept layer outputs h0 and h1 (the recomputation's
// inputs that ops compute; x and the weights are arguments) go to host
// memory right after their last forward use and come back before their first
// backward use, which reads the device copy from there on. Each swap-out's
// wait (which frees the device buffer) moves down to the next swap-out, and
// each swap-in's start up to the previous swap-in's wait, so that the copies
// overlap a layer of compute.
// RUN: zero-opt %s --zero-checkpoint-activations=cpu-checkpointing=true \
// RUN:   | FileCheck %s --check-prefix=CPU
// CPU:       %[[H0:.*]] = linalg.map { arith.mulf } {{.*}} {zero.segment = 0 : i64}
// CPU:       linalg.matmul {zero.segment = 1 : i64} ins(%[[H0]],
// CPU-NEXT:  %[[OUT0:.*]] = zero.swap_out_start %[[H0]] to host : tensor<2x4xf32>
// CPU-NEXT:  %[[H1:.*]] = linalg.map { arith.mulf } {{.*}} {zero.segment = 1 : i64}
// CPU:       linalg.matmul {zero.segment = 2 : i64} ins(%[[H1]],
// CPU-NEXT:  %[[HOST0:.*]] = zero.wait %[[OUT0]] : tensor<2x4xf32, #zero.memory_space<host>>
// CPU-NEXT:  %[[OUT1:.*]] = zero.swap_out_start %[[H1]] to host : tensor<2x4xf32>
// CPU-NEXT:  %[[HOST1:.*]] = zero.wait %[[OUT1]] : tensor<2x4xf32, #zero.memory_space<host>>
// CPU:       %[[IN1:.*]] = zero.swap_in_start %[[HOST1]] : tensor<2x4xf32, #zero.memory_space<host>>
// CPU-NEXT:  %[[D1:.*]] = zero.wait %[[IN1]] : tensor<2x4xf32>
// CPU-NEXT:  %[[IN0:.*]] = zero.swap_in_start %[[HOST0]] : tensor<2x4xf32, #zero.memory_space<host>>
// CPU-NEXT:  linalg.matmul ins(%[[D1]], %arg2 :
// CPU:       linalg.transpose ins(%[[D1]] :
// CPU:       %[[D0:.*]] = zero.wait %[[IN0]] : tensor<2x4xf32>
// CPU-NEXT:  linalg.matmul ins(%[[D0]], %arg1 :
// CPU:       linalg.transpose ins(%[[D0]] :
// CPU-NOT:   zero.swap
// CPU:       return
