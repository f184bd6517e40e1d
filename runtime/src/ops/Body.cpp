//===- Body.cpp - the region of a linalg op, checked ----------------------===//

#include "ops/Body.h"

#include "ops/LoopSpace.h"

#include <unordered_map>
#include <unordered_set>

namespace zero::runtime::ops {

StatusOr<BodyProgram> checkBody(const OpContext &ctx,
                                const std::vector<DType> &argumentTypes,
                                const std::string &argumentsWhat,
                                const std::vector<DType> &yieldTypes,
                                int64_t numLoops) {
  const RegionBody &body = ctx.fields().getBody(Field::Body);
  BodyProgram result;
  const ValueTable &values = ctx.values();
  std::unordered_map<int64_t, int> slotOf;
  // Values defined anywhere in the body: using one before its definition is
  // an error, not a reference to the outside.
  std::unordered_set<int64_t> definedInBody;
  definedInBody.insert(body.arguments.begin(), body.arguments.end());
  for (const OpRecord &op : body.ops)
    definedInBody.insert(op.results.begin(), op.results.end());

  // Block arguments.
  const std::vector<int64_t> &arguments = body.arguments;
  if (arguments.size() != argumentTypes.size())
    return ctx.error("body.arguments",
                     ctx.name() + "'s body takes " +
                         std::to_string(argumentTypes.size()) + " arguments (" +
                         argumentsWhat + "), got " +
                         std::to_string(arguments.size()));
  for (size_t i = 0; i < arguments.size(); ++i) {
    std::string field = "body.arguments[" + std::to_string(i) + "]";
    const ValueInfo *value = values.lookup(arguments[i]);
    if (!value)
      return ctx.error(field, "value " + std::to_string(arguments[i]) +
                                  " is not defined");
    if (value->isTensor)
      return ctx.error(field, "a block argument must be a scalar, got tensor " +
                                  describeValue(*value));
    if (value->dtype != argumentTypes[i])
      return ctx.error(field, std::string("expected dtype ") +
                                  getDTypeName(argumentTypes[i]) + ", got " +
                                  getDTypeName(value->dtype) + " for " +
                                  describeValue(*value));
    if (!slotOf.emplace(value->id, static_cast<int>(i)).second)
      return ctx.error(field, describeValue(*value) + " is defined twice");
  }
  result.argumentUsed.assign(arguments.size(), false);
  int nextSlot = static_cast<int>(arguments.size());

  // Resolves a use to its slot: a value of the body defined earlier, or a
  // scalar from outside (bound once per run).
  auto resolve = [&](const OpContext &opCtx, const std::string &field,
                     const ValueInfo &value) -> StatusOr<int> {
    auto it = slotOf.find(value.id);
    if (it != slotOf.end()) {
      if (it->second < static_cast<int>(result.argumentUsed.size()))
        result.argumentUsed[it->second] = true;
      return it->second;
    }
    if (definedInBody.count(value.id))
      return opCtx.error(field, describeValue(value) +
                                    " is used before its definition in the "
                                    "body");
    if (value.isTensor)
      return opCtx.error(field, "expected a scalar, got tensor " +
                                    describeValue(value));
    int slot = nextSlot++;
    slotOf.emplace(value.id, slot);
    result.externalScalars.emplace_back(value.id, slot);
    return slot;
  };

  for (size_t i = 0; i < body.ops.size(); ++i) {
    const OpRecord &bodyOp = body.ops[i];
    OpContext opCtx(&bodyOp,
                    ctx.path() + ".body.ops[" + std::to_string(i) + "]",
                    ctx.loc(), values);
    const std::string name = opCtx.name();
    StatusOr<std::vector<const ValueInfo *>> operands =
        opCtx.getValues("operands");
    if (!operands.isOk())
      return operands.status();
    StatusOr<std::vector<const ValueInfo *>> results =
        opCtx.getValues("results");
    if (!results.isOk())
      return results.status();
    // The decoder admits only body ops (OpInfo::isBodyOp).
    const bool isIndex = bodyOp.code() == OpCode::Index;
    const bool isExtract = bodyOp.code() == OpCode::Extract;
    ZERO_RETURN_IF_ERROR(opCtx.expectCount("results", *results, 1));
    const ValueInfo &resultValue = *(*results)[0];
    if (slotOf.count(resultValue.id))
      return opCtx.error("results[0]",
                         describeValue(resultValue) + " is defined twice");

    if (isIndex) {
      ZERO_RETURN_IF_ERROR(opCtx.expectCount("operands", *operands, 0));
      ZERO_RETURN_IF_ERROR(opCtx.expectScalar("results", 0, resultValue));
      ZERO_RETURN_IF_ERROR(
          opCtx.expectDType("results", 0, resultValue, DType::Index));
      StatusOr<int64_t> dim = opCtx.getInt("dim");
      if (!dim.isOk())
        return dim.status();
      if (*dim < 0 || *dim >= numLoops)
        return opCtx.error("dim", "loop dimension " + std::to_string(*dim) +
                                      " is out of range: " + ctx.name() +
                                      " has " + std::to_string(numLoops) +
                                      " loops");
      int slot = nextSlot++;
      slotOf.emplace(resultValue.id, slot);
      result.indexSlots.emplace_back(*dim, slot);
      result.regionOps.emplace_back();
      continue;
    }

    BodyStep step;
    if (isExtract) {
      if (operands->empty())
        return opCtx.error("operands", "tensor.extract takes a tensor, then "
                                       "one index per dimension");
      const ValueInfo &tensor = *(*operands)[0];
      ZERO_RETURN_IF_ERROR(opCtx.expectTensor("operands", 0, tensor));
      ZERO_RETURN_IF_ERROR(
          opCtx.expectCount("operands", *operands, 1 + tensor.shape.size()));
      for (size_t k = 1; k < operands->size(); ++k) {
        const ValueInfo &index = *(*operands)[k];
        ZERO_RETURN_IF_ERROR(opCtx.expectScalar("operands", k, index));
        ZERO_RETURN_IF_ERROR(
            opCtx.expectDType("operands", k, index, DType::Index));
        StatusOr<int> slot =
            resolve(opCtx, "operands[" + std::to_string(k) + "]", index);
        if (!slot.isOk())
          return slot.status();
        step.indices.push_back(*slot);
      }
      ZERO_RETURN_IF_ERROR(opCtx.expectScalar("results", 0, resultValue));
      ZERO_RETURN_IF_ERROR(
          opCtx.expectDType("results", 0, resultValue, tensor.dtype));
      step.isExtract = true;
      step.tensor = result.externalTensors.size();
      for (size_t t = 0; t < result.externalTensors.size(); ++t)
        if (result.externalTensors[t].value == tensor.id)
          step.tensor = t;
      if (step.tensor == result.externalTensors.size())
        result.externalTensors.push_back({tensor.id, tensor.dtype, tensor.shape,
                                          getRowMajorStrides(tensor.shape),
                                          describeValue(tensor)});
      step.site = opCtx.site();
    } else {
      StatusOr<ScalarOp> op = checkScalarOp(opCtx, *operands, *results);
      if (!op.isOk())
        return op.status();
      step.op = *op;
      for (size_t k = 0; k < operands->size(); ++k) {
        StatusOr<int> slot = resolve(
            opCtx, "operands[" + std::to_string(k) + "]", *(*operands)[k]);
        if (!slot.isOk())
          return slot.status();
        step.operands[k] = *slot;
      }
    }
    step.result = nextSlot++;
    slotOf.emplace(resultValue.id, step.result);
    result.regionOps.push_back(step.op);
    if (!step.isExtract && step.op.kind == ScalarOpKind::Constant)
      result.constants.emplace_back(step.op.constant, step.result);
    else
      result.steps.push_back(std::move(step));
  }

  const std::vector<int64_t> &yields = body.yield;
  if (yields.size() != yieldTypes.size())
    return ctx.error("body.yield", ctx.name() + "'s body yields " +
                                       std::to_string(yieldTypes.size()) +
                                       " values, got " +
                                       std::to_string(yields.size()));
  OpContext yieldCtx(nullptr, ctx.path() + ".body", ctx.loc(), values,
                     "the body");
  for (size_t i = 0; i < yields.size(); ++i) {
    std::string field = "yield[" + std::to_string(i) + "]";
    const ValueInfo *value = values.lookup(yields[i]);
    if (!value)
      return yieldCtx.error(field, "value " + std::to_string(yields[i]) +
                                       " is not defined");
    if (value->dtype != yieldTypes[i])
      return yieldCtx.error(field, std::string("expected dtype ") +
                                       getDTypeName(yieldTypes[i]) + ", got " +
                                       getDTypeName(value->dtype) + " for " +
                                       describeValue(*value));
    StatusOr<int> slot = resolve(yieldCtx, field, *value);
    if (!slot.isOk())
      return slot.status();
    result.yieldSlots.push_back(*slot);
  }
  result.numSlots = nextSlot;
  return result;
}

} // namespace zero::runtime::ops
