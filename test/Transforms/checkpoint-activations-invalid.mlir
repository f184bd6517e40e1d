// RUN: zero-opt %s -split-input-file -verify-diagnostics \
// RUN:   --zero-checkpoint-activations
// RUN: not zero-opt %s --split-input-file \
// RUN:   --zero-checkpoint-activations=number-checkpoints=-1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: zero-checkpoint-activations: number-checkpoints must be at least 0, got -1

// Checkpointing asked for a step without segments: an error, not a step
// that silently keeps every activation.
// expected-error @below {{zero-checkpoint-activations: no op of the step carries 'zero.segment', so there is nothing to checkpoint: mark the forward ops of each layer with 'zero.segment = <layer> : i64' (zero-model does)}}
func.func @step(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"}) {
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %w : tensor<f32>, tensor<4x4xf32>
}

// -----

func.func @step(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"}) {
  // expected-error @below {{zero-checkpoint-activations: 'zero.segment' must be an integer (the segment's index), got "h.0"}}
  %e = tensor.empty() {zero.segment = "h.0"} : tensor<2x4xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %w : tensor<f32>, tensor<4x4xf32>
}

// -----

func.func @step(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w"}) {
  %e = tensor.empty() {zero.segment = 0 : i64} : tensor<2x4xf32>
  %y = linalg.map ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {zero.segment = 0 : i64}
    (%in: f32, %init: f32) {
      // expected-error @below {{zero-checkpoint-activations: 'zero.segment' marks an op nested in a region; only ops of the step's body form segments}}
      %r = arith.negf %in {zero.segment = 0 : i64} : f32
      linalg.yield %r : f32
    }
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %w : tensor<f32>, tensor<4x4xf32>
}

// -----

// Recomputing z0 and y before the first backward use of z0 would read %d
// before it is defined.
func.func @step(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32> {zero.grad = "w"}) {
  %e = tensor.empty() {zero.segment = 0 : i64} : tensor<2x4xf32>
  %z0 = linalg.matmul {zero.segment = 0 : i64} ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = tensor.empty() : tensor<2x4xf32>
  // expected-note @below {{the first backward use}}
  %b1 = linalg.map { arith.negf } ins(%z0 : tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %d = linalg.map { arith.negf } ins(%b1 : tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  // expected-error @below {{zero-checkpoint-activations: cannot recompute this op before the first backward use of its segment's values (segment 0): it reads a value defined after that use}}
  %y = linalg.map { arith.addf } ins(%z0, %d : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {zero.segment = 0 : i64}
  %b2 = linalg.map { arith.negf } ins(%y : tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %b1, %b2, %w : tensor<f32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>
}

// -----

func.func @step(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<2x4xf32>, tensor<4x4xf32> {zero.grad = "w"}) {
  // expected-error @below {{zero-checkpoint-activations: cannot recompute an op with memory effects (segment 3)}}
  %e = bufferization.alloc_tensor() {zero.segment = 3 : i64} : tensor<2x4xf32>
  %g = tensor.empty() : tensor<2x4xf32>
  %b = linalg.map { arith.negf } ins(%e : tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %b, %w : tensor<f32>, tensor<2x4xf32>, tensor<4x4xf32>
}

// -----

// The forward pass is what the loss depends on: without a loss there is none.
// expected-error @below {{zero-checkpoint-activations: no result is marked 'zero.loss', so the forward pass is unknown}}
func.func @step(%w: tensor<4x4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<4x4xf32> {zero.grad = "w"}) {
  %e = tensor.empty() {zero.segment = 0 : i64} : tensor<2x4xf32>
  return %w : tensor<4x4xf32>
}
