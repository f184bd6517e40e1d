//===- Cublas.h - cuBLAS, loaded with the first CUDA device -----*- C++ -*-===//
//
// The CUDA backend calls cuBLAS through this table, loaded (dlopen) when the
// first device is created, not linked: libcublas brings libcublasLt, whose
// loading alone takes 0.4 s of every process that links it, which each
// zero-run and test binary on the host backend would pay for nothing (the
// test suites start thousands of them). A missing or unloadable library is
// an error of creating the device, naming the library.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_CUBLAS_H
#define ZERO_RUNTIME_CUDA_CUBLAS_H

#include "zero/runtime/Status.h"

#include <cublas_v2.h>

namespace zero::runtime::cuda {

/// The cuBLAS functions the backend calls, by their exported names
/// (cublas_v2.h maps cublasCreate to cublasCreate_v2, ...).
#define ZERO_CUBLAS_FUNCTIONS(X)                                               \
  X(cublasCreate)                                                              \
  X(cublasDestroy)                                                             \
  X(cublasSetStream)                                                           \
  X(cublasSetWorkspace)                                                        \
  X(cublasSetMathMode)                                                         \
  X(cublasGetStatusString)                                                     \
  X(cublasGetStatusName)                                                       \
  X(cublasGemmStridedBatchedEx_64)

struct CublasApi {
#define ZERO_CUBLAS_MEMBER(name) decltype(&::name) name = nullptr;
  ZERO_CUBLAS_FUNCTIONS(ZERO_CUBLAS_MEMBER)
#undef ZERO_CUBLAS_MEMBER
};

/// Loads cuBLAS on the first call (thread-safe) and returns its functions;
/// the same error on every call if it cannot be loaded.
StatusOr<const CublasApi *> loadCublas();

/// The loaded functions; only after loadCublas() succeeded (a device
/// exists).
const CublasApi &cublas();

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_CUBLAS_H
