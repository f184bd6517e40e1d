// RUN: zero-opt %s -split-input-file -verify-diagnostics \
// RUN:   --zero-tile-linear="in-splits=3 out-splits=4"
// RUN: not zero-opt %s --split-input-file --zero-tile-linear="in-splits=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ZERO-IN
// ZERO-IN: error: 'zero-tile-linear': in-splits must be at least 1, got 0
// RUN: not zero-opt %s --split-input-file --zero-tile-linear="out-splits=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ZERO-OUT
// ZERO-OUT: error: 'zero-tile-linear': out-splits must be at least 1, got 0
// RUN: not zero-opt %s --split-input-file --zero-tile-linear="threshold=-1 out-splits=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=THRESHOLD
// THRESHOLD: error: 'zero-tile-linear': threshold must be at least 0, got -1
// The pipeline reports the same error.
// RUN: not zero-opt %s --split-input-file --zero-stage=3 --zero-tile-linear-out-splits=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ZERO-OUT

// W [4, 6]: 3 does not divide 4 (in), 4 does not divide 6 (out); both are
// reported, each naming the parameter and the dimension.
// expected-error @below {{'zero-tile-linear': in-splits = 3 does not divide dimension 0 (in, 4) of parameter 'w'}}
// expected-error @below {{'zero-tile-linear': out-splits = 4 does not divide dimension 1 (out, 6) of parameter 'w'}}
func.func @step(%w: tensor<4x6xf32> {zero.param = "w"},
                %x: tensor<2x4xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<4x6xf32> {zero.grad = "w"}) {
  %zero = arith.constant 0.0 : f32
  %e26 = tensor.empty() : tensor<2x6xf32>
  %f26 = linalg.fill ins(%zero : f32) outs(%e26 : tensor<2x6xf32>) -> tensor<2x6xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x6xf32>) outs(%f26 : tensor<2x6xf32>) -> tensor<2x6xf32>
  %e42 = tensor.empty() : tensor<4x2xf32>
  %xt = linalg.transpose ins(%x : tensor<2x4xf32>) outs(%e42 : tensor<4x2xf32>) permutation = [1, 0]
  %e46 = tensor.empty() : tensor<4x6xf32>
  %f46 = linalg.fill ins(%zero : f32) outs(%e46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %dw = linalg.matmul ins(%xt, %y : tensor<4x2xf32>, tensor<2x6xf32>) outs(%f46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %dw : tensor<f32>, tensor<4x6xf32>
}

// -----

// A tile's name taken by another parameter.
// expected-error @below {{'zero-tile-linear': cannot tile 'w': its tile name 'w.tile_0_0' is a parameter already}}
func.func @step(%w: tensor<3x4xf32> {zero.param = "w"},
                %t: tensor<2xf32> {zero.param = "w.tile_0_0"},
                %x: tensor<2x3xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss}, tensor<3x4xf32> {zero.grad = "w"},
        tensor<2xf32> {zero.grad = "w.tile_0_0"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e32 = tensor.empty() : tensor<3x2xf32>
  %xt = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e32 : tensor<3x2xf32>) permutation = [1, 0]
  %e34 = tensor.empty() : tensor<3x4xf32>
  %f34 = linalg.fill ins(%zero : f32) outs(%e34 : tensor<3x4xf32>) -> tensor<3x4xf32>
  %dw = linalg.matmul ins(%xt, %y : tensor<3x2xf32>, tensor<2x4xf32>) outs(%f34 : tensor<3x4xf32>) -> tensor<3x4xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  return %loss, %dw, %t : tensor<f32>, tensor<3x4xf32>, tensor<2xf32>
}
