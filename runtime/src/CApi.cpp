//===- CApi.cpp - the runtime's C API -------------------------------------===//

#include "zero/runtime/zero_runtime.h"

#include "zero/runtime/Session.h"
#include "zero/runtime/StateAccess.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

using namespace zero::runtime;

struct zero_schedule {
  std::shared_ptr<const Schedule> schedule;
};

struct zero_runtime {
  std::unique_ptr<Session> session;
  double loss = std::numeric_limits<double>::quiet_NaN();
};

namespace {
thread_local std::string lastError;

const char *fail(const Status &status) {
  lastError = status.message();
  return lastError.c_str();
}

const char *fail(const std::string &message) {
  lastError = message;
  return lastError.c_str();
}

/// Runs `body`, turning exceptions into errors: none may cross into C.
template <typename Body> const char *guard(Body body) {
  try {
    return body();
  } catch (const std::exception &e) {
    return fail(std::string("internal error: ") + e.what());
  } catch (...) {
    return fail("internal error");
  }
}
} // namespace

extern "C" {

void zero_runtime_options_init(zero_runtime_options *options) {
  options->seed = 0;
  options->data = nullptr;
  options->init_from = nullptr;
  options->use_mpi = 0;
  options->comm_timeout = 60;
  options->memory_limit = 0;
  options->resume_from = nullptr;
  options->keep_gradients = 0;
}

const char *zero_runtime_load(const char *path, zero_schedule **schedule) {
  return guard([&]() -> const char * {
    if (!path || !schedule)
      return fail("zero_runtime_load: null argument");
    StatusOr<Schedule> loaded = Schedule::load(path);
    if (!loaded.isOk())
      return fail(loaded.status());
    *schedule =
        new zero_schedule{std::make_shared<const Schedule>(std::move(*loaded))};
    return nullptr;
  });
}

void zero_schedule_destroy(zero_schedule *schedule) { delete schedule; }

const char *zero_runtime_create(const zero_schedule *schedule,
                                const zero_runtime_options *options,
                                zero_runtime **runtime) {
  return guard([&]() -> const char * {
    if (!schedule || !options || !runtime)
      return fail("zero_runtime_create: null argument");
    if (options->init_from && options->resume_from)
      return fail("zero_runtime_create: init_from and resume_from both give "
                  "the initial state");
    SessionOptions session;
    session.useMpi = options->use_mpi != 0;
    session.commTimeoutSeconds =
        options->comm_timeout > 0 ? options->comm_timeout : 60;
    session.memoryLimit = options->memory_limit;
    session.seed = options->seed;
    if (options->data)
      session.dataFile = options->data;
    if (options->init_from)
      session.initFrom = options->init_from;
    if (options->resume_from)
      session.resumeFrom = options->resume_from;
    session.keepGradients = options->keep_gradients != 0;
    StatusOr<std::unique_ptr<Session>> created =
        Session::create(schedule->schedule, session);
    if (!created.isOk())
      return fail(Session::isReported(created.status())
                      ? "the set-up failed on another rank (rank 0 has its "
                        "error)"
                      : created.status().message());
    auto result = std::make_unique<zero_runtime>();
    result->session = std::move(*created);
    *runtime = result.release();
    return nullptr;
  });
}

const char *zero_runtime_step(zero_runtime *runtime) {
  return guard([&]() -> const char * {
    if (!runtime)
      return fail("zero_runtime_step: null runtime");
    StatusOr<StepStats> stats = runtime->session->step();
    if (!stats.isOk())
      return fail(stats.status());
    runtime->loss = stats->meanLoss;
    return nullptr;
  });
}

double zero_runtime_get_loss(const zero_runtime *runtime) {
  return runtime ? runtime->loss : std::numeric_limits<double>::quiet_NaN();
}

int64_t zero_runtime_get_steps(const zero_runtime *runtime) {
  return runtime ? runtime->session->executor().stepsTaken() : 0;
}

int zero_runtime_get_rank(const zero_runtime *runtime) {
  return runtime ? runtime->session->rank() : 0;
}

int zero_runtime_get_world_size(const zero_runtime *runtime) {
  return runtime ? runtime->session->worldSize() : 0;
}

const char *zero_runtime_export(zero_runtime *runtime, const char *path) {
  return guard([&]() -> const char * {
    if (!runtime || !path)
      return fail("zero_runtime_export: null argument");
    Status status = runtime->session->exportTo(path);
    return status.isOk() ? nullptr : fail(status);
  });
}

const char *zero_runtime_save(zero_runtime *runtime, const char *directory,
                              int64_t keep) {
  return guard([&]() -> const char * {
    if (!runtime || !directory)
      return fail("zero_runtime_save: null argument");
    CheckpointSaveOptions options;
    options.directory = directory;
    options.keep = keep;
    Status status = saveCheckpoint(*runtime->session, options);
    if (Session::isReported(status))
      return fail("the save failed on another rank (rank 0 has its error)");
    return status.isOk() ? nullptr : fail(status);
  });
}

namespace {

/// A get: `numel` must be the result's size, which `out` receives. It is
/// checked first, so that a full get fails before its collective.
const char *getFloats(const char *function, zero_runtime *runtime,
                      const char *name, const char *key, bool full, float *out,
                      int64_t numel,
                      const std::function<StatusOr<std::vector<float>>(
                          Session &, const std::string &)> &get) {
  return guard([&]() -> const char * {
    if (!runtime || !name || (!out && numel > 0))
      return fail(std::string(function) + ": null argument");
    Session &session = *runtime->session;
    // An unknown name is the accessor's error, below.
    StatusOr<int64_t> expected =
        full ? getFullNumel(session, name) : getLocalNumel(session, name);
    if (expected.isOk() && *expected != numel)
      return fail(std::string(function) + ": parameter '" + name + "'" +
                  (key ? " state '" + std::string(key) + "'" : "") +
                  ": the result has " + std::to_string(*expected) +
                  " elements, but numel is " + std::to_string(numel));
    StatusOr<std::vector<float>> values = get(session, name);
    if (!values.isOk())
      return fail(values.status());
    std::copy(values->begin(), values->end(), out);
    return nullptr;
  });
}

const char *setFloats(const char *function, zero_runtime *runtime,
                      const char *name, const float *values, int64_t numel,
                      const std::function<Status(Session &, const std::string &,
                                                 FloatSpan)> &set) {
  return guard([&]() -> const char * {
    if (!runtime || !name || (!values && numel > 0) || numel < 0)
      return fail(std::string(function) + ": null argument or negative numel");
    Status status = set(*runtime->session, name, FloatSpan(values, numel));
    return status.isOk() ? nullptr : fail(status);
  });
}

const char *getNumel(const char *function, zero_runtime *runtime,
                     const char *name, int64_t *numel,
                     StatusOr<int64_t> (*get)(Session &, const std::string &)) {
  return guard([&]() -> const char * {
    if (!runtime || !name || !numel)
      return fail(std::string(function) + ": null argument");
    StatusOr<int64_t> value = get(*runtime->session, name);
    if (!value.isOk())
      return fail(value.status());
    *numel = *value;
    return nullptr;
  });
}

} // namespace

const char *zero_runtime_get_full_numel(zero_runtime *runtime, const char *name,
                                        int64_t *numel) {
  return getNumel("zero_runtime_get_full_numel", runtime, name, numel,
                  getFullNumel);
}

const char *zero_runtime_get_local_numel(zero_runtime *runtime,
                                         const char *name, int64_t *numel) {
  return getNumel("zero_runtime_get_local_numel", runtime, name, numel,
                  getLocalNumel);
}

const char *zero_runtime_get_full_fp32_param(zero_runtime *runtime,
                                             const char *name, float *out,
                                             int64_t numel) {
  return getFloats("zero_runtime_get_full_fp32_param", runtime, name, nullptr,
                   true, out, numel, getFullFp32Param);
}

const char *zero_runtime_get_full_grad(zero_runtime *runtime, const char *name,
                                       float *out, int64_t numel) {
  return getFloats("zero_runtime_get_full_grad", runtime, name, nullptr, true,
                   out, numel, getFullGrad);
}

const char *zero_runtime_get_full_optimizer_state(zero_runtime *runtime,
                                                  const char *name,
                                                  const char *key, float *out,
                                                  int64_t numel) {
  if (!key)
    return fail("zero_runtime_get_full_optimizer_state: null argument");
  return getFloats("zero_runtime_get_full_optimizer_state", runtime, name, key,
                   true, out, numel,
                   [&](Session &session, const std::string &param) {
                     return getFullOptimizerState(session, param, key);
                   });
}

const char *zero_runtime_get_local_fp32_param(zero_runtime *runtime,
                                              const char *name, float *out,
                                              int64_t numel) {
  return getFloats("zero_runtime_get_local_fp32_param", runtime, name, nullptr,
                   false, out, numel, getLocalFp32Param);
}

const char *zero_runtime_get_local_grad(zero_runtime *runtime, const char *name,
                                        float *out, int64_t numel) {
  return getFloats("zero_runtime_get_local_grad", runtime, name, nullptr, false,
                   out, numel, getLocalGrad);
}

const char *zero_runtime_get_local_optimizer_state(zero_runtime *runtime,
                                                   const char *name,
                                                   const char *key, float *out,
                                                   int64_t numel) {
  if (!key)
    return fail("zero_runtime_get_local_optimizer_state: null argument");
  return getFloats("zero_runtime_get_local_optimizer_state", runtime, name, key,
                   false, out, numel,
                   [&](Session &session, const std::string &param) {
                     return getLocalOptimizerState(session, param, key);
                   });
}

const char *zero_runtime_set_full_fp32_param(zero_runtime *runtime,
                                             const char *name,
                                             const float *values,
                                             int64_t numel) {
  return setFloats("zero_runtime_set_full_fp32_param", runtime, name, values,
                   numel, setFullFp32Param);
}

const char *zero_runtime_set_full_optimizer_state(zero_runtime *runtime,
                                                  const char *name,
                                                  const char *key,
                                                  const float *values,
                                                  int64_t numel) {
  if (!key)
    return fail("zero_runtime_set_full_optimizer_state: null argument");
  return setFloats(
      "zero_runtime_set_full_optimizer_state", runtime, name, values, numel,
      [&](Session &session, const std::string &param, FloatSpan span) {
        return setFullOptimizerState(session, param, key, span);
      });
}

const char *zero_runtime_set_local_fp32_param(zero_runtime *runtime,
                                              const char *name,
                                              const float *values,
                                              int64_t numel) {
  return setFloats("zero_runtime_set_local_fp32_param", runtime, name, values,
                   numel, setLocalFp32Param);
}

const char *zero_runtime_set_local_optimizer_state(zero_runtime *runtime,
                                                   const char *name,
                                                   const char *key,
                                                   const float *values,
                                                   int64_t numel) {
  if (!key)
    return fail("zero_runtime_set_local_optimizer_state: null argument");
  return setFloats(
      "zero_runtime_set_local_optimizer_state", runtime, name, values, numel,
      [&](Session &session, const std::string &param, FloatSpan span) {
        return setLocalOptimizerState(session, param, key, span);
      });
}

void zero_runtime_destroy(zero_runtime *runtime) {
  if (!runtime)
    return;
  delete runtime;
}

} // extern "C"
