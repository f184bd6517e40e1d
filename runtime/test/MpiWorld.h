//===- MpiWorld.h - the MPI world of a multi-rank gtest program -*- C++ -*-===//
//
// The world communicator of a gtest program run under mpirun, made once and
// kept to the end of the program (it finalizes MPI), and the context of a
// collective named for the test's messages.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_MPIWORLD_H
#define ZERO_RUNTIME_TEST_MPIWORLD_H

#include "zero/runtime/Communicator.h"

#include <gtest/gtest.h>

#include <memory>

namespace zero::runtime::test {

/// MPI with a 30 s collective deadline; the self communicator, and a test
/// failure, where MPI cannot be started.
inline Communicator &world() {
  static std::unique_ptr<Communicator> comm = [] {
    MpiOptions options;
    options.timeoutSeconds = 30;
    StatusOr<std::unique_ptr<Communicator>> created =
        createMpiCommunicator(options);
    if (!created.isOk()) {
      ADD_FAILURE() << created.status().toString();
      return createSelfCommunicator();
    }
    return std::move(*created);
  }();
  return *comm;
}

inline CollectiveContext context(const char *what) { return {what, nullptr}; }

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_MPIWORLD_H
