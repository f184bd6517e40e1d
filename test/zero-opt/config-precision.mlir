// bf16 / fp16 sections from --zero-config, and every fp16 loss-scaling knob.
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
//
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage1.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=FP32
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/bf16.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=BF16
// The old name of the section means the same, with a warning.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/bfloat16.json --zero-world-size=2 \
// RUN:   2>%t.bfloat16.err | FileCheck %s --check-prefix=BF16
// RUN: FileCheck %s --check-prefix=BFLOAT16-WARNING < %t.bfloat16.err
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/fp16-static.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=FP16-STATIC
//
// Dynamic loss scaling (loss_scale 0): the scale starts at
// 2^initial_scale_power and the optimizer updates it.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/fp16-dynamic.json --zero-world-size=2 \
// RUN:   -o %t.dynamic.mlir
// RUN: FileCheck %s --check-prefix=FP16-DYNAMIC < %t.dynamic.mlir
// Each knob of the dynamic scale changes the program.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/fp16-dynamic.json --zero-world-size=2 \
// RUN:   --zero-set=fp16.loss_scale_window=4242 -o %t.window.mlir
// RUN: not diff %t.dynamic.mlir %t.window.mlir > /dev/null
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/fp16-dynamic.json --zero-world-size=2 \
// RUN:   --zero-set=fp16.hysteresis=7 -o %t.hysteresis.mlir
// RUN: not diff %t.dynamic.mlir %t.hysteresis.mlir > /dev/null
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/fp16-dynamic.json --zero-world-size=2 \
// RUN:   --zero-set=fp16.consecutive_hysteresis=true -o %t.consecutive.mlir
// RUN: not diff %t.dynamic.mlir %t.consecutive.mlir > /dev/null
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/fp16-dynamic.json --zero-world-size=2 \
// RUN:   --zero-set=fp16.min_loss_scale=0.25 -o %t.min.mlir
// RUN: not diff %t.dynamic.mlir %t.min.mlir > /dev/null
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/fp16-dynamic-knobs.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=FP16-KNOBS

// FP32-LABEL: func.func @train_step(
// FP32-SAME:    %arg0: tensor<4x4xf32> {{[^}]*}}zero.param = "fc0.weight"}
// FP32-NOT:     "master"
// FP32-NOT:     "loss_scale"

// Parameters stored in bf16, fp32 master weights in the optimizer state.
// BF16-LABEL: func.func @train_step(
// BF16-SAME:    %arg0: tensor<4x4xbf16> {{[^}]*}}zero.param = "fc0.weight"}
// BF16-SAME:    %arg4: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "master"}
// BF16-NOT:     "loss_scale"

// BFLOAT16-WARNING: bfloat16.json:3:3: warning: 'bfloat16' is deprecated (DeepSpeed's old name of the bf16 section); write 'bf16'

// A static scale of 128: a loss_scale state that starts at 128 and is not
// dynamic; the optimizer divides it out of the gradients.
// FP16-STATIC-LABEL: func.func @train_step(
// FP16-STATIC-SAME:    %arg0: tensor<4x4xf16> {{[^}]*}}zero.param = "fc0.weight"}
// FP16-STATIC-SAME:    {zero.initial_value = 1.280000e+02 : f32, {{[^}]*}}zero.state = "loss_scale"}
// FP16-STATIC-NOT:     zero.dynamic
// FP16-STATIC:         zero.reduce_scatter_start
// FP16-STATIC:         %[[SCALE:.*]] = tensor.extract %arg17[]
// FP16-STATIC:         zero.adam {{.*}} unscale(%[[SCALE]]) {

// FP16-DYNAMIC-LABEL: func.func @train_step(
// FP16-DYNAMIC-SAME:    %arg0: tensor<4x4xf16> {{[^}]*}}zero.param = "fc0.weight"}
// FP16-DYNAMIC-SAME:    {zero.dynamic, zero.initial_value = 2.560000e+02 : f32, {{[^}]*}}zero.state = "loss_scale"}

// The knobs' values appear in the scale update (loss_scale_window 4242,
// hysteresis 7, min_loss_scale 0.25).
// FP16-KNOBS-LABEL: func.func @train_step(
// FP16-KNOBS-SAME:    {zero.dynamic, zero.initial_value = 2.560000e+02 : f32, {{[^}]*}}zero.state = "loss_scale"}
// FP16-KNOBS-DAG:     arith.constant {{4242|4.242000e\+03}}
// FP16-KNOBS-DAG:     arith.constant {{7|7.000000e\+00}} :
// FP16-KNOBS-DAG:     arith.constant 2.500000e-01 : f32
