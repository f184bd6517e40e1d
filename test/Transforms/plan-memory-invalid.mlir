// RUN: not zero-opt %s --split-input-file --zero-plan-memory -o /dev/null 2>&1 | FileCheck %s

// CHECK: error: 'zero-plan-memory' needs the 'zero.stage' and 'zero.world_size' attributes that 'zero-partition' writes; run it first
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}) {
  %c0 = arith.constant 0.0 : f32
  %loss = tensor.from_elements %c0 : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// CHECK: plan-memory-invalid.mlir:[[#@LINE+3]]:8: error: cannot plan the memory of a value of type 'tensor<?xf32>': the memory plan needs static shapes, integer or float elements, and no encoding other than #zero.memory_space
func.func @step(%w: tensor<4xf32> {zero.param = "w"}, %n: index) -> (tensor<f32> {zero.loss})
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %e = tensor.empty(%n) : tensor<?xf32>
  %c0 = arith.constant 0.0 : f32
  %loss = tensor.from_elements %c0 : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The plan places one micro-step loop's body after the loop op; a second
// loop is refused.
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"})
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %w) -> (tensor<4xf32>) {
    scf.yield %s : tensor<4xf32>
  }
  // CHECK: :[[# @LINE + 1]]:8: error: the memory plan handles one micro-step loop; this is a second one
  %b = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %a) -> (tensor<4xf32>) {
    scf.yield %s : tensor<4xf32>
  }
  %e = tensor.empty() : tensor<f32>
  return %e, %b : tensor<f32>, tensor<4xf32>
}

// -----

// A step that plans, unless the entry names no function.
// RUN: not zero-opt %s --split-input-file --zero-plan-memory=entry=nope -o /dev/null 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY-COUNT-4: error: no function '@nope' (named by the entry option)
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss})
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %c0 = arith.constant 0.0 : f32
  %loss = tensor.from_elements %c0 : tensor<f32>
  return %loss : tensor<f32>
}
