// The optimizer ops and their hyperparameters (docs/Dialect.md): Adam with
// DeepSpeed's parameter names mapped to the attributes, and SGD with momentum
// (its momentum buffers are state arguments that start at zero).
//
// RUN: zero-opt %s --zero-stage=2 --zero-world-size=2 \
// RUN:   '--zero-set=optimizer={"type":"Adam","params":{"lr":0.01,"betas":[0.8,0.9],"eps":1e-6,"weight_decay":0.1,"adam_w_mode":false}}' \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=ADAM --match-full-lines
// RUN: zero-opt %s --zero-stage=2 --zero-world-size=2 \
// RUN:   '--zero-set=optimizer={"type":"AdamW","params":{"lr":0.01,"amsgrad":true}}' \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=AMSGRAD --match-full-lines
// RUN: zero-opt %s --zero-stage=2 --zero-world-size=2 \
// RUN:   '--zero-set=optimizer={"type":"SGD","params":{"lr":0.5,"momentum":0.9,"nesterov":true,"weight_decay":0.01}}' \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=NESTEROV --match-full-lines
// RUN: zero-opt %s --zero-stage=0 --zero-world-size=2 \
// RUN:   '--zero-set=optimizer={"type":"SGD","params":{"lr":0.5,"momentum":0.9,"dampening":0.5}}' \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=DAMPENING --match-full-lines

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

// The learning rate is an f32 constant, written exactly (0.01 in f32); the
// operands are param, grad, exp_avg, exp_avg_sq, step, lr.
// ADAM: {"op": "arith.constant", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [], "results": [[[LR:[0-9]+]]], "value": 0.009999999776482582},
// ADAM: {"op": "zero.adam", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [{{[0-9]+}}, {{[0-9]+}}, 2, 3, [[STEP:[0-9]+]], [[LR]]], "results": [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], "beta1": 0.8, "beta2": 0.9, "eps": 1e-06, "weight_decay": 0.1, "mode": "l2", "bias_correction": true, "amsgrad": false},
// ADAM: {"op": "zero.adam", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [{{[0-9]+}}, {{[0-9]+}}, 4, 5, [[STEP]], [[LR]]], "results": [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], "beta1": 0.8, "beta2": 0.9, "eps": 1e-06, "weight_decay": 0.1, "mode": "l2", "bias_correction": true, "amsgrad": false},

// AMSGrad: a third state per parameter, optimizer_state bytes in the plan,
// zeros at the start, an operand and a result of zero.adam after exp_avg_sq,
// and updated like the other states.
// AMSGRAD: {"id": 4, "name": "fc.weight.max_exp_avg_sq", "category": "optimizer_state", "role": "", "space": "device", "offset": {{[0-9]+}}, "bytes": 12, "live": [0, {{[0-9]+}}]},
// AMSGRAD: {"id": 7, "name": "fc.bias.max_exp_avg_sq", "category": "optimizer_state", "role": "", "space": "device", "offset": {{[0-9]+}}, "bytes": 8, "live": [0, {{[0-9]+}}]},
// AMSGRAD: {"value": 4, "kind": "state", "state": "max_exp_avg_sq", "param": "fc.weight", "init": {"kind": "zeros"}},
// AMSGRAD: {"value": 7, "kind": "state", "state": "max_exp_avg_sq", "param": "fc.bias", "init": {"kind": "zeros"}},
// AMSGRAD: {"value": [[W_VMAX:[0-9]+]], "kind": "update", "argument": 4},
// AMSGRAD: {"value": [[B_VMAX:[0-9]+]], "kind": "update", "argument": 7},
// AMSGRAD: {"op": "zero.adam", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [{{[0-9]+}}, {{[0-9]+}}, 2, 3, 4, [[STEP:[0-9]+]], [[LR:[0-9]+]]], "results": [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, [[W_VMAX]]], "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.0, "mode": "adamw", "bias_correction": true, "amsgrad": true},
// AMSGRAD: {"op": "zero.adam", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [{{[0-9]+}}, {{[0-9]+}}, 5, 6, 7, [[STEP]], [[LR]]], "results": [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, [[B_VMAX]]], "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.0, "mode": "adamw", "bias_correction": true, "amsgrad": true},

// NESTEROV: {"value": 2, "kind": "state", "state": "momentum_buffer", "param": "fc.weight", "init": {"kind": "zeros"}},
// NESTEROV: {"value": 3, "kind": "state", "state": "momentum_buffer", "param": "fc.bias", "init": {"kind": "zeros"}},
// NESTEROV: {"op": "zero.sgd", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [{{[0-9]+}}, {{[0-9]+}}, 2, {{[0-9]+}}], "results": [{{[0-9]+}}, {{[0-9]+}}], "momentum": 0.9, "dampening": 0.0, "weight_decay": 0.01, "nesterov": true},
// NESTEROV: {"op": "zero.sgd", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [{{[0-9]+}}, {{[0-9]+}}, 3, {{[0-9]+}}], "results": [{{[0-9]+}}, {{[0-9]+}}], "momentum": 0.9, "dampening": 0.0, "weight_decay": 0.01, "nesterov": true},

// Stage 0 steps the whole parameters (arguments 0 and 1).
// DAMPENING: {"op": "zero.sgd", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [0, {{[0-9]+}}, 2, {{[0-9]+}}], "results": [{{[0-9]+}}, {{[0-9]+}}], "momentum": 0.9, "dampening": 0.5, "weight_decay": 0.0, "nesterov": false},
// DAMPENING: {"op": "zero.sgd", "point": {{[0-9]+}}, "loc": "{{.*}}", "operands": [1, {{[0-9]+}}, 3, {{[0-9]+}}], "results": [{{[0-9]+}}, {{[0-9]+}}], "momentum": 0.9, "dampening": 0.5, "weight_decay": 0.0, "nesterov": false},
