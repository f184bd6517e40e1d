//===- ComputeOps.cpp - prepareComputeOp for the host backend -------------===//
//
// Looks up an instruction's op and hands it to the op's prepare function
// (HostOps.h). Everything a run needs is checked here, at load time; a run
// fails only on data (an index outside its tensor, a step below 1).
//
//===----------------------------------------------------------------------===//

#include "HostOps.h"
#include "ScalarOps.h"

#include <algorithm>
#include <functional>
#include <string_view>

namespace zero::runtime {

using namespace host;

namespace {

struct OpEntry {
  const char *name;
  std::function<PreparedOp(const OpContext &)> prepare;
};

const std::vector<OpEntry> &getOpTable() {
  static const std::vector<OpEntry> table = {
      {"linalg.matmul",
       [](const OpContext &c) { return prepareMatmul(c, false); }},
      {"linalg.batch_matmul",
       [](const OpContext &c) { return prepareMatmul(c, true); }},
      {"linalg.transpose", prepareTranspose},
      {"linalg.broadcast", prepareBroadcast},
      {"linalg.fill", prepareFill},
      {"linalg.copy", prepareCopy},
      {"linalg.map", prepareMap},
      {"linalg.reduce", prepareReduce},
      {"linalg.generic", prepareGeneric},
      {"tensor.extract_slice", prepareExtractSlice},
      {"tensor.insert_slice", prepareInsertSlice},
      {"tensor.collapse_shape",
       [](const OpContext &c) { return prepareReshape(c, true); }},
      {"tensor.expand_shape",
       [](const OpContext &c) { return prepareReshape(c, false); }},
      {"tensor.extract", prepareExtract},
      {"tensor.from_elements", prepareFromElements},
      {"tensor.splat", prepareSplat},
      {"zero.local_shard", prepareLocalShard},
      {"zero.adam", prepareAdam},
      {"zero.sgd", prepareSgd},
  };
  return table;
}

/// arith.constant makes a register or, with a tensor result, a tensor.
PreparedOp prepareConstant(const OpContext &ctx) {
  auto results = ctx.json().find("results");
  if (results != ctx.json().end() && results->is_array() &&
      results->size() == 1 && (*results)[0].is_number_integer()) {
    const ValueInfo *value = ctx.values().lookup((*results)[0].get<int64_t>());
    if (value && value->isTensor)
      return prepareConstantTensor(ctx);
  }
  return prepareScalarInstruction(ctx);
}

} // namespace

StatusOr<std::unique_ptr<ComputeOp>>
prepareComputeOp(const nlohmann::json &instruction, const std::string &path,
                 const ValueTable &values) {
  if (!instruction.is_object())
    return ZERO_ERROR(kInvalidArgument,
                      path + ": expected an instruction object, got " +
                          instruction.dump());
  std::string loc;
  auto locIt = instruction.find("loc");
  if (locIt != instruction.end() && locIt->is_string())
    loc = locIt->get<std::string>();
  // "point" and "loc" are the loader's (every instruction has them); they
  // are checked here too, since messages quote the loc.
  OpContext ctx(instruction, path, loc, values);
  if (locIt != instruction.end() && !locIt->is_string())
    return ctx.error("loc", "expected a \"file:line:col\" string, got " +
                                locIt->dump());
  auto pointIt = instruction.find("point");
  if (pointIt != instruction.end() &&
      (!pointIt->is_number_integer() || pointIt->get<int64_t>() < 0))
    return ctx.error("point", "expected a program point (an integer >= 0), "
                              "got " +
                                  pointIt->dump());
  auto opIt = instruction.find("op");
  if (opIt == instruction.end() || !opIt->is_string())
    return ctx.error("op", opIt == instruction.end()
                               ? "missing op name"
                               : "expected an op name, got " + opIt->dump());
  const std::string name = opIt->get<std::string>();

  PreparedOp op = ZERO_ERROR(kInvalidArgument, "");
  if (name == "arith.constant") {
    op = prepareConstant(ctx);
  } else if (isScalarOpName(name)) {
    op = prepareScalarInstruction(ctx);
  } else {
    const std::vector<OpEntry> &table = getOpTable();
    auto it = std::find_if(table.begin(), table.end(),
                           [&](const OpEntry &e) { return name == e.name; });
    if (it == table.end())
      return ctx.error("", "unsupported op '" + name + "'");
    op = it->prepare(ctx);
  }
  return op;
}

} // namespace zero::runtime
