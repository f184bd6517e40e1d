//===- MemoryTimeline.h - a picture of the memory plan ----------*- C++ -*-===//
//
// Draws a MemoryPlan as a person wants to see it before a run: the bytes
// live at every program point, stacked by category, one panel per memory
// space in use, with the budget, the peak and the largest tensors live there,
// and the forward, backward and optimizer phases. Self-contained SVG, or an
// HTML page holding it and the peak's tables (docs/Passes.md,
// "zero-plan-memory").
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_MEMORYTIMELINE_H
#define ZERO_ANALYSIS_MEMORYTIMELINE_H

#include "zero/Analysis/MemoryPlan.h"

namespace mlir {
namespace zero {

enum class TimelineFormat { Svg, Html };

/// The format a file name asks for: `.svg`, or `.html` / `.htm`; nothing for
/// any other name.
std::optional<TimelineFormat> getTimelineFormat(llvm::StringRef path);

/// A contiguous run of program points of one phase of the step.
struct TimelinePhase {
  /// "forward", "backward" or "optimizer".
  llvm::StringRef name;
  int64_t first;
  int64_t last;
};

/// The phases of the planned step: forward up to the last op that the loss
/// (of a micro-step, in the micro-step loop) depends on, optimizer from the
/// first zero.adam or zero.sgd, backward between them. Empty when the step
/// has no result marked zero.loss.
llvm::SmallVector<TimelinePhase> getTimelinePhases(const MemoryPlan &plan);

/// Writes the picture of `plan` (the rank step of ZeRO stage `stage` on
/// `worldSize` ranks) in `format`. The budgets are the plan's options'.
void writeMemoryTimeline(llvm::raw_ostream &os, const MemoryPlan &plan,
                         TimelineFormat format, int64_t stage,
                         int64_t worldSize);

} // namespace zero
} // namespace mlir

#endif // ZERO_ANALYSIS_MEMORYTIMELINE_H
