//===- CheckLinalg.cpp - the checks of the linalg ops ---------------------===//
//
// matmul and batch_matmul, transpose, broadcast, fill, copy, map, reduce and
// generic (with their bodies, Body.h).
//
//===----------------------------------------------------------------------===//

#include "ops/OpChecks.h"

#include "Gemm.h"

#include <algorithm>

namespace zero::runtime::ops {

namespace {

/// `value` must be a tensor of `like`'s shape and dtype.
Status expectLike(const OpContext &ctx, const char *key, size_t index,
                  const ValueInfo &value, const ValueInfo &like) {
  ZERO_RETURN_IF_ERROR(ctx.expectTensor(key, index, value));
  ZERO_RETURN_IF_ERROR(ctx.expectDType(key, index, value, like.dtype));
  return ctx.expectShape(key, index, value, like.shape);
}

Status expectTensors(const OpContext &ctx, const char *key,
                     const std::vector<const ValueInfo *> &list) {
  for (size_t i = 0; i < list.size(); ++i)
    ZERO_RETURN_IF_ERROR(ctx.expectTensor(key, i, *list[i]));
  return Status::ok();
}

/// `dims` must be distinct dimensions of a rank-`rank` tensor.
Status expectDimensions(const OpContext &ctx, const char *key,
                        const std::vector<int64_t> &dims, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank)
      return ctx.error(key, "dimension " + std::to_string(dim) +
                                " is out of range for rank " +
                                std::to_string(rank));
    if (seen[dim])
      return ctx.error(key,
                       "dimension " + std::to_string(dim) + " is listed twice");
    seen[dim] = true;
  }
  return Status::ok();
}

/// The results of map, reduce and generic: one per destination (the last
/// `numOutputs` operands), each of its destination's type and shape.
Status checkResults(const OpContext &ctx, const OpValues &v,
                    size_t numOutputs) {
  const size_t first = v.operands.size() - numOutputs;
  for (size_t o = 0; o < numOutputs; ++o)
    ZERO_RETURN_IF_ERROR(
        expectLike(ctx, "results", o, *v.results[o], *v.operands[first + o]));
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// matmul, batch_matmul
//===----------------------------------------------------------------------===//

Status checkMatmul(const OpContext &ctx, bool batched) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 3));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &a = *v.operands[0], &b = *v.operands[1], &c = *v.operands[2];
  const size_t rank = batched ? 3 : 2;
  for (size_t i = 0; i < 3; ++i)
    if (v.operands[i]->shape.size() != rank)
      return ctx.error("operands[" + std::to_string(i) + "]",
                       ctx.name() + " expects rank-" + std::to_string(rank) +
                           " operands, got shape " +
                           formatShape(v.operands[i]->shape) + " for " +
                           describeValue(*v.operands[i]));
  const size_t o = batched ? 1 : 0;
  StatusOr<GemmLayout> layout = getGemmLayout(ctx.op());
  if (!layout.isOk())
    return ctx.error("indexing_maps", layout.status().message());
  // A is [m, k], or [k, m] stored transposed; B is [k, n] or [n, k].
  const int64_t batch = batched ? a.shape[0] : 1;
  const int64_t m = a.shape[layout->transposeA ? o + 1 : o];
  const int64_t k = a.shape[layout->transposeA ? o : o + 1];
  const int64_t n = b.shape[layout->transposeB ? o : o + 1];
  std::vector<int64_t> bShape = layout->transposeB ? std::vector<int64_t>{n, k}
                                                   : std::vector<int64_t>{k, n};
  std::vector<int64_t> cShape = {m, n};
  if (batched) {
    bShape.insert(bShape.begin(), batch);
    cShape.insert(cShape.begin(), batch);
  }
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 1, b, bShape));
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 2, c, cShape));
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], c));
  for (size_t i = 0; i < 2; ++i)
    if (isFloat(v.operands[i]->dtype) != isFloat(c.dtype))
      return ctx.error("operands[" + std::to_string(i) + "]",
                       ctx.name() + " mixes integer and float operands (" +
                           getDTypeName(v.operands[i]->dtype) + " and " +
                           getDTypeName(c.dtype) + ")");
  StatusOr<bool> tf32 = roundsOperandsToTf32(ctx.op());
  if (!tf32.isOk())
    return ctx.error("round_operands", tf32.status().message());
  if (*tf32 &&
      (a.dtype != DType::F32 || b.dtype != DType::F32 || c.dtype != DType::F32))
    return ctx.error("round_operands",
                     ctx.name() + " rounds f32 operands to tf32, got " +
                         getDTypeName(a.dtype) + ", " + getDTypeName(b.dtype) +
                         " and " + getDTypeName(c.dtype));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// transpose, broadcast, fill, copy
//===----------------------------------------------------------------------===//

Status checkTranspose(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &input = *v.operands[0], &init = *v.operands[1];
  StatusOr<std::vector<int64_t>> perm = ctx.getIntList("permutation");
  if (!perm.isOk())
    return perm.status();
  if (perm->size() != input.shape.size())
    return ctx.error("permutation", "has " + std::to_string(perm->size()) +
                                        " entries for an input of rank " +
                                        std::to_string(input.shape.size()));
  ZERO_RETURN_IF_ERROR(ctx.expectPermutation("permutation", *perm));
  std::vector<int64_t> shape;
  for (int64_t dim : *perm)
    shape.push_back(input.shape[dim]);
  ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 1, init, input.dtype));
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 1, init, shape));
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], init));
  return Status::ok();
}

Status checkBroadcast(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &input = *v.operands[0], &init = *v.operands[1];
  StatusOr<std::vector<int64_t>> dims = ctx.getIntList("dimensions");
  if (!dims.isOk())
    return dims.status();
  const int64_t rank = init.shape.size();
  ZERO_RETURN_IF_ERROR(expectDimensions(ctx, "dimensions", *dims, rank));
  if (static_cast<int64_t>(input.shape.size() + dims->size()) != rank)
    return ctx.error("dimensions", "adds " + std::to_string(dims->size()) +
                                       " dimensions to an input of rank " +
                                       std::to_string(input.shape.size()) +
                                       ", but the destination has rank " +
                                       std::to_string(rank));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims->begin(), dims->end(), d) == dims->end())
      kept.push_back(init.shape[d]);
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 0, input, kept));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 1, init, input.dtype));
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], init));
  return Status::ok();
}

Status checkFill(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", 0, *v.operands[0]));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 1, *v.operands[1]));
  ZERO_RETURN_IF_ERROR(
      expectLike(ctx, "results", 0, *v.results[0], *v.operands[1]));
  return Status::ok();
}

Status checkCopy(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &input = *v.operands[0], &init = *v.operands[1];
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 1, init, input.shape));
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], init));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// map, reduce, generic
//===----------------------------------------------------------------------===//

StatusOr<BodyProgram> checkMap(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  if (v.operands.empty())
    return ctx.error("operands", "linalg.map takes its inputs, then the "
                                 "destination, got no operands");
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &init = *v.operands.back();
  std::vector<DType> argumentTypes;
  for (size_t i = 0; i + 1 < v.operands.size(); ++i) {
    ZERO_RETURN_IF_ERROR(
        ctx.expectShape("operands", i, *v.operands[i], init.shape));
    argumentTypes.push_back(v.operands[i]->dtype);
  }
  argumentTypes.push_back(init.dtype);
  StatusOr<BodyProgram> body = checkBody(
      ctx, argumentTypes, "the inputs' elements, then the destination's",
      {init.dtype}, static_cast<int64_t>(init.shape.size()));
  if (!body.isOk())
    return body.status();
  ZERO_RETURN_IF_ERROR(checkResults(ctx, v, 1));
  return body;
}

StatusOr<BodyProgram> checkReduce(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  if (v.operands.empty() || v.operands.size() % 2 != 0)
    return ctx.error("operands", "linalg.reduce takes N inputs, then N "
                                 "destinations, got " +
                                     std::to_string(v.operands.size()) +
                                     " operands");
  const size_t n = v.operands.size() / 2;
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, n));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &input = *v.operands[0];
  StatusOr<std::vector<int64_t>> dims = ctx.getIntList("dimensions");
  if (!dims.isOk())
    return dims.status();
  const int64_t rank = input.shape.size();
  ZERO_RETURN_IF_ERROR(expectDimensions(ctx, "dimensions", *dims, rank));

  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims->begin(), dims->end(), d) == dims->end())
      kept.push_back(input.shape[d]);

  std::vector<DType> argumentTypes, yieldTypes;
  for (size_t i = 0; i < n; ++i) {
    ZERO_RETURN_IF_ERROR(
        ctx.expectShape("operands", i, *v.operands[i], input.shape));
    argumentTypes.push_back(v.operands[i]->dtype);
  }
  for (size_t i = n; i < 2 * n; ++i) {
    ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", i, *v.operands[i], kept));
    argumentTypes.push_back(v.operands[i]->dtype);
    yieldTypes.push_back(v.operands[i]->dtype);
  }
  StatusOr<BodyProgram> body = checkBody(
      ctx, argumentTypes, "the inputs' elements, then the destinations'",
      yieldTypes, rank);
  if (!body.isOk())
    return body.status();
  ZERO_RETURN_IF_ERROR(checkResults(ctx, v, n));
  return body;
}

StatusOr<BodyProgram> checkGeneric(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  const size_t numOutputs = v.results.size();
  if (numOutputs == 0 || numOutputs > v.operands.size())
    return ctx.error("results", "linalg.generic has one result per "
                                "destination (the last operands), got " +
                                    std::to_string(numOutputs) +
                                    " results "
                                    "for " +
                                    std::to_string(v.operands.size()) +
                                    " operands");
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));

  const std::vector<std::string> &iterators =
      ctx.fields().getStringList(Field::IteratorTypes);
  for (size_t d = 0; d < iterators.size(); ++d) {
    const std::string &type = iterators[d];
    if (type != "parallel" && type != "reduction")
      return ctx.error("iterator_types[" + std::to_string(d) + "]",
                       "expected \"parallel\" or \"reduction\", got \"" + type +
                           "\"");
  }
  const size_t numLoops = iterators.size();

  StatusOr<std::vector<std::vector<int64_t>>> maps =
      ctx.getIntListList("indexing_maps");
  if (!maps.isOk())
    return maps.status();
  if (maps->size() != v.operands.size())
    return ctx.error("indexing_maps",
                     "has " + std::to_string(maps->size()) + " maps for " +
                         std::to_string(v.operands.size()) + " operands");
  std::vector<int64_t> loopSizes(numLoops, -1);
  std::vector<size_t> sizeFrom(numLoops, 0);
  for (size_t j = 0; j < maps->size(); ++j) {
    const std::vector<int64_t> &map = (*maps)[j];
    const ValueInfo &operand = *v.operands[j];
    const std::string field = "indexing_maps[" + std::to_string(j) + "]";
    if (map.size() != operand.shape.size())
      return ctx.error(field, "has " + std::to_string(map.size()) +
                                  " results, but operand " + std::to_string(j) +
                                  ", " + describeValue(operand) +
                                  ", has rank " +
                                  std::to_string(operand.shape.size()));
    std::vector<bool> seen(numLoops, false);
    for (size_t dim = 0; dim < map.size(); ++dim) {
      const int64_t loop = map[dim];
      if (loop < 0 || loop >= static_cast<int64_t>(numLoops))
        return ctx.error(field, "loop dimension " + std::to_string(loop) +
                                    " is out of range for " +
                                    std::to_string(numLoops) + " loops");
      if (seen[loop])
        return ctx.error(field, "loop dimension " + std::to_string(loop) +
                                    " appears twice (only projected "
                                    "permutations are supported)");
      seen[loop] = true;
      if (loopSizes[loop] < 0) {
        loopSizes[loop] = operand.shape[dim];
        sizeFrom[loop] = j;
      } else if (loopSizes[loop] != operand.shape[dim]) {
        return ctx.error(field,
                         "loop dimension " + std::to_string(loop) +
                             " has size " + std::to_string(operand.shape[dim]) +
                             " here but " + std::to_string(loopSizes[loop]) +
                             " in operand " + std::to_string(sizeFrom[loop]));
      }
    }
  }
  for (size_t loop = 0; loop < numLoops; ++loop)
    if (loopSizes[loop] < 0)
      return ctx.error("indexing_maps", "loop dimension " +
                                            std::to_string(loop) +
                                            " is indexed by no operand, so "
                                            "its size is unknown");

  const size_t numInputs = v.operands.size() - numOutputs;
  std::vector<DType> argumentTypes, yieldTypes;
  for (size_t j = 0; j < v.operands.size(); ++j) {
    argumentTypes.push_back(v.operands[j]->dtype);
    if (j >= numInputs)
      yieldTypes.push_back(v.operands[j]->dtype);
  }
  StatusOr<BodyProgram> body = checkBody(
      ctx, argumentTypes, "the inputs' elements, then the destinations'",
      yieldTypes, static_cast<int64_t>(numLoops));
  if (!body.isOk())
    return body.status();
  ZERO_RETURN_IF_ERROR(checkResults(ctx, v, numOutputs));
  return body;
}

} // namespace zero::runtime::ops
