// zero-offload-params (offload_param "cpu", stage 3): the partitioned bf16
// shards live in host memory; the one gather bucket of the step gets them
// from one swap-in (started at the block's start: no gather before it),
// waited for right before the gather. With the optimizer offloaded as well,
// the new shards are computed in host memory and returned from there: the
// swap-ins zero-offload-optimizer made for the step's results are dropped.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-mixed-precision=precision=bf16 --zero-shard-parameters \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-schedule-prefetch --zero-offload-optimizer=device=cpu \
// RUN:   --zero-offload-params=device=cpu | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %arg0: tensor<8xbf16, #zero.memory_space<host>> {zero.layout = #zero.layout<shape = [4, 4], world_size = 2>, zero.param = "w0"}
// CHECK-SAME: -> (tensor<f32> {zero.loss}, tensor<8xbf16, #zero.memory_space<host>> {zero.layout = #zero.layout<shape = [4, 4], world_size = 2>, zero.param = "w0"}
// CHECK-NEXT: %[[IN:.*]] = zero.swap_in_start %arg0, %arg1, %arg2, %arg3 : tensor<8xbf16, #zero.memory_space<host>>, tensor<2xbf16, #zero.memory_space<host>>, tensor<8xbf16, #zero.memory_space<host>>, tensor<3xbf16, #zero.memory_space<host>>
// CHECK:      %[[S:.*]]:4 = zero.wait %[[IN]] : tensor<8xbf16>, tensor<2xbf16>, tensor<8xbf16>, tensor<3xbf16>
// CHECK-NEXT: zero.all_gather_start %[[S]]#0, %[[S]]#2, %[[S]]#1, %[[S]]#3
// CHECK:      %[[NEW:.*]] = linalg.map { arith.truncf } ins(%{{.*}} : tensor<8xf32, #zero.memory_space<host>>) outs(%{{.*}} : tensor<8xbf16, #zero.memory_space<host>>)
// CHECK-NOT:  zero.swap_in_start
// CHECK:      return %{{.*}}, %[[NEW]],

// Without the optimizer offloaded, the new shard is computed on the device
// and swapped out where it is computed, waited for before the return.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params=device=cpu | FileCheck %s --check-prefix=DEVICE
// DEVICE:      %[[NEW:.*]], %{{.*}}, %{{.*}} = zero.adam
// DEVICE-NEXT: %[[OUT:.*]] = zero.swap_out_start %[[NEW]] to host : tensor<8xf32>
// DEVICE:      %[[HOST:.*]] = zero.wait %[[OUT]] : tensor<8xf32, #zero.memory_space<host>>
// DEVICE-NOT:  zero.adam
// DEVICE:      return %{{.*}}, %[[HOST]],

// Persistent parameters stay on the device; below stage 3 it is refused.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=3 world-size=2" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params=device=cpu | FileCheck %s --check-prefix=PERSISTENT
// PERSISTENT-NOT: memory_space
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer --zero-offload-params=device=cpu \
// RUN:   2>&1 | FileCheck %s --check-prefix=STAGE2
// STAGE2: error: zero-offload-params: offloading parameters needs stage 3 (the step is stage 2)
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=3 world-size=2" \
// RUN:   --zero-offload-params=device=disk 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: zero-offload-params: unknown device 'disk' (expected none, cpu or nvme)

// To NVMe the shards live in the nvme arena, swapped straight to the
// device, and the directory is recorded on the step for the schedule.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params="device=nvme nvme-path=/local_nvme max-in-cpu=0" | FileCheck %s --check-prefix=NVME
// NVME:      func.func @step(%arg0: tensor<8xf32, #zero.memory_space<nvme>>
// NVME-SAME: zero.nvme_path = "/local_nvme"
// NVME:      zero.swap_in_start %arg0 : tensor<8xf32, #zero.memory_space<nvme>>
// NVME:      zero.swap_out_start {{.*}} to nvme

// max-in-cpu (offload_param.max_in_cpu): with NVMe, DeepSpeed groups the
// shards in sub-groups, each closed by the shard that brings it to
// sub-group-size elements, and keeps the sub-groups that end within the
// first max-in-cpu elements in host memory. Of the 8, 2, 8 and 3 elements of
// w0, b0, w1 and b1, sub-group-size 8 makes the sub-groups [w0], [b0, w1]
// and [b1]; 13 keeps [w0] (8) in host memory, [b0, w1] ends at 18 and goes
// to NVMe, and so does [b1] after it (21). Each update goes back to its
// shard's space.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params="device=nvme nvme-path=/n max-in-cpu=13 sub-group-size=8" \
// RUN:   | FileCheck %s --check-prefix=MAXINCPU
// MAXINCPU:      func.func @step(%arg0: tensor<8xf32, #zero.memory_space<host>> {{.*}}, %arg1: tensor<2xf32, #zero.memory_space<nvme>> {{.*}}, %arg2: tensor<8xf32, #zero.memory_space<nvme>> {{.*}}, %arg3: tensor<3xf32, #zero.memory_space<nvme>>
// MAXINCPU-SAME: -> (tensor<f32> {zero.loss}, tensor<8xf32, #zero.memory_space<host>> {{.*}}, tensor<2xf32, #zero.memory_space<nvme>> {{.*}}, tensor<8xf32, #zero.memory_space<nvme>> {{.*}}, tensor<3xf32, #zero.memory_space<nvme>>
// MAXINCPU-SAME: zero.nvme_path = "/n"
// With the default sub-group-size (1e9) the 21 elements are one sub-group,
// which does not fit 13: all on NVMe.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params="device=nvme nvme-path=/n max-in-cpu=13" \
// RUN:   | FileCheck %s --check-prefix=ONEGROUP
// ONEGROUP:     func.func @step(%arg0: tensor<8xf32, #zero.memory_space<nvme>> {{.*}}, %arg1: tensor<2xf32, #zero.memory_space<nvme>> {{.*}}, %arg2: tensor<8xf32, #zero.memory_space<nvme>> {{.*}}, %arg3: tensor<3xf32, #zero.memory_space<nvme>>
// With every shard in host memory no NVMe path is recorded.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params="device=nvme nvme-path=/n" | FileCheck %s --check-prefix=ALLINCPU
// ALLINCPU:     func.func @step(%arg0: tensor<8xf32, #zero.memory_space<host>>
// ALLINCPU-NOT: nvme

// NVMe: DeepSpeed's swapper holds buffer_count buffers of buffer_size
// elements. A pool of 2 x 8 elements holds both gathers' 8-element shards:
// w1's swap-in starts one gather ahead, right after w0's gather starts. A
// pool of 1 x 8 holds one: w1's swap-in waits for w0's gather to complete
// and starts right before its own.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-schedule-prefetch \
// RUN:   --zero-offload-params="device=nvme nvme-path=/n max-in-cpu=0 buffer-count=2 buffer-size=8" \
// RUN:   | FileCheck %s --check-prefix=POOL2
// POOL2:      %[[G0:.*]] = zero.all_gather_start %{{.*}} layouts [#zero.layout<shape = [4, 4], world_size = 2>] : tensor<8xf32>
// POOL2-NEXT: %[[IN1:.*]] = zero.swap_in_start %arg2 : tensor<8xf32, #zero.memory_space<nvme>>
// POOL2-NEXT: zero.wait %[[G0]] : tensor<4x4xf32>
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-schedule-prefetch \
// RUN:   --zero-offload-params="device=nvme nvme-path=/n max-in-cpu=0 buffer-count=1 buffer-size=8" \
// RUN:   | FileCheck %s --check-prefix=POOL1
// POOL1:      %[[G0:.*]] = zero.all_gather_start %{{.*}} layouts [#zero.layout<shape = [4, 4], world_size = 2>] : tensor<8xf32>
// POOL1-NEXT: zero.wait %[[G0]] : tensor<4x4xf32>
// POOL1:      %[[IN1:.*]] = zero.swap_in_start %arg2 : tensor<8xf32, #zero.memory_space<nvme>>
// POOL1-NEXT: %[[W1:.*]] = zero.wait %[[IN1]] : tensor<8xf32>
// POOL1-NEXT: zero.all_gather_start %[[W1]]
// A shard larger than one buffer, and a gather larger than the pool, are
// errors as in DeepSpeed's swapper.
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params="device=nvme nvme-path=/n max-in-cpu=0 buffer-count=4 buffer-size=4" \
// RUN:   2>&1 | FileCheck %s --check-prefix=BUFSIZE
// BUFSIZE: error: 'zero.adam' op reads the shard of 'w0' (8 elements) from NVMe, more than one swap buffer holds (offload_param.buffer_size = 4)
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-bucket="allgather-bucket-size=100" \
// RUN:   --zero-offload-params="device=nvme nvme-path=/n max-in-cpu=0 buffer-count=1 buffer-size=8" \
// RUN:   2>&1 | FileCheck %s --check-prefix=POOL
// POOL: error: 'zero.all_gather_start' op swaps in {{[0-9]+}} elements at once, more than the swap buffers hold (offload_param.buffer_count x buffer_size = 8)
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-params="device=nvme nvme-path=/n max-in-cpu=0 buffer-count=0" \
// RUN:   2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: zero-offload-params: buffer-count and buffer-size must be at least 1, got 0 and 100000000
