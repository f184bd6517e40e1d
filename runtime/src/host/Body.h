//===- Body.h - the region of a linalg op, interpreted in blocks -*- C++
//-*-===//
//
// A body (docs/ScheduleFormat.md, "bodies") is checked once and then
// evaluated over a block of iteration points at a time: each value of the
// body is a column of registers in a workspace, and each op runs over the
// whole column, so the dispatch on the op costs once per block.
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
  /// Checks the op's decoded body: `argumentTypes` are the dtypes
  /// of the block arguments (described by `argumentsWhat` in messages),
  /// `yieldTypes` those of the yielded values; linalg.index may name loop
  /// dimensions 0 .. numLoops-1.
  static StatusOr<Body> parse(const OpContext &ctx,
                              const std::vector<DType> &argumentTypes,
                              const std::string &argumentsWhat,
                              const std::vector<DType> &yieldTypes,
                              int64_t numLoops);

  size_t numArguments() const { return argumentUsed_.size(); }
  bool usesArgument(size_t index) const { return argumentUsed_[index]; }
  int64_t numSlots() const { return numSlots_; }
  /// (loop dimension, slot) of each linalg.index result.
  const std::vector<std::pair<int64_t, int>> &indexSlots() const {
    return indexSlots_;
  }
  const std::vector<int> &yieldSlots() const { return yieldSlots_; }
  /// Body ops evaluated per point (not constants or linalg.index).
  size_t numSteps() const { return steps_.size(); }

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
  struct Step {
    bool isExtract = false;
    ScalarOp op;
    int operands[3] = {-1, -1, -1};
    int result = -1;
    // tensor.extract
    size_t tensor = 0;
    std::vector<int> indices;
    OpSite site; // for out-of-range messages
  };
  struct ExternalTensor {
    int64_t value;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    std::string description;
  };

  std::vector<bool> argumentUsed_;
  int64_t numSlots_ = 0;
  std::vector<std::pair<int64_t, int>> indexSlots_;
  std::vector<std::pair<Scalar, int>> constants_;
  std::vector<std::pair<int64_t, int>> externalScalars_; // value id, slot
  std::vector<ExternalTensor> externalTensors_;
  std::vector<Step> steps_;
  std::vector<int> yieldSlots_;
};

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_BODY_H
