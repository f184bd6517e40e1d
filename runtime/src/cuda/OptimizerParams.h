//===- OptimizerParams.h - the optimizer kernels' tables --------*- C++ -*-===//
//
// A multi-tensor apply's tables (Optimizers.cu's file comment): one entry
// per tensor, one chunk per block. Plain data, shared by the planner
// (OptimizerTables.h), the launches and the kernels (OptimizerKernels.cuh),
// which a test also compiles for the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_OPTIMIZERPARAMS_H
#define ZERO_RUNTIME_CUDA_OPTIMIZERPARAMS_H

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::cuda {

/// Threads of an optimizer kernel's block, and elements of a chunk (a
/// multiple of 4: float4 stays aligned).
constexpr int kOptimizerThreads = 256;
constexpr int64_t kOptimizerChunk = 65536;

/// One instruction's tensors (the results, already holding the state
/// operands) and scalars. For SGD, `m` is the momentum buffer and `v` unused;
/// `vMax` is Adam's max_exp_avg_sq with amsgrad, else unused.
struct OptimizerTensor {
  void *param;
  const void *grad;
  void *m;
  void *v;
  void *vMax;
  DType paramType, gradType, mType, vType, vMaxType;
  int64_t numel;
  int64_t lrRegister;
  // The gradient scalars, -1 where absent (ops::GradientScalingOperands).
  int64_t scaleRegister, coefRegister, skipRegister;
  // Adam; beta1Register is -1 without a scheduled beta1.
  int64_t stepRegister, beta1Register;
  double beta1, beta2, eps;
  // Both.
  double weightDecay;
  // SGD.
  double momentum, dampening;
  bool adamw, biasCorrection, amsgrad, nesterov;
  bool vec4;
  // The 16-bit copy of the new parameter (a fused cast), else null.
  void *cast;
  DType castType;
  int32_t stepSite, beta1Site; // Adam's checks
};

struct Chunk {
  int32_t tensor;
  int64_t begin, end;
};

/// One input of zero.any_nonfinite.
struct CheckedTensor {
  const void *data;
  DType type;
};

/// The kernel's running state between its blocks, zero between launches.
struct NonFiniteTally {
  unsigned found;    // some block found an infinity or a NaN
  unsigned finished; // blocks done
};

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_OPTIMIZERPARAMS_H
