// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=4" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="lr=0.01 weight-decay=0.1" | FileCheck %s
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=3 world-size=4 param-persistence-threshold=4" \
// RUN:   --zero-shard-parameters --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="bias-correction=false" \
// RUN:   | FileCheck %s --check-prefix=NO-BIAS-CORRECTION
// NO-BIAS-CORRECTION-COUNT-4: zero.adam {{.*}}bias_correction = false
// NO-BIAS-CORRECTION-NOT: zero.adam
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=0 world-size=4" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="optimizer=sgd momentum=0.9 nesterov=true" \
// RUN:   | FileCheck %s --check-prefix=SGD0
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="optimizer=adam adam-w-mode=false sub-group-size=3" \
// RUN:   | FileCheck %s --check-prefix=TILES
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="amsgrad=true sub-group-size=3" \
// RUN:   | FileCheck %s --check-prefix=AMSGRAD
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=4" --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="gradient-clipping=1.0" \
// RUN:   | FileCheck %s --check-prefix=CLIP
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-insert-optimizer="optimizer=lamb" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN

// Stage 3: each rank steps its shards; the partitioned parameters are
// returned as updated shards, the persistent b0 is gathered back whole.
// States follow the parameters, then the step counter, then the data.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W0:[^:]*]]: tensor<4xf32> {{[^}]*}}zero.param = "w0"}
// CHECK-SAME: %[[B0:[^:]*]]: tensor<4xf32> {{[^}]*}}zero.param = "b0", zero.persistent}
// CHECK-SAME: %{{[^:]*}}: tensor<4xf32> {{[^}]*}}zero.param = "w1"}
// CHECK-SAME: %{{[^:]*}}: tensor<2xf32> {{[^}]*}}zero.param = "b1"}
// CHECK-SAME: %[[M0:[^:]*]]: tensor<4xf32> {zero.param = "w0", zero.state = "exp_avg"}
// CHECK-SAME: %[[V0:[^:]*]]: tensor<4xf32> {zero.param = "w0", zero.state = "exp_avg_sq"}
// CHECK-SAME: %[[MB0:[^:]*]]: tensor<1xf32> {zero.param = "b0", zero.state = "exp_avg"}
// CHECK-SAME: %{{[^:]*}}: tensor<1xf32> {zero.param = "b0", zero.state = "exp_avg_sq"}
// CHECK-SAME: %{{[^:]*}}: tensor<4xf32> {zero.param = "w1", zero.state = "exp_avg"}
// CHECK-SAME: %{{[^:]*}}: tensor<4xf32> {zero.param = "w1", zero.state = "exp_avg_sq"}
// CHECK-SAME: %{{[^:]*}}: tensor<2xf32> {zero.param = "b1", zero.state = "exp_avg"}
// CHECK-SAME: %{{[^:]*}}: tensor<2xf32> {zero.param = "b1", zero.state = "exp_avg_sq"}
// CHECK-SAME: %[[STEP:[^:]*]]: tensor<i64> {zero.step}
// CHECK-SAME: %{{[^:]*}}: tensor<2x4xf32> {zero.data = "x"}
// CHECK-SAME: -> (tensor<f32> {zero.loss}, tensor<4xf32> {{[^}]*}}zero.param = "w0"}, tensor<4xf32> {{[^}]*}}zero.param = "b0", zero.persistent}, tensor<4xf32> {{[^}]*}}zero.param = "w1"}, tensor<2xf32> {{[^}]*}}zero.param = "b1"}, tensor<4xf32> {zero.param = "w0", zero.state = "exp_avg"}
// CHECK-SAME: tensor<i64> {zero.step})
// CHECK:      %[[OLD:.*]] = tensor.extract %[[STEP]][] : tensor<i64>
// CHECK:      %[[NEW:.*]] = arith.addi %[[OLD]], %{{.*}} : i64
// CHECK:      %[[LR:.*]] = arith.constant 0.00999999977 : f32
// CHECK:      %[[W0N:.*]], %{{.*}}, %{{.*}} = zero.adam %[[W0]], %{{.*}}, %[[M0]], %[[V0]], %[[NEW]], %[[LR]] {weight_decay = 1.000000e-01 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[B0S:.*]] = zero.local_shard %[[B0]] layout #zero.layout<shape = [4], world_size = 4> into tensor<1xf32> : tensor<4xf32>
// CHECK:      %[[B0N:.*]], %{{.*}}, %{{.*}} = zero.adam %[[B0S]], %{{.*}}, %[[MB0]],
// CHECK:      %[[H:.*]] = zero.all_gather_start %[[B0N]] layouts [#zero.layout<shape = [4], world_size = 4>] : tensor<1xf32>
// CHECK:      %[[B0F:.*]] = zero.wait %[[H]] : tensor<4xf32>
// CHECK:      zero.adam
// CHECK:      zero.adam
// CHECK:      %[[STEPN:.*]] = tensor.from_elements %[[NEW]] : tensor<i64>
// CHECK:      return %{{.*}}, %[[W0N]], %[[B0F]], {{.*}}, %[[STEPN]] :

// Stage 0, SGD with Nesterov momentum: full-size momentum buffers, the full
// parameter stepped in place, no gathers.
// SGD0-LABEL: func.func @step(
// SGD0-SAME: %{{[^:]*}}: tensor<4x4xf32> {zero.param = "w0", zero.state = "momentum_buffer"}
// SGD0-NOT: zero.all_gather_start
// SGD0: zero.sgd %{{.*}} {momentum = 9.000000e-01 : f64, nesterov = true} : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
// SGD0-NOT: zero.all_gather_start
// SGD0: return

// sub_group_size=3: a 4-element shard is stepped in tiles of 3 and 1; the
// 1-element shard of b0 in one. Classic Adam (L2) when adam_w_mode is off.
// TILES:      %[[S:.*]] = zero.local_shard %{{.*}} layout #zero.layout<shape = [4, 4], world_size = 4> into tensor<4xf32>
// TILES:      tensor.extract_slice %[[S]][0] [3] [1] : tensor<4xf32> to tensor<3xf32>
// TILES:      zero.adam {{.*}}mode = #zero.adam_mode<l2>{{.*}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// TILES:      tensor.insert_slice %{{.*}}[0] [3] [1] : tensor<3xf32> into tensor<4xf32>
// TILES:      tensor.extract_slice %[[S]][3] [1] [1] : tensor<4xf32> to tensor<1xf32>
// TILES:      zero.adam {{.*}} : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
// TILES:      tensor.insert_slice %{{.*}}[3] [1] [1] : tensor<1xf32> into tensor<4xf32>
// TILES:      zero.all_gather_start

// amsgrad=true: a third Adam state per parameter, max_exp_avg_sq, a shard
// like the moments, after exp_avg_sq; each zero.adam (here each tile of
// sub-group-size 3) takes and returns it, and it is returned updated.
// AMSGRAD-LABEL: func.func @step(
// AMSGRAD-SAME: %[[M0:[^:]*]]: tensor<4xf32> {zero.param = "w0", zero.state = "exp_avg"}
// AMSGRAD-SAME: %[[V0:[^:]*]]: tensor<4xf32> {zero.param = "w0", zero.state = "exp_avg_sq"}
// AMSGRAD-SAME: %[[VMAX0:[^:]*]]: tensor<4xf32> {zero.param = "w0", zero.state = "max_exp_avg_sq"}
// AMSGRAD-SAME: %{{[^:]*}}: tensor<1xf32> {zero.param = "b0", zero.state = "exp_avg"}
// AMSGRAD-SAME: %{{[^:]*}}: tensor<1xf32> {zero.param = "b0", zero.state = "exp_avg_sq"}
// AMSGRAD-SAME: %[[VMAXB0:[^:]*]]: tensor<1xf32> {zero.param = "b0", zero.state = "max_exp_avg_sq"}
// AMSGRAD-SAME: %{{[^:]*}}: tensor<2xf32> {zero.param = "b1", zero.state = "max_exp_avg_sq"}
// AMSGRAD-SAME: %{{[^:]*}}: tensor<i64> {zero.step}
// AMSGRAD-SAME: -> (
// AMSGRAD-SAME: tensor<4xf32> {zero.param = "w0", zero.state = "exp_avg_sq"}, tensor<4xf32> {zero.param = "w0", zero.state = "max_exp_avg_sq"}, tensor<1xf32> {zero.param = "b0", zero.state = "exp_avg"}
// AMSGRAD:      %[[T0:.*]] = tensor.extract_slice %[[VMAX0]][0] [3] [1] : tensor<4xf32> to tensor<3xf32>
// AMSGRAD-NEXT: %{{.*}}, %{{.*}}, %{{.*}}, %[[VMAXT0:[a-z_0-9]+]] = zero.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} amsgrad(%[[T0]]) : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// AMSGRAD:      %[[VMAXI0:.*]] = tensor.insert_slice %[[VMAXT0]] into %{{.*}}[0] [3] [1] : tensor<3xf32> into tensor<4xf32>
// AMSGRAD:      %[[T1:.*]] = tensor.extract_slice %[[VMAX0]][3] [1] [1] : tensor<4xf32> to tensor<1xf32>
// AMSGRAD-NEXT: %{{.*}}, %{{.*}}, %{{.*}}, %[[VMAXT1:[a-z_0-9]+]] = zero.adam {{.*}} amsgrad(%[[T1]]) : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
// AMSGRAD:      %[[VMAXW0:.*]] = tensor.insert_slice %[[VMAXT1]] into %[[VMAXI0]][3] [1] [1] : tensor<1xf32> into tensor<4xf32>
// AMSGRAD:      %{{.*}}, %{{.*}}, %{{.*}}, %[[VMAXB0N:[a-z_0-9]+]] = zero.adam {{.*}} amsgrad(%[[VMAXB0]]) : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
// AMSGRAD-COUNT-3: zero.adam {{.*}} amsgrad(
// AMSGRAD-NOT:  zero.adam
// AMSGRAD:      return {{.*}}, %[[VMAXW0]], {{.*}}, %[[VMAXB0N]], {{.*}} : tensor<f32>

// Gradient clipping at stage 1: the squares of every gradient shard are
// summed locally, then across ranks, before the coefficient
// min(1, 1.0 / (norm + 1e-6)) scales every gradient.
// CLIP:      linalg.reduce
// CLIP:      %[[LOCAL:.*]] = tensor.from_elements %{{.*}} : tensor<f32>
// CLIP-NEXT: %[[H:.*]] = zero.all_reduce_start sum %[[LOCAL]] : tensor<f32>
// CLIP-NEXT: %[[G:.*]] = zero.wait %[[H]] : tensor<f32>
// CLIP-NEXT: %[[T:.*]] = tensor.extract %[[G]][] : tensor<f32>
// CLIP-NEXT: %[[N:.*]] = math.sqrt %[[T]] : f32
// CLIP:      %[[C:.*]] = arith.minimumf %{{.*}}, %{{.*}} : f32
// CLIP:      arith.mulf %{{.*}}, %[[C]] : f32
// CLIP:      zero.adam

// The option is an enum: its values are adam, adamw and sgd (--help).
// UNKNOWN: zero-opt: for the --optimizer option: Cannot find option named 'lamb'!
