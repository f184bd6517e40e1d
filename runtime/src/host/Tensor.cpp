//===- Tensor.cpp - the tensor ops and tensor constants of a schedule -----===//
//
// extract_slice, insert_slice, collapse_shape, expand_shape, extract,
// from_elements, splat, and arith.constant with a tensor result.
//
//===----------------------------------------------------------------------===//

#include "Copy.h"
#include "Elements.h"
#include "HostOps.h"
#include "ScalarOps.h"

#include <cstring>

namespace zero::runtime::host {

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

/// collapse_shape / expand_shape when the result does not share the source's
/// memory: the bytes are the same in row-major order.
class ReshapeOp : public ComputeOp {
public:
  ReshapeOp(int64_t source, int64_t result, int64_t bytes)
      : source_(source), result_(result), bytes_(bytes) {}
  Status run(Frame &frame) override {
    const void *source = frame.tensor(source_).data;
    void *result = frame.tensor(result_).data;
    if (source != result)
      std::memmove(result, source, bytes_);
    return Status::ok();
  }

private:
  int64_t source_, result_, bytes_;
};

class ExtractOp : public ComputeOp {
public:
  ExtractOp(const OpContext &ctx, const ValueInfo &tensor,
            std::vector<int64_t> indices, int64_t result)
      : tensor_(tensor.id), dtype_(tensor.dtype), shape_(tensor.shape),
        strides_(getRowMajorStrides(tensor.shape)),
        indices_(std::move(indices)), result_(result), site_(ctx.site()),
        description_(describeValue(tensor)) {}

  Status run(Frame &frame) override {
    int64_t offset = 0;
    for (size_t d = 0; d < indices_.size(); ++d) {
      const int64_t index = frame.scalar(indices_[d]).i;
      if (index < 0 || index >= shape_[d])
        return site_.error(
            StatusCode::kOutOfRange, "",
            "tensor.extract index " + std::to_string(index) +
                " is out of range for dimension " + std::to_string(d) +
                " (size " + std::to_string(shape_[d]) + ") of " + description_);
      offset += index * strides_[d];
    }
    frame.scalar(result_) =
        loadElement(frame.tensor(tensor_).data, dtype_, offset);
    return Status::ok();
  }

private:
  int64_t tensor_;
  DType dtype_;
  std::vector<int64_t> shape_, strides_, indices_;
  int64_t result_;
  OpSite site_;
  std::string description_;
};

class FromElementsOp : public ComputeOp {
public:
  FromElementsOp(std::vector<int64_t> elements, int64_t result, DType dtype)
      : elements_(std::move(elements)), result_(result), dtype_(dtype) {}
  Status run(Frame &frame) override {
    void *data = frame.tensor(result_).data;
    for (size_t i = 0; i < elements_.size(); ++i)
      storeElement(data, dtype_, static_cast<int64_t>(i),
                   frame.scalar(elements_[i]));
    return Status::ok();
  }

private:
  std::vector<int64_t> elements_;
  int64_t result_;
  DType dtype_;
};

class SplatOp : public ComputeOp {
public:
  SplatOp(int64_t value, int64_t result, DType dtype, int64_t numel)
      : value_(value), result_(result), dtype_(dtype), numel_(numel) {}
  Status run(Frame &frame) override {
    fillElements(frame.tensor(result_).data, dtype_, numel_,
                 frame.scalar(value_));
    return Status::ok();
  }

private:
  int64_t value_, result_;
  DType dtype_;
  int64_t numel_;
};

/// A tensor constant, encoded once at load time and copied each step (its
/// buffer may be reused by other values between steps).
class ConstantTensorOp : public ComputeOp {
public:
  ConstantTensorOp(int64_t result, std::vector<char> bytes)
      : result_(result), bytes_(std::move(bytes)) {}
  Status run(Frame &frame) override {
    std::memcpy(frame.tensor(result_).data, bytes_.data(), bytes_.size());
    return Status::ok();
  }

private:
  int64_t result_;
  std::vector<char> bytes_;
};

} // namespace

HostOpOr prepareExtractSlice(const OpContext &ctx) {
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
  return std::unique_ptr<ComputeOp>(
      new StridedCopyOp(ops::describeStridedCopy(ctx.op(), ctx.values()), 0));
}

HostOpOr prepareInsertSlice(const OpContext &ctx) {
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
  return std::unique_ptr<ComputeOp>(new StridedCopyOp(
      ops::describeStridedCopy(ctx.op(), ctx.values()), dest.bytes()));
}

HostOpOr prepareReshape(const OpContext &ctx, bool collapse) {
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
  return std::unique_ptr<ComputeOp>(
      new ReshapeOp(source.id, result.id, source.bytes()));
}

HostOpOr prepareExtract(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  if (v.operands.empty())
    return ctx.error("operands", "tensor.extract takes a tensor, then one "
                                 "index per dimension");
  const ValueInfo &tensor = *v.operands[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 0, tensor));
  ZERO_RETURN_IF_ERROR(
      ctx.expectCount("operands", v.operands, 1 + tensor.shape.size()));
  std::vector<int64_t> indices;
  for (size_t i = 1; i < v.operands.size(); ++i) {
    ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", i, *v.operands[i]));
    ZERO_RETURN_IF_ERROR(
        ctx.expectDType("operands", i, *v.operands[i], DType::Index));
    indices.push_back(v.operands[i]->id);
  }
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("results", 0, *v.results[0]));
  ZERO_RETURN_IF_ERROR(
      ctx.expectDType("results", 0, *v.results[0], tensor.dtype));
  return std::unique_ptr<ComputeOp>(
      new ExtractOp(ctx, tensor, std::move(indices), v.results[0]->id));
}

HostOpOr prepareFromElements(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &result = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, result));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands,
                                       static_cast<size_t>(result.numel)));
  std::vector<int64_t> elements;
  for (size_t i = 0; i < v.operands.size(); ++i) {
    ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", i, *v.operands[i]));
    ZERO_RETURN_IF_ERROR(
        ctx.expectDType("operands", i, *v.operands[i], result.dtype));
    elements.push_back(v.operands[i]->id);
  }
  return std::unique_ptr<ComputeOp>(
      new FromElementsOp(std::move(elements), result.id, result.dtype));
}

HostOpOr prepareSplat(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  const ValueInfo &value = *v.operands[0], &result = *v.results[0];
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", 0, value));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("results", 0, result));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 0, value, result.dtype));
  return std::unique_ptr<ComputeOp>(
      new SplatOp(value.id, result.id, result.dtype, result.numel));
}

HostOpOr prepareConstantTensor(const OpContext &ctx) {
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
  std::vector<char> bytes(result.bytes());
  std::string message;
  if (isSplat) {
    Scalar element;
    if (!parseConstant(value.elements[0], result.dtype, element, message))
      return ctx.error("value.splat", message);
    fillElements(bytes.data(), result.dtype, result.numel, element);
  } else {
    for (int64_t i = 0; i < result.numel; ++i) {
      Scalar element;
      if (!parseConstant(value.elements[i], result.dtype, element, message))
        return ctx.error("value.data[" + std::to_string(i) + "]", message);
      storeElement(bytes.data(), result.dtype, i, element);
    }
  }
  return std::unique_ptr<ComputeOp>(
      new ConstantTensorOp(result.id, std::move(bytes)));
}

} // namespace zero::runtime::host
