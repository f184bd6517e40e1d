// ZeRO++ qgZ: zero-reduce-gradients' quantize-gradients-block-size puts
// `quantize_block_size` on the reduce-scatter of every gradient of two or
// more dimensions (int4 blocks
// through a hierarchical all-to-all, docs/ScheduleFormat.md, "Quantized
// reduce-scatters"), whatever its group; MiCS's replica all-reduce stays
// unquantized.
//
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4" --zero-mixed-precision=precision=bf16 \
// RUN:   --zero-reduce-gradients=quantize-gradients-block-size=64 \
// RUN:   | FileCheck %s --check-prefix=BF16
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 ranks-per-node=2 mics-shard-size=2" \
// RUN:   --zero-reduce-gradients="quantize-gradients-block-size=64 prescale-gradients=true" \
// RUN:   | FileCheck %s --check-prefix=MICS
//
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=3 world-size=4" \
// RUN:   --zero-reduce-gradients=quantize-gradients-block-size=3 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ODD
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=3 world-size=4" \
// RUN:   --zero-reduce-gradients=quantize-gradients-block-size=-2 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NEGATIVE
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=0 world-size=4" \
// RUN:   --zero-reduce-gradients=quantize-gradients-block-size=4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STAGE0
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition="stage=3 world-size=4" \
// RUN:   --zero-reduce-gradients="quantize-gradients-block-size=4 reduce-scatter=false" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LOCAL
// RUN: zero-model mlp --layers 1 --hidden 4 --batch-size 2 --dtype f64 -o %t.f64.mlir
// RUN: not zero-opt %t.f64.mlir --zero-partition="stage=2 world-size=2" \
// RUN:   --zero-reduce-gradients=quantize-gradients-block-size=4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=F64

// Each bf16 weight's gradient is reduce-scattered quantized, in its own
// bucket (the pass runs before zero-bucket); the biases', vectors, exactly,
// as DeepSpeed's all_to_all_quant_reduce reduces 1-D tensors.
// BF16-LABEL: func.func @step(
// BF16:         %[[H:.*]] = zero.reduce_scatter_start avg %{{.*}} quantize_block_size = 64 layouts [#zero.layout<shape = [4, 4], world_size = 4>] {zero.grads = ["w1"]} : tensor<4x4xbf16>
// BF16-NEXT:    zero.wait %[[H]] : tensor<4xbf16>
// BF16:         zero.reduce_scatter_start avg %{{.*}} quantize_block_size = 64 layouts [#zero.layout<shape = [4, 4], world_size = 4>] {zero.grads = ["w0"]} : tensor<4x4xbf16>
// BF16:         zero.reduce_scatter_start avg %{{.*}} layouts [#zero.layout<shape = [4], world_size = 4>] {zero.grads = ["b0"]} : tensor<4xbf16>
// BF16:         zero.reduce_scatter_start avg %{{.*}} layouts [#zero.layout<shape = [6], world_size = 4>] {zero.grads = ["b1"]} : tensor<6xbf16>

// MiCS: the node's reduce-scatter is quantized (one hop, within the node);
// the sum across the replicas is not.
// MICS-LABEL: func.func @step(
// MICS:         zero.reduce_scatter_start sum %{{.*}} grid_axes = [1] quantize_block_size = 64 layouts [#zero.layout<shape = [4, 4], world_size = 2>] {zero.grads = ["w1"]} : tensor<4x4xf32>
// MICS:         zero.all_reduce_start sum %{{.*}} grid_axes = [0] {zero.grads = ["w1"]} : tensor<8xf32>

// ODD: error: quantize-gradients-block-size must be even and at least 2 (int4 values are packed two to a byte), got 3
// NEGATIVE: error: quantize-gradients-block-size must be even and at least 2 (int4 values are packed two to a byte), got -2
// STAGE0: error: quantize-gradients-block-size (qgZ) quantizes reduce-scatters, but stage 0 reduces the gradients with all-reduces
// F64: error: qgZ quantizes f32, bf16 or f16 gradients, but 'fc0.weight' is reduced in 'f64' (communication-data-type=fp32 reduces it in f32)
// LOCAL: error: quantize-gradients-block-size (qgZ) quantizes reduce-scatters, but reduce-scatter=false reduces the gradients with all-reduces
