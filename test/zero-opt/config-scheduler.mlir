// The scheduler section: zero-insert-optimizer computes each step's rate in
// the step from the step counter (docs/Config.md, "Learning-rate
// schedules"). The rates themselves are checked at run time by
// test/Runtime/lr-schedules.test.
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
//
// No scheduler: the constant rate, as before.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/stage1.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=CONSTANT
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/warmup-log.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=WARMUP
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/one-cycle.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=ONE-CYCLE
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/one-cycle.json --zero-world-size=2 \
// RUN:   --zero-set=scheduler.params.cycle_momentum=true \
// RUN:   | FileCheck %s --check-prefix=ONE-CYCLE-MOM
//
// fp16 with a dynamic scale: the rate follows the step counter before the
// step, and an overflow keeps the counter, so a skipped step leaves the
// schedule where it was (DeepSpeed does not step its scheduler on overflow).
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/fp16-dynamic.json --zero-world-size=2 \
// RUN:   --zero-set=scheduler.type=WarmupLR --zero-set=scheduler.params.warmup_num_steps=10 \
// RUN:   | FileCheck %s --check-prefix=FP16
//
// "auto" needs a trainer; --zero-set fills it in, as HuggingFace would.
// RUN: not zero-opt %t.mlir --zero-config=%S/Inputs/scheduler-auto.json 2>&1 \
// RUN:   | FileCheck %s --check-prefix=AUTO --match-full-lines --strict-whitespace
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/scheduler-auto.json \
// RUN:   --zero-set=scheduler.params.warmup_num_steps=10 \
// RUN:   --zero-set=scheduler.params.total_num_steps=200 --zero-print-config \
// RUN:   | FileCheck %s --check-prefix=AUTO-SET
// RUN: not zero-opt %t.mlir --zero-config=%S/Inputs/scheduler-errors.json 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TYPO --match-full-lines --strict-whitespace
//
// The pass options, without a config.
// RUN: not zero-opt %t.mlir --zero-pipeline="lr-schedule=cosine" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-KIND
// RUN: not zero-opt %t.mlir --zero-pipeline="lr-schedule=warmup-decay total-num-steps=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-TOTAL
// RUN: not zero-opt %t.mlir --zero-pipeline="lr-schedule=warmup warmup-type=exp" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-TYPE
// i = last-batch-iteration + the applied steps is an i64 add in the step:
// near INT64_MAX it would wrap (zero::kMaxLastBatchIteration).
// RUN: not zero-opt %t.mlir --zero-pipeline="lr-schedule=warmup last-batch-iteration=4503599627370497" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-ITERATION

// CONSTANT:     %[[LR:.*]] = arith.constant 1.000000e-03 : f32
// CONSTANT-NOT: math.log
// CONSTANT:     zero.adam %{{.*}}, %[[LR]] {zero.offsets

// WarmupLR, log, over 100 steps to optimizer.params.lr (0.0006): i = step
// counter - 1 (last_batch_iteration), gamma = ln(i + 1) / ln(100), 0 at
// i < 0, 1 from i = 100; the rate min + (max - min) gamma, rounded to f32.
// WARMUP:      %[[OLD:.*]] = tensor.extract %arg12[] : tensor<i64>
// WARMUP:      %[[STEP:.*]] = arith.addi %[[OLD]], %c1_i64 : i64
// WARMUP:      %[[I64:.*]] = arith.addi %[[OLD]], %c-1_i64 : i64
// WARMUP-NEXT: %[[I:.*]] = arith.sitofp %[[I64]] : i64 to f64
// WARMUP-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// WARMUP-NEXT: %[[I1:.*]] = arith.addf %[[I]], %[[ONE]] : f64
// WARMUP-NEXT: %[[LOG:.*]] = math.log %[[I1]] : f64
// WARMUP-NEXT: %[[INV:.*]] = arith.constant 0.21714724095162588 : f64
// WARMUP-NEXT: %[[G:.*]] = arith.mulf %[[INV]], %[[LOG]] : f64
// WARMUP-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// WARMUP-NEXT: %[[START:.*]] = arith.cmpf olt, %[[I]], %[[ZERO]] : f64
// WARMUP-NEXT: %[[G0:.*]] = arith.select %[[START]], %[[ZERO]], %[[G]] : f64
// WARMUP-NEXT: %[[W:.*]] = arith.constant 1.000000e+02 : f64
// WARMUP-NEXT: %[[IN:.*]] = arith.cmpf olt, %[[I]], %[[W]] : f64
// WARMUP-NEXT: %[[GAMMA:.*]] = arith.select %[[IN]], %[[G0]], %[[ONE]] : f64
// WARMUP-NEXT: %[[DELTA:.*]] = arith.constant 6.000000e-04 : f64
// WARMUP-NEXT: %[[UP:.*]] = arith.mulf %[[DELTA]], %[[GAMMA]] : f64
// WARMUP-NEXT: %[[RATE:.*]] = arith.addf %[[ZERO]], %[[UP]] : f64
// WARMUP-NEXT: %[[LR:.*]] = arith.truncf %[[RATE]] : f64 to f32
// WARMUP-NEXT: zero.adam %arg0, %{{.*}}, %arg4, %arg5, %[[STEP]], %[[LR]]
// WARMUP-COUNT-3: zero.adam {{.*}}, %[[STEP]], %[[LR]]

// OneCycle without momentum cycling: the cycle's floor and select between
// the rising and falling halves; beta1 stays the attribute.
// ONE-CYCLE:     math.floor
// ONE-CYCLE:     arith.cmpf ole
// ONE-CYCLE:     %[[LR:.*]] = arith.truncf %{{.*}} : f64 to f32
// ONE-CYCLE-NOT: arith.truncf
// ONE-CYCLE:     zero.adam {{.*}}, %[[LR]] {zero.offsets

// FP16:      %[[OLD:.*]] = tensor.extract %[[STEP:arg[0-9]+]][] : tensor<i64>
// FP16-NEXT: %[[C1:.*]] = arith.constant 1 : i64
// FP16-NEXT: %[[NEXT:.*]] = arith.addi %[[OLD]], %[[C1]] : i64
// FP16:      %[[I:.*]] = arith.addi %[[OLD]], %c-1_i64 : i64
// FP16-NEXT: arith.sitofp %[[I]] : i64 to f64
// FP16:      %[[KEPT:.*]] = arith.select %[[OVERFLOW:.*]], %[[OLD]], %[[NEXT]] : i64
// FP16-NEXT: tensor.from_elements %[[KEPT]]

// With momentum cycling (DeepSpeed's default), beta1 is computed too and
// becomes zero.adam's beta1 operand; beta2 is DeepSpeed's 0.99.
// ONE-CYCLE-MOM:     %[[BETA1:.*]] = arith.truncf %{{.*}} : f64 to f32
// ONE-CYCLE-MOM:     %[[LR:.*]] = arith.truncf %{{.*}} : f64 to f32
// ONE-CYCLE-MOM:     zero.adam {{.*}}, %[[LR]] beta1(%[[BETA1]]) {beta2 = 0.98999999999999999 : f64,
// ONE-CYCLE-MOM-COUNT-3: zero.adam {{.*}}, %[[LR]] beta1(%[[BETA1]])

// AUTO:{{.*}}scheduler-auto.json:8:27: error: scheduler.params.warmup_num_steps: "auto" is filled in by a HuggingFace trainer, and zero-opt has none; write the value
// AUTO:{{.*}}scheduler-auto.json:9:26: error: scheduler.params.total_num_steps: "auto" is filled in by a HuggingFace trainer, and zero-opt has none; write the value

// AUTO-SET:      "scheduler": {
// AUTO-SET-NEXT:   "type": "WarmupDecayLR",
// AUTO-SET-NEXT:   "params": {
// AUTO-SET-NEXT:     "last_batch_iteration": -1,
// AUTO-SET-NEXT:     "warmup_min_lr": 0.0,
// AUTO-SET-NEXT:     "warmup_max_lr": 0.0003,
// AUTO-SET-NEXT:     "warmup_num_steps": 10,
// AUTO-SET-NEXT:     "warmup_type": "log",
// AUTO-SET-NEXT:     "total_num_steps": 200
// AUTO-SET-NEXT:   }
// AUTO-SET-NEXT: },

// TYPO:{{.*}}scheduler-errors.json:5:44: error: unknown key 'scheduler.params.warmup_typ'; did you mean 'warmup_type'?

// BAD-KIND: error: unknown lr-schedule 'cosine'; expected constant, warmup, warmup-decay, warmup-cosine, one-cycle or range-test
// BAD-TOTAL: error: total-num-steps must be at least 1, got 0
// BAD-ITERATION: error: last-batch-iteration must be at most 2^52 (4503599627370496) so that it plus the steps of a run stays exact, got 4503599627370497
// BAD-TYPE: error: unknown warmup-type 'exp'; expected log or linear
