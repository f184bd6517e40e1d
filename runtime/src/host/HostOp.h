//===- HostOp.h - compute ops of the host backend ---------------*- C++ -*-===//
//
// The host backend's side of Device::prepare: a compute instruction checked
// once (the reference checks, Check.h) and turned into an op that runs on
// the calling thread against a Frame, the rank's tensors in host memory and
// its scalar registers.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_HOSTOP_H
#define ZERO_RUNTIME_HOST_HOSTOP_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Status.h"

#include <memory>
#include <string>

namespace zero::runtime::host {

/// The state of one rank while a step runs: where each tensor value lives
/// and the scalar registers. Compute ops only read and write through it.
class Frame {
public:
  virtual ~Frame() = default;
  virtual TensorRef tensor(int64_t id) = 0;
  virtual Scalar &scalar(int64_t id) = 0;
  virtual int rank() const = 0;
  virtual int worldSize() const = 0;
};

/// One compute instruction, checked and prepared once and run once per step.
class ComputeOp {
public:
  virtual ~ComputeOp() = default;
  virtual Status run(Frame &frame) = 0;
};

/// Checks compute instruction `inst` completely against `values` and
/// prepares it: operand and result kinds, dtypes, shapes and op-specific
/// field values, including its body (docs/ScheduleFormat.md, "Compute
/// ops"). An error names `fileName`, the instruction's path and field, and
/// its loc.
StatusOr<std::unique_ptr<ComputeOp>>
prepareComputeOp(const Instruction &inst, const std::string &fileName,
                 const ValueTable &values);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_HOSTOP_H
