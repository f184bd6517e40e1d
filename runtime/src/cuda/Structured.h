//===- Structured.h - linalg.map/reduce/generic on the GPU ------*- C++ -*-===//
//
// The CUDA backend's linalg.map, linalg.reduce and linalg.generic: each is
// a kernel generated from the op (Codegen.h) and compiled at load
// (KernelCache.h). Prepare does all the work once: the loop nest, the
// source, the compile (or a cache hit), the kernel's arguments (every
// address is fixed by the memory plan) and the launch shape. Run is one
// cudaLaunchKernel on the compute stream.
//
// Thread mapping. One thread per point of the parallel iteration space
// (the loops every output indexes), in row-major order of those loops, so
// consecutive threads touch consecutive elements of row-major operands;
// a grid-stride loop covers any size with 64-bit offsets. Each thread
// runs the reduction loops itself, sequentially and in increasing index
// order, so every output element is combined in exactly the host's order
// and results match the host's bit for bit (the ops are rounded the same
// way; only transcendental functions may differ in the last ulp). Row
// reductions whose body is `combine(acc, f)` per output, over at least 64
// contiguous elements, are cooperative instead (Codegen.h): a warp per
// point, or a block of 256 threads above 4096 elements, combining in a
// fixed strided order and a __shfl_xor_sync butterfly; exact for integer,
// max and min combines, reassociated (deterministic, within the error
// bound) for float sums and products. No atomics. Blocks of 256 threads,
// fewer (whole warps) when the threads are few, so that long reductions
// still spread over every multiprocessor; at most one wave of resident
// blocks, the rest covered by the grid-stride loop (getLaunchShape). Nests
// with no split into parallel and reduction loops run in one thread
// (Codegen.h), and are slow but exact.
//
// Results and destinations. A thread (a cooperative group's first thread)
// reads its output elements' initial values from the destinations and
// writes the results, so a result in another buffer than its destination
// needs no copy (each output element belongs to exactly one thread). A
// destination that shares bytes with a result without being it is first
// copied into its result, as the host does (through scratch memory: the
// ranges overlap), and read there. Inputs that share no byte with any
// result are declared __restrict__ (read-only cache).
//
// Errors. The only failure of a running kernel is a tensor.extract index
// outside its tensor: the element reads as 0 and the first such index goes
// to the device's error record (CudaContext::errors, CudaOps.h), which the
// step's synchronize turns into the host's message, in the same step.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_STRUCTURED_H
#define ZERO_RUNTIME_CUDA_STRUCTURED_H

#include "CudaContext.h"
#include "ops/Body.h"

namespace zero::runtime::cuda {

/// Prepares linalg.map, linalg.reduce or linalg.generic `inst`, checked
/// with body `program` (ops::CheckedOp::body): generates and compiles its
/// kernel (ctx.kernels) and resolves its arguments; its scratch memory and
/// error sites are ctx.tracker's and ctx.errors'. A compile error names the
/// instruction (ctx.where) and carries the first lines of NVRTC's log.
PreparedOpOr prepareStructured(const Instruction &inst,
                               const ops::BodyProgram &program,
                               const CudaContext &ctx);

struct RowProgram;

/// Prepares a row program (RowFusion.h) whose memory allows one kernel
/// (checkRowProgramMemory): its scalar constants as they are, then one
/// launch of its generated kernel.
PreparedOpOr prepareRowProgram(const RowProgram &program,
                               const CudaContext &ctx);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_STRUCTURED_H
