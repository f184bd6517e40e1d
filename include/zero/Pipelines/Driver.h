//===- Driver.h - a DeepSpeed configuration onto the pipeline ---*- C++ -*-===//
//
// The one sequence from a DeepSpeed configuration to the options of the
// ZeRO pipeline, shared by zero-opt (--zero-config, --zero-set,
// --zero-stage), the C API (zeroRunPipelineWithConfig) and embedders
// (examples/embed): read the file, apply the overrides, resolve "auto"
// against the training step, map the keys onto the options
// (ConfigBinding.h), and report the configuration's warnings and the
// mapping's findings, in that order.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_PIPELINES_DRIVER_H
#define ZERO_PIPELINES_DRIVER_H

#include "zero/Config/DeepSpeedConfig.h"
#include "zero/Pipelines/Pipeline.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace zero {

/// Where a configuration comes from and what overrides it.
struct ConfigSource {
  /// A DeepSpeed JSON file, or empty for `text`.
  std::string file;
  /// The JSON itself when there is no file; none, or empty, for DeepSpeed's
  /// defaults.
  std::optional<std::string> text;
  /// The name of `text` in diagnostics.
  std::string textName = "<deepspeed-config>";
  /// KEY=VALUE settings that replace the file's, in order (zero-opt's
  /// --zero-set, then --zero-stage).
  std::vector<std::pair<std::string, std::string>> overrides;
};

/// Reads the configuration of `source`, applies its overrides, resolves it
/// with the context that `inferContext` reads from the training step, hands
/// it to `onResolved` (if any: zero-opt's --zero-print-config), and sets the
/// options of `options` that it decides (applyDeepSpeedConfig). Every
/// message (a bad file, key or value, the configuration's warnings, the
/// mapping's findings) goes to `report`, one formatted diagnostic at a time
/// without its final newline. Fails after reporting an error or a refused
/// key.
LogicalResult configurePipeline(
    const ConfigSource &source,
    function_ref<::zero::ResolveContext()> inferContext,
    ZeroPipelineOptions &options, function_ref<void(StringRef)> report,
    function_ref<void(const ::zero::DeepSpeedConfig &)> onResolved = nullptr);

} // namespace zero
} // namespace mlir

#endif // ZERO_PIPELINES_DRIVER_H
