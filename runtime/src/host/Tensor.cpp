//===- Tensor.cpp - the tensor ops and tensor constants of a schedule -----===//
//
// collapse_shape, expand_shape, extract, from_elements, splat, and
// arith.constant with a tensor result, each built from an instruction
// ops/Check.h has checked (the slices are strided copies, Copy.h).
//
//===----------------------------------------------------------------------===//

#include "Copy.h"
#include "Elements.h"
#include "HostOps.h"
#include "ScalarOps.h"

#include <cstring>

namespace zero::runtime::host {

namespace {

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

HostOpOr buildReshape(const OpContext &ctx) {
  const ValueInfo &source = ctx.values().values[ctx.op().operands[0]];
  return std::unique_ptr<ComputeOp>(
      new ReshapeOp(source.id, ctx.op().results[0], source.bytes()));
}

HostOpOr buildExtract(const OpContext &ctx) {
  const std::vector<int64_t> &operands = ctx.op().operands;
  return std::unique_ptr<ComputeOp>(
      new ExtractOp(ctx, ctx.values().values[operands[0]],
                    std::vector<int64_t>(operands.begin() + 1, operands.end()),
                    ctx.op().results[0]));
}

HostOpOr buildFromElements(const OpContext &ctx) {
  const ValueInfo &result = ctx.values().values[ctx.op().results[0]];
  return std::unique_ptr<ComputeOp>(
      new FromElementsOp(ctx.op().operands, result.id, result.dtype));
}

HostOpOr buildSplat(const OpContext &ctx) {
  const ValueInfo &result = ctx.values().values[ctx.op().results[0]];
  return std::unique_ptr<ComputeOp>(
      new SplatOp(ctx.op().operands[0], result.id, result.dtype, result.numel));
}

HostOpOr buildConstantTensor(const OpContext &ctx,
                             const std::vector<Scalar> &elements) {
  const ValueInfo &result = ctx.values().values[ctx.op().results[0]];
  return std::unique_ptr<ComputeOp>(new ConstantTensorOp(
      result.id,
      ops::encodeConstantTensor(elements, result.dtype, result.numel)));
}

} // namespace zero::runtime::host
