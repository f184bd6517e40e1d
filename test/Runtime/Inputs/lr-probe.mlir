// One parameter w (zeros) with loss = w and gradient 1: under plain SGD
// the loss falls by exactly the learning rate of each step, so the loss
// curve reads back the rates a schedule produced (lr_schedules.py).
func.func @train_step(%w: tensor<1xf64> {zero.param = "w", zero.init = "zeros"})
    -> (tensor<f64> {zero.loss}, tensor<1xf64> {zero.grad = "w"}) {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %init = tensor.empty() : tensor<f64>
  %acc = linalg.fill ins(%zero : f64) outs(%init : tensor<f64>) -> tensor<f64>
  %loss = linalg.reduce ins(%w : tensor<1xf64>) outs(%acc : tensor<f64>) dimensions = [0]
    (%in: f64, %out: f64) {
      %s = arith.addf %in, %out : f64
      linalg.yield %s : f64
    }
  %empty = tensor.empty() : tensor<1xf64>
  %grad = linalg.fill ins(%one : f64) outs(%empty : tensor<1xf64>) -> tensor<1xf64>
  return %loss, %grad : tensor<f64>, tensor<1xf64>
}
