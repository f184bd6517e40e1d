// RUN: zero-opt %s --zero-tile-linear="threshold=8 in-splits=2 out-splits=3" \
// RUN:   | FileCheck %s
// RUN: zero-opt %s --zero-tile-linear="threshold=24 in-splits=2 out-splits=3" \
// RUN:   | FileCheck %s --check-prefix=THRESHOLD
// RUN: zero-opt %s --zero-tile-linear="out-splits=2" | FileCheck %s --check-prefix=OUT
// The pipeline option, before partitioning: each tile gets a layout and a
// shard of its own.
// RUN: zero-opt %S/Inputs/two-layer-step.mlir --zero-pipeline="stage=3 \
// RUN:   world-size=2 param-persistence-threshold=0 tile-linear-threshold=15 \
// RUN:   tile-linear-out-splits=2" | FileCheck %s --check-prefix=PIPELINE
// PIPELINE-LABEL: func.func @step(
// PIPELINE-SAME: tensor<4xf32> {zero.layout = #zero.layout<shape = [4, 2], world_size = 2>, {{.*}}zero.param = "w0.tile_0_0", zero.tile = {offset = array<i64: 0, 0>, param = "w0", shape = array<i64: 4, 4>}}
// PIPELINE-SAME: tensor<4xf32> {zero.layout = #zero.layout<shape = [4, 2], world_size = 2>, {{.*}}zero.param = "w0.tile_0_1", zero.tile = {offset = array<i64: 0, 2>, param = "w0", shape = array<i64: 4, 4>}}
// PIPELINE-SAME: zero.param = "b0"
// PIPELINE-SAME: zero.param = "w1.tile_0_0"
// PIPELINE-SAME: zero.param = "w1.tile_0_1"
// PIPELINE: zero.all_gather_start %arg0, %arg1, {{.*}} layouts [#zero.layout<shape = [4, 2], world_size = 2>, #zero.layout<shape = [4, 2], world_size = 2>,

// One linear layer y = x W + b (W [4, 6] stored [in, out]), its backward
// dx = dy W^T and dW = x^T dy, as zero-model writes them; `e` is an
// embedding-like weight read by a generic op, which is never tiled; `v`
// (4 elements) is below the threshold.
func.func @step(%w: tensor<4x6xf32> {zero.param = "w", zero.init = "ones"},
                %b: tensor<6xf32> {zero.param = "b"},
                %e: tensor<2x4xf32> {zero.param = "e"},
                %v: tensor<2x2xf32> {zero.param = "v"},
                %x: tensor<2x4xf32> {zero.data = "x"},
                %dy: tensor<2x6xf32> {zero.data = "dy"})
    -> (tensor<f32> {zero.loss}, tensor<4x6xf32> {zero.grad = "w"},
        tensor<6xf32> {zero.grad = "b"}, tensor<2x4xf32> {zero.grad = "e"},
        tensor<2x2xf32> {zero.grad = "v"}) {
  %zero = arith.constant 0.0 : f32
  %xe = linalg.map { arith.addf } ins(%x, %e : tensor<2x4xf32>, tensor<2x4xf32>) outs(%x : tensor<2x4xf32>)
  %eb = tensor.empty() : tensor<2x6xf32>
  %bb = linalg.broadcast ins(%b : tensor<6xf32>) outs(%eb : tensor<2x6xf32>) dimensions = [0] {zero.segment = 0 : i64}
  %y = linalg.matmul {zero.segment = 0 : i64} ins(%xe, %w : tensor<2x4xf32>, tensor<4x6xf32>) outs(%bb : tensor<2x6xf32>) -> tensor<2x6xf32>
  %ev = tensor.empty() : tensor<2x2xf32>
  %v2 = linalg.matmul ins(%ev, %v : tensor<2x2xf32>, tensor<2x2xf32>) outs(%ev : tensor<2x2xf32>) -> tensor<2x2xf32>
  // Backward.
  %e64 = tensor.empty() : tensor<6x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x6xf32>) outs(%e64 : tensor<6x4xf32>) permutation = [1, 0]
  %e24 = tensor.empty() : tensor<2x4xf32>
  %f24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %dx = linalg.matmul ins(%dy, %wt : tensor<2x6xf32>, tensor<6x4xf32>) outs(%f24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e42 = tensor.empty() : tensor<4x2xf32>
  %xt = linalg.transpose ins(%xe : tensor<2x4xf32>) outs(%e42 : tensor<4x2xf32>) permutation = [1, 0]
  %e46 = tensor.empty() : tensor<4x6xf32>
  %f46 = linalg.fill ins(%zero : f32) outs(%e46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %dw = linalg.matmul ins(%xt, %dy : tensor<4x2xf32>, tensor<2x6xf32>) outs(%f46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %loss = arith.constant dense<0.0> : tensor<f32>
  %e6 = tensor.empty() : tensor<6xf32>
  %db = linalg.reduce { arith.addf } ins(%y : tensor<2x6xf32>) outs(%e6 : tensor<6xf32>) dimensions = [0]
  return %loss, %dw, %db, %dx, %v2
      : tensor<f32>, tensor<4x6xf32>, tensor<6xf32>, tensor<2x4xf32>, tensor<2x2xf32>
}

// W becomes 2 x 3 tiles of [2, 2], row-major, in its place; each keeps
// zero.init and names its block of W. `e` and `v` stay.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W00:.*]]: tensor<2x2xf32> {zero.init = "ones", zero.param = "w.tile_0_0", zero.tile = {offset = array<i64: 0, 0>, param = "w", shape = array<i64: 4, 6>}},
// CHECK-SAME: %[[W01:.*]]: tensor<2x2xf32> {zero.init = "ones", zero.param = "w.tile_0_1", zero.tile = {offset = array<i64: 0, 2>, param = "w", shape = array<i64: 4, 6>}},
// CHECK-SAME: %[[W02:.*]]: tensor<2x2xf32> {zero.init = "ones", zero.param = "w.tile_0_2", zero.tile = {offset = array<i64: 0, 4>, param = "w", shape = array<i64: 4, 6>}},
// CHECK-SAME: %[[W10:.*]]: tensor<2x2xf32> {zero.init = "ones", zero.param = "w.tile_1_0", zero.tile = {offset = array<i64: 2, 0>, param = "w", shape = array<i64: 4, 6>}},
// CHECK-SAME: %[[W11:.*]]: tensor<2x2xf32> {zero.init = "ones", zero.param = "w.tile_1_1", zero.tile = {offset = array<i64: 2, 2>, param = "w", shape = array<i64: 4, 6>}},
// CHECK-SAME: %[[W12:.*]]: tensor<2x2xf32> {zero.init = "ones", zero.param = "w.tile_1_2", zero.tile = {offset = array<i64: 2, 4>, param = "w", shape = array<i64: 4, 6>}},
// CHECK-SAME: %{{.*}}: tensor<6xf32> {zero.param = "b"}, %{{.*}}: tensor<2x4xf32> {zero.param = "e"}, %[[V:.*]]: tensor<2x2xf32> {zero.param = "v"},
// CHECK-SAME: %{{.*}}: tensor<2x4xf32> {zero.data = "x"}, %[[DY:.*]]: tensor<2x6xf32> {zero.data = "dy"})
// CHECK-SAME: -> (tensor<f32> {zero.loss}, tensor<2x2xf32> {zero.grad = "w.tile_0_0"}, tensor<2x2xf32> {zero.grad = "w.tile_0_1"}, tensor<2x2xf32> {zero.grad = "w.tile_0_2"}, tensor<2x2xf32> {zero.grad = "w.tile_1_0"}, tensor<2x2xf32> {zero.grad = "w.tile_1_1"}, tensor<2x2xf32> {zero.grad = "w.tile_1_2"}, tensor<6xf32> {zero.grad = "b"}, tensor<2x4xf32> {zero.grad = "e"}, tensor<2x2xf32> {zero.grad = "v"})
// CHECK-NOT: tensor<4x6xf32>
// CHECK: %[[X:.*]] = linalg.map

// Forward: column block j of y is bias[:, j] + x[:, 0:2] W_0j + x[:, 2:4] W_1j,
// the second product accumulating onto the first; the ops keep zero.segment.
// CHECK: %[[BIAS:.*]] = linalg.broadcast
// CHECK: %[[Y:.*]] = tensor.empty() {zero.segment = 0 : i64} : tensor<2x6xf32>
// CHECK: %[[B0:.*]] = tensor.extract_slice %[[BIAS]][0, 0] [2, 2] [1, 1] {zero.segment = 0 : i64} : tensor<2x6xf32> to tensor<2x2xf32>
// CHECK: %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 2] [1, 1] {zero.segment = 0 : i64} : tensor<2x4xf32> to tensor<2x2xf32>
// CHECK: %[[P00:.*]] = linalg.matmul {zero.segment = 0 : i64} ins(%[[X0]], %[[W00]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[B0]] : tensor<2x2xf32>)
// CHECK: %[[X1:.*]] = tensor.extract_slice %[[X]][0, 2] [2, 2] [1, 1]
// CHECK: %[[P10:.*]] = linalg.matmul {zero.segment = 0 : i64} ins(%[[X1]], %[[W10]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[P00]] : tensor<2x2xf32>)
// CHECK: %[[Y0:.*]] = tensor.insert_slice %[[P10]] into %[[Y]][0, 0] [2, 2] [1, 1] {zero.segment = 0 : i64} : tensor<2x2xf32> into tensor<2x6xf32>
// CHECK: tensor.extract_slice %[[BIAS]][0, 2] [2, 2] [1, 1]
// CHECK: linalg.matmul {{.*}}%[[W01]]
// CHECK: %[[P11:.*]] = linalg.matmul {{.*}}%[[W11]]
// CHECK: %[[Y1:.*]] = tensor.insert_slice %[[P11]] into %[[Y0]][0, 2] [2, 2] [1, 1]
// CHECK: linalg.matmul {{.*}}%[[W02]]
// CHECK: %[[P12:.*]] = linalg.matmul {{.*}}%[[W12]]
// CHECK: %[[YF:.*]] = tensor.insert_slice %[[P12]] into %[[Y1]][0, 4] [2, 2] [1, 1]
// CHECK: %[[V2:.*]] = linalg.matmul ins(%{{.*}}, %[[V]] :

// dx: column block i is dy[:, 0:2] W_i0^T + dy[:, 2:4] W_i1^T + dy[:, 4:6]
// W_i2^T onto a zero fill of the block's shape, each tile transposed right
// before its product.
// CHECK: %[[DX:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<2x2xf32>)
// CHECK: %[[T00:.*]] = linalg.transpose ins(%[[W00]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2xf32>) permutation = [1, 0]
// CHECK: %[[DY0:.*]] = tensor.extract_slice %[[DY]][0, 0] [2, 2] [1, 1]
// CHECK: %[[D00:.*]] = linalg.matmul ins(%[[DY0]], %[[T00]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[Z0]] : tensor<2x2xf32>)
// CHECK: %[[T01:.*]] = linalg.transpose ins(%[[W01]]
// CHECK: %[[DY1:.*]] = tensor.extract_slice %[[DY]][0, 2] [2, 2] [1, 1]
// CHECK: %[[D01:.*]] = linalg.matmul ins(%[[DY1]], %[[T01]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[D00]] : tensor<2x2xf32>)
// CHECK: %[[T02:.*]] = linalg.transpose ins(%[[W02]]
// CHECK: %[[D02:.*]] = linalg.matmul ins(%{{.*}}, %[[T02]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[D01]] : tensor<2x2xf32>)
// CHECK: %[[DX0:.*]] = tensor.insert_slice %[[D02]] into %[[DX]][0, 0] [2, 2] [1, 1]
// CHECK: linalg.transpose ins(%[[W10]]
// CHECK: linalg.transpose ins(%[[W11]]
// CHECK: linalg.transpose ins(%[[W12]]
// CHECK: %[[D12:.*]] = linalg.matmul
// CHECK: %[[DXF:.*]] = tensor.insert_slice %[[D12]] into %[[DX0]][0, 2] [2, 2] [1, 1]

// dW: tile ij is rows i of x^T times columns j of dy, onto a zero fill of
// the tile: the [4, 6] gradient is never formed.
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x4xf32>)
// CHECK: %[[F00:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: %[[DYC0:.*]] = tensor.extract_slice %[[DY]][0, 0] [2, 2] [1, 1]
// CHECK: %[[XT0:.*]] = tensor.extract_slice %[[XT]][0, 0] [2, 2] [1, 1] : tensor<4x2xf32> to tensor<2x2xf32>
// CHECK: %[[G00:.*]] = linalg.matmul ins(%[[XT0]], %[[DYC0]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[F00]] : tensor<2x2xf32>)
// CHECK: %[[G01:.*]] = linalg.matmul
// CHECK: %[[G02:.*]] = linalg.matmul
// CHECK: %[[G10:.*]] = linalg.matmul
// CHECK: %[[G11:.*]] = linalg.matmul
// CHECK: %[[DYC2:.*]] = tensor.extract_slice %[[DY]][0, 4] [2, 2] [1, 1]
// CHECK: %[[XT1:.*]] = tensor.extract_slice %[[XT]][2, 0] [2, 2] [1, 1] : tensor<4x2xf32> to tensor<2x2xf32>
// CHECK: %[[G12:.*]] = linalg.matmul ins(%[[XT1]], %[[DYC2]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: %[[DB:.*]] = linalg.reduce {{.*}} ins(%[[YF]] :
// CHECK: return %{{.*}}, %[[G00]], %[[G01]], %[[G02]], %[[G10]], %[[G11]], %[[G12]], %[[DB]], %[[DXF]], %[[V2]] :
// CHECK-NOT: tensor<4x6xf32>

// Above the threshold only: W (24 elements) is not tiled at threshold=24.
// THRESHOLD-LABEL: func.func @step(
// THRESHOLD-SAME: tensor<4x6xf32> {zero.init = "ones", zero.param = "w"}
// THRESHOLD-NOT: zero.tile

// out-splits alone: W becomes two [4, 3] column blocks, and at threshold 0
// `v` becomes two [2, 1] blocks as well; its gradient here is its forward
// product, which is not a gradient matmul of its own, so it is sliced.
// `e` (read by linalg.map) stays whole; with in-splits 1 no input is cut.
// OUT-LABEL: func.func @step(
// OUT-SAME: tensor<4x3xf32> {zero.init = "ones", zero.param = "w.tile_0_0", zero.tile = {offset = array<i64: 0, 0>, param = "w", shape = array<i64: 4, 6>}}
// OUT-SAME: tensor<4x3xf32> {zero.init = "ones", zero.param = "w.tile_0_1", zero.tile = {offset = array<i64: 0, 3>, param = "w", shape = array<i64: 4, 6>}}
// OUT-SAME: tensor<2x4xf32> {zero.param = "e"}
// OUT-SAME: tensor<2x1xf32> {zero.param = "v.tile_0_0", zero.tile = {offset = array<i64: 0, 0>, param = "v", shape = array<i64: 2, 2>}}
// OUT-SAME: tensor<2x1xf32> {zero.param = "v.tile_0_1", zero.tile = {offset = array<i64: 0, 1>, param = "v", shape = array<i64: 2, 2>}}
// OUT-NOT: tensor<2x4xf32> to
// OUT: %[[VY:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 1] [2, 1] [1, 1] : tensor<2x1xf32> into tensor<2x2xf32>
// OUT: tensor.extract_slice %[[VY]][0, 0] [2, 1] [1, 1]
// OUT: tensor.extract_slice %[[VY]][0, 1] [2, 1] [1, 1]
