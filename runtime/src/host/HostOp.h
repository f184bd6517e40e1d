//===- HostOp.h - compute ops of the host backend ---------------*- C++ -*-===//
//
// The host backend's side of Device::prepare: a compute instruction checked
// once (ops/Check.h) and turned into an op that runs on the calling thread
// against a Frame, the rank's tensors in host memory and its scalar
// registers.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_HOSTOP_H
#define ZERO_RUNTIME_HOST_HOSTOP_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Schedule.h"
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

/// Checks compute instruction `inst` against `values` (ops::checkComputeOp:
/// an error names `fileName`, the instruction's path and field, and its
/// loc) and prepares it.
StatusOr<std::unique_ptr<ComputeOp>>
prepareComputeOp(const Instruction &inst, const std::string &fileName,
                 const ValueTable &values);

/// Whether compute instructions `adam` and `cast` are a zero.adam on f32
/// state and the linalg.map right after it that casts its new parameter to
/// bf16 or f16 (`arith.truncf`, the 16-bit parameter of mixed precision):
/// one pass over memory can write both, as DeepSpeed's CPU Adam does.
bool isAdamWithCast(const Instruction &adam, const Instruction &cast);

/// Prepares such a pair as one op: each instruction checked as
/// prepareComputeOp checks it, the cast's result written by the Adam loop
/// (runAdamStep's 16-bit copy: the same bits as the map's). Null when they
/// must run apart: the copy is not of an f32 parameter to bf16 or f16, or
/// its bytes overlap a tensor Adam reads or writes (the plan may reuse a
/// buffer that dies at Adam for the cast's result, which is written later).
StatusOr<std::unique_ptr<ComputeOp>>
prepareAdamWithCast(const Instruction &adam, const Instruction &cast,
                    const Schedule &schedule);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_HOSTOP_H
