// zero_optimization.stage from --zero-config: what each stage partitions.
// A 2-layer MLP (fc0/fc1, weights 4x4, biases 4) on 2 ranks.
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage0.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=STAGE0
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage1.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=STAGE1
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage3.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=STAGE3
//
// Stage 1 against stage 2, with buckets small enough (20 elements: one
// layer's weight and bias) to see where the gradients are reduced: stage 1 at
// the end of the backward pass, stage 2 as soon as a layer's gradients exist.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage1-buckets.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=BUCKETS1
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage2-buckets.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=BUCKETS2
// The stage-2 file at the default buckets: the same program as stage 1.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage2.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=STAGE2

// Stage 0: plain data parallelism. Full optimizer states, gradients
// all-reduced (packed in a 160-byte staging buffer: 40 f32), no shard
// anywhere.
// STAGE0-LABEL: func.func @train_step(
// STAGE0-SAME:    %arg4: tensor<4x4xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "exp_avg"}
// STAGE0-SAME:    zero.stage = 0 : i64
// STAGE0-NOT:     zero.reduce_scatter_start
// STAGE0:         zero.all_reduce_start avg {{.*}} {zero.grads = ["fc1.weight", "fc1.bias", "fc0.weight", "fc0.bias"], zero.staging = array<i64: {{[0-9]+}}, 160>}
// STAGE0-NOT:     zero.local_shard
// STAGE0:         zero.adam %arg0, {{.*}} : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
// STAGE0-NOT:     zero.all_gather_start

// Stage 1: optimizer states are shards (8 of the 16 elements of a weight);
// the gradients are reduce-scattered, the optimizer steps the rank's part of
// the replicated parameters, and the updated parts are all-gathered.
// STAGE1-LABEL: func.func @train_step(
// STAGE1-SAME:    %arg0: tensor<4x4xf32> {{[^}]*}}zero.param = "fc0.weight"}
// STAGE1-SAME:    %arg4: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "exp_avg"}
// STAGE1-SAME:    zero.stage = 1 : i64
// STAGE1:         zero.reduce_scatter_start avg
// STAGE1:         zero.local_shard %arg0 {{.*}} into tensor<8xf32>
// STAGE1:         zero.adam
// STAGE1:         zero.all_gather_start %param_out,

// STAGE2-LABEL: func.func @train_step(
// STAGE2-SAME:    %arg4: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "exp_avg"}
// STAGE2-SAME:    zero.stage = 2 : i64
// STAGE2:         zero.reduce_scatter_start avg

// Stage 3: parameters are partitioned too. At the default
// param_persistence_threshold (1e5) every parameter of this small model is
// persistent: kept whole, marked `zero.persistent`.
// STAGE3-LABEL: func.func @train_step(
// STAGE3-SAME:    %arg0: tensor<4x4xf32> {{[^}]*}}zero.param = "fc0.weight", zero.persistent}
// STAGE3-SAME:    %arg3: tensor<4xf32> {{[^}]*}}zero.param = "fc1.bias", zero.persistent}
// STAGE3-SAME:    %arg4: tensor<8xf32> {{[^}]*}}zero.param = "fc0.weight", zero.state = "exp_avg"}
// STAGE3-SAME:    zero.stage = 3 : i64
// STAGE3:         zero.reduce_scatter_start avg

// The three matmuls of the backward pass (reading a transposed operand in
// place) come first, then both buckets (each
// staged in 2 ranks x (8 + 2) x 4 = 80 bytes).
// BUCKETS1:     linalg.matmul indexing_maps =
// BUCKETS1-NOT: zero.reduce_scatter_start
// BUCKETS1:     linalg.matmul
// BUCKETS1-NOT: zero.reduce_scatter_start
// BUCKETS1:     linalg.matmul
// BUCKETS1-NOT: linalg.matmul
// BUCKETS1:     zero.reduce_scatter_start avg {{.*}} {zero.grads = ["fc0.weight", "fc0.bias"], zero.staging = array<i64: {{[0-9]+}}, 80>}
// BUCKETS1:     zero.reduce_scatter_start avg {{.*}} {zero.grads = ["fc1.weight", "fc1.bias"], zero.staging = array<i64: {{[0-9]+}}, 80>}

// fc1's gradients are reduced before the backward pass goes on.
// BUCKETS2:     linalg.matmul indexing_maps =
// BUCKETS2-NOT: linalg.matmul
// BUCKETS2:     zero.reduce_scatter_start avg {{.*}} {zero.grads = ["fc1.weight", "fc1.bias"], zero.staging = array<i64: {{[0-9]+}}, 80>}
// BUCKETS2:     linalg.matmul
// BUCKETS2:     linalg.matmul
// BUCKETS2:     zero.reduce_scatter_start avg {{.*}} {zero.grads = ["fc0.weight", "fc0.bias"], zero.staging = array<i64: {{[0-9]+}}, 80>}
