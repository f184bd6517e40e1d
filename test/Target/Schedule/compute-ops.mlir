// Compute ops and their fields: a generic with indexing maps, iterator types
// and a body that reads a tensor defined outside it (the embedding gather,
// linalg.index, tensor.extract); a map whose body reads a scalar defined
// outside it; slices; views (no instruction, the source's buffer); tensor
// constants (splat and data); -inf as a string; batch_matmul. Two ranks, so
// that the gradient's all-reduce is not folded away.
//
// RUN: zero-opt %s --zero-stage=0 --zero-world-size=2 \
// RUN:   | zero-translate --zero-to-schedule | FileCheck %s --match-full-lines

#col = affine_map<(n, h) -> (n)>
#id = affine_map<(n, h) -> (n, h)>
func.func @step(%emb: tensor<4x2xf32> {zero.param = "emb.weight"},
                %tok: tensor<3xi32> {zero.data = "tokens", zero.data_bound = 4 : i64})
    -> (tensor<f32> {zero.loss}, tensor<4x2xf32> {zero.grad = "emb.weight"}) {
  // The embedding gather: a generic whose body reads a tensor defined outside.
  %e0 = tensor.empty() : tensor<3x2xf32>
  %rows = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tok : tensor<3xi32>) outs(%e0 : tensor<3x2xf32>) {
  ^bb0(%t: i32, %out: f32):
    %i = arith.index_cast %t : i32 to index
    %h = linalg.index 1 : index
    %v = tensor.extract %emb[%i, %h] : tensor<4x2xf32>
    linalg.yield %v : f32
  } -> tensor<3x2xf32>
  // A view: no instruction, the same buffer.
  %flat = tensor.collapse_shape %rows [[0, 1]] : tensor<3x2xf32> into tensor<6xf32>
  %part = tensor.extract_slice %flat[1] [4] [1] : tensor<6xf32> to tensor<4xf32>
  // A map whose body reads a scalar defined outside it (-inf).
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %k = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = linalg.map ins(%part, %k : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>)
    (%a: f32, %b: f32, %init: f32) {
      %d = arith.subf %a, %b : f32
      %lt = arith.cmpf olt, %d, %ninf : f32
      %r = arith.select %lt, %ninf, %d : f32
      linalg.yield %r : f32
    }
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%m : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
  // The gradient: a batch matmul of a splat constant, put into rows 1-2.
  %half = arith.constant dense<0.5> : tensor<2x2xf32>
  %b3 = tensor.expand_shape %half [[0, 1], [2]] output_shape [1, 2, 2] : tensor<2x2xf32> into tensor<1x2x2xf32>
  %e3 = tensor.empty() : tensor<1x2x2xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  %bm = linalg.batch_matmul ins(%b3, %b3 : tensor<1x2x2xf32>, tensor<1x2x2xf32>) outs(%z3 : tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  %bm2 = tensor.collapse_shape %bm [[0, 1], [2]] : tensor<1x2x2xf32> into tensor<2x2xf32>
  %e4 = tensor.empty() : tensor<4x2xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %grad = tensor.insert_slice %bm2 into %z4[1, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x2xf32>
  return %loss, %grad : tensor<f32>, tensor<4x2xf32>
}

// The views share their source's buffer: %collapsed (12) the generic's (5),
// %expanded (32) the constant's (10), %collapsed_3 (36) the batch matmul's (11).
// CHECK: {"id": 5, "kind": "tensor", "dtype": "f32", "shape": [3, 2], "buffer": 5, "name": "%0"},
// CHECK: {"id": 6, "kind": "tensor", "dtype": "f32", "shape": [3, 2], "buffer": 5, "name": "%1"},
// CHECK: {"id": 12, "kind": "tensor", "dtype": "f32", "shape": [6], "buffer": 5, "name": "%collapsed"},
// CHECK: {"id": 31, "kind": "tensor", "dtype": "f32", "shape": [2, 2], "buffer": 10, "name": "%cst_2"},
// CHECK: {"id": 32, "kind": "tensor", "dtype": "f32", "shape": [1, 2, 2], "buffer": 10, "name": "%expanded"},
// CHECK: {"id": 35, "kind": "tensor", "dtype": "f32", "shape": [1, 2, 2], "buffer": 11, "name": "%7"},
// CHECK: {"id": 36, "kind": "tensor", "dtype": "f32", "shape": [2, 2], "buffer": 11, "name": "%collapsed_3"},

// CHECK-LABEL: "instructions": {
// CHECK-NEXT: "compute": [
// CHECK-NEXT: {"op": "linalg.generic", "point": 1, "loc": "<stdin>:6:10", "operands": [4, 5], "results": [6], "indexing_maps": {{\[\[}}0], [0, 1]], "iterator_types": ["parallel", "parallel"], "body": {"arguments": [7, 8], "ops": [{"op": "arith.index_cast", "operands": [7], "results": [9]}, {"op": "linalg.index", "operands": [], "results": [10], "dim": 1}, {"op": "tensor.extract", "operands": [0, 9, 10], "results": [11]}], "yield": [11]}},
// CHECK-NEXT: {"op": "tensor.extract_slice", "point": 3, "loc": "<stdin>:14:24", "operands": [12], "results": [13], "offsets": [1], "sizes": [4], "strides": [1]},
// CHECK-NEXT: {"op": "arith.constant", "point": 4, "loc": "<stdin>:15:12", "operands": [], "results": [14], "value": "-inf"},
// CHECK-NEXT: {"op": "arith.constant", "point": 6, "loc": "<stdin>:17:14", "operands": [], "results": [16], "value": {"data": [1.0, 2.0, 3.0, 4.0]}},
// CHECK-NEXT: {"op": "linalg.map", "point": 7, "loc": "<stdin>:18:15", "operands": [13, 16, 15], "results": [17], "body": {"arguments": [18, 19, 20], "ops": [{"op": "arith.subf", "operands": [18, 19], "results": [21]}, {"op": "arith.cmpf", "operands": [21, 14], "results": [22], "predicate": "olt"}, {"op": "arith.select", "operands": [22, 14, 21], "results": [23]}], "yield": [23]}},
// CHECK-NEXT: {"op": "arith.constant", "point": 8, "loc": "<stdin>:25:14", "operands": [], "results": [24], "value": 0.0},
// CHECK-NEXT: {"op": "linalg.fill", "point": 10, "loc": "<stdin>:27:10", "operands": [24, 25], "results": [26]},
// CHECK-NEXT: {"op": "linalg.reduce", "point": 11, "loc": "<stdin>:28:16", "operands": [17, 26], "results": [27], "dimensions": [0], "body": {"arguments": [28, 29], "ops": [{"op": "arith.addf", "operands": [29, 28], "results": [30]}], "yield": [30]}},
// CHECK-NEXT: {"op": "arith.constant", "point": 12, "loc": "<stdin>:29:14", "operands": [], "results": [31], "value": {"splat": 0.5}},
// CHECK-NEXT: {"op": "linalg.fill", "point": 15, "loc": "<stdin>:32:10", "operands": [24, 33], "results": [34]},
// CHECK-NEXT: {"op": "linalg.batch_matmul", "point": 16, "loc": "<stdin>:33:10", "operands": [32, 32, 34], "results": [35]},
// CHECK-NEXT: {"op": "linalg.fill", "point": 19, "loc": "<stdin>:36:10", "operands": [24, 37], "results": [38]},
// CHECK-NEXT: {"op": "tensor.insert_slice", "point": 20, "loc": "<stdin>:37:23", "operands": [36, 38], "results": [39], "offsets": [1, 0], "sizes": [2, 2], "strides": [1, 1]},
// CHECK-NEXT: {"op": "record", "point": 21, "loc": "<stdin>:38:11", "event": 0},
// CHECK-NEXT: {"op": "wait", "point": 22, "loc": "<stdin>:39:11", "event": 1},
// CHECK-NEXT: {"op": "tensor.extract", "point": 23, "loc": "<stdin>:40:18", "operands": [3], "results": [41]},
// CHECK-NEXT: {"op": "arith.constant", "point": 24, "loc": "<stdin>:41:15", "operands": [], "results": [42], "value": 1},
// CHECK-NEXT: {"op": "arith.addi", "point": 25, "loc": "<stdin>:42:11", "operands": [41, 42], "results": [43]},
// CHECK-NEXT: {"op": "arith.constant", "point": 26, "loc": "<stdin>:43:14", "operands": [], "results": [44], "value": 0.0010000000474974513},
// CHECK-NEXT: {"op": "zero.adam", "point": 27, "loc": "<stdin>:44:49", "operands": [0, 40, 1, 2, 43, 44], "results": [45, 46, 47], "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.0, "mode": "adamw", "bias_correction": true, "amsgrad": false},
// CHECK-NEXT: {"op": "tensor.from_elements", "point": 28, "loc": "<stdin>:45:22", "operands": [43], "results": [48]}
// CHECK-NEXT: ],
// CHECK-NEXT: "comm": [
// CHECK-NEXT: {"op": "wait", "point": 21, "loc": "<stdin>:38:11", "event": 0},
// CHECK-NEXT: {"op": "all_reduce", "point": 21, "loc": "<stdin>:38:11", "operands": [39], "results": [40], "reduction": "avg"},
// CHECK-NEXT: {"op": "record", "point": 21, "loc": "<stdin>:38:11", "event": 1}
// CHECK-NEXT: ]
// CHECK-NEXT: },
// The gradient that the optimizer instruction consumes (compute[19]) is
// the whole of emb.weight (argument 0) at stage 0.
// CHECK-NEXT: "gradients": [
// CHECK-NEXT: {"instruction": 19, "param": "emb.weight", "argument": 0, "offset": 0}
// CHECK-NEXT: ]
// CHECK-NEXT: }
