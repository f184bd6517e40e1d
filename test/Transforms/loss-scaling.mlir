// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-mixed-precision=precision=fp16 --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="loss-scale-window=100 hysteresis=3 min-loss-scale=0.5" \
// RUN:   | FileCheck %s
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-mixed-precision=precision=fp16 --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="consecutive-hysteresis=true" \
// RUN:   | FileCheck %s --check-prefix=CONSEC
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=1 world-size=4" \
// RUN:   --zero-mixed-precision=precision=fp16 --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="gradient-clipping=1.0" \
// RUN:   | FileCheck %s --check-prefix=CLIP
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=0 world-size=4" \
// RUN:   --zero-mixed-precision=precision=fp16 --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="optimizer=sgd momentum=0.9" \
// RUN:   | FileCheck %s --check-prefix=STAGE0
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-mixed-precision=precision=fp16 --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer="optimizer=sgd" \
// RUN:   | FileCheck %s --check-prefix=PLAINSGD
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-mixed-precision="precision=fp16 loss-scale=128" \
// RUN:   --zero-reduce-gradients --zero-insert-optimizer \
// RUN:   | FileCheck %s --check-prefix=STATIC
// RUN: zero-opt %S/Inputs/two-layer-step.mlir \
// RUN:   --zero-partition="stage=2 world-size=4" \
// RUN:   --zero-mixed-precision=precision=bf16 --zero-reduce-gradients \
// RUN:   --zero-insert-optimizer | FileCheck %s --check-prefix=BF16
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-insert-optimizer="loss-scale-window=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADWINDOW
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-insert-optimizer="hysteresis=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADHYST
// RUN: not zero-opt %S/Inputs/two-layer-step.mlir --zero-partition \
// RUN:   --zero-insert-optimizer="min-loss-scale=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADMIN
// RUN: not zero-opt %s -split-input-file --zero-partition \
// RUN:   --zero-insert-optimizer 2>&1 | FileCheck %s --check-prefix=INVALID

// fp16 with a dynamic loss scale, stage 2. The scale's states follow the
// step counter: the scale from zero-mixed-precision, then the hysteresis
// (starting full, at the `hysteresis` option) and the count of steps
// without overflow (starting at 0). All three are returned updated.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[MW0:[^:]*]]: tensor<4xf32> {zero.param = "w0", zero.state = "master"}
// CHECK-SAME: %[[AW0:[^:]*]]: tensor<4xf32> {zero.param = "w0", zero.state = "exp_avg"}
// CHECK-SAME: %[[SW0:[^:]*]]: tensor<4xf32> {zero.param = "w0", zero.state = "exp_avg_sq"}
// CHECK-SAME: %[[MB0:[^:]*]]: tensor<1xf32> {zero.param = "b0", zero.state = "master"}
// CHECK-SAME: %[[AB0:[^:]*]]: tensor<1xf32> {zero.param = "b0", zero.state = "exp_avg"}
// CHECK-SAME: %[[SB0:[^:]*]]: tensor<1xf32> {zero.param = "b0", zero.state = "exp_avg_sq"}
// CHECK-SAME: %[[MW1:[^:]*]]: tensor<4xf32> {zero.param = "w1", zero.state = "master"}
// CHECK-SAME: %[[AW1:[^:]*]]: tensor<4xf32> {zero.param = "w1", zero.state = "exp_avg"}
// CHECK-SAME: %[[SW1:[^:]*]]: tensor<4xf32> {zero.param = "w1", zero.state = "exp_avg_sq"}
// CHECK-SAME: %[[MB1:[^:]*]]: tensor<2xf32> {zero.param = "b1", zero.state = "master"}
// CHECK-SAME: %[[AB1:[^:]*]]: tensor<2xf32> {zero.param = "b1", zero.state = "exp_avg"}
// CHECK-SAME: %[[SB1:[^:]*]]: tensor<2xf32> {zero.param = "b1", zero.state = "exp_avg_sq"}
// CHECK-SAME: %[[STEP:[^:]*]]: tensor<i64> {zero.step},
// CHECK-SAME: %[[SCALE:[^:]*]]: tensor<f32> {zero.dynamic, zero.initial_value = 6.553600e+04 : f32, zero.state = "loss_scale"},
// CHECK-SAME: %[[HYST:[^:]*]]: tensor<i64> {zero.initial_value = 3 : i64, zero.state = "loss_scale_hysteresis"},
// CHECK-SAME: %[[GOOD:[^:]*]]: tensor<i64> {zero.initial_value = 0 : i64, zero.state = "good_steps"},
// CHECK-SAME: %{{[^:]*}}: tensor<2x4xf32> {zero.data = "x"})
// CHECK-SAME: tensor<2xf32> {zero.param = "b1", zero.state = "exp_avg_sq"}, tensor<i64> {zero.step}, tensor<f32> {zero.dynamic, zero.initial_value = 6.553600e+04 : f32, zero.state = "loss_scale"}, tensor<i64> {zero.initial_value = 3 : i64, zero.state = "loss_scale_hysteresis"}, tensor<i64> {zero.initial_value = 0 : i64, zero.state = "good_steps"})

// The reduced (still scaled) gradient shards.
// CHECK:      zero.reduce_scatter_start {{.*}}zero.grads = ["w1"]
// CHECK-NEXT: %[[GW1:.*]] = zero.wait %{{.*}} : tensor<4xf16>
// CHECK:      zero.reduce_scatter_start {{.*}}zero.grads = ["w0"]
// CHECK-NEXT: %[[GW0:.*]] = zero.wait %{{.*}} : tensor<4xf16>
// CHECK:      zero.reduce_scatter_start {{.*}}zero.grads = ["b0"]
// CHECK-NEXT: %[[GB0:.*]] = zero.wait %{{.*}} : tensor<1xf16>
// CHECK:      zero.reduce_scatter_start {{.*}}zero.grads = ["b1"]
// CHECK-NEXT: %[[GB1:.*]] = zero.wait %{{.*}} : tensor<2xf16>

// CHECK:      %[[OLD:.*]] = tensor.extract %[[STEP]][] : tensor<i64>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[NEW:.*]] = arith.addi %[[OLD]], %[[ONE]] : i64
// CHECK-NEXT: %[[LR:.*]] = arith.constant 1.000000e-03 : f32
// CHECK-NEXT: %[[S:.*]] = tensor.extract %[[SCALE]][] : tensor<f32>

// Overflow check: one zero.any_nonfinite over every shard (1.0 where
// some element is +-inf or NaN), then the max over the ranks.
// CHECK-NEXT: %[[LOCAL:.*]] = zero.any_nonfinite %[[GW0]], %[[GB0]], %[[GW1]], %[[GB1]] : tensor<4xf16>, tensor<1xf16>, tensor<4xf16>, tensor<2xf16>
// CHECK-NEXT: %[[LT:.*]] = tensor.from_elements %[[LOCAL]] : tensor<f32>
// CHECK-NEXT: %[[H:.*]] = zero.all_reduce_start max %[[LT]] : tensor<f32>
// CHECK-NEXT: %[[GT:.*]] = zero.wait %[[H]] : tensor<f32>
// CHECK-NEXT: %[[GLOBAL:.*]] = tensor.extract %[[GT]][] : tensor<f32>
// CHECK-NEXT: %[[Z2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[OVF:.*]] = arith.cmpf ogt, %[[GLOBAL]], %[[Z2]] : f32

// w0: Adam reads the scaled f16 shard, unscales it and skips the step on
// overflow itself (every result is then its operand); the 16-bit
// parameter is the returned master, truncated and gathered.
// CHECK-NEXT: %[[PW0:[^,]*]], %[[NAW0:[^,]*]], %[[NSW0:[^ ]*]] = zero.adam %[[MW0]], %[[GW0]], %[[AW0]], %[[SW0]], %[[NEW]], %[[LR]] unscale(%[[S]]) skip(%[[OVF]]) : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: tensor.empty() : tensor<4xf16>
// CHECK-NEXT: %[[TW0:.*]] = linalg.map { arith.truncf } ins(%[[PW0]] : tensor<4xf32>)
// CHECK-NEXT: %[[HW0:.*]] = zero.all_gather_start %[[TW0]] layouts [#zero.layout<shape = [4, 4], world_size = 4>] : tensor<4xf16>
// CHECK-NEXT: %[[W0:.*]] = zero.wait %[[HW0]] : tensor<4x4xf16>

// b0, w1, b1 alike.
// CHECK-NEXT: %[[PB0:[^,]*]], %[[NAB0:[^,]*]], %[[NSB0:[^ ]*]] = zero.adam %[[MB0]], %[[GB0]], %[[AB0]], %[[SB0]], %[[NEW]], %[[LR]] unscale(%[[S]]) skip(%[[OVF]]) :
// CHECK:      %[[B0:.*]] = zero.wait %{{.*}} : tensor<4xf16>
// CHECK-NEXT: %[[PW1:[^,]*]], %[[NAW1:[^,]*]], %[[NSW1:[^ ]*]] = zero.adam %[[MW1]], %[[GW1]], %[[AW1]], %[[SW1]], %[[NEW]], %[[LR]] unscale(%[[S]]) skip(%[[OVF]]) :
// CHECK:      %[[W1:.*]] = zero.wait %{{.*}} : tensor<4x4xf16>
// CHECK-NEXT: %[[PB1:[^,]*]], %[[NAB1:[^,]*]], %[[NSB1:[^ ]*]] = zero.adam %[[MB1]], %[[GB1]], %[[AB1]], %[[SB1]], %[[NEW]], %[[LR]] unscale(%[[S]]) skip(%[[OVF]]) :
// CHECK:      %[[B1:.*]] = zero.wait %{{.*}} : tensor<6xf16>

// The step counter stays on overflow (Adam's bias correction skips too).
// CHECK-NEXT: %[[KSTEP:.*]] = arith.select %[[OVF]], %[[OLD]], %[[NEW]] : i64
// CHECK-NEXT: %[[STEPN:.*]] = tensor.from_elements %[[KSTEP]] : tensor<i64>

// DeepSpeed's update_scale, window 100, hysteresis 3, min scale 0.5:
// grow = (good + 1) % 100 == 0, shrink = hysteresis <= 1;
// overflow:    scale = shrink ? max(scale / 2, 0.5) : scale,
//              hysteresis = shrink ? hysteresis : hysteresis - 1, good = 0;
// no overflow: scale = grow ? scale * 2 : scale,
//              hysteresis = grow ? 3 : hysteresis, good = good + 1.
// CHECK-NEXT: %[[HV:.*]] = tensor.extract %[[HYST]][] : tensor<i64>
// CHECK-NEXT: %[[GV:.*]] = tensor.extract %[[GOOD]][] : tensor<i64>
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[G1:.*]] = arith.addi %[[GV]], %[[C1]] : i64
// CHECK-NEXT: %[[WIN:.*]] = arith.constant 100 : i64
// CHECK-NEXT: %[[PHASE:.*]] = arith.remsi %[[G1]], %[[WIN]] : i64
// CHECK-NEXT: %[[GROW:.*]] = arith.cmpi eq, %[[PHASE]], %[[C0]] : i64
// CHECK-NEXT: %[[SHRINK:.*]] = arith.cmpi sle, %[[HV]], %[[C1]] : i64
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[MIN:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.divf %[[S]], %[[TWO]] : f32
// CHECK-NEXT: %[[HALFMIN:.*]] = arith.maximumf %[[HALF]], %[[MIN]] : f32
// CHECK-NEXT: %[[DOUBLE:.*]] = arith.mulf %[[S]], %[[TWO]] : f32
// CHECK-NEXT: %[[SOVF:.*]] = arith.select %[[SHRINK]], %[[HALFMIN]], %[[S]] : f32
// CHECK-NEXT: %[[SOK:.*]] = arith.select %[[GROW]], %[[DOUBLE]], %[[S]] : f32
// CHECK-NEXT: %[[SNEW:.*]] = arith.select %[[OVF]], %[[SOVF]], %[[SOK]] : f32
// CHECK-NEXT: %[[FULL:.*]] = arith.constant 3 : i64
// CHECK-NEXT: %[[HM1:.*]] = arith.subi %[[HV]], %[[C1]] : i64
// CHECK-NEXT: %[[HOVF:.*]] = arith.select %[[SHRINK]], %[[HV]], %[[HM1]] : i64
// CHECK-NEXT: %[[HOK:.*]] = arith.select %[[GROW]], %[[FULL]], %[[HV]] : i64
// CHECK-NEXT: %[[HNEW:.*]] = arith.select %[[OVF]], %[[HOVF]], %[[HOK]] : i64
// CHECK-NEXT: %[[GNEW:.*]] = arith.select %[[OVF]], %[[C0]], %[[G1]] : i64
// CHECK-NEXT: %[[SN:.*]] = tensor.from_elements %[[SNEW]] : tensor<f32>
// CHECK-NEXT: %[[HN:.*]] = tensor.from_elements %[[HNEW]] : tensor<i64>
// CHECK-NEXT: %[[GN:.*]] = tensor.from_elements %[[GNEW]] : tensor<i64>
// CHECK-NEXT: return %{{[^,]*}}, %[[W0]], %[[B0]], %[[W1]], %[[B1]], %[[PW0]], %[[NAW0]], %[[NSW0]], %[[PB0]], %[[NAB0]], %[[NSB0]], %[[PW1]], %[[NAW1]], %[[NSW1]], %[[PB1]], %[[NAB1]], %[[NSB1]], %[[STEPN]], %[[SN]], %[[HN]], %[[GN]] :

// consecutive-hysteresis: every step without overflow refills the
// hysteresis (default window 1000, hysteresis 2, min scale 1).
// CONSEC-LABEL: func.func @step(
// CONSEC-SAME: %[[HYST:[^:]*]]: tensor<i64> {zero.initial_value = 2 : i64, zero.state = "loss_scale_hysteresis"}
// CONSEC:      %[[HV:.*]] = tensor.extract %[[HYST]][] : tensor<i64>
// CONSEC:      arith.constant 1000 : i64
// CONSEC:      %[[MIN:.*]] = arith.constant 1.000000e+00 : f32
// CONSEC-NEXT: arith.divf
// CONSEC-NEXT: arith.maximumf %{{.*}}, %[[MIN]] : f32
// CONSEC:      %[[FULL:.*]] = arith.constant 2 : i64
// CONSEC-NEXT: %[[HM1:.*]] = arith.subi %[[HV]], %{{.*}} : i64
// CONSEC-NEXT: %[[HOVF:.*]] = arith.select %{{.*}}, %[[HV]], %[[HM1]] : i64
// CONSEC-NEXT: %{{.*}} = arith.select %{{.*}}, %[[HOVF]], %[[FULL]] : i64

// Clipping (stage 1): the norm of the scaled gradients is divided by the
// scale, as DeepSpeed does; Adam unscales and clips.
// CLIP-LABEL: func.func @step(
// CLIP-SAME: %[[SCALE:[^:]*]]: tensor<f32> {zero.dynamic
// CLIP:      arith.constant 1.000000e-03 : f32
// CLIP-NEXT: %[[S:.*]] = tensor.extract %[[SCALE]][] : tensor<f32>
// CLIP:      zero.all_reduce_start max
// CLIP:      %[[OVF:.*]] = arith.cmpf ogt
// CLIP:      zero.all_reduce_start sum
// CLIP:      %[[N:.*]] = math.sqrt %{{.*}} : f32
// CLIP-NEXT: %[[NU:.*]] = arith.divf %[[N]], %[[S]] : f32
// CLIP-NEXT: %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CLIP-NEXT: %[[MAXN:.*]] = arith.constant 1.000000e+00 : f32
// CLIP-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CLIP-NEXT: %[[D:.*]] = arith.addf %[[NU]], %[[EPS]] : f32
// CLIP-NEXT: %[[Q:.*]] = arith.divf %[[MAXN]], %[[D]] : f32
// CLIP-NEXT: %[[C:.*]] = arith.minimumf %[[Q]], %[[ONE]] : f32
// CLIP-NEXT: zero.adam %{{.*}} unscale(%[[S]]) clip(%[[C]]) skip(%[[OVF]]) : tensor<4xf32>, tensor<4xf16>,

// Stage 0: every rank holds the same all-reduced gradients, so the local
// overflow flag is already the same on every rank: no all-reduce of it.
// SGD with momentum unscales and skips as Adam does.
// STAGE0-NOT: zero.all_reduce_start max
// STAGE0:      zero.all_reduce_start avg {{.*}}zero.grads = ["b1"]
// STAGE0-NEXT: %[[GB1:.*]] = zero.wait %{{.*}} : tensor<6xf16>
// STAGE0:      %[[L:.*]] = zero.any_nonfinite %{{.*}}, %{{.*}}, %{{.*}}, %[[GB1]] : tensor<4x4xf16>, tensor<4xf16>, tensor<4x4xf16>, tensor<6xf16>
// STAGE0-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// STAGE0-NEXT: %[[OVF:.*]] = arith.cmpf ogt, %[[L]], %[[Z]] : f32
// STAGE0-NEXT: zero.sgd %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} unscale(%{{.*}}) skip(%[[OVF]]) {momentum = 9.000000e-01 : f64} : tensor<4x4xf32>, tensor<4x4xf16>, tensor<4x4xf32>
// STAGE0-COUNT-3: zero.sgd {{.*}} skip(%[[OVF]])
// STAGE0-NOT: zero.all_reduce_start max

// Plain SGD is a map, not an op: a map unscales its gradient before it and
// one selects its result on overflow after it.
// PLAINSGD:      %[[OVF:.*]] = arith.cmpf ogt
// PLAINSGD-NEXT: tensor.empty() : tensor<4xf32>
// PLAINSGD-NEXT: %[[U:.*]] = linalg.map ins(%{{.*}} : tensor<4xf16>) outs(%{{.*}} : tensor<4xf32>)
// PLAINSGD-NEXT: (%[[G:[^:]*]]: f16, %{{[^:]*}}: f32) {
// PLAINSGD-NEXT:   %[[GX:.*]] = arith.extf %[[G]] : f16 to f32
// PLAINSGD-NEXT:   arith.divf %[[GX]], %{{.*}} : f32
// PLAINSGD:      %[[NEWP:.*]] = linalg.map ins(%[[P:[^,]*]], %[[U]] : tensor<4xf32>, tensor<4xf32>)
// PLAINSGD:      linalg.map ins(%[[P]], %[[NEWP]] : tensor<4xf32>, tensor<4xf32>)
// PLAINSGD-NEXT: (%[[O:[^:]*]]: f32, %[[N:[^:]*]]: f32, %{{[^:]*}}: f32) {
// PLAINSGD-NEXT:   arith.select %[[OVF]], %[[O]], %[[N]] : f32

// A static scale: unscaled only. No overflow check, no skipped step, no
// scale states; the scale is not a result (it never changes).
// STATIC-LABEL: func.func @step(
// STATIC-SAME: %{{[^:]*}}: tensor<i64> {zero.step}, %[[SCALE:[^:]*]]: tensor<f32> {zero.initial_value = 1.280000e+02 : f32, zero.state = "loss_scale"}, %{{[^:]*}}: tensor<2x4xf32> {zero.data = "x"})
// STATIC-SAME: tensor<i64> {zero.step}) attributes
// STATIC-NOT: zero.all_reduce_start max
// STATIC-NOT: zero.any_nonfinite
// STATIC-NOT: arith.select
// STATIC:      arith.constant 1.000000e-03 : f32
// STATIC-NEXT: %[[S:.*]] = tensor.extract %[[SCALE]][] : tensor<f32>
// STATIC-NEXT: zero.adam %{{.*}} unscale(%[[S]]) : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>
// STATIC-NOT: zero.all_reduce_start max
// STATIC-NOT: arith.select
// STATIC:      return

// bf16: no loss scaling at all.
// BF16-LABEL: func.func @step(
// BF16-NOT: loss_scale
// BF16-NOT: good_steps
// BF16-SAME: tensor<i64> {zero.step}) attributes
// BF16-NOT: zero.all_reduce_start max
// BF16-NOT: arith.select
// BF16-NOT: arith.divf
// BF16:     zero.adam
// BF16-NOT: arith.select
// BF16:     return

// BADWINDOW: error: loss-scale-window must be at least 1, got 0
// BADHYST: error: hysteresis must be at least 1, got 0
// BADMIN: error: min-loss-scale must be > 0, got 0.000000e+00

// INVALID: error: the loss scale (argument #1) must be 'tensor<f32>', got 'tensor<f64>'
func.func @step(%w: tensor<4xf32> {zero.param = "w"},
                %s: tensor<f64> {zero.state = "loss_scale", zero.dynamic})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) {
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %w : tensor<f32>, tensor<4xf32>
}

// -----

// INVALID: error: arguments #1 and #2 are both marked 'zero.state = "loss_scale"'
func.func @step(%w: tensor<4xf32> {zero.param = "w"},
                %s: tensor<f32> {zero.state = "loss_scale"},
                %t: tensor<f32> {zero.state = "loss_scale"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) {
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %w : tensor<f32>, tensor<4xf32>
}
