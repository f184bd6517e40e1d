// communication_data_type, data_types.grad_accum_dtype, prescale_gradients
// and gradient_predivide_factor from --zero-config, through the whole
// pipeline, and the report's communication bytes.
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
//
// bf16, stage 2, two micro-steps: 16-bit reductions and sums, then the same
// with "communication_data_type": "fp32" and "grad_accum_dtype": "fp32".
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/gradients-bf16.json --zero-world-size=2 \
// RUN:   --zero-report=%t.bf16.json | FileCheck %s --check-prefix=BF16
// RUN: FileCheck %s --check-prefix=REPORT-BF16 < %t.bf16.json
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/gradients-bf16-fp32.json --zero-world-size=2 \
// RUN:   --zero-report=%t.fp32.json | FileCheck %s --check-prefix=FP32
// RUN: FileCheck %s --check-prefix=REPORT-FP32 < %t.fp32.json
//
// fp16 with a dynamic loss scale: the f32 reduced gradients are checked for
// overflow and unscaled in f32.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/gradients-bf16-fp32.json --zero-world-size=2 \
// RUN:   --zero-set='bf16={"enabled": false}' --zero-set='fp16={"enabled": true}' \
// RUN:   | FileCheck %s --check-prefix=FP16
//
// gradient_predivide_factor 4 on 2 ranks at stage 1, then with
// prescale_gradients (DeepSpeed's spelling of the communication type is
// case-insensitive).
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/gradients-predivide.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=PREDIVIDE
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/gradients-predivide.json --zero-world-size=2 \
// RUN:   --zero-set=prescale_gradients=true --zero-set=communication_data_type=BF16 \
// RUN:   2>%t.prescale.err | FileCheck %s --check-prefix=PRESCALE
// RUN: FileCheck %s --check-prefix=PRESCALE-WARNING < %t.prescale.err

// The two micro-steps are a loop: one bucket of the four bf16 gradients per
// iteration, whose shards are added to the carried bf16 sums.
// BF16-LABEL: func.func @train_step(
// BF16-SAME:    -> (tensor<f32> {zero.loss}
// BF16:         scf.for %{{.*}} = %c0 to %c2 step %c1
// BF16:         zero.reduce_scatter_start avg {{.*}} : tensor<4x4xbf16>, tensor<4xbf16>, tensor<4x4xbf16>, tensor<4xbf16>{{$}}
// BF16:         linalg.map ins(%{{.*}}, %{{.*}} : tensor<8xbf16>, tensor<8xbf16>) outs(%{{.*}} : tensor<8xbf16>)
// BF16:         zero.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {{.*}}: tensor<8xf32>, tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>

// Every bf16 gradient (rounded by the map that scales it, which stores it in
// bf16: zero-narrow-activations) is extended right before its reduction, the reduction
// moves f32, the shards of the two micro-steps are summed in f32, and Adam
// steps the fp32 master weights with f32 gradients.
// FP32-LABEL: func.func @train_step(
// FP32-NOT:     zero.reduce_scatter_start avg {{.*}}bf16
// FP32:         %[[G:.*]] = linalg.map ins(%{{.*}} : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
// FP32:           arith.truncf %{{.*}} : f32 to bf16
// FP32:         tensor.empty()
// FP32-NEXT:    %[[G32:.*]] = linalg.map { arith.extf } ins(%[[G]] : tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// FP32:         zero.reduce_scatter_start avg %[[G32]], {{.*}} : tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>{{$}}
// FP32:         linalg.map { arith.addf } ins(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// FP32-NOT:     zero.reduce_scatter_start avg {{.*}}bf16
// FP32:         zero.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {{.*}}: tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>

// The report counts the reductions' operands: 2 micro-steps x 40 gradient
// elements x 2 bytes, then x 4 bytes. On the ring each rank sends half of
// every reduce-scatter and of the 80-byte all-gather of the bf16 parameters:
// 80 + 40 = 120, then 160 + 40 = 200. The reduced shards (the gradients the
// rank holds) double too.
// REPORT-BF16:      "gradients": 40,
// REPORT-BF16:      "communication_bytes_per_step": {
// REPORT-BF16-NEXT:   "all_gather": 80,
// REPORT-BF16-NEXT:   "reduce_scatter": 160,
// REPORT-BF16-NEXT:   "all_reduce": 0,
// REPORT-BF16-NEXT:   "total": 240,
// REPORT-BF16-NEXT:   "sent": 120,
// REPORT-BF16-NEXT:   "received": 120,
// REPORT-FP32:      "gradients": 80,
// REPORT-FP32:      "communication_bytes_per_step": {
// REPORT-FP32-NEXT:   "all_gather": 80,
// REPORT-FP32-NEXT:   "reduce_scatter": 320,
// REPORT-FP32-NEXT:   "all_reduce": 0,
// REPORT-FP32-NEXT:   "total": 400,
// REPORT-FP32-NEXT:   "sent": 200,
// REPORT-FP32-NEXT:   "received": 200,

// FP16-LABEL: func.func @train_step(
// FP16-SAME:    %arg17: tensor<f32> {zero.dynamic, zero.initial_value = 6.553600e+04 : f32, {{[^}]*}}zero.state = "loss_scale"}
// FP16:         zero.reduce_scatter_start avg {{.*}} : tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>{{$}}
// FP16:         %[[SCALE:.*]] = tensor.extract %arg17[] : tensor<f32>
// FP16:         zero.all_reduce_start max
// FP16:         zero.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} unscale(%[[SCALE]]) skip(%{{.*}}) {{.*}}: tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>

// gradient_predivide_factor 4, 2 ranks: 1/4 before a sum, 4/2 after it.
// PREDIVIDE-LABEL: func.func @train_step(
// PREDIVIDE-COUNT-4: arith.constant 2.500000e-01 : f32
// PREDIVIDE:         %[[H:.*]] = zero.reduce_scatter_start sum {{.*}} : tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>
// PREDIVIDE-NEXT:    %[[W:.*]]:4 = zero.wait %[[H]]
// PREDIVIDE-COUNT-4: arith.constant 2.000000e+00 : f32
// PREDIVIDE-NOT:     _start avg

// prescale_gradients: 1/2 (the world size) before a sum in bf16, the factor
// ignored with a warning, nothing after the reduction.
// PRESCALE-LABEL: func.func @train_step(
// PRESCALE-COUNT-4: arith.constant 5.000000e-01 : f32
// PRESCALE:         %[[H:.*]] = zero.reduce_scatter_start sum {{.*}} : tensor<4x4xbf16>, tensor<4xbf16>, tensor<4x4xbf16>, tensor<4xbf16>
// PRESCALE-NOT:     2.500000e-01
// PRESCALE-NOT:     2.000000e+00
// PRESCALE-WARNING: gradients-predivide.json:3:32: warning: gradient_predivide_factor has no effect: prescale_gradients is true, which divides by the world size instead
