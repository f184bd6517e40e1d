// RUN: zero-opt %s --zero-plan-memory=report=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT --input-file=%t.json
// RUN: zero-opt %s --zero-plan-memory="contiguous-gradients=false report=%t.off.json" \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: FileCheck %s --check-prefix=REPORT-OFF --input-file=%t.off.json
// Planning a planned step again gives the same plan.
// RUN: zero-opt %s --zero-plan-memory > %t.1.mlir
// RUN: zero-opt %t.1.mlir --zero-plan-memory > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// Stage 0, 4 ranks, fp16 parameters with fp32 master weights and Adam:
// w 16x16 and b 16, Psi = 272 parameters. Everything is replicated.
//
// Residents, in argument order, each at a multiple of 64 bytes:
//   w 512 @0, b 32 @512, w.master/exp_avg/exp_avg_sq 1024 @576/1600/2624,
//   b.master/exp_avg/exp_avg_sq 64 @3648/3712/3776, x 256 @3840 (end 4096),
//   then the reduced gradients w.grad 512 @4096, b.grad 32 @4608 (end 4640).
// Model states: 2Psi + 2Psi + 12Psi = 544 + 544 + 3264 = 4352 = 16 Psi.
//
// Transients (program points in the comments on the ops), from 4672:
//   A  256 [0,14]  %e0, written in place by the broadcast and the matmul (%z)
//   B    4 [4,22]  the loss
//   C  256 [6,11]  the transposed x
//   D  512 [8,16]  %gw (fill and matmul in place), read by the all-reduce
//   E   32 [12,16] %gb
//   S  544 [15,16] the staging buffer of the all-reduce: two operands, packed
// With contiguous gradients, D and E form one region R of 576 bytes, reserved
// over [8,16] with E at the next multiple of 64 after D (every buffer starts
// aligned, in a region too). In program order, best fit (a block's
// top or bottom: next to the neighbour freed closer in time):
//   0: A @4672; 4: B @4928; 6: C @4992 (the next multiple of 64 past B);
//   8: R @5248 (end 5824); 15: C and A are dead, leaving holes of 256
//   aligned bytes at 4672 and 4992; S does not fit: @5824 (right past R),
//   end 6368 = the device arena.
// Max live: at point 15, residents 4608 + B + R + S = 5732 (point 8: 5700).

// CHECK-LABEL: func.func @step(
// CHECK-SAME: zero.offset = 0 : i64, zero.param = "w"
// CHECK-SAME: zero.offset = 512 : i64, zero.param = "b"
// CHECK-SAME: zero.offset = 576 : i64, zero.param = "w", zero.state = "master"
// CHECK-SAME: zero.offset = 1600 : i64, zero.param = "w", zero.state = "exp_avg"
// CHECK-SAME: zero.offset = 2624 : i64, zero.param = "w", zero.state = "exp_avg_sq"
// CHECK-SAME: zero.offset = 3648 : i64, zero.param = "b", zero.state = "master"
// CHECK-SAME: zero.offset = 3712 : i64, zero.param = "b", zero.state = "exp_avg"
// CHECK-SAME: zero.offset = 3776 : i64, zero.param = "b", zero.state = "exp_avg_sq"
// CHECK-SAME: %{{.*}}: i64 {zero.step}
// CHECK-SAME: {zero.data = "x", zero.offset = 3840 : i64}
// CHECK-SAME: zero.memory_plan = {device = 6368 : i64, host = 0 : i64, nvme = 0 : i64}
// CHECK-NOT: zero.space
// CHECK: tensor.empty() {zero.offsets = array<i64: 4672>} : tensor<8x16xf16>
// CHECK: linalg.broadcast {{.*}} {zero.offsets = array<i64: 4672>}
// CHECK: linalg.matmul {zero.offsets = array<i64: 4672>}
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: tensor.empty() {zero.offsets = array<i64: 4928>} : tensor<f32>
// CHECK: linalg.fill {zero.offsets = array<i64: 4928>}
// CHECK: tensor.empty() {zero.offsets = array<i64: 4992>} : tensor<16x8xf16>
// CHECK: linalg.transpose {{.*}} {zero.offsets = array<i64: 4992>}
// CHECK: tensor.empty() {zero.offsets = array<i64: 5248>} : tensor<16x16xf16>
// CHECK: linalg.fill {zero.offsets = array<i64: 5248>}
// CHECK: linalg.matmul {zero.offsets = array<i64: 5248>}
// The bias gradient follows the weight gradient in the bucket: 5248 + 512.
// CHECK: tensor.empty() {zero.offsets = array<i64: 5760>} : tensor<16xf16>
// CHECK: linalg.fill {zero.offsets = array<i64: 5760>}
// CHECK: linalg.reduce {{.*}} {zero.offsets = array<i64: 5760>}
// The start has no result to place; its staging buffer is `offset, bytes`.
// CHECK: zero.all_reduce_start
// CHECK-NOT: zero.offsets
// CHECK-SAME: zero.staging = array<i64: 5824, 544>
// CHECK-SAME: : tensor<16x16xf16>, tensor<16xf16>
// CHECK: zero.wait %{{.*}} {zero.offsets = array<i64: 4096, 4608>}
// The optimizer updates the states in place and the casts write the new
// parameters into the old ones.
// CHECK: zero.adam {{.*}} {zero.offsets = array<i64: 576, 1600, 2624>}
// CHECK: zero.adam {{.*}} {zero.offsets = array<i64: 3648, 3712, 3776>}
// CHECK: arith.truncf %{{.*}} {zero.offsets = array<i64: 0>}
// CHECK: arith.truncf %{{.*}} {zero.offsets = array<i64: 512>}

// Model states 4352 = 16 Psi; activations peak A + B + C = 516 (points
// 6-11); communication buffers peak R + S = 1088 (points 15-16); all-reduce
// 2 x 544 bytes = 2x the parameter bytes. On the ring, each rank sends and
// receives 2 x (4-1)/4 x 544 = 816 bytes.
// REPORT:      "stage": 0,
// REPORT-NEXT: "world_size": 4,
// REPORT-NEXT: "num_parameters": 272,
// REPORT-NEXT: "per_rank_bytes": {
// REPORT-NEXT:   "parameters": 544,
// REPORT-NEXT:   "gradients": 544,
// REPORT-NEXT:   "optimizer_states": 3264,
// REPORT-NEXT:   "model_states": 4352,
// REPORT-NEXT:   "inputs": 256,
// REPORT-NEXT:   "activations_peak": 516,
// REPORT-NEXT:   "communication_buffers_peak": 1088,
// REPORT-NEXT:   "max_live": 5700,
// REPORT-NEXT:   "peak": 6368,
// REPORT-NEXT:   "device": 6368,
// REPORT-NEXT:   "host": 0,
// REPORT-NEXT:   "nvme": 0
// REPORT-NEXT: },
// REPORT-NEXT: "communication_bytes_per_step": {
// REPORT-NEXT:   "all_gather": 0,
// REPORT-NEXT:   "reduce_scatter": 0,
// REPORT-NEXT:   "all_reduce": 1088,
// REPORT-NEXT:   "total": 1088,
// REPORT-NEXT:   "sent": 816,
// REPORT-NEXT:   "received": 816,
// REPORT-NEXT:   "full_parameter_bytes": 544,
// REPORT-NEXT:   "ratio_to_parameter_bytes": 2,
// REPORT-NEXT:   "host_to_device": 0,
// REPORT-NEXT:   "device_to_host": 0,
// REPORT-NEXT:   "nvme_read": 0,
// REPORT-NEXT:   "nvme_write": 0,
// REPORT-NEXT:   "ranks_per_node": 4
// REPORT-NEXT: },
// REPORT:      "peak_at": {
// REPORT-NEXT:   "point": 15,
// REPORT-NEXT:   "op": "zero.all_reduce_start",
// REPORT-NEXT:   "loc": "{{.*}}plan-memory.mlir:[[#@LINE+99]]:8"
// REPORT-NEXT: },
// REPORT-NEXT: "live_at_peak": [
// REPORT-NEXT:   {
// REPORT-NEXT:     "name": "w.master",
// REPORT-NEXT:     "category": "optimizer states",
// REPORT-NEXT:     "bytes": 1024,
// REPORT-NEXT:     "offset": 576
// REPORT-NEXT:   },
// REPORT:          "name": "staging zero.all_reduce_start at {{.*}}plan-memory.mlir:[[#@LINE+90]]:8",
// REPORT-NEXT:     "category": "communication buffers",
// REPORT-NEXT:     "role": "staging",
// REPORT-NEXT:     "bytes": 544,
// REPORT-NEXT:     "offset": 5824
// REPORT:          "name": "linalg.matmul at {{.*}}plan-memory.mlir:[[#@LINE+76]]:9",
// REPORT-NEXT:     "category": "communication buffers",
// REPORT-NEXT:     "role": "in flight",
// REPORT-NEXT:     "bytes": 512,
// REPORT-NEXT:     "offset": 5248
// REPORT:      "contiguous_gradient_buckets": [
// REPORT-NEXT:   {
// REPORT-NEXT:     "op": "zero.all_reduce_start at {{.*}}",
// REPORT-NEXT:     "space": "device",
// REPORT-NEXT:     "offset": 5248,
// REPORT-NEXT:     "bytes": 576,
// REPORT-NEXT:     "first_point": 8,
// REPORT-NEXT:     "last_point": 16
// REPORT-NEXT:   }
// REPORT-NEXT: ],
// REPORT-NEXT: "options": {
// REPORT-NEXT:   "contiguous_gradients": true,
// REPORT-NEXT:   "alignment": 64
// REPORT-NEXT: }

// Without contiguous gradients, D and E are placed on their own: E lives
// over [12,16] only and takes C's place once C is dead.
//   0: A @4672; 4: B @4928; 6: C @4992; 8: D @5248 (end 5760);
//   12: C is dead: E goes into its hole [4932,5248), at its top next to D
//   (both freed after 16; B, below, after 22): 5248 - 32 = 5216, aligned
//   down to 5184; 15: S @5760, end 6304.
// Max live at point 15: 4608 + B + D + E + S = 5700.
// OFF: zero.memory_plan = {device = 6304 : i64, host = 0 : i64, nvme = 0 : i64}
// OFF: tensor.empty() {zero.offsets = array<i64: 4672>} : tensor<8x16xf16>
// OFF: tensor.empty() {zero.offsets = array<i64: 4928>} : tensor<f32>
// OFF: tensor.empty() {zero.offsets = array<i64: 4992>} : tensor<16x8xf16>
// OFF: tensor.empty() {zero.offsets = array<i64: 5248>} : tensor<16x16xf16>
// OFF: tensor.empty() {zero.offsets = array<i64: 5184>} : tensor<16xf16>
// OFF: linalg.reduce {{.*}} {zero.offsets = array<i64: 5184>}
// OFF: zero.all_reduce_start {{.*}} zero.staging = array<i64: 5760, 544>
// REPORT-OFF:      "communication_buffers_peak": 1088,
// REPORT-OFF-NEXT: "max_live": 5700,
// REPORT-OFF-NEXT: "peak": 6304
// REPORT-OFF:      "contiguous_gradient_buckets": [],
// REPORT-OFF-NEXT: "options": {
// REPORT-OFF-NEXT:   "contiguous_gradients": false,

func.func @step(
    %w: tensor<16x16xf16> {zero.param = "w", zero.layout = #zero.layout<shape = [16, 16], world_size = 4>},
    %b: tensor<16xf16> {zero.param = "b", zero.layout = #zero.layout<shape = [16], world_size = 4>},
    %w_master: tensor<16x16xf32> {zero.state = "master", zero.param = "w"},
    %w_m: tensor<16x16xf32> {zero.state = "exp_avg", zero.param = "w"},
    %w_v: tensor<16x16xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
    %b_master: tensor<16xf32> {zero.state = "master", zero.param = "b"},
    %b_m: tensor<16xf32> {zero.state = "exp_avg", zero.param = "b"},
    %b_v: tensor<16xf32> {zero.state = "exp_avg_sq", zero.param = "b"},
    %step: i64 {zero.step},
    %x: tensor<8x16xf16> {zero.data = "x"})
    -> (tensor<f32> {zero.loss},
        tensor<16x16xf16> {zero.param = "w"}, tensor<16xf16> {zero.param = "b"},
        tensor<16x16xf32> {zero.state = "master", zero.param = "w"},
        tensor<16x16xf32> {zero.state = "exp_avg", zero.param = "w"},
        tensor<16x16xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
        tensor<16xf32> {zero.state = "master", zero.param = "b"},
        tensor<16xf32> {zero.state = "exp_avg", zero.param = "b"},
        tensor<16xf32> {zero.state = "exp_avg_sq", zero.param = "b"})
    attributes {zero.stage = 0 : i64, zero.world_size = 4 : i64} {
  // Forward: z = x w + b; the loss stands for the rest of the model.
  %e0 = tensor.empty() : tensor<8x16xf16>                                   // 0
  %y = linalg.broadcast ins(%b : tensor<16xf16>) outs(%e0 : tensor<8x16xf16>) dimensions = [0] // 1
  %z = linalg.matmul ins(%x, %w : tensor<8x16xf16>, tensor<16x16xf16>)
      outs(%y : tensor<8x16xf16>) -> tensor<8x16xf16>                        // 2
  %c0 = arith.constant 0.0 : f32                                             // 3
  %e1 = tensor.empty() : tensor<f32>                                         // 4
  %loss = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<f32>) -> tensor<f32>  // 5
  // Backward with dz = z: gw = x^T dz, gb = colsum(dz).
  %e2 = tensor.empty() : tensor<16x8xf16>                                    // 6
  %xt = linalg.transpose ins(%x : tensor<8x16xf16>) outs(%e2 : tensor<16x8xf16>) permutation = [1, 0] // 7
  %e3 = tensor.empty() : tensor<16x16xf16>                                   // 8
  %zero = arith.constant 0.0 : f16                                           // 9
  %f3 = linalg.fill ins(%zero : f16) outs(%e3 : tensor<16x16xf16>) -> tensor<16x16xf16> // 10
  %gw = linalg.matmul ins(%xt, %z : tensor<16x8xf16>, tensor<8x16xf16>)
      outs(%f3 : tensor<16x16xf16>) -> tensor<16x16xf16>                     // 11
  %e4 = tensor.empty() : tensor<16xf16>                                      // 12
  %f4 = linalg.fill ins(%zero : f16) outs(%e4 : tensor<16xf16>) -> tensor<16xf16> // 13
  %gb = linalg.reduce ins(%z : tensor<8x16xf16>) outs(%f4 : tensor<16xf16>) dimensions = [0] // 14
    (%in: f16, %acc: f16) {
      %s = arith.addf %in, %acc : f16
      linalg.yield %s : f16
    }
  %h = zero.all_reduce_start avg %gw, %gb {zero.grads = ["w", "b"]}
      : tensor<16x16xf16>, tensor<16xf16>                                    // 15
  %gw_r, %gb_r = zero.wait %h : tensor<16x16xf16>, tensor<16xf16>            // 16
  %lr = arith.constant 1.0e-3 : f32                                          // 17
  %w_master1, %w_m1, %w_v1 = zero.adam %w_master, %gw_r, %w_m, %w_v, %step, %lr
      : tensor<16x16xf32>, tensor<16x16xf16>, tensor<16x16xf32>, tensor<16x16xf32> // 18
  %b_master1, %b_m1, %b_v1 = zero.adam %b_master, %gb_r, %b_m, %b_v, %step, %lr
      : tensor<16xf32>, tensor<16xf16>, tensor<16xf32>, tensor<16xf32>       // 19
  %w1 = arith.truncf %w_master1 : tensor<16x16xf32> to tensor<16x16xf16>     // 20
  %b1 = arith.truncf %b_master1 : tensor<16xf32> to tensor<16xf16>           // 21
  return %loss, %w1, %b1, %w_master1, %w_m1, %w_v1, %b_master1, %b_m1, %b_v1
      : tensor<f32>, tensor<16x16xf16>, tensor<16xf16>, tensor<16x16xf32>,
        tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>,
        tensor<16xf32>                                                       // 22
}
