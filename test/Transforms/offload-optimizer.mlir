// zero-offload-optimizer (offload_optimizer "cpu"): at stage 2 in bf16 with
// fp32 masters, the masters and both moments of every parameter move to host
// memory with their updates, Adam and the cast to the new bf16 shard run on
// the host; each reduced bf16 shard is swapped out right after the bucket's
// wait (during the backward pass) and waited for right before its Adam, or
// before the swap-out after the next one starts if that comes first; each
// new bf16 shard is swapped in right after its cast and waited for before the
// post-step all-gather, the first device use.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-mixed-precision=precision=bf16 \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer=device=cpu | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %arg4: tensor<8xf32, #zero.memory_space<host>> {zero.param = "w0", zero.state = "master"}
// CHECK-SAME: %arg5: tensor<8xf32, #zero.memory_space<host>> {zero.param = "w0", zero.state = "exp_avg"}
// CHECK-SAME: %arg6: tensor<8xf32, #zero.memory_space<host>> {zero.param = "w0", zero.state = "exp_avg_sq"}
// CHECK-SAME: -> (tensor<f32> {zero.loss}, tensor<4x4xbf16> {zero.layout = #zero.layout<shape = [4, 4], world_size = 2>, zero.param = "w0"}
// CHECK-SAME: tensor<8xf32, #zero.memory_space<host>> {zero.param = "w0", zero.state = "master"}

// Two swap-outs are in flight at most: each is waited for where the one
// after the next starts, so that the device buffers of the others are free.
// CHECK:      %[[G:.*]]:4 = zero.wait %{{.*}} : tensor<8xbf16>, tensor<8xbf16>, tensor<2xbf16>, tensor<3xbf16>
// CHECK-NEXT: %[[OUT1:.*]] = zero.swap_out_start %[[G]]#1 to host : tensor<8xbf16>
// CHECK-NEXT: %[[OUT2:.*]] = zero.swap_out_start %[[G]]#2 to host : tensor<2xbf16>
// CHECK-NEXT: %[[G0:.*]] = zero.wait %[[OUT1]] : tensor<8xbf16, #zero.memory_space<host>>
// CHECK-NEXT: %[[OUT0:.*]] = zero.swap_out_start %[[G]]#0 to host : tensor<8xbf16>
// CHECK-NEXT: zero.wait %[[OUT2]] : tensor<2xbf16, #zero.memory_space<host>>
// CHECK-NEXT: %[[OUT3:.*]] = zero.swap_out_start %[[G]]#3 to host : tensor<3xbf16>

// CHECK:      %[[M0:.*]], %{{.*}}, %{{.*}} = zero.adam %arg4, %[[G0]], %arg5, %arg6,
// CHECK-SAME:   : tensor<8xf32, #zero.memory_space<host>>, tensor<8xbf16, #zero.memory_space<host>>, tensor<8xf32, #zero.memory_space<host>>, tensor<8xf32, #zero.memory_space<host>>
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<8xbf16, #zero.memory_space<host>>
// CHECK-NEXT: %[[W0:.*]] = linalg.map { arith.truncf } ins(%[[M0]] : tensor<8xf32, #zero.memory_space<host>>) outs(%[[E0]] : tensor<8xbf16, #zero.memory_space<host>>)
// CHECK-NEXT: %[[IN0:.*]] = zero.swap_in_start %[[W0]] : tensor<8xbf16, #zero.memory_space<host>>

// CHECK:      %[[D0:.*]] = zero.wait %[[IN0]] : tensor<8xbf16>
// CHECK-NEXT: %[[D1:.*]] = zero.wait %{{.*}} : tensor<2xbf16>
// CHECK-NEXT: %[[D2:.*]] = zero.wait %{{.*}} : tensor<8xbf16>
// CHECK-NEXT: %[[D3:.*]] = zero.wait %{{.*}} : tensor<3xbf16>
// CHECK-NEXT: zero.all_gather_start %[[D0]], %[[D1]], %[[D2]], %[[D3]]
// The updated states are returned in host memory, not swapped back.
// CHECK:      return
// CHECK-NOT:  zero.swap_in_start

// At fp32 (no masters) the parameter shard itself is swapped out with the
// gradient, and the updated shard comes back for the all-gather.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=2" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer --zero-bucket \
// RUN:   --zero-offload-optimizer=device=cpu | FileCheck %s --check-prefix=F32
// F32:      %[[SHARD:.*]] = zero.local_shard %arg0
// F32-NEXT: zero.wait %{{.*}} : tensor<8xf32, #zero.memory_space<host>>
// F32-NEXT: %[[OUT:.*]] = zero.swap_out_start %[[SHARD]] to host : tensor<8xf32>
// F32:      %[[P:.*]] = zero.wait %[[OUT]] : tensor<8xf32, #zero.memory_space<host>>
// F32:      %[[NEW:.*]], %{{.*}}, %{{.*}} = zero.adam %[[P]],
// F32-NEXT: zero.swap_in_start %[[NEW]] : tensor<8xf32, #zero.memory_space<host>>

// A shard larger than sub-group-size is updated in tiles that read slices
// of its states: the states live in host memory all the same, the tiles'
// results are put together there, and only the gradient's slices are
// swapped out and the whole 16-bit shard back in.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=2" --zero-mixed-precision=precision=bf16 \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer=sub-group-size=5 \
// RUN:   --zero-offload-optimizer=device=cpu | FileCheck %s --check-prefix=TILES
// TILES:      func.func @step(
// TILES-SAME: %arg4: tensor<8xf32, #zero.memory_space<host>> {zero.param = "w0", zero.state = "master"}
// TILES-SAME: %arg5: tensor<8xf32, #zero.memory_space<host>> {zero.param = "w0", zero.state = "exp_avg"}
// TILES:      %[[M0:.*]] = tensor.extract_slice %arg4[0] [5] [1] : tensor<8xf32, #zero.memory_space<host>> to tensor<5xf32, #zero.memory_space<host>>
// TILES-NEXT: %[[G0:.*]] = tensor.extract_slice %[[GRAD:.*]][0] [5] [1] : tensor<8xbf16> to tensor<5xbf16>
// TILES:      %[[OUT0:.*]] = zero.swap_out_start %[[G0]] to host : tensor<5xbf16>
// TILES-NEXT: tensor.extract_slice %arg5[0] [5] [1] : tensor<8xf32, #zero.memory_space<host>> to tensor<5xf32, #zero.memory_space<host>>
// TILES:      %[[H0:.*]] = zero.wait %[[OUT0]] : tensor<5xbf16, #zero.memory_space<host>>
// TILES-NEXT: %[[P0:.*]], %{{.*}}, %{{.*}} = zero.adam %[[M0]], %[[H0]],
// TILES-NEXT: %[[A0:.*]] = tensor.insert_slice %[[P0]] into %{{.*}}[0] [5] [1] : tensor<5xf32, #zero.memory_space<host>> into tensor<8xf32, #zero.memory_space<host>>
// TILES:      tensor.extract_slice %arg4[5] [3] [1] : tensor<8xf32, #zero.memory_space<host>>
// TILES:      %[[A1:.*]] = tensor.insert_slice %{{.*}} into %[[A0]][5] [3] [1] : tensor<3xf32, #zero.memory_space<host>> into tensor<8xf32, #zero.memory_space<host>>
// TILES:      %[[CAST:.*]] = linalg.map { arith.truncf } ins(%[[A1]] : tensor<8xf32, #zero.memory_space<host>>) outs(%{{.*}} : tensor<8xbf16, #zero.memory_space<host>>)
// TILES-NEXT: zero.swap_in_start %[[CAST]] : tensor<8xbf16, #zero.memory_space<host>>

// device=none changes nothing; unknown devices and stage 0 are refused
// (device=nvme: offload-optimizer-nvme.mlir).
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer --zero-offload-optimizer=device=none \
// RUN:   | FileCheck %s --check-prefix=NONE
// NONE-NOT: memory_space
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer --zero-offload-optimizer=device=gpu \
// RUN:   2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: zero-offload-optimizer: unknown device 'gpu' (expected none, cpu or nvme)
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=0 world-size=2" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer --zero-offload-optimizer=device=cpu \
// RUN:   2>&1 | FileCheck %s --check-prefix=STAGE0
// STAGE0: error: zero-offload-optimizer: offloading the optimizer needs stage 1, 2 or 3 (the step is stage 0)

// ratio (stage 3): the first optimizer ops in program order, until that
// fraction of the elements, step off the device: with 0.5, w0's 8 elements
// of 21 (then 38% < 50%: b0's 2 too, 48%, then w1's 8, 86%) and the last
// parameter's 3 stay on the device.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=2 param-persistence-threshold=0" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-offload-optimizer="device=cpu ratio=0.5" | FileCheck %s --check-prefix=HALF
// HALF-COUNT-3: zero.adam {{.*}} : tensor<{{[0-9]+}}xf32, #zero.memory_space<host>>
// HALF:         zero.adam {{.*}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer --zero-offload-optimizer="device=cpu ratio=0.5" \
// RUN:   2>&1 | FileCheck %s --check-prefix=HALF-STAGE2
// HALF-STAGE2: error: zero-offload-optimizer: a ratio below 1 needs stage 3 (the step is stage 2)

// fp16: the offloaded Adam unscales the gradient itself, so the f16 shard
// is what leaves the device (half the bytes of an f32 unscaled copy). The
// overflow check over every shard is split into one per shard combined
// with arith.maximumf, each right where its shard is defined, so that the
// swap-out can start there; a shard is waited for where the swap-out
// after the next one starts, before its Adam on the host.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-mixed-precision=precision=fp16 --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   --zero-bucket --zero-offload-optimizer=device=cpu | FileCheck %s --check-prefix=FP16
// FP16:      %[[G:.*]]:4 = zero.wait %{{.*}} : tensor<8xf16>, tensor<8xf16>, tensor<2xf16>, tensor<3xf16>
// FP16-NEXT: %[[F0:.*]] = zero.any_nonfinite %[[G]]#1 : tensor<8xf16>
// FP16-NEXT: %[[F1:.*]] = zero.any_nonfinite %[[G]]#2 : tensor<2xf16>
// FP16-NEXT: %[[OUT1:.*]] = zero.swap_out_start %[[G]]#2 to host : tensor<2xf16>
// FP16-NEXT: %[[M01:.*]] = arith.maximumf %[[F0]], %[[F1]] : f32
// FP16-NEXT: %[[F2:.*]] = zero.any_nonfinite %[[G]]#0 : tensor<8xf16>
// FP16-NEXT: zero.swap_out_start %[[G]]#0 to host : tensor<8xf16>
// FP16-NEXT: %[[M012:.*]] = arith.maximumf %[[M01]], %[[F2]] : f32
// FP16-NEXT: %[[F3:.*]] = zero.any_nonfinite %[[G]]#3 : tensor<3xf16>
// FP16-NEXT: zero.wait %[[OUT1]] : tensor<2xf16, #zero.memory_space<host>>
// FP16-NEXT: zero.swap_out_start %[[G]]#3 to host : tensor<3xf16>
// FP16-NEXT: %[[ALL:.*]] = arith.maximumf %[[M012]], %[[F3]] : f32
// FP16-NEXT: tensor.from_elements %[[ALL]] : tensor<f32>
// FP16:      %[[OUT:.*]] = zero.swap_out_start %[[G]]#1 to host : tensor<8xf16>
// FP16:      %[[S:.*]] = tensor.extract %arg17[] : tensor<f32>
// FP16:      %[[O:.*]] = arith.cmpf ogt
// FP16-NEXT: %[[H:.*]] = zero.wait %[[OUT]] : tensor<8xf16, #zero.memory_space<host>>
// FP16-NEXT: zero.adam %arg4, %[[H]], %arg5, %arg6, %{{.*}}, %{{.*}} unscale(%[[S]]) skip(%[[O]]) : tensor<8xf32, #zero.memory_space<host>>, tensor<8xf16, #zero.memory_space<host>>,
