//===- Body.cpp - the region of a linalg op, interpreted in blocks --------===//

#include "Body.h"

#include "Copy.h"
#include "Elements.h"

namespace zero::runtime::host {

const ScalarOp *Body::getSingleOp(std::vector<int> &arguments) const {
  if (program_.steps.size() != 1 || !program_.constants.empty() ||
      !program_.indexSlots.empty() || !program_.externalScalars.empty() ||
      program_.steps[0].isExtract || program_.yieldSlots.size() != 1 ||
      program_.yieldSlots[0] != program_.steps[0].result)
    return nullptr;
  arguments.clear();
  for (int slot : program_.steps[0].operands) {
    if (slot < 0)
      break;
    if (slot >= static_cast<int>(numArguments()))
      return nullptr;
    arguments.push_back(slot);
  }
  return &program_.steps[0].op;
}

void Body::bind(Frame &frame, BodyBindings &bindings) const {
  bindings.scalars.clear();
  for (const auto &external : program_.externalScalars)
    bindings.scalars.push_back(frame.scalar(external.first));
  bindings.tensors.clear();
  for (const ops::BodyTensor &tensor : program_.externalTensors)
    bindings.tensors.push_back(frame.tensor(tensor.value).data);
}

void Body::fillInvariants(Scalar *workspace, int64_t chunk,
                          const BodyBindings &bindings) const {
  auto fill = [&](int slot, Scalar value) {
    Scalar *column = workspace + slot * chunk;
    for (int64_t k = 0; k < chunk; ++k)
      column[k] = value;
  };
  for (const auto &constant : program_.constants)
    fill(constant.second, constant.first);
  for (size_t i = 0; i < program_.externalScalars.size(); ++i)
    fill(program_.externalScalars[i].second, bindings.scalars[i]);
}

Status Body::eval(Scalar *workspace, int64_t chunk, int64_t count,
                  const BodyBindings &bindings) const {
  for (const ops::BodyStep &step : program_.steps) {
    Scalar *out = workspace + step.result * chunk;
    if (!step.isExtract) {
      const Scalar *in[3] = {nullptr, nullptr, nullptr};
      for (int k = 0; k < 3 && step.operands[k] >= 0; ++k)
        in[k] = workspace + step.operands[k] * chunk;
      applyScalarOp(step.op, in, out, count);
      continue;
    }
    const ops::BodyTensor &tensor = program_.externalTensors[step.tensor];
    static thread_local std::vector<int64_t> offsets;
    if (static_cast<int64_t>(offsets.size()) < count)
      offsets.resize(count);
    for (int64_t k = 0; k < count; ++k) {
      int64_t offset = 0;
      for (size_t d = 0; d < step.indices.size(); ++d) {
        int64_t index = workspace[step.indices[d] * chunk + k].i;
        if (index < 0 || index >= tensor.shape[d])
          return step.site.error(
              StatusCode::kOutOfRange, "",
              "tensor.extract index " + std::to_string(index) +
                  " is out of range for dimension " + std::to_string(d) +
                  " (size " + std::to_string(tensor.shape[d]) + ") of " +
                  tensor.description);
        offset += index * tensor.strides[d];
      }
      offsets[k] = offset;
    }
    loadColumn(bindings.tensors[step.tensor], tensor.dtype, offsets.data(), 0,
               count, out);
  }
  return Status::ok();
}

} // namespace zero::runtime::host
