//===- KernelCache.h - NVRTC compilation and a disk cache -------*- C++ -*-===//
//
// Generated kernels (Codegen.h) are compiled when a schedule is loaded,
// never during a step:
//
//   1. in memory: one loaded kernel per distinct source, shared by every op
//      that generates the same text (same body, shapes, strides, dtypes);
//   2. on disk: the compiled image, keyed by a hash of (source, kernel name,
//      target architecture, NVRTC version, options), under
//      $ZERO_KERNEL_CACHE, else $XDG_CACHE_HOME/zero-opt/kernels, else
//      ~/.cache/zero-opt/kernels (ZERO_KERNEL_CACHE=off disables it). Each
//      file holds its whole key, compared on reading, so a hash collision
//      or a stale or truncated file is a miss, never a wrong kernel. Files
//      are written to a temporary name and renamed, so concurrent ranks
//      sharing a cache never read half a file. A directory that cannot be
//      created or written only means compiling again next time: no error,
//      no warning;
//   3. NVRTC: --gpu-architecture=sm_XY of the device (a CUBIN, no JIT at
//      load), or compute_XY PTX for the newest architecture this NVRTC
//      knows when it does not know the device's (the driver JIT-compiles
//      it). Options: -std=c++17 --fmad=false (no contraction: every op
//      rounds as the host does), IEEE division and square root, no
//      flush-to-zero. A compile error is an internal error carrying the
//      first lines of NVRTC's log.
//
// Kernels are loaded with the runtime API's context-independent libraries
// (cudaLibraryLoadData, cudaLibraryGetKernel) and launched with
// cudaLaunchKernel on the op's stream; the cache unloads them when it is
// destroyed, which must happen before the device's context goes.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_KERNELCACHE_H
#define ZERO_RUNTIME_CUDA_KERNELCACHE_H

#include "zero/runtime/Status.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace zero::runtime::cuda {

/// A source compiled for one architecture.
struct CompiledKernel {
  std::string image; // CUBIN, or NUL-terminated PTX when isPtx
  bool isPtx = false;
  std::string target; // "sm_90", "compute_90"
};

/// NVRTC's version, "13.0".
std::string getNvrtcVersion();

/// The NVRTC options of every kernel, without the architecture.
const std::vector<std::string> &getKernelCompileOptions();

/// The --gpu-architecture for compute capability major.minor: "sm_XY" when
/// this NVRTC can emit SASS for it, else "compute_XY" of the newest older
/// architecture it knows; an error when the device is older than all.
StatusOr<std::string> chooseKernelTarget(int major, int minor);

/// Compiles `source` with NVRTC for `target` ("sm_90" or "compute_90").
/// Needs no GPU. Errors carry the first lines of NVRTC's log.
StatusOr<CompiledKernel> compileKernelSource(const std::string &source,
                                             const std::string &target);

/// The cache directory from the environment (see the file comment); empty
/// when the disk cache is off or no directory can be named.
std::string getDefaultKernelCacheDirectory();

/// The disk cache's key of a kernel: everything its image depends on.
std::string getKernelCacheKey(const std::string &source,
                              const std::string &name,
                              const std::string &target);
/// Reads the image stored under `key` in `directory`; false when there is
/// none, or a file that is damaged or holds another key.
bool readCachedKernel(const std::string &directory, const std::string &key,
                      CompiledKernel &kernel);
/// Stores `kernel` under `key` (a temporary file renamed into place);
/// failures are ignored.
void writeCachedKernel(const std::string &directory, const std::string &key,
                       const CompiledKernel &kernel);

class KernelCache {
public:
  struct Stats {
    int64_t compiled = 0;   // sources NVRTC compiled
    int64_t diskHits = 0;   // images read from the disk cache
    int64_t memoryHits = 0; // requests for an already loaded source
  };

  /// A cache for GPU `ordinal` with its disk cache in `directory` (none
  /// when empty). Nothing touches the GPU before the first getKernel.
  explicit KernelCache(
      int ordinal, std::string directory = getDefaultKernelCacheDirectory());
  ~KernelCache();
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  /// The extern "C" __global__ function `name` of `source`, loaded on the
  /// device (and made current there): from memory, else the disk cache,
  /// else compiled. The handle stays valid as long as the cache.
  StatusOr<cudaKernel_t> getKernel(const std::string &source,
                                   const std::string &name);

  /// The device's multiprocessors (for launch configurations).
  StatusOr<int> multiProcessorCount();
  int ordinal() const { return ordinal_; }
  const std::string &directory() const { return directory_; }
  Stats stats() const;

private:
  Status initialize();
  StatusOr<cudaKernel_t> load(const CompiledKernel &kernel,
                              const std::string &name);

  int ordinal_;
  std::string directory_;
  mutable std::mutex mutex_;
  bool initialized_ = false;
  int major_ = 0, minor_ = 0, multiProcessors_ = 0;
  std::string target_;
  std::vector<cudaLibrary_t> libraries_;
  std::unordered_map<std::string, cudaKernel_t> loaded_; // name + source
  Stats stats_;
};

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_KERNELCACHE_H
