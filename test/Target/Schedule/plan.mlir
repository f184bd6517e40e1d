// The emitter plans the step again and checks the plan against the one
// zero-plan-memory recorded on the IR (zero.memory_plan, zero.offset,
// zero.offsets, zero.staging), so the schedule's offsets are the IR's.
//
// The plan records the options it was made with (zero.memory_plan_options),
// and the emitter plans once with them: contiguous_gradients=false too.
// RUN: zero-opt %s --zero-stage=2 --zero-keep-transposes --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.contiguous_gradients=false \
// RUN:   | FileCheck %s --check-prefix=OPTIONS-OFF
// OPTIONS-OFF: zero.memory_plan_options = {alignment = 64 : i64, contiguous_gradients = false}
// RUN: zero-opt %s --zero-stage=2 --zero-keep-transposes --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.contiguous_gradients=false \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=OFF
// OFF: "format": "zero-schedule",
// Changing the recorded option makes the plans differ; removing it leaves
// the plan unknown.
// RUN: zero-opt %s --zero-stage=2 --zero-keep-transposes --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.contiguous_gradients=false \
// RUN:   | sed -E 's/contiguous_gradients = false/contiguous_gradients = true/' \
// RUN:   | not zero-translate --zero-to-schedule 2>&1 | FileCheck %s --check-prefix=CHANGED
// CHANGED: error: the memory plan recorded on the IR does not match the plan of the function:
// RUN: zero-opt %s --zero-stage=2 --zero-keep-transposes --zero-world-size=2 \
// RUN:   | sed -E 's/, zero.memory_plan_options = [{][^}]*[}]//' \
// RUN:   | not zero-translate --zero-to-schedule 2>&1 | FileCheck %s --check-prefix=NO-OPTIONS
// NO-OPTIONS: error: the step has no 'zero.memory_plan_options': run zero-plan-memory (or the pipeline) first
// RUN: zero-opt %s --zero-stage=2 --zero-keep-transposes --zero-world-size=2 \
// RUN:   | sed -E 's/alignment = 64 : i64/alignment = 48 : i64/' \
// RUN:   | not zero-translate --zero-to-schedule 2>&1 | FileCheck %s --check-prefix=BAD-OPTIONS
// BAD-OPTIONS: error: 'zero.memory_plan_options' must be {alignment = <a power of two>, contiguous_gradients = <bool>[, largest_first = [<memory space>, ...]]}, got {alignment = 48 : i64, contiguous_gradients = true}
//
// A space placed largest first (under a budget the placement in program
// order exceeds) is recorded so, and the emitter plans it the same way: the
// schedule is written. Recorded in program order instead, the plans differ;
// a space that does not exist is refused.
// (The three-layer step of checkpoint-activations-auto.mlir: 1824 bytes in
// program order, 1796 largest first.)
// RUN: zero-opt %S/../../Transforms/checkpoint-activations-auto.mlir \
// RUN:   --zero-pipeline="world-size=2 device-memory=1800 fold-transposes=false" -o %t.lf.mlir
// RUN: FileCheck %s --check-prefix=LF-RECORDED --input-file=%t.lf.mlir
// LF-RECORDED: zero.memory_plan = {device = 1796 : i64
// LF-RECORDED-SAME: zero.memory_plan_options = {alignment = 64 : i64, contiguous_gradients = true, largest_first = ["device"]}
// RUN: zero-translate --zero-to-schedule %t.lf.mlir | FileCheck %s --check-prefix=LF-SCHEDULE
// LF-SCHEDULE: "arenas": {"device": 1796
// RUN: sed -E 's/, largest_first = [[]"device"[]]//' %t.lf.mlir \
// RUN:   | not zero-translate --zero-to-schedule 2>&1 | FileCheck %s --check-prefix=CHANGED
// RUN: sed -E 's/largest_first = [[]"device"[]]/largest_first = ["disk"]/' %t.lf.mlir \
// RUN:   | not zero-translate --zero-to-schedule 2>&1 | FileCheck %s --check-prefix=LF-BAD
// LF-BAD: error: 'zero.memory_plan_options' must be {alignment = <a power of two>, contiguous_gradients = <bool>[, largest_first = [<memory space>, ...]]}, got {alignment = 64 : i64, contiguous_gradients = true, largest_first = ["disk"]}
//
// A step changed after planning is refused, at the first difference.
// RUN: zero-opt %s --zero-stage=2 --zero-keep-transposes --zero-world-size=2 \
// RUN:   | sed -E 's/device = [0-9]+ : i64/device = 1 : i64/' \
// RUN:   | not zero-translate --zero-to-schedule 2>&1 | FileCheck %s --check-prefix=ARENA
// ARENA: error: the memory plan recorded on the IR does not match the plan of the function: the device arena is {{[0-9]+}} bytes, recorded 1; was the step changed after zero-plan-memory? Run the pipeline (or --zero-plan-memory) again
//
// RUN: zero-opt %s --zero-stage=2 --zero-keep-transposes --zero-world-size=2 \
// RUN:   | sed -E '0,/zero.offsets = array<i64: [0-9]+>/s//zero.offsets = array<i64: 8>/' \
// RUN:   | not zero-translate --zero-to-schedule 2>&1 | FileCheck %s --check-prefix=OFFSET
// OFFSET: error: the memory plan recorded on the IR does not match the plan of the function: result #0 of 'tensor.empty' is planned at offset {{[0-9]+}}, recorded 8;
//
// RUN: zero-opt %s --zero-stage=2 --zero-keep-transposes --zero-world-size=2 \
// RUN:   | sed -E 's/, zero.staging = array<i64: [0-9]+, [0-9]+>//' \
// RUN:   | not zero-translate --zero-to-schedule 2>&1 | FileCheck %s --check-prefix=STAGING
// STAGING: error: the memory plan recorded on the IR does not match the plan of the function: the staging buffer of 'zero.reduce_scatter_start' is 40 bytes at offset {{[0-9]+}}, recorded none;
//
// The training step is found as the passes find it; --zero-entry names it.
// RUN: zero-opt %s --zero-stage=0 --zero-keep-transposes | zero-translate --zero-to-schedule --zero-entry=step \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: zero-opt %s --zero-stage=0 --zero-keep-transposes | not zero-translate --zero-to-schedule --zero-entry=nope 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENTRY
// ENTRY: error: no function '@nope' (named by the entry option)

func.func @step(%w: tensor<2x3xf32> {zero.param = "fc.weight"},
                %b: tensor<3xf32> {zero.param = "fc.bias"},
                %x: tensor<2x2xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<2x3xf32> {zero.grad = "fc.weight"},
        tensor<3xf32> {zero.grad = "fc.bias"}) {
  %e = tensor.empty() : tensor<2x3xf32>
  %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %y = linalg.matmul ins(%x, %w : tensor<2x2xf32>, tensor<2x3xf32>) outs(%bb : tensor<2x3xf32>) -> tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<2x3xf32>) outs(%l0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  // dy = 1: gw = x^T dy, gb = colsum(dy).
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<2x3xf32>
  %dy = linalg.fill ins(%one : f32) outs(%e1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x2xf32>
  %xt = linalg.transpose ins(%x : tensor<2x2xf32>) outs(%e2 : tensor<2x2xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<2x3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %gw = linalg.matmul ins(%xt, %dy : tensor<2x2xf32>, tensor<2x3xf32>) outs(%z3 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e4 = tensor.empty() : tensor<3xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<3xf32>) -> tensor<3xf32>
  %gb = linalg.reduce ins(%dy : tensor<2x3xf32>) outs(%z4 : tensor<3xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %loss, %gw, %gb : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>
}
