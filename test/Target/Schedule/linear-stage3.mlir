// The whole schedule of a linear layer y = x w + b with loss sum(y) at stage 3
// on 2 ranks (docs/ScheduleFormat.md): both parameters are shards, gathered in
// one bucket and freed after their use; the gradients are reduce-scattered in
// one bucket and Adam steps the shards.
//
// RUN: zero-opt %s --zero-stage=3 --zero-keep-transposes --zero-world-size=2 \
// RUN:   --zero-set=zero_optimization.stage3_param_persistence_threshold=0 \
// RUN:   | zero-translate --zero-to-schedule \
// RUN:   | FileCheck %s --match-full-lines
//
// Things to note:
// - buffers are the memory plan's, in its order: residents (parameters,
//   states, the step, data), transients, reduced gradients, staging buffers;
// - values: arguments first (id = argument number), then each op's results
//   and the values of its body; views and in-place results share a buffer;
// - each staging region is reserved from its start op to its wait (points
//   0-2 and 22-27);
// - events 0/1 (gather ready/done) and 2/3 (reduce-scatter ready/done);
// - the step counter's update is a result like the parameters';
// - offsets are whatever the allocator chooses (variables B<id>); a staging
//   region is at its staging buffer.

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

// CHECK: {
// CHECK-NEXT: "format": "zero-schedule",
// CHECK-NEXT: "version": 1,
// CHECK-NEXT: "producer": "zero-opt",
// CHECK-NEXT: "source": "<stdin>",
// CHECK-NEXT: "function": "step",
// CHECK-NEXT: "stage": 3,
// CHECK-NEXT: "world_size": 2,
// CHECK-NEXT: "topology": {"grid": [2]},
// CHECK-NEXT: "memory": {"alignment": 64, "arenas": {"device": {{[0-9]+}}, "host": {{[0-9]+}}, "nvme": {{[0-9]+}}}},
// CHECK-NEXT: "buffers": [
// CHECK-NEXT: {"id": 0, "name": "fc.weight", "category": "parameter", "role": "", "space": "device", "offset": [[B0:[0-9]+]], "bytes": 12, "live": [[[#P1:]], [[#P2:]]]},
// CHECK-NEXT: {"id": 1, "name": "fc.bias", "category": "parameter", "role": "", "space": "device", "offset": [[B1:[0-9]+]], "bytes": 8, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 2, "name": "fc.weight.exp_avg", "category": "optimizer_state", "role": "", "space": "device", "offset": [[B2:[0-9]+]], "bytes": 12, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 3, "name": "fc.weight.exp_avg_sq", "category": "optimizer_state", "role": "", "space": "device", "offset": [[B3:[0-9]+]], "bytes": 12, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 4, "name": "fc.bias.exp_avg", "category": "optimizer_state", "role": "", "space": "device", "offset": [[B4:[0-9]+]], "bytes": 8, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 5, "name": "fc.bias.exp_avg_sq", "category": "optimizer_state", "role": "", "space": "device", "offset": [[B5:[0-9]+]], "bytes": 8, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 6, "name": "arg6", "category": "input", "role": "", "space": "device", "offset": [[B6:[0-9]+]], "bytes": 8, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 7, "name": "x", "category": "input", "role": "", "space": "device", "offset": [[B7:[0-9]+]], "bytes": 16, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 8, "name": "linalg.matmul at [[LOC1:<stdin>:[0-9]+:[0-9]+]]", "category": "activation", "role": "", "space": "device", "offset": [[B8:[0-9]+]], "bytes": 24, "live": [[[#P3:]], [[#P4:]]]},
// CHECK-NEXT: {"id": 9, "name": "gathered fc.bias", "category": "communication", "role": "gathered", "space": "device", "offset": [[B9:[0-9]+]], "bytes": 12, "live": [[[#P1]], [[#P5:]]]},
// CHECK-NEXT: {"id": 10, "name": "gathered fc.weight", "category": "communication", "role": "gathered", "space": "device", "offset": [[B10:[0-9]+]], "bytes": 24, "live": [[[#P1]], [[#P6:]]]},
// CHECK-NEXT: {"id": 11, "name": "linalg.reduce at [[LOC2:<stdin>:[0-9]+:[0-9]+]]", "category": "activation", "role": "", "space": "device", "offset": [[B11:[0-9]+]], "bytes": 4, "live": [[[#P7:]], [[#P2]]]},
// CHECK-NEXT: {"id": 12, "name": "linalg.fill at [[LOC3:<stdin>:[0-9]+:[0-9]+]]", "category": "activation", "role": "", "space": "device", "offset": [[B12:[0-9]+]], "bytes": 24, "live": [[[#P8:]], [[#P9:]]]},
// CHECK-NEXT: {"id": 13, "name": "linalg.transpose at [[LOC4:<stdin>:[0-9]+:[0-9]+]]", "category": "activation", "role": "", "space": "device", "offset": [[B13:[0-9]+]], "bytes": 16, "live": [[[#P10:]], [[#P11:]]]},
// CHECK-NEXT: {"id": 14, "name": "linalg.matmul at [[LOC5:<stdin>:[0-9]+:[0-9]+]]", "category": "communication", "role": "in flight", "space": "device", "offset": [[B14:[0-9]+]], "bytes": 24, "live": [[[#P12:]], [[#P13:]]]},
// CHECK-NEXT: {"id": 15, "name": "linalg.reduce at [[LOC6:<stdin>:[0-9]+:[0-9]+]]", "category": "communication", "role": "in flight", "space": "device", "offset": [[B15:[0-9]+]], "bytes": 12, "live": [[[#P12]], [[#P13]]]},
// CHECK-NEXT: {"id": 16, "name": "fc.weight.grad", "category": "gradient", "role": "", "space": "device", "offset": [[B16:[0-9]+]], "bytes": 12, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 17, "name": "fc.bias.grad", "category": "gradient", "role": "", "space": "device", "offset": [[B17:[0-9]+]], "bytes": 8, "live": [[[#P1]], [[#P2]]]},
// CHECK-NEXT: {"id": 18, "name": "tensor.from_elements at [[LOC7:<stdin>:[0-9]+:[0-9]+]]", "category": "activation", "role": "", "space": "device", "offset": [[B18:[0-9]+]], "bytes": 8, "live": [[[#P14:]], [[#P2]]]},
// CHECK-NEXT: {"id": 19, "name": "staging zero.all_gather_start at [[LOC8:<stdin>:[0-9]+:[0-9]+]]", "category": "communication", "role": "staging", "space": "device", "offset": [[B19:[0-9]+]], "bytes": 40, "live": [[[#P1]], [[#P15:]]]},
// CHECK-NEXT: {"id": 20, "name": "staging zero.reduce_scatter_start at [[LOC9:<stdin>:[0-9]+:[0-9]+]]", "category": "communication", "role": "staging", "space": "device", "offset": [[B20:[0-9]+]], "bytes": 40, "live": [[[#P16:]], [[#P13]]]}
// CHECK-NEXT: ],
// CHECK-NEXT: "values": [
// CHECK-NEXT: {"id": 0, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 0, "name": "%arg0"},
// CHECK-NEXT: {"id": 1, "kind": "tensor", "dtype": "f32", "shape": [2], "buffer": 1, "name": "%arg1"},
// CHECK-NEXT: {"id": 2, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 2, "name": "%arg2"},
// CHECK-NEXT: {"id": 3, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 3, "name": "%arg3"},
// CHECK-NEXT: {"id": 4, "kind": "tensor", "dtype": "f32", "shape": [2], "buffer": 4, "name": "%arg4"},
// CHECK-NEXT: {"id": 5, "kind": "tensor", "dtype": "f32", "shape": [2], "buffer": 5, "name": "%arg5"},
// CHECK-NEXT: {"id": 6, "kind": "tensor", "dtype": "i64", "shape": [], "buffer": 6, "name": "%arg6"},
// CHECK-NEXT: {"id": 7, "kind": "tensor", "dtype": "f32", "shape": [2, 2], "buffer": 7, "name": "%arg7"},
// CHECK-NEXT: {"id": 8, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 8, "name": "[[V1:%[0-9]+]]"},
// CHECK-NEXT: {"id": 9, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 9, "name": "%full#0"},
// CHECK-NEXT: {"id": 10, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 10, "name": "%full#1"},
// CHECK-NEXT: {"id": 11, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 8, "name": "%broadcasted"},
// CHECK-NEXT: {"id": 12, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 8, "name": "[[V3:%[0-9]+]]"},
// CHECK-NEXT: {"id": 13, "kind": "scalar", "dtype": "f32", "name": "%cst"},
// CHECK-NEXT: {"id": 14, "kind": "tensor", "dtype": "f32", "shape": [], "buffer": 11, "name": "[[V4:%[0-9]+]]"},
// CHECK-NEXT: {"id": 15, "kind": "tensor", "dtype": "f32", "shape": [], "buffer": 11, "name": "[[V5:%[0-9]+]]"},
// CHECK-NEXT: {"id": 16, "kind": "tensor", "dtype": "f32", "shape": [], "buffer": 11, "name": "%reduced"},
// CHECK-NEXT: {"id": 17, "kind": "scalar", "dtype": "f32", "name": "%in"},
// CHECK-NEXT: {"id": 18, "kind": "scalar", "dtype": "f32", "name": "%init"},
// CHECK-NEXT: {"id": 19, "kind": "scalar", "dtype": "f32", "name": "[[V6:%[0-9]+]]"},
// CHECK-NEXT: {"id": 20, "kind": "scalar", "dtype": "f32", "name": "%cst_0"},
// CHECK-NEXT: {"id": 21, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 12, "name": "[[V7:%[0-9]+]]"},
// CHECK-NEXT: {"id": 22, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 12, "name": "[[V8:%[0-9]+]]"},
// CHECK-NEXT: {"id": 23, "kind": "tensor", "dtype": "f32", "shape": [2, 2], "buffer": 13, "name": "[[V9:%[0-9]+]]"},
// CHECK-NEXT: {"id": 24, "kind": "tensor", "dtype": "f32", "shape": [2, 2], "buffer": 13, "name": "%transposed"},
// CHECK-NEXT: {"id": 25, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 14, "name": "[[V10:%[0-9]+]]"},
// CHECK-NEXT: {"id": 26, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 14, "name": "[[V11:%[0-9]+]]"},
// CHECK-NEXT: {"id": 27, "kind": "tensor", "dtype": "f32", "shape": [2, 3], "buffer": 14, "name": "[[V12:%[0-9]+]]"},
// CHECK-NEXT: {"id": 28, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 15, "name": "[[V13:%[0-9]+]]"},
// CHECK-NEXT: {"id": 29, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 15, "name": "[[V14:%[0-9]+]]"},
// CHECK-NEXT: {"id": 30, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 15, "name": "%reduced_1"},
// CHECK-NEXT: {"id": 31, "kind": "scalar", "dtype": "f32", "name": "%in"},
// CHECK-NEXT: {"id": 32, "kind": "scalar", "dtype": "f32", "name": "%init"},
// CHECK-NEXT: {"id": 33, "kind": "scalar", "dtype": "f32", "name": "[[V6]]"},
// CHECK-NEXT: {"id": 34, "kind": "scalar", "dtype": "i64", "name": "%extracted"},
// CHECK-NEXT: {"id": 35, "kind": "scalar", "dtype": "i64", "name": "%c1_i64"},
// CHECK-NEXT: {"id": 36, "kind": "scalar", "dtype": "i64", "name": "[[V15:%[0-9]+]]"},
// CHECK-NEXT: {"id": 37, "kind": "scalar", "dtype": "f32", "name": "%cst_2"},
// CHECK-NEXT: {"id": 38, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 16, "name": "%scattered#0"},
// CHECK-NEXT: {"id": 39, "kind": "tensor", "dtype": "f32", "shape": [2], "buffer": 17, "name": "%scattered#1"},
// CHECK-NEXT: {"id": 40, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 0, "name": "%param_out"},
// CHECK-NEXT: {"id": 41, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 2, "name": "%exp_avg_out"},
// CHECK-NEXT: {"id": 42, "kind": "tensor", "dtype": "f32", "shape": [3], "buffer": 3, "name": "%exp_avg_sq_out"},
// CHECK-NEXT: {"id": 43, "kind": "tensor", "dtype": "f32", "shape": [2], "buffer": 1, "name": "%param_out_3"},
// CHECK-NEXT: {"id": 44, "kind": "tensor", "dtype": "f32", "shape": [2], "buffer": 4, "name": "%exp_avg_out_4"},
// CHECK-NEXT: {"id": 45, "kind": "tensor", "dtype": "f32", "shape": [2], "buffer": 5, "name": "%exp_avg_sq_out_5"},
// CHECK-NEXT: {"id": 46, "kind": "tensor", "dtype": "i64", "shape": [], "buffer": 18, "name": "%from_elements"}
// CHECK-NEXT: ],
// CHECK-NEXT: "arguments": [
// CHECK-NEXT: {"value": 0, "kind": "param", "name": "fc.weight", "layout": {"shape": [2, 3], "world_size": 2, "shard_numel": 3, "padded_numel": 6}, "sharded": true, "persistent": false, "init": {"kind": "normal", "std": 0.02}},
// CHECK-NEXT: {"value": 1, "kind": "param", "name": "fc.bias", "layout": {"shape": [3], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, "sharded": true, "persistent": false, "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 2, "kind": "state", "state": "exp_avg", "param": "fc.weight", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 3, "kind": "state", "state": "exp_avg_sq", "param": "fc.weight", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 4, "kind": "state", "state": "exp_avg", "param": "fc.bias", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 5, "kind": "state", "state": "exp_avg_sq", "param": "fc.bias", "init": {"kind": "zeros"}},
// CHECK-NEXT: {"value": 6, "kind": "step", "init": {"kind": "value", "value": 0}},
// CHECK-NEXT: {"value": 7, "kind": "data", "name": "x"}
// CHECK-NEXT: ],
// CHECK-NEXT: "results": [
// CHECK-NEXT: {"value": 16, "kind": "loss"},
// CHECK-NEXT: {"value": 40, "kind": "update", "argument": 0},
// CHECK-NEXT: {"value": 43, "kind": "update", "argument": 1},
// CHECK-NEXT: {"value": 41, "kind": "update", "argument": 2},
// CHECK-NEXT: {"value": 42, "kind": "update", "argument": 3},
// CHECK-NEXT: {"value": 44, "kind": "update", "argument": 4},
// CHECK-NEXT: {"value": 45, "kind": "update", "argument": 5},
// CHECK-NEXT: {"value": 46, "kind": "update", "argument": 6}
// CHECK-NEXT: ],
// CHECK-NEXT: "streams": ["compute", "comm"],
// CHECK-NEXT: "events": 4,
// CHECK-NEXT: "instructions": {
// CHECK-NEXT: "compute": [
// CHECK-NEXT: {"op": "record", "point": [[#P1]], "loc": "[[LOC8]]", "event": 0},
// CHECK-NEXT: {"op": "wait", "point": [[#P15]], "loc": "[[LOC10:<stdin>:[0-9]+:[0-9]+]]", "event": 1},
// CHECK-NEXT: {"op": "linalg.broadcast", "point": [[#P17:]], "loc": "[[LOC11:<stdin>:[0-9]+:[0-9]+]]", "operands": [9, 8], "results": [11], "dimensions": [0]},
// CHECK-NEXT: {"op": "free", "point": [[#P5]], "loc": "[[LOC12:<stdin>:[0-9]+:[0-9]+]]", "values": [9]},
// CHECK-NEXT: {"op": "linalg.matmul", "point": [[#P18:]], "loc": "[[LOC1]]", "operands": [7, 10, 11], "results": [12]},
// CHECK-NEXT: {"op": "free", "point": [[#P6]], "loc": "[[LOC13:<stdin>:[0-9]+:[0-9]+]]", "values": [10]},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P19:]], "loc": "[[LOC14:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [13], "value": 0.0},
// CHECK-NEXT: {"op": "linalg.fill", "point": [[#P20:]], "loc": "[[LOC15:<stdin>:[0-9]+:[0-9]+]]", "operands": [13, 14], "results": [15]},
// CHECK-NEXT: {"op": "linalg.reduce", "point": [[#P4]], "loc": "[[LOC2]]", "operands": [12, 15], "results": [16], "dimensions": [0, 1], "body": {"arguments": [17, 18], "ops": [{"op": "arith.addf", "operands": [17, 18], "results": [19]}], "yield": [19]}},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P21:]], "loc": "[[LOC16:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [20], "value": 1.0},
// CHECK-NEXT: {"op": "linalg.fill", "point": [[#P22:]], "loc": "[[LOC3]]", "operands": [20, 21], "results": [22]},
// CHECK-NEXT: {"op": "linalg.transpose", "point": [[#P23:]], "loc": "[[LOC4]]", "operands": [7, 23], "results": [24], "permutation": [1, 0]},
// CHECK-NEXT: {"op": "linalg.fill", "point": [[#P24:]], "loc": "[[LOC17:<stdin>:[0-9]+:[0-9]+]]", "operands": [13, 25], "results": [26]},
// CHECK-NEXT: {"op": "linalg.matmul", "point": [[#P11]], "loc": "[[LOC5]]", "operands": [24, 22, 26], "results": [27]},
// CHECK-NEXT: {"op": "linalg.fill", "point": [[#P25:]], "loc": "[[LOC18:<stdin>:[0-9]+:[0-9]+]]", "operands": [13, 28], "results": [29]},
// CHECK-NEXT: {"op": "linalg.reduce", "point": [[#P9]], "loc": "[[LOC6]]", "operands": [22, 29], "results": [30], "dimensions": [0], "body": {"arguments": [31, 32], "ops": [{"op": "arith.addf", "operands": [31, 32], "results": [33]}], "yield": [33]}},
// CHECK-NEXT: {"op": "record", "point": [[#P16]], "loc": "[[LOC9]]", "event": 2},
// CHECK-NEXT: {"op": "tensor.extract", "point": [[#P26:]], "loc": "[[LOC19:<stdin>:[0-9]+:[0-9]+]]", "operands": [6], "results": [34]},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P27:]], "loc": "[[LOC20:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [35], "value": 1},
// CHECK-NEXT: {"op": "arith.addi", "point": [[#P28:]], "loc": "[[LOC21:<stdin>:[0-9]+:[0-9]+]]", "operands": [34, 35], "results": [36]},
// CHECK-NEXT: {"op": "arith.constant", "point": [[#P29:]], "loc": "[[LOC22:<stdin>:[0-9]+:[0-9]+]]", "operands": [], "results": [37], "value": 0.0010000000474974513},
// CHECK-NEXT: {"op": "wait", "point": [[#P13]], "loc": "[[LOC23:<stdin>:[0-9]+:[0-9]+]]", "event": 3},
// CHECK-NEXT: {"op": "zero.adam", "point": [[#P30:]], "loc": "[[LOC24:<stdin>:[0-9]+:[0-9]+]]", "operands": [0, 38, 2, 3, 36, 37], "results": [40, 41, 42], "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.0, "mode": "adamw", "bias_correction": true, "amsgrad": false},
// CHECK-NEXT: {"op": "zero.adam", "point": [[#P31:]], "loc": "[[LOC25:<stdin>:[0-9]+:[0-9]+]]", "operands": [1, 39, 4, 5, 36, 37], "results": [43, 44, 45], "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.0, "mode": "adamw", "bias_correction": true, "amsgrad": false},
// CHECK-NEXT: {"op": "tensor.from_elements", "point": [[#P14]], "loc": "[[LOC7]]", "operands": [36], "results": [46]}
// CHECK-NEXT: ],
// CHECK-NEXT: "comm": [
// CHECK-NEXT: {"op": "wait", "point": [[#P1]], "loc": "[[LOC8]]", "event": 0},
// CHECK-NEXT: {"op": "all_gather", "point": [[#P1]], "loc": "[[LOC8]]", "operands": [1, 0], "results": [9, 10], "layouts": [{"shape": [3], "world_size": 2, "shard_numel": 2, "padded_numel": 4}, {"shape": [2, 3], "world_size": 2, "shard_numel": 3, "padded_numel": 6}], "staging": {"space": "device", "offset": [[B19]], "bytes": 40}},
// CHECK-NEXT: {"op": "record", "point": [[#P1]], "loc": "[[LOC8]]", "event": 1},
// CHECK-NEXT: {"op": "wait", "point": [[#P16]], "loc": "[[LOC9]]", "event": 2},
// CHECK-NEXT: {"op": "reduce_scatter", "point": [[#P16]], "loc": "[[LOC9]]", "operands": [27, 30], "results": [38, 39], "reduction": "avg", "layouts": [{"shape": [2, 3], "world_size": 2, "shard_numel": 3, "padded_numel": 6}, {"shape": [3], "world_size": 2, "shard_numel": 2, "padded_numel": 4}], "staging": {"space": "device", "offset": [[B20]], "bytes": 40}},
// CHECK-NEXT: {"op": "record", "point": [[#P16]], "loc": "[[LOC9]]", "event": 3}
// CHECK-NEXT: ]
// CHECK-NEXT: },
// Each Adam updates the rank's shard of a parameter argument itself.
// CHECK-NEXT: "gradients": [
// CHECK-NEXT: {"instruction": 22, "param": "fc.weight", "argument": 0, "offset": 0},
// CHECK-NEXT: {"instruction": 23, "param": "fc.bias", "argument": 1, "offset": 0}
// CHECK-NEXT: ]
// CHECK-NEXT: }
