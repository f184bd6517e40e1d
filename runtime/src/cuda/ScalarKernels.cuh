//===- ScalarKernels.cuh - scalar ops on the device's registers -*- CUDA
//-*-===//
//
// The one-thread kernel of a top-level scalar op (ScalarOps.cu's file
// comment says why): ops/ScalarMath.h's value, the host's, on the register
// file in device memory. Device code with no CUDA header: nvcc compiles it
// in ScalarOps.cu, and ScalarKernelsOnCpuTest with the host compiler for
// the CPU (runtime/test/cuda/KernelsOnCpu.h), against the host's every op.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_SCALARKERNELS_CUH
#define ZERO_RUNTIME_CUDA_SCALARKERNELS_CUH

#include "ScalarParams.h"

namespace zero::runtime::cuda {

__global__ void scalarOpKernel(Scalar *registers, ScalarParams p) {
  Scalar in[3];
  for (int i = 0; i < 3; ++i)
    in[i].i = 0;
  for (int i = 0; i < p.numOperands; ++i)
    in[i] = registers[p.operands[i]];
  registers[p.result] = ops::applyScalarOp(p.op, in[0], in[1], in[2]);
}

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_SCALARKERNELS_CUH
