// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=2" \
// RUN:   --zero-accumulate-gradients=steps=3 | FileCheck %s --check-prefix=STAGE1
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-accumulate-gradients=steps=2 | FileCheck %s --check-prefix=PENDING
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-accumulate-gradients=steps=2 --zero-reduce-gradients \
// RUN:   | FileCheck %s --check-prefix=STAGE2
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 ranks-per-node=2 mics-shard-size=2" \
// RUN:   --zero-accumulate-gradients=steps=2 --zero-reduce-gradients \
// RUN:   | FileCheck %s --check-prefix=MICS
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=2" \
// RUN:   --zero-accumulate-gradients="steps=2 grad-accum-dtype=bf16" \
// RUN:   --zero-reduce-gradients=grad-accum-dtype=bf16 | FileCheck %s --check-prefix=NARROW

// Three micro-steps at stage 1 are one loop: the data argument gains a
// leading dimension of 3 that iteration i slices, each running sum starts
// at -0.0 (which adds no bit: -0 + x is x) and adds the micro-step's value
// in its type, and the sums are scaled by 1/3 after the loop, as the
// unrolled mean (x0 + x1 + x2) * (1/3) does.
// STAGE1-LABEL: func.func @step(
// STAGE1-SAME:    %[[X:[^:]*]]: tensor<3x2x4xf32> {zero.data = "x"}
// STAGE1:         %[[NEG0:.*]] = arith.constant -0.000000e+00 : f32
// STAGE1-NEXT:    %[[LOSS0:.*]] = linalg.fill ins(%[[NEG0]] : f32) outs(%{{.*}} : tensor<f32>)
// STAGE1-COUNT-4: linalg.fill ins(%{{.*}} : f32)
// STAGE1:         %[[C0:.*]] = arith.constant 0 : index
// STAGE1-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// STAGE1-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// STAGE1-NEXT:    %[[SUMS:.*]]:5 = scf.for %[[I:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[LOSS:.*]] = %[[LOSS0]], %[[GW0:[^ ]*]] = %{{[^,]*}}, %{{.*}}) -> (tensor<f32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<6xf32>) {
// STAGE1-NEXT:      %[[SLICE:.*]] = tensor.extract_slice %[[X]][%[[I]], 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
// STAGE1-NEXT:      tensor.empty()
// STAGE1-NEXT:      linalg.matmul ins(%[[SLICE]], %arg0
// STAGE1-NOT:       zero.reduce_scatter_start
// STAGE1:           linalg.map { arith.addf } ins(%[[LOSS]], %{{.*}} : tensor<f32>, tensor<f32>)
// STAGE1:           linalg.map { arith.addf } ins(%[[GW0]], %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// STAGE1-COUNT-3:   linalg.map { arith.addf }
// STAGE1-NEXT:      scf.yield
// STAGE1-NEXT:    }
// STAGE1:         %[[MEAN:.*]] = linalg.map ins(%[[SUMS]]#0 : tensor<f32>)
// STAGE1-NEXT:      (%[[S:.*]]: f32, %{{.*}}: f32) {
// STAGE1-NEXT:        %[[THIRD:.*]] = arith.constant 0.333333343 : f32
// STAGE1-NEXT:        arith.mulf %[[S]], %[[THIRD]] : f32
// STAGE1-NOT:     scf.for
// STAGE1:         return %[[MEAN]],

// At stage 2 the sums wait for the reductions: each micro-gradient is scaled
// by 1/2 where it is produced and the step carries the pending loop.
// PENDING-LABEL: func.func @step(
// PENDING-SAME:    tensor<2x4xf32> {zero.data = "x"}
// PENDING-SAME:    zero.pending_micro_steps = 2 : i64
// PENDING-NOT:     scf.for
// PENDING-COUNT-4: arith.constant 5.000000e-01 : f32

// zero-reduce-gradients reduce-scatters each scaled micro-gradient in the
// micro-step and then builds the loop, whose sums are the shards.
// STAGE2-LABEL: func.func @step(
// STAGE2-SAME:    %{{[^:]*}}: tensor<2x2x4xf32> {zero.data = "x"}
// STAGE2-NOT:     zero.pending_micro_steps
// STAGE2:         scf.for %{{.*}} iter_args(%[[LOSS:[^ ]*]] = %{{[^,]*}}, %[[GW0:[^ ]*]] = %{{[^,]*}}, %{{.*}}) -> (tensor<f32>, tensor<8xf32>, tensor<2xf32>, tensor<8xf32>, tensor<3xf32>) {
// STAGE2:           %[[H:.*]] = zero.reduce_scatter_start avg %{{.*}} {{.*}}{zero.grads = ["w0"]} : tensor<4x4xf32>
// STAGE2-NEXT:      %[[W0:.*]] = zero.wait %[[H]] : tensor<8xf32>
// STAGE2:           linalg.map { arith.addf } ins(%[[LOSS]], %{{.*}} : tensor<f32>, tensor<f32>)
// STAGE2:           linalg.map { arith.addf } ins(%[[GW0]], %[[W0]] : tensor<8xf32>, tensor<8xf32>)
// STAGE2:           scf.yield
// STAGE2-NOT:     zero.reduce_scatter_start
// STAGE2:         return %{{.*}}, %{{.*}}#1, %{{.*}}#2, %{{.*}}#3, %{{.*}}#4 :

// MiCS (4 ranks, nodes of 2, layouts for 2 ranks): each micro-gradient is
// reduce-scattered (averaged) within the node, grid axis 1, in the loop;
// after the loop, at the accumulation boundary, each accumulated shard is
// averaged across the 2 nodes' replicas, grid axis 0: MiCS's two hops.
// MICS-LABEL: func.func @step(
// MICS:         %[[SUMS:.*]]:5 = scf.for %{{.*}} -> (tensor<f32>, tensor<8xf32>, tensor<2xf32>, tensor<8xf32>, tensor<3xf32>) {
// MICS:           zero.reduce_scatter_start avg %{{.*}} grid_axes = [1] layouts [#zero.layout<shape = [4, 4], world_size = 2>] {zero.grads = ["w0"]} : tensor<4x4xf32>
// MICS-NOT:       zero.all_reduce_start
// MICS:           scf.yield
// MICS:         }
// MICS-NEXT:    %[[H1:.*]] = zero.all_reduce_start avg %[[SUMS]]#4 grid_axes = [0] {zero.grads = ["b1"]} : tensor<3xf32>
// MICS-NEXT:    %[[B1:.*]] = zero.wait %[[H1]] : tensor<3xf32>
// MICS-NEXT:    %[[H2:.*]] = zero.all_reduce_start avg %[[SUMS]]#3 grid_axes = [0] {zero.grads = ["w1"]} : tensor<8xf32>
// MICS-NEXT:    %[[W1:.*]] = zero.wait %[[H2]] : tensor<8xf32>
// MICS-NEXT:    %[[H3:.*]] = zero.all_reduce_start avg %[[SUMS]]#2 grid_axes = [0] {zero.grads = ["b0"]} : tensor<2xf32>
// MICS-NEXT:    %[[B0:.*]] = zero.wait %[[H3]] : tensor<2xf32>
// MICS-NEXT:    %[[H4:.*]] = zero.all_reduce_start avg %[[SUMS]]#1 grid_axes = [0] {zero.grads = ["w0"]} : tensor<8xf32>
// MICS-NEXT:    %[[W0:.*]] = zero.wait %[[H4]] : tensor<8xf32>
// MICS:         return %{{.*}}, %[[W0]], %[[B0]], %[[W1]], %[[B1]] :

// A bf16 sum of f32 micro-gradients keeps the first one unrounded, as the
// unrolled sum x0 + x1 does: a carried flag (1, then 0) selects the summand
// itself in the first iteration and the bf16-rounded sum afterwards; the
// f32-carried sum is rounded to bf16 after the loop, exactly.
// NARROW-LABEL: func.func @step(
// NARROW:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// NARROW-NEXT:    %[[FLAG0:.*]] = linalg.fill ins(%[[ONE]] : f32)
// NARROW:         %[[SUMS:.*]]:6 = scf.for %{{.*}} iter_args({{.*}}, %[[FLAG:[^ ]*]] = %[[FLAG0]]) -> (tensor<f32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<6xf32>, tensor<f32>) {
// NARROW:           %[[F:.*]] = tensor.extract %[[FLAG]][] : tensor<f32>
// NARROW-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// NARROW-NEXT:      %[[FIRST:.*]] = arith.cmpf one, %[[F]], %[[ZERO]] : f32
// NARROW:             arith.truncf %{{.*}} : f32 to bf16
// NARROW:           linalg.map { arith.extf }
// NARROW:             arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// NARROW:           scf.yield
// NARROW:         linalg.map { arith.truncf } ins(%[[SUMS]]#1 : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
