//===- HostValidationTest.cpp - every load-time error of compute ops ------===//
//
// prepareComputeOp checks an instruction completely; each error names the
// JSON path, the field and the source location.
//
//===----------------------------------------------------------------------===//

#include "HostTestUtil.h"

using namespace zero::runtime;
using namespace zero::runtime::test;
using nlohmann::json;

namespace {

class HostValidation : public ::testing::Test {
protected:
  void SetUp() override {
    x = p.tensor(DType::F32, {2, 3}, "%x");
    y = p.tensor(DType::F32, {3, 4}, "%y");
    z = p.tensor(DType::F32, {2, 4}, "%z");
    s = p.scalar(DType::F32, "%s");
    r = p.tensor(DType::F32, {2, 4}, "%r");
    rb = p.tensor(DType::BF16, {2, 4}, "%rb");
    step = p.scalar(DType::I64, "%step");
    idx = p.scalar(DType::Index, "%i");
    tok = p.tensor(DType::I32, {2}, "%tok");
    a = p.scalar(DType::F32, "%a");
    b = p.scalar(DType::F32, "%b");
    c = p.scalar(DType::F32, "%c");
    d = p.scalar(DType::F32, "%d");
    flag = p.scalar(DType::I1, "%flag");
    n = p.scalar(DType::I32, "%n");
    t = p.tensor(DType::F32, {3, 2}, "%t");
    v = p.tensor(DType::F32, {2}, "%v");
  }

  static json instr(const std::string &op, std::vector<int64_t> operands,
                    std::vector<int64_t> results) {
    return {{"op", op}, {"operands", operands}, {"results", results}};
  }
  static json bodyOp(const std::string &op, std::vector<int64_t> operands,
                     int64_t result) {
    return {{"op", op}, {"operands", operands}, {"results", {result}}};
  }
  /// linalg.map %x -> %z-shaped? No: a map of x into a [2, 3] destination.
  json mapOp(json ops, std::vector<int64_t> yield) {
    json op = instr("linalg.map", {x, x}, {x});
    op["body"] = {{"arguments", {a, b}}, {"ops", ops}, {"yield", yield}};
    return op;
  }
  void expectErrorAt(const json &op, const std::string &message) {
    EXPECT_EQ(p.prepareError(op), message) << op.dump();
  }
  void expectError(const json &op, const std::string &message) {
    EXPECT_EQ(p.prepareError(op), message + " at m.mlir:1:1") << op.dump();
  }

  TestProgram p;
  int64_t x, y, z, s, r, rb, step, idx, tok, a, b, c, d, flag, n, t, v;
};

} // namespace

TEST_F(HostValidation, InstructionShape) {
  // The decoder checks the op and its fields against the op set
  // (OpSet.def); the host's checks follow.
  expectError(instr("foo.bar", {x}, {z}),
              "instructions.compute[0].op: unsupported op 'foo.bar'");
  json record = instr("record", {}, {});
  record["event"] = 0;
  record.erase("operands");
  record.erase("results");
  expectErrorAt(record, "instructions.compute[0].event: event 0 is out of "
                        "range: the schedule has 0 events");
  // The op table's arity is the decoder's, checked for every op before a
  // backend reads an operand.
  json noLoc = instr("linalg.matmul", {x, y}, {r});
  StatusOr<Instruction> decoded =
      decodeInstruction(noLoc.dump(), "instructions.compute[7]", p.values);
  ASSERT_FALSE(decoded.isOk());
  EXPECT_EQ(decoded.status().message(),
            "instructions.compute[7].operands: linalg.matmul takes 3 "
            "operands, got 2 at an unknown location");
  json scalar = instr("linalg.matmul", {s, y, z}, {r});
  decoded =
      decodeInstruction(scalar.dump(), "instructions.compute[7]", p.values);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(host::prepareComputeOp(*decoded, "", p.values).status().message(),
            "instructions.compute[7].operands[0]: expected a tensor, got "
            "scalar value 3 (%s) at an unknown location");
  json badLoc = instr("linalg.matmul", {x, y, z}, {r});
  badLoc["loc"] = 12;
  expectErrorAt(badLoc, "instructions.compute[0].loc: expected a string, got "
                        "12");
  json badPoint = instr("linalg.matmul", {x, y, z}, {r});
  badPoint["point"] = "3";
  expectErrorAt(badPoint, "instructions.compute[0].point: expected an "
                          "integer, got \"3\"");
  json extra = instr("linalg.matmul", {x, y, z}, {r});
  extra["transpose_a"] = true;
  expectError(extra, "instructions.compute[0].transpose_a: unknown key for "
                     "linalg.matmul (its fields: 'indexing_maps', "
                     "'round_operands')");
  // The one operand rounding is tf32.
  json bf16Rounding = instr("linalg.matmul", {x, y, z}, {r});
  bf16Rounding["round_operands"] = "bf16";
  expectError(bf16Rounding,
              "instructions.compute[0].round_operands: round_operands 'bf16': "
              "the one rounding a GEMM takes is 'tf32'");
  // Only f32 operands and init are rounded to tf32.
  json bf16Init = instr("linalg.matmul", {x, y, rb}, {rb});
  bf16Init["round_operands"] = "tf32";
  expectError(bf16Init,
              "instructions.compute[0].round_operands: linalg.matmul rounds "
              "f32 operands to tf32, got f32, f32 and bf16");
  // A matmul's indexing maps: the default, or A's or B's loops swapped.
  json broadcast = instr("linalg.matmul", {x, y, z}, {r});
  broadcast["indexing_maps"] = {{2}, {2, 1}, {0, 1}};
  expectError(broadcast,
              "instructions.compute[0].indexing_maps: indexing_maps [[2], [2, "
              "1], [0, 1]] are not a GEMM's: expected [[0, 2], [2, 1], [0, 1]] "
              "with A's or B's two loops swapped at most");
  json extraField = instr("linalg.transpose", {x, t}, {t});
  extraField["permutation"] = {1, 0};
  extraField["perm"] = {1, 0};
  expectError(extraField, "instructions.compute[0].perm: unknown key for "
                          "linalg.transpose (its fields: 'permutation')");
  json noOperands = {{"op", "linalg.matmul"}, {"results", {r}}};
  expectError(noOperands, "instructions.compute[0]: missing key 'operands'");
  expectError(instr("linalg.matmul", {x, 99, z}, {r}),
              "instructions.compute[0].operands[1]: value 99 is not defined");
}

TEST_F(HostValidation, OperandsAndResults) {
  expectError(instr("linalg.matmul", {x, y}, {r}),
              "instructions.compute[0].operands: linalg.matmul takes 3 "
              "operands, got 2");
  expectError(instr("linalg.matmul", {x, y, z}, {}),
              "instructions.compute[0].results: linalg.matmul takes 1 "
              "result, got 0");
  expectError(instr("linalg.matmul", {s, y, z}, {r}),
              "instructions.compute[0].operands[0]: expected a tensor, got "
              "scalar value 3 (%s)");
  expectError(instr("linalg.matmul", {x, t, z}, {r}),
              "instructions.compute[0].operands[2]: expected shape [2, 2], "
              "got [2, 4] for value 2 (%z)");
  expectError(instr("linalg.matmul", {x, y, z}, {rb}),
              "instructions.compute[0].results[0]: expected dtype f32, got "
              "bf16 for value 5 (%rb)");
  expectError(instr("linalg.batch_matmul", {x, y, z}, {r}),
              "instructions.compute[0].operands[0]: linalg.batch_matmul "
              "expects rank-3 operands, got shape [2, 3] for value 0 (%x)");
  expectError(instr("linalg.matmul", {tok, tok, z}, {r}),
              "instructions.compute[0].operands[0]: linalg.matmul expects "
              "rank-2 operands, got shape [2] for value 8 (%tok)");
  expectError(instr("linalg.fill", {x, z}, {r}),
              "instructions.compute[0].operands[0]: expected a scalar, got "
              "tensor value 0 (%x)");
  expectError(instr("linalg.copy", {x, z}, {r}),
              "instructions.compute[0].operands[1]: expected shape [2, 3], "
              "got [2, 4] for value 2 (%z)");
}

TEST_F(HostValidation, Fields) {
  json transpose = instr("linalg.transpose", {x, t}, {t});
  expectError(transpose, "instructions.compute[0]: missing field "
                         "'permutation' of linalg.transpose");
  transpose["permutation"] = "10";
  expectError(transpose, "instructions.compute[0].permutation: expected an "
                         "array of integers, got \"10\"");
  transpose["permutation"] = {1, 1};
  expectError(transpose, "instructions.compute[0].permutation: expected a "
                         "permutation of the integers in [0, 2), got [1, 1]");
  transpose["permutation"] = {0, 1};
  expectError(transpose, "instructions.compute[0].operands[1]: expected shape "
                         "[2, 3], got [3, 2] for value 15 (%t)");
  json broadcast = instr("linalg.broadcast", {v, z}, {r});
  broadcast["dimensions"] = {2};
  expectError(broadcast, "instructions.compute[0].dimensions: dimension 2 is "
                         "out of range for rank 2");
  broadcast["dimensions"] = {0};
  expectError(broadcast, "instructions.compute[0].operands[0]: expected shape "
                         "[4], got [2] for value 16 (%v)");
  json reduce = instr("linalg.reduce", {x, v}, {v});
  reduce["dimensions"] = {1, 1};
  reduce["body"] = {{"arguments", json::array()},
                    {"ops", json::array()},
                    {"yield", json::array()}};
  expectError(reduce, "instructions.compute[0].dimensions: dimension 1 is "
                      "listed twice");
}

TEST_F(HostValidation, Bodies) {
  expectError(instr("linalg.map", {x, x}, {x}),
              "instructions.compute[0]: missing field 'body' of linalg.map");
  json noYield = mapOp(json::array(), {});
  noYield["body"].erase("yield");
  expectError(noYield, "instructions.compute[0].body: missing key 'yield'");
  json extraKey = mapOp(json::array(), {a});
  extraKey["body"]["region"] = 1;
  expectError(extraKey, "instructions.compute[0].body: unknown key 'region'");
  json args = mapOp(json::array(), {a});
  args["body"]["arguments"] = {a};
  expectError(args, "instructions.compute[0].body.arguments: linalg.map's "
                    "body takes 2 arguments (the inputs' elements, then the "
                    "destination's), got 1");
  args["body"]["arguments"] = {a, flag};
  expectError(args, "instructions.compute[0].body.arguments[1]: expected "
                    "dtype f32, got i1 for value 13 (%flag)");
  args["body"]["arguments"] = {a, x};
  expectError(args, "instructions.compute[0].body.arguments[1]: a block "
                    "argument must be a scalar, got tensor value 0 (%x)");
  expectError(mapOp({bodyOp("func.call", {a}, c)}, {c}),
              "instructions.compute[0].body.ops[0].op: unsupported op "
              "'func.call' in a body (expected a scalar arith or math op, "
              "linalg.index or tensor.extract)");
  expectError(mapOp({bodyOp("arith.addf", {a, 99}, c)}, {c}),
              "instructions.compute[0].body.ops[0].operands[1]: value 99 is "
              "not defined");
  expectError(
      mapOp({bodyOp("arith.addf", {a, d}, c), bodyOp("arith.mulf", {a, a}, d)},
            {c}),
      "instructions.compute[0].body.ops[0].operands[1]: value 12 "
      "(%d) is used before its definition in the body");
  expectError(
      mapOp({bodyOp("arith.addf", {a, b}, c), bodyOp("arith.mulf", {a, a}, c)},
            {c}),
      "instructions.compute[0].body.ops[1].results[0]: value 11 (%c) "
      "is defined twice");
  expectError(mapOp({bodyOp("arith.addf", {a, b}, c)}, {c, c}),
              "instructions.compute[0].body.yield: linalg.map's body yields 1 "
              "values, got 2");
  expectError(mapOp({bodyOp("arith.addf", {a, b}, c)}, {flag}),
              "instructions.compute[0].body.yield[0]: expected dtype f32, got "
              "i1 for value 13 (%flag)");
  expectError(mapOp({bodyOp("arith.addf", {a, b}, c)}, {77}),
              "instructions.compute[0].body.yield[0]: value 77 is not defined");
  json index = bodyOp("linalg.index", {}, idx);
  index["dim"] = 2;
  expectError(mapOp({index}, {a}),
              "instructions.compute[0].body.ops[0].dim: loop dimension 2 is "
              "out of range: linalg.map has 2 loops");
  expectError(mapOp({bodyOp("tensor.extract", {x, idx}, c)}, {c}),
              "instructions.compute[0].body.ops[0].operands: tensor.extract "
              "takes 3 operands, got 2");
  expectError(mapOp({bodyOp("tensor.extract", {x, idx, s}, c)}, {c}),
              "instructions.compute[0].body.ops[0].operands[2]: expected "
              "dtype index, got f32 for value 3 (%s)");
  // Scalars from outside the body are fine; a tensor is not a scalar.
  expectError(mapOp({bodyOp("arith.addf", {a, x}, c)}, {c}),
              "instructions.compute[0].body.ops[0].operands[1]: expected a "
              "scalar, got tensor value 0 (%x)");
  EXPECT_EQ(p.prepareError(mapOp({bodyOp("arith.addf", {a, s}, c)}, {c})), "");
}

TEST_F(HostValidation, ScalarOps) {
  expectError(mapOp({bodyOp("arith.addi", {a, b}, c)}, {c}),
              "instructions.compute[0].body.ops[0].results[0]: arith.addi "
              "expects an integer result, got f32 for value 11 (%c)");
  expectError(mapOp({bodyOp("arith.addf", {a, flag}, c)}, {c}),
              "instructions.compute[0].body.ops[0].operands[1]: expected "
              "dtype f32, got i1 for value 13 (%flag)");
  json cmp = bodyOp("arith.cmpf", {a, b}, flag);
  cmp["predicate"] = "lt";
  expectError(mapOp({cmp}, {a}),
              "instructions.compute[0].body.ops[0].predicate: unknown "
              "arith.cmpf predicate 'lt' (expected one of: oeq ogt oge olt "
              "ole one ord ueq ugt uge ult ule une uno true false)");
  cmp.erase("predicate");
  expectError(mapOp({cmp}, {a}),
              "instructions.compute[0].body.ops[0]: missing field 'predicate' "
              "of arith.cmpf");
  json cmpi = bodyOp("arith.cmpi", {a, b}, flag);
  cmpi["predicate"] = "slt";
  expectError(mapOp({cmpi}, {a}),
              "instructions.compute[0].body.ops[0].operands[0]: arith.cmpi "
              "expects integer operands, got f32 for value 9 (%a)");
  expectError(mapOp({bodyOp("arith.select", {a, a, b}, c)}, {c}),
              "instructions.compute[0].body.ops[0].operands[0]: expected "
              "dtype i1, got f32 for value 9 (%a)");
  expectError(mapOp({bodyOp("arith.extf", {a}, c)}, {c}),
              "instructions.compute[0].body.ops[0].results[0]: arith.extf "
              "expects a float result wider than f32, got f32 for value 11 "
              "(%c)");
  expectError(mapOp({bodyOp("arith.index_cast", {a}, idx)}, {a}),
              "instructions.compute[0].body.ops[0].operands[0]: "
              "arith.index_cast expects an integer operand, got f32 for value "
              "9 (%a)");
  expectError(mapOp({bodyOp("arith.bitcast", {a}, step)}, {a}),
              "instructions.compute[0].body.ops[0].results[0]: arith.bitcast "
              "expects a type of the bit width of f32 (f32 <-> i32, f64 <-> "
              "i64 or index), got i64 for value 6 (%step)");
  expectError(mapOp({bodyOp("math.exp", {a, b}, c)}, {c}),
              "instructions.compute[0].body.ops[0].operands: math.exp takes 1 "
              "operand, got 2");
  json constant = bodyOp("arith.constant", {}, c);
  constant["value"] = "infinity";
  expectError(mapOp({constant}, {c}),
              "instructions.compute[0].body.ops[0].value: expected a number, "
              "\"inf\", \"-inf\" or \"nan\", got \"infinity\"");
  json intConstant = instr("arith.constant", {}, {n});
  intConstant["value"] = 1.5;
  expectError(intConstant, "instructions.compute[0].value: expected an "
                           "integer for an i32 constant, got 1.5");
  json fields = bodyOp("arith.addf", {a, b}, c);
  fields["fastmath"] = "fast";
  expectError(mapOp({fields}, {c}),
              "instructions.compute[0].body.ops[0].fastmath: unknown key for "
              "arith.addf (it takes no fields)");
  // At the top level.
  expectError(instr("arith.addf", {a, x}, {c}),
              "instructions.compute[0].operands[1]: expected a scalar, got "
              "tensor value 0 (%x)");
}

TEST_F(HostValidation, Generic) {
  json generic = instr("linalg.generic", {x, z}, {r});
  generic["iterator_types"] = {"parallel", "parallel", "reduction"};
  generic["indexing_maps"] = {{0, 2}};
  generic["body"] = {{"arguments", {a, b}},
                     {"ops", {bodyOp("arith.addf", {a, b}, c)}},
                     {"yield", {c}}};
  expectError(generic, "instructions.compute[0].indexing_maps: has 1 maps for "
                       "2 operands");
  generic["indexing_maps"] = {{0, 2}, {0, 1, 2}};
  expectError(generic, "instructions.compute[0].indexing_maps[1]: has 3 "
                       "results, but operand 1, value 2 (%z), has rank 2");
  generic["indexing_maps"] = {{0, 3}, {0, 1}};
  expectError(generic, "instructions.compute[0].indexing_maps[0]: loop "
                       "dimension 3 is out of range for 3 loops");
  generic["indexing_maps"] = {{0, 0}, {0, 1}};
  expectError(generic, "instructions.compute[0].indexing_maps[0]: loop "
                       "dimension 0 appears twice (only projected "
                       "permutations are supported)");
  generic["indexing_maps"] = {{0, 1}, {0, 1}};
  expectError(generic, "instructions.compute[0].indexing_maps[1]: loop "
                       "dimension 1 has size 4 here but 3 in operand 0");
  generic["indexing_maps"] = {{0, 2}, {0, 1}};
  generic["iterator_types"] = {"parallel", "parallel", "sequential"};
  expectError(generic, "instructions.compute[0].iterator_types[2]: expected "
                       "\"parallel\" or \"reduction\", got \"sequential\"");
  generic["iterator_types"] = {"parallel", "parallel", "reduction", "parallel"};
  expectError(generic, "instructions.compute[0].indexing_maps: loop "
                       "dimension 3 is indexed by no operand, so its size is "
                       "unknown");
  generic["iterator_types"] = {"parallel", "parallel", "reduction"};
  generic["results"] = {r, r, r};
  expectError(generic, "instructions.compute[0].results: linalg.generic has "
                       "one result per destination (the last operands), got "
                       "3 results for 2 operands");
  generic["results"] = {r};
  EXPECT_EQ(p.prepareError(generic), "");
}

TEST_F(HostValidation, TensorOps) {
  json slice = instr("tensor.extract_slice", {y}, {t});
  slice["offsets"] = {0, 3};
  slice["sizes"] = {3, 2};
  slice["strides"] = {1, 1};
  expectError(slice, "instructions.compute[0].offsets[1]: the slice (offset "
                     "3, size 2, stride 1) does not fit dimension 1 of size 4");
  slice["offsets"] = {0, 1};
  slice["sizes"] = {3};
  expectError(slice, "instructions.compute[0].sizes: has 1 entries, but value "
                     "1 (%y) has rank 2");
  slice["sizes"] = {2, 3};
  expectError(slice, "instructions.compute[0].results[0]: expected the "
                     "slice's shape [2, 3] (unit dimensions may be dropped), "
                     "got [3, 2] for value 15 (%t)");
  slice["sizes"] = {3, 2};
  slice["strides"] = {1, 0};
  expectError(slice, "instructions.compute[0].strides[1]: must be at least 1");

  json collapse = instr("tensor.collapse_shape", {x}, {v});
  collapse["reassociation"] = {{0, 1}};
  expectError(collapse, "instructions.compute[0].reassociation[0]: the "
                        "group's sizes multiply to 6, but dimension 0 of the "
                        "result has size 2");
  collapse["reassociation"] = {{1}};
  expectError(collapse, "instructions.compute[0].reassociation[0]: the groups "
                        "must list dimensions 0..1 of the source once each, "
                        "in order");
  json expand = instr("tensor.expand_shape", {v}, {x});
  expand["reassociation"] = {{0, 1}, {2}};
  expectError(expand, "instructions.compute[0].reassociation: has 2 groups, "
                      "but the source has rank 1");

  expectError(instr("tensor.extract", {x, idx}, {c}),
              "instructions.compute[0].operands: tensor.extract takes 3 "
              "operands, got 2");
  expectError(instr("tensor.extract", {tok, step}, {n}),
              "instructions.compute[0].operands[1]: expected dtype index, got "
              "i64 for value 6 (%step)");
  expectError(instr("tensor.from_elements", {a}, {v}),
              "instructions.compute[0].operands: tensor.from_elements takes 2 "
              "operands, got 1");
  expectError(instr("tensor.splat", {n}, {v}),
              "instructions.compute[0].operands[0]: expected dtype f32, got "
              "i32 for value 14 (%n)");
  json constant = instr("arith.constant", {}, {v});
  constant["value"] = 1.0;
  expectError(constant, "instructions.compute[0].value: a tensor constant is "
                        "{\"splat\": x} or {\"data\": [...]}, got 1.0");
  constant["value"] = {{"data", {1.0}}};
  expectError(constant, "instructions.compute[0].value.data: has 1 elements, "
                        "but value 16 (%v) has 2");
}

TEST_F(HostValidation, LocalShard) {
  p.setRank(0, 2); // the decoder takes layouts for the run's world size
  json shard = instr("zero.local_shard", {x}, {t});
  expectError(shard, "instructions.compute[0]: missing field 'layout' of "
                     "zero.local_shard");
  shard["layout"] = {{"shape", {2, 3}}, {"world_size", 2}, {"shard_numel", 3}};
  expectError(shard, "instructions.compute[0].layout: missing key "
                     "'padded_numel'");
  shard["layout"]["padded_numel"] = 6;
  shard["layout"]["bucket"] = 0;
  expectError(shard, "instructions.compute[0].layout: unknown key 'bucket'");
  shard["layout"].erase("bucket");
  shard["layout"]["shape"] = {6};
  expectError(shard, "instructions.compute[0].layout.shape: is [6], but the "
                     "operand has shape [2, 3] for value 0 (%x)");
  shard["layout"]["shape"] = {2, 3};
  shard["layout"]["padded_numel"] = 8;
  expectError(shard, "instructions.compute[0].layout.shard_numel: 3 is not "
                     "padded_numel / world_size = 4");
  shard["layout"]["padded_numel"] = 5;
  expectError(shard, "instructions.compute[0].layout: padded_numel 5 is "
                     "smaller than the element count 6");
  shard["layout"]["padded_numel"] = 6;
  expectError(shard, "instructions.compute[0].results[0]: value 15 (%t) has "
                     "6 elements, but the layout's shards have 3");
}

TEST_F(HostValidation, Optimizers) {
  int64_t pm = p.tensor(DType::F32, {4}, "%p");
  int64_t g = p.tensor(DType::BF16, {4}, "%g");
  int64_t m = p.tensor(DType::F32, {4}, "%m");
  int64_t vv = p.tensor(DType::F32, {4}, "%vv");
  int64_t gi = p.tensor(DType::I32, {4}, "%gi");
  int64_t lr = p.scalar(DType::F32, "%lr");
  json adam = {
      {"op", "zero.adam"},       {"operands", {pm, g, m, vv, step, lr}},
      {"results", {pm, m, vv}},  {"beta1", 0.9},
      {"beta2", 0.999},          {"eps", 1e-8},
      {"weight_decay", 0.0},     {"mode", "adamw"},
      {"bias_correction", true}, {"amsgrad", false}};
  EXPECT_EQ(p.prepareError(adam), "");
  json bad = adam;
  bad["beta2"] = 1.0;
  expectError(bad, "instructions.compute[0].beta2: must be in [0.000000, "
                   "1.000000), got 1.000000");
  bad = adam;
  bad["mode"] = "adam";
  expectError(bad, "instructions.compute[0].mode: expected \"adamw\" or "
                   "\"l2\", got \"adam\"");
  bad = adam;
  bad.erase("eps");
  expectError(bad, "instructions.compute[0]: missing field 'eps' of zero.adam");
  bad = adam;
  bad["bias_correction"] = 1;
  expectError(bad, "instructions.compute[0].bias_correction: expected true or "
                   "false, got 1");
  bad = adam;
  bad["operands"] = {pm, g, m, vv, lr, lr};
  expectError(bad, "instructions.compute[0].operands[4]: expected dtype i64, "
                   "got f32 for value 22 (%lr)");
  bad["operands"] = {pm, gi, m, vv, step, lr};
  expectError(bad, "instructions.compute[0].operands[1]: expected a float "
                   "tensor, got i32 for value 21 (%gi)");
  bad["operands"] = {pm, x, m, vv, step, lr};
  expectError(bad, "instructions.compute[0].operands[1]: expected shape [4], "
                   "got [2, 3] for value 0 (%x)");
  bad["operands"] = {pm, g, m, vv, step, lr};
  bad["results"] = {pm, g, vv};
  expectError(bad, "instructions.compute[0].results[1]: expected dtype f32, "
                   "got bf16 for value 18 (%g)");
  bad = adam;
  bad.erase("amsgrad");
  expectError(bad,
              "instructions.compute[0]: missing field 'amsgrad' of zero.adam");

  // amsgrad: max_exp_avg_sq after exp_avg_sq, a fourth result. A scheduled
  // beta1: an f32 scalar after lr.
  int64_t vmax = p.tensor(DType::F32, {4}, "%vmax");
  int64_t beta1 = p.scalar(DType::F32, "%beta1");
  json amsgrad = adam;
  amsgrad["amsgrad"] = true;
  amsgrad["operands"] = {pm, g, m, vv, vmax, step, lr, beta1};
  amsgrad["results"] = {pm, m, vv, vmax};
  EXPECT_EQ(p.prepareError(amsgrad), "");
  amsgrad["operands"] = {pm, g, m, vv, vmax, step, lr};
  EXPECT_EQ(p.prepareError(amsgrad), "");
  bad = adam;
  bad["operands"] = {pm, g, m, vv, step, lr, beta1};
  EXPECT_EQ(p.prepareError(bad), "");
  bad["operands"] = {pm, g, m, vv, step};
  expectError(bad, "instructions.compute[0].operands: zero.adam takes 6 to 11 "
                   "operands, got 5");
  bad["operands"] = {pm, g, m, vv, step, lr, beta1, beta1};
  expectError(bad, "instructions.compute[0].operands: zero.adam without "
                   "amsgrad takes 6 operands, or 7 with a beta1 operand, got "
                   "8");
  bad["operands"] = {pm, g, m, vv, step, lr, step};
  expectError(bad, "instructions.compute[0].operands[6]: expected dtype f32, "
                   "got i64 for value 6 (%step)");
  bad["operands"] = {pm, g, m, vv, step, lr, vmax};
  expectError(bad, "instructions.compute[0].operands[6]: expected a scalar, "
                   "got tensor value 23 (%vmax)");
  bad = amsgrad;
  bad["operands"] = {pm, g, m, vv, step, lr};
  expectError(bad, "instructions.compute[0].operands: zero.adam with amsgrad "
                   "takes 7 operands, or 8 with a beta1 operand, got 6");
  bad = amsgrad;
  bad["results"] = {pm, m, vv};
  expectError(bad, "instructions.compute[0].results: zero.adam takes 4 "
                   "results, got 3");
  bad = amsgrad;
  bad["operands"] = {pm, g, m, vv, gi, step, lr};
  expectError(bad, "instructions.compute[0].operands[4]: expected a float "
                   "tensor, got i32 for value 21 (%gi)");
  bad["operands"] = {pm, g, m, vv, vmax, step, lr};
  bad["results"] = {pm, m, vv, g};
  expectError(bad, "instructions.compute[0].results[3]: expected dtype f32, "
                   "got bf16 for value 18 (%g)");
  json sgd = {{"op", "zero.sgd"},   {"operands", {pm, g, m, lr}},
              {"results", {pm, m}}, {"momentum", 0.9},
              {"dampening", 0.1},   {"weight_decay", 0.0},
              {"nesterov", true}};
  expectError(sgd, "instructions.compute[0].nesterov: needs momentum > 0 and "
                   "dampening = 0");
  sgd["nesterov"] = false;
  sgd["operands"] = {pm, g, m, step};
  expectError(sgd, "instructions.compute[0].operands[3]: expected dtype f32, "
                   "got i64 for value 6 (%step)");
}
