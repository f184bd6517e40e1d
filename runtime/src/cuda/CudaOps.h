//===- CudaOps.h - the CUDA device's own op families ------------*- C++ -*-===//
//
// What CudaDevice::prepare hands each compute instruction to (the families
// below, one file each), and the few pieces they share: memory allocated at
// load and counted, device-side error reports, copies that may overlap, and
// launch shapes. The instruction has passed ops::checkComputeOp, so the
// families assume the operand and result counts, kinds, dtypes and shapes
// the op requires and check only what the GPU adds.
//
// Every prepared op resolves its addresses at prepare (the plan is static)
// and its run only enqueues work on the compute stream: no allocation, no
// synchronization with the host.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_CUDAOPS_H
#define ZERO_RUNTIME_CUDA_CUDAOPS_H

#include "CudaContext.h"
#include "DeviceErrorRecord.h"
#include "GridStride.h"
#include "ops/CopyShape.h"
#include "ops/LoopSpace.h"
#include "ops/ScalarMath.h"

#include "zero/runtime/Memory.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime::cuda {

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Copies `bytes` of host memory to device memory `to` at load or prepare,
/// complete when this returns: cudaMemcpy from pageable memory returns once
/// the bytes are staged, and its DMA runs on the legacy stream, which the
/// non-blocking streams that will read them do not wait for.
Status copyToDeviceNow(void *to, const void *from, int64_t bytes);

/// A block of device memory (cudaMalloc) counted by a tracker while it lives.
/// Made at load or prepare, never in a step.
class DeviceAllocation {
public:
  static StatusOr<DeviceAllocation> create(int64_t bytes,
                                           MemoryTracker &tracker);
  /// A copy of host memory `data`, complete when this returns.
  static StatusOr<DeviceAllocation> upload(const void *data, int64_t bytes,
                                           MemoryTracker &tracker);
  DeviceAllocation() = default;
  DeviceAllocation(DeviceAllocation &&other) noexcept;
  DeviceAllocation &operator=(DeviceAllocation &&other) noexcept;
  DeviceAllocation(const DeviceAllocation &) = delete;
  DeviceAllocation &operator=(const DeviceAllocation &) = delete;
  ~DeviceAllocation();

  void *get() const { return data_; }
  int64_t size() const { return size_; }

private:
  void *data_ = nullptr;
  int64_t size_ = 0;
  MemoryTracker *tracker_ = nullptr;
};

/// `bytes` from `src` to `dst` on a stream, for the "a result starts as a
/// copy of its destination" moves. Two live tensors share either their first
/// byte or none, but a view of a shard may not, so ranges that overlap go
/// through scratch memory allocated here (cudaMemcpyAsync is undefined on
/// overlap).
class PreparedMove {
public:
  static StatusOr<PreparedMove> create(void *dst, const void *src,
                                       int64_t bytes, MemoryTracker &tracker);
  PreparedMove() = default;
  bool empty() const { return bytes_ == 0 || dst_ == src_; }
  Status enqueue(cudaStream_t stream) const;

private:
  void *dst_ = nullptr;
  const void *src_ = nullptr;
  int64_t bytes_ = 0;
  std::shared_ptr<DeviceAllocation> scratch_;
};

//===----------------------------------------------------------------------===//
// Errors raised by kernels
//===----------------------------------------------------------------------===//

class DeviceErrors {
public:
  /// Renders a claimed record: the host's message for the site, without the
  /// executor's "rank R: step S: " prefix.
  using Describe = std::function<std::string(const DeviceErrorRecord &)>;

  Status init(MemoryTracker &tracker);
  DeviceErrorRecord *record() const {
    return static_cast<DeviceErrorRecord *>(memory_.get());
  }
  int32_t addSite(StatusCode code, Describe describe);
  /// A site for a tensor.extract of `tensor` at `inst` (`field`: "" for the
  /// op itself, "body.ops[i]" inside a body) that words an index outside
  /// the tensor as the host does (host/Tensor.cpp, host/Body.cpp).
  int32_t addExtractSite(const CudaContext &ctx, const Instruction &inst,
                         const std::string &field, int64_t tensor);
  /// Reads the record (the streams must be idle), clears it, and returns the
  /// error it holds, prefixed as the executor prefixes a failed op.
  Status check(int rank);

private:
  struct Site {
    StatusCode code;
    Describe describe;
  };
  DeviceAllocation memory_;
  std::vector<Site> sites_;
};

//===----------------------------------------------------------------------===//
// The families
//===----------------------------------------------------------------------===//

// Matmul.cu
PreparedOpOr prepareMatmulOp(const Instruction &inst, const CudaContext &ctx);

// DataMovement.cu: transpose, broadcast, copy, extract_slice, insert_slice,
// collapse_shape, expand_shape, local_shard.
PreparedOpOr prepareDataMovementOp(const Instruction &inst,
                                   const CudaContext &ctx);

// TensorOps.cu: fill, splat, from_elements, extract; and a tensor
// arith.constant, checked as `elements` (CheckedOp::constantElements).
PreparedOpOr prepareTensorOp(const Instruction &inst, const CudaContext &ctx);
PreparedOpOr prepareConstantTensor(const Instruction &inst,
                                   const std::vector<Scalar> &elements,
                                   const CudaContext &ctx);

// ScalarOps.cu: arith.* and math.* on registers (and scalar arith.constant),
// checked as `op` (CheckedOp::scalar).
PreparedOpOr prepareScalarOp(const Instruction &inst, const ops::ScalarOp &op,
                             const CudaContext &ctx);

// Optimizers.cu: zero.adam, zero.sgd and zero.any_nonfinite. The group forms
// run one kernel over several instructions of one kind (a multi-tensor apply);
// prepare uses them with one instruction each.
PreparedOpOr prepareOptimizerOp(const Instruction &inst,
                                const CudaContext &ctx);
/// zero.any_nonfinite: one multi-tensor launch over its inputs.
PreparedOpOr prepareAnyNonFiniteOp(const Instruction &inst,
                                   const CudaContext &ctx);
PreparedOpOr prepareAdamGroup(const std::vector<const Instruction *> &group,
                              const CudaContext &ctx);
PreparedOpOr prepareSgdGroup(const std::vector<const Instruction *> &group,
                             const CudaContext &ctx);
/// An optimizer instruction of a group and the cast of its new parameter
/// that follows it (isOptimizerParamCast), or null.
struct OptimizerStep {
  const Instruction *update = nullptr;
  const Instruction *cast = nullptr;
};
/// A run of getOptimizerRunLength as its steps; empty when the run is not
/// one (an internal error: the device proposed it).
std::vector<OptimizerStep>
getOptimizerSteps(const std::vector<const Instruction *> &group);
/// Whether a group can be one launch: the host runs its instructions one
/// after another, so a later instruction's result may reuse the memory of an
/// earlier one's gradient (dead by then); one launch, whose moves all run
/// first and whose blocks run in any order, needs every instruction's
/// results to share no byte with another instruction's tensors (a cast
/// reads its own optimizer's new parameter, and nothing else).
bool isFusableOptimizerGroup(const std::vector<const Instruction *> &group,
                             const Schedule &schedule);
/// Whether a tensor of an optimizer step (its parameter, gradient, states,
/// cast) allows Optimizers.cu's vector path: f32, bf16 or f16 at an address
/// (or arena offset, the arenas being aligned further) that is a multiple
/// of four elements. Every tensor of the step must.
bool isVectorOptimizerTensor(DType type, uint64_t address);

// Quantize.cu: the block quantizer of the quantized collectives
// (Device::quantizeBlocks and the rest; ops/QuantizeMath.h's element math),
// enqueued on `stream`. Elements f32, bf16 or f16, aligned to their width.
Status enqueueQuantizeBlocks(const void *in, DType type, int64_t n, int bits,
                             int64_t blockSize, void *values, void *scales,
                             cudaStream_t stream);
Status enqueueDequantizeBlocks(const void *values, const void *scales,
                               int64_t n, int bits, int64_t blockSize,
                               DType type, void *out, cudaStream_t stream);
Status enqueueAccumulateDequantized(const void *values, const void *scales,
                                    int64_t n, int bits, int64_t blockSize,
                                    float *sums, cudaStream_t stream);
Status enqueueRoundSums(const float *sums, int64_t n, int64_t divisor,
                        DType type, void *out, cudaStream_t stream);

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Enqueues setting `bytes` bytes at `dst` to a pattern of `width` bytes
/// (1, 2, 4 or 8; `dst` aligned to it), the low bytes of `pattern`. A kernel
/// rather than cudaMemsetAsync, so that pinned host arenas are filled too.
Status enqueueFillPattern(void *dst, int64_t bytes, int width, uint64_t pattern,
                          cudaStream_t stream);

using ops::getRowMajorStrides;

/// How DataMovement.cu runs a simplified strided copy of `width`-byte
/// elements (the cost model prices the same choice): nothing, one
/// cudaMemcpyAsync (one contiguous run, or one element), 32 x 32 tiles for a
/// transpose of the two innermost dimensions (elements of at most 8 bytes,
/// at most 65535 rows of tiles: the grid's y limit), else the strided copy
/// kernel.
enum class CopyKind { Empty, Memcpy, Transpose, Generic };
inline CopyKind chooseCopyKind(const ops::CopyShape &copy, int64_t width) {
  if (copy.empty)
    return CopyKind::Empty;
  if (copy.rank() == 0 || copy.isContiguous())
    return CopyKind::Memcpy;
  if (copy.isInnerTranspose() && width <= 8 &&
      (copy.sizes[copy.rank() - 2] + 31) / 32 <= 65535)
    return CopyKind::Transpose;
  return CopyKind::Generic;
}

/// Forgets an error that an earlier call on this thread left behind (and its
/// caller handled), so that cudaGetLastError after a launch reports the
/// launch's own. Errors of work already running are sticky or come back
/// from the stream.
inline void clearStaleError() { (void)cudaGetLastError(); }

/// An op with nothing to do (a view, an empty tensor).
class NoOp final : public PreparedOp {
public:
  Status run(int64_t) override { return Status::ok(); }
};

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_CUDAOPS_H
