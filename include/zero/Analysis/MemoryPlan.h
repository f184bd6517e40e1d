//===- MemoryPlan.h - static memory plan of a rank step ---------*- C++ -*-===//
//
// The buffers of a rank step placed on the lifetimes of StepLiveness.h:
// their categories and their static offsets in the arena of each memory
// space. `zero-plan-memory` records the plan on the IR and writes the report
// (MemoryReport.cpp); the schedule emitter reads the same plan.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_MEMORYPLAN_H
#define ZERO_ANALYSIS_MEMORYPLAN_H

#include "zero/Analysis/CommunicationVolume.h"
#include "zero/Analysis/StepLiveness.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir {
namespace zero {

/// What a buffer holds. Parameters, gradients, optimizer states and inputs
/// are resident (the whole step); activations and communication buffers are
/// transient (from their definition to their last use).
enum class BufferCategory {
  Parameter,
  Gradient,
  OptimizerState,
  Input,
  Activation,
  Communication,
};
constexpr unsigned kNumBufferCategories = 6;

/// "parameters", "gradients", "optimizer states", "inputs", "activations",
/// "communication buffers".
llvm::StringRef getBufferCategoryName(BufferCategory category);

/// "device", "host", "nvme".
llvm::StringRef getMemorySpaceName(MemorySpace space);

constexpr unsigned kNumMemorySpaces = 3;
inline constexpr MemorySpace kMemorySpaces[kNumMemorySpaces] = {
    MemorySpace::Device, MemorySpace::Host, MemorySpace::Nvme};

/// "file:line:col" of the first file location in `loc`, else the name of a
/// NameLoc, else "unknown".
std::string formatLocation(Location loc);

/// "<op name> at <location>": how the plan and its report name an op.
std::string describeOp(Operation *op);

struct MemoryPlanOptions {
  /// Place the operands of every gradient reduction (a reduce-scatter or
  /// all-reduce start carrying `zero.grads`) in one contiguous region, live
  /// from the first operand's definition to the wait, as DeepSpeed's
  /// `contiguous_gradients` copies gradients into a flat bucket.
  bool contiguousGradients = true;
  /// Every buffer (and every contiguous region) starts at a multiple of this
  /// many bytes (a power of two); members of a region are packed tightly.
  int64_t alignment = 64;
  /// The memory spaces whose transients are placed largest first over the
  /// whole step instead of in program order (IntervalAllocator.h).
  /// Recorded on the IR with the options, so that the schedule emitter plans
  /// the same offsets.
  llvm::SmallVector<MemorySpace> largestFirst;
  /// Budgets of the spaces that have one (not recorded): where the
  /// placement in program order exceeds its space's budget, the plan
  /// places that space largest first too and keeps the smaller arena (and
  /// adds the space to `largestFirst` when it wins).
  std::optional<int64_t> budgets[kNumMemorySpaces];
};

/// One buffer of the plan: a tensor value, the views of it, and the values
/// that reuse its memory (updated residents, accumulated gradients, results
/// of destination-style ops written in place).
struct PlannedBuffer {
  explicit PlannedBuffer(Location loc) : loc(loc) {}

  /// Parameter or data name ("w"), state ("w.exp_avg"), gradient ("w.grad"),
  /// "gathered w", "swapped w.master", "secondary w" (hpZ), or for other
  /// transients the op that
  /// last writes the buffer and its location.
  std::string name;
  BufferCategory category;
  /// For communication buffers: "in flight" (an operand of a start op),
  /// "gathered", "reduced" or "swapped" (a wait result), "staging" (the flat
  /// buffer of a collective, see getStagingBuffer), "secondary" (hpZ's
  /// shard of a gathered parameter that later gathers read). Empty
  /// otherwise.
  llvm::StringRef role;
  MemorySpace space;
  /// Bytes: element count times element byte width.
  int64_t size = 0;
  /// Byte offset in the arena of `space`.
  int64_t offset = 0;
  /// Program points (indices of the ops of the body) during which the bytes
  /// are reserved, both included; [0, last] for resident buffers.
  int64_t start = 0;
  int64_t end = 0;
  bool resident = false;
  /// Index of the contiguous gradient region holding it, or -1.
  int region = -1;
  /// The op defining the buffer's first value (for staging buffers, the start
  /// op); null for arguments.
  Operation *op = nullptr;
  Location loc;
};

/// A contiguous gradient region (`contiguous-gradients`): the operands of one
/// reduction, packed in operand order.
struct GradientRegion {
  Operation *startOp;
  MemorySpace space;
  int64_t offset;
  int64_t size;
  int64_t start;
  int64_t end;
  llvm::SmallVector<unsigned> buffers;
};

class MemoryPlan {
public:
  /// Plans the single-block function `func`. Emits an error and fails on a
  /// tensor it cannot size (dynamic shape, unknown element type or encoding).
  static FailureOr<MemoryPlan> compute(func::FuncOp func,
                                       const MemoryPlanOptions &options = {});

  /// The options `annotate` recorded on `func`; an error on `func` when
  /// there are none (no plan) or they are malformed.
  static FailureOr<MemoryPlanOptions> getRecordedOptions(func::FuncOp func);

  func::FuncOp getFunction() const { return func; }
  const MemoryPlanOptions &getOptions() const { return options; }

  /// The lifetimes the plan places buffers on.
  const StepLiveness &getLiveness() const { return liveness; }

  /// The ops of the body; program point `i` is `getProgram()[i]`.
  llvm::ArrayRef<Operation *> getProgram() const {
    return liveness.getProgram();
  }
  int64_t getNumPoints() const { return liveness.getNumPoints(); }

  llvm::ArrayRef<PlannedBuffer> getBuffers() const { return buffers; }
  llvm::ArrayRef<GradientRegion> getGradientRegions() const { return regions; }

  /// The buffer of a tensor value of the body (arguments and results of the
  /// top-level ops), or null for a value the plan does not track.
  const PlannedBuffer *lookup(Value value) const;

  /// The staging region of a collective start op (docs/ScheduleFormat.md,
  /// "Collectives"), or null when its bucket needs none.
  const PlannedBuffer *getStagingBuffer(Operation *startOp) const;

  /// The arena size of `space`: the end of its highest buffer.
  int64_t getArenaSize(MemorySpace space) const {
    return arenaSizes[static_cast<unsigned>(space)];
  }

  /// Bytes reserved at program point `point`, in `space` (all spaces when
  /// empty), of `category` (all categories when empty).
  int64_t getLiveBytes(int64_t point, std::optional<MemorySpace> space = {},
                       std::optional<BufferCategory> category = {}) const;

  /// The largest getLiveBytes over all points, and the first point reaching
  /// it.
  struct Peak {
    int64_t bytes = 0;
    int64_t point = 0;
  };
  Peak getMaxLive(std::optional<MemorySpace> space = {},
                  std::optional<BufferCategory> category = {}) const;
  /// getLiveBytes at every program point, in one sweep over the buffers.
  llvm::SmallVector<int64_t>
  getLiveBytesByPoint(std::optional<MemorySpace> space = {},
                      std::optional<BufferCategory> category = {}) const;

  /// Bytes of the resident buffers of `category` (all spaces when `space` is
  /// empty).
  int64_t getResidentBytes(BufferCategory category,
                           std::optional<MemorySpace> space = {}) const;

  /// Bytes of every buffer whose role is `role` ("secondary", ...), however
  /// long it lives.
  int64_t getRoleBytes(llvm::StringRef role) const;

  /// Indices of the buffers of `space` reserved at `point`, largest first.
  llvm::SmallVector<unsigned> getLiveBuffers(MemorySpace space,
                                             int64_t point) const;

  /// Records the plan on the function: `zero.memory_plan` (arena sizes),
  /// `zero.offset` on planned arguments, `zero.offsets` on ops with tensor
  /// results, `zero.space` where not on the device, `zero.staging =
  /// array<i64: offset, bytes>` on collective starts with a staging buffer.
  void annotate() const;

  /// Writes the JSON report (docs/passes/plan-memory.md).
  /// Fails with an error on the function when a size does not fit int64.
  /// On several nodes it splits the collectives' bytes into intra- and
  /// inter-node (getRingCrossing).
  LogicalResult writeReport(llvm::raw_ostream &os, int64_t stage,
                            int64_t worldSize) const;

  /// Emits an error at the peak and fails if the arena of `space` exceeds
  /// `budget` bytes, naming the excess and what dominates the peak.
  LogicalResult checkBudget(MemorySpace space, int64_t budget) const;

private:
  MemoryPlan(StepLiveness liveness, const MemoryPlanOptions &options)
      : func(liveness.getFunction()), options(options),
        liveness(std::move(liveness)) {}

  // Op handles are not const-correct; the plan never changes the function
  // except in annotate().
  mutable func::FuncOp func;
  MemoryPlanOptions options;
  StepLiveness liveness;
  llvm::SmallVector<PlannedBuffer> buffers;
  llvm::SmallVector<GradientRegion> regions;
  llvm::DenseMap<Value, unsigned> bufferOf;
  llvm::DenseMap<Operation *, unsigned> stagingOf;
  int64_t arenaSizes[kNumMemorySpaces] = {0, 0, 0};

  friend class MemoryPlanBuilder;
};

/// The model's parameter count: the elements of the full shapes of the
/// parameter arguments (their `zero.layout`, else their type), or nothing if
/// it does not fit int64.
std::optional<int64_t> countParameters(func::FuncOp func);

/// Parses a byte count: an integer or decimal number with an optional unit,
/// B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024),
/// case-insensitive ("80GiB", "512MiB", "1.5GB", "1073741824"). Fractions of
/// a byte are dropped. Fails on anything else.
FailureOr<int64_t> parseByteSize(llvm::StringRef text);

/// "512 bytes", "1.50 KiB (1536 bytes)", "80.00 GiB (85899345920 bytes)".
std::string formatByteSize(int64_t bytes);

/// formatByteSize without the exact count: "512 bytes", "1.50 KiB".
std::string formatShortByteSize(int64_t bytes);

} // namespace zero
} // namespace mlir

#endif // ZERO_ANALYSIS_MEMORYPLAN_H
