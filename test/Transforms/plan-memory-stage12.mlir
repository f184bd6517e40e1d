// RUN: zero-opt %s --split-input-file --zero-plan-memory | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-plan-memory=report=%t.json -o /dev/null
// The report of the last split (gradient accumulation) survives in %t.json;
// the first two are checked one by one below.
// RUN: FileCheck %s --check-prefix=GAS-REPORT --input-file=%t.json
// RUN: zero-opt %s --zero-plan-memory="entry=stage1 report=%t.1.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=STAGE1-REPORT --input-file=%t.1.json

// Stage 1, 4 ranks, the step of plan-memory.mlir with partitioned optimizer
// states. As in DeepSpeed, the gradients are all-reduced whole and each rank
// steps its shard (zero.local_shard); the updated fp16 shards are gathered
// back into the full parameters. Psi = 272, shards w 64 and b 4 (no padding).
//
// Residents: w 512 @0, b 32 @512, w.master/exp_avg/exp_avg_sq 256
// @576/832/1088, b.master/exp_avg/exp_avg_sq 16 @1344/1408/1472, x 256 @1536,
// w.grad 512 @1792, b.grad 32 @2304 (end 2336). Sum 2160.
// Model states: 544 + 544 + 3 x 272 = 1904 = 4 Psi + 12 Psi / 4.
//
// Transients from 2368:
//   A 256 [0,14], B 4 [4,26], C 256 [6,11], R = gw 512 + gb 32 [8,16],
//   S 544 [15,16] (the all-reduce's staging buffer: two operands),
//   G 128 [17,20] and H 8 [18,21] (the gradient shards),
//   I 128 [22,25] and J 8 [23,25] (the new fp16 shards, all-gathered),
//   T 544 [24,25] (the all-gather's staging buffer: 4 x (64 + 4) x 2).
// In program order: A @2368; B @2624; C @2688; R @2944 (end 3488); at 15
// the holes of A and C hold 256 aligned bytes each: S @3520, end 4064 = the
// device arena. At 17 R and S are dead and the top comes down to B's end
// (2628). G goes into A's hole [2368,2624), at its top: B above is freed
// after 26, closer to G's 20 than what lies below the base (the end of the
// step, 27): @2496; H (ends 21) at the top of the rest, next to G (20):
// 2496 - 8 aligned down, @2432. At 22 they are dead: I @2496 and J @2432 the
// same way; T finds no hole of 544 bytes: @2688.
// Max live at point 15: 2160 + B + R + S = 3252 (point 8: 3220).

// CHECK-LABEL: func.func @stage1(
// CHECK-SAME: zero.memory_plan = {device = 4064 : i64, host = 0 : i64, nvme = 0 : i64}
// CHECK: tensor.empty() {zero.offsets = array<i64: 2368>} : tensor<8x16xf16>
// CHECK: tensor.empty() {zero.offsets = array<i64: 2624>} : tensor<f32>
// CHECK: tensor.empty() {zero.offsets = array<i64: 2688>} : tensor<16x8xf16>
// CHECK: tensor.empty() {zero.offsets = array<i64: 2944>} : tensor<16x16xf16>
// CHECK: tensor.empty() {zero.offsets = array<i64: 3456>} : tensor<16xf16>
// CHECK: zero.all_reduce_start {{.*}} {zero.grads = ["w", "b"], zero.staging = array<i64: 3520, 544>}
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 1792, 2304>}
// CHECK: zero.local_shard {{.*}} {zero.offsets = array<i64: 2496>}
// CHECK: zero.local_shard {{.*}} {zero.offsets = array<i64: 2432>}
// CHECK: zero.adam {{.*}} {zero.offsets = array<i64: 576, 832, 1088>}
// CHECK: zero.adam {{.*}} {zero.offsets = array<i64: 1344, 1408, 1472>}
// CHECK: arith.truncf {{.*}} {zero.offsets = array<i64: 2496>}
// CHECK: arith.truncf {{.*}} {zero.offsets = array<i64: 2432>}
// CHECK: zero.all_gather_start {{.*}} {zero.staging = array<i64: 2688, 544>}
// The gathered parameters are written into the old ones.
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 0, 512>}

// All-reduce (2 x 544) and all-gather (544): 3x the parameter bytes, the
// price of DeepSpeed's all-reduce at stage 1 (the ZeRO paper's 2x needs a
// reduce-scatter, as at stage 2 below). On the ring each rank sends (and
// receives) 3/4 of each padded bucket, twice for the all-reduce:
// 2 x 408 + 408 = 1224.
// STAGE1-REPORT:      "stage": 1,
// STAGE1-REPORT-NEXT: "world_size": 4,
// STAGE1-REPORT-NEXT: "num_parameters": 272,
// STAGE1-REPORT-NEXT: "per_rank_bytes": {
// STAGE1-REPORT-NEXT:   "parameters": 544,
// STAGE1-REPORT-NEXT:   "gradients": 544,
// STAGE1-REPORT-NEXT:   "optimizer_states": 816,
// STAGE1-REPORT-NEXT:   "model_states": 1904,
// STAGE1-REPORT-NEXT:   "inputs": 256,
// STAGE1-REPORT-NEXT:   "activations_peak": 516,
// STAGE1-REPORT-NEXT:   "communication_buffers_peak": 1088,
// STAGE1-REPORT-NEXT:   "max_live": 3252,
// STAGE1-REPORT-NEXT:   "peak": 4064,
// STAGE1-REPORT-NEXT:   "device": 4064,
// STAGE1-REPORT-NEXT:   "host": 0,
// STAGE1-REPORT-NEXT:   "nvme": 0
// STAGE1-REPORT-NEXT: },
// STAGE1-REPORT-NEXT: "communication_bytes_per_step": {
// STAGE1-REPORT-NEXT:   "all_gather": 544,
// STAGE1-REPORT-NEXT:   "reduce_scatter": 0,
// STAGE1-REPORT-NEXT:   "all_reduce": 1088,
// STAGE1-REPORT-NEXT:   "total": 1632,
// STAGE1-REPORT-NEXT:   "sent": 1224,
// STAGE1-REPORT-NEXT:   "received": 1224,
// STAGE1-REPORT-NEXT:   "full_parameter_bytes": 544,
// STAGE1-REPORT-NEXT:   "ratio_to_parameter_bytes": 3,
// STAGE1-REPORT-NEXT:   "host_to_device": 0,
// STAGE1-REPORT-NEXT:   "device_to_host": 0,
// STAGE1-REPORT-NEXT:   "nvme_read": 0,
// STAGE1-REPORT-NEXT:   "nvme_write": 0,
// STAGE1-REPORT-NEXT:   "ranks_per_node": 4
// STAGE1-REPORT-NEXT: },

func.func @stage1(
    %w: tensor<16x16xf16> {zero.param = "w", zero.layout = #zero.layout<shape = [16, 16], world_size = 4>},
    %b: tensor<16xf16> {zero.param = "b", zero.layout = #zero.layout<shape = [16], world_size = 4>},
    %w_master: tensor<64xf32> {zero.state = "master", zero.param = "w"},
    %w_m: tensor<64xf32> {zero.state = "exp_avg", zero.param = "w"},
    %w_v: tensor<64xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
    %b_master: tensor<4xf32> {zero.state = "master", zero.param = "b"},
    %b_m: tensor<4xf32> {zero.state = "exp_avg", zero.param = "b"},
    %b_v: tensor<4xf32> {zero.state = "exp_avg_sq", zero.param = "b"},
    %step: i64 {zero.step},
    %x: tensor<8x16xf16> {zero.data = "x"})
    -> (tensor<f32> {zero.loss},
        tensor<16x16xf16> {zero.param = "w"}, tensor<16xf16> {zero.param = "b"},
        tensor<64xf32> {zero.state = "master", zero.param = "w"},
        tensor<64xf32> {zero.state = "exp_avg", zero.param = "w"},
        tensor<64xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
        tensor<4xf32> {zero.state = "master", zero.param = "b"},
        tensor<4xf32> {zero.state = "exp_avg", zero.param = "b"},
        tensor<4xf32> {zero.state = "exp_avg_sq", zero.param = "b"})
    attributes {zero.stage = 1 : i64, zero.world_size = 4 : i64} {
  %e0 = tensor.empty() : tensor<8x16xf16>                                   // 0
  %y = linalg.broadcast ins(%b : tensor<16xf16>) outs(%e0 : tensor<8x16xf16>) dimensions = [0] // 1
  %z = linalg.matmul ins(%x, %w : tensor<8x16xf16>, tensor<16x16xf16>)
      outs(%y : tensor<8x16xf16>) -> tensor<8x16xf16>                        // 2
  %c0 = arith.constant 0.0 : f32                                             // 3
  %e1 = tensor.empty() : tensor<f32>                                         // 4
  %loss = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<f32>) -> tensor<f32>  // 5
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
  %gw_s = zero.local_shard %gw_r layout #zero.layout<shape = [16, 16], world_size = 4>
      into tensor<64xf16> : tensor<16x16xf16>                                // 17
  %gb_s = zero.local_shard %gb_r layout #zero.layout<shape = [16], world_size = 4>
      into tensor<4xf16> : tensor<16xf16>                                    // 18
  %lr = arith.constant 1.0e-3 : f32                                          // 19
  %w_master1, %w_m1, %w_v1 = zero.adam %w_master, %gw_s, %w_m, %w_v, %step, %lr
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>       // 20
  %b_master1, %b_m1, %b_v1 = zero.adam %b_master, %gb_s, %b_m, %b_v, %step, %lr
      : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>           // 21
  %w1_s = arith.truncf %w_master1 : tensor<64xf32> to tensor<64xf16>         // 22
  %b1_s = arith.truncf %b_master1 : tensor<4xf32> to tensor<4xf16>           // 23
  %hg = zero.all_gather_start %w1_s, %b1_s layouts [
      #zero.layout<shape = [16, 16], world_size = 4>,
      #zero.layout<shape = [16], world_size = 4>] : tensor<64xf16>, tensor<4xf16> // 24
  %w1, %b1 = zero.wait %hg : tensor<16x16xf16>, tensor<16xf16>               // 25
  return %loss, %w1, %b1, %w_master1, %w_m1, %w_v1, %b_master1, %b_m1, %b_v1
      : tensor<f32>, tensor<16x16xf16>, tensor<16xf16>, tensor<64xf32>,
        tensor<64xf32>, tensor<64xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>                                                        // 26
}

// -----

// Stage 2: the gradients are reduce-scattered, each rank keeps its shard.
//
// Residents: as at stage 1 up to x 256 @1536 (end 1792), then w.grad 128
// @1792, b.grad 8 @1920 (end 1928). Sum 1752.
// Model states: 544 + 136 + 816 = 1496 = 2 Psi + 14 Psi / 4.
//
// Transients from 1984: A 256 [0,14], B 4 [4,24], C 256 [6,11],
// R = gw 512 + gb 32 [8,16], S 544 [15,16] (the reduce-scatter's staging
// buffer: 4 x (64 + 4) x 2), I 128 [20,23], J 8 [21,23], T 544 [22,23] (the
// all-gather's).
// In program order: A @1984; B @2240; C @2304; R @2560 (end 3104); S finds
// no hole of 544 bytes: @3136, end 3680 = the device arena. At 20, R and S
// are dead: I takes the top of A's hole [1984,2240), next to B (freed after
// 24, the end of the step 25 below the base): @2112; J the top of the rest,
// next to I: @2048; T @2304 (above B).
// Max live at point 15: 1752 + B + R + S = 2844 (point 8: 2812).

// CHECK-LABEL: func.func @stage2(
// CHECK-SAME: zero.memory_plan = {device = 3680 : i64, host = 0 : i64, nvme = 0 : i64}
// CHECK: tensor.empty() {zero.offsets = array<i64: 1984>} : tensor<8x16xf16>
// CHECK: tensor.empty() {zero.offsets = array<i64: 2240>} : tensor<f32>
// CHECK: tensor.empty() {zero.offsets = array<i64: 2304>} : tensor<16x8xf16>
// CHECK: tensor.empty() {zero.offsets = array<i64: 2560>} : tensor<16x16xf16>
// CHECK: tensor.empty() {zero.offsets = array<i64: 3072>} : tensor<16xf16>
// CHECK: zero.reduce_scatter_start {{.*}} zero.staging = array<i64: 3136, 544>
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 1792, 1920>} : tensor<64xf16>, tensor<4xf16>
// CHECK: arith.truncf {{.*}} {zero.offsets = array<i64: 2112>}
// CHECK: arith.truncf {{.*}} {zero.offsets = array<i64: 2048>}
// CHECK: zero.all_gather_start {{.*}} {zero.staging = array<i64: 2304, 544>}
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 0, 512>}

func.func @stage2(
    %w: tensor<16x16xf16> {zero.param = "w", zero.layout = #zero.layout<shape = [16, 16], world_size = 4>},
    %b: tensor<16xf16> {zero.param = "b", zero.layout = #zero.layout<shape = [16], world_size = 4>},
    %w_master: tensor<64xf32> {zero.state = "master", zero.param = "w"},
    %w_m: tensor<64xf32> {zero.state = "exp_avg", zero.param = "w"},
    %w_v: tensor<64xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
    %b_master: tensor<4xf32> {zero.state = "master", zero.param = "b"},
    %b_m: tensor<4xf32> {zero.state = "exp_avg", zero.param = "b"},
    %b_v: tensor<4xf32> {zero.state = "exp_avg_sq", zero.param = "b"},
    %step: i64 {zero.step},
    %x: tensor<8x16xf16> {zero.data = "x"})
    -> (tensor<f32> {zero.loss},
        tensor<16x16xf16> {zero.param = "w"}, tensor<16xf16> {zero.param = "b"},
        tensor<64xf32> {zero.state = "master", zero.param = "w"},
        tensor<64xf32> {zero.state = "exp_avg", zero.param = "w"},
        tensor<64xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
        tensor<4xf32> {zero.state = "master", zero.param = "b"},
        tensor<4xf32> {zero.state = "exp_avg", zero.param = "b"},
        tensor<4xf32> {zero.state = "exp_avg_sq", zero.param = "b"})
    attributes {zero.stage = 2 : i64, zero.world_size = 4 : i64} {
  %e0 = tensor.empty() : tensor<8x16xf16>                                   // 0
  %y = linalg.broadcast ins(%b : tensor<16xf16>) outs(%e0 : tensor<8x16xf16>) dimensions = [0] // 1
  %z = linalg.matmul ins(%x, %w : tensor<8x16xf16>, tensor<16x16xf16>)
      outs(%y : tensor<8x16xf16>) -> tensor<8x16xf16>                        // 2
  %c0 = arith.constant 0.0 : f32                                             // 3
  %e1 = tensor.empty() : tensor<f32>                                         // 4
  %loss = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<f32>) -> tensor<f32>  // 5
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
  %h = zero.reduce_scatter_start avg %gw, %gb layouts [
      #zero.layout<shape = [16, 16], world_size = 4>,
      #zero.layout<shape = [16], world_size = 4>] {zero.grads = ["w", "b"]}
      : tensor<16x16xf16>, tensor<16xf16>                                    // 15
  %gw_s, %gb_s = zero.wait %h : tensor<64xf16>, tensor<4xf16>                // 16
  %lr = arith.constant 1.0e-3 : f32                                          // 17
  %w_master1, %w_m1, %w_v1 = zero.adam %w_master, %gw_s, %w_m, %w_v, %step, %lr
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>       // 18
  %b_master1, %b_m1, %b_v1 = zero.adam %b_master, %gb_s, %b_m, %b_v, %step, %lr
      : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>           // 19
  %w1_s = arith.truncf %w_master1 : tensor<64xf32> to tensor<64xf16>         // 20
  %b1_s = arith.truncf %b_master1 : tensor<4xf32> to tensor<4xf16>           // 21
  %hg = zero.all_gather_start %w1_s, %b1_s layouts [
      #zero.layout<shape = [16, 16], world_size = 4>,
      #zero.layout<shape = [16], world_size = 4>] : tensor<64xf16>, tensor<4xf16> // 22
  %w1, %b1 = zero.wait %hg : tensor<16x16xf16>, tensor<16xf16>               // 23
  return %loss, %w1, %b1, %w_master1, %w_m1, %w_v1, %b_master1, %b_m1, %b_v1
      : tensor<f32>, tensor<16x16xf16>, tensor<16xf16>, tensor<64xf32>,
        tensor<64xf32>, tensor<64xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>                                                        // 24
}

// -----

// Stage 2 with two micro-steps: w's gradient is reduce-scattered twice. The
// first shard lands in w.grad and becomes the accumulator; the second arrives
// while the first is still live, so it needs its own (transient) buffer, and
// w.grad is counted once.
//
// Residents: w 512 @0, w.master/exp_avg/exp_avg_sq 256 @512/768/1024, x 1024
// @1280, w.grad 128 @2304 (end 2432). Sum 2432.
// Transients from 2432:
//   X0 512 [1,4], G0 512 [2,6], X1 512 [7,10], G1 512 [8,12] (each gradient
//   alone in its bucket), S1 128 [12,13] (the second shard), ACC 128
//   [13,15], L 4 [17,21] (the loss), W 128 [18,20] (the new shard). No
//   staging buffer: each collective has one operand, without padding.
// In program order: X0 @2432; G0 @2944; X1 @2432 (X0 and G0 are dead); G1
// @2944; S1 at the top of X1's hole, next to G1 (freed after 12; the base
// after 21): @2816; ACC at the top of the rest, next to S1: @2688; at 17 all
// are dead: L @2432, W @2496. The arena ends with G0 and G1 at 3456.
// Max live at points 2-4 and 8-10: 2432 + 1024 = 3456. Communication
// buffers peak at point 12: G1 + S1 = 640.

// CHECK-LABEL: func.func @accumulation(
// CHECK-SAME: zero.memory_plan = {device = 3456 : i64, host = 0 : i64, nvme = 0 : i64}
// CHECK: tensor.extract_slice {{.*}} {zero.offsets = array<i64: 2432>}
// CHECK: linalg.matmul {zero.offsets = array<i64: 2944>}
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 2304>}
// CHECK: tensor.extract_slice {{.*}} {zero.offsets = array<i64: 2432>}
// CHECK: linalg.matmul {zero.offsets = array<i64: 2944>}
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 2816>}
// CHECK: arith.addf {{.*}} {zero.offsets = array<i64: 2688>}
// CHECK: tensor.from_elements {{.*}} {zero.offsets = array<i64: 2432>}
// CHECK: arith.truncf {{.*}} {zero.offsets = array<i64: 2496>}
// CHECK-NOT: zero.staging
// CHECK: zero.wait {{.*}} {zero.offsets = array<i64: 0>}

// GAS-REPORT:      "per_rank_bytes": {
// GAS-REPORT-NEXT:   "parameters": 512,
// GAS-REPORT-NEXT:   "gradients": 128,
// GAS-REPORT-NEXT:   "optimizer_states": 768,
// GAS-REPORT-NEXT:   "model_states": 1408,
// GAS-REPORT-NEXT:   "inputs": 1024,
// GAS-REPORT-NEXT:   "activations_peak": 512,
// GAS-REPORT-NEXT:   "communication_buffers_peak": 640,
// GAS-REPORT-NEXT:   "max_live": 3456,
// GAS-REPORT-NEXT:   "peak": 3456,
// GAS-REPORT-NEXT:   "device": 3456,
// GAS-REPORT-NEXT:   "host": 0,
// GAS-REPORT-NEXT:   "nvme": 0
// GAS-REPORT-NEXT: },
// GAS-REPORT-NEXT: "communication_bytes_per_step": {
// GAS-REPORT-NEXT:   "all_gather": 512,
// One reduce-scatter per micro-step (as DeepSpeed does at stage 2) and one
// all-gather: 3 x 512 bytes; on the ring, 3 x 3/4 x 512 = 1152 sent and
// received.
// GAS-REPORT-NEXT:   "reduce_scatter": 1024,
// GAS-REPORT-NEXT:   "all_reduce": 0,
// GAS-REPORT-NEXT:   "total": 1536,
// GAS-REPORT-NEXT:   "sent": 1152,
// GAS-REPORT-NEXT:   "received": 1152,
// GAS-REPORT-NEXT:   "full_parameter_bytes": 512,
// GAS-REPORT-NEXT:   "ratio_to_parameter_bytes": 3
// GAS-REPORT:      "peak_at": {
// GAS-REPORT-NEXT:   "point": 2,

func.func @accumulation(
    %w: tensor<16x16xf16> {zero.param = "w", zero.layout = #zero.layout<shape = [16, 16], world_size = 4>},
    %w_master: tensor<64xf32> {zero.state = "master", zero.param = "w"},
    %w_m: tensor<64xf32> {zero.state = "exp_avg", zero.param = "w"},
    %w_v: tensor<64xf32> {zero.state = "exp_avg_sq", zero.param = "w"},
    %step: i64 {zero.step},
    %x: tensor<2x16x16xf16> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<16x16xf16> {zero.param = "w"},
        tensor<64xf32> {zero.state = "master", zero.param = "w"},
        tensor<64xf32> {zero.state = "exp_avg", zero.param = "w"},
        tensor<64xf32> {zero.state = "exp_avg_sq", zero.param = "w"})
    attributes {zero.stage = 2 : i64, zero.world_size = 4 : i64} {
  %zero = arith.constant 0.0 : f16                                           // 0
  // Micro-step 0 (its gradient stands in as x0 w).
  %x0 = tensor.extract_slice %x[0, 0, 0] [1, 16, 16] [1, 1, 1]
      : tensor<2x16x16xf16> to tensor<16x16xf16>                             // 1
  %e0 = tensor.empty() : tensor<16x16xf16>                                   // 2
  %f0 = linalg.fill ins(%zero : f16) outs(%e0 : tensor<16x16xf16>) -> tensor<16x16xf16> // 3
  %g0 = linalg.matmul ins(%x0, %w : tensor<16x16xf16>, tensor<16x16xf16>)
      outs(%f0 : tensor<16x16xf16>) -> tensor<16x16xf16>                     // 4
  %h0 = zero.reduce_scatter_start avg %g0 layouts [
      #zero.layout<shape = [16, 16], world_size = 4>] {zero.grads = ["w"]}
      : tensor<16x16xf16>                                                    // 5
  %s0 = zero.wait %h0 : tensor<64xf16>                                       // 6
  // Micro-step 1.
  %x1 = tensor.extract_slice %x[1, 0, 0] [1, 16, 16] [1, 1, 1]
      : tensor<2x16x16xf16> to tensor<16x16xf16>                             // 7
  %e1 = tensor.empty() : tensor<16x16xf16>                                   // 8
  %f1 = linalg.fill ins(%zero : f16) outs(%e1 : tensor<16x16xf16>) -> tensor<16x16xf16> // 9
  %g1 = linalg.matmul ins(%x1, %w : tensor<16x16xf16>, tensor<16x16xf16>)
      outs(%f1 : tensor<16x16xf16>) -> tensor<16x16xf16>                     // 10
  %h1 = zero.reduce_scatter_start avg %g1 layouts [
      #zero.layout<shape = [16, 16], world_size = 4>] {zero.grads = ["w"]}
      : tensor<16x16xf16>                                                    // 11
  %s1 = zero.wait %h1 : tensor<64xf16>                                       // 12
  %acc = arith.addf %s0, %s1 : tensor<64xf16>                                // 13
  %lr = arith.constant 1.0e-3 : f32                                          // 14
  %w_master1, %w_m1, %w_v1 = zero.adam %w_master, %acc, %w_m, %w_v, %step, %lr
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>       // 15
  %c0 = arith.constant 0.0 : f32                                             // 16
  %loss = tensor.from_elements %c0 : tensor<f32>                             // 17
  %w1_s = arith.truncf %w_master1 : tensor<64xf32> to tensor<64xf16>         // 18
  %hg = zero.all_gather_start %w1_s layouts [
      #zero.layout<shape = [16, 16], world_size = 4>] : tensor<64xf16>       // 19
  %w1 = zero.wait %hg : tensor<16x16xf16>                                    // 20
  return %loss, %w1, %w_master1, %w_m1, %w_v1
      : tensor<f32>, tensor<16x16xf16>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf32>                                                       // 21
}
