// The arguments and results of the schedule: what the runtime puts into each
// argument before the first step, and which argument each result updates.
//
// Stage 1, fp16 with dynamic loss scaling: full 16-bit parameters, fp32
// master weights that start as the parameter, zero moments, the step at 0 and
// the loss-scaling states at their `zero.initial_value`.
// RUN: zero-opt %s --zero-stage=1 --zero-world-size=2 --zero-set=fp16.enabled=true \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --match-full-lines
//
// Stage 3 with param_persistence_threshold=4: the 4-element parameters stay
// whole (persistent), wte is the rank's shard.
// RUN: zero-opt %s --zero-stage=3 --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.stage3_param_persistence_threshold=4 \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=STAGE3 --match-full-lines
//
// Initialization by name (GPT-2): ln_*.weight ones, *.bias zeros, others
// normal(0.02); `zero.init` overrides it. `zero.data_bound` is the `bound`
// of integer data.

func.func @step(%g: tensor<4xf32> {zero.param = "h.0.ln_1.weight"},
                %b: tensor<4xf32> {zero.param = "h.0.ln_1.bias"},
                %e: tensor<3x4xf32> {zero.param = "wte.weight", zero.init = "normal(0.5)"},
                %s: tensor<4xf32> {zero.param = "scale", zero.init = "ones"},
                %x: tensor<2x4xf32> {zero.data = "x"},
                %y: tensor<2xi32> {zero.data = "labels", zero.data_bound = 3 : i64})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "h.0.ln_1.weight"},
        tensor<4xf32> {zero.grad = "h.0.ln_1.bias"}, tensor<3x4xf32> {zero.grad = "wte.weight"},
        tensor<4xf32> {zero.grad = "scale"}) {
  // loss = sum(x) + sum(g) + sum(b) + sum(e) + sum(s): every gradient is 1.
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l1 = linalg.reduce { arith.addf } ins(%x : tensor<2x4xf32>) outs(%l0 : tensor<f32>) dimensions = [0, 1]
  %l2 = linalg.reduce { arith.addf } ins(%g : tensor<4xf32>) outs(%l1 : tensor<f32>) dimensions = [0]
  %l3 = linalg.reduce { arith.addf } ins(%b : tensor<4xf32>) outs(%l2 : tensor<f32>) dimensions = [0]
  %l4 = linalg.reduce { arith.addf } ins(%e : tensor<3x4xf32>) outs(%l3 : tensor<f32>) dimensions = [0, 1]
  %loss = linalg.reduce { arith.addf } ins(%s : tensor<4xf32>) outs(%l4 : tensor<f32>) dimensions = [0]
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %d1 = linalg.fill ins(%one : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %d2 = linalg.fill ins(%one : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %e3 = tensor.empty() : tensor<3x4xf32>
  %d3 = linalg.fill ins(%one : f32) outs(%e3 : tensor<3x4xf32>) -> tensor<3x4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %d4 = linalg.fill ins(%one : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  return %loss, %d1, %d2, %d3, %d4 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<4xf32>
}

// CHECK-LABEL: "arguments": [
// CHECK-NEXT: {"value": 0, "kind": "param", "name": "h.0.ln_1.weight", "layout": {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, "sharded": false, "persistent": false, "init": {"kind": "ones"}},
// CHECK-NEXT: {"value": 1, "kind": "param", "name": "h.0.ln_1.bias", "layout": {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, "sharded": false, "persistent": false, "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 2, "kind": "param", "name": "wte.weight", "layout": {"shape": [3, 4], "world_size": 2, "shard_numel": 6, "padded_numel": 12}, "sharded": false, "persistent": false, "init": {"kind": "normal", "std": 0.5}},
// CHECK-NEXT: {"value": 3, "kind": "param", "name": "scale", "layout": {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, "sharded": false, "persistent": false, "init": {"kind": "ones"}},
// CHECK-NEXT: {"value": 4, "kind": "state", "state": "master", "param": "h.0.ln_1.weight", "init": {"kind": "param"}},
// CHECK-NEXT: {"value": 5, "kind": "state", "state": "exp_avg", "param": "h.0.ln_1.weight", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 6, "kind": "state", "state": "exp_avg_sq", "param": "h.0.ln_1.weight", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 7, "kind": "state", "state": "master", "param": "h.0.ln_1.bias", "init": {"kind": "param"}},
// CHECK-NEXT: {"value": 8, "kind": "state", "state": "exp_avg", "param": "h.0.ln_1.bias", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 9, "kind": "state", "state": "exp_avg_sq", "param": "h.0.ln_1.bias", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 10, "kind": "state", "state": "master", "param": "wte.weight", "init": {"kind": "param"}},
// CHECK-NEXT: {"value": 11, "kind": "state", "state": "exp_avg", "param": "wte.weight", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 12, "kind": "state", "state": "exp_avg_sq", "param": "wte.weight", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 13, "kind": "state", "state": "master", "param": "scale", "init": {"kind": "param"}},
// CHECK-NEXT: {"value": 14, "kind": "state", "state": "exp_avg", "param": "scale", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 15, "kind": "state", "state": "exp_avg_sq", "param": "scale", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 16, "kind": "step", "init": {"kind": "value", "value": 0}},
// CHECK-NEXT: {"value": 17, "kind": "state", "state": "loss_scale", "init": {"kind": "value", "value": 65536.0}},
// CHECK-NEXT: {"value": 18, "kind": "state", "state": "loss_scale_hysteresis", "init": {"kind": "value", "value": 2}},
// CHECK-NEXT: {"value": 19, "kind": "state", "state": "good_steps", "init": {"kind": "value", "value": 0}},
// CHECK-NEXT: {"value": 20, "kind": "data", "name": "x"},
// CHECK-NEXT: {"value": 21, "kind": "data", "name": "labels", "bound": 3}
// CHECK-NEXT: ],
// CHECK: "results": [
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "loss"},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 0},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 1},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 2},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 3},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 4},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 5},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 6},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 7},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 8},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 9},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 10},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 11},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 12},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 13},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 14},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 15},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 16},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 17},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 18},
// CHECK-NEXT: {"value": {{[0-9]+}}, "kind": "update", "argument": 19}
// CHECK-NEXT: ],

// STAGE3-LABEL: "arguments": [
// STAGE3-NEXT: {"value": 0, "kind": "param", "name": "h.0.ln_1.weight", "layout": {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, "sharded": false, "persistent": true, "init": {"kind": "ones"}},
// STAGE3-NEXT: {"value": 1, "kind": "param", "name": "h.0.ln_1.bias", "layout": {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, "sharded": false, "persistent": true, "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 2, "kind": "param", "name": "wte.weight", "layout": {"shape": [3, 4], "world_size": 2, "shard_numel": 6, "padded_numel": 12}, "sharded": true, "persistent": false, "init": {"kind": "normal", "std": 0.5}},
// STAGE3-NEXT: {"value": 3, "kind": "param", "name": "scale", "layout": {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, "sharded": false, "persistent": true, "init": {"kind": "ones"}},
// STAGE3-NEXT: {"value": 4, "kind": "state", "state": "exp_avg", "param": "h.0.ln_1.weight", "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 5, "kind": "state", "state": "exp_avg_sq", "param": "h.0.ln_1.weight", "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 6, "kind": "state", "state": "exp_avg", "param": "h.0.ln_1.bias", "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 7, "kind": "state", "state": "exp_avg_sq", "param": "h.0.ln_1.bias", "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 8, "kind": "state", "state": "exp_avg", "param": "wte.weight", "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 9, "kind": "state", "state": "exp_avg_sq", "param": "wte.weight", "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 10, "kind": "state", "state": "exp_avg", "param": "scale", "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 11, "kind": "state", "state": "exp_avg_sq", "param": "scale", "init": {"kind": "zeros"}},
// STAGE3-NEXT: {"value": 12, "kind": "step", "init": {"kind": "value", "value": 0}},
// STAGE3-NEXT: {"value": 13, "kind": "data", "name": "x"},
// STAGE3-NEXT: {"value": 14, "kind": "data", "name": "labels", "bound": 3}
// STAGE3-NEXT: ],
