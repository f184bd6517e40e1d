// RUN: zero-opt %s | zero-opt | FileCheck %s
// RUN: zero-opt %s --mlir-print-op-generic | zero-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// The default padding (a multiple of world_size) is implied and not printed;
// an explicit padding that equals it is the same attribute.
// CHECK-LABEL: func.func @layouts
// CHECK-SAME: zero.a = #zero.layout<shape = [1024, 4096], world_size = 8>
// CHECK-SAME: zero.b = #zero.layout<shape = [10], world_size = 4>
// CHECK-SAME: zero.c = #zero.layout<shape = [10], world_size = 4, padded_numel = 16>
// CHECK-SAME: zero.d = #zero.layout<shape = [], world_size = 2>
// CHECK-SAME: zero.e = #zero.layout<shape = [0, 3], world_size = 1>
func.func @layouts() attributes {
  zero.a = #zero.layout<shape = [1024, 4096], world_size = 8>,
  zero.b = #zero.layout<shape = [10], world_size = 4, padded_numel = 12>,
  zero.c = #zero.layout<shape = [10], world_size = 4, padded_numel = 16>,
  zero.d = #zero.layout<shape = [], world_size = 2>,
  zero.e = #zero.layout<shape = [0, 3], world_size = 1>} {
  return
}

// Attributes print sorted by name.
// CHECK-LABEL: func.func @enums
// CHECK-SAME: zero.adamw = #zero.adam_mode<adamw>
// CHECK-SAME: zero.avg = #zero.reduction<avg>
// CHECK-SAME: zero.device = #zero.memory_space<device>
// CHECK-SAME: zero.host = #zero.memory_space<host>
// CHECK-SAME: zero.l2 = #zero.adam_mode<l2>
// CHECK-SAME: zero.max = #zero.reduction<max>
// CHECK-SAME: zero.min = #zero.reduction<min>
// CHECK-SAME: zero.nvme = #zero.memory_space<nvme>
// CHECK-SAME: zero.sum = #zero.reduction<sum>
func.func @enums() attributes {
  zero.device = #zero.memory_space<device>,
  zero.host = #zero.memory_space<host>,
  zero.nvme = #zero.memory_space<nvme>,
  zero.sum = #zero.reduction<sum>,
  zero.avg = #zero.reduction<avg>,
  zero.max = #zero.reduction<max>,
  zero.min = #zero.reduction<min>,
  zero.adamw = #zero.adam_mode<adamw>,
  zero.l2 = #zero.adam_mode<l2>} {
  return
}

//===----------------------------------------------------------------------===//
// Collectives, wait, release
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @all_gather
// CHECK-SAME: (%[[W:.*]]: tensor<64xbf16>, %[[B:.*]]: tensor<3xbf16>)
func.func @all_gather(%w: tensor<64xbf16>, %b: tensor<3xbf16>)
    -> (tensor<16x16xbf16>, tensor<10xbf16>) {
  // CHECK: %[[H:.*]] = zero.all_gather_start %[[W]], %[[B]] layouts [#zero.layout<shape = [16, 16], world_size = 4>, #zero.layout<shape = [10], world_size = 4>] : tensor<64xbf16>, tensor<3xbf16>
  %h = zero.all_gather_start %w, %b layouts [
      #zero.layout<shape = [16, 16], world_size = 4>,
      #zero.layout<shape = [10], world_size = 4>] : tensor<64xbf16>, tensor<3xbf16>
  // CHECK: %[[R:.*]]:2 = zero.wait %[[H]] : tensor<16x16xbf16>, tensor<10xbf16>
  %wf, %bf = zero.wait %h : tensor<16x16xbf16>, tensor<10xbf16>
  return %wf, %bf : tensor<16x16xbf16>, tensor<10xbf16>
}

// CHECK-LABEL: func.func @all_gather_padded
func.func @all_gather_padded(%w: tensor<4xf32>) -> tensor<10xf32> {
  // CHECK: zero.all_gather_start %{{.*}} layouts [#zero.layout<shape = [10], world_size = 4, padded_numel = 16>] : tensor<4xf32>
  %h = zero.all_gather_start %w layouts [
      #zero.layout<shape = [10], world_size = 4, padded_numel = 16>] : tensor<4xf32>
  // CHECK: zero.wait %{{.*}} : tensor<10xf32>
  %wf = zero.wait %h : tensor<10xf32>
  return %wf : tensor<10xf32>
}

// CHECK-LABEL: func.func @reduce_scatter
func.func @reduce_scatter(%gw: tensor<16x16xf32>, %gb: tensor<10xbf16>)
    -> (tensor<64xf32>, tensor<3xbf16>) {
  // CHECK: %[[H:.*]] = zero.reduce_scatter_start avg %{{.*}}, %{{.*}} layouts [#zero.layout<shape = [16, 16], world_size = 4>, #zero.layout<shape = [10], world_size = 4>] : tensor<16x16xf32>, tensor<10xbf16>
  %h = zero.reduce_scatter_start avg %gw, %gb layouts [
      #zero.layout<shape = [16, 16], world_size = 4>,
      #zero.layout<shape = [10], world_size = 4>] : tensor<16x16xf32>, tensor<10xbf16>
  // CHECK: zero.wait %[[H]] : tensor<64xf32>, tensor<3xbf16>
  %sw, %sb = zero.wait %h : tensor<64xf32>, tensor<3xbf16>
  return %sw, %sb : tensor<64xf32>, tensor<3xbf16>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<8xf32>, %s: tensor<f32>) {
  // CHECK: zero.all_reduce_start sum %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<f32>
  %h0 = zero.all_reduce_start sum %x, %s : tensor<8xf32>, tensor<f32>
  // CHECK: zero.wait %{{.*}} : tensor<8xf32>, tensor<f32>
  %r:2 = zero.wait %h0 : tensor<8xf32>, tensor<f32>
  // CHECK: zero.all_reduce_start avg %{{.*}} : tensor<8xf32>
  %h1 = zero.all_reduce_start avg %x : tensor<8xf32>
  %r1 = zero.wait %h1 : tensor<8xf32>
  // CHECK: zero.all_reduce_start max %{{.*}} : tensor<f32>
  %h2 = zero.all_reduce_start max %s : tensor<f32>
  %r2 = zero.wait %h2 : tensor<f32>
  // CHECK: zero.reduce_scatter_start min %{{.*}} layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<8xf32>
  %h3 = zero.reduce_scatter_start min %x layouts [
      #zero.layout<shape = [8], world_size = 2>] : tensor<8xf32>
  %r3 = zero.wait %h3 : tensor<4xf32>
  return
}

// CHECK-LABEL: func.func @release
func.func @release(%a: tensor<16x16xbf16>, %b: tensor<10xbf16>) {
  // CHECK: zero.release %{{.*}}, %{{.*}} : tensor<16x16xbf16>, tensor<10xbf16>
  zero.release %a, %b : tensor<16x16xbf16>, tensor<10xbf16>
  return
}

//===----------------------------------------------------------------------===//
// Swaps
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @swaps
func.func @swaps(%m: tensor<64xf32>, %v: tensor<64xf32>,
                 %h: tensor<4x4xf32, #zero.memory_space<host>>)
    -> (tensor<64xf32>, tensor<4x4xf32, #zero.memory_space<nvme>>) {
  // CHECK: %[[H0:.*]] = zero.swap_out_start %{{.*}}, %{{.*}} to nvme : tensor<64xf32>, tensor<64xf32>
  %h0 = zero.swap_out_start %m, %v to nvme : tensor<64xf32>, tensor<64xf32>
  // CHECK: %[[MV:.*]]:2 = zero.wait %[[H0]] : tensor<64xf32, #zero.memory_space<nvme>>, tensor<64xf32, #zero.memory_space<nvme>>
  %mn, %vn = zero.wait %h0
      : tensor<64xf32, #zero.memory_space<nvme>>,
        tensor<64xf32, #zero.memory_space<nvme>>
  // CHECK: %[[H1:.*]] = zero.swap_in_start %[[MV]]#0 : tensor<64xf32, #zero.memory_space<nvme>>
  %h1 = zero.swap_in_start %mn : tensor<64xf32, #zero.memory_space<nvme>>
  // CHECK: zero.wait %[[H1]] : tensor<64xf32>
  %md = zero.wait %h1 : tensor<64xf32>
  // Host to NVMe; a device tensor may also say so explicitly.
  // CHECK: zero.swap_out_start %{{.*}} to nvme : tensor<4x4xf32, #zero.memory_space<host>>
  %h2 = zero.swap_out_start %h to nvme : tensor<4x4xf32, #zero.memory_space<host>>
  %hn = zero.wait %h2 : tensor<4x4xf32, #zero.memory_space<nvme>>
  // CHECK: zero.swap_out_start %{{.*}} to host : tensor<64xf32, #zero.memory_space<device>>
  %md2 = tensor.cast %md : tensor<64xf32> to tensor<64xf32, #zero.memory_space<device>>
  %h3 = zero.swap_out_start %md2 to host : tensor<64xf32, #zero.memory_space<device>>
  // CHECK: zero.wait %{{.*}} : tensor<64xf32, #zero.memory_space<host>>
  %mh = zero.wait %h3 : tensor<64xf32, #zero.memory_space<host>>
  // CHECK: zero.swap_in_start %{{.*}}, %{{.*}} : tensor<64xf32, #zero.memory_space<host>>, tensor<64xf32, #zero.memory_space<nvme>>
  %h4 = zero.swap_in_start %mh, %vn
      : tensor<64xf32, #zero.memory_space<host>>,
        tensor<64xf32, #zero.memory_space<nvme>>
  // CHECK: zero.wait %{{.*}} : tensor<64xf32>, tensor<64xf32>
  %m2, %v2 = zero.wait %h4 : tensor<64xf32>, tensor<64xf32>
  return %m2, %hn : tensor<64xf32>, tensor<4x4xf32, #zero.memory_space<nvme>>
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @adam
func.func @adam(%p: tensor<64xf32>, %g: tensor<64xbf16>, %m: tensor<64xf32>,
                %v: tensor<64xf32>, %step: i64, %lr: f32) {
  // Default attributes are not printed.
  // CHECK: zero.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>
  %p1, %m1, %v1 = zero.adam %p, %g, %m, %v, %step, %lr
      : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>
  // CHECK: zero.adam
  // CHECK-SAME: {beta1 = 8.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, bias_correction = false, eps = 9.9999999999999995E-7 : f64, mode = #zero.adam_mode<l2>, weight_decay = 1.000000e-02 : f64}
  // CHECK-SAME: : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>
  %p2, %m2, %v2 = zero.adam %p1, %g, %m1, %v1, %step, %lr
      {beta1 = 0.8 : f64, beta2 = 0.95 : f64, eps = 1.0e-6 : f64,
       weight_decay = 0.01 : f64, mode = #zero.adam_mode<l2>,
       bias_correction = false}
      : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>
  return
}

// AMSGrad's fourth state and a scheduled beta1, each alone and together.
// CHECK-LABEL: func.func @adam_variants
// CHECK-SAME: (%[[P:.*]]: tensor<64xf32>, %[[G:.*]]: tensor<64xbf16>, %[[M:.*]]: tensor<64xf32>, %[[V:.*]]: tensor<64xf32>, %[[VMAX:.*]]: tensor<64xf32>, %[[STEP:.*]]: i64, %[[LR:.*]]: f32, %[[B1:.*]]: f32)
func.func @adam_variants(%p: tensor<64xf32>, %g: tensor<64xbf16>,
                         %m: tensor<64xf32>, %v: tensor<64xf32>,
                         %vmax: tensor<64xf32>, %step: i64, %lr: f32,
                         %b1: f32) {
  // CHECK: %[[P1:[a-z_0-9]+]], %[[M1:[a-z_0-9]+]], %[[V1:[a-z_0-9]+]], %[[VMAX1:[a-z_0-9]+]] = zero.adam %[[P]], %[[G]], %[[M]], %[[V]], %[[STEP]], %[[LR]] amsgrad(%[[VMAX]]) : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>{{$}}
  %p1, %m1, %v1, %vmax1 = zero.adam %p, %g, %m, %v, %step, %lr amsgrad(%vmax)
      : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf32>
  // CHECK: %[[P2:[a-z_0-9]+]], %[[M2:[a-z_0-9]+]], %[[V2:[a-z_0-9]+]] = zero.adam %[[P1]], %[[G]], %[[M1]], %[[V1]], %[[STEP]], %[[LR]] beta1(%[[B1]]) {weight_decay = 1.000000e-02 : f64} : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>{{$}}
  %p2, %m2, %v2 = zero.adam %p1, %g, %m1, %v1, %step, %lr beta1(%b1)
      {weight_decay = 0.01 : f64}
      : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>
  // CHECK: = zero.adam %[[P2]], %[[G]], %[[M2]], %[[V2]], %[[STEP]], %[[LR]] amsgrad(%[[VMAX1]]) beta1(%[[B1]]) {mode = #zero.adam_mode<l2>} : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>{{$}}
  %p3, %m3, %v3, %vmax3 = zero.adam %p2, %g, %m2, %v2, %step, %lr
      amsgrad(%vmax1) beta1(%b1) {mode = #zero.adam_mode<l2>}
      : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf32>
  return
}

// fp16's loss scale: the overflow check over every gradient, then updates
// that unscale, clip and skip (each scalar alone, and all three with the
// other optional operands).
// CHECK-LABEL: func.func @loss_scaled_updates
// CHECK-SAME: (%[[P:.*]]: tensor<64xf32>, %[[G:.*]]: tensor<64xf16>, %[[H:.*]]: tensor<8xf16>, %[[M:.*]]: tensor<64xf32>, %[[V:.*]]: tensor<64xf32>, %[[VMAX:.*]]: tensor<64xf32>, %[[STEP:.*]]: i64, %[[LR:.*]]: f32, %[[B1:.*]]: f32, %[[S:.*]]: f32, %[[C:.*]]: f32, %[[O:.*]]: i1)
func.func @loss_scaled_updates(%p: tensor<64xf32>, %g: tensor<64xf16>,
                               %h: tensor<8xf16>, %m: tensor<64xf32>,
                               %v: tensor<64xf32>, %vmax: tensor<64xf32>,
                               %step: i64, %lr: f32, %b1: f32, %s: f32,
                               %c: f32, %o: i1) -> f32 {
  // CHECK: %[[F:.*]] = zero.any_nonfinite %[[G]], %[[H]] : tensor<64xf16>, tensor<8xf16>{{$}}
  %flag = zero.any_nonfinite %g, %h : tensor<64xf16>, tensor<8xf16>
  // CHECK: zero.adam %[[P]], %[[G]], %[[M]], %[[V]], %[[STEP]], %[[LR]] unscale(%[[S]]) : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>{{$}}
  %p1, %m1, %v1 = zero.adam %p, %g, %m, %v, %step, %lr unscale(%s)
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>
  // CHECK: zero.adam %{{.*}}, %[[G]], %{{.*}}, %{{.*}}, %[[STEP]], %[[LR]] clip(%[[C]]) : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>{{$}}
  %p2, %m2, %v2 = zero.adam %p1, %g, %m1, %v1, %step, %lr clip(%c)
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>
  // CHECK: zero.adam %{{.*}}, %[[G]], %{{.*}}, %{{.*}}, %[[STEP]], %[[LR]] skip(%[[O]]) : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>{{$}}
  %p3, %m3, %v3 = zero.adam %p2, %g, %m2, %v2, %step, %lr skip(%o)
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>
  // CHECK: zero.adam %{{.*}}, %[[G]], %{{.*}}, %{{.*}}, %[[STEP]], %[[LR]] amsgrad(%[[VMAX]]) beta1(%[[B1]]) unscale(%[[S]]) clip(%[[C]]) skip(%[[O]]) : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>{{$}}
  %p4, %m4, %v4, %vmax4 = zero.adam %p3, %g, %m3, %v3, %step, %lr
      amsgrad(%vmax) beta1(%b1) unscale(%s) clip(%c) skip(%o)
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf32>
  // CHECK: zero.sgd %{{.*}}, %[[G]], %[[M]], %[[LR]] unscale(%[[S]]) clip(%[[C]]) skip(%[[O]]) {momentum = 9.000000e-01 : f64} : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>{{$}}
  %p5, %b5 = zero.sgd %p4, %g, %m, %lr unscale(%s) clip(%c) skip(%o)
      {momentum = 0.9 : f64} : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>
  return %flag : f32
}

// Offloaded: the whole state in host memory.
// CHECK-LABEL: func.func @adam_host
func.func @adam_host(%p: tensor<8xf32, #zero.memory_space<host>>,
                     %g: tensor<8xf16, #zero.memory_space<host>>,
                     %m: tensor<8xf32, #zero.memory_space<host>>,
                     %v: tensor<8xf32, #zero.memory_space<host>>,
                     %step: i64, %lr: f32) {
  // CHECK: zero.adam {{.*}} : tensor<8xf32, #zero.memory_space<host>>, tensor<8xf16, #zero.memory_space<host>>, tensor<8xf32, #zero.memory_space<host>>, tensor<8xf32, #zero.memory_space<host>>
  %p1, %m1, %v1 = zero.adam %p, %g, %m, %v, %step, %lr
      : tensor<8xf32, #zero.memory_space<host>>,
        tensor<8xf16, #zero.memory_space<host>>,
        tensor<8xf32, #zero.memory_space<host>>,
        tensor<8xf32, #zero.memory_space<host>>
  return
}

// CHECK-LABEL: func.func @sgd
func.func @sgd(%p: tensor<64xf32>, %g: tensor<64xf16>, %b: tensor<64xf32>,
               %lr: f32) {
  // CHECK: zero.sgd %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>
  %p1, %b1 = zero.sgd %p, %g, %b, %lr
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>
  // CHECK: zero.sgd
  // CHECK-SAME: {dampening = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-04 : f64}
  %p2, %b2 = zero.sgd %p1, %g, %b1, %lr
      {momentum = 0.9 : f64, dampening = 0.1 : f64, weight_decay = 1.0e-4 : f64}
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>
  // CHECK: zero.sgd
  // CHECK-SAME: {momentum = 9.000000e-01 : f64, nesterov = true}
  %p3, %b3 = zero.sgd %p2, %g, %b2, %lr {momentum = 0.9 : f64, nesterov = true}
      : tensor<64xf32>, tensor<64xf16>, tensor<64xf32>
  return
}

// CHECK-LABEL: func.func @local_shard
func.func @local_shard(%w: tensor<10xf32>) -> tensor<3xf32> {
  // CHECK: zero.local_shard %{{.*}} layout #zero.layout<shape = [10], world_size = 4> into tensor<3xf32> : tensor<10xf32>
  %s = zero.local_shard %w layout #zero.layout<shape = [10], world_size = 4> into tensor<3xf32> : tensor<10xf32>
  return %s : tensor<3xf32>
}

//===----------------------------------------------------------------------===//
// Collectives over groups of ranks
//===----------------------------------------------------------------------===//

// On 4 ranks in 2 nodes of 2 (grid [2, 2]): the 2 ranks of a node
// (grid_axes = [1]) and the 2 ranks with the same local rank ([0]); the
// layouts of a group's gather and scatter are for the group's 2 ranks.
// CHECK-LABEL: func.func @groups
// CHECK: zero.all_gather_start %{{.*}} grid_axes = [1] layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<4xf32>
// CHECK: zero.reduce_scatter_start avg %{{.*}} grid_axes = [0] layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<8xf32>
// CHECK: zero.all_reduce_start sum %{{.*}} grid_axes = [0, 1] : tensor<8xf32>
// CHECK: zero.all_reduce_start sum %{{.*}} : tensor<8xf32>
func.func @groups(%shard: tensor<4xf32>, %x: tensor<8xf32>)
    attributes {zero.world_size = 4 : i64, zero.ranks_per_node = 2 : i64} {
  %h0 = zero.all_gather_start %shard grid_axes = [1]
      layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<4xf32>
  %full = zero.wait %h0 : tensor<8xf32>
  %h1 = zero.reduce_scatter_start avg %x grid_axes = [0]
      layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<8xf32>
  %mine = zero.wait %h1 : tensor<4xf32>
  %h2 = zero.all_reduce_start sum %x grid_axes = [0, 1] : tensor<8xf32>
  %all = zero.wait %h2 : tensor<8xf32>
  %h3 = zero.all_reduce_start sum %x : tensor<8xf32>
  %world = zero.wait %h3 : tensor<8xf32>
  return
}

// qwZ: a quantized gather round-trips, alone and after grid_axes.
// CHECK-LABEL: func.func @quantized_gathers
// CHECK: zero.all_gather_start %{{.*}} quantize_block_size = 2048 layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<2xbf16>
// CHECK: zero.all_gather_start %{{.*}} grid_axes = [1] quantize_block_size = 3 layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<4xf32>
func.func @quantized_gathers(%w: tensor<2xbf16>, %shard: tensor<4xf32>)
    attributes {zero.world_size = 4 : i64, zero.ranks_per_node = 2 : i64} {
  %h0 = zero.all_gather_start %w quantize_block_size = 2048
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<2xbf16>
  %full = zero.wait %h0 : tensor<8xbf16>
  %h1 = zero.all_gather_start %shard grid_axes = [1] quantize_block_size = 3
      layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<4xf32>
  %node = zero.wait %h1 : tensor<8xf32>
  return
}

// A frozen parameter's shard stored quantized (#zero.quantized) is gathered
// by a quantized gather of its block size, next to a plain shard; the
// gathered tensors have no encoding.
// CHECK-LABEL: func.func @stored_quantized
// CHECK-SAME: (%[[W:.*]]: tensor<2xbf16, #zero.quantized<bits = 8, block_size = 4>>, %[[B:.*]]: tensor<2xbf16>)
// CHECK: zero.all_gather_start %[[W]], %[[B]] quantize_block_size = 4 layouts [#zero.layout<shape = [8], world_size = 4>, #zero.layout<shape = [5], world_size = 4>] : tensor<2xbf16, #zero.quantized<bits = 8, block_size = 4>>, tensor<2xbf16>
// CHECK-NEXT: zero.wait %{{.*}} : tensor<8xbf16>, tensor<5xbf16>
func.func @stored_quantized(
    %w: tensor<2xbf16, #zero.quantized<bits = 8, block_size = 4>>,
    %b: tensor<2xbf16>) {
  %h = zero.all_gather_start %w, %b quantize_block_size = 4
      layouts [#zero.layout<shape = [8], world_size = 4>,
               #zero.layout<shape = [5], world_size = 4>]
      : tensor<2xbf16, #zero.quantized<bits = 8, block_size = 4>>, tensor<2xbf16>
  %wf, %bf = zero.wait %h : tensor<8xbf16>, tensor<5xbf16>
  return
}

// qgZ: a quantized reduce-scatter round-trips, alone and after grid_axes.
// CHECK-LABEL: func.func @quantized_reduce_scatters
// CHECK: zero.reduce_scatter_start avg %{{.*}} quantize_block_size = 512 layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<8xf16>
// CHECK: zero.reduce_scatter_start sum %{{.*}} grid_axes = [1] quantize_block_size = 2 layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<8xf32>
func.func @quantized_reduce_scatters(%g: tensor<8xf16>, %h: tensor<8xf32>)
    attributes {zero.world_size = 4 : i64, zero.ranks_per_node = 2 : i64} {
  %h0 = zero.reduce_scatter_start avg %g quantize_block_size = 512
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<8xf16>
  %s0 = zero.wait %h0 : tensor<2xf16>
  %h1 = zero.reduce_scatter_start sum %h grid_axes = [1] quantize_block_size = 2
      layouts [#zero.layout<shape = [8], world_size = 2>] : tensor<8xf32>
  %s1 = zero.wait %h1 : tensor<4xf32>
  return
}
