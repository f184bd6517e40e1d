//===- InitAllDialects.h - the dialects of a zero-opt tool ------*- C++ -*-===//
//
// The one list of the dialects that zero-opt's tools read and write. Every
// tool and embedding registers them through registerZeroDialects: zero-opt,
// zero-translate's --zero-to-schedule, the mlir-opt plugin (ZeroPlugin),
// zero-lsp-server, zero-reduce and the C API (zero-c/Zero.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_INITALLDIALECTS_H
#define ZERO_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;

namespace zero {

/// Adds to `registry` the zero dialect and the upstream dialects that a
/// training step (docs/TrainingStepIR.md) and the pipeline's output are
/// written in: arith, bufferization, func, linalg, math, scf and tensor.
void registerZeroDialects(DialectRegistry &registry);

} // namespace zero
} // namespace mlir

#endif // ZERO_INITALLDIALECTS_H
