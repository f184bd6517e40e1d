//===- Threads.cpp - threads of the host compute kernels ------------------===//

#include "zero/runtime/host/Threads.h"

#include "Parallel.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace zero::runtime {

static std::atomic<bool> configured{false};

void setHostThreads(int count) {
  count = std::max(count, 1);
  host::setThreadCount(count);
  openblas_set_num_threads(count);
  configured = true;
}

void host::ensureBlasThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!configured)
      openblas_set_num_threads(getThreadCount());
  });
}

int getHostThreads() { return host::getThreadCount(); }

} // namespace zero::runtime
