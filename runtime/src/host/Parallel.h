//===- Parallel.h - splitting element loops across threads ------*- C++ -*-===//
//
// Kernels split large loops into fixed blocks whose results do not depend on
// which thread runs them, so a run is bitwise the same for any thread count.
// The threads wait blocked between loops (no spinning): ranks often share
// a machine's few cores with each other, OpenBLAS and MPI.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_PARALLEL_H
#define ZERO_RUNTIME_HOST_PARALLEL_H

#include <cstdint>
#include <functional>

namespace zero::runtime::host {

/// Below this many element operations a loop runs on the calling thread:
/// waking the other threads costs more than it saves.
constexpr int64_t kParallelMinWork = int64_t(1) << 17;

/// Threads of parallelFor (1: everything on the caller).
int getThreadCount();
void setThreadCount(int count);

/// Gives OpenBLAS the kernels' thread count unless setHostThreads did: its
/// own default (every core, spinning) starves ranks that share a machine.
void ensureBlasThreads();

/// Runs fn(k) for k in [0, numTasks): with T threads, thread t runs tasks
/// [t * numTasks / T, (t + 1) * numTasks / T). Calls from inside a task, or
/// while another thread's loop runs, run on the caller.
void parallelFor(int64_t numTasks, const std::function<void(int64_t)> &fn);

/// Calls fn(begin, end) for the blocks [k * block, min((k+1) * block, n)),
/// on several threads when `work` is large enough.
template <typename Fn>
void parallelBlocks(int64_t n, int64_t block, int64_t work, Fn fn) {
  const int64_t numBlocks = (n + block - 1) / block;
  auto runBlock = [&](int64_t k) {
    fn(k * block, k * block + block < n ? k * block + block : n);
  };
  if (numBlocks <= 1 || work < kParallelMinWork || getThreadCount() == 1) {
    for (int64_t k = 0; k < numBlocks; ++k)
      runBlock(k);
    return;
  }
  parallelFor(numBlocks, runBlock);
}

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_PARALLEL_H
