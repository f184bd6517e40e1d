// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=3 unroll=true" --zero-reduce-gradients \
// RUN:   | FileCheck %s --check-prefix=STAGE1
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=2 unroll=true" --zero-reduce-gradients \
// RUN:   | FileCheck %s --check-prefix=STAGE2
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=1 unroll=true" | FileCheck %s --check-prefix=ONE
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-accumulate-gradients="steps=0 unroll=true" 2>&1 | FileCheck %s --check-prefix=ZERO
//
// grad-accum-dtype at stage 1: a wider type sums here (bf16 step, fp32); the
// step's own type changes nothing; a narrower one (f32 step, bf16) leaves the
// micro-step gradients to zero-reduce-gradients, to be summed once stored.
// RUN: zero-opt %S/../zero-opt/Inputs/bf16-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=2 grad-accum-dtype=fp32 unroll=true" \
// RUN:   | FileCheck %s --check-prefix=WIDER
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=1 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=2 unroll=true" -o %t.own.mlir
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=1 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=2 grad-accum-dtype=fp32 unroll=true" -o %t.fp32.mlir
// RUN: diff %t.own.mlir %t.fp32.mlir
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=2 grad-accum-dtype=bf16 unroll=true" \
// RUN:   | FileCheck %s --check-prefix=NARROWER
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-accumulate-gradients="steps=2 grad-accum-dtype=fp64 unroll=true" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-TYPE

// Three micro-steps at stage 1: the data argument gains a leading dimension
// of 3, each micro-step reads its slice, the full gradients are summed and
// scaled by 1/3 where the last one is produced, and each parameter's
// gradient is reduce-scattered once, at the boundary.
// STAGE1-LABEL: func.func @step(
// STAGE1-SAME: %[[X:[^:]*]]: tensor<3x2x4xf32> {zero.data = "x"}
// STAGE1:      tensor.extract_slice %[[X]][0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
// STAGE1:      tensor.extract_slice %[[X]][1, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
// STAGE1:      tensor.extract_slice %[[X]][2, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
// STAGE1-NOT:  zero.reduce_scatter_start
// The loss is the mean of the three micro-losses.
// STAGE1:      %[[LOSS:.*]] = linalg.map ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>)
// STAGE1:        %[[S1:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// STAGE1-NEXT:   %[[S2:.*]] = arith.addf %[[S1]], %{{.*}} : f32
// STAGE1-NEXT:   %[[THIRD:.*]] = arith.constant 0.333333343 : f32
// STAGE1-NEXT:   arith.mulf %[[S2]], %[[THIRD]] : f32
// STAGE1:      %[[GW0:.*]] = linalg.map ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
// STAGE1:      zero.reduce_scatter_start avg %[[GW0]] {{.*}}{zero.grads = ["w0"]} : tensor<4x4xf32>
// STAGE1-COUNT-3: zero.reduce_scatter_start
// STAGE1-NOT:  zero.reduce_scatter_start
// STAGE1:      return %[[LOSS]],

// Two micro-steps at stage 2: every micro-gradient is scaled by 1/2 and
// reduce-scattered where it is produced; the shards are summed as they
// arrive, and the result carries no micro-step attribute.
// STAGE2-LABEL: func.func @step(
// STAGE2-SAME: -> (tensor<f32> {zero.loss}, tensor<8xf32> {zero.grad = "w0"}, tensor<2xf32> {zero.grad = "b0"}, tensor<8xf32> {zero.grad = "w1"}, tensor<3xf32> {zero.grad = "b1"})
// STAGE2:      %[[H0:.*]] = zero.reduce_scatter_start avg %{{.*}} {{.*}}{zero.grads = ["w1"]} : tensor<4x4xf32>
// STAGE2-NEXT: %[[R0:.*]] = zero.wait %[[H0]] : tensor<8xf32>
// STAGE2:      %[[H1:.*]] = zero.reduce_scatter_start avg %{{.*}} {{.*}}{zero.grads = ["w1"]} : tensor<4x4xf32>
// STAGE2-NEXT: %[[R1:.*]] = zero.wait %[[H1]] : tensor<8xf32>
// STAGE2-NEXT: tensor.empty() : tensor<8xf32>
// STAGE2-NEXT: %[[SUM:.*]] = linalg.map { arith.addf } ins(%[[R0]], %[[R1]] : tensor<8xf32>, tensor<8xf32>)
// STAGE2:      return %{{.*}}, %{{.*}}, %{{.*}}, %[[SUM]], %{{.*}} :
// STAGE2-NOT: zero.micro_step

// One step: unchanged.
// ONE-NOT: tensor.extract_slice
// ONE: tensor<2x4xf32> {zero.data = "x"}

// ZERO: error: gradient accumulation steps must be at least 1, got 0

// The bf16 micro-gradients are extended and summed in f32, and the sum
// scaled by 1/2 in f32: the gradient results become f32.
// WIDER-LABEL: func.func @step(
// WIDER-SAME:    -> (tensor<bf16> {zero.loss}, tensor<4x4xf32> {zero.grad = "w0"}, tensor<4xf32> {zero.grad = "b0"}, tensor<4x4xf32> {zero.grad = "w1"}, tensor<6xf32> {zero.grad = "b1"})
// WIDER:         linalg.map ins(%{{.*}}, %{{.*}} : tensor<4x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// WIDER-NEXT:      (%[[A:.*]]: bf16, %[[B:.*]]: bf16, %{{.*}}: f32) {
// WIDER-NEXT:        %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// WIDER-NEXT:        %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// WIDER-NEXT:        %[[S:.*]] = arith.addf %[[AF]], %[[BF]] : f32
// WIDER-NEXT:        %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// WIDER-NEXT:        arith.mulf %[[S]], %[[HALF]] : f32

// Each micro-gradient is scaled by 1/2 and returned with its micro-step, as
// at stage 2.
// NARROWER-LABEL: func.func @step(
// NARROWER-SAME:    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w0", zero.micro_step = 0 : i64}, tensor<4x4xf32> {zero.grad = "w0", zero.micro_step = 1 : i64}, tensor<4xf32> {zero.grad = "b0", zero.micro_step = 0 : i64}, tensor<4xf32> {zero.grad = "b0", zero.micro_step = 1 : i64}, tensor<4x4xf32> {zero.grad = "w1", zero.micro_step = 0 : i64}, tensor<4x4xf32> {zero.grad = "w1", zero.micro_step = 1 : i64}, tensor<6xf32> {zero.grad = "b1", zero.micro_step = 0 : i64}, tensor<6xf32> {zero.grad = "b1", zero.micro_step = 1 : i64})

// BAD-TYPE: error: unknown grad-accum-dtype 'fp64'; expected fp32, bf16 or fp16
