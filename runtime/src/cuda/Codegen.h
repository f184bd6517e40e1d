//===- Codegen.h - CUDA C++ kernels from linalg region bodies ---*- C++ -*-===//
//
// linalg.map, linalg.reduce and linalg.generic run on the GPU as kernels
// generated from the op's region body and compiled with NVRTC when the
// schedule is loaded (KernelCache.h). This file is the generator: plain
// C++ with no CUDA header, so that it is unit-tested (and its output
// compiled by NVRTC) on machines without a GPU.
//
// Why generated code. A body is an arbitrary DAG of scalar ops over any
// mix of dtypes; interpreting it per element on the GPU would cost a
// dispatch per op and element. A kernel per body, with the loop sizes and
// strides baked in as constants, lets NVRTC fold the index arithmetic
// (divisions by constants become multiplies), keep every value in
// registers and drop unused loads. NVRTC rather than nvcc at build time:
// the bodies exist only in the schedule. Body values are named by their
// position (argument, op, outside scalar), never by value id, so the same
// op at another place of the schedule (every layer) is the same source and
// shares one compiled kernel.
//
// The loop nest (buildLoopNest). The three ops are one loop nest: loop
// sizes, and per operand its element stride along every loop (0 where it
// does not depend on the loop; indexing maps are projected permutations).
// A loop that every output indexes is *parallel*; a loop that no output
// indexes is *in-thread* (a reduction loop, or a parallel loop nobody
// stores along); a loop of size 1 is parallel. Each point of the parallel
// space is one GPU thread (grid-stride loop, 64-bit indices) that owns its
// output elements, reads their initial values from the destinations, runs
// the in-thread loops nested in increasing loop order (lexicographic, as
// the host does) with the outputs' block arguments as accumulators, and
// stores the last yield into the results. This is exactly the host's
// sequential semantics (every point in lexicographic order, outputs read
// and written in place), because the points that touch one output element
// are visited in that order and no two threads touch the same element.
// A nest where some loop is indexed by some outputs but not others
// (size > 1) has no such split: it runs in one thread, every loop in order
// (`sequential`), after copying the destinations into the results.
//
// Numerics. Every value of the body is a `double` (floats, already
// rounded to their dtype) or a `long long` (integers, wrapped to their
// width: i1 as 0/1, i32 sign-extended), as in the host's registers
// (host/Elements.h). Each float op is computed in double and rounded to
// its result type; integer ops wrap; fptosi/fptoui saturate; maximumf /
// minimumf propagate NaN with -0 < +0; division by zero yields 0. The
// kernels are compiled with --fmad=false, so nothing is contracted behind
// the code's back: + - * / and sqrt match the host bit for bit; the
// transcendental functions (CUDA's double libm vs glibc) may differ in the
// last ulp of a double, which rounding to f32 and narrower nearly always
// hides. NaNs are NaN on both sides, not necessarily with the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_CODEGEN_H
#define ZERO_RUNTIME_CUDA_CODEGEN_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::runtime::cuda {

/// An operand of the loop nest: its element stride along every loop.
struct NestOperand {
  int64_t value = -1; // the tensor value id (an input or a destination)
  DType dtype = DType::F32;
  std::vector<int64_t> strides;
  int64_t numel = 0;
};

/// linalg.map, linalg.reduce or linalg.generic as a loop nest.
struct LoopNest {
  std::vector<int64_t> loopSizes;
  /// Per loop: run inside each thread (no output indexes it) rather than
  /// across threads. Meaningless when `sequential`.
  std::vector<bool> inThread;
  /// One thread runs every loop in order (see the file comment).
  bool sequential = false;
  std::vector<NestOperand> inputs;
  /// The destinations; the results have their shapes (and strides).
  std::vector<NestOperand> outputs;
  std::vector<int64_t> results; // value ids, one per output
  const RegionBody *body = nullptr;

  /// Threads of the parallel space: the product of the parallel loops
  /// (1 when sequential).
  int64_t numThreads() const;
};

/// The loop nest of a checked linalg.map, linalg.reduce or linalg.generic
/// (host::checkInstruction has verified it; an error here is internal).
StatusOr<LoopNest> buildLoopNest(const Instruction &inst,
                                 const ValueTable &values);

struct CodegenOptions {
  /// No input shares memory with a result: inputs become
  /// `const T *__restrict__` (loads through the read-only path).
  bool restrictInputs = false;
  /// Threads per block the kernel is compiled for (__launch_bounds__).
  int maxBlockSize = 256;
};

/// Where a tensor.extract of the body reads, for out-of-range messages.
struct ExtractSite {
  size_t bodyOp = 0;   // index in RegionBody::ops
  int64_t tensor = -1; // value id
};

/// A generated kernel and the meaning of its parameters, in order:
///   for each output: the result pointer, then the destination pointer;
///   for each input: its pointer;
///   for each of `scalars`: a pointer to its register (8 bytes);
///   for each of `tensors`: its pointer;
///   when `extractSites` is not empty: the device's error record
///   (DeviceErrorRecord, CudaOps.h; `ZkError` in the source), the site of
///   extractSites[0] there (an int; the others follow it), and the step (a
///   long long), so that an index outside its tensor is reported with the
///   host's message in the step that found it.
/// Element pointers are typed by dtype (bf16/f16 as unsigned short, i1 as
/// unsigned char).
struct GeneratedKernel {
  std::string name; // the __global__ function, extern "C"
  std::string source;
  std::vector<int64_t> scalars; // value ids of scalars from outside
  std::vector<int64_t> tensors; // value ids of tensors extracted from
  std::vector<ExtractSite> extractSites;
  size_t numInputs = 0;
  size_t numOutputs = 0;
  int64_t numThreads = 1;
  size_t numParameters() const {
    return 2 * numOutputs + numInputs + scalars.size() + tensors.size() +
           (extractSites.empty() ? 0 : 3);
  }
};

/// The kernel of `nest`. Fails only on an op the generator does not know
/// (internal: the checks admit only the ops of OpSet.def).
StatusOr<GeneratedKernel> generateKernel(const LoopNest &nest,
                                         const ValueTable &values,
                                         const CodegenOptions &options = {});

/// The helpers every generated source starts with (conversions, rounding,
/// the integer and float ops the host defines specially). Exposed for
/// tests; generateKernel includes it.
const std::string &getKernelPrelude();

/// `value` as a C++ double literal that reads back exactly ("0.5", "1.0",
/// "-0.0", "1e-05"; infinities and NaNs as a bit pattern).
std::string formatDoubleLiteral(double value);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_CODEGEN_H
