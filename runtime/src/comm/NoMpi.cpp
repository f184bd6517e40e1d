//===- NoMpi.cpp - the MPI entry points of a build without MPI ------------===//
//
// A runtime built where no MPI is installed (a GPU machine with only the
// CUDA toolkit) runs one rank; a launch under mpirun is refused clearly.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"

namespace zero::runtime {

StatusOr<std::unique_ptr<Communicator>>
createMpiCommunicator(const MpiOptions &) {
  return ZERO_ERROR(kUnavailable,
                    "this zero-run was built without MPI (CMake found none): "
                    "it runs one rank");
}

void abortJob(Communicator &, int) {}

} // namespace zero::runtime
