//===- Body.h - a linalg op's body, interpreted in blocks ------*- C++ -*-===//
//
// A checked body (ops/Body.h) evaluated over a block of iteration points at
// a time: each value of the body is a column of registers in a workspace, and
// each op runs over the whole column, so the dispatch on the op costs once per
// block.
//
// Workspace layout: `numSlots()` columns of `chunk` registers; column s holds
// slot s. Slots 0 .. numArguments()-1 are the block arguments, filled by the
// caller; the caller also fills the columns of linalg.index results
// (indexSlots()). Constants and values defined outside the body are filled
// once per workspace (fillInvariants), the rest by eval.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_BODY_H
#define ZERO_RUNTIME_HOST_BODY_H

#include "HostOps.h"
#include "ScalarOps.h"

#include "ops/Body.h"

#include <string>
#include <utility>
#include <vector>

namespace zero::runtime::host {

/// The values from outside a body, read from the frame once per run.
struct BodyBindings {
  std::vector<Scalar> scalars;
  std::vector<const void *> tensors;
};

class Body {
public:
  Body() = default;
  explicit Body(ops::BodyProgram program) : program_(std::move(program)) {}

  size_t numArguments() const { return program_.argumentUsed.size(); }
  bool usesArgument(size_t index) const { return program_.argumentUsed[index]; }
  int64_t numSlots() const { return program_.numSlots; }
  /// (loop dimension, slot) of each linalg.index result.
  const std::vector<std::pair<int64_t, int>> &indexSlots() const {
    return program_.indexSlots;
  }
  const std::vector<int> &yieldSlots() const { return program_.yieldSlots; }
  /// Body ops evaluated per point (not constants or linalg.index).
  size_t numSteps() const { return program_.steps.size(); }

  /// The op when the body is exactly `yield op(arguments...)`, with the
  /// argument number of each operand in `arguments`; else null.
  const ScalarOp *getSingleOp(std::vector<int> &arguments) const;

  /// Reads the values from outside the body.
  void bind(Frame &frame, BodyBindings &bindings) const;
  void fillInvariants(Scalar *workspace, int64_t chunk,
                      const BodyBindings &bindings) const;
  /// Evaluates the body at `count` <= chunk points. Fails only on an index
  /// of tensor.extract outside its tensor.
  Status eval(Scalar *workspace, int64_t chunk, int64_t count,
              const BodyBindings &bindings) const;

private:
  ops::BodyProgram program_;
};

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_BODY_H
