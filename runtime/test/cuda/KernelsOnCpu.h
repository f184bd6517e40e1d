//===- KernelsOnCpu.h - CUDA kernel source run on the CPU -------*- C++ -*-===//
//
// What runs a kernel's CUDA C++ on the CPU, so that CI tests what otherwise
// runs only on a GPU (GeneratedOnCpuTest, CopyKernelsOnCpuTest): a shim for
// the CUDA names the kernels use, compiled ahead of their source by the
// host compiler into a library the test opens, and memory aligned as
// cudaMalloc aligns it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_KERNELSONCPU_H
#define ZERO_RUNTIME_TEST_CUDA_KERNELSONCPU_H

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace zero::runtime::test {

/// What kernel source needs from CUDA, for the host compiler. A launch
/// runs its blocks one after another, and a block's threads (numbered x
/// first, then y, then z; warps of 32 in that order) as
/// fibers (ucontext) on this thread: each runs until it waits at a barrier
/// or returns, so threads meet as on the GPU. __syncthreads waits for every
/// thread of the block that has not returned, __syncwarp and the shuffles
/// (a write, a warp barrier, the partner's read, a barrier) for those of its
/// warp (__shfl_sync reads a lane of the warp, __shfl_xor_sync the lane
/// its mask names). Threads that wait at different barriers with nothing left
/// to release them (a barrier some threads cannot reach) end the launch with an
/// error instead of hanging. __shared__ arrays are statics: shared by the
/// block, whose blocks run one at a time.
inline constexpr const char *kCudaShim = R"ZK(
#include <ucontext.h>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>
#define __global__
#define __device__
#define __noinline__
#define __launch_bounds__(n)
#define __shared__ static
#define __forceinline__ inline
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
static uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return {x, y, z, w};
}
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct ZkDim3 {
  unsigned x, y, z;
};
static ZkDim3 threadIdx, blockIdx, blockDim, gridDim;
static unsigned long long atomicCAS(unsigned long long *address,
                                    unsigned long long expected,
                                    unsigned long long value) {
  const unsigned long long old = *address;
  if (old == expected)
    *address = value;
  return old;
}
template <typename To, typename From> static To zkBits(From from) {
  To to;
  std::memcpy(&to, &from, sizeof(to));
  return to;
}
static int __float_as_int(float x) { return zkBits<int>(x); }
static float __int_as_float(int x) { return zkBits<float>(x); }
static long long __double_as_longlong(double x) {
  return zkBits<long long>(x);
}
static double __longlong_as_double(long long x) { return zkBits<double>(x); }
// Rounded to nearest, never contracted into an fma (-ffp-contract=off).
static double __dadd_rn(double x, double y) { return x + y; }
static double __dmul_rn(double x, double y) { return x * y; }

enum ZkState { ZkRunning, ZkAtBlockBarrier, ZkAtWarpBarrier, ZkReturned };
struct ZkThread {
  ucontext_t context;
  std::vector<char> stack;
  ZkState state = ZkRunning;
  bool vote = false; // __syncthreads_or's predicate
  alignas(16) unsigned char exchange[16]; // a shuffle's value
};
static std::vector<ZkThread> zkThreads;
static ucontext_t zkScheduler;
static unsigned zkCurrent;
static std::function<void()> zkBody;

static void zkWait(ZkState barrier) {
  zkThreads[zkCurrent].state = barrier;
  swapcontext(&zkThreads[zkCurrent].context, &zkScheduler);
}
static void __syncthreads() { zkWait(ZkAtBlockBarrier); }
/// Whether `predicate` holds on some thread of the block.
static int __syncthreads_or(int predicate) {
  zkThreads[zkCurrent].vote = predicate != 0;
  __syncthreads();
  int any = 0;
  for (const ZkThread &thread : zkThreads)
    any |= thread.vote;
  __syncthreads();
  return any;
}
// Blocks run one at a time, threads one at a time: memory is ordered.
static void __threadfence() {}
static void __threadfence_system() {}
static unsigned atomicAdd(unsigned *address, unsigned value) {
  const unsigned old = *address;
  *address = old + value;
  return old;
}
static unsigned atomicOr(unsigned *address, unsigned value) {
  const unsigned old = *address;
  *address = old | value;
  return old;
}
static unsigned atomicExch(unsigned *address, unsigned value) {
  const unsigned old = *address;
  *address = value;
  return old;
}
static void __syncwarp(unsigned = 0xffffffffu) { zkWait(ZkAtWarpBarrier); }
/// Thread `partner`'s `value` (this thread's own past the block).
template <typename T> static T zkShuffle(T value, unsigned partner) {
  static_assert(sizeof(T) <= 16, "a shuffle moves at most 16 bytes here");
  std::memcpy(zkThreads[zkCurrent].exchange, &value, sizeof(T));
  __syncwarp();
  T result = value;
  if (partner < zkThreads.size())
    std::memcpy(&result, zkThreads[partner].exchange, sizeof(T));
  __syncwarp();
  return result;
}
template <typename T>
static T __shfl_xor_sync(unsigned, T value, int laneMask) {
  return zkShuffle(value, zkCurrent ^ static_cast<unsigned>(laneMask));
}
template <typename T> static T __shfl_sync(unsigned, T value, int lane) {
  return zkShuffle(value, (zkCurrent & ~31u) | (static_cast<unsigned>(lane) & 31u));
}
static void zkThreadMain() {
  zkBody();
  zkThreads[zkCurrent].state = ZkReturned;
}

/// Runs one block; false where its threads wait at barriers that none can
/// release.
static bool zkRunBlock(unsigned threads) {
  constexpr size_t kStackBytes = 64 * 1024;
  zkThreads.resize(threads);
  for (unsigned t = 0; t < threads; ++t) {
    ZkThread &thread = zkThreads[t];
    thread.stack.resize(kStackBytes);
    thread.state = ZkRunning;
    thread.vote = false;
    getcontext(&thread.context);
    thread.context.uc_stack.ss_sp = thread.stack.data();
    thread.context.uc_stack.ss_size = kStackBytes;
    thread.context.uc_link = &zkScheduler;
    makecontext(&thread.context, zkThreadMain, 0);
  }
  for (;;) {
    for (unsigned t = 0; t < threads; ++t)
      if (zkThreads[t].state == ZkRunning) {
        zkCurrent = t;
        threadIdx = {t % blockDim.x, t / blockDim.x % blockDim.y,
                     t / (blockDim.x * blockDim.y)};
        swapcontext(&zkScheduler, &zkThreads[t].context);
      }
    // Every thread now waits or has returned: release a warp whose live
    // threads all wait at a warp barrier, else the block if all of its
    // live threads wait at __syncthreads.
    bool released = false, live = false, allAtBlock = true;
    for (unsigned warp = 0; warp * 32 < threads; ++warp) {
      bool atWarp = true, any = false;
      for (unsigned t = warp * 32; t < threads && t < warp * 32 + 32; ++t) {
        if (zkThreads[t].state == ZkReturned)
          continue;
        any = live = true;
        atWarp &= zkThreads[t].state == ZkAtWarpBarrier;
        allAtBlock &= zkThreads[t].state == ZkAtBlockBarrier;
      }
      if (!any || !atWarp)
        continue;
      for (unsigned t = warp * 32; t < threads && t < warp * 32 + 32; ++t)
        if (zkThreads[t].state == ZkAtWarpBarrier)
          zkThreads[t].state = ZkRunning;
      released = true;
    }
    if (!live)
      return true;
    if (released)
      continue;
    if (!allAtBlock)
      return false;
    for (ZkThread &thread : zkThreads)
      if (thread.state == ZkAtBlockBarrier)
        thread.state = ZkRunning;
  }
}
template <typename... P, std::size_t... I>
static void zkCall(void (*kernel)(P...), void **args,
                   std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_reference_t<P> *>(args[I])...);
}
/// 0, or 1 where a block's threads could not all pass their barriers.
template <typename... P>
static int zkLaunch(void (*kernel)(P...), void **args, ZkDim3 grid,
                    ZkDim3 block) {
  gridDim = grid;
  blockDim = block;
  zkBody = [&] { zkCall(kernel, args, std::index_sequence_for<P...>{}); };
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = {x, y, z};
        if (!zkRunBlock(block.x * block.y * block.z))
          return 1;
      }
  return 0;
}
template <typename... P>
static int zkLaunch(void (*kernel)(P...), void **args, unsigned blocks,
                    unsigned threads) {
  return zkLaunch(kernel, args, ZkDim3{blocks, 1, 1}, ZkDim3{threads, 1, 1});
}
)ZK";

/// The source of launcher `symbol` (a Runner) of `kernel`, a kernel of the
/// library's source.
inline std::string makeLauncher(const std::string &symbol,
                                const std::string &kernel) {
  return "extern \"C\" int " + symbol +
         "(void **args, unsigned blocks, unsigned threads) {\n"
         "  return zkLaunch(" +
         kernel + ", args, blocks, threads);\n}\n";
}

/// A launcher of a kernel library: the kernel over `args` (pointers to the
/// arguments) on `blocks` blocks of `threads`; 0, or 1 where a block's
/// threads could not all pass their barriers.
using Runner = int (*)(void **args, unsigned blocks, unsigned threads);

/// `library`'s function `symbol` of type `F`, or null with a failure.
template <typename F = Runner>
inline F findFunction(void *library, const std::string &symbol) {
  auto function = reinterpret_cast<F>(dlsym(library, symbol.c_str()));
  EXPECT_NE(function, nullptr) << symbol;
  return function;
}

/// Compiles `source` into a shared library under `dir` and opens it; the
/// runtime's headers (src/, include/) are on its include path.
inline void *compileAndOpen(const std::string &source, const std::string &dir) {
  const std::string cpp = dir + "/kernels.cpp", so = dir + "/kernels.so";
  std::ofstream(cpp) << source;
  // No contraction into fma: the kernels round after every op, as NVRTC's
  // --fmad=false keeps them. Every access checked for its alignment (which
  // the CPU would forgive and the GPU not): a vector load or store the
  // kernel's check let through misaligned aborts the test.
  const std::string command =
      std::string(ZERO_TEST_CXX_COMPILER) +
      " -std=c++17 -O1 -ffp-contract=off -fsanitize=alignment "
      "-fno-sanitize-recover=all -fPIC -shared -w -I" ZERO_RUNTIME_SOURCE_DIR
      "/src -I" ZERO_RUNTIME_SOURCE_DIR "/include -o " +
      so + " " + cpp + " 2> " + dir + "/log";
  if (std::system(command.c_str()) != 0) {
    std::ifstream log(dir + "/log");
    ADD_FAILURE() << "the host compiler failed on " << cpp << ":\n"
                  << std::string(std::istreambuf_iterator<char>(log), {});
    return nullptr;
  }
  void *library = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(library, nullptr) << dlerror();
  return library;
}

/// Kernels compiled into a library in a directory of their own, which
/// a test that fails keeps for a look.
class KernelLibrary {
public:
  /// `source` begins with kCudaShim.
  explicit KernelLibrary(const std::string &source)
      : dir_(std::filesystem::temp_directory_path() /
             ("zero-kernels-on-cpu-" + std::to_string(getpid()) + "-" +
              std::to_string(nextNumber()))) {
    std::filesystem::create_directories(dir_);
    library_ = compileAndOpen(source, dir_.string());
  }
  ~KernelLibrary() {
    if (library_)
      dlclose(library_);
    if (!::testing::Test::HasFailure())
      std::filesystem::remove_all(dir_);
    else
      ADD_FAILURE() << "the kernels' source is " << (dir_ / "kernels.cpp");
  }
  void *get() const { return library_; }

private:
  /// A library of its own path for each: the loader may keep a closed one
  /// (its unique symbols pin it) and give it again for the same path.
  static int nextNumber() {
    static int number = 0;
    return number++;
  }

  std::filesystem::path dir_;
  void *library_ = nullptr;
};

/// Memory as cudaMalloc gives it: 256-byte aligned, `shift` bytes past.
class Arena {
public:
  Arena(int64_t bytes, int64_t shift)
      : memory_(static_cast<std::byte *>(std::aligned_alloc(
                    256, static_cast<size_t>((bytes + 255) / 256 * 256 + 256))),
                &std::free),
        base_(memory_.get() + shift) {
    std::memset(base_, 0, static_cast<size_t>(bytes));
  }
  std::byte *base() const { return base_; }

private:
  std::unique_ptr<std::byte, decltype(&std::free)> memory_;
  std::byte *base_;
};

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_CUDA_KERNELSONCPU_H
