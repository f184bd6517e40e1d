// Errors the emitter finds in a planned rank step: ops, types, arguments and
// results outside the format. Each function is a hand-written rank step,
// planned by zero-plan-memory.
//
// RUN: zero-opt %s -split-input-file --zero-plan-memory -mlir-print-debuginfo \
// RUN:   | not zero-translate --zero-to-schedule -split-input-file 2>&1 \
// RUN:   | FileCheck %s

#layout = #zero.layout<shape = [4, 4], world_size = 1>

func.func @step(%w: tensor<4x4xf32> {zero.param = "w", zero.layout = #layout}, %v: tensor<4xf32> {zero.data = "v"}) -> tensor<4x4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %e = tensor.empty() : tensor<4x4xf32>
  // A broadcast A: the schedule's GEMMs take a transposed operand at most.
  // CHECK: invalid-planned.mlir:[[@LINE+1]]:8: error: 'linalg.matmul' op with indexing maps other than the default or A's or B's two loops swapped is not supported by the schedule
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%v, %w : tensor<4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

func.func @step(%w: tensor<1x4xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [1, 4], world_size = 1>}) -> tensor<4x4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %e = tensor.empty() : tensor<4x4xf32>
  // CHECK: invalid-planned.mlir:[[@LINE+1]]:8: error: 'linalg.generic' op has indexing map affine_map<(d0, d1) -> (0, d1)>, which is not a projected permutation; the schedule takes only those
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<1x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

func.func @step(%w: tensor<4xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [4], world_size = 1>}) -> tensor<2xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %i = arith.constant 1 : index
  // CHECK: invalid-planned.mlir:[[@LINE+1]]:8: error: 'tensor.extract_slice' op has dynamic offsets; the schedule takes static ones only
  %s = tensor.extract_slice %w[%i] [2] [1] : tensor<4xf32> to tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: parameter 'w' (argument #0) has no 'zero.layout'; run the ZeRO pipeline first
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %w : tensor<4xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: parameter 'w' (argument #0) has type 'tensor<3xf32>', which is neither its shard nor its full tensor under #zero.layout<shape = [4], world_size = 2>
func.func @step(%w: tensor<3xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [4], world_size = 2>}) -> tensor<3xf32>
    attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  return %w : tensor<3xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: parameter 'w' (argument #0): 'zero.init' must be "zeros", "ones", "normal(STD)" with STD > 0 or "file", got "uniform(0.1)"
func.func @step(%w: tensor<4xf32> {zero.param = "w", zero.init = "uniform(0.1)", zero.layout = #zero.layout<shape = [4], world_size = 1>}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %w : tensor<4xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: parameter 'w' (argument #0): 'zero.init' must be "zeros", "ones", "normal(STD)" with STD > 0 or "file", got "normal(-1)"
func.func @step(%w: tensor<4xf32> {zero.param = "w", zero.init = "normal(-1)", zero.layout = #zero.layout<shape = [4], world_size = 1>}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %w : tensor<4xf32>
}

// -----

// A tile (zero-tile-linear) whose block [2, 2] at (0, 3) lies outside its
// weight [4, 4].
// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: parameter 'w.tile_0_1' (argument #0): 'zero.tile' must be {param = "W", offset = array<i64: row, col>, shape = array<i64: K, N>} with the block inside the weight, got {offset = array<i64: 0, 3>, param = "w", shape = array<i64: 4, 4>}
func.func @step(%w: tensor<2x2xf32> {zero.param = "w.tile_0_1", zero.tile = {param = "w", offset = array<i64: 0, 3>, shape = array<i64: 4, 4>}, zero.layout = #zero.layout<shape = [2, 2], world_size = 1>}) -> tensor<2x2xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %w : tensor<2x2xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: data argument 'x' (argument #0): 'zero.data_bound' must be a positive integer on integer data, got 10 : i64 on 'tensor<4xf32>'
func.func @step(%x: tensor<4xf32> {zero.data = "x", zero.data_bound = 10 : i64}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %x : tensor<4xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: data argument 't' (argument #0): 'zero.data_bound' must be a positive integer on integer data, got 0 : i64 on 'tensor<4xi32>'
func.func @step(%t: tensor<4xi32> {zero.data = "t", zero.data_bound = 0 : i64}) -> tensor<4xi32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %t : tensor<4xi32>
}

// -----

// The values lie in [0, bound): bound - 1 must be a value of the element
// type. An i32 holds at most 2^31 - 1, so 2^31 is the largest bound.
// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: data argument 't' (argument #0): 'zero.data_bound' is 2147483649 but its 'i32' values are at most 2147483647; the bound can be at most 2147483648
func.func @step(%t: tensor<4xi32> {zero.data = "t", zero.data_bound = 2147483649 : i64}) -> tensor<4xi32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %t : tensor<4xi32>
}

// -----

// A bound wider than 64 bits.
// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: data argument 't' (argument #0): 'zero.data_bound' must be a positive integer on integer data, got 36893488147419103232 : i128 on 'tensor<4xi64>'
func.func @step(%t: tensor<4xi64> {zero.data = "t", zero.data_bound = 36893488147419103232 : i128}) -> tensor<4xi64>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %t : tensor<4xi64>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: data argument 't' (argument #0) is integer data without 'zero.data_bound': the runtime needs the exclusive upper bound of its values (the vocabulary, the classes)
func.func @step(%t: tensor<4xi32> {zero.data = "t"}) -> tensor<4xi32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %t : tensor<4xi32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: argument #0: the schedule does not know how to initialize state 'velocity' (master and the moments of a parameter start from it and zeros; other states need 'zero.initial_value')
func.func @step(%v: tensor<4xf32> {zero.state = "velocity"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %v : tensor<4xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: argument #0 (state 'loss_scale'): 'zero.initial_value' must be a number, got "big"
func.func @step(%s: tensor<f32> {zero.state = "loss_scale", zero.initial_value = "big"}) -> tensor<f32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %s : tensor<f32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+2]]:17: error: argument #1 is neither a parameter, an optimizer state, the step nor data ('zero.param', 'zero.state', 'zero.step', 'zero.data')
func.func @step(%x: tensor<4xf32> {zero.data = "x"},
                %y: tensor<4xf32>) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %x : tensor<4xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:1: error: 'func.func' op result #0 is neither the loss ('zero.loss') nor the update of an argument (the argument's 'zero.param', 'zero.state' or 'zero.step')
func.func @step(%x: tensor<4xf32> {zero.data = "x"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %x : tensor<4xf32>
}

// -----

// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: the schedule cannot hold a value of type 'tensor<4xi8>': tensors have static shapes and scalars are f32, f64, bf16, f16, i64, i32, i1 or index
func.func @step(%x: tensor<4xi8> {zero.data = "x"}) -> (tensor<f32> {zero.loss})
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %e = tensor.empty() : tensor<f32>
  return %e : tensor<f32>
}

// -----

// A layout for another world size than the function's: the runtime refuses
// it, so the emitter does.
// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: layout #zero.layout<shape = [4], world_size = 2> is for 2 ranks, but the step is compiled for 1 (zero.world_size)
func.func @step(%w: tensor<4xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [4], world_size = 2>}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  return %w : tensor<4xf32>
}

// -----

// In nodes, a layout is for the world or the ranks of one node (MiCS); 4
// ranks of 8 in nodes of 2 are neither.
// CHECK: invalid-planned.mlir:[[@LINE+1]]:17: error: layout #zero.layout<shape = [4], world_size = 4> is for 4 ranks, but the step is compiled for 8 (zero.world_size) in nodes of 2; a layout is cut across the world or the ranks of one node
func.func @step(%w: tensor<4xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [4], world_size = 4>}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 8 : i64, zero.ranks_per_node = 2 : i64} {
  return %w : tensor<4xf32>
}

// -----

func.func @step(%w: tensor<6xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [6], world_size = 1>}) -> tensor<3xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK: invalid-planned.mlir:[[@LINE+1]]:8: error: layout #zero.layout<shape = [6], world_size = 2> is for 2 ranks, but the step is compiled for 1 (zero.world_size)
  %s = zero.local_shard %w layout #zero.layout<shape = [6], world_size = 2> into tensor<3xf32> : tensor<6xf32>
  return %s : tensor<3xf32>
}

// -----

// The gradient record follows the param operand to an argument; a copy is
// not on the way.
func.func @step(%w: tensor<4xf32> {zero.param = "w", zero.layout = #zero.layout<shape = [4], world_size = 1>},
                %m: tensor<4xf32> {zero.param = "w", zero.state = "exp_avg"},
                %v: tensor<4xf32> {zero.param = "w", zero.state = "exp_avg_sq"},
                %g: tensor<4xf32> {zero.data = "g"})
    -> (tensor<4xf32> {zero.param = "w"}, tensor<4xf32> {zero.param = "w", zero.state = "exp_avg"},
        tensor<4xf32> {zero.param = "w", zero.state = "exp_avg_sq"})
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  %s = arith.constant 1 : i64
  %lr = arith.constant 0.001 : f32
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.copy ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // CHECK: invalid-planned.mlir:[[@LINE+1]]:10: error: 'zero.adam' op updates a tensor that the schedule's gradient record cannot trace to a parameter or its master weights (through 1-D tensor.extract_slice, tensor.collapse_shape, zero.local_shard and swaps): the trace ends at 'linalg.copy'
  %a:3 = zero.adam %c, %g, %m, %v, %s, %lr : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %a#0, %a#1, %a#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
