//===- OptimizerTables.h - an optimizer group as one launch -----*- C++ -*-===//
//
// Optimizers.cu's planner (its file comment says what a launch does): the
// tensor and chunk tables of a run of zero.adam or zero.sgd steps, each
// optionally with the cast of its new parameter, over the tensors' device
// addresses. Plain C++, so that OptimizerKernelsOnCpuTest plans groups
// over CPU memory and runs the kernels there.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDA_OPTIMIZERTABLES_H
#define ZERO_RUNTIME_CUDA_OPTIMIZERTABLES_H

#include "OptimizerParams.h"

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Status.h"

#include <functional>
#include <string>
#include <vector>

namespace zero::runtime::cuda {

/// A result that starts as a copy of an operand (the states and the
/// parameter are updated in their results): the launch copies it first,
/// unless both are the same memory.
struct OptimizerMove {
  int64_t result, operand;
};

struct OptimizerTables {
  std::vector<OptimizerTensor> tensors;
  std::vector<Chunk> chunks;
  std::vector<OptimizerMove> moves;
};

/// Plans `group` (Adam's when `adam`, else SGD's) over the tensors at
/// `tensorOf(id)`. `addSite(inst, operand, beta1)` registers the error
/// site of Adam's run-time check of operand `operand` (the step, or with
/// `beta1` a scheduled beta1) and gives its number; `where(inst)` names an
/// instruction in messages.
StatusOr<OptimizerTables> planOptimizerGroup(
    const std::vector<const Instruction *> &group, const ValueTable &values,
    bool adam, const std::function<void *(int64_t)> &tensorOf,
    const std::function<int32_t(const Instruction &, size_t, bool)> &addSite,
    const std::function<std::string(const Instruction &)> &where);

/// Chunks of up to kOptimizerChunk elements of a tensor of `numel`, appended to
/// `chunks` as tensor `index`'s: an empty tensor gets an empty one, so that
/// every launch has a block (Adam's step check runs anyway; the overflow
/// check writes its flag).
void addChunks(int32_t index, int64_t numel, std::vector<Chunk> &chunks);

} // namespace zero::runtime::cuda

#endif // ZERO_RUNTIME_CUDA_OPTIMIZERTABLES_H
