//===- Body.h - the region of a linalg op, checked --------------*- C++ -*-===//
//
// A body (docs/ScheduleFormat.md, "bodies") checked once and described as a
// program over slots, which each backend evaluates its own way (the host in
// blocks of iteration points, host/Body.h). Slots 0 .. numArguments-1 are
// the block arguments; then come, in order of definition, the scalars from
// outside the body, the linalg.index results, the constants and the results
// of the steps (the body ops evaluated per point).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_BODY_H
#define ZERO_RUNTIME_OPS_BODY_H

#include "ops/OpContext.h"
#include "ops/ScalarOp.h"

#include <string>
#include <utility>
#include <vector>

namespace zero::runtime::ops {

/// A body op evaluated per point: a scalar op, or tensor.extract of a tensor
/// from outside the body.
struct BodyStep {
  bool isExtract = false;
  ScalarOp op;
  int operands[3] = {-1, -1, -1};
  int result = -1;
  // tensor.extract: the tensor (BodyProgram::externalTensors) and the slot
  // of each index.
  size_t tensor = 0;
  std::vector<int> indices;
  OpSite site; // for out-of-range messages
};

/// A tensor from outside the body that tensor.extract reads.
struct BodyTensor {
  int64_t value;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::string description;
};

struct BodyProgram {
  std::vector<bool> argumentUsed; // one per block argument
  int64_t numSlots = 0;
  std::vector<std::pair<int64_t, int>> indexSlots; // (loop dimension, slot)
  std::vector<std::pair<Scalar, int>> constants;   // (canonical value, slot)
  std::vector<std::pair<int64_t, int>> externalScalars; // (value id, slot)
  std::vector<BodyTensor> externalTensors;
  std::vector<BodyStep> steps;
  std::vector<int> yieldSlots;
  /// Each op of the region, in order: its description where it is a scalar
  /// op or a constant (a default one for linalg.index and tensor.extract),
  /// for a backend that spells the body op by op (the CUDA code generator).
  std::vector<ScalarOp> regionOps;
};

/// Checks the op's decoded body: `argumentTypes` are the dtypes of the block
/// arguments (described by `argumentsWhat` in messages), `yieldTypes` those
/// of the yielded values; linalg.index may name loop dimensions 0 ..
/// numLoops-1.
StatusOr<BodyProgram> checkBody(const OpContext &ctx,
                                const std::vector<DType> &argumentTypes,
                                const std::string &argumentsWhat,
                                const std::vector<DType> &yieldTypes,
                                int64_t numLoops);

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_BODY_H
