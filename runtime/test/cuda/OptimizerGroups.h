//===- OptimizerGroups.h - runs of optimizer steps as schedules -*- C++ -*-===//
//
// Consecutive zero.adam or zero.sgd steps with the casts of their new
// parameters: the groups the CUDA backend runs as one multi-tensor launch
// (Optimizers.cu). OptimizerGpuTest runs them on the GPU and
// OptimizerKernelsOnCpuTest their kernels on the CPU, both against the host.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_OPTIMIZERGROUPS_H
#define ZERO_RUNTIME_TEST_CUDA_OPTIMIZERGROUPS_H

#include "CudaTestUtil.h"

#include <vector>

namespace zero::runtime::cudatest {

struct OptimizerTypes {
  DType param, grad, m, v;
};

/// One parameter of an optimizer group, and the type its new value is cast
/// to after the step (f32: no cast).
struct GroupMember {
  OptimizerTypes types;
  int64_t numel;
  DType cast = DType::F32;
  /// The cast writes where the next member's gradient is.
  bool castOverNextGrad = false;
};

struct GroupIds {
  int64_t param, grad, m, v, param2, m2, v2;
  int64_t copy = -1; // the cast's result
};

/// Consecutive zero.adam (or zero.sgd) steps, one per member, sharing the
/// step and lr registers (read from two rank-0 tensors first). The states
/// are updated in place; the params too, unless `reuseGrads`: then member
/// k's param result lives in member k - 1's gradient (dead once step k - 1
/// has run), which the members' shapes must allow.
struct GroupSchedule {
  ScheduleBuilder b;
  std::vector<GroupIds> ids;
  int64_t stepTensor = -1, lrTensor = -1;
};

inline GroupSchedule optimizerGroup(bool adam,
                                    const std::vector<GroupMember> &members,
                                    bool reuseGrads) {
  GroupSchedule g;
  ScheduleBuilder &b = g.b;
  for (const GroupMember &member : members) {
    const OptimizerTypes &t = member.types;
    GroupIds ids{};
    ids.param = b.tensor(t.param, {member.numel});
    ids.grad = b.tensor(t.grad, {member.numel});
    ids.m = b.tensor(t.m, {member.numel});
    ids.v = adam ? b.tensor(t.v, {member.numel}) : -1;
    g.ids.push_back(ids);
  }
  g.stepTensor = b.tensor(DType::I64, {});
  g.lrTensor = b.tensor(DType::F32, {});
  const int64_t step = adam ? b.extract(g.stepTensor, DType::I64) : -1;
  const int64_t lr = b.extract(g.lrTensor, DType::F32);
  for (size_t k = 0; k < members.size(); ++k) {
    const OptimizerTypes &t = members[k].types;
    GroupIds &ids = g.ids[k];
    ids.param2 = b.tensor(t.param, {members[k].numel},
                          reuseGrads && k > 0 ? g.ids[k - 1].grad : ids.param);
    ids.m2 = b.tensor(t.m, {members[k].numel}, ids.m);
    if (adam) {
      ids.v2 = b.tensor(t.v, {members[k].numel}, ids.v);
      b.op({{"op", "zero.adam"},
            {"beta1", 0.9},
            {"beta2", 0.999},
            {"eps", 1e-8},
            {"weight_decay", 0.01 * static_cast<double>(k)},
            {"mode", k % 2 ? "l2" : "adamw"},
            {"bias_correction", true},
            {"amsgrad", false},
            {"operands", {ids.param, ids.grad, ids.m, ids.v, step, lr}},
            {"results", {ids.param2, ids.m2, ids.v2}}});
    } else {
      b.op({{"op", "zero.sgd"},
            {"momentum", 0.9},
            {"dampening", 0.0},
            {"weight_decay", 0.01 * static_cast<double>(k)},
            {"nesterov", k % 2 == 1},
            {"operands", {ids.param, ids.grad, ids.m, lr}},
            {"results", {ids.param2, ids.m2}}});
    }
    if (members[k].cast != DType::F32)
      ids.copy =
          b.truncate(ids.param2, members[k].cast,
                     members[k].castOverNextGrad ? g.ids[k + 1].grad : -1);
  }
  return g;
}

/// The optimizer steps and their casts, in order.
inline std::vector<const Instruction *>
optimizerSteps(const Schedule &schedule) {
  std::vector<const Instruction *> steps;
  for (const Instruction &inst : schedule.streams()[0].instructions)
    if (inst.kind == Instruction::Kind::Compute &&
        (inst.code() == OpCode::Adam || inst.code() == OpCode::Sgd ||
         inst.code() == OpCode::Map))
      steps.push_back(&inst);
  return steps;
}

inline const std::vector<GroupMember> &mixedMembers() {
  const DType f32 = DType::F32, f64 = DType::F64, bf16 = DType::BF16;
  const DType f16 = DType::F16;
  // Casts of the new parameter: a vector path and a tail of 3, an f64
  // parameter (one element at a time), GPT-2's bf16 mixed precision.
  static const std::vector<GroupMember> members = {
      {{f32, f32, f32, f32}, 4099, f16},
      {{bf16, bf16, f32, f32}, 65536 + 5},
      {{f64, f64, f64, f64}, 3, bf16},
      {{f32, f32, f32, f32}, 0},
      {{f32, bf16, f32, f32}, 65536 * 2, bf16}};
  return members;
}

inline const std::vector<GroupMember> &sameMembers() {
  const DType f32 = DType::F32;
  static const std::vector<GroupMember> members = {
      {{f32, f32, f32, f32}, 4099},
      {{f32, f32, f32, f32}, 4099},
      {{f32, f32, f32, f32}, 4099}};
  return members;
}

// Plain C++: runs without a GPU.
} // namespace zero::runtime::cudatest

#endif // ZERO_RUNTIME_TEST_CUDA_OPTIMIZERGROUPS_H
