// A step with a 0-d parameter %s: the loss is s + sum(x * w).
func.func @step(%w: tensor<4xf32> {zero.param = "w"}, %s: tensor<f32> {zero.param = "s"},
                %x: tensor<4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"},
        tensor<f32> {zero.grad = "s"}) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.map { arith.mulf } ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>)
  %loss = linalg.reduce { arith.addf } ins(%y : tensor<4xf32>) outs(%s : tensor<f32>) dimensions = [0]
  %one = arith.constant dense<1.0> : tensor<f32>
  return %loss, %x, %one : tensor<f32>, tensor<4xf32>, tensor<f32>
}
