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

namespace zero::runtime {

/// Checks the dataflow of `schedule`, whose fields and events (no deadlock)
/// are already checked; the first error names the instructions involved.
Status checkDataflow(const Schedule &schedule);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_SRC_DATAFLOW_H
