// fp16's loss scale folded into the update (docs/Dialect.md, "Optimizer
// ops"): zero.any_nonfinite over the gradients, then zero.adam with its
// unscale, clip and skip operands, in a hand-written rank step planned by
// zero-plan-memory. The emitter writes the three scalars last, after a
// scheduled beta1, with a true field for each (docs/ScheduleFormat.md), and
// zero-run runs the step: the second gradient overflows, so every step is
// skipped and the weights stay as they were initialized; without the
// overflow they move.
//
// RUN: zero-opt %s --zero-plan-memory | zero-translate --zero-to-schedule \
// RUN:   | FileCheck %s --match-full-lines
// RUN: rm -rf %t && mkdir -p %t
// RUN: zero-opt %s --zero-plan-memory | zero-translate --zero-to-schedule \
// RUN:   -o %t/skip.json
// RUN: zero-run %t/skip.json --steps 1 --export %t/one.safetensors
// RUN: zero-run %t/skip.json --steps 3 --export %t/three.safetensors \
// RUN:   | FileCheck %s --check-prefix=STEPS
// The files end with w's 16 bytes (their headers say how many steps ran).
// RUN: tail -c 16 %t/one.safetensors > %t/one.w
// RUN: tail -c 16 %t/three.safetensors > %t/three.w
// RUN: cmp %t/one.w %t/three.w
// RUN: sed 's/0x7C00/2.0/' %s | zero-opt --zero-plan-memory \
// RUN:   | zero-translate --zero-to-schedule -o %t/step.json
// RUN: zero-run %t/step.json --steps 1 --export %t/step1.safetensors
// RUN: zero-run %t/step.json --steps 3 --export %t/step3.safetensors
// RUN: tail -c 16 %t/step1.safetensors > %t/step1.w
// RUN: tail -c 16 %t/step3.safetensors > %t/step3.w
// RUN: not cmp -s %t/step1.w %t/step3.w
// STEPS-COUNT-3: step={{[123]}} loss=

#layout = #zero.layout<shape = [4], world_size = 1>
func.func @step(%w: tensor<4xf32> {zero.param = "w", zero.layout = #layout},
                %m: tensor<4xf32> {zero.param = "w", zero.state = "exp_avg"},
                %v: tensor<4xf32> {zero.param = "w", zero.state = "exp_avg_sq"},
                %step: tensor<i64> {zero.step},
                %x: tensor<4xf32> {zero.data = "x"})
    -> (tensor<4xf32> {zero.param = "w", zero.layout = #layout},
        tensor<4xf32> {zero.param = "w", zero.state = "exp_avg"},
        tensor<4xf32> {zero.param = "w", zero.state = "exp_avg_sq"},
        tensor<i64> {zero.step})
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %old = tensor.extract %step[] : tensor<i64>
  %one = arith.constant 1 : i64
  %t = arith.addi %old, %one : i64
  %lr = arith.constant 1.0e-3 : f32
  %b1 = arith.constant 0.75 : f32
  %scale = arith.constant 1024.0 : f32
  %coef = arith.constant 0.5 : f32
  // A scaled f16 gradient, and one that overflowed (in a second tensor the
  // check reads, so that the flag is 1 and the step is skipped).
  %g = arith.constant dense<[512.0, -1024.0, 2048.0, 3.0]> : tensor<4xf16>
  %inf = arith.constant dense<[1.0, 0x7C00]> : tensor<2xf16>
  %flag = zero.any_nonfinite %g, %inf : tensor<4xf16>, tensor<2xf16>
  %zero = arith.constant 0.0 : f32
  %overflow = arith.cmpf ogt, %flag, %zero : f32
  %p1, %m1, %v1 = zero.adam %w, %g, %m, %v, %t, %lr beta1(%b1)
      unscale(%scale) clip(%coef) skip(%overflow)
      : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>
  %step1 = tensor.from_elements %t : tensor<i64>
  return %p1, %m1, %v1, %step1
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>
}

// CHECK: {"op": "zero.any_nonfinite", "point": [[#]], "loc": "<stdin>:{{[0-9]+}}:{{[0-9]+}}", "operands": [[[G:[0-9]+]], {{[0-9]+}}], "results": [[[FLAG:[0-9]+]]]},
// CHECK: {"op": "arith.cmpf", "point": [[#]], "loc": "<stdin>:{{[0-9]+}}:{{[0-9]+}}", "operands": [[[FLAG]], {{[0-9]+}}], "results": [[[SKIP:[0-9]+]]], "predicate": "ogt"},
// CHECK-NEXT: {"op": "zero.adam", "point": [[#]], "loc": "<stdin>:{{[0-9]+}}:{{[0-9]+}}", "operands": [0, [[G]], 1, 2, {{[0-9]+}}, [[LR:[0-9]+]], [[B1:[0-9]+]], [[S:[0-9]+]], [[C:[0-9]+]], [[SKIP]]], "results": [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.0, "mode": "adamw", "bias_correction": true, "amsgrad": false, "unscale": true, "clip": true, "skip": true},
