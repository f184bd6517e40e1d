//===- TensorOps.cu - fills, constants and element access -----------------===//
//
// linalg.fill, tensor.splat, tensor arith.constant, tensor.from_elements and
// tensor.extract. A fill computes its element's bits once per thread (from a
// register, cast as host castScalar does, or from the constant's bits encoded
// at prepare) and stores them 16 bytes at a time. A data constant is encoded
// at prepare into device memory of its own and copied into its buffer every
// step, since the plan may give the buffer to other values in between.
// tensor.extract checks its indices on the device and reports one out of
// range through the device error record, with the host's message.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"
#include "ElementKernels.cuh"
#include "FillKernels.cuh"

#include "ops/ScalarOp.h"

#include <cstring>

namespace zero::runtime::cuda {

namespace {

constexpr int kThreads = 256;

Status launchFill(void *dst, int64_t bytes, int width, FillSource source,
                  cudaStream_t stream) {
  if (bytes <= 0)
    return Status::ok();
  clearStaleError();
  fillKernel<<<getFillBlocks(bytes), kFillThreads, 0, stream>>>(
      static_cast<char *>(dst), bytes, width, source);
  ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::ok();
}

/// linalg.fill, tensor.splat and splat constants.
class FillOp final : public PreparedOp {
public:
  FillOp(const CudaContext &ctx, void *dst, int64_t numel, DType to,
         FillSource source)
      : ctx_(ctx), dst_(dst), bytes_(numel * byteWidthOf(to)),
        width_(byteWidthOf(to)), source_(source) {}
  Status run(int64_t) override {
    return launchFill(dst_, bytes_, width_, source_, ctx_.compute);
  }

private:
  const CudaContext &ctx_;
  void *dst_;
  int64_t bytes_;
  int width_;
  FillSource source_;
};

/// A data constant: its bytes, encoded at prepare, copied in each step.
class ConstantDataOp final : public PreparedOp {
public:
  ConstantDataOp(const CudaContext &ctx, void *dst, DeviceAllocation data)
      : ctx_(ctx), dst_(dst), data_(std::move(data)) {}
  Status run(int64_t) override {
    ZERO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst_, data_.get(), data_.size(),
                                              cudaMemcpyDefault, ctx_.compute));
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  void *dst_;
  DeviceAllocation data_;
};

class FromElementsOp final : public PreparedOp {
public:
  FromElementsOp(const CudaContext &ctx, void *dst, DType type, int64_t numel,
                 DeviceAllocation ids)
      : ctx_(ctx), dst_(dst), type_(type), numel_(numel), ids_(std::move(ids)) {
  }
  Status run(int64_t) override {
    if (numel_ == 0)
      return Status::ok();
    clearStaleError();
    fromElementsKernel<<<gridFor(numel_, kThreads), kThreads, 0,
                         ctx_.compute>>>(
        dst_, type_, numel_, static_cast<const int64_t *>(ids_.get()),
        ctx_.registers);
    ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  void *dst_;
  DType type_;
  int64_t numel_;
  DeviceAllocation ids_;
};

class ExtractOp final : public PreparedOp {
public:
  ExtractOp(const CudaContext &ctx, ExtractParams params,
            DeviceAllocation table)
      : ctx_(ctx), params_(params), table_(std::move(table)) {
    params_.table = static_cast<const int64_t *>(table_.get());
  }
  Status run(int64_t step) override {
    ExtractParams p = params_;
    p.step = step;
    clearStaleError();
    extractKernel<<<1, 1, 0, ctx_.compute>>>(ctx_.registers, p);
    ZERO_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::ok();
  }

private:
  const CudaContext &ctx_;
  ExtractParams params_;
  DeviceAllocation table_;
};

/// linalg.fill and tensor.splat: the register cast as host castScalar does
/// (an identity for splat, whose types agree).
PreparedOpOr prepareFill(const CudaContext &ctx, int64_t valueId,
                         int64_t resultId) {
  const ValueInfo &value = ctx.value(valueId);
  const ValueInfo &result = ctx.value(resultId);
  FillSource source{ctx.registers + valueId, value.dtype, result.dtype, 0};
  return std::unique_ptr<PreparedOp>(new FillOp(
      ctx, ctx.tensor(resultId), result.numel, result.dtype, source));
}

PreparedOpOr prepareFromElements(const Instruction &inst,
                                 const CudaContext &ctx) {
  const ValueInfo &result = ctx.value(inst.results[0]);
  StatusOr<DeviceAllocation> ids = DeviceAllocation::upload(
      inst.operands.data(),
      static_cast<int64_t>(inst.operands.size() * sizeof(int64_t)),
      *ctx.tracker);
  if (!ids.isOk())
    return ids.status();
  return std::unique_ptr<PreparedOp>(new FromElementsOp(
      ctx, ctx.tensor(result.id), result.dtype, result.numel, std::move(*ids)));
}

PreparedOpOr prepareExtract(const Instruction &inst, const CudaContext &ctx) {
  const ValueInfo &tensor = ctx.value(inst.operands[0]);
  const int rank = static_cast<int>(tensor.shape.size());
  const std::vector<int64_t> table = getExtractTable(
      tensor.shape,
      std::vector<int64_t>(inst.operands.begin() + 1, inst.operands.end()));
  StatusOr<DeviceAllocation> memory = DeviceAllocation::upload(
      table.data(), static_cast<int64_t>(table.size() * 8), *ctx.tracker);
  if (!memory.isOk())
    return memory.status();

  const int32_t site = ctx.errors->addExtractSite(ctx, inst, "", tensor.id);

  ExtractParams params;
  std::memset(&params, 0, sizeof(params));
  params.tensor = ctx.tensor(tensor.id);
  params.type = tensor.dtype;
  params.rank = rank;
  params.result = inst.results[0];
  params.errors = ctx.errors->record();
  params.site = site;
  return std::unique_ptr<PreparedOp>(
      new ExtractOp(ctx, params, std::move(*memory)));
}

} // namespace

Status enqueueFillPattern(void *dst, int64_t bytes, int width, uint64_t pattern,
                          cudaStream_t stream) {
  FillSource source{nullptr, DType::I64, DType::I64, pattern};
  return launchFill(dst, bytes, width, source, stream);
}

PreparedOpOr prepareConstantTensor(const Instruction &inst,
                                   const std::vector<Scalar> &elements,
                                   const CudaContext &ctx) {
  const ValueInfo &result = ctx.value(inst.results[0]);
  void *dst = ctx.tensor(result.id);
  // One element is a splat, as encodeConstantTensor reads it (a one-element
  // data constant fills the same bytes).
  if (elements.size() == 1) {
    FillSource source{nullptr, result.dtype, result.dtype,
                      elementBits(elements[0], result.dtype)};
    return std::unique_ptr<PreparedOp>(
        new FillOp(ctx, dst, result.numel, result.dtype, source));
  }
  if (result.numel == 0)
    return std::unique_ptr<PreparedOp>(new NoOp());
  const std::vector<char> bytes =
      ops::encodeConstantTensor(elements, result.dtype, result.numel);
  StatusOr<DeviceAllocation> data = DeviceAllocation::upload(
      bytes.data(), static_cast<int64_t>(bytes.size()), *ctx.tracker);
  if (!data.isOk())
    return data.status();
  return std::unique_ptr<PreparedOp>(
      new ConstantDataOp(ctx, dst, std::move(*data)));
}

PreparedOpOr prepareTensorOp(const Instruction &inst, const CudaContext &ctx) {
  switch (inst.code()) {
  case OpCode::Fill:
  case OpCode::Splat:
    return prepareFill(ctx, inst.operands[0], inst.results[0]);
  case OpCode::FromElements:
    return prepareFromElements(inst, ctx);
  case OpCode::Extract:
    return prepareExtract(inst, ctx);
  default:
    return ZERO_ERROR(kInternal, ctx.where(inst) +
                                     ": not a tensor op of the CUDA backend");
  }
}

} // namespace zero::runtime::cuda
