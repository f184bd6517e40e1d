//===- RowPrograms.h - softmax and layer norm as schedules ------*- C++ -*-===//
//
// The instruction sequences zero-opt emits for softmax and layer norm (the
// GPT of zero-model, test/Target/Schedule), built with ScheduleBuilder: the
// row programs the CUDA backend fuses into one kernel (RowFusion.h).
// CodegenTest checks how they are planned and that their kernels compile;
// RowFusionGpuTest runs them against the host and against the same
// instructions run one by one on the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_ROWPROGRAMS_H
#define ZERO_RUNTIME_TEST_CUDA_ROWPROGRAMS_H

#include "CudaTestUtil.h"

#include <cstdint>
#include <vector>

namespace zero::runtime::cudatest {

struct RowProgramSchedule {
  ScheduleBuilder b;
  std::vector<int64_t> inputs;  // written by the test
  std::vector<int64_t> outputs; // read by the test
  size_t programLength = 0;     // instructions of the row program, from 0
  std::vector<int64_t> stored;  // the values the fused kernel writes
  std::vector<int64_t> scalars; // the registers it reads
};

/// softmax(x) over the last dimension of x [points..., R], as the GPT's
/// attention computes it; then a copy of the probabilities (a use outside
/// the program, as the next matmul is).
inline RowProgramSchedule makeSoftmax(DType dtype,
                                      const std::vector<int64_t> &pointShape,
                                      int64_t rowLength) {
  RowProgramSchedule s;
  ScheduleBuilder &b = s.b;
  std::vector<int64_t> rowShape = pointShape;
  rowShape.push_back(rowLength);
  const json dims = {static_cast<int64_t>(pointShape.size())};
  const int64_t x = b.tensor(dtype, rowShape);
  s.inputs = {x};
  // Body arguments and op results are scalars of the value table, as in a
  // compiled schedule.
  const int64_t minusInf = b.constant(dtype, "-inf");
  const int64_t maxInit = b.tensor(dtype, pointShape);
  const int64_t maxFilled = b.tensor(dtype, pointShape, maxInit);
  b.op({{"op", "linalg.fill"},
        {"operands", {minusInf, maxInit}},
        {"results", {maxFilled}}});
  const int64_t rowMax = b.tensor(dtype, pointShape, maxInit);
  {
    const int64_t a = b.scalar(dtype), acc = b.scalar(dtype),
                  m = b.scalar(dtype);
    b.op({{"op", "linalg.reduce"},
          {"operands", {x, maxFilled}},
          {"results", {rowMax}},
          {"dimensions", dims},
          {"body", body({a, acc},
                        {{{"op", "arith.maximumf"},
                          {"operands", {a, acc}},
                          {"results", {m}}}},
                        m)}});
  }
  const int64_t maxRows = b.tensor(dtype, rowShape);
  b.op({{"op", "linalg.broadcast"},
        {"operands", {rowMax, b.tensor(dtype, rowShape, maxRows)}},
        {"results", {maxRows}},
        {"dimensions", dims}});
  const int64_t exps = b.tensor(dtype, rowShape);
  {
    const int64_t a = b.scalar(dtype), m = b.scalar(dtype), d = b.scalar(dtype),
                  diff = b.scalar(dtype), e = b.scalar(dtype);
    b.op({{"op", "linalg.map"},
          {"operands", {x, maxRows, b.tensor(dtype, rowShape, exps)}},
          {"results", {exps}},
          {"body",
           body({a, m, d},
                {{{"op", "arith.subf"},
                  {"operands", {a, m}},
                  {"results", {diff}}},
                 {{"op", "math.exp"}, {"operands", {diff}}, {"results", {e}}}},
                e)}});
  }
  const int64_t zero = b.constant(dtype, 0.0);
  const int64_t sumInit = b.tensor(dtype, pointShape);
  const int64_t sumFilled = b.tensor(dtype, pointShape, sumInit);
  b.op({{"op", "linalg.fill"},
        {"operands", {zero, sumInit}},
        {"results", {sumFilled}}});
  const int64_t rowSum = b.tensor(dtype, pointShape, sumInit);
  {
    const int64_t a = b.scalar(dtype), acc = b.scalar(dtype),
                  t = b.scalar(dtype);
    b.op({{"op", "linalg.reduce"},
          {"operands", {exps, sumFilled}},
          {"results", {rowSum}},
          {"dimensions", dims},
          {"body", body({a, acc},
                        {{{"op", "arith.addf"},
                          {"operands", {a, acc}},
                          {"results", {t}}}},
                        t)}});
  }
  const int64_t sumRows = b.tensor(dtype, rowShape);
  b.op({{"op", "linalg.broadcast"},
        {"operands", {rowSum, b.tensor(dtype, rowShape, sumRows)}},
        {"results", {sumRows}},
        {"dimensions", dims}});
  const int64_t probs = b.tensor(dtype, rowShape);
  {
    const int64_t a = b.scalar(dtype), t = b.scalar(dtype), d = b.scalar(dtype),
                  q = b.scalar(dtype);
    b.op(
        {{"op", "linalg.map"},
         {"operands", {exps, sumRows, b.tensor(dtype, rowShape, probs)}},
         {"results", {probs}},
         {"body",
          body({a, t, d},
               {{{"op", "arith.divf"}, {"operands", {a, t}}, {"results", {q}}}},
               q)}});
  }
  s.programLength = 10;
  const int64_t copied = b.tensor(dtype, rowShape);
  b.op({{"op", "linalg.copy"},
        {"operands", {probs, b.tensor(dtype, rowShape, copied)}},
        {"results", {copied}}});
  s.outputs = {probs, copied};
  s.stored = {probs};
  s.scalars = {minusInf, zero};
  return s;
}

/// layer_norm(x) * w + b over the rows of x [N, R] (eps 1e-5), as the GPT
/// computes it; then copies of the centred rows and of the reciprocal
/// standard deviations (what the backward pass reads).
inline RowProgramSchedule makeLayerNorm(DType dtype, int64_t numRows,
                                        int64_t rowLength) {
  RowProgramSchedule s;
  ScheduleBuilder &b = s.b;
  const std::vector<int64_t> rowShape = {numRows, rowLength},
                             pointShape = {numRows}, vector = {rowLength};
  const int64_t x = b.tensor(dtype, rowShape), w = b.tensor(dtype, vector),
                bias = b.tensor(dtype, vector);
  s.inputs = {x, w, bias};
  const double inverse = 1.0 / static_cast<double>(rowLength);
  auto sumRows = [&](int64_t input, int64_t &zero) {
    zero = b.constant(dtype, 0.0);
    const int64_t init = b.tensor(dtype, pointShape);
    const int64_t filled = b.tensor(dtype, pointShape, init);
    b.op({{"op", "linalg.fill"},
          {"operands", {zero, init}},
          {"results", {filled}}});
    const int64_t sum = b.tensor(dtype, pointShape, init);
    const int64_t a = b.scalar(dtype), acc = b.scalar(dtype),
                  t = b.scalar(dtype);
    b.op({{"op", "linalg.reduce"},
          {"operands", {input, filled}},
          {"results", {sum}},
          {"dimensions", {1}},
          {"body", body({a, acc},
                        {{{"op", "arith.addf"},
                          {"operands", {a, acc}},
                          {"results", {t}}}},
                        t)}});
    return sum;
  };
  auto broadcastPoints = [&](int64_t points) {
    const int64_t rows = b.tensor(dtype, rowShape);
    b.op({{"op", "linalg.broadcast"},
          {"operands", {points, b.tensor(dtype, rowShape, rows)}},
          {"results", {rows}},
          {"dimensions", {1}}});
    return rows;
  };
  int64_t zero1 = -1, zero2 = -1;
  const int64_t sum = sumRows(x, zero1);
  const int64_t sumBroadcast = broadcastPoints(sum);
  const int64_t centred = b.tensor(dtype, rowShape);
  {
    const int64_t a = b.scalar(dtype), m = b.scalar(dtype), d = b.scalar(dtype),
                  c = b.scalar(dtype), mean = b.scalar(dtype),
                  diff = b.scalar(dtype);
    b.op({{"op", "linalg.map"},
          {"operands", {x, sumBroadcast, b.tensor(dtype, rowShape, centred)}},
          {"results", {centred}},
          {"body", body({a, m, d},
                        {{{"op", "arith.constant"},
                          {"operands", json::array()},
                          {"value", inverse},
                          {"results", {c}}},
                         {{"op", "arith.mulf"},
                          {"operands", {m, c}},
                          {"results", {mean}}},
                         {{"op", "arith.subf"},
                          {"operands", {a, mean}},
                          {"results", {diff}}}},
                        diff)}});
  }
  const int64_t squares = b.tensor(dtype, rowShape);
  {
    const int64_t a = b.scalar(dtype), d = b.scalar(dtype),
                  sq = b.scalar(dtype);
    b.op({{"op", "linalg.map"},
          {"operands", {centred, b.tensor(dtype, rowShape, squares)}},
          {"results", {squares}},
          {"body", body({a, d},
                        {{{"op", "arith.mulf"},
                          {"operands", {a, a}},
                          {"results", {sq}}}},
                        sq)}});
  }
  const int64_t sumSquares = sumRows(squares, zero2);
  const int64_t rstd = b.tensor(dtype, pointShape);
  {
    const int64_t v = b.scalar(dtype), d = b.scalar(dtype),
                  eps = b.scalar(dtype), c = b.scalar(dtype),
                  var = b.scalar(dtype), shifted = b.scalar(dtype),
                  r = b.scalar(dtype);
    b.op({{"op", "linalg.map"},
          {"operands", {sumSquares, b.tensor(dtype, pointShape, rstd)}},
          {"results", {rstd}},
          {"body", body({v, d},
                        {{{"op", "arith.constant"},
                          {"operands", json::array()},
                          {"value", 1e-5},
                          {"results", {eps}}},
                         {{"op", "arith.constant"},
                          {"operands", json::array()},
                          {"value", inverse},
                          {"results", {c}}},
                         {{"op", "arith.mulf"},
                          {"operands", {v, c}},
                          {"results", {var}}},
                         {{"op", "arith.addf"},
                          {"operands", {var, eps}},
                          {"results", {shifted}}},
                         {{"op", "math.rsqrt"},
                          {"operands", {shifted}},
                          {"results", {r}}}},
                        r)}});
  }
  const int64_t rstdBroadcast = broadcastPoints(rstd);
  const int64_t normed = b.tensor(dtype, rowShape);
  {
    const int64_t a = b.scalar(dtype), r = b.scalar(dtype), d = b.scalar(dtype),
                  n = b.scalar(dtype);
    b.op(
        {{"op", "linalg.map"},
         {"operands",
          {centred, rstdBroadcast, b.tensor(dtype, rowShape, normed)}},
         {"results", {normed}},
         {"body",
          body({a, r, d},
               {{{"op", "arith.mulf"}, {"operands", {a, r}}, {"results", {n}}}},
               n)}});
  }
  auto broadcastVector = [&](int64_t vec) {
    const int64_t rows = b.tensor(dtype, rowShape);
    b.op({{"op", "linalg.broadcast"},
          {"operands", {vec, b.tensor(dtype, rowShape, rows)}},
          {"results", {rows}},
          {"dimensions", {0}}});
    return rows;
  };
  const int64_t weights = broadcastVector(w);
  const int64_t biases = broadcastVector(bias);
  const int64_t y = b.tensor(dtype, rowShape);
  {
    const int64_t a = b.scalar(dtype), ww = b.scalar(dtype),
                  bb = b.scalar(dtype), d = b.scalar(dtype),
                  scaled = b.scalar(dtype), shifted = b.scalar(dtype);
    b.op({{"op", "linalg.map"},
          {"operands", {normed, weights, biases, b.tensor(dtype, rowShape, y)}},
          {"results", {y}},
          {"body", body({a, ww, bb, d},
                        {{{"op", "arith.mulf"},
                          {"operands", {a, ww}},
                          {"results", {scaled}}},
                         {{"op", "arith.addf"},
                          {"operands", {scaled, bb}},
                          {"results", {shifted}}}},
                        shifted)}});
  }
  s.programLength = 15;
  const int64_t centredCopy = b.tensor(dtype, rowShape);
  b.op({{"op", "linalg.copy"},
        {"operands", {centred, b.tensor(dtype, rowShape, centredCopy)}},
        {"results", {centredCopy}}});
  const int64_t rstdCopy = b.tensor(dtype, pointShape);
  b.op({{"op", "linalg.copy"},
        {"operands", {rstd, b.tensor(dtype, pointShape, rstdCopy)}},
        {"results", {rstdCopy}}});
  s.outputs = {y, centredCopy, rstdCopy, centred, rstd};
  s.stored = {centred, rstd, y};
  s.scalars = {zero1, zero2};
  return s;
}

} // namespace zero::runtime::cudatest

#endif // ZERO_RUNTIME_TEST_CUDA_ROWPROGRAMS_H
