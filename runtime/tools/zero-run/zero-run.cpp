//===- zero-run.cpp - run a compiled schedule -----------------------------===//
//
//   mpirun -np 2 zero-run step.json --steps 100 [--data train.bin] ...
//   zero-run step.json --steps 100 --nproc 2     (starts mpirun itself)
//
// Loads and validates the schedule, initializes the model, runs the steps
// and prints one line per step on rank 0. Every error is a message
// "zero-run: [rank R: ]<file>: <message>" and a non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Communicator.h"
#include "zero/runtime/DataSource.h"
#include "zero/runtime/Executor.h"
#include "zero/runtime/Safetensors.h"
#include "zero/runtime/Schedule.h"
#include "zero/runtime/Trace.h"
#include "zero/runtime/host/Threads.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace zero::runtime;

namespace {

const char *kUsage =
    "usage: zero-run SCHEDULE --steps N [options]\n"
    "  --steps N            steps to run (required)\n"
    "  --print-every K      print every K-th step (and the first and last; 1)\n"
    "  --data synthetic|FILE  token file (uint16 ids) for tokens/targets;\n"
    "                       default synthetic\n"
    "  --seed S             seed of the initialization and the synthetic "
    "data (0)\n"
    "  --init-from FILE     full fp32 parameters by name (safetensors)\n"
    "  --export FILE        write the full fp32 parameters after the last "
    "step\n"
    "  --metrics FILE       one JSON object per step and rank\n"
    "  --trace FILE         a Chrome/Perfetto trace of every rank's streams\n"
    "  --nproc N            start N ranks with mpirun\n"
    "  --memory-limit B     bytes the plan may use (default: no limit)\n"
    "  --comm-timeout S     seconds before a stuck collective fails (60)\n"
    "  --debug              trap uses of freed buffers\n"
    "  --fail-at-step K --fail-rank R  (tests) rank R kills itself in step K\n";

struct Options {
  std::string schedule;
  int64_t steps = -1;
  int64_t printEvery = 1;
  std::string data; // empty: synthetic
  uint64_t seed = 0;
  std::string initFrom;
  std::string exportPath;
  std::string metrics;
  std::string trace;
  int64_t nproc = 0;
  int64_t memoryLimit = 0;
  double commTimeout = 60;
  bool debug = false;
  bool help = false;
  int64_t failAtStep = -1;
  int64_t failRank = -1;
  /// The arguments without --nproc, for the relaunch under mpirun.
  std::vector<std::string> forwarded;
};

Status usageError(const std::string &message) {
  return ZERO_ERROR(kInvalidArgument, message);
}

Status parseInteger(const std::string &flag, const std::string &text,
                    int64_t min, int64_t &out) {
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min)
    return usageError(flag + ": '" + text + "' is not an integer of at least " +
                      std::to_string(min));
  out = value;
  return Status::ok();
}

Status parseOptions(int argc, char **argv, Options &options) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      return Status::ok();
    }
    if (arg.rfind("--", 0) != 0) {
      if (!options.schedule.empty())
        return usageError("unexpected argument '" + arg +
                          "' (the schedule is '" + options.schedule + "')");
      options.schedule = arg;
      options.forwarded.push_back(arg);
      continue;
    }
    std::string flag = arg, value;
    bool hasValue = false;
    size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
      hasValue = true;
    }
    if (flag == "--debug") {
      if (hasValue)
        return usageError("--debug takes no value");
      options.debug = true;
      options.forwarded.push_back(arg);
      continue;
    }
    static const char *kValued[] = {
        "--steps",       "--print-every",  "--data",         "--seed",
        "--init-from",   "--export",       "--metrics",      "--trace",
        "--nproc",       "--memory-limit", "--comm-timeout", "--fail-at-step",
        "--fail-rank"};
    if (std::none_of(std::begin(kValued), std::end(kValued),
                     [&](const char *name) { return flag == name; }))
      return usageError("unknown option '" + flag + "'");
    if (!hasValue) {
      if (i + 1 >= args.size())
        return usageError(flag + " needs a value");
      value = args[++i];
    }
    if (flag != "--nproc") {
      options.forwarded.push_back(flag);
      options.forwarded.push_back(value);
    }
    int64_t number = 0;
    if (flag == "--steps") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 0, options.steps));
    } else if (flag == "--print-every") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.printEvery));
    } else if (flag == "--data") {
      if (value.empty())
        return usageError("--data needs 'synthetic' or a file");
      options.data = value == "synthetic" ? "" : value;
    } else if (flag == "--seed") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 0, number));
      options.seed = static_cast<uint64_t>(number);
    } else if (flag == "--init-from") {
      options.initFrom = value;
    } else if (flag == "--export") {
      options.exportPath = value;
    } else if (flag == "--metrics") {
      options.metrics = value;
    } else if (flag == "--trace") {
      options.trace = value;
    } else if (flag == "--nproc") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.nproc));
    } else if (flag == "--memory-limit") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.memoryLimit));
    } else if (flag == "--comm-timeout") {
      char *end = nullptr;
      options.commTimeout = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(options.commTimeout > 0))
        return usageError("--comm-timeout: '" + value +
                          "' is not a positive number of seconds");
    } else if (flag == "--fail-at-step") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.failAtStep));
    } else if (flag == "--fail-rank") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 0, options.failRank));
    }
  }
  if (options.schedule.empty())
    return usageError("no schedule given");
  if (options.steps < 0)
    return usageError("--steps is required");
  if ((options.failAtStep >= 0) != (options.failRank >= 0))
    return usageError("--fail-at-step and --fail-rank go together");
  return Status::ok();
}

/// Replaces this process by `mpirun -np N <itself> <args without --nproc>`.
int relaunch(const Options &options) {
  char self[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) {
    std::fprintf(stderr, "zero-run: --nproc: cannot find this program: %s\n",
                 std::strerror(errno));
    return 1;
  }
  self[length] = '\0';
  std::vector<std::string> args = {"mpirun", "--oversubscribe", "-np",
                                   std::to_string(options.nproc)};
  // Open MPI refuses root unless told; the user chose to run as root.
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  args.push_back(self);
  args.insert(args.end(), options.forwarded.begin(), options.forwarded.end());
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  execvp("mpirun", argv.data());
  std::fprintf(stderr, "zero-run: --nproc: cannot run mpirun: %s\n",
               std::strerror(errno));
  return 1;
}

/// The part of an error worth printing: its message.
std::string describe(const Status &status) { return status.message(); }

/// Prints an error of this rank; messages that already name the rank are
/// left as they are.
void printError(const Communicator *comm, const std::string &message) {
  std::string prefix;
  if (comm && comm->size() > 1) {
    std::string rank = "rank " + std::to_string(comm->rank()) + ": ";
    if (message.rfind(rank, 0) != 0)
      prefix = rank;
  }
  std::fprintf(stderr, "zero-run: %s%s\n", prefix.c_str(), message.c_str());
  std::fflush(stderr);
}

/// Everything that must work before the first step, on every rank.
struct Run {
  std::shared_ptr<const Schedule> schedule;
  std::unique_ptr<Executor> executor;
  std::optional<DataSource> data;
  std::FILE *metrics = nullptr;
};

Status setUp(const Options &options, Communicator &comm, Run &run) {
  StatusOr<Schedule> schedule = Schedule::load(options.schedule);
  if (!schedule.isOk())
    return schedule.status();
  run.schedule = std::make_shared<const Schedule>(std::move(*schedule));

  ExecutorOptions executorOptions;
  executorOptions.debug = options.debug;
  executorOptions.trace = !options.trace.empty();
  executorOptions.memoryLimit = options.memoryLimit;
  if (options.failAtStep >= 0 && comm.rank() == options.failRank) {
    int64_t failAt = options.failAtStep;
    executorOptions.beforeCollective = [failAt](int64_t step,
                                                const Instruction &) {
      if (step == failAt)
        std::raise(SIGKILL);
    };
  }
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(run.schedule, comm, executorOptions);
  if (!executor.isOk())
    return executor.status();
  run.executor = std::move(*executor);

  InitOptions init;
  init.seed = options.seed;
  std::vector<NamedTensor> parameters;
  if (!options.initFrom.empty()) {
    StatusOr<std::vector<NamedTensor>> read = readSafetensors(options.initFrom);
    if (!read.isOk())
      return read.status();
    parameters = std::move(*read);
    init.parameters = &parameters;
    init.parametersFile = options.initFrom;
  }
  ZERO_RETURN_IF_ERROR(run.executor->initialize(init));

  DataOptions data;
  data.seed = options.seed;
  data.tokenFile = options.data;
  StatusOr<DataSource> source =
      DataSource::create(*run.schedule, data, comm.rank(), comm.size());
  if (!source.isOk())
    return source.status();
  run.data.emplace(std::move(*source));

  // A run must not fail at its end for a path it could not write.
  if (comm.rank() == 0)
    for (const std::string *path : {&options.trace, &options.exportPath}) {
      if (path->empty())
        continue;
      size_t slash = path->rfind('/');
      std::string directory =
          slash == std::string::npos ? "." : path->substr(0, slash + 1);
      if (access(directory.c_str(), W_OK) != 0)
        return ZERO_ERROR(kNotFound,
                          *path + ": cannot write: " + std::strerror(errno));
    }
  if (!options.metrics.empty() && comm.rank() == 0) {
    run.metrics = std::fopen(options.metrics.c_str(), "w");
    if (!run.metrics)
      return ZERO_ERROR(kNotFound, options.metrics + ": cannot write: " +
                                       std::strerror(errno));
  }
  return Status::ok();
}

/// After the set-up, the ranks agree on whether all succeeded: a rank that
/// failed alone must not leave the others waiting in a collective. Rank 0
/// prints the errors, once for those that every rank had.
bool agree(Communicator &comm, const Status &status) {
  if (comm.size() == 1) {
    if (!status.isOk())
      printError(&comm, describe(status));
    return status.isOk();
  }
  int32_t failed = status.isOk() ? 0 : 1;
  CollectiveContext context{"agreement after the set-up", nullptr};
  Status agreed =
      comm.allReduce(&failed, &failed, 1, DType::I32, ReduceOp::Max, context);
  if (!agreed.isOk()) {
    printError(&comm, describe(agreed));
    return false;
  }
  if (!failed)
    return true;
  StatusOr<std::vector<std::string>> messages = comm.gatherBytes(
      status.isOk() ? std::string() : describe(status), context);
  if (!messages.isOk()) {
    printError(&comm, describe(messages.status()));
    return false;
  }
  if (comm.rank() != 0)
    return false;
  std::map<std::string, std::vector<int>> ranksOf;
  for (size_t r = 0; r < messages->size(); ++r)
    if (!(*messages)[r].empty())
      ranksOf[(*messages)[r]].push_back(static_cast<int>(r));
  for (const auto &[message, ranks] : ranksOf) {
    if (static_cast<int>(ranks.size()) == comm.size()) {
      std::fprintf(stderr, "zero-run: %s\n", message.c_str());
      continue;
    }
    for (int r : ranks)
      std::fprintf(stderr, "zero-run: rank %d: %s\n", r, message.c_str());
  }
  return false;
}

std::string formatDouble(const char *format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

Status writeMetrics(Communicator &comm, Run &run, const Options &options,
                    const StepStats &stats) {
  double tokensPerSecond =
      stats.stepTimeSeconds > 0
          ? run.data->tokensPerStep() / stats.stepTimeSeconds
          : 0;
  nlohmann::json line = {{"step", stats.step},
                         {"rank", comm.rank()},
                         {"loss", stats.loss},
                         {"mean_loss", stats.meanLoss},
                         {"step_time_s", stats.stepTimeSeconds},
                         {"tokens_per_s", tokensPerSecond},
                         {"peak_bytes", stats.peakBytes},
                         {"bytes_sent", stats.bytesSent},
                         {"bytes_received", stats.bytesReceived}};
  CollectiveContext context{"gather of the metrics (step " +
                                std::to_string(stats.step) + ")",
                            nullptr};
  StatusOr<std::vector<std::string>> lines =
      comm.gatherBytes(line.dump(), context);
  if (!lines.isOk())
    return lines.status();
  if (comm.rank() != 0)
    return Status::ok();
  for (const std::string &text : *lines)
    std::fprintf(run.metrics, "%s\n", text.c_str());
  if (std::fflush(run.metrics) != 0 || std::ferror(run.metrics))
    return ZERO_ERROR(kResourceExhausted, options.metrics + ": write failed: " +
                                              std::strerror(errno));
  return Status::ok();
}

/// Every rank's trace events, on rank 0 (a collective).
StatusOr<std::vector<TraceEvent>> gatherTrace(Communicator &comm, Run &run) {
  CollectiveContext context{"gather of the trace", nullptr};
  StatusOr<std::vector<std::string>> parts = comm.gatherBytes(
      serializeTraceEvents(run.executor->takeTraceEvents()), context);
  if (!parts.isOk())
    return parts.status();
  std::vector<TraceEvent> events;
  for (const std::string &part : *parts) {
    StatusOr<std::vector<TraceEvent>> rankEvents = deserializeTraceEvents(part);
    if (!rankEvents.isOk())
      return rankEvents.status();
    events.insert(events.end(), rankEvents->begin(), rankEvents->end());
  }
  // Ranks share the machine's monotonic clock: start the trace at zero.
  double first = std::numeric_limits<double>::infinity();
  for (const TraceEvent &event : events)
    first = std::min(first, event.startUs);
  for (TraceEvent &event : events)
    event.startUs -= first;
  return events;
}

enum class Outcome {
  Done,
  /// Failed where every rank can still end normally.
  Failed,
  /// Failed in the middle of the run: the peers may wait in a collective.
  FailedMidRun,
};

Outcome runSteps(const Options &options, Communicator &comm, Run &run) {
  auto fail = [&](const Status &status, Outcome outcome) {
    printError(&comm, describe(status));
    return outcome;
  };
  DataFiller filler = run.data->filler();
  for (int64_t i = 0; i < options.steps; ++i) {
    StatusOr<StepStats> stats = run.executor->step(filler);
    if (!stats.isOk())
      return fail(stats.status(), Outcome::FailedMidRun);
    bool print = i == 0 || i + 1 == options.steps ||
                 (i + 1) % options.printEvery == 0;
    if (comm.rank() == 0 && print) {
      double tokensPerSecond =
          stats->stepTimeSeconds > 0
              ? run.data->tokensPerStep() * comm.size() / stats->stepTimeSeconds
              : 0;
      std::printf(
          "step=%lld loss=%s time=%s tokens/s=%s peak=%s sent=%lld "
          "received=%lld\n",
          static_cast<long long>(stats->step),
          formatDouble("%.6f", stats->meanLoss).c_str(),
          formatDouble("%.4f", stats->stepTimeSeconds).c_str(),
          formatDouble("%.1f", tokensPerSecond).c_str(),
          formatDouble("%.2f", stats->peakBytes / (1024.0 * 1024.0)).c_str(),
          static_cast<long long>(stats->bytesSent),
          static_cast<long long>(stats->bytesReceived));
      std::fflush(stdout);
    }
    if (!options.metrics.empty()) {
      Status status = writeMetrics(comm, run, options, *stats);
      if (!status.isOk())
        return fail(status, Outcome::FailedMidRun);
    }
  }
  // The last collectives first; then rank 0 writes the files, and a failed
  // write leaves no rank waiting.
  std::vector<TraceEvent> events;
  if (!options.trace.empty()) {
    StatusOr<std::vector<TraceEvent>> gathered = gatherTrace(comm, run);
    if (!gathered.isOk())
      return fail(gathered.status(), Outcome::FailedMidRun);
    events = std::move(*gathered);
  }
  std::vector<NamedTensor> tensors;
  if (!options.exportPath.empty()) {
    StatusOr<std::vector<NamedTensor>> exported =
        run.executor->exportParameters();
    if (!exported.isOk())
      return fail(exported.status(), Outcome::FailedMidRun);
    tensors = std::move(*exported);
  }
  if (comm.rank() != 0)
    return Outcome::Done;
  Outcome outcome = Outcome::Done;
  if (!options.trace.empty()) {
    Status status = writeChromeTrace(options.trace, events);
    if (!status.isOk())
      outcome = fail(status, Outcome::Failed);
  }
  if (!options.exportPath.empty()) {
    std::map<std::string, std::string> metadata = {
        {"producer", "zero-run"},
        {"schedule", run.schedule->name()},
        {"steps", std::to_string(run.executor->stepsTaken())},
        {"seed", std::to_string(options.seed)}};
    Status status = writeSafetensors(options.exportPath, tensors, metadata);
    if (!status.isOk())
      outcome = fail(status, Outcome::Failed);
  }
  return outcome;
}

int runMain(int argc, char **argv) {
  Options options;
  Status parsed = parseOptions(argc, argv, options);
  if (parsed.isOk() && options.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!parsed.isOk()) {
    std::fprintf(stderr, "zero-run: %s\n%s", parsed.message().c_str(), kUsage);
    return 2;
  }
  bool underMpi = isLaunchedByMpi();
  if (options.nproc > 0) {
    if (underMpi) {
      std::fprintf(stderr, "zero-run: --nproc: already started by an MPI "
                           "launcher; give the ranks to mpirun -np instead\n");
      return 2;
    }
    return relaunch(options);
  }

  std::unique_ptr<Communicator> comm;
  if (underMpi) {
    MpiOptions mpi;
    mpi.timeoutSeconds = options.commTimeout;
    StatusOr<std::unique_ptr<Communicator>> created =
        createMpiCommunicator(mpi);
    if (!created.isOk()) {
      printError(nullptr, describe(created.status()));
      return 1;
    }
    comm = std::move(*created);
  } else {
    comm = createSelfCommunicator();
  }

  // The ranks on this machine share its cores (Open MPI says how many ranks
  // run here).
  int localRanks = comm->size();
  if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
    localRanks = std::max(1, std::atoi(local));
  setHostThreads(std::max<int>(
      1, static_cast<int>(std::thread::hardware_concurrency()) / localRanks));

  int exitCode = 1;
  {
    Run run;
    Outcome outcome = Outcome::Failed;
    if (agree(*comm, setUp(options, *comm, run)))
      outcome = runSteps(options, *comm, run);
    if (run.metrics && std::fclose(run.metrics) != 0 &&
        outcome == Outcome::Done) {
      printError(comm.get(),
                 options.metrics + ": write failed: " + std::strerror(errno));
      outcome = Outcome::Failed;
    }
    exitCode = outcome == Outcome::Done ? 0 : 1;
    // Peers left inside a collective would wait until their timeout: end
    // the whole job instead.
    if (outcome == Outcome::FailedMidRun && comm->size() > 1)
      abortJob(*comm, exitCode);
  }
  return exitCode;
}

} // namespace

int main(int argc, char **argv) {
  // Library code reports errors as Status values; this is the last guard
  // against a crash (an allocation that fails, say).
  try {
    return runMain(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "zero-run: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "zero-run: internal error\n");
  }
  return 1;
}
