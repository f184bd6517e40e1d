//===- ScheduleEmitter.h - rank step to schedule JSON -----------*- C++ -*-===//
//
// Translates a rank step that went through the whole ZeRO pipeline into the
// schedule the runtime executes: the versioned JSON of docs/ScheduleFormat.md,
// the only contract between the compiler and the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_SCHEDULE_SCHEDULEEMITTER_H
#define ZERO_TARGET_SCHEDULE_SCHEDULEEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace zero {

/// The versions of docs/ScheduleFormat.md that the emitter writes: a step
/// without a micro-step loop or swaps is written as version 1, which runtimes
/// that know neither still read; version 2 adds the loop and swaps; version
/// 3 a world of several nodes (`topology.grid` = [nodes, ranks per node]).
constexpr int64_t kScheduleFormatVersion = 1;
constexpr int64_t kScheduleFormatVersion2 = 2;
constexpr int64_t kScheduleFormatVersion3 = 3;

/// Writes the schedule of `func`, a rank step with the attributes of the
/// pipeline (`zero.stage`, `zero.world_size`, `zero.memory_plan`), to `os`.
/// Emits an error at the offending op, argument or function and fails, with
/// nothing written, on anything the format cannot express.
LogicalResult translateToSchedule(func::FuncOp func, llvm::raw_ostream &os);

/// Writes the schedule of the training step of `module`: the function named
/// `entry` if it is not empty, else the one marked `zero.train_step`, else the
/// only candidate.
LogicalResult translateModuleToSchedule(ModuleOp module, llvm::raw_ostream &os,
                                        llvm::StringRef entry = "");

/// Registers the `--zero-to-schedule` translation (for mlir-translate-like
/// tools), with the dialects a rank step is written in.
void registerToScheduleTranslation();

} // namespace zero
} // namespace mlir

#endif // ZERO_TARGET_SCHEDULE_SCHEDULEEMITTER_H
