// A rank step on 4 ranks in 2 nodes of 2 (grid [2, 2]) whose collectives run
// over groups: a gather within each node, an all-reduce across the nodes
// (the 2 ranks of one local rank), and one over the world. For
// test/Runtime/groups.test.
func.func @step(%x: tensor<8xf32> {zero.data = "x"})
    -> (tensor<f32> {zero.loss})
    attributes {zero.stage = 0 : i64, zero.world_size = 4 : i64, zero.ranks_per_node = 2 : i64} {
  %s = tensor.extract_slice %x[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %h0 = zero.all_gather_start %s grid_axes = [1] layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<4xf32>
  %g = zero.wait %h0 : tensor<8xf32>
  %h1 = zero.all_reduce_start sum %g grid_axes = [0] : tensor<8xf32>
  %xs = zero.wait %h1 : tensor<8xf32>
  %h2 = zero.all_reduce_start sum %xs : tensor<8xf32>
  %ws = zero.wait %h2 : tensor<8xf32>
  %e = tensor.empty() : tensor<f32>
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%ws : tensor<8xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) { %r = arith.addf %a, %b : f32
      linalg.yield %r : f32 }
  return %l : tensor<f32>
}
