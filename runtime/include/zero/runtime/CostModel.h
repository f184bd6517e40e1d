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

/// One launch of the plan, named by the first instruction it runs, as a
/// trace names a fused group (zero-run --trace: the op, args.point and
/// args.loc). A launch of the loop's body runs `times` a step; its bytes and
/// ms are per step.
struct CostLaunch {
  std::string category;
  std::string path; // "instructions.compute[12]"
  std::string op;   // "linalg.map"
  std::string loc;
  /// The points of the instructions it runs, the first first (a group or a
  /// row program runs several).
  std::vector<int64_t> points;
  int64_t times = 1;
  double bytes = 0;
  double ms = 0;
  /// Its fixed cost per step (launch_us a launch; a host function's or a
  /// grouped collective's own), in ms.
  double fixedMs = 0;
  /// The GPU figure that bounds its time beyond that fixed cost
  /// ("gemm_bf16_tflops", "vector_eff", "latency_ns"; for a kernel whose
  /// fixed cost is the larger part, "launch_us"; host functions, collectives
  /// and swaps name their bandwidth): the figure its measured time
  /// recalibrates.
  std::string bound;
};

/// One of a GPU's figures (DeviceModels.def: "copy_gbs", "vector_eff"),
/// named as there.
struct DeviceFigure {
  std::string name;
  double value = 0;
};

struct CostExplanation {
  std::string device; // "h100"
  /// Every figure the launches were priced with, in DeviceModels.def's
  /// order (a set figure with its set value).
  std::vector<DeviceFigure> figures;
  /// The figures set for this explanation (--explain-set), as given.
  std::vector<DeviceFigure> settings;
  /// The compute stream's predicted time per step; collectives and swaps
  /// run on streams of their own, overlapped with it: the step is the
  /// longer of the two.
  double computeMs = 0;
  double commMs = 0;
  double totalMs = 0;
  int64_t launches = 0;
  std::map<std::string, CostCategory> categories;
  /// Every launch, in stream order (collectives and swaps included).
  std::vector<CostLaunch> plan;
};

/// The names of the GPUs the model knows ("h100", "h200").
std::vector<std::string> getCostModelDevices();

/// The plan of `schedule`'s step on GPU `device`, with `settings` in place
/// of the device's figures of the same names. Fails for a device the model
/// does not know, a figure it does not have (naming the closest), a value
/// out of the figure's range (a count not whole or outside [1, 2^20], a
/// rate not positive, an efficiency outside (0, 1]), or where this build has no
/// CUDA backend (the plan is the backend's).
StatusOr<CostExplanation>
explainSchedule(const Schedule &schedule, const std::string &device,
                const std::vector<DeviceFigure> &settings = {});

/// A table of the categories and the total, then the `heaviest` launches
/// that take the most time, for people.
std::string formatCostExplanation(const CostExplanation &explanation,
                                  size_t heaviest = 10);
/// {"device", "total_ms", "compute_ms", "comm_ms", "launches",
///  "figures": {name: value}, "settings": {name: value},
///  "categories": {name: {"launches", "flops", "bytes", "ms"}},
///  "plan": [{"category", "path", "op", "loc", "points", "times", "bytes",
///            "ms", "fixed_ms", "bound"}]}.
std::string costExplanationToJson(const CostExplanation &explanation);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_COSTMODEL_H
