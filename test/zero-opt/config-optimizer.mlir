// The optimizer section, sub_group_size and gradient_clipping from
// --zero-config.
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
//
// No optimizer section: Adam with DeepSpeed's defaults (AdamW mode).
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage1.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=DEFAULT
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/adamw.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=ADAMW
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/adam-l2.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=ADAM-L2
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/adam-no-bias-correction.json \
// RUN:   --zero-world-size=2 | FileCheck %s --check-prefix=NO-BIAS-CORRECTION
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/amsgrad-bf16.json --zero-world-size=2 \
// RUN:   --zero-report=%t.amsgrad.json | FileCheck %s --check-prefix=AMSGRAD
// RUN: FileCheck %s --check-prefix=AMSGRAD-REPORT --input-file=%t.amsgrad.json
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/sgd.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=SGD
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/sgd-dampening.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=SGD-DAMPENING
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/sub-group.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=SUB-GROUP
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/clipping.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=CLIP

// DEFAULT-LABEL: func.func @train_step(
// DEFAULT-SAME:    zero.state = "exp_avg_sq"
// DEFAULT:         zero.reduce_scatter_start
// DEFAULT:         %[[LR:.*]] = arith.constant 1.000000e-03 : f32
// DEFAULT:         zero.adam %{{.*}}, %[[LR]] {zero.offsets
// DEFAULT-NOT:     math.sqrt

// lr 0.01, betas [0.8, 0.95], eps 1e-6, weight_decay 0.1; AdamW mode is the
// default (not printed).
// ADAMW:      zero.reduce_scatter_start
// ADAMW:      %[[LR:.*]] = arith.constant 0.00999999977 : f32
// ADAMW:      zero.adam %{{.*}}, %[[LR]] {beta1 = 8.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, eps = 9.9999999999999995E-7 : f64, weight_decay = 1.000000e-01 : f64,

// "Adam" with adam_w_mode false: L2 weight decay.
// ADAM-L2: zero.adam {{.*}} {mode = #zero.adam_mode<l2>, weight_decay = 1.000000e-01 : f64,

// bias_correction false: the moments are not divided by 1 - beta^t (the op's
// attribute; the runtime's kernels honour it, runtime/test/HostOptimizerTest).
// NO-BIAS-CORRECTION-COUNT-4: zero.adam {{.*}}bias_correction = false

// amsgrad true, with bf16: four fp32 states per parameter (master, exp_avg,
// exp_avg_sq, max_exp_avg_sq), each zero.adam takes and returns the fourth.
// The report counts them: Psi = 40 parameters, stage 1 on 2 ranks, 20
// elements of each state per rank: 4 x 4 x 20 = 320 bytes (16 bytes per
// parameter over the ranks instead of Adam's 12).
// AMSGRAD-LABEL: func.func @train_step(
// AMSGRAD-SAME:    %arg4: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "master"}
// AMSGRAD-SAME:    %arg5: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "exp_avg"}
// AMSGRAD-SAME:    %arg6: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "exp_avg_sq"}
// AMSGRAD-SAME:    %arg7: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "max_exp_avg_sq"}
// AMSGRAD-SAME:    %arg8: tensor<2xf32> {{[^}]*}}zero.param = "fc0.bias", zero.state = "master"}
// AMSGRAD-SAME:    -> (
// AMSGRAD-SAME:    tensor<8xf32> {zero.param = "fc0.weight", zero.state = "max_exp_avg_sq"}
// AMSGRAD:         %[[P:[a-z_0-9]+]], %[[M:[a-z_0-9]+]], %[[V:[a-z_0-9]+]], %[[VMAX:[a-z_0-9]+]] = zero.adam %arg4, %{{.*}}, %arg5, %arg6, %{{.*}}, %{{.*}} amsgrad(%arg7) {zero.offsets = array<i64: {{.*}}>} : tensor<8xf32>, tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
// AMSGRAD-COUNT-3: zero.adam {{.*}} amsgrad(
// AMSGRAD:         return {{.*}}, %[[P]], %[[M]], %[[V]], %[[VMAX]],
// AMSGRAD-REPORT:      "num_parameters": 40,
// AMSGRAD-REPORT-NEXT: "per_rank_bytes": {
// AMSGRAD-REPORT-NEXT:   "parameters": 80,
// AMSGRAD-REPORT-NEXT:   "gradients": 80,
// AMSGRAD-REPORT-NEXT:   "optimizer_states": 320,
// AMSGRAD-REPORT-NEXT:   "model_states": 480,

// "sgd" (case-insensitive, as in DeepSpeed) with momentum: one momentum
// buffer per parameter, no Adam moments.
// SGD-LABEL: func.func @train_step(
// SGD-NOT:     "exp_avg"
// SGD-SAME:    %arg4: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "momentum_buffer"}
// SGD:         zero.reduce_scatter_start
// SGD:         %[[LR:.*]] = arith.constant 5.000000e-01 : f32
// SGD:         zero.sgd %{{.*}}, %[[LR]] {momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 1.000000e-02 : f64,
// SGD-NOT:     zero.adam

// SGD-DAMPENING: zero.sgd {{.*}} {dampening = 2.500000e-01 : f64, momentum = 9.000000e-01 : f64,

// sub_group_size = 4: each 8-element shard of a weight is stepped in two
// tiles of 4.
// SUB-GROUP:      tensor.extract_slice %{{.*}}[0] [4] [1] {{.*}} : tensor<8xf32> to tensor<4xf32>
// SUB-GROUP:      zero.adam {{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// SUB-GROUP:      tensor.extract_slice %{{.*}}[4] [4] [1] {{.*}} : tensor<8xf32> to tensor<4xf32>
// SUB-GROUP:      zero.adam {{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// SUB-GROUP-NOT:  zero.adam {{.*}} : tensor<8xf32>

// gradient_clipping = 0.5: the global norm (summed over the ranks' shards)
// scales the gradients down to 0.5.
// CLIP:      zero.all_reduce_start sum
// CLIP:      math.sqrt
// CLIP:      arith.constant 5.000000e-01 : f32
// CLIP:      zero.adam
