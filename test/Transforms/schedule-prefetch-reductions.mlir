// With overlap_comm, gradient reductions are double-buffered as in
// DeepSpeed (two alternating buckets): a reduction is waited for, at the
// latest, where the reduction after the next one starts, instead of at the
// optimizer step, so the full gradients do not all stay alive to the end of
// the backward pass. Four unbucketed reductions: b0 and b1 (ready at the
// start), then w1 and w0 during the backward pass.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" --zero-reduce-gradients \
// RUN:   --zero-bucket="reduce-bucket-size=0" \
// RUN:   --zero-schedule-prefetch="overlap-comm=true" | FileCheck %s

// CHECK:      %[[B0:.*]] = zero.reduce_scatter_start avg %{{.*}} {zero.grads = ["b0"]}
// CHECK-NEXT: %[[B1:.*]] = zero.reduce_scatter_start avg %{{.*}} {zero.grads = ["b1"]}
// The third reduction (w1) starts once b0's has been waited for.
// CHECK:      zero.wait %[[B0]] : tensor<1xf32>
// CHECK-NEXT: %[[W1:.*]] = zero.reduce_scatter_start avg %{{.*}} {zero.grads = ["w1"]}
// The fourth (w0) once b1's has.
// CHECK:      zero.wait %[[B1]] : tensor<2xf32>
// CHECK-NEXT: %[[W0:.*]] = zero.reduce_scatter_start avg %{{.*}} {zero.grads = ["w0"]}
// The last two are waited for where their shards are needed.
// CHECK:      zero.wait %[[W1]] : tensor<4xf32>
// CHECK-NEXT: zero.wait %[[W0]] : tensor<4xf32>
// CHECK-NEXT: return

// Post-step gathers of the updated parameters are chained the same way:
// without the bound all four would be waited for at the return, each holding
// its result (and, in a bucket of several, a staging buffer) to the end.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer \
// RUN:   --zero-bucket="reduce-bucket-size=0 allgather-bucket-size=0" \
// RUN:   --zero-schedule-prefetch="overlap-comm=true" | FileCheck %s --check-prefix=GATHERS
// GATHERS:      %[[G0:.*]] = zero.all_gather_start %{{.*}} layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf32>
// GATHERS:      %[[G1:.*]] = zero.all_gather_start %{{.*}} layouts [#zero.layout<shape = [4], world_size = 4>] : tensor<1xf32>
// The third gather starts once the first has been waited for.
// GATHERS:      %[[F0:.*]] = zero.wait %[[G0]] : tensor<4x4xf32>
// GATHERS-NEXT: %[[G2:.*]] = zero.all_gather_start
// The fourth once the second has.
// GATHERS:      %[[F1:.*]] = zero.wait %[[G1]] : tensor<4xf32>
// GATHERS-NEXT: %[[G3:.*]] = zero.all_gather_start
// GATHERS:      %[[F2:.*]] = zero.wait %[[G2]] : tensor<4x4xf32>
// GATHERS-NEXT: %[[F3:.*]] = zero.wait %[[G3]] : tensor<6xf32>
// GATHERS-NEXT: return %{{.*}}, %[[F0]], %[[F1]], %[[F2]], %[[F3]],
