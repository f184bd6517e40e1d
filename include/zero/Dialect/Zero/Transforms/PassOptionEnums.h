//===- PassOptionEnums.h - enumerated zero pass options ---------*- C++ -*-===//
//
// The enumerated options that a pass (Passes.td) and the pipeline
// (Pipeline.h) both take. Each value's command-line spelling is defined once,
// here, and `--help` lists them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSOPTIONENUMS_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSOPTIONENUMS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

namespace mlir {
namespace zero {

/// How parameters and gradients are stored (zero-mixed-precision).
enum class Precision { FP32, BF16, FP16 };

/// The spellings of Precision, DeepSpeed's names: fp32, bf16, fp16.
llvm::cl::ValuesClass getPrecisionValues();

/// The element type parameters are stored in under `precision`.
FloatType getPrecisionType(MLIRContext *context, Precision precision);

/// The type GEMM operands are computed in (zero-compute-precision): `auto`
/// is DeepSpeed's meaning: the storage precision with bf16.enabled, and with
/// fp16.enabled where the loss scale seeds the backward pass (else f32:
/// getComputeElementType). `tf32` keeps f32 storage and
/// rounds the f32 GEMMs' operands to tf32 (tensor cores for f32 steps).
enum class ComputeType { Auto, F32, TF32, BF16, F16 };

/// The spellings of ComputeType: auto, f32, tf32, bf16, f16.
llvm::cl::ValuesClass getComputeTypeValues();

/// The 16-bit type the step computes in under `computeType` and storage
/// `precision`, or null where it keeps f32 storage (`f32`, `tf32`, or
/// `auto` under fp32, or under fp16 unless `scaledBackward`: the loss scale
/// seeds the backward pass, zero.scales_backward).
FloatType getComputeElementType(MLIRContext *context, ComputeType computeType,
                                Precision precision, bool scaledBackward);

/// The optimizer zero-insert-optimizer inserts. `Adam` is AdamW unless the
/// pass's adam-w-mode is false, as DeepSpeed's `Adam` with `adam_w_mode`.
enum class OptimizerType { Adam, AdamW, Sgd };

/// The spellings of OptimizerType: adam, adamw, sgd.
llvm::cl::ValuesClass getOptimizerTypeValues();

} // namespace zero
} // namespace mlir

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSOPTIONENUMS_H
