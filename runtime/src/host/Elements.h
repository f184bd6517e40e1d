//===- Elements.h - tensor elements as scalar registers ---------*- C++ -*-===//
//
// The host's column loads and stores over ops/Elements.h, whose one element
// conversions (shared with the CUDA backend) this namespace uses.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HOST_ELEMENTS_H
#define ZERO_RUNTIME_HOST_ELEMENTS_H

#include "ops/Elements.h"

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::host {

using ops::canonicalize;
using ops::castScalar;
using ops::loadElement;
using ops::roundFloat;
using ops::storeElement;
using ops::wrapInt;

/// Converts elements [begin, begin + count) of a float tensor to f32 (f64
/// rounds), and back (rounding to the tensor's type).
void loadFloats(const void *data, DType type, int64_t begin, int64_t count,
                float *out);
void storeFloats(void *data, DType type, int64_t begin, int64_t count,
                 const float *in);

/// Loads `count` elements into registers: element `offsets[k]` when
/// `offsets` is given, else element `start + k`.
void loadColumn(const void *data, DType type, const int64_t *offsets,
                int64_t start, int64_t count, Scalar *out);
/// Stores `count` canonical registers, addressed like loadColumn.
void storeColumn(void *data, DType type, const int64_t *offsets, int64_t start,
                 int64_t count, const Scalar *in);

} // namespace zero::runtime::host

#endif // ZERO_RUNTIME_HOST_ELEMENTS_H
