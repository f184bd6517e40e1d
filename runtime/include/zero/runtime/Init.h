//===- Init.h - counter-based deterministic random values -------*- C++ -*-===//
//
// Every random value of a run is a pure function of (seed, name, indices):
// element i of parameter "h.0.attn.c_attn.weight" is the same whichever rank
// generates it, in whatever chunks and on however many threads, so the
// initial model and the synthetic data do not depend on the world size.
// test/Runtime/Inputs/zero_random.py implements the same functions in Python,
// bit for bit, for the PyTorch reference.
//
// The generator:
//   key(seed, name)   = mix(seed ^ fnv1a64(name))
//   bits(key, c)      = mix(key + (c + 1) * 0x9E3779B97F4A7C15)  (splitmix64's
//                       c-th output from state `key`)
//   mix(z)            = splitmix64's finalizer (Stafford's variant 13)
// A normal value at element i uses the pair p = i / 2: u1 = ((bits(key, 2p)
// >> 11) + 1) * 2^-53 in (0, 1], u2 = (bits(key, 2p + 1) >> 11) * 2^-53, r =
// sqrt(-2 log u1), theta = 2 pi u2; even i take r cos(theta), odd i r
// sin(theta) (Box-Muller), scaled by std in double, then rounded to float.
// Data rows get their own key: rowKey = mix(key(seed, name) ^ mix(row + 1)).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_INIT_H
#define ZERO_RUNTIME_INIT_H

#include <cstdint>
#include <string>

namespace zero::runtime {

/// Element `index` of the flattened tensor `name` drawn from normal(0, std)
/// under `seed`.
float initNormal(uint64_t seed, const std::string &name, int64_t index,
                 float std);

/// Fills out[0..count) with elements [begin, begin + count) of that tensor;
/// equal to initNormal element by element.
void fillNormal(uint64_t seed, const std::string &name, int64_t begin,
                int64_t count, float std, float *out);

/// Synthetic float data: element `index` of data argument `name` at global
/// row `row`, normal(0, 1). The global row of row r of rank k at step s with
/// per-rank batch b is (s * worldSize + k) * b + r (as for token windows), so
/// the job's data does not depend on the world size.
float syntheticFloat(uint64_t seed, const std::string &name, int64_t row,
                     int64_t index);

/// Synthetic integer data (labels, tokens), uniform in [0, bound) (bits mod
/// bound; bound >= 1), keyed like syntheticFloat.
int64_t syntheticInt(uint64_t seed, const std::string &name, int64_t row,
                     int64_t index, int64_t bound);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_INIT_H
