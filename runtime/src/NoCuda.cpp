//===- NoCuda.cpp - the CUDA entry points of a build without CUDA ---------===//

#include "zero/runtime/Communicator.h"
#include "zero/runtime/CostModel.h"
#include "zero/runtime/Device.h"

namespace zero::runtime {

static const char *kNoCuda =
    "this zero-run was built without the CUDA backend (CMake found no CUDA "
    "toolkit)";

bool hasCudaBackend() { return false; }

void prepareProcessForCuda() {}

StatusOr<std::unique_ptr<Device>> createCudaDevice(int) {
  return ZERO_ERROR(kUnavailable, kNoCuda);
}

StatusOr<std::unique_ptr<Communicator>>
createDeviceCommunicator(Communicator &, const DeviceCommunicatorOptions &) {
  return ZERO_ERROR(kUnavailable, kNoCuda);
}

int countVisibleCudaDevices() { return 0; }

std::vector<std::string> getCostModelDevices() { return {}; }

StatusOr<CostExplanation> explainSchedule(const Schedule &, const std::string &,
                                          const std::vector<DeviceFigure> &) {
  return ZERO_ERROR(kUnavailable,
                    std::string(kNoCuda) +
                        ": the cost model prices the CUDA backend's plan");
}

} // namespace zero::runtime
