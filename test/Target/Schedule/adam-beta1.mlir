// A scheduled beta1 (zero.adam's beta1 operand, computed in the step as a
// schedule such as DeepSpeed's OneCycle would) with amsgrad, in a
// hand-written rank step planned by zero-plan-memory: the emitter writes the
// f32 scalar as the last operand, after max_exp_avg_sq, step and lr
// (docs/ScheduleFormat.md), and the op's attribute beta1 stays a field.
// zero-run reads the operand's register every step and stops at the first
// value outside [0, 1), naming the instruction.
//
// RUN: zero-opt %s --zero-plan-memory | zero-translate --zero-to-schedule \
// RUN:   | FileCheck %s --match-full-lines
// RUN: zero-opt %s --zero-plan-memory -mlir-print-debuginfo \
// RUN:   | zero-translate --zero-to-schedule -o %t.json
// RUN: zero-run %t.json --steps 1 | FileCheck %s --check-prefix=STEP1
// RUN: not zero-run %t.json --steps 2 2>&1 | FileCheck %s --check-prefix=RANGE
// STEP1: step=1 loss=
// RANGE: step=1 loss=
// RANGE-NEXT: zero-run: rank 0: step 2: {{.*}}.json: instructions.compute[9].operands[7]: the beta1 operand is 1, but Adam's beta1 must be in [0, 1) at {{.*}}adam-beta1.mlir:{{[0-9]+}}:{{[0-9]+}}

#layout = #zero.layout<shape = [4], world_size = 1>
func.func @step(%w: tensor<4xf32> {zero.param = "w", zero.layout = #layout},
                %m: tensor<4xf32> {zero.param = "w", zero.state = "exp_avg"},
                %v: tensor<4xf32> {zero.param = "w", zero.state = "exp_avg_sq"},
                %vmax: tensor<4xf32> {zero.param = "w", zero.state = "max_exp_avg_sq"},
                %step: tensor<i64> {zero.step},
                %g: tensor<4xf32> {zero.data = "g"})
    -> (tensor<4xf32> {zero.param = "w", zero.layout = #layout},
        tensor<4xf32> {zero.param = "w", zero.state = "exp_avg"},
        tensor<4xf32> {zero.param = "w", zero.state = "exp_avg_sq"},
        tensor<4xf32> {zero.param = "w", zero.state = "max_exp_avg_sq"},
        tensor<i64> {zero.step})
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %old = tensor.extract %step[] : tensor<i64>
  %one = arith.constant 1 : i64
  %t = arith.addi %old, %one : i64
  %lr = arith.constant 1.0e-3 : f32
  // beta1 = 0.5 + 0.25 t: 0.75 at the first step, 1 at the second.
  %tf = arith.sitofp %t : i64 to f32
  %c = arith.constant 0.25 : f32
  %d = arith.mulf %c, %tf : f32
  %base = arith.constant 0.5 : f32
  %b1 = arith.addf %base, %d : f32
  %p1, %m1, %v1, %vmax1 = zero.adam %w, %g, %m, %v, %t, %lr amsgrad(%vmax) beta1(%b1)
      {beta1 = 0.8 : f64}
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %step1 = tensor.from_elements %t : tensor<i64>
  return %p1, %m1, %v1, %vmax1, %step1
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>
}

// CHECK: {"op": "arith.addf", "point": [[#P1:]], "loc": "<stdin>:{{[0-9]+}}:{{[0-9]+}}", "operands": [{{[0-9]+}}, {{[0-9]+}}], "results": [[[B1:[0-9]+]]]},
// CHECK-NEXT: {"op": "zero.adam", "point": [[#P2:]], "loc": "<stdin>:{{[0-9]+}}:{{[0-9]+}}", "operands": [0, 5, 1, 2, 3, [[STEP:[0-9]+]], [[LR:[0-9]+]], [[B1]]], "results": [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], "beta1": 0.8, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.0, "mode": "adamw", "bias_correction": true, "amsgrad": true},
