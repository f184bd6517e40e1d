//===- ScheduleUtils.h - helpers of the scheduling and offload passes -----===//
//
// Facts about the collectives and swaps of a rank step that several passes
// need: which op waits for a start, whether a gather fetches parameters, how
// many elements a collective moves, what a parameter shard is called, where
// a tensor lives and which memory space an offload `device` names.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_DIALECT_ZERO_TRANSFORMS_SCHEDULEUTILS_H
#define ZERO_LIB_DIALECT_ZERO_TRANSFORMS_SCHEDULEUTILS_H

#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace mlir {
namespace zero {

/// The `zero.wait` on the handle of `start`, if it is its only user and lies
/// in the same block; null otherwise.
WaitOp getSameBlockWait(Operation *start);

/// Moves the wait of every swap-out of `block` (in program order) before
/// the start of the swap-out `inFlight` places later when it is not there
/// already: at most `inFlight` swap-outs read their device operands at
/// once, and the device buffers of the others are free.
void limitSwapOutsInFlight(Block &block, unsigned inFlight);

/// Moves the pure ops that read `value` between `after` (the op of `limit`'s
/// block that defines `value`, or one after it) and `limit` right after
/// `after` when nothing else they read is defined later, with the constants
/// and fresh buffers (`tensor.empty`, a `linalg.fill` of one) only they use,
/// and then their own readers by the same rule: fp16's overflow check of a
/// gradient (its zero.any_nonfinite, the only zero op moved, and the
/// maximumf that combines the flags) runs as soon as the gradient exists
/// instead of where the optimizer step begins. `mayMove` can veto an
/// op. Returns the last op moved, or `after`.
Operation *hoistReaders(Value value, Operation *after, Operation *limit,
                        llvm::function_ref<bool(Operation *)> mayMove);

/// Removes `value` from the operands of `release`, erasing it if empty.
void dropFromRelease(ReleaseOp release, Value value);

/// A parameter gather: an all-gather whose operands are all arguments of
/// the function (the parameter shards of the rank step) or hpZ's secondary
/// shards (a `zero.local_shard` of a gathered parameter), as opposed to
/// post-step gathers of updated shards.
bool isParameterGather(AllGatherStartOp op);

/// Whether `value` is a ranked tensor living in `space`.
bool isInMemorySpace(Value value, MemorySpace space);

/// Retypes ranked tensor `value` to live in `space` (getTensorTypeInSpace).
void setMemorySpace(Value value, MemorySpace space);

/// Sets `space` to the memory space an offload pass's `device` option names:
/// nothing for "none", host for "cpu", nvme for "nvme"; an error on `op`
/// naming `passName` for anything else.
LogicalResult parseOffloadDevice(StringRef device, Operation *op,
                                 StringRef passName,
                                 std::optional<MemorySpace> &space);

/// DeepSpeed's `aio` section, as the NVMe swap store reads it.
struct AioSettings {
  int64_t blockSize;
  int64_t queueDepth;
  bool singleSubmit;
  bool overlapEvents;
};

/// Records on step `func` the directory of its NVMe swap files
/// (`zero.nvme_path`, unless `nvmePath` is empty) and `aio` (`zero.aio`),
/// for the schedule. An error naming `passName` for an aio setting out of
/// range or a directory other than the one already recorded: a rank's NVMe
/// arena is one file.
LogicalResult recordNvmeSettings(func::FuncOp func, StringRef passName,
                                 StringRef nvmePath, const AioSettings &aio);

/// Elements of a static tensor type; -1 for anything else, a count that does
/// not fit int64 included.
int64_t getNumElements(Type type);

/// Elements one operand of a collective moves: the gathered full tensor of
/// an all-gather (its layout's numel), the operand itself for reductions.
/// -1 when unknown.
int64_t getOperandElements(Operation *collective, unsigned operandIndex);

/// The name of a parameter shard for diagnostics: the `zero.param` of the
/// function argument, else "argument #N", else "a value".
std::string getShardName(Value shard);

} // namespace zero
} // namespace mlir

#endif // ZERO_LIB_DIALECT_ZERO_TRANSFORMS_SCHEDULEUTILS_H
