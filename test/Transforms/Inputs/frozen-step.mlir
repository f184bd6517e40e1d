// A two-layer step whose first weight and second bias are frozen
// (`zero.frozen`: no gradient, as LoRA's base weights): w0 is read by the
// forward and again by the backward, far apart; b1 is read by nothing.
func.func @step(%w0: tensor<4x4xf32> {zero.param = "w0", zero.frozen},
                %w1: tensor<4x4xf32> {zero.param = "w1"},
                %b1: tensor<6xf32> {zero.param = "b1", zero.frozen},
                %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x4xf32> {zero.grad = "w1"}) {
  %e = tensor.empty() : tensor<2x4xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<2x4xf32>, tensor<4x4xf32>)
                      outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<2x4xf32>, tensor<4x4xf32>)
                      outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %et = tensor.empty() : tensor<4x4xf32>
  %e4 = tensor.empty() : tensor<4x2xf32>
  %h0t = linalg.transpose ins(%h0 : tensor<2x4xf32>) outs(%e4 : tensor<4x2xf32>) permutation = [1, 0]
  %gw1 = linalg.matmul ins(%h0t, %h1 : tensor<4x2xf32>, tensor<2x4xf32>)
                       outs(%et : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w0t = linalg.transpose ins(%w0 : tensor<4x4xf32>) outs(%et : tensor<4x4xf32>) permutation = [1, 0]
  %g = linalg.matmul ins(%gw1, %w0t : tensor<4x4xf32>, tensor<4x4xf32>)
                     outs(%et : tensor<4x4xf32>) -> tensor<4x4xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %g : tensor<f32>, tensor<4x4xf32>
}
