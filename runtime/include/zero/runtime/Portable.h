//===- Portable.h - code compiled for the host and the GPU ------*- C++ -*-===//
//
// ZERO_HD marks an inline function that the host compiler and nvcc both
// compile, for the CPU and (under nvcc) the GPU: the one definition of a
// computation whose results the host and CUDA backends must agree on bit
// for bit (the block quantizer's element math, host/QuantizeMath.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_PORTABLE_H
#define ZERO_RUNTIME_PORTABLE_H

#if defined(__CUDACC__)
#define ZERO_HD __host__ __device__
#else
#define ZERO_HD
#endif

#endif // ZERO_RUNTIME_PORTABLE_H
