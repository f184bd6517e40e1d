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
// CHECK: {"id": 5, "kind": "tensor", "dtype": "f32", "shape": [3, 2], "buffer": 5, "name": "[[V1:%[0-9]+]]"},
// CHECK: {"id": 6, "kind": "tensor", "dtype": "f32", "shape": [3, 2], "buffer": 5, "name": "[[V2:%[0-9]+]]"},
// CHECK: {"id": 12, "kind": "tensor", "dtype": "f32", "shape": [6], "buffer": 5, "name": "%collapsed"},
// CHECK: {"id": 31, "kind": "tensor", "dtype": "f32", "shape": [2, 2], "buffer": 10, "name": "%cst_2"},
// CHECK: {"id": 32, "kind": "tensor", "dtype": "f32", "shape": [1, 2, 2], "buffer": 10, "name": "%expanded"},
// CHECK: {"id": 35, "kind": "tensor", "dtype": "f32", "shape": [1, 2, 2], "buffer": 11, "name": "[[V3:%[0-9]+]]"},
// CHECK: {"id": 36, "kind": "tensor", "dtype": "f32", "shape": [2, 2], "buffer": 11, "name": "%collapsed_3"},

// CHECK-LABEL: "instructions": {
// CHECK-NEXT: "compute": [
// CHECK-NEXT: {"op": "linalg.generic", "point": [[#P1:]], "loc": "[[LOC1:<stdin>:[0-9]+:[0-9]+]]", "operands": [4, 5], "results": [6], "indexing_maps": {{\[\[}}0], [0, 1]], "iterator_types": ["parallel", "parallel"], "body": {"arguments": [7, 8], "ops": [{"op": "arith.index_cast", "operands": [7], "results": [9]}, {"op": "linalg.index", "operands": [], "results": [10], "dim": 1}, {"op": "tensor.extract", "operands": [0, 9, 10], "results": [11]}], "yield": [11]}},
// CHECK-NEXT: {"op": "tensor.extract_slice", "point": [[#P2:]], "loc": "[[LOC2:<stdin>:[0-9]+:[0-9]+]]", "operands": [12], "results": [13], "offsets": [1], "sizes": [4], "strides": [1]},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P3:]], "loc": "[[LOC3:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [14], "value": "-inf"},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P4:]], "loc": "[[LOC4:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [16], "value": {"data": [1.0, 2.0, 3.0, 4.0]}},
// CHECK-NEXT: {"op": "linalg.map", "point": [[#P5:]], "loc": "[[LOC5:<stdin>:[0-9]+:[0-9]+]]", "operands": [13, 16, 15], "results": [17], "body": {"arguments": [18, 19, 20], "ops": [{"op": "arith.subf", "operands": [18, 19], "results": [21]}, {"op": "arith.cmpf", "operands": [21, 14], "results": [22], "predicate": "olt"}, {"op": "arith.select", "operands": [22, 14, 21], "results": [23]}], "yield": [23]}},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P6:]], "loc": "[[LOC6:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [24], "value": 0.0},
// CHECK-NEXT: {"op": "linalg.fill", "point": [[#P7:]], "loc": "[[LOC7:<stdin>:[0-9]+:[0-9]+]]", "operands": [24, 25], "results": [26]},
// CHECK-NEXT: {"op": "linalg.reduce", "point": [[#P8:]], "loc": "[[LOC8:<stdin>:[0-9]+:[0-9]+]]", "operands": [17, 26], "results": [27], "dimensions": [0], "body": {"arguments": [28, 29], "ops": [{"op": "arith.addf", "operands": [29, 28], "results": [30]}], "yield": [30]}},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P9:]], "loc": "[[LOC9:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [31], "value": {"splat": 0.5}},
// CHECK-NEXT: {"op": "linalg.fill", "point": [[#P10:]], "loc": "[[LOC10:<stdin>:[0-9]+:[0-9]+]]", "operands": [24, 33], "results": [34]},
// CHECK-NEXT: {"op": "linalg.batch_matmul", "point": [[#P11:]], "loc": "[[LOC11:<stdin>:[0-9]+:[0-9]+]]", "operands": [32, 32, 34], "results": [35]},
// CHECK-NEXT: {"op": "linalg.fill", "point": [[#P12:]], "loc": "[[LOC12:<stdin>:[0-9]+:[0-9]+]]", "operands": [24, 37], "results": [38]},
// CHECK-NEXT: {"op": "tensor.insert_slice", "point": [[#P13:]], "loc": "[[LOC13:<stdin>:[0-9]+:[0-9]+]]", "operands": [36, 38], "results": [39], "offsets": [1, 0], "sizes": [2, 2], "strides": [1, 1]},
// CHECK-NEXT: {"op": "record", "point": [[#P14:]], "loc": "[[LOC14:<stdin>:[0-9]+:[0-9]+]]", "event": 0},
// CHECK-NEXT: {"op": "wait", "point": [[#P15:]], "loc": "[[LOC15:<stdin>:[0-9]+:[0-9]+]]", "event": 1},
// CHECK-NEXT: {"op": "tensor.extract", "point": [[#P16:]], "loc": "[[LOC16:<stdin>:[0-9]+:[0-9]+]]", "operands": [3], "results": [41]},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P17:]], "loc": "[[LOC17:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [42], "value": 1},
// CHECK-NEXT: {"op": "arith.addi", "point": [[#P18:]], "loc": "[[LOC18:<stdin>:[0-9]+:[0-9]+]]", "operands": [41, 42], "results": [43]},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P19:]], "loc": "[[LOC19:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [44], "value": 0.0010000000474974513},
// CHECK-NEXT: {"op": "zero.adam", "point": [[#P20:]], "loc": "[[LOC20:<stdin>:[0-9]+:[0-9]+]]", "operands": [0, 40, 1, 2, 43, 44], "results": [45, 46, 47], "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.0, "mode": "adamw", "bias_correction": true, "amsgrad": false},
// CHECK-NEXT: {"op": "tensor.from_elements", "point": [[#P21:]], "loc": "[[LOC21:<stdin>:[0-9]+:[0-9]+]]", "operands": [43], "results": [48]}
// CHECK-NEXT: ],
// CHECK-NEXT: "comm": [
// CHECK-NEXT: {"op": "wait", "point": [[#P14]], "loc": "[[LOC14]]", "event": 0},
// CHECK-NEXT: {"op": "all_reduce", "point": [[#P14]], "loc": "[[LOC14]]", "operands": [39], "results": [40], "reduction": "avg"},
// CHECK-NEXT: {"op": "record", "point": [[#P14]], "loc": "[[LOC14]]", "event": 1}
// CHECK-NEXT: ]
// CHECK-NEXT: },
// The gradient that the optimizer instruction consumes (compute[19]) is
// the whole of emb.weight (argument 0) at stage 0.
// CHECK-NEXT: "gradients": [
// CHECK-NEXT: {"instruction": 19, "param": "emb.weight", "argument": 0, "offset": 0}
// CHECK-NEXT: ]
// CHECK-NEXT: }
