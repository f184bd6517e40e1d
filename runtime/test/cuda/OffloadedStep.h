//===- OffloadedStep.h - an optimizer step in the host arena ----*- C++ -*-===//
//
// An offloaded optimizer step as offload_optimizer plans it, built with
// ScheduleBuilder: the f32 master, its gradient and Adam's moments in the
// host arena; the gradient unscaled by a scalar a device instruction
// produced; zero.adam and the bf16 cast of its new parameter; a zero.sgd; a
// norm reduced in host memory to a scalar that a device instruction reads;
// the bf16 copy brought to the device. The instructions, in order:
//   0-3   tensor.extract of the step, lr and scale (device), a constant
//   4     linalg.map: the unscaled gradient (host)
//   5, 6  zero.adam and its bf16 cast (host)
//   7     zero.sgd (host)
//   8-10  linalg.fill, linalg.reduce, tensor.extract: the norm (host)
//   11    linalg.fill of a host tensor with the norm's register
//   12    linalg.fill of a device tensor with the norm's register
//   13    linalg.copy of the bf16 parameter to the device
// CodegenTest checks which run on the CPU; HostComputeGpuTest runs it on a
// GPU, HostKernelsTest through HostKernels (src/HostKernels.h) on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_OFFLOADEDSTEP_H
#define ZERO_RUNTIME_TEST_CUDA_OFFLOADEDSTEP_H

#include "CudaTestUtil.h"

namespace zero::runtime::cudatest {

struct OffloadedStep {
  ScheduleBuilder b;
  int64_t n = 0;
  // Written by the test.
  int64_t stepTensor, lrTensor, scaleTensor, p, g, m, v, q, qg, qBuf;
  // Read by the test.
  int64_t p2, m2, v2, p16, q2, qBuf2, norm, normScalar, hostNorm, deviceNorm,
      deviceP16;
};

inline OffloadedStep makeOffloadedStep(int64_t n) {
  OffloadedStep s;
  s.n = n;
  ScheduleBuilder &b = s.b;
  const DType f32 = DType::F32, bf16 = DType::BF16;
  // The step, the learning rate and the inverse loss scale come from the
  // device, as registers.
  s.stepTensor = b.tensor(DType::I64, {});
  s.lrTensor = b.tensor(f32, {});
  s.scaleTensor = b.tensor(f32, {});
  const int64_t deviceNormInit = b.tensor(f32, {});
  s.deviceNorm = b.tensor(f32, {}, deviceNormInit);
  const int64_t deviceP16Init = b.tensor(bf16, {n});
  s.deviceP16 = b.tensor(bf16, {n}, deviceP16Init);

  b.setSpace("host");
  s.p = b.tensor(f32, {n});
  s.g = b.tensor(f32, {n});
  s.m = b.tensor(f32, {n});
  s.v = b.tensor(f32, {n});
  s.p2 = b.tensor(f32, {n}, s.p);
  s.m2 = b.tensor(f32, {n}, s.m);
  s.v2 = b.tensor(f32, {n}, s.v);
  const int64_t unscaledInit = b.tensor(f32, {n});
  const int64_t unscaled = b.tensor(f32, {n}, unscaledInit);
  const int64_t p16Init = b.tensor(bf16, {n});
  s.p16 = b.tensor(bf16, {n}, p16Init);
  const int64_t qn = n / 3 + 1;
  s.q = b.tensor(f32, {qn});
  s.qg = b.tensor(f32, {qn});
  s.qBuf = b.tensor(f32, {qn});
  s.q2 = b.tensor(f32, {qn}, s.q);
  s.qBuf2 = b.tensor(f32, {qn}, s.qBuf);
  const int64_t normInit = b.tensor(f32, {});
  const int64_t normFilled = b.tensor(f32, {}, normInit);
  s.norm = b.tensor(f32, {}, normInit);
  const int64_t hostNormInit = b.tensor(f32, {});
  s.hostNorm = b.tensor(f32, {}, hostNormInit);

  const int64_t step = b.extract(s.stepTensor, DType::I64);
  const int64_t lr = b.extract(s.lrTensor, f32);
  const int64_t scale = b.extract(s.scaleTensor, f32);
  const int64_t zero = b.constant(f32, 0.0);
  {
    const int64_t a = b.scalar(f32), o = b.scalar(f32), y = b.scalar(f32);
    b.op({{"op", "linalg.map"},
          {"operands", {s.g, unscaledInit}},
          {"results", {unscaled}},
          {"body", body({a, o},
                        {{{"op", "arith.mulf"},
                          {"operands", {a, scale}},
                          {"results", {y}}}},
                        y)}});
  }
  b.op(adamWInstruction({s.p, unscaled, s.m, s.v, step, lr},
                        {s.p2, s.m2, s.v2}));
  {
    const int64_t a = b.scalar(f32), o = b.scalar(bf16), t = b.scalar(bf16);
    b.op({{"op", "linalg.map"},
          {"operands", {s.p2, p16Init}},
          {"results", {s.p16}},
          {"body",
           body({a, o},
                {{{"op", "arith.truncf"}, {"operands", {a}}, {"results", {t}}}},
                t)}});
  }
  b.op({{"op", "zero.sgd"},
        {"momentum", 0.9},
        {"dampening", 0.0},
        {"weight_decay", 0.01},
        {"nesterov", true},
        {"operands", {s.q, s.qg, s.qBuf, lr}},
        {"results", {s.q2, s.qBuf2}}});
  b.op({{"op", "linalg.fill"},
        {"operands", {zero, normInit}},
        {"results", {normFilled}}});
  {
    const int64_t a = b.scalar(f32), acc = b.scalar(f32), sq = b.scalar(f32),
                  t = b.scalar(f32);
    b.op(
        {{"op", "linalg.reduce"},
         {"operands", {unscaled, normFilled}},
         {"results", {s.norm}},
         {"dimensions", {0}},
         {"body",
          body({a, acc},
               {{{"op", "arith.mulf"}, {"operands", {a, a}}, {"results", {sq}}},
                {{"op", "arith.addf"},
                 {"operands", {sq, acc}},
                 {"results", {t}}}},
               t)}});
  }
  s.normScalar = b.extract(s.norm, f32);
  b.op({{"op", "linalg.fill"},
        {"operands", {s.normScalar, hostNormInit}},
        {"results", {s.hostNorm}}});
  b.op({{"op", "linalg.fill"},
        {"operands", {s.normScalar, deviceNormInit}},
        {"results", {s.deviceNorm}}});
  b.op({{"op", "linalg.copy"},
        {"operands", {s.p16, deviceP16Init}},
        {"results", {s.deviceP16}}});
  return s;
}

} // namespace zero::runtime::cudatest

#endif // ZERO_RUNTIME_TEST_CUDA_OFFLOADEDSTEP_H
