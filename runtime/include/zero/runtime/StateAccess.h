//===- StateAccess.h - DeepSpeed's debugging accessors ----------*- C++ -*-===//
//
// A parameter's fp32 value, gradient and optimizer states by name, read and
// written between steps (docs/Runtime.md, "State accessors"), as DeepSpeed's
// deepspeed.utils safe_get_full_fp32_param, safe_get_full_grad,
// safe_get_full_optimizer_state, their safe_get_local_* forms and the
// safe_set_* ones. Parameters are named as the schedule names them: a tile
// of zero-tile-linear by the tile's name ("fc0.weight.tile_1_0"), whose
// value is its block of the weight.
//
// Full forms take or give the whole parameter (its shape flattened, no
// padding); every rank calls a full get with the same arguments (an
// all-gather of the shards where the state is sharded) and every rank gets
// the result. Local forms take or give the rank's part as its optimizer
// states hold it (getLocalNumel elements): its shard of the flat parameter
// padded to the layout's padded_numel at stage 1 and up, the whole
// parameter at stage 0; they involve no other rank.
//
// Errors name the parameter, the key and the rank; they depend only on the
// schedule and the arguments, so ranks that call a full get alike fail
// alike, before any collective.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_STATEACCESS_H
#define ZERO_RUNTIME_STATEACCESS_H

#include "zero/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::runtime {

class Session;

/// A read-only run of floats (a std::span before C++20).
struct FloatSpan {
  const float *data = nullptr;
  int64_t size = 0;
  FloatSpan() = default;
  FloatSpan(const float *data, int64_t size) : data(data), size(size) {}
  FloatSpan(const std::vector<float> &values)
      : data(values.data()), size(static_cast<int64_t>(values.size())) {}
};

/// The elements of `param`'s local forms on this rank (padding included).
StatusOr<int64_t> getLocalNumel(Session &session, const std::string &param);
/// The elements of `param`'s full forms (its layout's numel).
StatusOr<int64_t> getFullNumel(Session &session, const std::string &param);

/// The fp32 master weights where the schedule has them, else the parameter
/// converted to fp32.
StatusOr<std::vector<float>> getFullFp32Param(Session &session,
                                              const std::string &param);
StatusOr<std::vector<float>> getLocalFp32Param(Session &session,
                                               const std::string &param);

/// The gradient the optimizer consumed in the last step (SessionOptions::
/// keepGradients): averaged over the ranks and micro-steps, the loss scale
/// divided out, after gradient clipping (DeepSpeed's is before clipping).
StatusOr<std::vector<float>> getFullGrad(Session &session,
                                         const std::string &param);
StatusOr<std::vector<float>> getLocalGrad(Session &session,
                                          const std::string &param);

/// The optimizer state `key` of `param` ("exp_avg", "exp_avg_sq",
/// "max_exp_avg_sq", "momentum_buffer": the schedule's state names, master
/// weights excluded).
StatusOr<std::vector<float>> getFullOptimizerState(Session &session,
                                                   const std::string &param,
                                                   const std::string &key);
StatusOr<std::vector<float>> getLocalOptimizerState(Session &session,
                                                    const std::string &param,
                                                    const std::string &key);

/// Sets the fp32 value of `param`: its master weights and the parameter
/// the next forward reads (rounded to nearest even where it is 16-bit), so
/// that the next step sees the value; DeepSpeed's sets the fp32 copy only.
/// Each rank keeps its part of `values`; the padding stays zero. Needs no
/// communication, but every rank passes the same tensor.
Status setFullFp32Param(Session &session, const std::string &param,
                        FloatSpan values);
/// Sets this rank's part, as DeepSpeed's: the master weights where there are
/// some (the 16-bit parameter follows at the next step's update), else the
/// rank's part of the parameter itself (whole parameters on every rank at
/// stages 1 and 2: the other ranks' copies take it at the next step's
/// all-gather). The padding elements of `values` are ignored: the padding
/// stays zero.
Status setLocalFp32Param(Session &session, const std::string &param,
                         FloatSpan values);

Status setFullOptimizerState(Session &session, const std::string &param,
                             const std::string &key, FloatSpan values);
Status setLocalOptimizerState(Session &session, const std::string &param,
                              const std::string &key, FloatSpan values);

/// Among `candidates`, the one closest to `name` in edit distance, if it is
/// close enough to be a typo (at most a third of the name's length); empty
/// otherwise.
std::string findClosestName(const std::string &name,
                            const std::vector<std::string> &candidates);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_STATEACCESS_H
