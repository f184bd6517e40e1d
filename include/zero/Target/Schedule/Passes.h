//===- Passes.h - schedule emission pass ------------------------*- C++ -*-===//

#ifndef ZERO_TARGET_SCHEDULE_PASSES_H
#define ZERO_TARGET_SCHEDULE_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace zero {

#define GEN_PASS_DECL
#include "zero/Target/Schedule/Passes.h.inc"

} // namespace zero
} // namespace mlir

#endif // ZERO_TARGET_SCHEDULE_PASSES_H
