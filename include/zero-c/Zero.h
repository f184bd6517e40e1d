/*===-- zero-c/Zero.h - C API of the zero-opt compiler ------------*- C -*-===*\
|*                                                                            *|
|* The zero dialect, the zero passes and the ZeRO pipeline for compilers that *|
|* embed zero-opt through MLIR's C API (mlir-c/IR.h): register, parse a       *|
|* training step (docs/TrainingStepIR.md) into an MlirModule, compile it for  *|
|* one data-parallel rank, and get the memory and communication report and    *|
|* the schedule (docs/ScheduleFormat.md) as JSON.                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ZERO_C_ZERO_H
#define ZERO_C_ZERO_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// mlirGetDialectHandle__zero__(): the zero dialect alone.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Zero, zero);

/// Adds the zero dialect and the upstream dialects that training steps and
/// the pipeline's output are written in (mlir::zero::registerZeroDialects).
MLIR_CAPI_EXPORTED void zeroRegisterDialects(MlirDialectRegistry registry);

/// Registers the zero passes and the `zero-pipeline` pass pipeline, so that
/// textual pipelines (mlirParsePassPipeline) can name them.
MLIR_CAPI_EXPORTED void zeroRegisterPasses(void);

/// Where zeroRunPipeline and zeroRunPipelineWithConfig deliver their
/// results. A null callback skips its output; each is called at most once,
/// with the whole text, and `userData` is passed to every call.
typedef struct ZeroPipelineOutputs {
  /// The memory and communication report (JSON, as `zero-opt
  /// --zero-report`), also when the plan exceeds a memory budget: it says
  /// why.
  MlirStringCallback report;
  /// The schedule of the compiled step (JSON, as `zero-opt
  /// --zero-emit-schedule`), after the pipeline succeeded.
  MlirStringCallback schedule;
  /// Each error and warning, once per diagnostic ("FILE:LINE:COL: error:
  /// MESSAGE", notes on the following lines, no final newline).
  MlirStringCallback diagnostic;
  void *userData;
} ZeroPipelineOutputs;

/// Runs the ZeRO pipeline on `module`, in place, with `options` as
/// `zero-opt --zero-pipeline="OPTIONS"` takes them ("stage=3 world-size=8",
/// the options of the registered `zero-pipeline`; empty: every default).
/// Fails, with the reasons delivered to `outputs.diagnostic`, on invalid
/// options (an invalid value is described on stderr by llvm::cl, as for
/// mlirParsePassPipeline) or when a pass fails; the module is then left as
/// the failing pass left it.
MLIR_CAPI_EXPORTED MlirLogicalResult zeroRunPipeline(
    MlirModule module, MlirStringRef options, ZeroPipelineOutputs outputs);

/// Runs the ZeRO pipeline on `module`, in place, as `zero-opt
/// --zero-config=FILE --zero-world-size=N` does: `deepSpeedConfig` is the
/// text of a DeepSpeed JSON configuration (docs/Config.md; empty: every
/// default), read as strictly as the file; its "auto" values are inferred
/// from the module's training step. Fails on any error of the
/// configuration (unknown keys with the closest known key, invalid values,
/// knobs the pipeline does not implement) before the pipeline runs, and
/// otherwise as zeroRunPipeline.
MLIR_CAPI_EXPORTED MlirLogicalResult
zeroRunPipelineWithConfig(MlirModule module, MlirStringRef deepSpeedConfig,
                          int64_t worldSize, ZeroPipelineOutputs outputs);

#ifdef __cplusplus
}
#endif

#endif // ZERO_C_ZERO_H
