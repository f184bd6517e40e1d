// RUN: zero-opt %s --zero-plan-memory=report=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT --input-file=%t.json

// Stage 3, 4 ranks: w and b live as fp16 shards (64 and 4 elements), are
// gathered before the forward and again before the backward, released after
// each use, and their gradients are reduce-scattered. Psi = 272.
//
// Residents: w 128 @0, b 8 @128, w.master/exp_avg/exp_avg_sq 256
// @192/448/704, b.master/exp_avg/exp_avg_sq 16 @960/1024/1088, x 256 @1152,
// w.grad 128 @1408, b.grad 8 @1536 (end 1544). Sum 1344.
// Model states: 136 + 136 + 816 = 1088 = 16 Psi / 4.
//
// Transients from 1600 (program points on the ops):
//   S0 544 [0,1]                  staging of the forward all-gather: two
//                                 operands, 4 ranks x (64 + 4) x 2 bytes
//   W1 512 [0,5], B1 32 [0,5]     gathered for the forward: from the start op
//                                 (the collective writes them from there on)
//                                 until the release
//   A 256 [2,13]                  %z (broadcast and matmul in place)
//   L 4 [7,32]                    the loss
//   S1 544 [9,10]                 staging of the backward all-gather
//   W2 512 [9,14], B2 32 [9,14]   gathered for the backward
//   C 256 [11,24]                 %dz, kept alive by its view %dz3 until 24
//   D 256 [16,21]                 the transposed x
//   R = gw 512 + gb 32 [19,26]    the reduce-scatter bucket
//   S2 544 [25,26]                staging of the reduce-scatter
// In program order, best fit; in a hole, next to the neighbour freed closer
// in time to the buffer's end (below the base: the end of the step, 33):
//   0: S0 @1600 (end 2144), W1 @2176, B1 @2688 (end 2720).
//   2: S0 is dead: A (ends 13) at the top of [1600,2176), next to W1 (5):
//      @1920.
//   7: W1 and B1 are dead: the top comes down to 2176. L (ends 32) at the
//      bottom of [1600,1920), next to the base: @1600.
//   9: S1 finds no hole of 544 bytes: @2176; W2 @2752, end 3264 = the
//      device arena; B2 (ends 14) at the top of [1604,1920), next to A
//      (13): 1888 aligned down, @1856.
//   11: S1 is dead: C (ends 24) at the top of [2176,2752), next to W2 (14)
//      rather than A (13): @2496.
//   16: A, W2, B2 are dead: one hole [1604,2496) below C, and the top at
//      2752. D (ends 21) next to C: @2240.
//   19: R (ends 26) at the top of [1604,2240), next to D (21) rather than L
//      (32): 1696 aligned down, @1664.
//   25: D and C are dead, the top comes down to 2208: S2 @2240.
// Max live: at point 9, 1344 + A + L + S1 + W2 + B2 = 2692.

// CHECK-LABEL: func.func @step(
// CHECK-SAME: zero.offset = 0 : i64, zero.param = "w"
// CHECK-SAME: zero.offset = 128 : i64, zero.param = "b"
// CHECK-SAME: zero.offset = 192 : i64, zero.param = "w", zero.state = "master"
// CHECK-SAME: {zero.data = "x", zero.offset = 1152 : i64}
// CHECK-SAME: zero.memory_plan = {device = 3264 : i64, host = 0 : i64, nvme = 0 : i64}
// CHECK: zero.all_gather_start {{.*}} {zero.staging = array<i64: 1600, 544>}
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 2176, 2688>}
// CHECK: tensor.empty() {zero.offsets = array<i64: 1920>}
// CHECK: zero.release
// CHECK: tensor.empty() {zero.offsets = array<i64: 1600>} : tensor<f32>
// CHECK: zero.all_gather_start {{.*}} {zero.staging = array<i64: 2176, 544>}
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 2752, 1856>}
// CHECK: tensor.empty() {zero.offsets = array<i64: 2496>}
// CHECK: linalg.broadcast {{.*}} {zero.offsets = array<i64: 2496>}
// CHECK: linalg.matmul {zero.offsets = array<i64: 2496>}
// CHECK: zero.release
// A view has the offset of its source.
// CHECK: tensor.expand_shape {{.*}} {zero.offsets = array<i64: 2496>}
// CHECK: tensor.empty() {zero.offsets = array<i64: 2240>} : tensor<16x8xf16>
// CHECK: tensor.empty() {zero.offsets = array<i64: 1664>} : tensor<16x16xf16>
// CHECK: tensor.empty() {zero.offsets = array<i64: 2176>} : tensor<16xf16>
// CHECK: zero.reduce_scatter_start {{.*}} zero.staging = array<i64: 2240, 544>
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 1408, 1536>} : tensor<64xf16>, tensor<4xf16>
// CHECK: zero.adam {{.*}} {zero.offsets = array<i64: 192, 448, 704>}
// CHECK: zero.adam {{.*}} {zero.offsets = array<i64: 960, 1024, 1088>}
// The updated shards overwrite the old ones.
// CHECK: arith.truncf {{.*}} {zero.offsets = array<i64: 0>}
// CHECK: arith.truncf {{.*}} {zero.offsets = array<i64: 128>}

// Gathered parameters are communication buffers: 544 bytes at a time, plus
// the staging buffer of their gather (points 1 and 10: 1088). All-gather
// twice (2 x 544) and reduce-scatter once (544): 3x the parameter bytes; on
// the ring each rank sends and receives 3 x 3/4 x 544 = 1224 bytes.
// REPORT:      "stage": 3,
// REPORT-NEXT: "world_size": 4,
// REPORT-NEXT: "num_parameters": 272,
// REPORT-NEXT: "per_rank_bytes": {
// REPORT-NEXT:   "parameters": 136,
// REPORT-NEXT:   "gradients": 136,
// REPORT-NEXT:   "optimizer_states": 816,
// REPORT-NEXT:   "model_states": 1088,
// REPORT-NEXT:   "inputs": 256,
// REPORT-NEXT:   "activations_peak": 516,
// REPORT-NEXT:   "communication_buffers_peak": 1088,
// REPORT-NEXT:   "max_live": 2692,
// REPORT-NEXT:   "peak": 3264,
// REPORT-NEXT:   "device": 3264,
// REPORT-NEXT:   "host": 0,
// REPORT-NEXT:   "nvme": 0
// REPORT-NEXT: },
// REPORT-NEXT: "communication_bytes_per_step": {
// REPORT-NEXT:   "all_gather": 1088,
// REPORT-NEXT:   "reduce_scatter": 544,
// REPORT-NEXT:   "all_reduce": 0,
// REPORT-NEXT:   "total": 1632,
// REPORT-NEXT:   "sent": 1224,
// REPORT-NEXT:   "received": 1224,
// REPORT-NEXT:   "full_parameter_bytes": 544,
// REPORT-NEXT:   "ratio_to_parameter_bytes": 3,
// REPORT-NEXT:   "host_to_device": 0,
// REPORT-NEXT:   "device_to_host": 0,
// REPORT-NEXT:   "nvme_read": 0,
// REPORT-NEXT:   "nvme_write": 0,
// REPORT-NEXT:   "ranks_per_node": 4
// REPORT-NEXT: },
// REPORT:      "peak_at": {
// REPORT-NEXT:   "point": 9,
// REPORT-NEXT:   "op": "zero.all_gather_start",
// REPORT:      "live_at_peak": [
// REPORT-NEXT:   {
// REPORT-NEXT:     "name": "staging zero.all_gather_start at {{.*}}plan-memory-stage3.mlir:[[#@LINE+48]]:9",
// REPORT-NEXT:     "category": "communication buffers",
// REPORT-NEXT:     "role": "staging",
// REPORT-NEXT:     "bytes": 544,
// REPORT-NEXT:     "offset": 2176
// REPORT-NEXT:   },
// REPORT-NEXT:   {
// REPORT-NEXT:     "name": "gathered w",
// REPORT-NEXT:     "category": "communication buffers",
// REPORT-NEXT:     "role": "gathered",
// REPORT-NEXT:     "bytes": 512,
// REPORT-NEXT:     "offset": 2752
// REPORT-NEXT:   },

func.func @step(
    %w: tensor<64xf16> {zero.param = "w", zero.layout = #zero.layout<shape = [16, 16], world_size = 4>},
    %b: tensor<4xf16> {zero.param = "b", zero.layout = #zero.layout<shape = [16], world_size = 4>},
    %w_master: tensor<64xf32> {zero.state = "master", zero.param = "w"},
    %w_m: tensor<64xf32> {zero.state = "exp_avg", zero.param = "w"},
    %w_v: tensor<64xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
    %b_master: tensor<4xf32> {zero.state = "master", zero.param = "b"},
    %b_m: tensor<4xf32> {zero.state = "exp_avg", zero.param = "b"},
    %b_v: tensor<4xf32> {zero.state = "exp_avg_sq", zero.param = "b"},
    %step: i64 {zero.step},
    %x: tensor<8x16xf16> {zero.data = "x"})
    -> (tensor<f32> {zero.loss},
        tensor<64xf16> {zero.param = "w"}, tensor<4xf16> {zero.param = "b"},
        tensor<64xf32> {zero.state = "master", zero.param = "w"},
        tensor<64xf32> {zero.state = "exp_avg", zero.param = "w"},
        tensor<64xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
        tensor<4xf32> {zero.state = "master", zero.param = "b"},
        tensor<4xf32> {zero.state = "exp_avg", zero.param = "b"},
        tensor<4xf32> {zero.state = "exp_avg_sq", zero.param = "b"})
    attributes {zero.stage = 3 : i64, zero.world_size = 4 : i64} {
  // Forward.
  %h0 = zero.all_gather_start %w, %b layouts [
      #zero.layout<shape = [16, 16], world_size = 4>,
      #zero.layout<shape = [16], world_size = 4>] : tensor<64xf16>, tensor<4xf16> // 0
  %wf, %bf = zero.wait %h0 : tensor<16x16xf16>, tensor<16xf16>               // 1
  %e0 = tensor.empty() : tensor<8x16xf16>                                   // 2
  %y = linalg.broadcast ins(%bf : tensor<16xf16>) outs(%e0 : tensor<8x16xf16>) dimensions = [0] // 3
  %z = linalg.matmul ins(%x, %wf : tensor<8x16xf16>, tensor<16x16xf16>)
      outs(%y : tensor<8x16xf16>) -> tensor<8x16xf16>                        // 4
  zero.release %wf, %bf : tensor<16x16xf16>, tensor<16xf16>                 // 5
  %c0 = arith.constant 0.0 : f32                                             // 6
  %e1 = tensor.empty() : tensor<f32>                                         // 7
  %loss = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<f32>) -> tensor<f32>  // 8
  // Backward: dz = z w + b stands for the backward of the rest of the model.
  %h1 = zero.all_gather_start %w, %b layouts [
      #zero.layout<shape = [16, 16], world_size = 4>,
      #zero.layout<shape = [16], world_size = 4>] : tensor<64xf16>, tensor<4xf16> // 9
  %wf2, %bf2 = zero.wait %h1 : tensor<16x16xf16>, tensor<16xf16>             // 10
  %e2 = tensor.empty() : tensor<8x16xf16>                                   // 11
  %y2 = linalg.broadcast ins(%bf2 : tensor<16xf16>) outs(%e2 : tensor<8x16xf16>) dimensions = [0] // 12
  %dz = linalg.matmul ins(%z, %wf2 : tensor<8x16xf16>, tensor<16x16xf16>)
      outs(%y2 : tensor<8x16xf16>) -> tensor<8x16xf16>                       // 13
  zero.release %wf2, %bf2 : tensor<16x16xf16>, tensor<16xf16>               // 14
  %dz3 = tensor.expand_shape %dz [[0, 1], [2]] output_shape [2, 4, 16]
      : tensor<8x16xf16> into tensor<2x4x16xf16>                             // 15
  %e3 = tensor.empty() : tensor<16x8xf16>                                    // 16
  %xt = linalg.transpose ins(%x : tensor<8x16xf16>) outs(%e3 : tensor<16x8xf16>) permutation = [1, 0] // 17
  %zero = arith.constant 0.0 : f16                                           // 18
  %e4 = tensor.empty() : tensor<16x16xf16>                                   // 19
  %f4 = linalg.fill ins(%zero : f16) outs(%e4 : tensor<16x16xf16>) -> tensor<16x16xf16> // 20
  %gw = linalg.matmul ins(%xt, %dz : tensor<16x8xf16>, tensor<8x16xf16>)
      outs(%f4 : tensor<16x16xf16>) -> tensor<16x16xf16>                     // 21
  %e5 = tensor.empty() : tensor<16xf16>                                      // 22
  %f5 = linalg.fill ins(%zero : f16) outs(%e5 : tensor<16xf16>) -> tensor<16xf16> // 23
  %gb = linalg.reduce ins(%dz3 : tensor<2x4x16xf16>) outs(%f5 : tensor<16xf16>) dimensions = [0, 1] // 24
    (%in: f16, %acc: f16) {
      %s = arith.addf %in, %acc : f16
      linalg.yield %s : f16
    }
  %h2 = zero.reduce_scatter_start avg %gw, %gb layouts [
      #zero.layout<shape = [16, 16], world_size = 4>,
      #zero.layout<shape = [16], world_size = 4>] {zero.grads = ["w", "b"]}
      : tensor<16x16xf16>, tensor<16xf16>                                    // 25
  %gw_s, %gb_s = zero.wait %h2 : tensor<64xf16>, tensor<4xf16>               // 26
  %lr = arith.constant 1.0e-3 : f32                                          // 27
  %w_master1, %w_m1, %w_v1 = zero.adam %w_master, %gw_s, %w_m, %w_v, %step, %lr
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>       // 28
  %b_master1, %b_m1, %b_v1 = zero.adam %b_master, %gb_s, %b_m, %b_v, %step, %lr
      : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>           // 29
  %w1 = arith.truncf %w_master1 : tensor<64xf32> to tensor<64xf16>           // 30
  %b1 = arith.truncf %b_master1 : tensor<4xf32> to tensor<4xf16>             // 31
  return %loss, %w1, %b1, %w_master1, %w_m1, %w_v1, %b_master1, %b_m1, %b_v1
      : tensor<f32>, tensor<64xf16>, tensor<4xf16>, tensor<64xf32>,
        tensor<64xf32>, tensor<64xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>                                                        // 32
}
