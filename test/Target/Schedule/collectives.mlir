// Collectives on the comm stream, with their events, layouts and staging, and
// the synchronization and frees on the compute stream
// (docs/ScheduleFormat.md, "Program points, streams and events"). A 2-layer
// MLP (weights 4x4, biases 4) on 2 ranks.
//
// RUN: zero-model mlp --layers 2 --hidden 4 --batch-size 2 -o %t.mlir
//
// Stage 0: one all-reduce of the four gradients; more than one operand, so it
// packs them into a staging region.
// RUN: zero-opt %t.mlir --zero-stage=0 --zero-keep-transposes --zero-world-size=2 \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=STAGE0 --match-full-lines
//
// Stage 1: one reduce-scatter of the gradients, the optimizer steps the local
// shards of the replicated parameters, and one all-gather brings the updated
// shards back.
// RUN: zero-opt %t.mlir --zero-stage=1 --zero-keep-transposes --zero-world-size=2 \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=STAGE1 --match-full-lines
//
// Stage 3 with overlap_comm and buckets of one layer: fc1 is gathered (events
// 2/3) while fc0 is in use; every gathered tensor is freed after its last use.
// RUN: zero-opt %t.mlir --zero-stage=3 --zero-keep-transposes --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.stage3_param_persistence_threshold=0 \
// RUN:   --zero-set=zero_optimization.overlap_comm=true \
// RUN:   --zero-set=zero_optimization.stage3_prefetch_bucket_size=20 \
// RUN:   --zero-set=zero_optimization.allgather_bucket_size=20 \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --check-prefix=STAGE3 --match-full-lines

// STAGE0-LABEL: "events": 2,
// STAGE0-NEXT: "instructions": {
// STAGE0-NEXT: "compute": [
// STAGE0: {"op": "record", "point": [[#P1:]], "loc": "[[LOC1:<stdin>:[0-9]+:[0-9]+]]", "event": 0},
// STAGE0: {"op": "wait", "point": [[#P2:]], "loc": "[[LOC2:<stdin>:[0-9]+:[0-9]+]]", "event": 1},
// STAGE0: "comm": [
// STAGE0-NEXT: {"op": "wait", "point": [[#P1]], "loc": "[[LOC1]]", "event": 0},
// STAGE0-NEXT: {"op": "all_reduce", "point": [[#P1]], "loc": "[[LOC1]]", "operands": [108, 112, 135, 139], "results": [143, 144, 145, 146], "reduction": "avg", "staging": {"space": "device", "offset": {{[0-9]+}}, "bytes": 160}},
// STAGE0-NEXT: {"op": "record", "point": [[#P1]], "loc": "[[LOC1]]", "event": 1}
// STAGE0-NEXT: ]
// STAGE0-NEXT: },
// At stage 0 each Adam updates a whole parameter argument.
// STAGE0-NEXT: "gradients": [
// STAGE0-NEXT: {"instruction": 49, "param": "fc0.weight", "argument": 0, "offset": 0},
// STAGE0-NEXT: {"instruction": 50, "param": "fc0.bias", "argument": 1, "offset": 0},
// STAGE0-NEXT: {"instruction": 51, "param": "fc1.weight", "argument": 2, "offset": 0},
// STAGE0-NEXT: {"instruction": 52, "param": "fc1.bias", "argument": 3, "offset": 0}
// STAGE0-NEXT: ]
// STAGE0-NEXT: }

// STAGE1-LABEL: "events": 4,
// STAGE1-NEXT: "instructions": {
// STAGE1-NEXT: "compute": [
// STAGE1: {"op": "record", "point": [[#P1:]], "loc": "[[LOC1:<stdin>:[0-9]+:[0-9]+]]", "event": 0},
// STAGE1: {"op": "wait", "point": [[#P2:]], "loc": "[[LOC2:<stdin>:[0-9]+:[0-9]+]]", "event": 1},
// STAGE1: {"op": "zero.local_shard", "point": [[#P3:]], "loc": "[[LOC3:<stdin>:[0-9]+:[0-9]+]]", "operands": [0], "results": [151], "layout": {"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}},
// STAGE1: {"op": "zero.local_shard", "point": [[#P4:]], "loc": "[[LOC4:<stdin>:[0-9]+:[0-9]+]]", "operands": [1], "results": [155], "layout": {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}},
// STAGE1: {"op": "zero.local_shard", "point": [[#P5:]], "loc": "[[LOC5:<stdin>:[0-9]+:[0-9]+]]", "operands": [2], "results": [159], "layout": {"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}},
// STAGE1: {"op": "zero.local_shard", "point": [[#P6:]], "loc": "[[LOC6:<stdin>:[0-9]+:[0-9]+]]", "operands": [3], "results": [163], "layout": {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}},
// STAGE1: {"op": "record", "point": [[#P7:]], "loc": "[[LOC7:<stdin>:[0-9]+:[0-9]+]]", "event": 2},
// STAGE1: {"op": "wait", "point": [[#P8:]], "loc": "[[LOC8:<stdin>:[0-9]+:[0-9]+]]", "event": 3},
// STAGE1: "comm": [
// STAGE1-NEXT: {"op": "wait", "point": [[#P1]], "loc": "[[LOC1]]", "event": 0},
// STAGE1-NEXT: {"op": "reduce_scatter", "point": [[#P1]], "loc": "[[LOC1]]", "operands": [135, 139, 108, 112], "results": [143, 144, 145, 146], "reduction": "avg", "layouts": [{"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}, {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, {"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}, {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}], "staging": {"space": "device", "offset": {{[0-9]+}}, "bytes": 160}},
// STAGE1-NEXT: {"op": "record", "point": [[#P1]], "loc": "[[LOC1]]", "event": 1},
// STAGE1-NEXT: {"op": "wait", "point": [[#P7]], "loc": "[[LOC7]]", "event": 2},
// STAGE1-NEXT: {"op": "all_gather", "point": [[#P7]], "loc": "[[LOC7]]", "operands": [152, 156, 160, 164], "results": [167, 168, 169, 170], "layouts": [{"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}, {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, {"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}, {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}], "staging": {"space": "device", "offset": {{[0-9]+}}, "bytes": 160}},
// STAGE1-NEXT: {"op": "record", "point": [[#P7]], "loc": "[[LOC7]]", "event": 3}
// STAGE1-NEXT: ]
// STAGE1-NEXT: },
// Each Adam updates the rank's shard (zero.local_shard) of a whole
// parameter argument: offset 0 within the shard.
// STAGE1-NEXT: "gradients": [
// STAGE1-NEXT: {"instruction": 50, "param": "fc0.weight", "argument": 0, "offset": 0},
// STAGE1-NEXT: {"instruction": 52, "param": "fc0.bias", "argument": 1, "offset": 0},
// STAGE1-NEXT: {"instruction": 54, "param": "fc1.weight", "argument": 2, "offset": 0},
// STAGE1-NEXT: {"instruction": 56, "param": "fc1.bias", "argument": 3, "offset": 0}
// STAGE1-NEXT: ]
// STAGE1-NEXT: }

// STAGE3-LABEL: "events": 6,
// STAGE3-NEXT: "instructions": {
// STAGE3-NEXT: "compute": [
// STAGE3: {"op": "record", "point": [[#P1:]], "loc": "[[LOC1:<stdin>:[0-9]+:[0-9]+]]", "event": 0},
// STAGE3: {"op": "wait", "point": [[#P2:]], "loc": "[[LOC2:<stdin>:[0-9]+:[0-9]+]]", "event": 1},
// STAGE3: {"op": "record", "point": [[#P3:]], "loc": "[[LOC3:<stdin>:[0-9]+:[0-9]+]]", "event": 2},
// STAGE3: {"op": "free", "point": [[#P4:]], "loc": "[[LOC4:<stdin>:[0-9]+:[0-9]+]]", "values": [16]},
// STAGE3: {"op": "free", "point": [[#P5:]], "loc": "[[LOC5:<stdin>:[0-9]+:[0-9]+]]", "values": [17]},
// STAGE3: {"op": "wait", "point": [[#P6:]], "loc": "[[LOC6:<stdin>:[0-9]+:[0-9]+]]", "event": 3},
// STAGE3: {"op": "free", "point": [[#P7:]], "loc": "[[LOC7:<stdin>:[0-9]+:[0-9]+]]", "values": [27]},
// STAGE3: {"op": "free", "point": [[#P8:]], "loc": "[[LOC8:<stdin>:[0-9]+:[0-9]+]]", "values": [28]},
// STAGE3: {"op": "record", "point": [[#P9:]], "loc": "[[LOC9:<stdin>:[0-9]+:[0-9]+]]", "event": 4},
// STAGE3: {"op": "wait", "point": [[#P10:]], "loc": "[[LOC10:<stdin>:[0-9]+:[0-9]+]]", "event": 5},
// STAGE3: "comm": [
// STAGE3-NEXT: {"op": "wait", "point": [[#P1]], "loc": "[[LOC1]]", "event": 0},
// STAGE3-NEXT: {"op": "all_gather", "point": [[#P1]], "loc": "[[LOC1]]", "operands": [1, 0], "results": [16, 17], "layouts": [{"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, {"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}], "staging": {"space": "device", "offset": {{[0-9]+}}, "bytes": 80}},
// STAGE3-NEXT: {"op": "record", "point": [[#P1]], "loc": "[[LOC1]]", "event": 1},
// STAGE3-NEXT: {"op": "wait", "point": [[#P3]], "loc": "[[LOC3]]", "event": 2},
// STAGE3-NEXT: {"op": "all_gather", "point": [[#P3]], "loc": "[[LOC3]]", "operands": [3, 2], "results": [27, 28], "layouts": [{"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, {"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}], "staging": {"space": "device", "offset": {{[0-9]+}}, "bytes": 80}},
// STAGE3-NEXT: {"op": "record", "point": [[#P3]], "loc": "[[LOC3]]", "event": 3},
// STAGE3-NEXT: {"op": "wait", "point": [[#P9]], "loc": "[[LOC9]]", "event": 4},
// STAGE3-NEXT: {"op": "reduce_scatter", "point": [[#P9]], "loc": "[[LOC9]]", "operands": [112, 116, 139, 143], "results": [151, 152, 153, 154], "reduction": "avg", "layouts": [{"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}, {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, {"shape": [4, 4], "world_size": 2, "shard_numel": 8, "padded_numel": 16}, {"shape": [4], "world_size": 2, "shard_numel": 2, "padded_numel": 4}], "staging": {"space": "device", "offset": {{[0-9]+}}, "bytes": 160}},
// STAGE3-NEXT: {"op": "record", "point": [[#P9]], "loc": "[[LOC9]]", "event": 5}
// STAGE3-NEXT: ]
// STAGE3-NEXT: },
// STAGE3-NEXT: "gradients": [
// STAGE3-NEXT: {"instruction": 57, "param": "fc0.weight", "argument": 0, "offset": 0},
// STAGE3-NEXT: {"instruction": 58, "param": "fc0.bias", "argument": 1, "offset": 0},
// STAGE3-NEXT: {"instruction": 59, "param": "fc1.weight", "argument": 2, "offset": 0},
// STAGE3-NEXT: {"instruction": 60, "param": "fc1.bias", "argument": 3, "offset": 0}
// STAGE3-NEXT: ]
// STAGE3-NEXT: }

