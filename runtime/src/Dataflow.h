//===- Dataflow.h - the loader's proof of a schedule's dataflow -*- C++ -*-===//
//
// Schedule::load proves, past the shapes, that every run of the streams
// computes what the program means (docs/ScheduleFormat.md, "What the loader
// proves"): every value is written before it is read, cross-stream reads are
// ordered by events, and no bytes are written on one stream while another
// stream may still access them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SRC_DATAFLOW_H
#define ZERO_RUNTIME_SRC_DATAFLOW_H

#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zero::runtime {

/// One run of an instruction in the analysis of a schedule with a loop: the
/// loop's body is analyzed as two iterations (one when the loop has one),
/// enough for every ordering between iterations (docs/ScheduleFormat.md,
/// "Loops").
struct Instance {
  /// The instruction's index in its stream, or a copy of the carried values
  /// on the compute stream.
  size_t index;
  /// 0 outside the loop, else the iteration (1-based).
  int iteration;
};
constexpr size_t kEntryCopy = static_cast<size_t>(-1);
constexpr size_t kEndCopy = static_cast<size_t>(-2);

/// The iterations of the loop the analysis runs: 0 without a loop.
int getAnalyzedIterations(const Schedule &schedule);
/// The instances of `stream` in order: the instructions before the body, the
/// body per analyzed iteration, the rest. With `withCopies`, the compute
/// stream also holds the entry copy of the carried values before the first
/// iteration and an end copy after each.
std::vector<Instance> unrollStream(const Schedule &schedule, size_t stream,
                                   bool withCopies);

/// Checks the dataflow of `schedule`, whose fields and events (no deadlock)
/// are already checked; the first error names the instructions involved.
Status checkDataflow(const Schedule &schedule);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_SRC_DATAFLOW_H
