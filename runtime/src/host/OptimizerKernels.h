//===- OptimizerKernels.h - host Adam and SGD element loops -----*- C++ -*-===//
//
// The element loops of zero.adam and zero.sgd (ops/OptimizerMath.h is the
// update they apply), for the ops and for an executor that runs an optimizer
// step itself. Each loop has a scalar form for any x86-64
// and AVX2+FMA and AVX-512 forms chosen at run time; all forms give the same
// bits: the vector forms perform the scalar form's operations (sqrt and
// division correctly rounded, fma exactly where it fuses) lane by lane.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_OPTIMIZERKERNELS_H
#define ZERO_RUNTIME_HOST_OPTIMIZERKERNELS_H

#include "ops/OptimizerMath.h"

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::host {

/// The instruction sets of the loops, in order of preference.
enum class KernelIsa { Scalar, Avx2, Avx512 };

/// The best form this CPU runs: AVX-512 needs avx512f; AVX2 needs avx2, fma
/// and f16c.
KernelIsa getSupportedKernelIsa();
/// The form the ops use: getSupportedKernelIsa() unless setKernelIsa chose
/// an older one (benchmarks and tests compare them).
KernelIsa getKernelIsa();
/// Chooses the form the ops use; one the CPU lacks falls back to the best it
/// has.
void setKernelIsa(KernelIsa isa);
const char *getKernelIsaName(KernelIsa isa);

using ops::AdamConstants;
using ops::AdamHyperparameters;
using ops::getAdamConstants;
using ops::SgdConstants;

/// The arrays of an Adam loop, updated in place at [0, n). `grad` is of
/// `gradType`: T, or for f32 math also BF16 or F16. `vMax` is null unless
/// amsgrad. `param16` (f32 math only) is null, or receives the updated
/// parameter rounded to `param16Type` (BF16 or F16, to nearest even, as
/// floatToBF16 and roundToF16 round).
template <typename T> struct AdamArrays {
  T *param;
  const void *grad;
  DType gradType;
  T *m, *v, *vMax;
  uint16_t *param16 = nullptr;
  DType param16Type = DType::BF16;
};

/// One Adam step over n elements on the calling thread with form `isa`
/// (which the CPU must have).
void adamLoop(KernelIsa isa, const AdamConstants<float> &c,
              const AdamArrays<float> &a, int64_t n);
void adamLoop(KernelIsa isa, const AdamConstants<double> &c,
              const AdamArrays<double> &a, int64_t n);

/// One Adam step on a shard of n f32 parameters, in place, on the host
/// threads (setHostThreads) in blocks, with getKernelIsa()'s form: what
/// zero.adam does on f32 state. When `param16` is given, the updated
/// parameter is also written there as `param16Type` (BF16 or F16) in the
/// same pass over memory, as DeepSpeed's CPU Adam writes the 16-bit copy
/// the next forward pass reads: the same bits as converting the parameter
/// afterwards, one read of it fewer. `grad` is F32, BF16 or F16; `vMax` is
/// null unless `h.amsgrad`. The caller checks h (its step and beta1) as
/// zero.adam does.
void runAdamStep(const AdamHyperparameters &h, int64_t n, float *param,
                 const void *grad, DType gradType, float *m, float *v,
                 float *vMax, uint16_t *param16 = nullptr,
                 DType param16Type = DType::BF16);

/// One SGD step over n elements in place; `buf` is read and written only
/// with momentum.
void sgdLoop(KernelIsa isa, const SgdConstants<float> &c, int64_t n,
             float *param, const float *grad, float *buf);
void sgdLoop(KernelIsa isa, const SgdConstants<double> &c, int64_t n,
             double *param, const double *grad, double *buf);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_OPTIMIZERKERNELS_H
