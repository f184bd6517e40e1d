// Errors the emitter finds before it plans: a step that has not been through
// the pipeline, and ops outside the format (at the top level and in bodies).
//
// RUN: zero-translate --zero-to-schedule %s -split-input-file -verify-diagnostics

// A value-and-grad step that has not been compiled.
// expected-error @+1 {{'func.func' op '@step' has not been through the ZeRO pipeline: the schedule needs the 'zero.stage' attribute; compile it with zero-opt --zero-stage=N (or --zero-pipeline) first}}
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> (tensor<f32> {zero.loss}, tensor<4xf32> {zero.grad = "w"}) {
  %e = tensor.empty() : tensor<f32>
  return %e, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Partitioned, but without a memory plan.
// expected-error @+1 {{'func.func' op '@step' has not been through the ZeRO pipeline: the schedule needs the 'zero.memory_plan' attribute}}
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.train_step} {
  return %w : tensor<4xf32>
}

// -----

func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.train_step,
                zero.memory_plan = {device = 0 : i64, host = 0 : i64, nvme = 0 : i64}} {
  // expected-error @+1 {{'arith.addf' op is not supported by the schedule: it takes scalars only; elementwise math on tensors is a linalg.map}}
  %y = arith.addf %w, %w : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<8xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.train_step,
                zero.memory_plan = {device = 0 : i64, host = 0 : i64, nvme = 0 : i64}} {
  // expected-error @+1 {{'tensor.concat' op is not supported by the schedule (docs/ScheduleFormat.md lists the ops the runtime executes)}}
  %y = tensor.concat dim(0) %w, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.train_step,
                zero.memory_plan = {device = 0 : i64, host = 0 : i64, nvme = 0 : i64}} {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.map ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>)
    (%in: f32, %init: f32) {
      // expected-error @+1 {{'math.tan' op is not supported in the body of 'linalg.map' by the schedule: a body holds scalar arith and math ops, linalg.index and tensor.extract of a tensor defined outside it (docs/ScheduleFormat.md)}}
      %t = math.tan %in : f32
      linalg.yield %t : f32
    }
  return %y : tensor<4xf32>
}

// -----

// The schedule has one loop, the micro-step loop.
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.train_step,
                zero.memory_plan = {device = 0 : i64, host = 0 : i64, nvme = 0 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %w) -> (tensor<4xf32>) {
    scf.yield %s : tensor<4xf32>
  }
  // expected-error @+1 {{'scf.for' op is a second loop; the schedule has at most one, the micro-step loop}}
  %b = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %a) -> (tensor<4xf32>) {
    scf.yield %s : tensor<4xf32>
  }
  return %b : tensor<4xf32>
}

// -----

// It counts from 0 in steps of 1 to a constant.
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.train_step,
                zero.memory_plan = {device = 0 : i64, host = 0 : i64, nvme = 0 : i64}} {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{'scf.for' op must run from 0 to a constant count in steps of 1 to be the schedule's micro-step loop}}
  %a = scf.for %i = %c1 to %c2 step %c1 iter_args(%s = %w) -> (tensor<4xf32>) {
    scf.yield %s : tensor<4xf32>
  }
  return %a : tensor<4xf32>
}

// -----

// Its induction variable only slices micro-batches.
func.func @step(%w: tensor<4xf32> {zero.param = "w"}, %x: tensor<2x4xf32> {zero.data = "x"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.train_step,
                zero.memory_plan = {device = 0 : i64, host = 0 : i64, nvme = 0 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %w) -> (tensor<4xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<4xf32>
    // expected-error @+1 {{'tensor.extract_slice' op reads the loop's induction variable; the schedule has it only as the row block of a micro-batch slice (tensor.extract_slice [%iv, 0, ...] [1, ...] [1, ...])}}
    %half = tensor.extract_slice %x[%i, 0] [1, 2] [1, 1] : tensor<2x4xf32> to tensor<2xf32>
    scf.yield %row : tensor<4xf32>
  }
  return %a : tensor<4xf32>
}

// -----

// A hand-planned step whose nodes do not divide its world.
// expected-error @+1 {{'func.func' op has 'zero.ranks_per_node' 3, which does not divide 'zero.world_size' 4}}
func.func @step(%w: tensor<4xf32> {zero.param = "w"}) -> tensor<4xf32>
    attributes {zero.stage = 0 : i64, zero.world_size = 4 : i64, zero.train_step,
                zero.ranks_per_node = 3 : i64,
                zero.memory_plan_options = {alignment = 64 : i64, contiguous_gradients = false},
                zero.memory_plan = {device = 16 : i64, host = 0 : i64, nvme = 0 : i64}} {
  return %w : tensor<4xf32>
}
