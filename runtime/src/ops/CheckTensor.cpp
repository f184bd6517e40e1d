//===- CheckTensor.cpp - the checks of the tensor ops ---------------------===//
//
// extract_slice, insert_slice, collapse_shape, expand_shape, extract,
// from_elements, splat, arith.constant with a tensor result, and
// zero.local_shard.
//
//===----------------------------------------------------------------------===//

#include "ops/OpChecks.h"

namespace zero::runtime::ops {

namespace {

struct Slice {
  std::vector<int64_t> offsets, sizes, strides;
};

/// Reads the static offsets, sizes and strides of a slice of `full`.
Status parseSlice(const OpContext &ctx, const ValueInfo &full, Slice &slice) {
  const char *keys[] = {"offsets", "sizes", "strides"};
  std::vector<int64_t> *lists[] = {&slice.offsets, &slice.sizes,
                                   &slice.strides};
  for (int i = 0; i < 3; ++i) {
    StatusOr<std::vector<int64_t>> list = ctx.getIntList(keys[i]);
    if (!list.isOk())
      return list.status();
    if (list->size() != full.shape.size())
      return ctx.error(keys[i], "has " + std::to_string(list->size()) +
                                    " entries, but " + describeValue(full) +
                                    " has rank " +
                                    std::to_string(full.shape.size()));
    *lists[i] = std::move(*list);
  }
  for (size_t d = 0; d < full.shape.size(); ++d) {
    const std::string at = "[" + std::to_string(d) + "]";
    if (slice.sizes[d] < 0)
      return ctx.error("sizes" + at, "must not be negative");
    if (slice.strides[d] < 1)
      return ctx.error("strides" + at, "must be at least 1");
    if (slice.offsets[d] < 0 ||
        (slice.sizes[d] > 0 &&
         slice.offsets[d] + (slice.sizes[d] - 1) * slice.strides[d] >=
             full.shape[d]))
      return ctx.error("offsets" + at,
                       "the slice (offset " + std::to_string(slice.offsets[d]) +
                           ", size " + std::to_string(slice.sizes[d]) +
                           ", stride " + std::to_string(slice.strides[d]) +
                           ") does not fit dimension " + std::to_string(d) +
                           " of size " + std::to_string(full.shape[d]));
  }
  return Status::ok();
}

/// The slice's tensor has the slice's sizes, some unit dimensions dropped.
Status expectSliceShape(const OpContext &ctx, const char *key, size_t index,
                        const ValueInfo &value,
                        const std::vector<int64_t> &sizes) {
  size_t j = 0;
  bool ok = true;
  for (size_t i = 0; i < sizes.size() && ok; ++i) {
    if (j < value.shape.size() && sizes[i] == value.shape[j])
      ++j;
    else
      ok = sizes[i] == 1;
  }
  if (ok && j == value.shape.size())
    return Status::ok();
  return ctx.error(std::string(key) + "[" + std::to_string(index) + "]",
                   "expected the slice's shape " + formatShape(sizes) +
                       " (unit dimensions may be dropped), got " +
                       formatShape(value.shape) + " for " +
                       describeValue(value));
}

} // namespace

Status checkExtractSlice(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &source = *v.operands[0], &result = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 0, source));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, result));
  Slice slice;
  ZERO_RETURN_IF_ERROR(parseSlice(ctx, source, slice));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("results", 0, result, source.dtype));
  ZERO_RETURN_IF_ERROR(
      expectSliceShape(ctx, "results", 0, result, slice.sizes));
  return Status::ok();
}

Status checkInsertSlice(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &source = *v.operands[0], &dest = *v.operands[1],
                  &result = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 0, source));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 1, dest));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, result));
  Slice slice;
  ZERO_RETURN_IF_ERROR(parseSlice(ctx, dest, slice));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 0, source, dest.dtype));
  ZERO_RETURN_IF_ERROR(
      expectSliceShape(ctx, "operands", 0, source, slice.sizes));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("results", 0, result, dest.dtype));
  ZERO_RETURN_IF_ERROR(ctx.expectShape("results", 0, result, dest.shape));
  return Status::ok();
}

Status checkReshape(const OpContext &ctx, bool collapse) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &source = *v.operands[0], &result = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 0, source));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, result));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("results", 0, result, source.dtype));
  StatusOr<std::vector<std::vector<int64_t>>> groups =
      ctx.getIntListList("reassociation");
  if (!groups.isOk())
    return groups.status();
  // Groups of consecutive dimensions of the larger shape, one per
  // dimension of the smaller.
  const ValueInfo &large = collapse ? source : result;
  const ValueInfo &small = collapse ? result : source;
  if (groups->size() != small.shape.size())
    return ctx.error("reassociation", "has " + std::to_string(groups->size()) +
                                          " groups, but the " +
                                          (collapse ? "result" : "source") +
                                          " has rank " +
                                          std::to_string(small.shape.size()));
  int64_t next = 0;
  for (size_t g = 0; g < groups->size(); ++g) {
    int64_t size = 1;
    for (int64_t dim : (*groups)[g]) {
      if (dim != next || dim >= static_cast<int64_t>(large.shape.size()))
        return ctx.error("reassociation[" + std::to_string(g) + "]",
                         "the groups must list dimensions 0.." +
                             std::to_string(large.shape.size() - 1) +
                             " of the " + (collapse ? "source" : "result") +
                             " once each, in order");
      size *= large.shape[dim];
      ++next;
    }
    if ((*groups)[g].empty() || size != small.shape[g])
      return ctx.error("reassociation[" + std::to_string(g) + "]",
                       "the group's sizes multiply to " + std::to_string(size) +
                           ", but dimension " + std::to_string(g) + " of the " +
                           (collapse ? "result" : "source") + " has size " +
                           std::to_string(small.shape[g]));
  }
  if (next != static_cast<int64_t>(large.shape.size())) {
    // A rank-0 side takes only unit dimensions and no groups.
    bool units = small.shape.empty() && large.numel == 1;
    if (!units)
      return ctx.error("reassociation", "the groups cover " +
                                            std::to_string(next) + " of " +
                                            std::to_string(large.shape.size()) +
                                            " dimensions of the " +
                                            (collapse ? "source" : "result"));
  }
  return Status::ok();
}

Status checkExtract(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  if (v.operands.empty())
    return ctx.error("operands", "tensor.extract takes a tensor, then one "
                                 "index per dimension");
  const ValueInfo &tensor = *v.operands[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 0, tensor));
  ZERO_RETURN_IF_ERROR(
      ctx.expectCount("operands", v.operands, 1 + tensor.shape.size()));
  for (size_t i = 1; i < v.operands.size(); ++i) {
    ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", i, *v.operands[i]));
    ZERO_RETURN_IF_ERROR(
        ctx.expectDType("operands", i, *v.operands[i], DType::Index));
  }
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("results", 0, *v.results[0]));
  ZERO_RETURN_IF_ERROR(
      ctx.expectDType("results", 0, *v.results[0], tensor.dtype));
  return Status::ok();
}

Status checkFromElements(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &result = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, result));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands,
                                       static_cast<size_t>(result.numel)));
  for (size_t i = 0; i < v.operands.size(); ++i) {
    ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", i, *v.operands[i]));
    ZERO_RETURN_IF_ERROR(
        ctx.expectDType("operands", i, *v.operands[i], result.dtype));
  }
  return Status::ok();
}

Status checkSplat(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &value = *v.operands[0], &result = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", 0, value));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, result));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 0, value, result.dtype));
  return Status::ok();
}

StatusOr<std::vector<Scalar>> checkConstantTensor(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 0));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &result = *v.results[0];
  const ConstantValue &value = ctx.fields().getConstant(Field::Value);
  const bool isSplat = value.form == ConstantValue::Form::Splat;
  if (value.form == ConstantValue::Form::Number)
    return ctx.error("value", "a tensor constant is {\"splat\": x} or "
                              "{\"data\": [...]}, got " +
                                  value.elements[0].text);
  if (!isSplat && static_cast<int64_t>(value.elements.size()) != result.numel)
    return ctx.error("value.data",
                     "has " + std::to_string(value.elements.size()) +
                         " elements, but " + describeValue(result) + " has " +
                         std::to_string(result.numel));
  // Every element must be a constant of the result's type.
  std::string message;
  std::vector<Scalar> elements(value.elements.size());
  for (size_t i = 0; i < value.elements.size(); ++i)
    if (!parseConstant(value.elements[i], result.dtype, elements[i], message))
      return ctx.error(isSplat ? "value.splat"
                               : "value.data[" + std::to_string(i) + "]",
                       message);
  return elements;
}

/// zero.local_shard: the rank's shard of a tensor every rank holds whole.
Status checkLocalShard(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &full = *v.operands[0], &shard = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 0, full));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, shard));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("results", 0, shard, full.dtype));

  // The decoder made the layout (its padding and world size are checked
  // there); what is left is that it fits the operands.
  const PartitionLayout &layout = ctx.fields().getLayout(Field::Layout);
  if (layout.shape != full.shape)
    return ctx.error("layout.shape", "is " + formatShape(layout.shape) +
                                         ", but the operand has shape " +
                                         formatShape(full.shape) + " for " +
                                         describeValue(full));
  if (shard.numel != layout.shardNumel)
    return ctx.error("results[0]",
                     describeValue(shard) + " has " +
                         std::to_string(shard.numel) +
                         " elements, but the layout's shards have " +
                         std::to_string(layout.shardNumel));
  return Status::ok();
}

} // namespace zero::runtime::ops
