// zero-checkpoint-activations=auto and the report's recompute section, on
// the three layers of checkpoint-activations.mlir: h_i = (h_{i-1} w_i)^2,
// loss = sum(h_2); each layer's z_i = h_{i-1} w_i is what the backward pass
// reads (dz_i = 2 z_i dh_i), so recomputing layer i recomputes one matmul.
//
// FLOPs (docs/Passes.md): a linalg op's iteration points times its body's
// ops (linalg.matmul M x N x K points of a multiply and an add), fill and
// transpose 0. M x N x K = 2 x 4 x 4 for every matmul of the step.
// The pipelines run for two ranks: at one rank the gradients' all-reduce
// folds away with its buffers (zero-fold-single-rank-collectives), and the
// budgets below are those of the step that keeps them.
//   forward:  3 matmuls 2*2*4*4 = 64 each       192
//             3 maps of 8 elements, 1 op each    24
//             the loss: a reduce of 8 elements    8   -> 224
//   backward: per layer t_i and dz_i, 8 each    3 * 16 = 48
//             dw_i = h^T dz: 2*4*4*2 = 64       3 * 64 = 192
//             dh_1, dh_0 = dz w^T: 64           2 * 64 = 128 -> 368
//   step_flops = 224 + 368 = 592; recomputing layer i adds its matmul, 64.
//
// Every segment (checkpoint-activations=true): 3 * 64 = 192, 192/592.
// RUN: zero-opt %s --zero-pipeline="world-size=2 checkpoint-activations=true report=%t.all.json fold-transposes=false" -o /dev/null
// RUN: FileCheck %s --check-prefix=ALL < %t.all.json
// ALL:      "recompute": {
// ALL-NEXT:   "choice": "all",
// ALL-NEXT:   "segments": [
// ALL-NEXT:     0,
// ALL-NEXT:     1,
// ALL-NEXT:     2
// ALL-NEXT:   ],
// ALL-NEXT:   "num_segments": 3,
// ALL-NEXT:   "step_flops": 592,
// ALL-NEXT:   "recompute_flops": 192,
// ALL-NEXT:   "fraction": 0.32432432432432434
// ALL-NEXT: }
//
// Without recomputation the stage-0 device arena is 1824 bytes. Each
// recomputed z_i (2x4 f32, 32 bytes, 64 in the arena's 64-byte slots) no
// longer lives from the forward pass to its backward use: layer 0 first
// (the longest held), 1760; layers 0 and 1, 1696. Layer 2 frees nothing:
// z_2 is read right after the loss, recomputed or not; with it too, 1696.
// Those are the arenas placed in program order. Over a budget the plan also
// places the arena largest first and keeps the smaller (docs/Passes.md, "Offsets:
// the allocator"): 1796 bytes with nothing recomputed, 1668 with layers 0
// and 1 or all three.
// RUN: zero-opt %s --zero-pipeline="world-size=2 report=- fold-transposes=false" -o /dev/null | FileCheck %s --check-prefix=KEEP
// KEEP: "peak": 1824,
//
// A budget the step fits: nothing recomputed, one trial plan.
// RUN: zero-opt %s --zero-pipeline="world-size=2 checkpoint-activations=auto device-memory=1824 report=- fold-transposes=false" \
// RUN:   -o /dev/null | FileCheck %s --check-prefix=FIT
// FIT:      "peak": 1824,
// FIT:      "recompute": {
// FIT-NEXT:   "choice": "auto",
// FIT-NEXT:   "segments": [],
// FIT-NEXT:   "num_segments": 3,
// FIT-NEXT:   "step_flops": 592,
// FIT-NEXT:   "recompute_flops": 0,
// FIT-NEXT:   "fraction": 0,
// FIT-NEXT:   "trial_plans": 1,
// FIT-NEXT:   "fits": true
//
// 1823 bytes: the step fits with nothing recomputed, placed largest first
// (1796), and the plan records the placement.
// RUN: zero-opt %s --zero-pipeline="world-size=2 checkpoint-activations=auto device-memory=1823 report=- fold-transposes=false" \
// RUN:   -o /dev/null | FileCheck %s --check-prefix=PLACED
// PLACED:      "peak": 1796,
// PLACED:      "largest_first": [
// PLACED-NEXT:   "device"
// PLACED-NEXT: ]
// PLACED:      "segments": [],
// PLACED:      "trial_plans": 1,
//
// 1795 bytes: layer 0 alone (64 FLOPs, 64/592). Trials: nothing (1796 at
// best), all 3 (1696), then bisection: 2 (1696) fits, 1 (1760) fits.
// RUN: zero-opt %s --zero-pipeline="world-size=2 checkpoint-activations=auto device-memory=1795 report=- fold-transposes=false" \
// RUN:   -o /dev/null | FileCheck %s --check-prefix=ONE
// ONE:      "peak": 1760,
// ONE:      "recompute": {
// ONE-NEXT:   "choice": "auto",
// ONE-NEXT:   "segments": [
// ONE-NEXT:     0
// ONE-NEXT:   ],
// ONE-NEXT:   "num_segments": 3,
// ONE-NEXT:   "step_flops": 592,
// ONE-NEXT:   "recompute_flops": 64,
// ONE-NEXT:   "fraction": 0.10810810810810811,
// ONE-NEXT:   "trial_plans": 4,
// ONE-NEXT:   "fits": true
//
// 1696 bytes, what recomputing everything needs: layers 0 and 1 suffice,
// 128 FLOPs instead of checkpoint-activations=true's 192.
// RUN: zero-opt %s --zero-pipeline="world-size=2 checkpoint-activations=auto device-memory=1696 report=- fold-transposes=false" \
// RUN:   -o /dev/null | FileCheck %s --check-prefix=TWO
// TWO:      "peak": 1696,
// TWO:      "recompute": {
// TWO-NEXT:   "choice": "auto",
// TWO-NEXT:   "segments": [
// TWO-NEXT:     0,
// TWO-NEXT:     1
// TWO-NEXT:   ],
// TWO-NEXT:   "num_segments": 3,
// TWO-NEXT:   "step_flops": 592,
// TWO-NEXT:   "recompute_flops": 128,
// TWO-NEXT:   "fraction": 0.21621621621621623,
// TWO-NEXT:   "trial_plans": 4,
// TWO-NEXT:   "fits": true
//
// In the step, layers 0 and 1 are recomputed (a matmul without
// zero.segment reading the kept h_{i-1}), layer 2's z_2 is kept.
// RUN: zero-opt %s --zero-pipeline="world-size=2 checkpoint-activations=auto device-memory=1696 fold-transposes=false" \
// RUN:   --mlir-print-ir-after=zero-checkpoint-activations -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @step(
// IR-SAME:    zero.recompute = {choice = "auto", fits = true, num_segments = 3 : i64, recompute_flops = 128 : i64, segments = array<i64: 0, 1>, step_flops = 592 : i64, trial_plans = 4 : i64}
// IR:         %[[Z2:.*]] = linalg.matmul {zero.segment = 2 : i64}
// IR:         linalg.map { arith.mulf } ins(%{{.*}}, %[[Z2]] :
// IR:         %[[R1:[0-9]+]] = linalg.matmul ins(%mapped, %arg1 :
// IR-NEXT:    linalg.map { arith.mulf } ins(%{{.*}}, %[[R1]] :
// IR:         %[[R0:[0-9]+]] = linalg.matmul ins(%arg3, %arg0 :
// IR-NEXT:    linalg.map { arith.mulf } ins(%{{.*}}, %[[R0]] :
//
// 1667 bytes: nothing fits. Trials: nothing, all 3 (1668 at best), then 1
// and 2 one by one (the plan need not shrink with every segment); the step
// recomputes every layer and the budget error says so.
// RUN: not zero-opt %s --zero-pipeline="world-size=2 checkpoint-activations=auto device-memory=1667 fold-transposes=false" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: the plan needs 1.63 KiB (1668 bytes) of device memory, 1 byte more than the budget of 1.63 KiB (1667 bytes); the peak (at {{.*}}) is dominated by optimizer states
// NONE: note: in the training step '@step'
// NONE: note: activation checkpointing (auto) recomputes every segment that keeps activations (3 of 3) and the step still does not fit; no number of them did in 4 trial plans
//
// Without checkpointing the budget error points at auto.
// RUN: not zero-opt %s --zero-pipeline="world-size=2 device-memory=1695 fold-transposes=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HINT
// HINT: error: the plan needs 1.75 KiB (1796 bytes) of device memory
// HINT: note: the step has checkpointing segments and keeps all their activations: --zero-checkpoint-activations=auto recomputes the fewest segments that fit the budget
//
// A trial that fails for another reason than the budget ends the search
// at once, nothing recomputed: the pipeline then reports that error.
// RUN: not zero-opt %s --zero-pipeline="world-size=2 stage=2 offload-params=cpu checkpoint-activations=auto device-memory=1000 fold-transposes=false" \
// RUN:   --mlir-print-ir-after=zero-checkpoint-activations -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OTHER
// OTHER:     zero.recompute = {choice = "auto", fits = false, num_segments = 3 : i64, recompute_flops = 0 : i64, segments = array<i64>, step_flops = 592 : i64, trial_plans = 1 : i64}
// OTHER:     error: zero-offload-params: offloading parameters needs stage 3 (the step is stage 2)
// OTHER-NOT: error
//
// auto needs a budget, and the pass alone the passes that check it.
// RUN: not zero-opt %s --zero-pipeline="world-size=2 checkpoint-activations=auto fold-transposes=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-BUDGET
// RUN: not zero-opt %s --zero-checkpoint-activations=auto -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-BUDGET
// NO-BUDGET: error: zero-checkpoint-activations: auto chooses the segments that make the memory plan fit a device memory budget, and there is none: give --zero-device-memory (the pipeline's device-memory) with the ZeRO pipeline, or the passes that plan and check the step as fit-pipeline
//
// The pass alone with a fit pipeline of its own.
// RUN: zero-opt %s '--zero-checkpoint-activations=auto fit-pipeline=builtin.module(zero-pipeline{world-size=2 device-memory=1795 fold-transposes=false})' \
// RUN:   | FileCheck %s --check-prefix=ALONE
// ALONE: zero.recompute = {choice = "auto", fits = true, num_segments = 3 : i64, recompute_flops = 64 : i64, segments = array<i64: 0>, step_flops = 592 : i64, trial_plans = 4 : i64}
// RUN: not zero-opt %s '--zero-checkpoint-activations=auto fit-pipeline=builtin.module(no-such-pass)' \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-FIT
// BAD-FIT: error: zero-checkpoint-activations: invalid fit-pipeline:
//
// A step without segments gets them from zero-infer-segments
// (infer-segments.mlir): two, a pair of pieces each, and the last layer's
// square with the loss unmarked. Under a budget of 1 MiB the step fits
// without recomputing any.
// RUN: sed -e 's/{zero.segment = [0-9] : i64}//g' -e 's/ {zero.segment = [0-9] : i64}//g' %s \
// RUN:   | zero-opt --zero-pipeline="world-size=2 checkpoint-activations=auto device-memory=1MiB fold-transposes=false" \
// RUN:   | FileCheck %s --check-prefix=INFERRED
// INFERRED: zero.recompute = {choice = "auto", fits = true, num_segments = 2 : i64, recompute_flops = 0 : i64, segments = array<i64>, step_flops = 592 : i64, trial_plans = 1 : i64}

func.func @step(%w0: tensor<4x4xf32> {zero.param = "w0"},
                %w1: tensor<4x4xf32> {zero.param = "w1"},
                %w2: tensor<4x4xf32> {zero.param = "w2"},
                %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w0"},
        tensor<4x4xf32> {zero.grad = "w1"}, tensor<4x4xf32> {zero.grad = "w2"}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // Forward.
  %e0 = tensor.empty() {zero.segment = 0 : i64} : tensor<2x4xf32>
  %f0 = linalg.fill {zero.segment = 0 : i64} ins(%zero : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z0 = linalg.matmul {zero.segment = 0 : i64} ins(%x, %w0 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h0 = linalg.map {arith.mulf} ins(%z0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>) {zero.segment = 0 : i64}
  %e1 = tensor.empty() {zero.segment = 1 : i64} : tensor<2x4xf32>
  %f1 = linalg.fill {zero.segment = 1 : i64} ins(%zero : f32) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z1 = linalg.matmul {zero.segment = 1 : i64} ins(%h0, %w1 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h1 = linalg.map {arith.mulf} ins(%z1, %z1 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) {zero.segment = 1 : i64}
  %e2 = tensor.empty() {zero.segment = 2 : i64} : tensor<2x4xf32>
  %f2 = linalg.fill {zero.segment = 2 : i64} ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z2 = linalg.matmul {zero.segment = 2 : i64} ins(%h1, %w2 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h2 = linalg.map {arith.mulf} ins(%z2, %z2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {zero.segment = 2 : i64}
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce {arith.addf} ins(%h2 : tensor<2x4xf32>) outs(%fl : tensor<f32>) dimensions = [0, 1]
  // Backward: dz = 2 z dh, dw = h^T dz, dh = dz w^T.
  %g = tensor.empty() : tensor<2x4xf32>
  %gt = tensor.empty() : tensor<4x2xf32>
  %gw = tensor.empty() : tensor<4x4xf32>
  %fw = linalg.fill ins(%zero : f32) outs(%gw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%g : tensor<2x4xf32>) -> tensor<2x4xf32>
  %dh2 = linalg.fill ins(%one : f32) outs(%g : tensor<2x4xf32>) -> tensor<2x4xf32>
  %t2 = linalg.map {arith.mulf} ins(%dh2, %z2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %dz2 = linalg.map {arith.addf} ins(%t2, %t2 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %h1t = linalg.transpose ins(%h1 : tensor<2x4xf32>) outs(%gt : tensor<4x2xf32>) permutation = [1, 0]
  %dw2 = linalg.matmul ins(%h1t, %dz2 : tensor<4x2xf32>, tensor<2x4xf32>) outs(%fw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<4x4xf32>) outs(%gw : tensor<4x4xf32>) permutation = [1, 0]
  %dh1 = linalg.matmul ins(%dz2, %w2t : tensor<2x4xf32>, tensor<4x4xf32>) outs(%fg : tensor<2x4xf32>) -> tensor<2x4xf32>
  %t1 = linalg.map {arith.mulf} ins(%dh1, %z1 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %dz1 = linalg.map {arith.addf} ins(%t1, %t1 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %h0t = linalg.transpose ins(%h0 : tensor<2x4xf32>) outs(%gt : tensor<4x2xf32>) permutation = [1, 0]
  %dw1 = linalg.matmul ins(%h0t, %dz1 : tensor<4x2xf32>, tensor<2x4xf32>) outs(%fw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<4x4xf32>) outs(%gw : tensor<4x4xf32>) permutation = [1, 0]
  %dh0 = linalg.matmul ins(%dz1, %w1t : tensor<2x4xf32>, tensor<4x4xf32>) outs(%fg : tensor<2x4xf32>) -> tensor<2x4xf32>
  %t0 = linalg.map {arith.mulf} ins(%dh0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %dz0 = linalg.map {arith.addf} ins(%t0, %t0 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%g : tensor<2x4xf32>)
  %xt = linalg.transpose ins(%x : tensor<2x4xf32>) outs(%gt : tensor<4x2xf32>) permutation = [1, 0]
  %dw0 = linalg.matmul ins(%xt, %dz0 : tensor<4x2xf32>, tensor<2x4xf32>) outs(%fw : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %loss, %dw0, %dw1, %dw2
      : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
