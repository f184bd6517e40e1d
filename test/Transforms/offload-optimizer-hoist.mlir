// zero-offload-optimizer moves the device's other reads of a tensor it swaps
// out (fp16's overflow check, a norm) right after the tensor's definition,
// with the constants and fresh buffers only they use, so that the swap-out
// starts there. A reader whose body reads a value defined later (here %s, a
// scalar extracted after the gradient) stays where it is, and so the
// gradient's swap-out waits for it.
// RUN: zero-opt %s --zero-offload-optimizer=device=cpu | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK:      %[[G:.*]] = linalg.map { arith.mulf } ins(%arg3, %arg0 : tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[SQ:.*]] = linalg.map { arith.mulf } ins(%[[G]], %[[G]] : tensor<8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill
// CHECK-NEXT: %[[NORM:.*]] = linalg.reduce { arith.addf } ins(%[[SQ]] : tensor<8xf32>) outs(%[[F]] : tensor<f32>)
// CHECK:      %[[S:.*]] = tensor.extract
// CHECK:      %[[SCALED:.*]] = linalg.map ins(%[[G]] : tensor<8xf32>)
// CHECK:        arith.mulf %{{.*}}, %[[S]] : f32
// CHECK:      zero.swap_out_start %[[G]] to host : tensor<8xf32>
// CHECK:      return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NORM]] :
func.func @step(%w: tensor<8xf32> {zero.layout = #zero.layout<shape = [8], world_size = 1>, zero.param = "w"},
                %m: tensor<8xf32> {zero.param = "w", zero.state = "exp_avg"},
                %v: tensor<8xf32> {zero.param = "w", zero.state = "exp_avg_sq"},
                %x: tensor<8xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<8xf32> {zero.layout = #zero.layout<shape = [8], world_size = 1>, zero.param = "w"},
        tensor<8xf32> {zero.param = "w", zero.state = "exp_avg"},
        tensor<8xf32> {zero.param = "w", zero.state = "exp_avg_sq"},
        tensor<f32> {zero.data = "norm"})
    attributes {zero.stage = 1 : i64, zero.world_size = 1 : i64} {
  %e = tensor.empty() : tensor<8xf32>
  %g = linalg.map { arith.mulf } ins(%x, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>)
  %e1 = tensor.empty() : tensor<8xf32>
  %h = linalg.map { arith.addf } ins(%x, %x : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>)
  %c0 = arith.constant 0 : index
  %s = tensor.extract %h[%c0] : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %scaled = linalg.map ins(%g : tensor<8xf32>) outs(%e2 : tensor<8xf32>)
    (%in: f32, %init: f32) {
      %t = arith.mulf %in, %s : f32
      linalg.yield %t : f32
    }
  %e4 = tensor.empty() : tensor<8xf32>
  %sq = linalg.map { arith.mulf } ins(%g, %g : tensor<8xf32>, tensor<8xf32>) outs(%e4 : tensor<8xf32>)
  %z2 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<f32>
  %f2 = linalg.fill ins(%z2 : f32) outs(%e5 : tensor<f32>) -> tensor<f32>
  %norm = linalg.reduce { arith.addf } ins(%sq : tensor<8xf32>) outs(%f2 : tensor<f32>) dimensions = [0]
  %z = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e3 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%scaled : tensor<8xf32>) outs(%f : tensor<f32>) dimensions = [0]
  %one = arith.constant 1 : i64
  %lr = arith.constant 1.0e-3 : f32
  %nw, %nm, %nv = zero.adam %w, %g, %m, %v, %one, %lr : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return %loss, %nw, %nm, %nv, %norm : tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>
}
