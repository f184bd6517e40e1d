//===- NoMpi.cpp - the MPI entry points of a build without MPI ------------===//
//
// A runtime built where no MPI is installed (a GPU machine with only the
// CUDA toolkit) runs one rank; a launch under mpirun is refused clearly.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"

#include <cstdlib>

namespace zero::runtime {

bool isLaunchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") ||
         std::getenv("PMI_SIZE");
}

StatusOr<std::unique_ptr<Communicator>> createMpiCommunicator(const MpiOptions &) {
  return ZERO_ERROR(kUnavailable,
                    "this zero-run was built without MPI (CMake found none): "
                    "it runs one rank");
}

void abortJob(Communicator &, int) {}

} // namespace zero::runtime
