//===- Device.h - a schedule's memory and ops on a backend ------*- C++ -*-===//
//
// The backend interface under the executor (docs/Runtime.md, "Devices"): a
// device owns the arenas of the memory plan, prepares each compute
// instruction into an op that runs on it, and gives the schedule's streams
// and events their meaning there. The executor keeps the order of the
// streams (which instruction waits for which record) and nothing
// device-specific.
//
// Two devices: `host` (every space in host memory, compute on the calling
// thread with OpenBLAS and the host kernels, streams that run synchronously)
// and `cuda` (arenas in GPU memory and pinned host memory, CUDA streams and
// events, cuBLAS and generated kernels), built when the CUDA toolkit is found.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_DEVICE_H
#define ZERO_RUNTIME_DEVICE_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime {

class MemoryTracker;
class Schedule;

/// One compute instruction prepared for a device: checked and resolved to
/// the device's memory once, at load; `run` enqueues it on the device's
/// compute stream (the host runs it there and then).
class PreparedOp {
public:
  virtual ~PreparedOp() = default;
  /// `step` is 1-based, for messages.
  virtual Status run(int64_t step) = 0;
};

class Device {
public:
  virtual ~Device() = default;

  /// Marks `space`'s arena as held outside the device (the nvme arena in the
  /// NVMe swap store, NvmeSwap.h): load allocates nothing for it and
  /// arenaBase returns null. Called before load.
  void setExternalArena(MemorySpace space) {
    external_[static_cast<int>(space)] = true;
  }
  bool hasExternalArena(MemorySpace space) const {
    return external_[static_cast<int>(space)];
  }

  /// "host (4 threads)", "cuda:0 (NVIDIA H100 80GB HBM3)".
  virtual std::string describe() const = 0;
  /// Whether the arenas are ordinary host memory (read and written in place
  /// between steps).
  virtual bool isHostMemory() const = 0;

  /// Allocates the arenas of `schedule` (exactly Schedule::arenaBytes of
  /// each space, zero-filled) and whatever the device's kernels need, all
  /// counted in `tracker`, and creates the schedule's streams and events.
  /// Called once, before prepare.
  virtual Status load(const Schedule &schedule, int rank, int worldSize,
                      MemoryTracker &tracker) = 0;
  /// The start of `space`'s arena (null when it is empty); the plan's
  /// offsets are relative to it.
  virtual std::byte *arenaBase(MemorySpace space) const = 0;

  /// Prepares compute instruction `inst` of the loaded schedule.
  virtual StatusOr<std::unique_ptr<PreparedOp>>
  prepare(const Instruction &inst) = 0;
  /// How many consecutive compute instructions of `stream`, from index
  /// `first`, the device runs as one op (prepareGroup): 1, the default, when
  /// it runs instructions[first] alone. Called after load.
  virtual size_t groupLength(size_t stream, size_t first) {
    (void)stream;
    (void)first;
    return 1;
  }
  /// Prepares instructions [first, first + count) of `stream`, a group that
  /// groupLength proposed, as one op that runs where the first stands (a
  /// multi-tensor optimizer update, a fused row program), each instruction
  /// checked as prepare checks it; null when the device runs them one by
  /// one after all.
  virtual StatusOr<std::unique_ptr<PreparedOp>>
  prepareGroup(size_t stream, size_t first, size_t count) {
    (void)stream;
    (void)first;
    (void)count;
    return std::unique_ptr<PreparedOp>();
  }

  // Streams are the schedule's, by index in Schedule::streams(); the
  // executor issues each stream's work from one thread of its own.

  /// Marks the work enqueued on `stream` so far as event `event`.
  virtual Status recordEvent(size_t stream, int64_t event) = 0;
  /// Makes later work on `stream` wait for event `event`. The executor
  /// calls it only after the recordEvent of `event` has returned.
  virtual Status waitEvent(size_t stream, int64_t event) = 0;
  /// Enqueues a copy between two places of the arenas on `stream`.
  virtual Status copy(size_t stream, void *to, const void *from,
                      int64_t bytes) = 0;
  /// Enqueues zero-filling `bytes` at `to` on `stream`.
  virtual Status fillZero(size_t stream, void *to, int64_t bytes) = 0;
  // The block quantizer of the quantized collectives (docs/Runtime.md,
  // "Block quantization"), enqueued on `stream` like copy: the host device
  // runs ops/Quantize.h, the CUDA device kernels of the same element math
  // (ops/QuantizeMath.h), which write the same bytes. Elements are f32,
  // bf16 or f16 (`type`), aligned to their width; scales are f32 bytes at
  // any alignment; `bits` is 4 or 8.

  /// Quantizes n elements of `type` at `in` into `values`
  /// (getQuantizedBytes(n, bits) bytes) and `scales`.
  virtual Status quantizeBlocks(size_t stream, const void *in, DType type,
                                int64_t n, int bits, int64_t blockSize,
                                void *values, void *scales) = 0;
  /// The inverse: element i is q[i] * scale[i / blockSize] in f32, rounded
  /// to `type` (to nearest, ties to even).
  virtual Status dequantizeBlocks(size_t stream, const void *values,
                                  const void *scales, int64_t n, int bits,
                                  int64_t blockSize, DType type,
                                  void *out) = 0;
  /// sums[i] += q[i] * scale[i / blockSize] in f32 (qgZ's hop sums).
  virtual Status accumulateDequantized(size_t stream, const void *values,
                                       const void *scales, int64_t n, int bits,
                                       int64_t blockSize, float *sums) = 0;
  /// out[i] = sums[i] (divided by `divisor` in f32 when it is not 1: avg)
  /// rounded to `type`: qgZ's results.
  virtual Status roundSums(size_t stream, const float *sums, int64_t n,
                           int64_t divisor, DType type, void *out) = 0;

  /// What a communicator enqueues on for `stream`: a cudaStream_t; null on
  /// the host.
  virtual void *nativeStream(size_t stream) const = 0;
  /// Waits for the work of every stream; reports the errors of work that
  /// ran asynchronously.
  virtual Status synchronize() = 0;
  /// Blocks the calling thread until the work enqueued on `stream` so far
  /// (and what it waits for) is done, so that the CPU may touch memory that
  /// work reads or writes: the NVMe swap store reads host memory a kernel
  /// wrote. The host device's work is done when its calls return.
  virtual Status synchronizeStream(size_t stream) {
    (void)stream;
    return Status::ok();
  }

  /// Copies between host memory and the arenas, between steps.
  virtual Status read(void *hostTo, const void *from, int64_t bytes) = 0;
  virtual Status write(void *to, const void *hostFrom, int64_t bytes) = 0;
  /// The scalar register of value `id` (after synchronize).
  virtual StatusOr<Scalar> readScalar(int64_t id) = 0;

  /// Trace timestamps: `markTime` notes when the work enqueued on `stream`
  /// so far finishes; after synchronize, `resolveTime` gives that moment in
  /// microseconds since the device was loaded. A mark below 0 is one the
  /// device could not take (the trace leaves its span out).
  /// `clearTimeMarks` forgets them (once a step's trace events are built).
  virtual int64_t markTime(size_t stream) = 0;
  virtual double resolveTime(int64_t mark) const = 0;
  virtual void clearTimeMarks() = 0;

protected:
  std::array<bool, kNumMemorySpaces> external_{};
};

/// Where a group that starts at instruction `first` of `stream` must end at
/// the latest: a group does not cross the bounds of the loop's body, which
/// run different numbers of times (the executor runs a longer group's
/// instructions one by one).
size_t getGroupLimit(const Schedule &schedule, size_t stream, size_t first);

/// Whether `cast` is a linalg.map whose body only truncates `optimizer`'s
/// new parameter (its first result) to a narrower float: the 16-bit copy of
/// a mixed-precision parameter, which an optimizer kernel can write as it
/// updates the parameter.
bool isOptimizerParamCast(const Instruction &optimizer,
                          const Instruction &cast);

/// The length of the run from instructions[first] (at least 1) of
/// consecutive zero.adam (or zero.sgd) instructions, each optionally
/// followed by its parameter's cast (isOptimizerParamCast): the group a
/// device that updates many tensors in one launch proposes.
size_t getOptimizerRunLength(const std::vector<Instruction> &instructions,
                             size_t first);

/// The host backend (its threads: host/Threads.h).
std::unique_ptr<Device> createHostDevice();

/// Whether this build has the CUDA backend.
bool hasCudaBackend();
/// The process-wide settings the CUDA backend needs before anything
/// initializes CUDA, which a CUDA-aware MPI may do in MPI_Init: call it
/// before the communicators (createCudaDevice calls it too). Eager module
/// loading, unless the user set CUDA_MODULE_LOADING: a kernel loaded at its
/// first launch, inside a step, can deadlock against NCCL kernels spinning
/// for their peers. A no-op without the backend.
void prepareProcessForCuda();
/// The CUDA backend on GPU `ordinal`. Fails with one line naming the cause
/// when the build has no CUDA backend, or there is no driver or device.
StatusOr<std::unique_ptr<Device>> createCudaDevice(int ordinal);
/// The GPUs this process sees (CUDA_VISIBLE_DEVICES); 0 without a driver,
/// a device or the backend.
int countVisibleCudaDevices();

} // namespace zero::runtime

#endif // ZERO_RUNTIME_DEVICE_H
