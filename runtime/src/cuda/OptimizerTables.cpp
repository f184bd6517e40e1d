//===- OptimizerTables.cpp - an optimizer group as one launch -------------===//

#include "OptimizerTables.h"

#include "CudaOps.h"
#include "ops/OptimizerOperands.h"

#include <algorithm>
#include <cstring>

namespace zero::runtime::cuda {

void addChunks(int32_t index, int64_t numel, std::vector<Chunk> &chunks) {
  int64_t begin = 0;
  do {
    chunks.push_back({index, begin, std::min(numel, begin + kOptimizerChunk)});
    begin += kOptimizerChunk;
  } while (begin < numel);
}

StatusOr<OptimizerTables> planOptimizerGroup(
    const std::vector<const Instruction *> &group, const ValueTable &values,
    bool adam, const std::function<void *(int64_t)> &tensorOf,
    const std::function<int32_t(const Instruction &, size_t, bool)> &addSite,
    const std::function<std::string(const Instruction &)> &where) {
  OptimizerTables tables;
  std::vector<OptimizerTensor> &tensors = tables.tensors;
  std::vector<Chunk> &chunks = tables.chunks;
  const std::vector<OptimizerStep> steps = getOptimizerSteps(group);
  if (steps.empty() && !group.empty())
    return ZERO_ERROR(kInternal,
                      where(*group.front()) + ": not a run of optimizer steps");
  for (const OptimizerStep &optimizerStep : steps) {
    const Instruction *inst = optimizerStep.update;
    if (inst->code() != (adam ? OpCode::Adam : OpCode::Sgd))
      return ZERO_ERROR(kInternal,
                        where(*inst) + ": mixed optimizers in one group");
    // Operands: param, grad, state(s), [step], lr, [beta1]; results: param,
    // state(s). Adam's states: exp_avg, exp_avg_sq and, with amsgrad,
    // max_exp_avg_sq.
    const OpFields &f = inst->fields;
    const bool amsgrad = adam && f.getBool(Field::Amsgrad);
    const size_t numStates = adam ? ops::AdamOperands(amsgrad).numStates : 1;
    for (size_t r = 0; r <= numStates; ++r)
      tables.moves.push_back(
          {inst->results[r], inst->operands[r == 0 ? 0 : r + 1]});
    OptimizerTensor t;
    std::memset(&t, 0, sizeof(t));
    const ValueInfo &param = values.values[inst->results[0]];
    t.param = tensorOf(inst->results[0]);
    t.grad = tensorOf(inst->operands[1]);
    t.m = tensorOf(inst->results[1]);
    t.v = adam ? tensorOf(inst->results[2]) : nullptr;
    t.paramType = param.dtype;
    t.gradType = values.values[inst->operands[1]].dtype;
    t.mType = values.values[inst->results[1]].dtype;
    t.vType = adam ? values.values[inst->results[2]].dtype : DType::F32;
    t.vMax = amsgrad ? tensorOf(inst->results[3]) : nullptr;
    t.vMaxType = amsgrad ? values.values[inst->results[3]].dtype : DType::F32;
    t.numel = param.numel;
    t.weightDecay = f.getNumber(Field::WeightDecay);
    const ops::GradientScalingOperands scaling(f, inst->operands.size());
    auto registerOf = [&](size_t index) -> int64_t {
      return index == scaling.kAbsent ? -1 : inst->operands[index];
    };
    t.scaleRegister = registerOf(scaling.scale);
    t.coefRegister = registerOf(scaling.coef);
    t.skipRegister = registerOf(scaling.skip);
    if (adam) {
      const ops::AdamOperands layout(amsgrad);
      t.stepRegister = inst->operands[layout.step];
      t.lrRegister = inst->operands[layout.lr];
      t.beta1Register = inst->operands.size() - scaling.count > layout.beta1
                            ? inst->operands[layout.beta1]
                            : -1;
      t.beta1 = f.getNumber(Field::Beta1);
      t.beta2 = f.getNumber(Field::Beta2);
      t.eps = f.getNumber(Field::Eps);
      t.adamw = f.getString(Field::Mode) == "adamw";
      t.biasCorrection = f.getBool(Field::BiasCorrection);
      t.amsgrad = amsgrad;
      t.stepSite = addSite(*inst, layout.step, false);
      t.beta1Site =
          t.beta1Register >= 0 ? addSite(*inst, layout.beta1, true) : -1;
    } else {
      t.lrRegister = inst->operands[3];
      t.momentum = f.getNumber(Field::Momentum);
      t.dampening = f.getNumber(Field::Dampening);
      t.nesterov = f.getBool(Field::Nesterov);
    }
    if (optimizerStep.cast) {
      const int64_t copy = optimizerStep.cast->results[0];
      t.cast = tensorOf(copy);
      t.castType = values.values[copy].dtype;
    }
    auto vector = [](const void *p, DType type) {
      return isVectorOptimizerTensor(type, reinterpret_cast<uintptr_t>(p));
    };
    t.vec4 = vector(t.param, t.paramType) && vector(t.grad, t.gradType) &&
             vector(t.m, t.mType) && (!adam || vector(t.v, t.vType)) &&
             (!amsgrad || vector(t.vMax, t.vMaxType)) &&
             (!t.cast || vector(t.cast, t.castType));
    addChunks(static_cast<int32_t>(tensors.size()), t.numel, chunks);
    tensors.push_back(t);
  }
  if (chunks.size() > 0x7fffffffu)
    return ZERO_ERROR(kInvalidArgument,
                      "an optimizer group of more than 2^31 chunks");
  return tables;
}

} // namespace zero::runtime::cuda
