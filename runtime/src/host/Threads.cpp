//===- Threads.cpp - threads of the host compute kernels ------------------===//

#include "zero/runtime/host/Threads.h"

#include "Parallel.h"

#ifdef ZERO_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <atomic>
#include <mutex>

namespace zero::runtime {

static std::atomic<bool> configured{false};

void setHostThreads(int count) {
  count = std::max(count, 1);
  host::setThreadCount(count);
#ifdef ZERO_HAVE_OPENBLAS
  openblas_set_num_threads(count);
#endif
  configured = true;
}

void host::ensureBlasThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef ZERO_HAVE_OPENBLAS
    if (!configured)
      openblas_set_num_threads(getThreadCount());
#endif
  });
}

int getHostThreads() { return host::getThreadCount(); }

} // namespace zero::runtime
