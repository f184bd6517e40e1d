// Gradient knobs from --zero-config: reduce_bucket_size, reduce_scatter,
// allgather_bucket_size, contiguous_gradients.
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
//
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage2.json --zero-world-size=2 \
// RUN:   --zero-report=%t.contiguous.json -o %t.contiguous.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.contiguous.mlir
// RUN: FileCheck %s --check-prefix=REPORT-CONTIGUOUS < %t.contiguous.json
//
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage2-buckets.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=BUCKETS
//
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage2-no-reduce-scatter.json \
// RUN:   --zero-world-size=2 | FileCheck %s --check-prefix=ALL-REDUCE
//
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage1-allgather-bucket.json \
// RUN:   --zero-world-size=2 | FileCheck %s --check-prefix=ALLGATHER
//
// At stage 3 allgather_bucket_size bounds the post-step gathers of the
// persistent parameters (the biases, 4 elements each); parameter fetches
// follow prefetch_bucket_size (config-schedule.mlir).
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage3-persistence.json \
// RUN:   --zero-world-size=2 | FileCheck %s --check-prefix=ALLGATHER3-DEFAULT
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage3-allgather-bucket.json \
// RUN:   --zero-world-size=2 | FileCheck %s --check-prefix=ALLGATHER3
//
// contiguous_gradients = false: no contiguous gradient region in the plan,
// so other offsets in the IR.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage2-no-contiguous.json \
// RUN:   --zero-world-size=2 --zero-report=%t.scattered.json -o %t.scattered.mlir
// RUN: FileCheck %s --check-prefix=REPORT-SCATTERED < %t.scattered.json
// RUN: not diff %t.contiguous.mlir %t.scattered.mlir > /dev/null

// The defaults (5e8-element buckets): one reduce-scatter of every gradient,
// one all-gather of every updated parameter. The bucket's staging buffer
// holds 2 ranks x (8 + 2 + 8 + 2) shard elements x 4 bytes = 160 bytes.
// DEFAULT:     zero.reduce_scatter_start avg {{.*}} {zero.grads = ["fc1.weight", "fc1.bias", "fc0.weight", "fc0.bias"], zero.staging = array<i64: {{[0-9]+}}, 160>}
// DEFAULT-NOT: zero.reduce_scatter_start
// DEFAULT:     zero.all_gather_start %param_out, %param_out_{{[0-9]+}}, %param_out_{{[0-9]+}}, %param_out_{{[0-9]+}} layouts
// DEFAULT-NOT: zero.all_gather_start

// reduce_bucket_size = 2e1 (written as 2e1): one bucket per layer, staged in
// 2 x (8 + 2) x 4 = 80 bytes.
// BUCKETS:     zero.reduce_scatter_start avg {{.*}} {zero.grads = ["fc1.weight", "fc1.bias"], zero.staging = array<i64: {{[0-9]+}}, 80>}
// BUCKETS:     zero.reduce_scatter_start avg {{.*}} {zero.grads = ["fc0.weight", "fc0.bias"], zero.staging = array<i64: {{[0-9]+}}, 80>}
// BUCKETS-NOT: zero.reduce_scatter_start

// reduce_scatter = false: every gradient is all-reduced and the rank keeps
// its shard.
// ALL-REDUCE-NOT: zero.reduce_scatter_start
// ALL-REDUCE:     %[[R:.*]] = zero.all_reduce_start avg %{{.*}} {zero.grads = ["fc1.weight"]}
// ALL-REDUCE:     %[[W:.*]] = zero.wait %[[R]]
// ALL-REDUCE:     zero.local_shard %[[W]] layout #zero.layout<shape = [4, 4], world_size = 2> into tensor<8xf32>
// ALL-REDUCE-NOT: zero.reduce_scatter_start

// allgather_bucket_size = 4 (elements of the gathered tensors): no two of the
// post-step all-gathers of stage 1 fit together.
// ALLGATHER:         zero.all_gather_start %param_out layouts
// ALLGATHER:         zero.all_gather_start %param_out_{{[0-9]+}} layouts
// ALLGATHER:         zero.all_gather_start %param_out_{{[0-9]+}} layouts
// ALLGATHER:         zero.all_gather_start %param_out_{{[0-9]+}} layouts

// ALLGATHER3-DEFAULT:     zero.all_gather_start %param_out_{{[0-9]+}}, %param_out_{{[0-9]+}} layouts
// ALLGATHER3:             zero.all_gather_start %param_out_{{[0-9]+}} layouts
// ALLGATHER3:             zero.all_gather_start %param_out_{{[0-9]+}} layouts

// REPORT-CONTIGUOUS:      "contiguous_gradient_buckets": [
// REPORT-CONTIGUOUS-NEXT:   {
// REPORT-CONTIGUOUS-NEXT:     "op": "zero.reduce_scatter_start
// REPORT-CONTIGUOUS:      "contiguous_gradients": true

// REPORT-SCATTERED: "contiguous_gradient_buckets": [],
// REPORT-SCATTERED: "contiguous_gradients": false
