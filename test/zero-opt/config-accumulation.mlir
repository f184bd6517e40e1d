// gradient_accumulation_steps from --zero-config, given or derived by
// DeepSpeed's batch rule train_batch_size = micro * steps * world size, with
// the micro-batch read from the training step (2 samples per rank).
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
//
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/accumulation-stage1.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=STAGE1
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/accumulation-stage2.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=STAGE2
// train_batch_size 8 = 2 (micro) * 2 (steps) * 2 (ranks).
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/batch-and-micro.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=TWO-STEPS
// (train_batch_size alone: config-batch-from-ir.mlir.)
// "auto" everywhere (HuggingFace): the IR's micro-batch, no accumulation.
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/batch-auto.json --zero-world-size=2 \
// RUN:   | FileCheck %s --check-prefix=ONE-STEP
// RUN: zero-opt %t.mlir --zero-config=%S/Inputs/batch-auto.json --zero-world-size=2 \
// RUN:   --zero-print-config | FileCheck %s --check-prefix=AUTO-CONFIG

// Three micro-steps: every data argument gains a leading dimension 3; at
// stage 1 the gradients are summed over the micro-steps and reduced once.
// STAGE1-LABEL: func.func @train_step(
// STAGE1-SAME:    %arg13: tensor<3x2x4xf32> {zero.data = "inputs"
// STAGE1-SAME:    %arg14: tensor<3x2xi32> {zero.data = "labels"
// STAGE1-COUNT-1: zero.reduce_scatter_start
// STAGE1-NOT:     zero.reduce_scatter_start

// At stage 2 each micro-step's gradients are reduce-scattered where they are
// produced, in every micro-step: once in the body of the loop that runs the
// three micro-steps.
// STAGE2-LABEL: func.func @train_step(
// STAGE2-SAME:    %arg13: tensor<3x2x4xf32> {zero.data = "inputs"
// STAGE2:         scf.for %{{.*}} = %c0 to %c3 step %c1
// STAGE2:         zero.reduce_scatter_start {{.*}}"fc0.bias"
// STAGE2-NOT:     zero.reduce_scatter_start
// STAGE2:         scf.yield
// STAGE2-NOT:     zero.reduce_scatter_start

// TWO-STEPS-LABEL: func.func @train_step(
// TWO-STEPS-SAME:    %arg13: tensor<2x2x4xf32> {zero.data = "inputs"
// TWO-STEPS-SAME:    %arg14: tensor<2x2xi32> {zero.data = "labels"

// ONE-STEP-LABEL: func.func @train_step(
// ONE-STEP-SAME:    %arg13: tensor<2x4xf32> {zero.data = "inputs"

// AUTO-CONFIG: "train_batch_size": 4,
// AUTO-CONFIG: "train_micro_batch_size_per_gpu": 2,
// AUTO-CONFIG: "gradient_accumulation_steps": 1,
