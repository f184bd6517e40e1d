//===- Trace.h - Chrome/Perfetto traces of a run ----------------*- C++ -*-===//
//
// Each rank records what its streams did as complete events; rank 0 gathers
// them (serializeTraceEvents / deserializeTraceEvents carry them over the
// communicator) and writes one trace in Chrome's JSON object format, which
// chrome://tracing and ui.perfetto.dev open.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TRACE_H
#define ZERO_RUNTIME_TRACE_H

#include "zero/runtime/OutputFile.h"
#include "zero/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace zero::runtime {

/// An argument of an event, shown by the trace viewer.
using TraceArg = std::variant<int64_t, double, std::string>;

struct TraceEvent {
  std::string name;
  std::string category;
  int rank = 0;
  std::string stream;
  double startUs = 0;
  double durationUs = 0;
  std::map<std::string, TraceArg> args; // empty: none
};

/// Writes {"traceEvents": [...], "displayTimeUnit": "ms"}: one process (pid)
/// per rank named "rank N", one thread (tid) per stream named after it (tids
/// by sorted stream name, the same on every rank), and a "ph": "X" event per
/// TraceEvent. Error on an unwritable path or a failed write; the file
/// appears whole or not at all (OutputFile.h).
Status writeChromeTrace(const std::string &path,
                        const std::vector<TraceEvent> &events);
/// The same into a file opened earlier, which the caller commits.
Status writeChromeTrace(OutputFile &file,
                        const std::vector<TraceEvent> &events);

/// Events to bytes and back, so that ranks can send theirs to rank 0.
std::string serializeTraceEvents(const std::vector<TraceEvent> &events);
StatusOr<std::vector<TraceEvent>>
deserializeTraceEvents(const std::string &bytes);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_TRACE_H
