//===- RowFusion.h - softmax and layer norm as one kernel -------*- C++ -*-===//
//
// Softmax and layer norm reach the runtime as a dozen instructions each:
// row reductions (linalg.reduce over the innermost dimension), broadcasts
// of their results back to the rows, and elementwise linalg.map ops, with
// the fills and scalar constants between them. Run one by one they read
// and write every row several times and materialize the broadcasts (GPT-2
// 124M's attention softmax: 8 x 12 x 1024 x 1024 scores, six passes over
// them). The CUDA backend runs such a run of instructions as one kernel, a
// *row program*: a warp (or a block) per row keeps the row's values in
// registers, reduces them cooperatively and writes to memory only the
// values that some instruction outside the run reads.
//
// What a row program is. Consecutive compute instructions of one stream,
// over tensors of a row shape S = [P..., R] and its point shape [P...]:
//   - arith.constant of a scalar (run before the kernel, as it is);
//   - linalg.fill of a point or row tensor with a scalar of its dtype;
//   - linalg.reduce of a row tensor over its last dimension into a point
//     tensor, with a body a cooperative reduction allows (Codegen.h:
//     `combine(acc, f(x))`);
//   - linalg.broadcast of a point tensor along the last dimension, or of a
//     vector [R] from outside along the leading ones, to a row tensor;
//   - linalg.map over row tensors or over point tensors (no body reads the
//     destination; no tensor.extract).
// It starts at the instruction the plan tries (ComputePlan.h), extends
// while the instructions qualify, and ends at its last map, reduce or
// broadcast; it needs a reduction and a map after it (else the ops alone
// are as good).
// The row length R and the threads per row T are the cooperative
// reduction's (a warp up to 4096 elements, a block of 256 above), and each
// thread holds at most kMaxRowElementsPerThread elements of a row value
// (R <= 1024 for a warp, 4096 < R <= 8192 for a block): longer rows run
// unfused.
//
// The kernel. Point p's group of T threads runs the instructions in order;
// thread t owns the row's elements r = t, t + T, ... (k-th in register
// k). A map computes its body per element from its inputs' registers; a
// broadcast costs nothing (its elements are the point's register or the
// vector's loads); a reduction combines each thread's elements in order,
// then the group's partial values exactly as the cooperative reduction
// kernel does (Codegen.h: shuffles at lane distances 16..1, a block's warps
// through shared memory), then `combine(init, tree)` once, and gives the
// result to every thread of the group. Every value is rounded as the
// instruction alone rounds it, so a row program computes the same bits as
// its instructions run one by one on the GPU.
//
// Memory. A value defined in the program is written only when something
// other than the program's instructions uses it (any stream, a free, a
// result of the step, a loop's copy of a carried value) or when nothing uses
// it at all (a value a test or a tool may read); the others (the broadcasts, the exponentials of a
// softmax, the squares of a layer norm) never reach memory. Because each
// thread reads and writes only its own elements of the rows and the
// group's first thread writes the points, the program is one kernel only
// when the tensors it writes share no byte with the others it reads or
// writes, except a row tensor written over a row tensor at the same
// address (the memory plan's in-place reuse: element k is read and then
// written by the same thread, in instruction order).
//
// This file is plain C++ (no CUDA header) so that the planner and the
// generator are tested without a GPU (CodegenTest).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_ROWFUSION_H
#define ZERO_RUNTIME_CUDA_ROWFUSION_H

#include "ops/Check.h"

#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zero::runtime::cuda {

/// Registers per thread for one row value (the `k` of the file comment).
constexpr int64_t kMaxRowElementsPerThread = 32;

/// Where every value of a schedule is used: operands of any instruction
/// (region bodies included), frees, and the step's results.
class ValueUses {
public:
  explicit ValueUses(const Schedule &schedule);

  /// Whether `id` is used, and only by instructions [begin, end) of
  /// `stream`.
  bool usedOnlyWithin(int64_t id, size_t stream, size_t begin,
                      size_t end) const;

private:
  struct Use {
    size_t stream;
    size_t index;
  };
  std::vector<std::vector<Use>> uses_; // by value id
  std::vector<bool> isResult_;
};

/// The shape class of a tensor of a row program.
enum class RowShape { Row, Point, Vector };

struct RowStep {
  enum class Kind {
    Constant,
    Fill,
    Reduce,
    BroadcastPoint,
    BroadcastVector,
    Map
  };
  Kind kind = Kind::Map;
  const Instruction *inst = nullptr;
  /// Its check: the scalar op of a constant, the body of a reduce or map.
  const ops::CheckedOp *checked = nullptr;
  /// The result's shape class (Row or Point; unused for constants).
  RowShape shape = RowShape::Row;
  /// Whether the kernel writes the result to memory (see the file comment).
  bool store = false;
};

/// A tensor the kernel reads that no step defines.
struct RowInput {
  int64_t value = -1;
  RowShape shape = RowShape::Row;
};

struct RowProgram {
  size_t stream = 0;
  size_t first = 0; // index of steps[0].inst in its stream
  std::vector<RowStep> steps;
  int64_t numPoints = 0;
  int64_t rowLength = 0;
  /// Threads per point: kWarpThreads or kBlockReductionThreads.
  int threads = 0;
  std::vector<RowInput> inputs;
  /// Scalar registers the kernel reads (fill values, bodies' outside
  /// scalars), in parameter order.
  std::vector<int64_t> scalars;

  int64_t elementsPerThread() const {
    return (rowLength + threads - 1) / threads;
  }
  /// The values the kernel writes, in step order.
  std::vector<int64_t> outputs() const;
};

/// The row program that starts at instruction `first` of `stream`, or none;
/// its steps point into `checked`, the schedule's checks.
std::optional<RowProgram> findRowProgram(const Schedule &schedule,
                                         const ops::CheckedSchedule &checked,
                                         const ValueUses &uses, size_t stream,
                                         size_t first);

/// Empty when the program's memory allows one kernel (the file comment's
/// rule), else why not (for tests and logs).
std::string checkRowProgramMemory(const RowProgram &program,
                                  const Schedule &schedule);

/// The kernel of a row program: `extern "C" zero_row_program` with, in
/// order, a pointer per output (RowProgram::outputs), per input and per
/// scalar register. Launched with pointThreads threads per point.
struct RowKernel {
  std::string name;
  std::string source;
  int pointThreads = 0;
  int64_t numPoints = 0;
};

StatusOr<RowKernel> generateRowKernel(const RowProgram &program,
                                      const ValueTable &values);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_ROWFUSION_H
