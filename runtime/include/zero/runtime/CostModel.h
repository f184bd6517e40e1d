//===- CostModel.h - a step's time on a GPU, predicted without one -*- C++ -*-//
//
// The CUDA backend's plan of a schedule (the same groups, row programs and
// launch shapes it makes when it loads one), each launch priced on a named
// GPU: docs/Runtime.md, "Cost model"; the GPUs' figures are
// src/cuda/DeviceModels.def. `zero-run SCHEDULE --explain=h100` prints it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_COSTMODEL_H
#define ZERO_RUNTIME_COSTMODEL_H

#include "zero/runtime/Schedule.h"
#include "zero/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zero::runtime {

/// One category of launches: "gemm_f32", "batched_gemm_bf16", "map",
/// "reduce", "generic", "transpose", "copy", "fill", "scalar", "optimizer",
/// "host", "collective", "swap".
struct CostCategory {
  int64_t launches = 0;
  double flops = 0;
  double bytes = 0; // moved through device memory (or the link)
  double ms = 0;
};

struct CostExplanation {
  std::string device; // "h100"
  /// The compute stream's predicted time per step; collectives and swaps
  /// run on streams of their own, overlapped with it: the step is the
  /// longer of the two.
  double computeMs = 0;
  double commMs = 0;
  double totalMs = 0;
  int64_t launches = 0;
  std::map<std::string, CostCategory> categories;
};

/// The names of the GPUs the model knows ("h100", "h200").
std::vector<std::string> getCostModelDevices();

/// The plan of `schedule`'s step on GPU `device`. Fails for a device the
/// model does not know, or where this build has no CUDA backend (the plan
/// is the backend's).
StatusOr<CostExplanation> explainSchedule(const Schedule &schedule,
                                          const std::string &device);

/// A table of the categories and the total, for people.
std::string formatCostExplanation(const CostExplanation &explanation);
/// {"device", "total_ms", "compute_ms", "comm_ms", "launches",
///  "categories": {name: {"launches", "flops", "bytes", "ms"}}}.
std::string costExplanationToJson(const CostExplanation &explanation);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_COSTMODEL_H
