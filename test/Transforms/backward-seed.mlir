// RUN: zero-opt %s -split-input-file \
// RUN:   --zero-mixed-precision="precision=fp16" | FileCheck %s --check-prefix=FP16
// RUN: zero-opt %s -split-input-file \
// RUN:   --zero-mixed-precision="precision=bf16" | FileCheck %s --check-prefix=BF16
// RUN: zero-opt %s -split-input-file \
// RUN:   --zero-mixed-precision="precision=fp32" | FileCheck %s --check-prefix=FP32

// The constant 1 that seeds the backward pass (zero.backward_seed). Under
// fp16 the loss scale takes its place, as DeepSpeed scales the loss before
// its backward pass: the gradients arrive scaled and are only truncated, and
// the scale's argument says so (zero.scales_backward). Under bf16 and fp32
// the seed is 1 and the product with it is dropped.
func.func @step(%w: tensor<4xf32> {zero.param = "w"},
                %x: tensor<4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) {
  %e = tensor.empty() : tensor<4xf32>
  %p = linalg.map { arith.mulf } ins(%w, %x : tensor<4xf32>, tensor<4xf32>)
                  outs(%e : tensor<4xf32>)
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%p : tensor<4xf32>)
                        outs(%init : tensor<f32>) dimensions = [0]
  %e1 = tensor.empty() : tensor<4xf32>
  %g = linalg.map ins(%x : tensor<4xf32>) outs(%e1 : tensor<4xf32>)
    (%in: f32, %out: f32) {
      %quarter = arith.constant 0.25 : f32
      %mean = arith.mulf %in, %quarter : f32
      %seed = arith.constant {zero.backward_seed} 1.0 : f32
      %d = arith.mulf %mean, %seed : f32
      linalg.yield %d : f32
    }
  return %loss, %g : tensor<f32>, tensor<4xf32>
}

// FP16-LABEL: func.func @step(
// FP16-SAME: %{{[^:]*}}: tensor<4xf16> {zero.param = "w"},
// FP16-SAME: %[[SCALE:[^:]*]]: tensor<f32> {zero.dynamic, zero.initial_value = 6.553600e+04 : f32, zero.scales_backward, zero.state = "loss_scale"},
// FP16:      %[[S:.*]] = tensor.extract %[[SCALE]][] : tensor<f32>
// FP16:      %[[G:.*]] = linalg.map ins(%{{.*}} : tensor<4xf32>)
// FP16:        %[[MEAN:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// FP16-NEXT:   %[[D:.*]] = arith.mulf %[[MEAN]], %[[S]] : f32
// FP16-NEXT:   linalg.yield %[[D]] : f32
// FP16-NOT:  backward_seed
// FP16:      %[[G16:.*]] = linalg.map { arith.truncf } ins(%[[G]] : tensor<4xf32>)
// FP16-NEXT: return %{{.*}}, %[[G16]] : tensor<f32>, tensor<4xf16>

// BF16-LABEL: func.func @step(
// BF16-NOT:  zero.scales_backward
// BF16:      linalg.map ins(%{{.*}} : tensor<4xf32>)
// BF16:        %[[MEAN:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// BF16-NEXT:   linalg.yield %[[MEAN]] : f32
// BF16-NOT:  backward_seed

// FP32-LABEL: func.func @step(
// FP32:      linalg.map ins(%{{.*}} : tensor<4xf32>)
// FP32:        %[[MEAN:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// FP32-NEXT:   linalg.yield %[[MEAN]] : f32
// FP32-NOT:  backward_seed

// -----

// A seed read by anything but a product stays, as an unmarked 1 (bf16,
// fp32); under fp16 the scale is read there too.
func.func @added(%w: tensor<4xf32> {zero.param = "w"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) {
  %loss = arith.constant dense<0.0> : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %g = linalg.map ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>)
    (%in: f32, %out: f32) {
      %seed = arith.constant {zero.backward_seed} 1.0 : f32
      %d = arith.addf %in, %seed : f32
      linalg.yield %d : f32
    }
  return %loss, %g : tensor<f32>, tensor<4xf32>
}

// FP16-LABEL: func.func @added(
// FP16:      %[[S:.*]] = tensor.extract
// FP16:      arith.addf %{{.*}}, %[[S]] : f32

// BF16-LABEL: func.func @added(
// BF16:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// BF16-NEXT: arith.addf %{{.*}}, %[[ONE]] : f32

// FP32-LABEL: func.func @added(
// FP32:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// FP32-NEXT: arith.addf %{{.*}}, %[[ONE]] : f32
