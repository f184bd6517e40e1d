//===- StateAccess.cpp - DeepSpeed's debugging accessors ------------------===//
//
// Every accessor works on the rank's local part (Schedule::stateNumel
// elements, as the optimizer states hold it); a full get all-gathers the
// local parts, a full set cuts its part from the whole. Tensors are read and
// written with Executor::readTensor/writeTensor, as checkpoints are, so
// arguments in host memory or the nvme arena work alike.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/StateAccess.h"

#include "zero/runtime/Session.h"

#include <algorithm>
#include <map>

namespace zero::runtime {

std::string findClosestName(const std::string &name,
                            const std::vector<std::string> &candidates) {
  std::string best;
  size_t bestDistance = std::max<size_t>(1, name.size() / 3) + 1;
  std::vector<size_t> row, previous;
  for (const std::string &candidate : candidates) {
    // Levenshtein distance, one row at a time.
    previous.resize(candidate.size() + 1);
    row.resize(candidate.size() + 1);
    for (size_t j = 0; j <= candidate.size(); ++j)
      previous[j] = j;
    for (size_t i = 1; i <= name.size(); ++i) {
      row[0] = i;
      for (size_t j = 1; j <= candidate.size(); ++j)
        row[j] = std::min(
            {previous[j] + 1, row[j - 1] + 1,
             previous[j - 1] + (name[i - 1] == candidate[j - 1] ? 0 : 1)});
      std::swap(row, previous);
    }
    if (previous[candidate.size()] < bestDistance) {
      bestDistance = previous[candidate.size()];
      best = candidate;
    }
  }
  return best;
}

namespace {

/// One accessor's call: the session, the parameter and what errors say.
class Access {
public:
  Access(Session &session, const char *what)
      : session(session), s(session.schedule()), executor(session.executor()),
        rank(session.rank()), what(what) {}

  /// Finds parameter `name`; errors suggest the closest name.
  Status find(const std::string &name) {
    std::vector<std::string> names;
    for (size_t i = 0; i < s.arguments().size(); ++i) {
      const ArgumentInfo &arg = s.arguments()[i];
      if (arg.kind != ArgumentInfo::Kind::Param)
        continue;
      if (arg.name == name) {
        paramIndex = static_cast<int64_t>(i);
        param = &arg;
        return Status::ok();
      }
      names.push_back(arg.name);
    }
    std::string closest = findClosestName(name, names);
    return fail(StatusCode::kNotFound,
                "no parameter '" + name + "' in " + s.name() +
                    (closest.empty() ? std::string()
                                     : "; did you mean '" + closest + "'?"));
  }

  Status fail(StatusCode code, const std::string &message) const {
    return Status(code,
                  (session.worldSize() > 1
                       ? "rank " + std::to_string(rank) + ": "
                       : std::string()) +
                      what + ": " + message,
                  __FILE__, __LINE__);
  }

  /// The elements of the local part (padding included).
  int64_t localNumel() const { return s.stateNumel(*param); }
  /// Whether the local part is a shard of the padded flat parameter.
  bool localIsShard() const { return s.stage() >= 1; }
  /// The first element of the local part in the padded flat parameter.
  int64_t localBegin() const {
    return localIsShard() ? param->layout.shardBegin(rank) : 0;
  }

  /// The argument of state `state` of the parameter, or -1.
  int64_t findState(const std::string &state) const {
    for (size_t i = 0; i < s.arguments().size(); ++i) {
      const ArgumentInfo &arg = s.arguments()[i];
      if (arg.kind == ArgumentInfo::Kind::State &&
          arg.paramArgument == paramIndex && arg.state == state)
        return static_cast<int64_t>(i);
    }
    return -1;
  }

  /// The argument of optimizer state `key`; errors list the valid keys.
  StatusOr<int64_t> findOptimizerState(const std::string &key) const {
    int64_t found = key == "master" ? -1 : findState(key);
    if (found >= 0)
      return found;
    std::string keys;
    for (const ArgumentInfo &arg : s.arguments())
      if (arg.kind == ArgumentInfo::Kind::State &&
          arg.paramArgument == paramIndex && arg.state != "master")
        keys += (keys.empty() ? "" : ", ") + arg.state;
    return fail(StatusCode::kNotFound,
                "parameter '" + param->name + "' has no optimizer state '" +
                    key + "'; " +
                    (keys.empty() ? "it has none (an optimizer without state)"
                                  : "its states are " + keys));
  }

  Status checkSize(FloatSpan values, int64_t expected,
                   const std::string &form) const {
    if (values.size == expected && (values.data || expected == 0))
      return Status::ok();
    return fail(StatusCode::kInvalidArgument,
                "parameter '" + param->name + "': " +
                    std::to_string(values.size) + " elements given, but its " +
                    form + " has " + std::to_string(expected));
  }

  StatusOr<std::vector<float>> readFloats(int64_t argument) {
    const ValueInfo &value = s.values().values[s.arguments()[argument].value];
    std::string bytes;
    ZERO_RETURN_IF_ERROR(executor.readTensor(value.id, bytes));
    // Dequantized where the parameter is stored quantized.
    return loadValueFloats(value, bytes.data());
  }

  Status writeFloats(int64_t argument, const float *values) {
    const ValueInfo &value = s.values().values[s.arguments()[argument].value];
    std::string bytes(static_cast<size_t>(value.bytes()), '\0');
    // Quantized anew where the parameter is stored quantized.
    storeValueFloats(values, value, bytes.data());
    return executor.writeTensor(value.id, bytes.data());
  }

  /// The local part of the whole flat parameter `whole` (padding zeros).
  std::vector<float> cutLocal(const std::vector<float> &whole) const {
    std::vector<float> local(static_cast<size_t>(localNumel()), 0.0f);
    const int64_t begin = localBegin();
    for (int64_t i = 0; i < localNumel() && begin + i < param->layout.numel;
         ++i)
      local[i] = whole[begin + i];
    return local;
  }

  /// The whole parameter from every rank's local part (a collective at
  /// stage 1 and up).
  StatusOr<std::vector<float>> gather(std::vector<float> local) {
    if (!localIsShard()) {
      local.resize(static_cast<size_t>(param->layout.numel));
      return local;
    }
    // Every rank's shard in rank order: ranks 0 .. worldSize - 1 of the
    // layout hold its shards, the others replicas of them (PartitionLayout).
    const PartitionLayout &layout = param->layout;
    std::vector<float> full(
        static_cast<size_t>(session.worldSize() * layout.shardNumel));
    CollectiveContext context{"all_gather of '" + param->name + "' for " + what,
                              nullptr};
    ZERO_RETURN_IF_ERROR(session.communicator().allGather(
        local.data(), full.data(), layout.shardNumel, DType::F32, context));
    full.resize(static_cast<size_t>(layout.numel));
    return full;
  }

  StatusOr<std::vector<float>> localFp32Param() {
    if (int64_t master = findState("master"); master >= 0)
      return readFloats(master);
    StatusOr<std::vector<float>> value = readFloats(paramIndex);
    if (!value.isOk() || param->sharded)
      return value;
    return cutLocal(*value);
  }

  StatusOr<std::vector<float>> localGrad() const {
    if (!s.hasGradientRecords())
      return fail(StatusCode::kFailedPrecondition,
                  s.name() + " has no gradient record (its `gradients`); "
                             "compile it again with this zero-opt");
    bool recorded = std::any_of(
        s.gradientRecords().begin(), s.gradientRecords().end(),
        [&](const GradientRecord &r) { return r.paramArgument == paramIndex; });
    if (!recorded)
      return fail(StatusCode::kFailedPrecondition,
                  "parameter '" + param->name + "' has no gradient record in " +
                      s.name() +
                      ": no zero.adam or zero.sgd instruction updates it "
                      "(plain SGD updates with a linalg.map)");
    if (!executor.keepsGradients())
      return fail(StatusCode::kFailedPrecondition,
                  "gradients are not kept: set SessionOptions::keepGradients "
                  "(C: keep_gradients, zero-run --keep-gradients)");
    const std::vector<float> *kept = executor.keptGradient(paramIndex);
    if (!kept)
      return fail(StatusCode::kFailedPrecondition,
                  "no step has run in this session: the gradient of '" +
                      param->name + "' is kept from each step");
    return *kept;
  }

  /// Writes the fp32 value of the parameter from `whole` (the full form)
  /// or from `local` (the local form, padding zeroed).
  Status setFp32Param(const std::vector<float> *whole,
                      const std::vector<float> &local) {
    int64_t master = findState("master");
    if (master >= 0)
      ZERO_RETURN_IF_ERROR(writeFloats(master, local.data()));
    if (master >= 0 && !whole)
      return Status::ok(); // the 16-bit parameter follows at the next step
    if (param->sharded)
      return writeFloats(paramIndex, local.data());
    if (whole)
      return writeFloats(paramIndex, whole->data());
    // The rank's range of its whole copy.
    StatusOr<std::vector<float>> value = readFloats(paramIndex);
    if (!value.isOk())
      return value.status();
    const int64_t begin = localBegin();
    for (int64_t i = 0; i < localNumel() && begin + i < param->layout.numel;
         ++i)
      (*value)[begin + i] = local[i];
    return writeFloats(paramIndex, value->data());
  }

  /// `values` as the local part, its padding zeroed.
  std::vector<float> takeLocal(FloatSpan values) const {
    std::vector<float> local(values.data, values.data + values.size);
    for (int64_t i = std::max<int64_t>(0, param->layout.numel - localBegin());
         i < localNumel(); ++i)
      local[i] = 0.0f;
    return local;
  }

  Session &session;
  const Schedule &s;
  Executor &executor;
  int rank;
  std::string what;
  int64_t paramIndex = -1;
  const ArgumentInfo *param = nullptr;
};

} // namespace

StatusOr<int64_t> getLocalNumel(Session &session, const std::string &param) {
  Access access(session, "getLocalNumel");
  ZERO_RETURN_IF_ERROR(access.find(param));
  return access.localNumel();
}

StatusOr<int64_t> getFullNumel(Session &session, const std::string &param) {
  Access access(session, "getFullNumel");
  ZERO_RETURN_IF_ERROR(access.find(param));
  return access.param->layout.numel;
}

StatusOr<std::vector<float>> getFullFp32Param(Session &session,
                                              const std::string &param) {
  Access access(session, "getFullFp32Param");
  ZERO_RETURN_IF_ERROR(access.find(param));
  StatusOr<std::vector<float>> local = access.localFp32Param();
  if (!local.isOk())
    return local.status();
  return access.gather(std::move(*local));
}

StatusOr<std::vector<float>> getLocalFp32Param(Session &session,
                                               const std::string &param) {
  Access access(session, "getLocalFp32Param");
  ZERO_RETURN_IF_ERROR(access.find(param));
  return access.localFp32Param();
}

StatusOr<std::vector<float>> getFullGrad(Session &session,
                                         const std::string &param) {
  Access access(session, "getFullGrad");
  ZERO_RETURN_IF_ERROR(access.find(param));
  StatusOr<std::vector<float>> local = access.localGrad();
  if (!local.isOk())
    return local.status();
  return access.gather(std::move(*local));
}

StatusOr<std::vector<float>> getLocalGrad(Session &session,
                                          const std::string &param) {
  Access access(session, "getLocalGrad");
  ZERO_RETURN_IF_ERROR(access.find(param));
  return access.localGrad();
}

StatusOr<std::vector<float>> getFullOptimizerState(Session &session,
                                                   const std::string &param,
                                                   const std::string &key) {
  Access access(session, "getFullOptimizerState");
  ZERO_RETURN_IF_ERROR(access.find(param));
  StatusOr<int64_t> state = access.findOptimizerState(key);
  if (!state.isOk())
    return state.status();
  StatusOr<std::vector<float>> local = access.readFloats(*state);
  if (!local.isOk())
    return local.status();
  return access.gather(std::move(*local));
}

StatusOr<std::vector<float>> getLocalOptimizerState(Session &session,
                                                    const std::string &param,
                                                    const std::string &key) {
  Access access(session, "getLocalOptimizerState");
  ZERO_RETURN_IF_ERROR(access.find(param));
  StatusOr<int64_t> state = access.findOptimizerState(key);
  if (!state.isOk())
    return state.status();
  return access.readFloats(*state);
}

Status setFullFp32Param(Session &session, const std::string &param,
                        FloatSpan values) {
  Access access(session, "setFullFp32Param");
  ZERO_RETURN_IF_ERROR(access.find(param));
  ZERO_RETURN_IF_ERROR(
      access.checkSize(values, access.param->layout.numel, "full fp32 value"));
  std::vector<float> whole(values.data, values.data + values.size);
  return access.setFp32Param(&whole, access.cutLocal(whole));
}

Status setLocalFp32Param(Session &session, const std::string &param,
                         FloatSpan values) {
  Access access(session, "setLocalFp32Param");
  ZERO_RETURN_IF_ERROR(access.find(param));
  ZERO_RETURN_IF_ERROR(
      access.checkSize(values, access.localNumel(), "local fp32 value"));
  return access.setFp32Param(nullptr, access.takeLocal(values));
}

Status setFullOptimizerState(Session &session, const std::string &param,
                             const std::string &key, FloatSpan values) {
  Access access(session, "setFullOptimizerState");
  ZERO_RETURN_IF_ERROR(access.find(param));
  StatusOr<int64_t> state = access.findOptimizerState(key);
  if (!state.isOk())
    return state.status();
  ZERO_RETURN_IF_ERROR(access.checkSize(values, access.param->layout.numel,
                                        "full '" + key + "'"));
  std::vector<float> whole(values.data, values.data + values.size);
  return access.writeFloats(*state, access.cutLocal(whole).data());
}

Status setLocalOptimizerState(Session &session, const std::string &param,
                              const std::string &key, FloatSpan values) {
  Access access(session, "setLocalOptimizerState");
  ZERO_RETURN_IF_ERROR(access.find(param));
  StatusOr<int64_t> state = access.findOptimizerState(key);
  if (!state.isOk())
    return state.status();
  ZERO_RETURN_IF_ERROR(
      access.checkSize(values, access.localNumel(), "local '" + key + "'"));
  return access.writeFloats(*state, access.takeLocal(values).data());
}

} // namespace zero::runtime
