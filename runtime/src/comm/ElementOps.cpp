//===- ElementOps.cpp - element arithmetic for collectives ----------------===//

#include "ElementOps.h"

#include "ops/ElementMath.h"

#include <cmath>
#include <cstring>

namespace zero::runtime::comm {

void reduce16(const uint16_t *in, uint16_t *inout, int64_t count, DType type,
              ReduceOp op) {
  bool bf16 = type == DType::BF16;
  for (int64_t i = 0; i < count; ++i) {
    double a = bf16 ? ops::widenBF16(in[i]) : ops::widenF16(in[i]);
    double b = bf16 ? ops::widenBF16(inout[i]) : ops::widenF16(inout[i]);
    double r = 0;
    switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      r = a + b;
      break;
    case ReduceOp::Max:
      r = std::isnan(a) || a > b ? a : b;
      break;
    case ReduceOp::Min:
      r = std::isnan(a) || a < b ? a : b;
      break;
    }
    inout[i] = bf16 ? ops::narrowToBF16(r) : ops::narrowToF16(r);
  }
}

void divideElements(void *data, int64_t count, DType type, int64_t divisor) {
  if (divisor == 1)
    return;
  switch (type) {
  case DType::F32: {
    float *p = static_cast<float *>(data);
    float d = static_cast<float>(divisor);
    for (int64_t i = 0; i < count; ++i)
      p[i] /= d;
    return;
  }
  case DType::F64: {
    double *p = static_cast<double *>(data);
    for (int64_t i = 0; i < count; ++i)
      p[i] /= static_cast<double>(divisor);
    return;
  }
  case DType::BF16:
  case DType::F16: {
    uint16_t *p = static_cast<uint16_t *>(data);
    bool bf16 = type == DType::BF16;
    for (int64_t i = 0; i < count; ++i) {
      double v = (bf16 ? ops::widenBF16(p[i]) : ops::widenF16(p[i])) /
                 static_cast<double>(divisor);
      p[i] = bf16 ? ops::narrowToBF16(v) : ops::narrowToF16(v);
    }
    return;
  }
  case DType::I64:
  case DType::Index: {
    int64_t *p = static_cast<int64_t *>(data);
    for (int64_t i = 0; i < count; ++i)
      p[i] /= divisor;
    return;
  }
  case DType::I32: {
    int32_t *p = static_cast<int32_t *>(data);
    for (int64_t i = 0; i < count; ++i)
      p[i] = static_cast<int32_t>(p[i] / divisor);
    return;
  }
  case DType::I1:
    return;
  }
}

} // namespace zero::runtime::comm
