//===- Pipeline.h - the ZeRO pass pipeline ----------------------*- C++ -*-===//
//
// The ZeRO pipeline: the zero passes in their order, and its options. The
// options that the passes take are declared once, as the passes' options in
// Passes.td, and made the pipeline's by PipelineOptions.def, which gives
// each its name in `--zero-pipeline` and the passes it is copied into.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_PIPELINES_PIPELINE_H
#define ZERO_PIPELINES_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

#include <string>
#include <type_traits>
#include <vector>

namespace mlir {
namespace zero {

/// What the pipeline recomputes in the backward pass
/// (`checkpoint-activations`, zero-checkpoint-activations).
enum class CheckpointActivations {
  /// Nothing: every activation is kept.
  None,
  /// Every segment.
  All,
  /// The fewest segments that make the plan fit `device-memory`.
  Auto,
};

namespace detail {
/// The choices of an enum-valued pass option, for the pipeline's copy of it
/// to parse and print; nothing for the other types.
struct NoOptionValues {
  template <typename Opt>
  void apply(Opt &) const {}
};
template <typename T>
auto getPipelineOptionValues() {
  if constexpr (std::is_same_v<T, Precision>)
    return getPrecisionValues();
  else if constexpr (std::is_same_v<T, OptimizerType>)
    return getOptimizerTypeValues();
  else if constexpr (std::is_same_v<T, ComputeType>)
    return getComputeTypeValues();
  else
    return NoOptionValues();
}
} // namespace detail

/// Every knob of the pipeline. `--zero-pipeline="stage=3 world-size=8 ..."`
/// parses these; the zero-opt driver fills them from a DeepSpeed config
/// (ConfigBinding.h).
struct ZeroPipelineOptions : public PassPipelineOptions<ZeroPipelineOptions> {
  // The pipeline's own options: which passes run, and on which function.
  Option<std::string> entry{*this, "entry",
                            llvm::cl::desc("The training-step function")};
  Option<bool> fuseBroadcasts{
      *this, "fuse-broadcasts",
      llvm::cl::desc("Read broadcasts' sources in the elementwise maps that "
                     "use them instead of materializing them "
                     "(zero-fuse-broadcast-inputs)"),
      llvm::cl::init(false)};
  Option<bool> foldTransposes{
      *this, "fold-transposes",
      llvm::cl::desc("Read GEMM operands made by a transpose of their last "
                     "two dimensions in place, through the GEMM's indexing "
                     "maps (zero-fold-transposes)"),
      llvm::cl::init(true)};
  Option<CheckpointActivations> checkpointActivations{
      *this, "checkpoint-activations",
      llvm::cl::desc("Recompute segments' activations in the backward pass "
                     "instead of keeping them"),
      llvm::cl::init(CheckpointActivations::None),
      llvm::cl::values(
          clEnumValN(CheckpointActivations::None, "false", "keep them all"),
          clEnumValN(CheckpointActivations::All, "true", "every segment"),
          clEnumValN(CheckpointActivations::Auto, "auto",
                     "the fewest segments, least FLOPs per byte first, "
                     "with which the plan fits device-memory"))};

  // The passes' options, with their types and defaults (PipelineOptions.def).
#define ZERO_PIPELINE_OPTION(NAME, ARGUMENT, PASS, PASS_OPTION, DESCRIPTION)   \
  Option<decltype(Zero##PASS##PassOptions::PASS_OPTION)> NAME{                 \
      *this, ARGUMENT, llvm::cl::desc(DESCRIPTION),                            \
      llvm::cl::init(Zero##PASS##PassOptions().PASS_OPTION),                   \
      detail::getPipelineOptionValues<                                         \
          decltype(Zero##PASS##PassOptions::PASS_OPTION)>()};
#include "zero/Pipelines/PipelineOptions.def"
};

/// Adds the whole ZeRO pipeline, from the input check to the schedule
/// verifier, to `pm` (which runs on the module).
void buildZeroPipeline(OpPassManager &pm, const ZeroPipelineOptions &options);

/// Registers `--zero-pipeline`.
void registerZeroPipeline();

/// A pipeline option that a pass takes (a ZERO_PIPELINE_OPTION row).
struct PipelineOptionInfo {
  /// The field of ZeroPipelineOptions ("offloadOptimizerBufferCount").
  llvm::StringLiteral name;
  /// Its name in `--zero-pipeline` ("offload-optimizer-buffer-count").
  llvm::StringLiteral argument;
  /// The passes it is copied into: the one that declares it first
  /// ("zero-offload-optimizer"), then the ZERO_PIPELINE_OPTION_COPY rows'.
  std::vector<std::string> passArguments;
};

/// The rows of PipelineOptions.def, in order.
llvm::ArrayRef<PipelineOptionInfo> getPipelineOptionInfos();

/// The row of the pipeline option whose field is `name`, or null.
const PipelineOptionInfo *lookupPipelineOption(llvm::StringRef name);

/// Sets the `entry` option, which every zero pass takes (ZeroStepPass,
/// PassBase.td), on the zero passes of the module pass manager `pm`. Passes
/// given their own `entry=` are set too: one step function per run. Fails,
/// after reporting through `errorHandler`, on a pass that refuses it.
LogicalResult
applyEntryOption(OpPassManager &pm, StringRef entry,
                 function_ref<LogicalResult(const Twine &)> errorHandler);

} // namespace zero
} // namespace mlir

#endif // ZERO_PIPELINES_PIPELINE_H
