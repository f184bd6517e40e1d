//===- ConfigBinding.h - DeepSpeed config -> pipeline options ---*- C++ -*-===//
//
// The one mapping from a resolved DeepSpeed configuration (zero::
// DeepSpeedConfig, library ZeroConfig) to the options of the ZeRO pipeline
// (its table: ConfigBindings.def), and the inference of what "auto" is
// resolved from (zero::ResolveContext) from the training-step IR. The
// driver (Driver.h) runs them in order for zero-opt, the C API and the
// embedding example; by hand, the sequence is:
//
//   zero::ResolveContext context =
//       mlir::zero::inferResolveContext(module, entry, worldSize);
//   auto config = zero::loadDeepSpeedConfig(path, overrides, context);
//   mlir::zero::ZeroPipelineOptions options;
//   for (const mlir::zero::ConfigFinding &f :
//        mlir::zero::applyDeepSpeedConfig(*config, options))
//     ...; // an Error finding means: do not run the pipeline
//   mlir::zero::buildZeroPipeline(pm, options);
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_PIPELINES_CONFIGBINDING_H
#define ZERO_PIPELINES_CONFIGBINDING_H

#include "zero/Config/DeepSpeedConfig.h"
#include "zero/Pipelines/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace zero {

/// A key of the configuration that the pipeline cannot honor as written.
struct ConfigFinding {
  enum class Kind {
    /// The pipeline does not implement this value yet: the configuration
    /// must not be compiled.
    Error,
    /// The value cannot change the compiled step in this configuration
    /// (e.g. fp16 knobs with fp16 disabled); a warning, never silent.
    Warning,
  };
  Kind kind;
  /// The canonical dotted path of the key ("zero_optimization.stage").
  std::string key;
  /// Error: what is not supported and why ("\"cpu\": optimizer offload is
  /// not supported yet: ..."). Warning: why the key has no effect
  /// ("fp16.enabled is false"). Neither names the key.
  std::string message;
};

/// Sets every option of `options` that the configuration decides (stage,
/// world size, partitioning, precision, loss scaling, optimizer, buckets,
/// prefetch, memory plan, gradient accumulation) and leaves the others
/// (entry, report, device memory, checkpoint-activations) alone; reads
/// checkpoint-activations to warn about activation_checkpointing knobs
/// without effect when it is off. Knobs that the library accepts but
/// the pipeline does not implement yet (offload, round_robin_gradients,
/// fp16.auto_cast) are returned as
/// errors; knobs without effect in this configuration as warnings.
std::vector<ConfigFinding>
applyDeepSpeedConfig(const ::zero::DeepSpeedConfig &config,
                     ZeroPipelineOptions &options);

/// `finding` as a diagnostic of the settings the configuration was resolved
/// from: at the key that set the knob (the last override, else the file's
/// member; no position for a knob at its default), named as written there,
/// "KEY: MESSAGE" for an error and "KEY has no effect: MESSAGE" for a
/// warning. zero-opt and the C API print findings through it.
llvm::SMDiagnostic
diagnoseFinding(const ::zero::DeepSpeedConfigSettings &settings,
                const ConfigFinding &finding);

/// Every key of the config library's table and where it goes, from
/// ConfigBindings.def: the pipeline options it sets and the passes that
/// read them ("ARGUMENT (zero-PASS, ...)"), with when or how, the reason it
/// is refused or has no effect, or "UNHANDLED" for a supported key without
/// a row (a bug: `zero-opt --zero-print-knobs` lists these, and a test
/// checks there are none).
std::vector<std::pair<std::string, std::string>> getKnobRoutes();

/// What a configuration's "auto" values are resolved from, read from the
/// training step of `module` (`entry` as for the passes):
///  - hiddenSize: the most frequent dimension among the parameters' shapes
///    (ties: the larger);
///  - microBatchSize: the leading dimension of the first `zero.data`
///    argument of rank >= 1;
///  - precision: the parameters' element type when they all have the same
///    (bf16, f16, or F32 for any other float type), else unknown.
/// Unknown values stay 0/Unknown (no training step, no parameters); the
/// configuration then refuses an "auto" that needs them. Emits nothing.
::zero::ResolveContext inferResolveContext(ModuleOp module, StringRef entry,
                                           int64_t worldSize);

} // namespace zero
} // namespace mlir

#endif // ZERO_PIPELINES_CONFIGBINDING_H
