//===- CudaSupport.cpp - errors, counted memory and moves for the CUDA ops ===//

#include "CudaOps.h"

#include "ops/Elements.h"

#include "zero/runtime/Device.h"

#include "zero/runtime/FloatFormats.h"

#include <cstring>

namespace zero::runtime::cuda {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static StatusCode getStatusCode(cudaError_t code) {
  switch (code) {
  case cudaErrorMemoryAllocation:
    return StatusCode::kResourceExhausted;
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorDevicesUnavailable:
    return StatusCode::kUnavailable;
  default:
    return StatusCode::kInternal;
  }
}

Status cudaError(cudaError_t code, const char *what, const char *file,
                 int line) {
  return Status(getStatusCode(code),
                std::string(what) + ": " + cudaGetErrorString(code) + " (" +
                    cudaGetErrorName(code) + ")",
                file, line);
}

Status cublasError(cublasStatus_t code, const char *what, const char *file,
                   int line) {
  StatusCode status = code == CUBLAS_STATUS_ALLOC_FAILED
                          ? StatusCode::kResourceExhausted
                          : StatusCode::kInternal;
  return Status(status,
                std::string(what) + ": " +
                    cublas().cublasGetStatusString(code) + " (" +
                    cublas().cublasGetStatusName(code) + ")",
                file, line);
}

std::string CudaContext::where(const Instruction &inst) const {
  return schedule->name() + ": " + inst.describe();
}

std::string CudaContext::sitePrefix(const Instruction &inst,
                                    const std::string &field) const {
  std::string text = schedule->name() + ": " + inst.path;
  if (!field.empty())
    text += (field[0] == '[' ? "" : ".") + field;
  return text + ": ";
}

std::string CudaContext::siteSuffix(const Instruction &inst) {
  return " at " +
         (inst.loc.empty() ? std::string("an unknown location") : inst.loc);
}

//===----------------------------------------------------------------------===//
// DeviceAllocation
//===----------------------------------------------------------------------===//

StatusOr<DeviceAllocation> DeviceAllocation::create(int64_t bytes,
                                                    MemoryTracker &tracker) {
  DeviceAllocation allocation;
  if (bytes <= 0)
    return allocation;
  void *data = nullptr;
  ZERO_CUDA_RETURN_IF_ERROR(cudaMalloc(&data, static_cast<size_t>(bytes)));
  allocation.data_ = data;
  allocation.size_ = bytes;
  allocation.tracker_ = &tracker;
  tracker.allocate(bytes);
  return allocation;
}

Status copyToDeviceNow(void *to, const void *from, int64_t bytes) {
  if (bytes <= 0)
    return Status::ok();
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(to, from, static_cast<size_t>(bytes), cudaMemcpyHostToDevice));
  ZERO_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return Status::ok();
}

StatusOr<DeviceAllocation> DeviceAllocation::upload(const void *data,
                                                    int64_t bytes,
                                                    MemoryTracker &tracker) {
  StatusOr<DeviceAllocation> memory = create(bytes, tracker);
  if (!memory.isOk() || bytes <= 0)
    return memory;
  ZERO_RETURN_IF_ERROR(copyToDeviceNow(memory->get(), data, bytes));
  return memory;
}

DeviceAllocation::DeviceAllocation(DeviceAllocation &&other) noexcept
    : data_(other.data_), size_(other.size_), tracker_(other.tracker_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.tracker_ = nullptr;
}

DeviceAllocation &
DeviceAllocation::operator=(DeviceAllocation &&other) noexcept {
  if (this != &other) {
    this->~DeviceAllocation();
    new (this) DeviceAllocation(std::move(other));
  }
  return *this;
}

DeviceAllocation::~DeviceAllocation() {
  if (!data_)
    return;
  cudaFree(data_); // an error here (a dead context) has no one to go to
  tracker_->release(size_);
  data_ = nullptr;
}

//===----------------------------------------------------------------------===//
// PreparedMove
//===----------------------------------------------------------------------===//

StatusOr<PreparedMove> PreparedMove::create(void *dst, const void *src,
                                            int64_t bytes,
                                            MemoryTracker &tracker) {
  PreparedMove move;
  move.dst_ = dst;
  move.src_ = src;
  move.bytes_ = bytes;
  if (move.empty())
    return move;
  const char *d = static_cast<const char *>(dst);
  const char *s = static_cast<const char *>(src);
  if (d < s + bytes && s < d + bytes) {
    StatusOr<DeviceAllocation> scratch =
        DeviceAllocation::create(bytes, tracker);
    if (!scratch.isOk())
      return scratch.status();
    move.scratch_ = std::make_shared<DeviceAllocation>(std::move(*scratch));
  }
  return move;
}

Status PreparedMove::enqueue(cudaStream_t stream) const {
  if (empty())
    return Status::ok();
  const size_t bytes = static_cast<size_t>(bytes_);
  if (scratch_) {
    ZERO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(scratch_->get(), src_, bytes,
                                              cudaMemcpyDefault, stream));
    ZERO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst_, scratch_->get(), bytes,
                                              cudaMemcpyDefault, stream));
    return Status::ok();
  }
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(dst_, src_, bytes, cudaMemcpyDefault, stream));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// DeviceErrors
//===----------------------------------------------------------------------===//

Status DeviceErrors::init(MemoryTracker &tracker) {
  StatusOr<DeviceAllocation> memory =
      DeviceAllocation::create(sizeof(DeviceErrorRecord), tracker);
  if (!memory.isOk())
    return memory.status();
  memory_ = std::move(*memory);
  // Done before a kernel on a non-blocking stream may claim it.
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaMemset(memory_.get(), 0, sizeof(DeviceErrorRecord)));
  ZERO_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return Status::ok();
}

int32_t DeviceErrors::addSite(StatusCode code, Describe describe) {
  sites_.push_back({code, std::move(describe)});
  return static_cast<int32_t>(sites_.size() - 1);
}

int32_t DeviceErrors::addExtractSite(const CudaContext &ctx,
                                     const Instruction &inst,
                                     const std::string &field, int64_t tensor) {
  std::string prefix = ctx.sitePrefix(inst, field) + "tensor.extract index ";
  std::string suffix = ") of " + ctx.schedule->describeValue(tensor) +
                       CudaContext::siteSuffix(inst);
  std::vector<int64_t> shape = ctx.value(tensor).shape;
  return addSite(StatusCode::kOutOfRange,
                 [prefix = std::move(prefix), suffix = std::move(suffix),
                  shape = std::move(shape)](const DeviceErrorRecord &r) {
                   const int64_t size =
                       r.dim >= 0 && r.dim < static_cast<int32_t>(shape.size())
                           ? shape[r.dim]
                           : -1;
                   return prefix + std::to_string(r.value) +
                          " is out of range for dimension " +
                          std::to_string(r.dim) + " (size " +
                          std::to_string(size) + suffix;
                 });
}

Status DeviceErrors::check(int rank) {
  if (!memory_.get())
    return Status::ok();
  DeviceErrorRecord record;
  ZERO_CUDA_RETURN_IF_ERROR(cudaMemcpy(&record, memory_.get(), sizeof(record),
                                       cudaMemcpyDeviceToHost));
  if (record.flag == 0)
    return Status::ok();
  // On the legacy stream, which the non-blocking streams do not wait for:
  // done before anything else runs.
  ZERO_CUDA_RETURN_IF_ERROR(
      cudaMemset(memory_.get(), 0, sizeof(DeviceErrorRecord)));
  ZERO_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  if (record.site < 0 || record.site >= static_cast<int32_t>(sites_.size()))
    return ZERO_ERROR(kInternal, "rank " + std::to_string(rank) +
                                     ": a kernel reported an error from "
                                     "unknown site " +
                                     std::to_string(record.site));
  const Site &site = sites_[record.site];
  // The executor's prefix for an op that fails while it runs.
  return Status(site.code,
                "rank " + std::to_string(rank) + ": step " +
                    std::to_string(record.step) + ": " + site.describe(record),
                __FILE__, __LINE__);
}

//===----------------------------------------------------------------------===//
// Host-side element encoding
//===----------------------------------------------------------------------===//

std::vector<OptimizerStep>
getOptimizerSteps(const std::vector<const Instruction *> &group) {
  std::vector<OptimizerStep> steps;
  for (const Instruction *inst : group) {
    if (inst->code() == OpCode::Map && !steps.empty() &&
        !steps.back().cast &&
        isOptimizerParamCast(*steps.back().update, *inst)) {
      steps.back().cast = inst;
      continue;
    }
    if (inst->code() != group.front()->code())
      return {};
    steps.push_back({inst, nullptr});
  }
  return steps;
}

bool isFusableOptimizerGroup(const std::vector<const Instruction *> &group,
                             const Schedule &schedule) {
  struct Range {
    size_t inst;
    MemorySpace space;
    int64_t begin, end;
  };
  std::vector<Range> results, tensors;
  auto add = [&](size_t inst, const std::vector<int64_t> &ids,
                 bool isResult) {
    for (int64_t id : ids) {
      const ValueInfo &value = schedule.values().values[id];
      if (!value.isTensor || value.numel == 0)
        continue;
      const BufferInfo &buffer = schedule.bufferOf(id);
      Range range{inst, buffer.space, buffer.offset,
                  buffer.offset + value.bytes()};
      tensors.push_back(range);
      if (isResult)
        results.push_back(range);
    }
  };
  const std::vector<OptimizerStep> steps = getOptimizerSteps(group);
  if (steps.empty())
    return false;
  for (size_t i = 0; i < steps.size(); ++i) {
    add(2 * i, steps[i].update->operands, false);
    add(2 * i, steps[i].update->results, true);
    // Its input is the update's result; its destination is not read.
    if (steps[i].cast)
      add(2 * i + 1, steps[i].cast->results, true);
  }
  for (const Range &r : results)
    for (const Range &t : tensors)
      if (r.inst != t.inst && r.space == t.space && r.begin < t.end &&
          t.begin < r.end)
        return false;
  return true;
}

bool isVectorOptimizerTensor(DType type, uint64_t address) {
  if (type != DType::F32 && type != DType::BF16 && type != DType::F16)
    return false;
  return address % (4 * getDTypeWidth(type)) == 0;
}

} // namespace zero::runtime::cuda
