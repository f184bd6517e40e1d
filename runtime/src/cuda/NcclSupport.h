//===- NcclSupport.h - NCCL errors as Status values -------------*- C++ -*-===//
//
// ZERO_NCCL_RETURN_IF_ERROR turns a failed NCCL call into a Status that names
// the call, NCCL's text for the code and its last error message:
//
//   ncclCommInitRankConfig(...): unhandled system error (run with
//   NCCL_DEBUG=WARN for details): socket connect failed
//
// ncclInProgress is not an error here: a non-blocking communicator (the only
// kind the runtime creates) returns it while the call completes in the
// background, and the caller then polls ncclCommGetAsyncError (as
// NcclCommunicator does after every call that may return it).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_NCCLSUPPORT_H
#define ZERO_RUNTIME_CUDA_NCCLSUPPORT_H

#include "zero/runtime/Status.h"

#include <nccl.h>

#include <string>

// Non-blocking communicators (ncclConfig_t, ncclCommInitRankConfig,
// ncclCommFinalize) came with NCCL 2.14.
#if !defined(NCCL_VERSION_CODE) || NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "the CUDA backend needs NCCL 2.14 or later (non-blocking communicators)"
#endif

namespace zero::runtime::cuda {

/// "<what>: <ncclGetErrorString(code)>: <ncclGetLastError>" as a Status with
/// the call's file and line; kInvalidArgument for NCCL's invalid-argument and
/// invalid-usage codes, kUnavailable otherwise.
Status ncclError(ncclResult_t code, const char *what, const char *file,
                 int line);

/// NCCL's text for `code`, with its last error message when it has one.
std::string describeNcclError(ncclResult_t code);

} // namespace zero::runtime::cuda

#define ZERO_NCCL_RETURN_IF_ERROR(expr)                                        \
  do {                                                                         \
    ncclResult_t zeroNcclCode_ = (expr);                                       \
    if (zeroNcclCode_ != ncclSuccess && zeroNcclCode_ != ncclInProgress)       \
      return ::zero::runtime::cuda::ncclError(zeroNcclCode_, #expr, __FILE__,  \
                                              __LINE__);                       \
  } while (false)

#endif // ZERO_RUNTIME_CUDA_NCCLSUPPORT_H
