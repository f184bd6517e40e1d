//===- CApi.cpp - the runtime's C API -------------------------------------===//

#include "zero/runtime/zero_runtime.h"

#include "zero/runtime/Session.h"

#include <cmath>
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

void zero_runtime_destroy(zero_runtime *runtime) {
  if (!runtime)
    return;
  delete runtime;
}

} // extern "C"
