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
// space is one GPU thread (grid-stride loop, 64-bit indices; a warp or a
// block for the cooperative reductions below) that owns its
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
// Cooperative reductions (planCooperative). A row reduction on one thread
// per point reads addresses a row apart in adjacent threads and runs a row
// of 50257 in 50257 dependent steps. When the body allows it, a warp (32
// threads) or, for more than 4096 reduced elements, a block (256 threads)
// reduces each point instead. It allows it when:
//   - every output o yields `combine(acc_o, f)`: combine is one of addf,
//     mulf, maximumf, minimumf, addi, muli, maxsi, minsi, andi, ori, xori
//     applied to o's own block argument acc_o, and no other op of the body
//     (f included) depends on any output's block argument, so f can be
//     evaluated for any element in any order;
//   - the innermost loop (of size > 1) is in-thread, and every input the
//     body reads has stride 0 or 1 along it: a warp's lanes read
//     consecutive elements. Where an input is strided along it (a
//     transposed operand), thread-per-point is the layout that reads
//     consecutive addresses in adjacent threads, and stays;
//   - each point combines at least 64 elements, two per lane (a chosen,
//     not measured, threshold: below it the five shuffle steps per output
//     outweigh a lane's share of the row).
// The number of points sets no limit: with the innermost loop contiguous,
// thread-per-point touches 32 rows per warp-wide load at any point count,
// so many points do not make it coalesced. Above 4096 elements a block
// shortens each thread's serial chain eightfold (50257: 197 steps, not
// 1571), which matters most when the points are few.
// The order, fixed by the shape alone (the same bits on every run and GPU):
// the in-thread loops are flattened row-major into elements e in [0, n);
// thread t of T (T = 32 or 256) combines f(t), f(t + T), f(t + 2T), ...
// starting from f(t) (every thread has one: n >= T); the warp combines its
// lanes' values with __shfl_xor_sync at lane distances 16, 8, 4, 2, 1; a
// block then combines its 8 warps' values (lane w of warp 0 holds warp w's)
// at distances 4, 2, 1; finally `combine(init, tree)` once, init being the
// destination's element, stored by thread 0 of the group. Each op rounds
// to its dtype as elsewhere. Integer combines, maximumf and minimumf are
// exact in any order (NaN payloads aside): results equal the host's. Float
// sums and products are reassociated: not the host's bits, but within
// twice the worst-case bound of any order, 2 gamma_n S (n terms, S the sum
// of their magnitudes and the initial value's; the tests' bound,
// StructuredCases.h), and the same bits on every run.
//
// Column reductions. A reduction whose innermost loop (of size > 1) is
// parallel, such as a bias gradient summing [8192, 768] over its rows,
// would otherwise run 768 threads, each 8192 dependent steps down a
// column: 24 warps on a 132-SM GPU. When the body allows it (the same
// combine rule as above; every input the body reads, and every output,
// contiguous or broadcast along that loop), there are at most 16384
// points and 8 outputs and each point combines at least 64 elements, a
// block of 256 threads
// takes P adjacent points (P = 32 bytes over the narrowest contiguous
// input's element width, 8 to 32: each row of the block's loads fills
// whole sectors) and S = 256 / P slices per point. The order, fixed by
// the shape alone: slice s combines f(s), f(s + S), f(s + 2S), ...
// (elements flattened row-major as above) starting from f(s); the slices'
// partials then combine through shared memory, slice s with slice s + m
// for m = S/2, ..., 1; finally combine(init, tree), stored by slice 0.
// Floats are reassociated within the same bound as above.
//
// Vectors (planVector). A nest with no in-thread loop, such as an
// elementwise map, a cast or a bias add, is a stream: one element per
// thread and scalar loads keep too few bytes in flight to fill the memory
// system (a bf16 map loads 2 bytes per input per thread). Each thread then
// takes V adjacent points along the innermost loop (V = 8, 4 or 2: the
// largest that divides that loop, or the run of loops around it that every
// operand steps through as one, and keeps every vector within 16 bytes),
// loads each contiguous operand as one V-element vector, runs the body V
// times in registers (unrolled) and stores each result as one vector. It
// does so when every output is contiguous along that loop with its
// strides outside the run multiples of V, and the body has no linalg.index and
// no tensor.extract. An input broadcast along the loop (stride 0) is loaded
// once per thread; a contiguous one whose strides outside the run are not
// multiples of V, or a strided one (a transposed operand), element by
// element. The
// vectors need V * width-byte alignment, which the kernel checks on its
// pointers once: if one is not aligned, every thread runs the scalar
// loop instead. Each element's arithmetic is the same either way, so the
// results are the same bits.
//
// Numerics. Every value of the body is a `float` (f32, bf16 and f16,
// already rounded to their dtype: each is exact in f32), a `double` (f64)
// or a `long long` (integers, wrapped to their width: i1 as 0/1, i32
// sign-extended); the host holds every float in a double register
// (ops/Elements.h). Each float op rounds to its result type: + - * / and
// sqrt are computed in f32 for float values, which rounds as the host's
// double does (ops/ElementMath.h's file comment: f32 has 2p + 2 bits for
// every narrower type), negation, fabs, maximumf / minimumf (NaN
// propagating, -0 < +0), compares and selects are exact in any type, and
// everything else (exp, log, tanh, pow, fmod, rsqrt) widens its operands
// to double as the host does, as do conversions from integers to bf16 and
// f16 (to f32 they round once). Integer ops
// wrap; fptosi/fptoui saturate; division by zero yields 0. The kernels are
// compiled with --fmad=false, so nothing is contracted behind the code's
// back: + - * / and sqrt match the host bit for bit; the transcendental
// functions (CUDA's double libm vs glibc) may differ in the last two ulps
// of a double (CUDA bounds its pow, erf, sin and cos by 2 ulps), which
// rounding to f32 and narrower nearly always hides. NaNs are NaN on both
// sides, not necessarily with the same bits (nor the same sign).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_CODEGEN_H
#define ZERO_RUNTIME_CUDA_CODEGEN_H

#include "ops/Body.h"
#include "ops/LoopSpace.h"
#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Status.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace zero::runtime::cuda {

/// An operand of the loop nest: its element stride along every loop.
/// A tensor operand (an input or a destination) and its strides
/// (ops/LoopSpace.h, the one lowering of the three ops).
using NestOperand = ops::LoopOperand;

/// Threads that reduce one point together on the cooperative paths.
constexpr int kWarpThreads = 32;
constexpr int kBlockReductionThreads = 256;
/// Elements per point from which a warp, and above which a block, reduces
/// each point (Codegen.h's file comment).
constexpr int64_t kMinCooperativeElements = 64;
constexpr int64_t kMaxWarpElements = 4096;
/// The largest block of any launch (and the kernels' __launch_bounds__).
constexpr int kMaxBlockSize = 256;
/// Column reductions (Codegen.h's file comment): at most this many points
/// (beyond, a thread per point already keeps enough loads in flight), a
/// block's points spanning a 32-byte sector of the narrowest input, at
/// least 8 of them.
constexpr int64_t kMaxColumnPoints = 16384;
/// Each output takes 2 KiB of the block's shared memory (a double per
/// thread): at most 8 outputs, 16 KiB, well inside the 48 KiB a kernel's
/// static shared memory may use.
constexpr size_t kMaxColumnOutputs = 8;
constexpr int64_t kSectorBytes = 32;
constexpr int64_t kMinColumnPoints = 8;

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
  /// The body, checked (ops/Body.h): which arguments it reads, the scalars
  /// and tensors it takes from outside, and what each of its ops computes
  /// (regionOps, by index in body->ops).
  ops::BodyProgram program;
  /// Threads per point of the parallel space: 1, or kWarpThreads or
  /// kBlockReductionThreads for a cooperative reduction (planCooperative).
  int pointThreads = 1;
  /// A column reduction: the adjacent points a block of 256 threads
  /// reduces, pointThreads (its slices) per point; 0 otherwise.
  int pointsPerBlock = 0;
  /// Points each thread computes as vectors (planVector): 1, or V = 2, 4
  /// or 8 adjacent points along `vectorLoop`, the innermost loop, which
  /// every operand steps through with loops vectorLoopsFrom.. as one.
  int vectorWidth = 1;
  size_t vectorLoop = 0;
  size_t vectorLoopsFrom = 0;
  /// When cooperative, per output: the body op (index in body->ops) that
  /// combines its block argument, and that argument's operand position.
  std::vector<size_t> combineOps;
  std::vector<size_t> accumulatorOperand;

  /// Points of the parallel space: the product of the parallel loops (1
  /// when sequential).
  int64_t numPoints() const;
  /// Elements each point combines: the product of the in-thread loops.
  int64_t numElements() const;
  int64_t numThreads() const {
    return numPoints() * pointThreads / vectorWidth;
  }
};

/// The loop nest of linalg.map, linalg.reduce or linalg.generic `inst`,
/// checked (ops::checkComputeOp) with body `program` (its CheckedOp::body);
/// an error here is internal.
StatusOr<LoopNest> buildLoopNest(const Instruction &inst,
                                 const ValueTable &values,
                                 const ops::BodyProgram &program);

/// Sets nest.pointThreads (and the combine ops) by the rule of the file
/// comment; buildLoopNest calls it. Exposed for tests.
void planCooperative(LoopNest &nest);
/// Sets nest.vectorWidth and vectorLoop by the rule of the file comment
/// ("Vectors"); buildLoopNest calls it after planCooperative.
void planVector(LoopNest &nest);
/// The largest vector a thread loads or stores, in bytes.
constexpr int64_t kMaxVectorBytes = 16;
constexpr int kMaxVectorWidth = 8;

struct CodegenOptions {
  /// No input shares memory with a result: inputs become
  /// `const T *__restrict__` (loads through the read-only path).
  bool restrictInputs = false;
  /// Threads per block the kernel is compiled for (__launch_bounds__).
  int maxBlockSize = kMaxBlockSize;
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
  /// LoopNest's: threads per point (1, 32 or 256), points, all threads.
  int pointThreads = 1;
  int pointsPerBlock = 0; // LoopNest's
  int vectorWidth = 1;    // LoopNest's
  int64_t numPoints = 1;
  int64_t numThreads = 1;
  bool sequential = false;
  size_t numParameters() const {
    return 2 * numOutputs + numInputs + scalars.size() + tensors.size() +
           (extractSites.empty() ? 0 : 3);
  }
};

/// What a kernel parameter points at: a tensor's memory, or the register of
/// an outside scalar (`isRegister`).
struct KernelArgument {
  int64_t value = -1;
  bool isRegister = false;
};

/// The values `kernel` (of `nest`) takes, in its parameters' order (the
/// error record's three aside): every device binds its arguments by this.
std::vector<KernelArgument> getKernelArguments(const LoopNest &nest,
                                               const GeneratedKernel &kernel);

/// The kernel of `nest`. Fails only on an op the generator does not know
/// (internal: the checks admit only the ops of OpSet.def).
StatusOr<GeneratedKernel> generateKernel(const LoopNest &nest,
                                         const ValueTable &values,
                                         const CodegenOptions &options = {});

/// A kernel's launch: `blocks` of `threads` (no launch when blocks is 0).
struct LaunchShape {
  int64_t blocks = 0;
  int threads = 1;
};

/// The most threads a multiprocessor holds on sm_80 and sm_90 (sm_86 and
/// sm_89 hold 1,536): the bound of a launch's resident threads where the
/// occupancy API cannot be asked (the cost model; a failed query).
constexpr int kThreadsPerMultiprocessor = 2048;

/// The launch of `kernel` on a GPU with `multiProcessors`: blocks of 256
/// threads (a block per point for block reductions, per pointsPerBlock
/// points for column reductions), halved down to 32
/// while the threads would not give every multiprocessor a block; at most
/// one wave of resident blocks, the grid-stride loops doing the rest; one
/// thread for sequential nests. `residentThreads` is how many of the
/// kernel's threads a multiprocessor holds at once in blocks of 256 (its
/// occupancy: the CUDA device asks the driver, getResidentThreads; the
/// cost model, which compiles nothing, takes the full 2048), rounded down
/// to whole blocks, at least one.
LaunchShape getLaunchShape(const GeneratedKernel &kernel, int multiProcessors,
                           int residentThreads = kThreadsPerMultiprocessor);

/// The helpers every generated source starts with (conversions, rounding,
/// the integer and float ops the host defines specially). Exposed for
/// tests; generateKernel includes it.
const std::string &getKernelPrelude();

/// `value` as a C++ double literal that reads back exactly ("0.5", "1.0",
/// "-0.0", "1e-05"; infinities and NaNs as a bit pattern).
std::string formatDoubleLiteral(double value);

// The pieces of a generated kernel that the fused row programs
// (RowFusion.h) share with the structured ops, so that a body op is
// spelled, rounded and wrapped the same way in both.

/// The value of checked body op `op` (not linalg.index or tensor.extract)
/// with its operands named `operands`, rounded or wrapped to its result
/// type.
StatusOr<std::string>
bodyOpExpression(const ops::ScalarOp &op,
                 const std::vector<std::string> &operands);
/// The literal of a checked body constant, in its type's canonical form.
std::string bodyConstantLiteral(const ops::ScalarOp &op);
/// Element pointer types ("unsigned short"), the register file's types
/// ("double", for an outside scalar's pointer) and the types values have
/// in a kernel ("float" for f32, bf16 and f16; see Numerics above).
const char *elementTypeName(DType type);
const char *registerTypeName(DType type);
const char *valueTypeName(DType type);
std::string int64Literal(int64_t value);
/// Kernel source built statement by statement, indented by block.
class SourceWriter {
protected:
  void line(const std::string &text) {
    out_ << std::string(indent_ * 2, ' ') << text << "\n";
  }
  void open(const std::string &text) {
    line(text + " {");
    ++indent_;
  }
  void close() {
    --indent_;
    line("}");
  }
  std::ostringstream out_;
  int indent_ = 0;
};
/// `zk::loadF32(pointer, offset)` and `zk::storeF32(pointer, offset, value);`.
std::string loadExpression(DType type, const std::string &pointer,
                           const std::string &offset);
std::string storeStatement(DType type, const std::string &pointer,
                           const std::string &offset, const std::string &value);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_CODEGEN_H
