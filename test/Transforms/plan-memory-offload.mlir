// RUN: zero-opt %s --zero-plan-memory=report=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT --input-file=%t.json
// The host arena against a host budget (--zero-host-memory): 896 bytes fit
// 896 and not 512, where the peak is the three states and the swapped
// gradient shard.
// RUN: zero-opt %s --zero-plan-memory=host-memory=896 -o /dev/null
// RUN: not zero-opt %s --zero-plan-memory=host-memory=512 -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HOST-BUDGET
// HOST-BUDGET: error: the plan needs 896 bytes of host memory, 384 bytes more than the budget of 512 bytes; the peak (at 'zero.swap_out_start' {{.*}}plan-memory-offload.mlir:{{[0-9]+}}:9) is dominated by optimizer states (768 bytes of 896 bytes live): w.master 256 bytes, w.exp_avg 256 bytes, w.exp_avg_sq 256 bytes, swapped w.grad 128 bytes
// RUN: not zero-opt %s --zero-plan-memory=host-memory=lots -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HOST-BAD
// HOST-BAD: error: invalid value 'lots' for option 'host-memory': expected a byte count

// Stage 2 with the optimizer offloaded to the host (offload_optimizer =
// cpu): the fp32 master, exp_avg and exp_avg_sq shards live in host memory
// (#zero.memory_space<host>); the gradient shard is swapped out, Adam runs on
// the host, and the new fp16 shard is swapped back in and all-gathered.
// One parameter w 16x16 over 4 ranks: Psi = 256, shards of 64.
//
// Device residents: w 512 @0, x 512 @512, w.grad 128 @1024 (end 1152).
// Device transients from 1152:
//   L 4 [2,17] (the loss), R = gw 512 [3,7] (the bucket), N 128 [14,16]
//   (the new shard, swapped in, read by the all-gather until its wait). No
//   staging buffer: each collective has one operand, without padding.
//   In program order: L @1152; R @1216 (the next multiple of 64), end 1728
//   = the device arena; N @1216 (R is dead).
// Host residents: w.master, w.exp_avg, w.exp_avg_sq 256 @0/256/512 (end 768).
// Host transients from 768: the swapped-out gradient shard 128 [9,11] and
// the new fp16 shard 128 [12,14]: both @768 (never live together), end 896.
// Max live: device 1152 + R + L = 1668 (point 3); host 768 + 128 = 896.
// The device arena is 60 bytes larger: alignment below R.

// CHECK-LABEL: func.func @step(
// CHECK-SAME: {zero.layout = #zero.layout<shape = [16, 16], world_size = 4>, zero.offset = 0 : i64, zero.param = "w"}
// CHECK-SAME: {zero.offset = 0 : i64, zero.param = "w", zero.space = #zero.memory_space<host>, zero.state = "master"}
// CHECK-SAME: {zero.offset = 256 : i64, zero.param = "w", zero.space = #zero.memory_space<host>, zero.state = "exp_avg"}
// CHECK-SAME: {zero.offset = 512 : i64, zero.param = "w", zero.space = #zero.memory_space<host>, zero.state = "exp_avg_sq"}
// CHECK-SAME: {zero.data = "x", zero.offset = 512 : i64}
// CHECK-SAME: zero.memory_plan = {device = 1728 : i64, host = 896 : i64, nvme = 0 : i64}
// CHECK: tensor.from_elements {{.*}} {zero.offsets = array<i64: 1152>}
// CHECK: linalg.matmul {zero.offsets = array<i64: 1216>}
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 1024>} : tensor<64xf16>
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 768>, zero.space = #zero.memory_space<host>}
// CHECK: zero.adam {{.*}} {zero.offsets = array<i64: 0, 256, 512>, zero.space = #zero.memory_space<host>}
// CHECK: arith.truncf {{.*}} {zero.offsets = array<i64: 768>, zero.space = #zero.memory_space<host>}
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 1216>} : tensor<64xf16>
// CHECK-NOT: zero.staging
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 0>} : tensor<16x16xf16>

// Model states 512 + 128 + 768 = 1408 = 2 Psi + 14 Psi / 4, of which only
// 640 bytes are on the device.
// Reduce-scatter and all-gather of 512 bytes: 2 x 3/4 x 512 = 768 bytes sent
// and received per rank on the ring. The gradient shard (64 x f16) leaves the
// device, the new fp16 shard comes back: 128 bytes each way.
// REPORT:      "per_rank_bytes": {
// REPORT-NEXT:   "parameters": 512,
// REPORT-NEXT:   "gradients": 128,
// REPORT-NEXT:   "optimizer_states": 768,
// REPORT-NEXT:   "model_states": 1408,
// REPORT-NEXT:   "inputs": 512,
// REPORT-NEXT:   "activations_peak": 4,
// REPORT-NEXT:   "communication_buffers_peak": 512,
// REPORT-NEXT:   "max_live": 1668,
// REPORT-NEXT:   "peak": 1728,
// REPORT-NEXT:   "device": 1728,
// REPORT-NEXT:   "host": 896,
// REPORT-NEXT:   "nvme": 0
// REPORT-NEXT: },
// REPORT-NEXT: "communication_bytes_per_step": {
// REPORT-NEXT:   "all_gather": 512,
// REPORT-NEXT:   "reduce_scatter": 512,
// REPORT-NEXT:   "all_reduce": 0,
// REPORT-NEXT:   "total": 1024,
// REPORT-NEXT:   "sent": 768,
// REPORT-NEXT:   "received": 768,
// REPORT-NEXT:   "full_parameter_bytes": 512,
// REPORT-NEXT:   "ratio_to_parameter_bytes": 2,
// REPORT-NEXT:   "host_to_device": 128,
// REPORT-NEXT:   "device_to_host": 128,
// REPORT-NEXT:   "nvme_read": 0,
// REPORT-NEXT:   "nvme_write": 0,
// REPORT-NEXT:   "ranks_per_node": 4
// REPORT-NEXT: },
// REPORT-NEXT: "compute": {
// REPORT-NEXT:   "gemm_flops": {
// REPORT-NEXT:     "f32": 0,
// REPORT-NEXT:     "tf32": 0,
// REPORT-NEXT:     "bf16": 0,
// REPORT-NEXT:     "f16": 8192,
// REPORT-NEXT:     "f64": 0
// REPORT-NEXT:   },
// REPORT-NEXT:   "gemms": 1,
// REPORT-NEXT:   "transposes_feeding_gemm": 0
// REPORT-NEXT: },
// REPORT-NEXT: "memory_spaces": {
// REPORT-NEXT:   "device": {
// REPORT-NEXT:     "arena": 1728,
// REPORT-NEXT:     "parameters": 512,
// REPORT-NEXT:     "gradients": 128,
// REPORT-NEXT:     "optimizer_states": 0,
// REPORT-NEXT:     "inputs": 512,
// REPORT-NEXT:     "activations_peak": 4,
// REPORT-NEXT:     "communication_buffers_peak": 512,
// REPORT-NEXT:     "max_live": 1668
// REPORT-NEXT:   },
// REPORT-NEXT:   "host": {
// REPORT-NEXT:     "arena": 896,
// REPORT-NEXT:     "parameters": 0,
// REPORT-NEXT:     "gradients": 0,
// REPORT-NEXT:     "optimizer_states": 768,
// REPORT-NEXT:     "inputs": 0,
// REPORT-NEXT:     "activations_peak": 0,
// REPORT-NEXT:     "communication_buffers_peak": 128,
// REPORT-NEXT:     "max_live": 896
// REPORT-NEXT:   },

!host_f32 = tensor<64xf32, #zero.memory_space<host>>
!host_f16 = tensor<64xf16, #zero.memory_space<host>>

func.func @step(
    %w: tensor<16x16xf16> {zero.param = "w", zero.layout = #zero.layout<shape = [16, 16], world_size = 4>},
    %w_master: !host_f32 {zero.state = "master", zero.param = "w"},
    %w_m: !host_f32 {zero.state = "exp_avg", zero.param = "w"},
    %w_v: !host_f32 {zero.state = "exp_avg_sq", zero.param = "w"},
    %step: i64 {zero.step},
    %x: tensor<16x16xf16> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<16x16xf16> {zero.param = "w"},
        !host_f32 {zero.state = "master", zero.param = "w"},
        !host_f32 {zero.state = "exp_avg", zero.param = "w"},
        !host_f32 {zero.state = "exp_avg_sq", zero.param = "w"})
    attributes {zero.stage = 2 : i64, zero.world_size = 4 : i64} {
  %zero = arith.constant 0.0 : f16                                           // 0
  %c0 = arith.constant 0.0 : f32                                             // 1
  %loss = tensor.from_elements %c0 : tensor<f32>                             // 2
  %e0 = tensor.empty() : tensor<16x16xf16>                                   // 3
  %f0 = linalg.fill ins(%zero : f16) outs(%e0 : tensor<16x16xf16>) -> tensor<16x16xf16> // 4
  %gw = linalg.matmul ins(%x, %w : tensor<16x16xf16>, tensor<16x16xf16>)
      outs(%f0 : tensor<16x16xf16>) -> tensor<16x16xf16>                     // 5
  %h = zero.reduce_scatter_start avg %gw layouts [
      #zero.layout<shape = [16, 16], world_size = 4>] {zero.grads = ["w"]}
      : tensor<16x16xf16>                                                    // 6
  %gs = zero.wait %h : tensor<64xf16>                                        // 7
  %hs = zero.swap_out_start %gs to host : tensor<64xf16>                     // 8
  %gs_host = zero.wait %hs : !host_f16                                       // 9
  %lr = arith.constant 1.0e-3 : f32                                          // 10
  %w_master1, %w_m1, %w_v1 = zero.adam %w_master, %gs_host, %w_m, %w_v, %step, %lr
      : !host_f32, !host_f16, !host_f32, !host_f32                           // 11
  %w1_host = arith.truncf %w_master1 : !host_f32 to !host_f16                // 12
  %hi = zero.swap_in_start %w1_host : !host_f16                              // 13
  %w1_s = zero.wait %hi : tensor<64xf16>                                     // 14
  %hg = zero.all_gather_start %w1_s layouts [
      #zero.layout<shape = [16, 16], world_size = 4>] : tensor<64xf16>       // 15
  %w1 = zero.wait %hg : tensor<16x16xf16>                                    // 16
  return %loss, %w1, %w_master1, %w_m1, %w_v1
      : tensor<f32>, tensor<16x16xf16>, !host_f32, !host_f32, !host_f32      // 17
}
