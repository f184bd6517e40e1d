//===- RequireCuda.h - skipping tests that call CUDA themselves -*- C++ -*-===//
//
// Tests of kernels and communicators that call CUDA directly (not through a
// Device, so ZERO_GPU_TESTS_ON_HOST cannot stand in) skip, with the reason,
// where no GPU is visible. The check only counts the devices: under mpirun
// every rank asks, and a context on GPU 0 for each would be wasted.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_REQUIRECUDA_H
#define ZERO_RUNTIME_TEST_CUDA_REQUIRECUDA_H

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

namespace zero::runtime::cudatest {

/// Why CUDA cannot be used here; empty when it can.
inline const std::string &cudaUnavailableReason() {
  static const std::string reason = []() -> std::string {
    int count = 0;
    cudaError_t code = cudaGetDeviceCount(&count);
    if (code != cudaSuccess)
      return std::string("no usable CUDA device: ") + cudaGetErrorString(code);
    return count == 0 ? "no CUDA device" : "";
  }();
  return reason;
}

} // namespace zero::runtime::cudatest

#define ZERO_REQUIRE_CUDA()                                                    \
  do {                                                                         \
    if (!::zero::runtime::cudatest::cudaUnavailableReason().empty())           \
      GTEST_SKIP() << ::zero::runtime::cudatest::cudaUnavailableReason();      \
  } while (false)

#endif // ZERO_RUNTIME_TEST_CUDA_REQUIRECUDA_H
