//===- Elements.cpp - tensor elements as scalar registers -----------------===//

#include "Elements.h"

#include <cstring>

namespace zero::runtime::host {

namespace {
/// Calls `fn(k, index)` for each of `count` addressed elements; the switch on
/// the type stays outside the loops.
template <typename Fn>
inline void forEachIndex(const int64_t *offsets, int64_t start, int64_t count,
                         Fn fn) {
  if (offsets)
    for (int64_t k = 0; k < count; ++k)
      fn(k, offsets[k]);
  else
    for (int64_t k = 0; k < count; ++k)
      fn(k, start + k);
}
} // namespace

void loadColumn(const void *data, DType type, const int64_t *offsets,
                int64_t start, int64_t count, Scalar *out) {
  switch (type) {
  case DType::F32: {
    const float *p = static_cast<const float *>(data);
    forEachIndex(offsets, start, count,
                 [&](int64_t k, int64_t i) { out[k].f = p[i]; });
    return;
  }
  case DType::F64: {
    const double *p = static_cast<const double *>(data);
    forEachIndex(offsets, start, count,
                 [&](int64_t k, int64_t i) { out[k].f = p[i]; });
    return;
  }
  case DType::BF16: {
    const uint16_t *p = static_cast<const uint16_t *>(data);
    forEachIndex(offsets, start, count, [&](int64_t k, int64_t i) {
      out[k].f = ops::widenBF16(p[i]);
    });
    return;
  }
  case DType::F16: {
    const uint16_t *p = static_cast<const uint16_t *>(data);
    forEachIndex(offsets, start, count,
                 [&](int64_t k, int64_t i) { out[k].f = ops::widenF16(p[i]); });
    return;
  }
  case DType::I64:
  case DType::Index: {
    const int64_t *p = static_cast<const int64_t *>(data);
    forEachIndex(offsets, start, count,
                 [&](int64_t k, int64_t i) { out[k].i = p[i]; });
    return;
  }
  case DType::I32: {
    const int32_t *p = static_cast<const int32_t *>(data);
    forEachIndex(offsets, start, count,
                 [&](int64_t k, int64_t i) { out[k].i = p[i]; });
    return;
  }
  case DType::I1: {
    const uint8_t *p = static_cast<const uint8_t *>(data);
    forEachIndex(offsets, start, count,
                 [&](int64_t k, int64_t i) { out[k].i = p[i] != 0; });
    return;
  }
  }
}

void storeColumn(void *data, DType type, const int64_t *offsets, int64_t start,
                 int64_t count, const Scalar *in) {
  switch (type) {
  case DType::F32: {
    float *p = static_cast<float *>(data);
    forEachIndex(offsets, start, count, [&](int64_t k, int64_t i) {
      p[i] = static_cast<float>(in[k].f);
    });
    return;
  }
  case DType::F64: {
    double *p = static_cast<double *>(data);
    forEachIndex(offsets, start, count,
                 [&](int64_t k, int64_t i) { p[i] = in[k].f; });
    return;
  }
  case DType::BF16: {
    uint16_t *p = static_cast<uint16_t *>(data);
    forEachIndex(offsets, start, count, [&](int64_t k, int64_t i) {
      p[i] = ops::narrowF32ToBF16(static_cast<float>(in[k].f));
    });
    return;
  }
  case DType::F16: {
    uint16_t *p = static_cast<uint16_t *>(data);
    forEachIndex(offsets, start, count, [&](int64_t k, int64_t i) {
      p[i] = ops::narrowToF16(in[k].f);
    });
    return;
  }
  case DType::I64:
  case DType::Index: {
    int64_t *p = static_cast<int64_t *>(data);
    forEachIndex(offsets, start, count,
                 [&](int64_t k, int64_t i) { p[i] = in[k].i; });
    return;
  }
  case DType::I32: {
    int32_t *p = static_cast<int32_t *>(data);
    forEachIndex(offsets, start, count, [&](int64_t k, int64_t i) {
      p[i] = static_cast<int32_t>(in[k].i);
    });
    return;
  }
  case DType::I1: {
    uint8_t *p = static_cast<uint8_t *>(data);
    forEachIndex(offsets, start, count, [&](int64_t k, int64_t i) {
      p[i] = static_cast<uint8_t>(in[k].i & 1);
    });
    return;
  }
  }
}

void loadFloats(const void *data, DType type, int64_t begin, int64_t count,
                float *out) {
  switch (type) {
  case DType::F32:
    std::memcpy(out, static_cast<const float *>(data) + begin, count * 4);
    return;
  case DType::F64: {
    const double *p = static_cast<const double *>(data) + begin;
    for (int64_t i = 0; i < count; ++i)
      out[i] = static_cast<float>(p[i]);
    return;
  }
  case DType::BF16: {
    const uint16_t *p = static_cast<const uint16_t *>(data) + begin;
    for (int64_t i = 0; i < count; ++i)
      out[i] = ops::widenBF16(p[i]);
    return;
  }
  default: {
    const uint16_t *p = static_cast<const uint16_t *>(data) + begin;
    for (int64_t i = 0; i < count; ++i)
      out[i] = ops::widenF16(p[i]);
    return;
  }
  }
}

void storeFloats(void *data, DType type, int64_t begin, int64_t count,
                 const float *in) {
  switch (type) {
  case DType::F32:
    std::memcpy(static_cast<float *>(data) + begin, in, count * 4);
    return;
  case DType::F64: {
    double *p = static_cast<double *>(data) + begin;
    for (int64_t i = 0; i < count; ++i)
      p[i] = in[i];
    return;
  }
  case DType::BF16: {
    uint16_t *p = static_cast<uint16_t *>(data) + begin;
    for (int64_t i = 0; i < count; ++i)
      p[i] = ops::narrowF32ToBF16(in[i]);
    return;
  }
  default: {
    uint16_t *p = static_cast<uint16_t *>(data) + begin;
    for (int64_t i = 0; i < count; ++i)
      p[i] = ops::narrowToF16(in[i]);
    return;
  }
  }
}

} // namespace zero::runtime::host
