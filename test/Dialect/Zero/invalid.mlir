// RUN: zero-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

// expected-error @+1 {{world_size must be at least 1, but is 0}}
func.func @layout_world_size() attributes {zero.l = #zero.layout<shape = [4], world_size = 0>}

// -----

// expected-error @+1 {{shape must have static, non-negative sizes}}
func.func @layout_negative_size() attributes {zero.l = #zero.layout<shape = [4, -1], world_size = 2>}

// -----

// expected-error @+1 {{element count of the shape overflows int64}}
func.func @layout_overflow() attributes {zero.l = #zero.layout<shape = [4294967296, 4294967296], world_size = 2>}

// -----

// expected-error @+1 {{padded_numel 8 is smaller than the element count 10}}
func.func @layout_padded_small() attributes {zero.l = #zero.layout<shape = [10], world_size = 4, padded_numel = 8>}

// -----

// expected-error @+1 {{padded_numel 14 is not a multiple of world_size 4}}
func.func @layout_padded_multiple() attributes {zero.l = #zero.layout<shape = [10], world_size = 4, padded_numel = 14>}

// -----

//===----------------------------------------------------------------------===//
// Enum keywords
//===----------------------------------------------------------------------===//

func.func @unknown_reduction(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown reduction 'prod'}}
  %h = zero.all_reduce_start prod %x : tensor<4xf32>
  %r = zero.wait %h : tensor<4xf32>
  return
}

// -----

func.func @unknown_memory_space(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown memory space 'disk'}}
  %h = zero.swap_out_start %x to disk : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Handles
//===----------------------------------------------------------------------===//

func.func @handle_never_waited(%x: tensor<4xf32>) {
  // expected-error @+1 {{handle never waited}}
  %h = zero.all_reduce_start sum %x : tensor<4xf32>
  return
}

// -----

func.func @handle_waited_twice(%x: tensor<4xf32>) {
  // expected-error @+1 {{handle has 2 uses; it must be waited exactly once}}
  %h = zero.all_reduce_start sum %x : tensor<4xf32>
  %r0 = zero.wait %h : tensor<4xf32>
  %r1 = zero.wait %h : tensor<4xf32>
  return
}

// -----

func.func @handle_escapes(%x: tensor<4xf32>) -> !zero.handle {
  // expected-error @+1 {{handle must be consumed by 'zero.wait', but is used by 'func.return'}}
  %h = zero.swap_out_start %x to host : tensor<4xf32>
  return %h : !zero.handle
}

// -----

func.func @wait_block_argument(%h: !zero.handle) {
  // expected-error @+1 {{handle must be the result of a zero start op}}
  %r = zero.wait %h : tensor<4xf32>
  return
}

// -----

func.func @wait_result_count(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %h = zero.all_reduce_start sum %x, %y : tensor<4xf32>, tensor<4xf32>
  // expected-error @+1 {{has 1 results, but 'zero.all_reduce_start' yields 2}}
  %r = zero.wait %h : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// WaitOp result types
//===----------------------------------------------------------------------===//

func.func @wait_all_gather_type(%x: tensor<3xf32>) {
  %h = zero.all_gather_start %x layouts [
      #zero.layout<shape = [2, 5], world_size = 4>] : tensor<3xf32>
  // expected-error @+1 {{result #0 has type 'tensor<12xf32>', but 'zero.all_gather_start' yields 'tensor<2x5xf32>'}}
  %r = zero.wait %h : tensor<12xf32>
  return
}

// -----

func.func @wait_reduce_scatter_type(%x: tensor<2x5xf32>) {
  %h = zero.reduce_scatter_start sum %x layouts [
      #zero.layout<shape = [2, 5], world_size = 4>] : tensor<2x5xf32>
  // expected-error @+1 {{result #0 has type 'tensor<2x5xf32>', but 'zero.reduce_scatter_start' yields 'tensor<3xf32>'}}
  %r = zero.wait %h : tensor<2x5xf32>
  return
}

// -----

func.func @wait_all_reduce_type(%x: tensor<4xf32>, %y: tensor<4xbf16>) {
  %h = zero.all_reduce_start sum %x, %y : tensor<4xf32>, tensor<4xbf16>
  // expected-error @+1 {{result #1 has type 'tensor<4xf32>', but 'zero.all_reduce_start' yields 'tensor<4xbf16>'}}
  %r:2 = zero.wait %h : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @wait_swap_out_type(%x: tensor<4xf32>) {
  %h = zero.swap_out_start %x to nvme : tensor<4xf32>
  // expected-error @+1 {{result #0 has type 'tensor<4xf32, #zero.memory_space<host>>', but 'zero.swap_out_start' yields 'tensor<4xf32, #zero.memory_space<nvme>>'}}
  %r = zero.wait %h : tensor<4xf32, #zero.memory_space<host>>
  return
}

// -----

func.func @wait_swap_in_type(%x: tensor<4xf32, #zero.memory_space<host>>) {
  %h = zero.swap_in_start %x : tensor<4xf32, #zero.memory_space<host>>
  // expected-error @+1 {{result #0 has type 'tensor<4xf32, #zero.memory_space<host>>', but 'zero.swap_in_start' yields 'tensor<4xf32>'}}
  %r = zero.wait %h : tensor<4xf32, #zero.memory_space<host>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Empty buckets
//===----------------------------------------------------------------------===//

func.func @all_gather_empty() {
  // expected-error @+1 {{expects at least one tensor}}
  %h = "zero.all_gather_start"() {layouts = []} : () -> !zero.handle
  zero.wait %h
  return
}

// -----

func.func @reduce_scatter_empty() {
  // expected-error @+1 {{expects at least one tensor}}
  %h = "zero.reduce_scatter_start"() {layouts = [], reduction = #zero.reduction<sum>} : () -> !zero.handle
  zero.wait %h
  return
}

// -----

func.func @all_reduce_empty() {
  // expected-error @+1 {{expects at least one tensor}}
  %h = "zero.all_reduce_start"() {reduction = #zero.reduction<sum>} : () -> !zero.handle
  zero.wait %h
  return
}

// -----

func.func @swap_out_empty() {
  // expected-error @+1 {{expects at least one tensor}}
  %h = "zero.swap_out_start"() {target = #zero.memory_space<host>} : () -> !zero.handle
  zero.wait %h
  return
}

// -----

func.func @swap_in_empty() {
  // expected-error @+1 {{expects at least one tensor}}
  %h = "zero.swap_in_start"() : () -> !zero.handle
  zero.wait %h
  return
}

// -----

func.func @release_empty() {
  // expected-error @+1 {{expects at least one tensor}}
  "zero.release"() : () -> ()
  return
}

// -----

//===----------------------------------------------------------------------===//
// Layouts of collectives
//===----------------------------------------------------------------------===//

func.func @layout_count(%x: tensor<3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{expects one layout per tensor, but has 1 layouts for 2 tensors}}
  %h = zero.all_gather_start %x, %y layouts [
      #zero.layout<shape = [10], world_size = 4>] : tensor<3xf32>, tensor<3xf32>
  %r:2 = zero.wait %h : tensor<10xf32>, tensor<10xf32>
  return
}

// -----

func.func @layout_world_sizes(%x: tensor<10xf32>, %y: tensor<10xf32>) {
  // expected-error @+1 {{layout #1 has world_size 2, but layout #0 has 4; all layouts of one collective have the same world size}}
  %h = zero.reduce_scatter_start avg %x, %y layouts [
      #zero.layout<shape = [10], world_size = 4>,
      #zero.layout<shape = [10], world_size = 2>] : tensor<10xf32>, tensor<10xf32>
  %r:2 = zero.wait %h : tensor<3xf32>, tensor<5xf32>
  return
}

// -----

func.func @all_gather_operand_type(%x: tensor<3xf32>, %y: tensor<10xf32>) {
  // expected-error @+1 {{operand #1 has type 'tensor<10xf32>', but its layout expects 'tensor<3xf32>'}}
  %h = zero.all_gather_start %x, %y layouts [
      #zero.layout<shape = [10], world_size = 4>,
      #zero.layout<shape = [10], world_size = 4>] : tensor<3xf32>, tensor<10xf32>
  %r:2 = zero.wait %h : tensor<10xf32>, tensor<10xf32>
  return
}

// -----

func.func @reduce_scatter_operand_type(%x: tensor<5x2xf32>) {
  // expected-error @+1 {{operand #0 has type 'tensor<5x2xf32>', but its layout expects 'tensor<2x5xf32>'}}
  %h = zero.reduce_scatter_start sum %x layouts [
      #zero.layout<shape = [2, 5], world_size = 4>] : tensor<5x2xf32>
  %r = zero.wait %h : tensor<3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Swaps
//===----------------------------------------------------------------------===//

func.func @swap_out_to_device(%x: tensor<4xf32, #zero.memory_space<host>>) {
  // expected-error @+1 {{cannot swap out to device memory; the target must be host or nvme}}
  %h = zero.swap_out_start %x to device : tensor<4xf32, #zero.memory_space<host>>
  %r = zero.wait %h : tensor<4xf32>
  return
}

// -----

func.func @swap_out_same_space(%x: tensor<4xf32>, %y: tensor<4xf32, #zero.memory_space<host>>) {
  // expected-error @+1 {{operand #1 already lives in host memory}}
  %h = zero.swap_out_start %x, %y to host : tensor<4xf32>, tensor<4xf32, #zero.memory_space<host>>
  %r:2 = zero.wait %h : tensor<4xf32, #zero.memory_space<host>>, tensor<4xf32, #zero.memory_space<host>>
  return
}

// -----

func.func @swap_out_foreign_encoding(%x: tensor<4xf32, "other">) {
  // expected-error @+1 {{operand #0 has encoding "other"; swaps take tensors without encoding or with a #zero.memory_space}}
  %h = zero.swap_out_start %x to host : tensor<4xf32, "other">
  %r = zero.wait %h : tensor<4xf32, #zero.memory_space<host>>
  return
}

// -----

func.func @swap_in_foreign_encoding(%x: tensor<4xf32, "other">) {
  // expected-error @+1 {{operand #0 has encoding "other"; swaps take tensors without encoding or with a #zero.memory_space}}
  %h = zero.swap_in_start %x : tensor<4xf32, "other">
  %r = zero.wait %h : tensor<4xf32>
  return
}

// -----

func.func @swap_in_from_device(%x: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 lives in device memory; only host or nvme tensors can be swapped in}}
  %h = zero.swap_in_start %x : tensor<4xf32>
  %r = zero.wait %h : tensor<4xf32>
  return
}

// -----

func.func @swap_in_explicit_device(%x: tensor<4xf32, #zero.memory_space<device>>) {
  // expected-error @+1 {{operand #0 lives in device memory; only host or nvme tensors can be swapped in}}
  %h = zero.swap_in_start %x : tensor<4xf32, #zero.memory_space<device>>
  %r = zero.wait %h : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// AdamOp
//===----------------------------------------------------------------------===//

func.func @adam_int_param(%p: tensor<4xi32>, %g: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{param must have a floating-point element type, but has type 'tensor<4xi32>'}}
  %0:3 = zero.adam %p, %g, %p, %p, %s, %lr : tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
  return
}

// -----

func.func @adam_grad_shape(%p: tensor<4xf32>, %g: tensor<8xbf16>, %s: i64, %lr: f32) {
  // expected-error @+1 {{grad must have the shape of param ('tensor<4xf32>'), but has type 'tensor<8xbf16>'}}
  %0:3 = zero.adam %p, %g, %p, %p, %s, %lr : tensor<4xf32>, tensor<8xbf16>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_grad_int(%p: tensor<4xf32>, %g: tensor<4xi16>, %s: i64, %lr: f32) {
  // expected-error @+1 {{grad must have a floating-point element type, but has type 'tensor<4xi16>'}}
  %0:3 = zero.adam %p, %g, %p, %p, %s, %lr : tensor<4xf32>, tensor<4xi16>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_grad_space(%p: tensor<4xf32>, %g: tensor<4xbf16, #zero.memory_space<host>>, %s: i64, %lr: f32) {
  // expected-error @+1 {{grad must live in the memory space of param ('tensor<4xf32>'), but has type 'tensor<4xbf16, #zero.memory_space<host>>'}}
  %0:3 = zero.adam %p, %g, %p, %p, %s, %lr : tensor<4xf32>, tensor<4xbf16, #zero.memory_space<host>>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_exp_avg_shape(%p: tensor<4xf32>, %m: tensor<2x2xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{exp_avg must have the shape of param ('tensor<4xf32>'), but has type 'tensor<2x2xf32>'}}
  %0:3 = zero.adam %p, %p, %m, %p, %s, %lr : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_exp_avg_sq_element_type(%p: tensor<4xf32>, %v: tensor<4xbf16>, %s: i64, %lr: f32) {
  // expected-error @+1 {{exp_avg_sq must have the element type of param ('f32'), but has type 'tensor<4xbf16>'}}
  %0:3 = zero.adam %p, %p, %p, %v, %s, %lr : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>
  return
}

// -----

func.func @adam_exp_avg_int(%p: tensor<4xf32>, %m: tensor<4xi32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{exp_avg must have a floating-point element type, but has type 'tensor<4xi32>'}}
  %0:3 = zero.adam %p, %p, %m, %p, %s, %lr : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
  return
}

// -----

func.func @adam_exp_avg_space(%p: tensor<4xf32, #zero.memory_space<host>>, %m: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{exp_avg must live in the memory space of param ('tensor<4xf32, #zero.memory_space<host>>'), but has type 'tensor<4xf32>'}}
  %0:3 = zero.adam %p, %p, %m, %p, %s, %lr : tensor<4xf32, #zero.memory_space<host>>, tensor<4xf32, #zero.memory_space<host>>, tensor<4xf32>, tensor<4xf32, #zero.memory_space<host>>
  return
}

// -----

func.func @adam_beta1(%p: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{beta1 must be in [0, 1), but is 1}}
  %0:3 = zero.adam %p, %p, %p, %p, %s, %lr {beta1 = 1.0 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_beta2(%p: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{beta2 must be in [0, 1), but is -0.5}}
  %0:3 = zero.adam %p, %p, %p, %p, %s, %lr {beta2 = -0.5 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_eps(%p: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{eps must be positive, but is 0}}
  %0:3 = zero.adam %p, %p, %p, %p, %s, %lr {eps = 0.0 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_weight_decay(%p: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{weight_decay must be non-negative, but is -0.01}}
  %0:3 = zero.adam %p, %p, %p, %p, %s, %lr {weight_decay = -0.01 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_weight_decay_nan(%p: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{weight_decay must be non-negative, but is NaN}}
  %0:3 = zero.adam %p, %p, %p, %p, %s, %lr {weight_decay = 0x7FF8000000000000 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adam_max_exp_avg_sq_element_type(%p: tensor<4xf32>, %vm: tensor<4xbf16>, %s: i64, %lr: f32) {
  // expected-error @+1 {{max_exp_avg_sq must have the element type of param ('f32'), but has type 'tensor<4xbf16>'}}
  %0:4 = zero.adam %p, %p, %p, %p, %s, %lr amsgrad(%vm) : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>
  return
}

// -----

func.func @adam_max_exp_avg_sq_shape(%p: tensor<4xf32>, %vm: tensor<2x2xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{max_exp_avg_sq must have the shape of param ('tensor<4xf32>'), but has type 'tensor<2x2xf32>'}}
  %0:4 = zero.adam %p, %p, %p, %p, %s, %lr amsgrad(%vm) : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
  return
}

// -----

// The custom syntax writes amsgrad and its state together; the generic form
// can split them.
func.func @adam_amsgrad_without_state(%p: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{amsgrad needs the max_exp_avg_sq operand}}
  %0:3 = "zero.adam"(%p, %p, %p, %p, %s, %lr) <{amsgrad, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, i64, f32) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_state_without_amsgrad(%p: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+1 {{has a max_exp_avg_sq operand but not amsgrad}}
  %0:4 = "zero.adam"(%p, %p, %p, %p, %p, %s, %lr) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, i64, f32) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// The fourth state has a fourth result.
func.func @adam_amsgrad_without_result(%p: tensor<4xf32>, %s: i64, %lr: f32) {
  // expected-error @+2 {{'zero.adam' op inferred type(s) 'tensor<4xf32>', 'tensor<4xf32>', 'tensor<4xf32>', 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>', 'tensor<4xf32>', 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = "zero.adam"(%p, %p, %p, %p, %p, %s, %lr) <{amsgrad, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, i64, f32) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_beta1_value_type(%p: tensor<4xf32>, %s: i64, %lr: f32, %b1: f64) {
  // expected-error @+1 {{operand #6 must be 32-bit float, but got 'f64'}}
  %0:3 = "zero.adam"(%p, %p, %p, %p, %s, %lr, %b1) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, i64, f32, f64) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// SgdOp
//===----------------------------------------------------------------------===//

func.func @sgd_int_param(%p: tensor<4xi32>, %g: tensor<4xf32>, %lr: f32) {
  // expected-error @+1 {{param must have a floating-point element type, but has type 'tensor<4xi32>'}}
  %0:2 = zero.sgd %p, %g, %p, %lr : tensor<4xi32>, tensor<4xf32>, tensor<4xi32>
  return
}

// -----

func.func @sgd_buffer_shape(%p: tensor<4xf32>, %b: tensor<5xf32>, %lr: f32) {
  // expected-error @+1 {{momentum_buffer must have the shape of param ('tensor<4xf32>'), but has type 'tensor<5xf32>'}}
  %0:2 = zero.sgd %p, %p, %b, %lr : tensor<4xf32>, tensor<4xf32>, tensor<5xf32>
  return
}

// -----

func.func @sgd_buffer_element_type(%p: tensor<4xf32>, %b: tensor<4xf16>, %lr: f32) {
  // expected-error @+1 {{momentum_buffer must have the element type of param ('f32'), but has type 'tensor<4xf16>'}}
  %0:2 = zero.sgd %p, %p, %b, %lr : tensor<4xf32>, tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @sgd_momentum(%p: tensor<4xf32>, %lr: f32) {
  // expected-error @+1 {{momentum must be non-negative, but is -0.9}}
  %0:2 = zero.sgd %p, %p, %p, %lr {momentum = -0.9 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @sgd_dampening(%p: tensor<4xf32>, %lr: f32) {
  // expected-error @+1 {{dampening must be non-negative, but is -0.1}}
  %0:2 = zero.sgd %p, %p, %p, %lr {dampening = -0.1 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @sgd_weight_decay(%p: tensor<4xf32>, %lr: f32) {
  // expected-error @+1 {{weight_decay must be non-negative, but is -1}}
  %0:2 = zero.sgd %p, %p, %p, %lr {weight_decay = -1.0 : f64} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @sgd_nesterov_no_momentum(%p: tensor<4xf32>, %lr: f32) {
  // expected-error @+1 {{nesterov requires momentum > 0 and dampening == 0}}
  %0:2 = zero.sgd %p, %p, %p, %lr {nesterov = true} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @sgd_nesterov_dampening(%p: tensor<4xf32>, %lr: f32) {
  // expected-error @+1 {{nesterov requires momentum > 0 and dampening == 0}}
  %0:2 = zero.sgd %p, %p, %p, %lr {momentum = 0.9 : f64, dampening = 0.1 : f64, nesterov = true} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @local_shard_full_type(%w: tensor<16x8xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'zero.local_shard' op operand has type 'tensor<16x8xf32>', but its layout expects 'tensor<16x16xf32>'}}
  %s = zero.local_shard %w layout #zero.layout<shape = [16, 16], world_size = 4> into tensor<64xf32> : tensor<16x8xf32>
  return %s : tensor<64xf32>
}

// -----

func.func @local_shard_shard_type(%w: tensor<10xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'zero.local_shard' op result has type 'tensor<2xf32>', but its layout expects 'tensor<3xf32>'}}
  %s = zero.local_shard %w layout #zero.layout<shape = [10], world_size = 4> into tensor<2xf32> : tensor<10xf32>
  return %s : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// grid_axes
//===----------------------------------------------------------------------===//

func.func @empty_axes(%x: tensor<8xf32>) {
  // expected-error @+1 {{has empty grid_axes; leave them out for the whole world}}
  %h = zero.all_reduce_start sum %x grid_axes = [] : tensor<8xf32>
  %r = zero.wait %h : tensor<8xf32>
  return
}

// -----

func.func @axes_not_increasing(%x: tensor<8xf32>) {
  // expected-error @+1 {{grid_axes must be strictly increasing axes >= 0, got [1, 0]}}
  %h = zero.all_reduce_start sum %x grid_axes = [1, 0] : tensor<8xf32>
  %r = zero.wait %h : tensor<8xf32>
  return
}

// -----

// One node: the grid is [4], with no axis 1.
func.func @axis_outside_the_grid(%x: tensor<8xf32>)
    attributes {zero.world_size = 4 : i64} {
  // expected-error @+1 {{grid_axes [1] name an axis the step's grid [4] does not have}}
  %h = zero.all_reduce_start sum %x grid_axes = [1] : tensor<8xf32>
  %r = zero.wait %h : tensor<8xf32>
  return
}

// -----

func.func @layout_not_for_the_group(%shard: tensor<2xf32>)
    attributes {zero.world_size = 8 : i64, zero.ranks_per_node = 4 : i64} {
  // expected-error @+1 {{layouts have world_size 4, but the group of grid_axes [0] on the grid [2, 4] has 2 ranks}}
  %h = zero.all_gather_start %shard grid_axes = [0]
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<2xf32>
  %r = zero.wait %h : tensor<8xf32>
  return
}

// -----

// Without grid_axes a collective runs over the whole world: a layout for
// the 4 ranks of a node needs grid_axes = [1].
func.func @node_layout_over_the_world(%shard: tensor<2xf32>)
    attributes {zero.world_size = 8 : i64, zero.ranks_per_node = 4 : i64} {
  // expected-error @+1 {{layouts have world_size 4, but without grid_axes the collective runs over the whole world of 8 ranks}}
  %h = zero.all_gather_start %shard
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<2xf32>
  %r = zero.wait %h : tensor<8xf32>
  return
}

// -----

func.func @quantize_block_size_zero(%shard: tensor<2xf32>) {
  // expected-error @+1 {{quantize_block_size must be at least 1, got 0}}
  %h = zero.all_gather_start %shard quantize_block_size = 0
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<2xf32>
  %r = zero.wait %h : tensor<8xf32>
  return
}

// -----

func.func @quantize_integers(%shard: tensor<2xi32>) {
  // expected-error @+1 {{quantizes operand #0 of element type 'i32'; quantized gathers carry f32, bf16 or f16}}
  %h = zero.all_gather_start %shard quantize_block_size = 64
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<2xi32>
  %r = zero.wait %h : tensor<8xi32>
  return
}

// -----

func.func @quantize_gradients_odd_block(%g: tensor<8xf32>) {
  // expected-error @+1 {{quantize_block_size must be even and at least 2 (int4 values are packed two to a byte), got 3}}
  %h = zero.reduce_scatter_start avg %g quantize_block_size = 3
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<8xf32>
  %r = zero.wait %h : tensor<2xf32>
  return
}

// -----

func.func @quantize_gradients_max(%g: tensor<8xf32>) {
  // expected-error @+1 {{a quantized reduce-scatter reduces with sum or avg, not max}}
  %h = zero.reduce_scatter_start max %g quantize_block_size = 4
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<8xf32>
  %r = zero.wait %h : tensor<2xf32>
  return
}

// -----

func.func @quantize_gradients_f64(%g: tensor<8xf64>) {
  // expected-error @+1 {{quantizes operand #0 of element type 'f64'; quantized reduce-scatters carry f32, bf16 or f16}}
  %h = zero.reduce_scatter_start avg %g quantize_block_size = 4
      layouts [#zero.layout<shape = [8], world_size = 4>] : tensor<8xf64>
  %r = zero.wait %h : tensor<2xf64>
  return
}

// -----

// expected-error @+1 {{#zero.quantized stores 8-bit values, got bits = 4}}
func.func private @stored_int4(tensor<8xf32, #zero.quantized<bits = 4, block_size = 8>>)

// -----

// expected-error @+1 {{#zero.quantized block_size must be at least 1, got 0}}
func.func private @stored_block_zero(tensor<8xf32, #zero.quantized<bits = 8, block_size = 0>>)

// -----

func.func @stored_quantized_gathered_plain(
    %w: tensor<2xf32, #zero.quantized<bits = 8, block_size = 64>>) {
  // expected-error @+1 {{operand #0 is stored quantized in blocks of 64; it must be gathered with quantize_block_size = 64}}
  %h = zero.all_gather_start %w
      layouts [#zero.layout<shape = [8], world_size = 4>]
      : tensor<2xf32, #zero.quantized<bits = 8, block_size = 64>>
  %r = zero.wait %h : tensor<8xf32>
  return
}

// -----

func.func @stored_quantized_other_block(
    %w: tensor<2xf32, #zero.quantized<bits = 8, block_size = 64>>) {
  // expected-error @+1 {{operand #0 is stored quantized in blocks of 64; it must be gathered with quantize_block_size = 64}}
  %h = zero.all_gather_start %w quantize_block_size = 32
      layouts [#zero.layout<shape = [8], world_size = 4>]
      : tensor<2xf32, #zero.quantized<bits = 8, block_size = 64>>
  %r = zero.wait %h : tensor<8xf32>
  return
}

// -----

func.func @stored_quantized_reduced(
    %g: tensor<8xf32, #zero.quantized<bits = 8, block_size = 64>>) {
  // expected-error @+1 {{operand #0 has type 'tensor<8xf32, #zero.quantized<bits = 8, block_size = 64>>', but its layout expects 'tensor<8xf32>'}}
  %h = zero.reduce_scatter_start avg %g
      layouts [#zero.layout<shape = [8], world_size = 4>]
      : tensor<8xf32, #zero.quantized<bits = 8, block_size = 64>>
  %r = zero.wait %h : tensor<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// zero.round_operands
//===----------------------------------------------------------------------===//

func.func @round_operands_not_tf32(%a: tensor<2x2xf32>, %c: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'zero.round_operands' must be the type tf32, got bf16}}
  %0 = linalg.matmul {zero.round_operands = bf16} ins(%a, %a : tensor<2x2xf32>, tensor<2x2xf32>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @round_operands_of_bf16(%a: tensor<2x2xbf16>, %c: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'zero.round_operands' applies to a linalg.matmul or linalg.batch_matmul of f32 operands and init}}
  %0 = linalg.matmul {zero.round_operands = tf32} ins(%a, %a : tensor<2x2xbf16>, tensor<2x2xbf16>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @round_operands_of_a_map(%a: tensor<2xf32>, %c: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'zero.round_operands' applies to a linalg.matmul or linalg.batch_matmul of f32 operands and init}}
  %0 = linalg.map {arith.negf} ins(%a : tensor<2xf32>) outs(%c : tensor<2xf32>) {zero.round_operands = tf32}
  return %0 : tensor<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// zero.backward_seed
//===----------------------------------------------------------------------===//

func.func @backward_seed_not_one() -> f32 {
  // expected-error @+1 {{'zero.backward_seed' marks the scalar float arith.constant 1.0 that seeds the backward pass, as a unit attribute}}
  %0 = arith.constant {zero.backward_seed} 2.0 : f32
  return %0 : f32
}

// -----

func.func @backward_seed_integer() -> i32 {
  // expected-error @+1 {{'zero.backward_seed' marks the scalar float arith.constant 1.0}}
  %0 = arith.constant {zero.backward_seed} 1 : i32
  return %0 : i32
}

// -----

func.func @backward_seed_tensor() -> tensor<f32> {
  // expected-error @+1 {{'zero.backward_seed' marks the scalar float arith.constant 1.0}}
  %0 = arith.constant {zero.backward_seed} dense<1.0> : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @backward_seed_not_unit() -> f32 {
  // expected-error @+1 {{'zero.backward_seed' marks the scalar float arith.constant 1.0}}
  %0 = arith.constant {zero.backward_seed = true} 1.0 : f32
  return %0 : f32
}

// -----

func.func @backward_seed_on_an_op(%a: f32) -> f32 {
  // expected-error @+1 {{'zero.backward_seed' marks the scalar float arith.constant 1.0}}
  %0 = arith.addf %a, %a {zero.backward_seed} : f32
  return %0 : f32
}

// -----

func.func @adam_skip_not_i1(%p: tensor<4xf32>, %g: tensor<4xf16>, %s: i64,
                            %lr: f32, %o: f32) {
  // expected-error @+1 {{operand #7 must be 1-bit signless integer, but got 'f32'}}
  %0:3 = "zero.adam"(%p, %g, %p, %p, %s, %lr, %lr, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 1, 0, 1, 0, 1>}> : (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, i64, f32, f32, f32) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @sgd_scale_not_f32(%p: tensor<4xf32>, %g: tensor<4xf16>, %lr: f32,
                             %s: f16) {
  // expected-error @+1 {{operand #4 must be 32-bit float, but got 'f16'}}
  %0:2 = "zero.sgd"(%p, %g, %p, %lr, %s) <{momentum = 0.9 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}> : (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, f32, f16) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @any_nonfinite_of_nothing() -> f32 {
  // expected-error @+1 {{'zero.any_nonfinite' op needs at least one input}}
  %0 = "zero.any_nonfinite"() : () -> f32
  return %0 : f32
}

// -----

func.func @any_nonfinite_of_integers(%g: tensor<4xf16>, %i: tensor<2xi32>) -> f32 {
  // expected-error @+1 {{'zero.any_nonfinite' op input 1 must be a tensor of f16, bf16, f32 or f64, but is 'tensor<2xi32>'}}
  %0 = zero.any_nonfinite %g, %i : tensor<4xf16>, tensor<2xi32>
  return %0 : f32
}

// -----

func.func @any_nonfinite_of_f8(%g: tensor<4xf8E4M3FN>) -> f32 {
  // expected-error @+1 {{'zero.any_nonfinite' op input 0 must be a tensor of f16, bf16, f32 or f64, but is 'tensor<4xf8E4M3FN>'}}
  %0 = zero.any_nonfinite %g : tensor<4xf8E4M3FN>
  return %0 : f32
}
