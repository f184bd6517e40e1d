// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=4" \
// RUN:   | FileCheck %s
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=16 model-persistence-threshold=20" \
// RUN:   | FileCheck %s --check-prefix=CAP
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4 param-persistence-threshold=100" \
// RUN:   | FileCheck %s --check-prefix=STAGE2
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 ranks-per-node=2 mics-shard-size=2 param-persistence-threshold=0" \
// RUN:   | FileCheck %s --check-prefix=MICS
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 ranks-per-node=2 mics-shard-size=4 param-persistence-threshold=0" \
// RUN:   | FileCheck %s --check-prefix=MICS-WORLD
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=8 ranks-per-node=2 mics-shard-size=4" \
// RUN:   | FileCheck %s --check-prefix=MICS-NODES
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=8 ranks-per-node=2 mics-shard-size=6" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MICS-SIZE
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 mics-shard-size=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MICS-ONE-NODE
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4 ranks-per-node=2 mics-shard-size=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MICS-STAGE
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=4" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADSTAGE
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="world-size=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADWORLD

// Every parameter gets its layout; at stage 3 only b0 (4 elements) is at or
// under the persistence threshold. b1 (6 elements) pads to 8 on 4 ranks.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {zero.layout = #zero.layout<shape = [4, 4], world_size = 4>, zero.param = "w0"}
// CHECK-SAME: %{{.*}}: tensor<4xf32> {zero.layout = #zero.layout<shape = [4], world_size = 4>, zero.param = "b0", zero.persistent}
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {zero.layout = #zero.layout<shape = [4, 4], world_size = 4>, zero.param = "w1"}
// CHECK-SAME: %{{.*}}: tensor<6xf32> {zero.layout = #zero.layout<shape = [6], world_size = 4>, zero.param = "b1"}
// CHECK-SAME: %{{.*}}: tensor<2x4xf32> {zero.data = "x"}
// CHECK-SAME: attributes {zero.stage = 3 : i64, zero.train_step, zero.world_size = 4 : i64}

// With the model threshold at 20 elements, w0 (16) and b0 (4) fill it, in
// argument order; w1 and b1 fit the parameter threshold but not the cap.
// CAP: zero.param = "w0", zero.persistent}
// CAP: zero.param = "b0", zero.persistent}
// CAP: zero.param = "w1"}
// CAP: zero.param = "b1"}

// Below stage 3 nothing is persistent: every rank holds every parameter.
// STAGE2-NOT: zero.persistent
// STAGE2: attributes {zero.stage = 2 : i64, zero.train_step, zero.world_size = 4 : i64}

// BADSTAGE: error: ZeRO stage must be 0, 1, 2 or 3, got 4
// BADWORLD: error: world size must be at least 1, got 0

// MiCS with groups of a node's 2 ranks: every layout is for 2 ranks (b1's 6
// elements need no padding), the step keeps its world of 4 in 2 nodes.
// MICS-LABEL: func.func @step(
// MICS-SAME: zero.layout = #zero.layout<shape = [4, 4], world_size = 2>, zero.param = "w0"}
// MICS-SAME: zero.layout = #zero.layout<shape = [4], world_size = 2>, zero.param = "b0"}
// MICS-SAME: zero.layout = #zero.layout<shape = [4, 4], world_size = 2>, zero.param = "w1"}
// MICS-SAME: zero.layout = #zero.layout<shape = [6], world_size = 2>, zero.param = "b1"}
// MICS-SAME: attributes {zero.ranks_per_node = 2 : i64, zero.stage = 3 : i64, zero.train_step, zero.world_size = 4 : i64}

// A shard size of the world size is plain ZeRO-3.
// MICS-WORLD: zero.layout = #zero.layout<shape = [4, 4], world_size = 4>, zero.param = "w0"}

// MiCS groups of 2 nodes: layouts for the 4 ranks of a group, and the
// group's size on the step (its process grid is [2, 2, 2]).
// MICS-NODES-LABEL: func.func @step(
// MICS-NODES-SAME:    zero.layout = #zero.layout<shape = [4, 4], world_size = 4>
// MICS-NODES-SAME:    attributes {zero.mics_shard_size = 4 : i64, zero.ranks_per_node = 2 : i64, zero.stage = 3 : i64, zero.train_step, zero.world_size = 8 : i64}
// MICS-SIZE: error: mics-shard-size (6) must divide the world size (8) and be a multiple of the ranks of one node (ranks-per-node, 2): MiCS groups are whole nodes
// MICS-ONE-NODE: error: mics-shard-size (2) must divide the world size (4) and be a multiple of the ranks of one node (ranks-per-node, 4): MiCS groups are whole nodes
// MICS-STAGE: error: mics-shard-size (2) needs stage 3: MiCS partitions the parameters; stage is 2
