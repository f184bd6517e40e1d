// zero-checkpoint-activations on a step with ops of a dialect zero-opt does
// not know (--allow-unregistered-dialect): they have no dialect, count zero
// FLOPs (docs/Passes.md) and are recomputed like any other op of their
// segment; one without results (`print`) stays where it is. One layer
// h = act(x w), loss = sum(scale(h)), with `act`, `scale` and `print`
// unregistered; the backward pass reads z = x w and h.
//
// RUN: zero-opt %s --allow-unregistered-dialect --zero-checkpoint-activations \
// RUN:   | FileCheck %s
// In the pipeline, whose later passes (the offloaded optimizer's hoisting of
// readers) look at the same ops.
// RUN: zero-opt %s --allow-unregistered-dialect --zero-stage=3 \
// RUN:   --zero-world-size=2 --zero-checkpoint-activations \
// RUN:   --zero-set=zero_optimization.offload_optimizer.device=cpu \
// RUN:   | FileCheck %s --check-prefix=PIPELINE
// Through Debian's mlir-opt with the plugin, which has no crash recovery.
// RUN: %upstream_mlir_opt %s --allow-unregistered-dialect \
// RUN:   --load-dialect-plugin=%zero_plugin --load-pass-plugin=%zero_plugin \
// RUN:   --pass-pipeline='builtin.module(zero-checkpoint-activations)' \
// RUN:   | FileCheck %s

func.func @step(%w0: tensor<4x4xf32> {zero.param = "w0"},
                %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w0"}) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() {zero.segment = 0 : i64} : tensor<2x4xf32>
  %f0 = linalg.fill {zero.segment = 0 : i64} ins(%zero : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z0 = linalg.matmul {zero.segment = 0 : i64} ins(%x, %w0 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h0 = "fuzz.act"(%z0) {zero.segment = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %s0 = "fuzz.scale"(%h0) {zero.segment = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  "fuzz.print"(%h0) {zero.segment = 0 : i64} : (tensor<2x4xf32>) -> ()
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce {arith.addf} ins(%s0 : tensor<2x4xf32>) outs(%fl : tensor<f32>) dimensions = [0, 1]
  // Backward.
  %dz0 = "fuzz.act_grad"(%h0, %z0) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %gt = tensor.empty() : tensor<4x2xf32>
  %xt = linalg.transpose ins(%x : tensor<2x4xf32>) outs(%gt : tensor<4x2xf32>) permutation = [1, 0]
  %gw = tensor.empty() : tensor<4x4xf32>
  %fw = linalg.fill ins(%zero : f32) outs(%gw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw0 = linalg.matmul ins(%xt, %dz0 : tensor<4x2xf32>, tensor<2x4xf32>) outs(%fw : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %loss, %dw0 : tensor<f32>, tensor<4x4xf32>
}

// The forward pass is unchanged; s0, read by the loss, stays; z0 and h0,
// read by the backward pass, are recomputed right before it, the
// unregistered op with them.
// CHECK-LABEL: func.func @step(
// CHECK:       %[[Z0:.*]] = linalg.matmul {zero.segment = 0 : i64}
// CHECK-NEXT:  %[[H0:.*]] = "fuzz.act"(%[[Z0]]) {zero.segment = 0 : i64}
// CHECK-NEXT:  %[[S0:.*]] = "fuzz.scale"(%[[H0]]) {zero.segment = 0 : i64}
// CHECK-NEXT:  "fuzz.print"(%[[H0]]) {zero.segment = 0 : i64}
// CHECK:       linalg.reduce {{.*}}ins(%[[S0]] :
// CHECK-NEXT:  %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:  %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x4xf32>)
// CHECK-NEXT:  %[[RZ0:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[F]] : tensor<2x4xf32>)
// CHECK-NEXT:  %[[RH0:.*]] = "fuzz.act"(%[[RZ0]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  "fuzz.act_grad"(%[[RH0]], %[[RZ0]])

// PIPELINE-LABEL: func.func @step(
// PIPELINE:       "fuzz.act"
// PIPELINE:       "fuzz.act_grad"
// PIPELINE:       zero.adam
