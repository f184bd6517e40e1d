//===- CudaContext.h - the device as the CUDA ops see it --------*- C++ -*-===//
//
// The contract between the CUDA device (CudaDevice.cpp: memory, streams,
// events) and the files that prepare its ops (one per family). An op is
// prepared once, at load, with every pointer it needs resolved: the plan is
// static, so a tensor's address is its arena's base plus its buffer's offset
// for the whole run. `run` only enqueues work on the compute stream; nothing
// in a step allocates or synchronizes with the host.
//
// Scalar registers live in device memory: one 8-byte `Scalar` per value id
// (a double for every float type, already rounded to it; an int64 for the
// integer types), so that scalar ops, bodies that read scalars from outside
// and the optimizers' step and learning rate need no host round trip.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_CUDACONTEXT_H
#define ZERO_RUNTIME_CUDA_CUDACONTEXT_H

#include "zero/runtime/Device.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include "Cublas.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

namespace zero::runtime::cuda {

/// "file:line: cudaMalloc: out of memory" style errors, returned as Status.
Status cudaError(cudaError_t code, const char *what, const char *file,
                 int line);
Status cublasError(cublasStatus_t code, const char *what, const char *file,
                   int line);

#define ZERO_CUDA_RETURN_IF_ERROR(expr)                                        \
  do {                                                                         \
    cudaError_t zeroCudaCode_ = (expr);                                        \
    if (zeroCudaCode_ != cudaSuccess)                                          \
      return ::zero::runtime::cuda::cudaError(zeroCudaCode_, #expr, __FILE__,  \
                                              __LINE__);                       \
  } while (false)

#define ZERO_CUBLAS_RETURN_IF_ERROR(expr)                                      \
  do {                                                                         \
    cublasStatus_t zeroCublasCode_ = (expr);                                   \
    if (zeroCublasCode_ != CUBLAS_STATUS_SUCCESS)                              \
      return ::zero::runtime::cuda::cublasError(zeroCublasCode_, #expr,        \
                                                __FILE__, __LINE__);           \
  } while (false)

class DeviceErrors;
class KernelCache;

/// What a prepared op needs of the device; owned by the device, alive as
/// long as the ops.
struct CudaContext {
  const Schedule *schedule = nullptr;
  int rank = 0;
  int worldSize = 1;
  int ordinal = 0;
  /// The compute stream (Schedule::streams()[0]).
  cudaStream_t compute = nullptr;
  cublasHandle_t blas = nullptr;
  /// cuBLAS workspace, sized at load and counted.
  void *blasWorkspace = nullptr;
  size_t blasWorkspaceBytes = 0;
  /// One Scalar per value id, in device memory.
  Scalar *registers = nullptr;
  /// Kernels generated from region bodies, compiled with NVRTC at load.
  KernelCache *kernels = nullptr;
  /// Counts what ops allocate at prepare (constants, scratch).
  MemoryTracker *tracker = nullptr;
  /// The record kernels report data errors to; synchronize reads it.
  DeviceErrors *errors = nullptr;
  /// Arena bases in device (or pinned host) memory, by MemorySpace.
  std::byte *arenas[kNumMemorySpaces] = {};

  /// The device address of tensor value `id`.
  void *tensor(int64_t id) const {
    const BufferInfo &buffer = schedule->bufferOf(id);
    return arenas[static_cast<int>(buffer.space)] + buffer.offset;
  }
  const ValueInfo &value(int64_t id) const {
    return schedule->values().values[id];
  }
  /// "schedule.json: instructions.compute[12] (linalg.map at m.mlir:3:4)".
  std::string where(const Instruction &inst) const;

  /// The host's text for an error at `inst` (host OpSite::error):
  /// "<schedule>: <path>[.<field>]: <message> at <loc>".
  std::string siteMessage(const Instruction &inst, const std::string &field,
                          const std::string &message) const {
    return sitePrefix(inst, field) + message + siteSuffix(inst);
  }
  /// "<schedule>: <path>[.<field>]: " and " at <loc>", for messages that
  /// kernels complete.
  std::string sitePrefix(const Instruction &inst,
                         const std::string &field) const;
  static std::string siteSuffix(const Instruction &inst);
};

using PreparedOpOr = StatusOr<std::unique_ptr<PreparedOp>>;

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_CUDACONTEXT_H
