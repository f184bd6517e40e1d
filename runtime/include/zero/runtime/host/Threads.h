//===- Threads.h - threads of the host compute kernels ----------*- C++ -*-===//
//
// The host kernels split large loops across a pool of threads and call
// OpenBLAS, which has its own. Results are bitwise the same for any thread
// count. The default is 1 (OpenBLAS too, unless this was called first);
// ranks sharing a machine should divide its cores among them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_THREADS_H
#define ZERO_RUNTIME_HOST_THREADS_H

namespace zero::runtime {

/// Sets the threads of the kernels' loops and of OpenBLAS (at least 1).
void setHostThreads(int count);
/// The threads the kernels' loops use.
int getHostThreads();

} // namespace zero::runtime

#endif // ZERO_RUNTIME_HOST_THREADS_H
