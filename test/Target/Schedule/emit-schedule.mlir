// zero-opt --zero-emit-schedule=FILE writes the schedule of the IR it prints,
// byte for byte what zero-translate --zero-to-schedule writes for that IR.
//
// RUN: zero-opt %s --zero-stage=3 --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.stage3_param_persistence_threshold=0 \
// RUN:   --zero-emit-schedule=%t.opt.json -mlir-print-debuginfo -o %t.mlir
// RUN: zero-translate --zero-to-schedule %t.mlir -o %t.translate.json
// RUN: cmp %t.opt.json %t.translate.json
// RUN: FileCheck %s --input-file=%t.opt.json
//
// Without the pipeline it emits the step as it is (here: already compiled).
// RUN: zero-opt %t.mlir --zero-emit-schedule=%t.again.json -o /dev/null
// RUN: cmp %t.opt.json %t.again.json
//
// A step that has not been through the pipeline is an error, and nothing is
// written.
// RUN: rm -f %t.none.json
// RUN: not zero-opt %s --zero-emit-schedule=%t.none.json -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPLAN
// RUN: not test -e %t.none.json

// The source and every location are those of this file: the printed IR
// carries them (-mlir-print-debuginfo).
// CHECK: "source": "{{.*}}emit-schedule.mlir",
// CHECK: "function": "step",
// CHECK: {"op": "linalg.matmul", "point": {{[0-9]+}}, "loc": "{{.*}}emit-schedule.mlir:[[@LINE+10]]:8",

// NOPLAN: emit-schedule.mlir:[[@LINE+1]]:1: error: 'func.func' op '@step' has not been through the ZeRO pipeline: the schedule needs the 'zero.stage' attribute; compile it with zero-opt --zero-stage=N (or --zero-pipeline) first
func.func @step(%w: tensor<2x3xf32> {zero.param = "fc.weight"},
                %b: tensor<3xf32> {zero.param = "fc.bias"},
                %x: tensor<2x2xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<2x3xf32> {zero.grad = "fc.weight"},
        tensor<3xf32> {zero.grad = "fc.bias"}) {
  %e = tensor.empty() : tensor<2x3xf32>
  %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %y = linalg.matmul ins(%x, %w : tensor<2x2xf32>, tensor<2x3xf32>) outs(%bb : tensor<2x3xf32>) -> tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<2x3xf32>) outs(%l0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  // dy = 1: gw = x^T dy, gb = colsum(dy).
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<2x3xf32>
  %dy = linalg.fill ins(%one : f32) outs(%e1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x2xf32>
  %xt = linalg.transpose ins(%x : tensor<2x2xf32>) outs(%e2 : tensor<2x2xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<2x3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %gw = linalg.matmul ins(%xt, %dy : tensor<2x2xf32>, tensor<2x3xf32>) outs(%z3 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e4 = tensor.empty() : tensor<3xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<3xf32>) -> tensor<3xf32>
  %gb = linalg.reduce ins(%dy : tensor<2x3xf32>) outs(%z4 : tensor<3xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %loss, %gw, %gb : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>
}
