//===- CApi.cpp - the runtime's C API -------------------------------------===//

#include "zero/runtime/zero_runtime.h"

#include "zero/runtime/DataSource.h"
#include "zero/runtime/Executor.h"
#include "zero/runtime/Safetensors.h"

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
  std::unique_ptr<Communicator> communicator;
  std::unique_ptr<Executor> executor;
  std::optional<DataSource> data;
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
    auto result = std::make_unique<zero_runtime>();
    if (options->use_mpi) {
      MpiOptions mpi;
      mpi.timeoutSeconds =
          options->comm_timeout > 0 ? options->comm_timeout : 60;
      StatusOr<std::unique_ptr<Communicator>> communicator =
          createMpiCommunicator(mpi);
      if (!communicator.isOk())
        return fail(communicator.status());
      result->communicator = std::move(*communicator);
    } else {
      result->communicator = createSelfCommunicator();
    }
    ExecutorOptions executorOptions;
    executorOptions.memoryLimit = options->memory_limit;
    StatusOr<std::unique_ptr<Executor>> executor = Executor::create(
        schedule->schedule, *result->communicator, executorOptions);
    if (!executor.isOk())
      return fail(executor.status());
    result->executor = std::move(*executor);
    InitOptions init;
    init.seed = options->seed;
    std::vector<NamedTensor> parameters;
    if (options->init_from) {
      StatusOr<std::vector<NamedTensor>> read =
          readSafetensors(options->init_from);
      if (!read.isOk())
        return fail(read.status());
      parameters = std::move(*read);
      init.parameters = &parameters;
      init.parametersFile = options->init_from;
    }
    Status status = result->executor->initialize(init);
    if (!status.isOk())
      return fail(status);
    DataOptions data;
    data.seed = options->seed;
    if (options->data)
      data.tokenFile = options->data;
    StatusOr<DataSource> source = DataSource::create(
        *schedule->schedule, data, result->communicator->rank(),
        result->communicator->size());
    if (!source.isOk())
      return fail(source.status());
    result->data.emplace(std::move(*source));
    *runtime = result.release();
    return nullptr;
  });
}

const char *zero_runtime_step(zero_runtime *runtime) {
  return guard([&]() -> const char * {
    if (!runtime)
      return fail("zero_runtime_step: null runtime");
    StatusOr<StepStats> stats =
        runtime->executor->step(runtime->data->filler());
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
  return runtime ? runtime->executor->stepsTaken() : 0;
}

int zero_runtime_get_rank(const zero_runtime *runtime) {
  return runtime ? runtime->communicator->rank() : 0;
}

int zero_runtime_get_world_size(const zero_runtime *runtime) {
  return runtime ? runtime->communicator->size() : 0;
}

const char *zero_runtime_export(zero_runtime *runtime, const char *path) {
  return guard([&]() -> const char * {
    if (!runtime || !path)
      return fail("zero_runtime_export: null argument");
    StatusOr<std::vector<NamedTensor>> tensors =
        runtime->executor->exportParameters();
    if (!tensors.isOk())
      return fail(tensors.status());
    if (runtime->communicator->rank() == 0) {
      Status status = writeSafetensors(path, *tensors);
      if (!status.isOk())
        return fail(status);
    }
    return nullptr;
  });
}

void zero_runtime_destroy(zero_runtime *runtime) {
  if (!runtime)
    return;
  // The executor (and its comm thread) before the communicator it uses.
  runtime->executor.reset();
  delete runtime;
}

} // extern "C"
