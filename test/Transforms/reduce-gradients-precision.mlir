// The element type and the scaling of the gradient reductions
// (communication_data_type, prescale_gradients, gradient_predivide_factor),
// and the type micro-step gradients are summed in (grad_accum_dtype).
//
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" --zero-mixed-precision=precision=bf16 \
// RUN:   --zero-reduce-gradients=communication-data-type=fp32 \
// RUN:   | FileCheck %s --check-prefix=FP32
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-reduce-gradients="communication-data-type=bf16 gradient-predivide-factor=2" \
// RUN:   | FileCheck %s --check-prefix=PREDIVIDE
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=0 world-size=4" \
// RUN:   --zero-reduce-gradients=gradient-predivide-factor=3 \
// RUN:   | FileCheck %s --check-prefix=STAGE0
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-reduce-gradients=gradient-predivide-factor=4 \
// RUN:   | FileCheck %s --check-prefix=WORLD
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-reduce-gradients="prescale-gradients=true gradient-predivide-factor=8" \
// RUN:   | FileCheck %s --check-prefix=PRESCALE
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-reduce-gradients="reduce-scatter=false gradient-predivide-factor=2" \
// RUN:   | FileCheck %s --check-prefix=LOCAL
//
// The defaults are the plain average, as without the options.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-reduce-gradients -o %t.plain.mlir
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-reduce-gradients="prescale-gradients=false gradient-predivide-factor=1" \
// RUN:   -o %t.defaults.mlir
// RUN: diff %t.plain.mlir %t.defaults.mlir
//
// Accumulation: bf16 shards summed in f32 (stage 2); bf16 micro-step
// gradients of an f32 step summed in bf16 before one reduction (stage 1).
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-accumulate-gradients="steps=2 unroll=true" \
// RUN:   --zero-mixed-precision=precision=bf16 --zero-reduce-gradients=grad-accum-dtype=fp32 \
// RUN:   | FileCheck %s --check-prefix=SHARDS
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=2 grad-accum-dtype=bf16 unroll=true" \
// RUN:   --zero-mixed-precision=precision=bf16 --zero-reduce-gradients=grad-accum-dtype=bf16 \
// RUN:   | FileCheck %s --check-prefix=STAGE1
// f64 shards are summed in f64 (they used to be rounded to f32).
// RUN: zero-model mlp --layers 1 --hidden 4 --batch-size 2 --dtype f64 -o %t.f64.mlir
// RUN: zero-opt %t.f64.mlir --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=2 unroll=true" --zero-reduce-gradients \
// RUN:   | FileCheck %s --check-prefix=F64
//
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-reduce-gradients=communication-data-type=fp8 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-TYPE
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-reduce-gradients=grad-accum-dtype=float32 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-ACCUM
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-reduce-gradients=gradient-predivide-factor=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-FACTOR
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-reduce-gradients=gradient-predivide-factor=-2 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NEGATIVE-FACTOR

// bf16 gradients converted to f32 right before the reduction, reduced in
// f32; the results (what zero-insert-optimizer steps with) stay f32.
// FP32-LABEL: func.func @step(
// FP32-SAME:    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w0"}, tensor<1xf32> {zero.grad = "b0"}, tensor<4xf32> {zero.grad = "w1"}, tensor<2xf32> {zero.grad = "b1"})
// FP32:         %[[BF16:.*]] = linalg.map { arith.truncf } ins(%{{.*}} : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
// FP32-NEXT:    tensor.empty() : tensor<4x4xf32>
// FP32-NEXT:    %[[F32:.*]] = linalg.map { arith.extf } ins(%[[BF16]] : tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// FP32-NEXT:    %[[H:.*]] = zero.reduce_scatter_start avg %[[F32]] layouts [#zero.layout<shape = [4, 4], world_size = 4>] {zero.grads = ["w1"]} : tensor<4x4xf32>
// FP32-NEXT:    zero.wait %[[H]] : tensor<4xf32>
// FP32-NOT:     zero.reduce_scatter_start avg {{.*}} : tensor<{{.*}}bf16>

// gradient_predivide_factor 2 on 4 ranks: times 1/2 before a sum, 2/4 after
// it, both in bf16 (multiplied in f32, rounded once). The scaling after the
// reduction sits before the first use of the shard, the return.
// PREDIVIDE-LABEL: func.func @step(
// PREDIVIDE:         %[[G:.*]] = linalg.matmul ins({{.*}} : tensor<4x2xf32>, tensor<2x4xf32>)
// PREDIVIDE-NEXT:    tensor.empty() : tensor<4x4xbf16>
// PREDIVIDE-NEXT:    %[[PRE:.*]] = linalg.map ins(%[[G]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
// PREDIVIDE-NEXT:      (%[[IN:.*]]: f32, %{{.*}}: bf16) {
// PREDIVIDE-NEXT:        %[[C:.*]] = arith.constant 5.000000e-01 : f32
// PREDIVIDE-NEXT:        %[[X:.*]] = arith.mulf %[[IN]], %[[C]] : f32
// PREDIVIDE-NEXT:        %[[R:.*]] = arith.truncf %[[X]] : f32 to bf16
// PREDIVIDE-NEXT:        linalg.yield %[[R]] : bf16
// PREDIVIDE:         %[[H:.*]] = zero.reduce_scatter_start sum %[[PRE]] layouts [#zero.layout<shape = [4, 4], world_size = 4>] {zero.grads = ["w1"]} : tensor<4x4xbf16>
// PREDIVIDE-NEXT:    %[[W1:.*]] = zero.wait %[[H]] : tensor<4xbf16>
// PREDIVIDE-NOT:     %[[W1]]{{[ ,:)]}}
// PREDIVIDE:         %[[POST:.*]] = linalg.map ins(%[[W1]] : tensor<4xbf16>) outs(%{{.*}} : tensor<4xbf16>)
// PREDIVIDE-NEXT:      (%[[IN2:.*]]: bf16, %{{.*}}: bf16) {
// PREDIVIDE-NEXT:        %[[E:.*]] = arith.extf %[[IN2]] : bf16 to f32
// PREDIVIDE-NEXT:        %[[C2:.*]] = arith.constant 5.000000e-01 : f32
// PREDIVIDE-NEXT:        %[[Y:.*]] = arith.mulf %[[E]], %[[C2]] : f32
// PREDIVIDE-NEXT:        arith.truncf %[[Y]] : f32 to bf16
// PREDIVIDE:         return %{{.*}}, %{{.*}}, %{{.*}}, %[[POST]], %{{.*}} :
// PREDIVIDE-NOT:     _start avg

// Stage 0, factor 3 on 4 ranks: 1/3 before the all-reduce, 3/4 after.
// STAGE0:      %[[PRE:.*]] = linalg.map ins(%{{.*}} : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// STAGE0:        arith.constant 0.333333343 : f32
// STAGE0:      %[[H:.*]] = zero.all_reduce_start sum %[[PRE]] {zero.grads = ["w1"]} : tensor<4x4xf32>
// STAGE0-NEXT: %[[W:.*]] = zero.wait %[[H]] : tensor<4x4xf32>
// STAGE0:      linalg.map ins(%[[W]] : tensor<4x4xf32>)
// STAGE0-NEXT:   (%[[IN:.*]]: f32, %{{.*}}: f32) {
// STAGE0-NEXT:     %[[C:.*]] = arith.constant 7.500000e-01 : f32
// STAGE0-NEXT:     arith.mulf %[[IN]], %[[C]] : f32

// A factor equal to the world size leaves nothing to do after the sum.
// WORLD:      arith.constant 2.500000e-01 : f32
// WORLD:      %[[H:.*]] = zero.reduce_scatter_start sum {{.*}}{zero.grads = ["w1"]} : tensor<4x4xf32>
// WORLD-NEXT: %[[W:.*]] = zero.wait %[[H]] : tensor<4xf32>
// WORLD-NOT:  ins(%[[W]]
// WORLD-NOT:  _start avg

// prescale_gradients: 1/4 (the world size) before the sum, the predivide
// factor ignored, nothing after.
// PRESCALE:      arith.constant 2.500000e-01 : f32
// PRESCALE:      %[[H:.*]] = zero.reduce_scatter_start sum {{.*}}{zero.grads = ["w1"]} : tensor<4x4xf32>
// PRESCALE-NEXT: %[[W:.*]] = zero.wait %[[H]] : tensor<4xf32>
// PRESCALE-NOT:  ins(%[[W]]
// PRESCALE-NOT:  1.250000e-01
// PRESCALE-NOT:  _start avg

// reduce_scatter = false: the rank's shard of the all-reduced sum is scaled.
// LOCAL:      %[[H:.*]] = zero.all_reduce_start sum %{{.*}} {zero.grads = ["w1"]} : tensor<4x4xf32>
// LOCAL-NEXT: %[[W:.*]] = zero.wait %[[H]] : tensor<4x4xf32>
// LOCAL-NEXT: %[[S:.*]] = zero.local_shard %[[W]] layout #zero.layout<shape = [4, 4], world_size = 4> into tensor<4xf32>
// LOCAL:      linalg.map ins(%[[S]] : tensor<4xf32>)
// LOCAL-NEXT:   (%[[IN:.*]]: f32, %{{.*}}: f32) {
// LOCAL-NEXT:     %[[C:.*]] = arith.constant 5.000000e-01 : f32
// LOCAL-NEXT:     arith.mulf %[[IN]], %[[C]] : f32

// Two micro-steps at stage 2: bf16 shards, summed into f32 as the second
// arrives; the sum is the result.
// SHARDS-LABEL: func.func @step(
// SHARDS-SAME:    -> (tensor<f32> {zero.loss}, tensor<8xf32> {zero.grad = "w0"}, tensor<2xf32> {zero.grad = "b0"}, tensor<8xf32> {zero.grad = "w1"}, tensor<3xf32> {zero.grad = "b1"})
// SHARDS:         %[[H0:.*]] = zero.reduce_scatter_start avg %{{.*}} {{.*}}{zero.grads = ["w1"]} : tensor<4x4xbf16>
// SHARDS-NEXT:    %[[R0:.*]] = zero.wait %[[H0]] : tensor<8xbf16>
// SHARDS:         %[[H1:.*]] = zero.reduce_scatter_start avg %{{.*}} {{.*}}{zero.grads = ["w1"]} : tensor<4x4xbf16>
// SHARDS-NEXT:    %[[R1:.*]] = zero.wait %[[H1]] : tensor<8xbf16>
// SHARDS-NEXT:    tensor.empty() : tensor<8xf32>
// SHARDS-NEXT:    %[[SUM:.*]] = linalg.map ins(%[[R0]], %[[R1]] : tensor<8xbf16>, tensor<8xbf16>) outs(%{{.*}} : tensor<8xf32>)
// SHARDS-NEXT:      (%[[A:.*]]: bf16, %[[B:.*]]: bf16, %{{.*}}: f32) {
// SHARDS-DAG:         %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// SHARDS-DAG:         %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// SHARDS:             %[[T:.*]] = arith.addf %[[AF]], %[[BF]] : f32
// SHARDS-NEXT:        linalg.yield %[[T]] : f32
// SHARDS:         return %{{.*}}, %{{.*}}, %{{.*}}, %[[SUM]], %{{.*}} :

// Two micro-steps at stage 1 summed in bf16: each micro-step's gradient is
// stored in bf16 (zero-mixed-precision), added to the bf16 running sum as it
// is produced, and the sum is reduce-scattered once.
// STAGE1-LABEL: func.func @step(
// STAGE1-SAME:    -> (tensor<f32> {zero.loss}, tensor<8xbf16> {zero.grad = "w0"}, tensor<2xbf16> {zero.grad = "b0"}, tensor<8xbf16> {zero.grad = "w1"}, tensor<3xbf16> {zero.grad = "b1"})
// STAGE1-NOT:     zero.micro_step
// STAGE1-NOT:     zero.reduce_scatter_start
// STAGE1:         %[[SUM:.*]] = linalg.map ins(%{{.*}}, %{{.*}} : tensor<4x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xbf16>)
// STAGE1:           arith.addf %{{.*}}, %{{.*}} : f32
// STAGE1-NEXT:      arith.truncf %{{.*}} : f32 to bf16
// STAGE1-NOT:     zero.reduce_scatter_start
// STAGE1:         zero.reduce_scatter_start avg %{{.*}} layouts [#zero.layout<shape = [4, 4], world_size = 2>] {zero.grads = ["w0"]} : tensor<4x4xbf16>
// STAGE1:         zero.reduce_scatter_start avg %[[SUM]] layouts [#zero.layout<shape = [4, 4], world_size = 2>] {zero.grads = ["w1"]} : tensor<4x4xbf16>

// F64:     zero.reduce_scatter_start avg
// F64-NOT: f32
// F64:     linalg.map { arith.addf } ins(%{{.*}}, %{{.*}} : tensor<8xf64>, tensor<8xf64>) outs(%{{.*}} : tensor<8xf64>)

// BAD-TYPE: error: unknown communication-data-type 'fp8'; expected fp32, bf16 or fp16
// BAD-ACCUM: error: unknown grad-accum-dtype 'float32'; expected fp32, bf16 or fp16
// BAD-FACTOR: error: gradient-predivide-factor must be a positive number, got 0
// NEGATIVE-FACTOR: error: gradient-predivide-factor must be a positive number, got -2
