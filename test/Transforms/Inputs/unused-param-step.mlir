// A training step with a parameter, u, that no op reads: its gradient is
// zeros (DeepSpeed's ignore_unused_parameters case).
func.func @train_step(%w: tensor<4xf32> {zero.param = "w"}, %u: tensor<4xf32> {zero.param = "u"},
                      %x: tensor<4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}, tensor<4xf32> {zero.grad = "u"}) {
  %e = tensor.empty() : tensor<4xf32>
  %p = linalg.map { arith.mulf } ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>)
  %z = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%z : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce { arith.addf } ins(%p : tensor<4xf32>) outs(%acc : tensor<f32>) dimensions = [0]
  %e2 = tensor.empty() : tensor<4xf32>
  %gu = linalg.fill ins(%z : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  return %l, %x, %gu : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
