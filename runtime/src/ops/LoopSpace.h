//===- LoopSpace.h - the loop nest of map, reduce and generic ---*- C++ -*-===//
//
// The one lowering of linalg.map, linalg.reduce and linalg.generic to a loop
// nest, which every backend runs its way: the size of each loop, whether it
// reduces, and each operand's stride along it (in elements; 0 where the
// operand does not depend on the loop). A map's loops are its destination's
// dimensions; a reduce's are its input's, the reduced ones skipped by the
// destinations; a generic's are given by its indexing maps (projected
// permutations, DESIGN.md's op set).
//
// The instruction must be checked (ops::checkComputeOp): lowering
// assumes the shapes agree and the fields are in range.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_LOOPSPACE_H
#define ZERO_RUNTIME_OPS_LOOPSPACE_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"

#include <cstdint>
#include <vector>

namespace zero::runtime::ops {

/// The strides of a dense row-major tensor of `shape`, in elements.
std::vector<int64_t> getRowMajorStrides(const std::vector<int64_t> &shape);

/// An operand of a loop nest: a tensor value and its stride along each
/// loop.
struct LoopOperand {
  int64_t value = -1;
  DType dtype = DType::F32;
  std::vector<int64_t> strides;
  int64_t numel = 0;
};

struct LoopSpace {
  std::vector<int64_t> loopSizes;
  std::vector<bool> isReduction;
  std::vector<LoopOperand> inputs;
  /// The destinations (the last operands); each result has its shape.
  std::vector<LoopOperand> outputs;
};

/// The loop space of checked linalg.map, linalg.reduce or linalg.generic
/// `op`, whose operands are described by `values`.
LoopSpace lowerToLoopSpace(const OpRecord &op, const ValueTable &values);

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_LOOPSPACE_H
