// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-mixed-precision="precision=bf16" | FileCheck %s
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-mixed-precision="precision=fp16" | FileCheck %s --check-prefix=FP16
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-mixed-precision="precision=fp16 loss-scale=128" | FileCheck %s --check-prefix=STATIC
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-mixed-precision="precision=fp32" | FileCheck %s --check-prefix=FP32
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-mixed-precision="precision=fp8" 2>&1 | FileCheck %s --check-prefix=BAD

// Parameters and gradients become bf16; each op that reads a parameter reads
// an f32 copy made right before it, and gradients are truncated where they
// are produced.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W0:[^:]*]]: tensor<4x4xbf16> {zero.param = "w0"}
// CHECK-SAME: -> (tensor<f32> {zero.loss}, tensor<4x4xbf16> {zero.grad = "w0"}
// CHECK:      %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[W0F:.*]] = linalg.map { arith.extf } ins(%[[W0]] : tensor<4x4xbf16>) outs(%[[E]] : tensor<4x4xf32>)
// CHECK:      linalg.matmul ins(%{{.*}}, %[[W0F]] : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK:      %[[GW1:.*]] = linalg.matmul ins({{.*}} : tensor<4x2xf32>, tensor<2x4xf32>)
// CHECK-NEXT: tensor.empty() : tensor<4x4xbf16>
// CHECK-NEXT: linalg.map { arith.truncf } ins(%[[GW1]] : tensor<4x4xf32>)

// fp16: a loss-scale state (dynamic, starting at 2^16) scales every gradient
// before it is truncated.
// FP16-LABEL: func.func @step(
// FP16-SAME: %{{[^:]*}}: tensor<6xf16> {zero.param = "b1"}
// FP16-SAME: %[[SCALE:[^:]*]]: tensor<f32> {zero.dynamic, zero.initial_value = 6.553600e+04 : f32, zero.state = "loss_scale"}
// FP16-SAME: %{{[^:]*}}: tensor<2x4xf32> {zero.data = "x"}
// FP16:      %[[S:.*]] = tensor.extract %[[SCALE]][] : tensor<f32>
// FP16:      %[[GW1:.*]] = linalg.matmul ins({{.*}} : tensor<4x2xf32>, tensor<2x4xf32>)
// FP16-NEXT: tensor.empty() : tensor<4x4xf16>
// FP16-NEXT: linalg.map ins(%[[GW1]] : tensor<4x4xf32>)
// FP16-NEXT: (%[[G:.*]]: f32, %{{.*}}: f16) {
// FP16-NEXT:   %[[M:.*]] = arith.mulf %[[G]], %[[S]] : f32
// FP16-NEXT:   arith.truncf %[[M]] : f32 to f16

// A static loss scale is not dynamic.
// STATIC: %{{[^:]*}}: tensor<f32> {zero.initial_value = 1.280000e+02 : f32, zero.state = "loss_scale"}

// FP32-NOT: linalg.map
// FP32-NOT: bf16

// The option is an enum: its values are fp32, bf16 and fp16 (--help).
// BAD: zero-opt: for the --precision option: Cannot find option named 'fp8'!
