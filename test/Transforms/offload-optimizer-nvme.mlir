// zero-offload-optimizer with device=nvme (ZeRO-Infinity's optimizer half):
// at stage 2 in fp32 (no masters) Adam's two moments of every parameter live
// in the nvme space; the update runs in host memory as with device=cpu, and
// the moments travel between NVMe and host memory in sub-groups.
//
// The shards, in optimizer order: w0 8, b0 2, w1 8, b1 3 elements. With
// sub-group-size=10 the groups are {w0, b0} (10), {w1} (8 + 3 > 10) and {b1}.
// Each group swaps 2 states (exp_avg, exp_avg_sq), so buffer-count=4 holds
// two groups: with pipeline-read the read of group g+1 starts right after
// group g's read is waited for, before g's update; pipeline-write would need
// a third group's buffers, so each write is waited for at once.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer="device=nvme nvme-path=/local_nvme sub-group-size=10 buffer-count=4 pipeline-read=true pipeline-write=true" \
// RUN:   | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %arg4: tensor<8xf32, #zero.memory_space<nvme>> {zero.param = "w0", zero.state = "exp_avg"}
// CHECK-SAME: %arg11: tensor<3xf32, #zero.memory_space<nvme>> {zero.param = "b1", zero.state = "exp_avg_sq"}
// CHECK-SAME: tensor<8xf32, #zero.memory_space<nvme>> {zero.param = "w0", zero.state = "exp_avg"}
// CHECK-SAME: zero.aio = {block_size = 1048576 : i64, overlap_events = true, queue_depth = 8 : i64, single_submit = false}, zero.nvme_path = "/local_nvme"

// Group 0 is read right before w0's update, group 1 right after it.
// CHECK:      %[[R0:.*]] = zero.swap_out_start %arg4, %arg5, %arg6, %arg7 to host : tensor<8xf32, #zero.memory_space<nvme>>, tensor<8xf32, #zero.memory_space<nvme>>, tensor<2xf32, #zero.memory_space<nvme>>, tensor<2xf32, #zero.memory_space<nvme>>
// CHECK-NEXT: %[[S0:.*]]:4 = zero.wait %[[R0]] : tensor<8xf32, #zero.memory_space<host>>, tensor<8xf32, #zero.memory_space<host>>, tensor<2xf32, #zero.memory_space<host>>, tensor<2xf32, #zero.memory_space<host>>
// CHECK-NEXT: %[[R1:.*]] = zero.swap_out_start %arg8, %arg9 to host : tensor<8xf32, #zero.memory_space<nvme>>, tensor<8xf32, #zero.memory_space<nvme>>
// CHECK-NEXT: %{{.*}}, %[[M0:.*]], %[[V0:.*]] = zero.adam %{{.*}}, %{{.*}}, %[[S0]]#0, %[[S0]]#1,
// CHECK:      %{{.*}}, %[[M1:.*]], %[[V1:.*]] = zero.adam %{{.*}}, %{{.*}}, %[[S0]]#2, %[[S0]]#3,
// Group 0 is written after b0's update and waited for at once.
// CHECK-NEXT: %[[W0:.*]] = zero.swap_out_start %[[M0]], %[[V0]], %[[M1]], %[[V1]] to nvme : tensor<8xf32, #zero.memory_space<host>>, tensor<8xf32, #zero.memory_space<host>>, tensor<2xf32, #zero.memory_space<host>>, tensor<2xf32, #zero.memory_space<host>>
// CHECK-NEXT: %[[N0:.*]]:4 = zero.wait %[[W0]] : tensor<8xf32, #zero.memory_space<nvme>>, tensor<8xf32, #zero.memory_space<nvme>>, tensor<2xf32, #zero.memory_space<nvme>>, tensor<2xf32, #zero.memory_space<nvme>>
// CHECK:      %[[S1:.*]]:2 = zero.wait %[[R1]] : tensor<8xf32, #zero.memory_space<host>>, tensor<8xf32, #zero.memory_space<host>>
// CHECK-NEXT: %[[R2:.*]] = zero.swap_out_start %arg10, %arg11 to host : tensor<3xf32, #zero.memory_space<nvme>>, tensor<3xf32, #zero.memory_space<nvme>>
// CHECK-NEXT: %{{.*}}, %[[M2:.*]], %[[V2:.*]] = zero.adam %{{.*}}, %{{.*}}, %[[S1]]#0, %[[S1]]#1,
// CHECK-NEXT: %[[W1:.*]] = zero.swap_out_start %[[M2]], %[[V2]] to nvme
// CHECK-NEXT: %[[N1:.*]]:2 = zero.wait %[[W1]]
// CHECK:      %[[S2:.*]]:2 = zero.wait %[[R2]] : tensor<3xf32, #zero.memory_space<host>>, tensor<3xf32, #zero.memory_space<host>>
// CHECK-NEXT: %{{.*}}, %[[M3:.*]], %[[V3:.*]] = zero.adam %{{.*}}, %{{.*}}, %[[S2]]#0, %[[S2]]#1,
// CHECK-NEXT: %[[W2:.*]] = zero.swap_out_start %[[M3]], %[[V3]] to nvme
// CHECK-NEXT: %[[N2:.*]]:2 = zero.wait %[[W2]]
// The step returns the states from NVMe.
// CHECK:      return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[N0]]#0, %[[N0]]#1, %[[N0]]#2, %[[N0]]#3, %[[N1]]#0, %[[N1]]#1, %[[N2]]#0, %[[N2]]#1,

// buffer-count=6 holds three groups: pipeline-write waits for a group's
// write only before the next group's write starts, the last one before the
// return.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer="device=nvme sub-group-size=10 buffer-count=6 pipeline-read=true pipeline-write=true" \
// RUN:   | FileCheck %s --check-prefix=WRITE
// WRITE:      %[[W0:.*]] = zero.swap_out_start %{{.*}} to nvme : tensor<8xf32, #zero.memory_space<host>>, tensor<8xf32, #zero.memory_space<host>>, tensor<2xf32, #zero.memory_space<host>>, tensor<2xf32, #zero.memory_space<host>>
// WRITE-NOT:  zero.wait %[[W0]]
// WRITE:      zero.adam
// WRITE-NEXT: %[[N0:.*]]:4 = zero.wait %[[W0]]
// WRITE-NEXT: %[[W1:.*]] = zero.swap_out_start %{{.*}} to nvme
// WRITE-NOT:  zero.wait %[[W1]]
// WRITE:      zero.adam
// WRITE-NEXT: zero.wait %[[W1]]
// WRITE-NEXT: %[[W2:.*]] = zero.swap_out_start %{{.*}} to nvme
// WRITE-NOT:  zero.wait %[[W2]]
// WRITE:      zero.all_gather_start
// WRITE:      zero.wait %[[W2]]
// WRITE-NEXT: return

// buffer-count=2 holds one group: each read starts right before its wait,
// whatever pipeline-read says. One buffer cannot hold a group's 2 states.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer="device=nvme sub-group-size=10 buffer-count=2 pipeline-read=true" \
// RUN:   | FileCheck %s --check-prefix=SERIAL
// SERIAL:      %[[R0:.*]] = zero.swap_out_start %arg4, %arg5, %arg6, %arg7 to host
// SERIAL-NEXT: zero.wait %[[R0]]
// SERIAL-NEXT: zero.adam
// SERIAL:      %[[R1:.*]] = zero.swap_out_start %arg8, %arg9 to host
// SERIAL-NEXT: zero.wait %[[R1]]
// SERIAL-NEXT: zero.adam
// SERIAL:      %[[R2:.*]] = zero.swap_out_start %arg10, %arg11 to host
// SERIAL-NEXT: zero.wait %[[R2]]
// SERIAL-NEXT: zero.adam
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer="device=nvme buffer-count=1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ONE-BUFFER
// ONE-BUFFER: error: zero-offload-optimizer: buffer-count 1 holds fewer buffers than the 2 optimizer states a sub-group swaps between NVMe and host memory (offload_optimizer.buffer_count: one buffer per state)

// The plan (alignment 64). The nvme arena holds the 8 moments, each in a
// 64-byte slot: 4 * 32 + 4 * 8 + 4 * 12 = 168 bytes at 0, 64, ..., 448, the
// last of 12 bytes, so the arena is 448 + 12 = 460 bytes; each step reads
// and writes all of them once: nvme_read = nvme_write = 168. The device
// swaps the same bytes as with device=cpu: out the 4 gradient shards and the
// 4 parameter shards (2 * 21 * 4 = 168), in the 4 new shards (84).
// The host arena, every tensor of at most 64 bytes in a slot of its own:
// with device=cpu the 8 moments live all step next to the swapped shards, 13
// slots and a 32-byte tensor on top (864 bytes). With one sub-group
// (the default sub-group-size) the 8 moments are read into host memory and
// the 8 updated ones written from there: 15 slots and a 32-byte tensor
// (992). With three sub-groups and one group of buffers (buffer-count=2) the
// peak is at b0's update: the gradient shards of b0, w1, b1 not yet used
// (3), the new shards of w0 and b0 awaiting the all-gather (2), w0's updated
// moments awaiting group 0's write (2), b0's parameter shard (1), b0's
// moments read (2) and updated (2): 12 slots, the top one a 32-byte tensor,
// 11 * 64 + 32 = 736 bytes.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer="device=nvme sub-group-size=10 buffer-count=2" \
// RUN:   --zero-plan-memory=report=%t.serial.json -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT --input-file=%t.serial.json
// REPORT:      "host": 736,
// REPORT-NEXT: "nvme": 460
// REPORT:      "host_to_device": 84,
// REPORT-NEXT: "device_to_host": 168,
// REPORT-NEXT: "nvme_read": 168,
// REPORT-NEXT: "nvme_write": 168
// REPORT:      "nvme": {
// REPORT-NEXT:   "arena": 460,
// REPORT-NEXT:   "parameters": 0,
// REPORT-NEXT:   "gradients": 0,
// REPORT-NEXT:   "optimizer_states": 168,
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer="device=nvme" \
// RUN:   --zero-plan-memory=report=%t.one.json -o /dev/null
// RUN: FileCheck %s --check-prefix=ONE-GROUP --input-file=%t.one.json
// ONE-GROUP:      "host": 992,
// ONE-GROUP-NEXT: "nvme": 460
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer="device=cpu" \
// RUN:   --zero-plan-memory=report=%t.cpu.json -o /dev/null
// RUN: FileCheck %s --check-prefix=CPU --input-file=%t.cpu.json
// CPU:      "host": 864,
// CPU-NEXT: "nvme": 0

// The directory is one per step: zero-offload-params refuses another.
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-optimizer="device=nvme nvme-path=/a" \
// RUN:   --zero-offload-params="device=nvme nvme-path=/b max-in-cpu=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PATHS
// PATHS: error: zero-offload-params: nvme-path '/b' differs from '/a', already recorded on the step: a rank's NVMe arena is one file, in one directory
