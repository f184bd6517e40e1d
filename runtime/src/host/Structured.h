//===- Structured.h - loop nests of linalg.map/reduce/generic ---*- C++ -*-===//
//
// linalg.map, linalg.reduce and linalg.generic all become one loop nest: loop
// sizes, an iterator type per loop, and for each operand its element stride
// along each loop (0 where the operand does not depend on the loop; indexing
// maps are projected permutations, so a stride is all a map needs).
//
// The nest runs like MLIR's sequential loops: every output element is
// updated in increasing lexicographic order of the reduction loops, starting
// from the destination's value. It evaluates the body for a block of
// parallel points at once (columns of registers, Body.h) and runs blocks on
// several threads; each output element belongs to one block, so results do
// not depend on the thread count. A nest whose output does not cover every
// parallel loop exactly once runs point by point in sequential order.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_STRUCTURED_H
#define ZERO_RUNTIME_HOST_STRUCTURED_H

#include "Body.h"
#include "ops/LoopSpace.h"

#include <memory>
#include <string>
#include <vector>

namespace zero::runtime::host {

using ops::LoopOperand;

struct LoopNest {
  std::vector<int64_t> loopSizes;
  std::vector<bool> isReduction;
  std::vector<LoopOperand> inputs;
  /// Outputs: strides into the destination and the result (one shape).
  std::vector<LoopOperand> outputs;
  std::vector<int64_t> results; // value ids, one per output
  std::vector<int64_t> outputNumel;
  Body body; // arguments: inputs, then outputs
};

/// The compute op running `nest`; a fast path when one applies (one-op
/// elementwise maps on f32, one-op reductions on f32/f64).
std::unique_ptr<ComputeOp> createLoopNestOp(LoopNest nest);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_STRUCTURED_H
