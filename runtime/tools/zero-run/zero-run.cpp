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

#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/CostModel.h"
#include "zero/runtime/OutputFile.h"
#include "zero/runtime/Session.h"
#include "zero/runtime/StateAccess.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace zero::runtime;

namespace {

const char *kUsage =
    "usage: zero-run SCHEDULE --steps N [options]\n"
    "       zero-run SCHEDULE --explain GPU [--explain-set FIGURE=VALUE]...\n"
    "                [--explain-json FILE]\n"
    "  --steps N            steps to run (required)\n"
    "  --device cpu|cuda    where the schedule runs (cpu)\n"
    "  --gpus-per-node G    cuda: rank uses GPU (local rank mod G); ranks\n"
    "                       sharing a GPU exchange buffers through MPI\n"
    "                       (default: one GPU per local rank, NCCL)\n"
    "  --print-every K      print every K-th step (and the first and last; 1)\n"
    "  --data synthetic|FILE  token file for tokens/targets: uint16 ids\n"
    "                       (nanoGPT's .bin) or a 1-D .npy array of ids;\n"
    "                       default synthetic\n"
    "  --data NAME=FILE     data argument NAME's samples: a .npy array or a\n"
    "                       safetensors tensor, first dimension the samples\n"
    "                       (repeat for each data argument)\n"
    "  --data-order shuffled|sequential  array samples in a seeded shuffle\n"
    "                       per epoch (default) or in file order\n"
    "  --seed S             seed of the initialization and the synthetic "
    "data (0)\n"
    "  --init-from FILE     full fp32 parameters by name (safetensors)\n"
    "  --export FILE        write the full fp32 parameters after the last "
    "step\n"
    "  --keep-gradients     keep each step's gradients (as the optimizer\n"
    "                       consumes them) for the state accessors\n"
    "  --dump-state FILE    write every parameter's fp32 value, gradient\n"
    "                       (grad/<name>) and optimizer states (<key>/<name>)\n"
    "                       after the last step (safetensors; implies\n"
    "                       --keep-gradients)\n"
    "  --save DIR           save a checkpoint, DIR/step-<S>, after the last\n"
    "                       step (DIR/latest names the newest)\n"
    "  --save-every K       also after every step S that K divides\n"
    "  --keep N             keep the newest N checkpoints (default: all)\n"
    "  --save-sync          write each save before the next step (default:\n"
    "                       in the background, completed at the first step\n"
    "                       end after the writes, or the next save)\n"
    "  --resume PATH        continue from a checkpoint: DIR (its latest),\n"
    "                       DIR/latest or DIR/step-<S>; --steps more steps\n"
    "  --metrics FILE       one JSON object per step and rank\n"
    "  --trace FILE         a Chrome/Perfetto trace of every rank's streams\n"
    "                       (--export, --metrics, --trace: opened before the\n"
    "                       first step, directories created; each appears\n"
    "                       whole under its name at the end)\n"
    "  --allow-nonfinite    go on after a NaN or infinite loss (default: stop\n"
    "                       after that step's outputs; fp16 with dynamic loss\n"
    "                       scaling skips such steps and always goes on)\n"
    "  --nproc N            start N ranks with mpirun\n"
    "  --memory-limit B     bytes the plan may use (default: no limit)\n"
    "  --nvme-path DIR      directory of the nvme arena's swap file (default:\n"
    "                       the nvme_path the schedule was compiled with)\n"
    "  --comm-timeout S     seconds before a stuck collective fails (60)\n"
    "  --inter-node-ns-per-byte X  simulate a slow link between the\n"
    "                       schedule's nodes: after each collective a rank\n"
    "                       waits X ns per byte it sent across nodes, on the\n"
    "                       comm stream (a link of 1/X GB/s; default 0: off)\n"
    "  --debug              trap uses of freed buffers\n"
    "  --fail-at-step K --fail-rank R  (tests) rank R kills itself in step K\n"
    "  --fail-at-save K --fail-rank R  (tests) rank R kills itself in its\n"
    "                       K-th save, its file written\n"
    "  --fail-write-at-save K --fail-rank R  (tests) rank R's file of its\n"
    "                       K-th save fails half written (a full disk)\n"
    "  --nvme-fail-write-at B  (tests) from the first step on, writes of\n"
    "                       byte B of the nvme arena fail with ENOSPC\n"
    "  --explain GPU        run nothing: print the CUDA backend's plan of a\n"
    "                       step priced on GPU h100 or h200 (the cost model,\n"
    "                       no GPU needed), per category of launches,\n"
    "                       then the launches that take longest\n"
    "  --explain-set FIGURE=VALUE  price it with one of the GPU's figures\n"
    "                       changed (runtime/src/cuda/DeviceModels.def:\n"
    "                       gemm_bf16_tflops=400, vector_eff=0.62)\n"
    "  --explain-json FILE  also write it as JSON, with every launch\n";

struct Options {
  std::string schedule;
  int64_t steps = -1;
  DeviceKind device = DeviceKind::Cpu;
  int64_t gpusPerNode = 0;
  int64_t printEvery = 1;
  std::string data; // empty: synthetic
  std::map<std::string, std::string> dataArrays;
  bool shuffleData = true;
  uint64_t seed = 0;
  std::string initFrom;
  std::string nvmePath;
  int64_t nvmeFailWriteAt = -1;
  std::string exportPath;
  std::string dumpState;
  bool keepGradients = false;
  std::string saveDirectory;
  int64_t saveEvery = 0;
  int64_t keep = 0;
  bool saveSync = false;
  std::string resume;
  std::string metrics;
  std::string trace;
  int64_t nproc = 0;
  int64_t memoryLimit = 0;
  double commTimeout = 60;
  double interNodeNsPerByte = 0;
  std::string explain;     // --explain: a GPU of the cost model
  std::string explainJson; // --explain-json
  std::vector<DeviceFigure> explainSettings; // --explain-set
  bool debug = false;
  bool allowNonfinite = false;
  bool help = false;
  int64_t failAtStep = -1;
  int64_t failAtSave = -1;
  int64_t failWriteAtSave = -1;
  int64_t failRank = -1;
  /// The arguments without --nproc, for the relaunch under mpirun.
  std::vector<std::string> forwarded;
};

Status usageError(const std::string &message) {
  return ZERO_ERROR(kInvalidArgument, message);
}

/// Whether all of `text` is a number (strtod's), put in `out`.
bool parseNumber(const std::string &text, double &out) {
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
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
    if (flag == "--debug" || flag == "--allow-nonfinite" ||
        flag == "--keep-gradients" || flag == "--save-sync") {
      if (hasValue)
        return usageError(flag + " takes no value");
      (flag == "--debug"             ? options.debug
       : flag == "--keep-gradients"  ? options.keepGradients
       : flag == "--allow-nonfinite" ? options.allowNonfinite
                                     : options.saveSync) = true;
      options.forwarded.push_back(arg);
      continue;
    }
    static const char *kValued[] = {
        "--steps",        "--print-every",
        "--data",         "--data-order",
        "--seed",         "--init-from",
        "--export",       "--dump-state",
        "--save",         "--save-every",
        "--keep",         "--resume",
        "--fail-at-save", "--fail-write-at-save",
        "--metrics",      "--trace",
        "--nproc",        "--memory-limit",
        "--comm-timeout", "--inter-node-ns-per-byte",
        "--fail-at-step", "--fail-rank",
        "--device",       "--gpus-per-node",
        "--nvme-path",    "--nvme-fail-write-at",
        "--explain",      "--explain-set",
        "--explain-json"};
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
    } else if (flag == "--device") {
      if (value != "cpu" && value != "cuda")
        return usageError("--device: '" + value + "' is not cpu or cuda");
      options.device = value == "cuda" ? DeviceKind::Cuda : DeviceKind::Cpu;
    } else if (flag == "--gpus-per-node") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.gpusPerNode));
    } else if (flag == "--print-every") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.printEvery));
    } else if (flag == "--data") {
      if (value.empty())
        return usageError("--data needs 'synthetic', a token file or "
                          "NAME=FILE");
      // NAME=FILE names a data argument; a path's '=' comes after a '/'.
      const size_t equals = value.find('=');
      if (equals != std::string::npos && equals > 0 &&
          value.find('/') > equals) {
        const std::string name = value.substr(0, equals);
        if (!options.dataArrays.emplace(name, value.substr(equals + 1)).second)
          return usageError("--data " + name + "= is given twice");
      } else {
        options.data = value == "synthetic" ? "" : value;
      }
    } else if (flag == "--data-order") {
      if (value != "shuffled" && value != "sequential")
        return usageError("--data-order: '" + value +
                          "' is not shuffled or sequential");
      options.shuffleData = value == "shuffled";
    } else if (flag == "--seed") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 0, number));
      options.seed = static_cast<uint64_t>(number);
    } else if (flag == "--init-from") {
      options.initFrom = value;
    } else if (flag == "--nvme-fail-write-at") {
      ZERO_RETURN_IF_ERROR(
          parseInteger(flag, value, 0, options.nvmeFailWriteAt));
    } else if (flag == "--explain") {
      options.explain = value;
    } else if (flag == "--explain-json") {
      options.explainJson = value;
    } else if (flag == "--explain-set") {
      // FIGURE=VALUE; the model checks the figure's name and range.
      const size_t equals = value.find('=');
      double figure = 0;
      if (equals == 0 || equals == std::string::npos ||
          !parseNumber(value.substr(equals + 1), figure))
        return usageError("--explain-set: '" + value +
                          "' is not FIGURE=NUMBER");
      options.explainSettings.push_back({value.substr(0, equals), figure});
    } else if (flag == "--nvme-path") {
      if (value.empty())
        return usageError("--nvme-path needs a directory");
      options.nvmePath = value;
    } else if (flag == "--export") {
      options.exportPath = value;
    } else if (flag == "--dump-state") {
      if (value.empty())
        return usageError("--dump-state needs a file");
      options.dumpState = value;
      options.keepGradients = true;
    } else if (flag == "--save") {
      if (value.empty())
        return usageError("--save needs a directory");
      options.saveDirectory = value;
    } else if (flag == "--save-every") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.saveEvery));
    } else if (flag == "--keep") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.keep));
    } else if (flag == "--resume") {
      if (value.empty())
        return usageError("--resume needs a checkpoint");
      options.resume = value;
    } else if (flag == "--fail-at-save") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.failAtSave));
    } else if (flag == "--fail-write-at-save") {
      ZERO_RETURN_IF_ERROR(
          parseInteger(flag, value, 1, options.failWriteAtSave));
    } else if (flag == "--metrics") {
      options.metrics = value;
    } else if (flag == "--trace") {
      options.trace = value;
    } else if (flag == "--nproc") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.nproc));
    } else if (flag == "--memory-limit") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.memoryLimit));
    } else if (flag == "--comm-timeout") {
      if (!parseNumber(value, options.commTimeout) ||
          !(options.commTimeout > 0))
        return usageError("--comm-timeout: '" + value +
                          "' is not a positive number of seconds");
    } else if (flag == "--inter-node-ns-per-byte") {
      if (!parseNumber(value, options.interNodeNsPerByte) ||
          !checkInterNodeNsPerByte(options.interNodeNsPerByte).isOk())
        return usageError("--inter-node-ns-per-byte: '" + value +
                          "' is not a number of nanoseconds per byte in "
                          "[0, 1e9]");
    } else if (flag == "--fail-at-step") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 1, options.failAtStep));
    } else if (flag == "--fail-rank") {
      ZERO_RETURN_IF_ERROR(parseInteger(flag, value, 0, options.failRank));
    }
  }
  if (options.schedule.empty())
    return usageError("no schedule given");
  if (!options.explainJson.empty() && options.explain.empty())
    return usageError("--explain-json goes with --explain");
  if (!options.explainSettings.empty() && options.explain.empty())
    return usageError("--explain-set goes with --explain");
  if (!options.explain.empty()) {
    // The explanation runs nothing: no option of a run goes with it.
    for (const std::string &arg : options.forwarded)
      if (arg.rfind("--", 0) == 0 && arg != "--explain" &&
          arg != "--explain-set" && arg != "--explain-json")
        return usageError(arg + " does not go with --explain (it runs "
                                "nothing)");
    if (options.nproc > 0)
      return usageError("--nproc does not go with --explain (it runs "
                        "nothing)");
    return Status::ok();
  }
  if (options.steps < 0)
    return usageError("--steps is required");
  bool failing = options.failAtStep >= 0 || options.failAtSave >= 0 ||
                 options.failWriteAtSave >= 0;
  if (failing != (options.failRank >= 0))
    return usageError("--fail-rank goes with --fail-at-step, --fail-at-save "
                      "or --fail-write-at-save");
  if (options.saveDirectory.empty()) {
    for (auto [flag, given] :
         {std::pair{"--save-every", options.saveEvery > 0},
          std::pair{"--keep", options.keep > 0},
          std::pair{"--save-sync", options.saveSync},
          std::pair{"--fail-at-save", options.failAtSave > 0},
          std::pair{"--fail-write-at-save", options.failWriteAtSave > 0}})
      if (given)
        return usageError(std::string(flag) + " needs --save");
  }
  if (!options.dumpState.empty() && options.steps == 0)
    return usageError("--dump-state needs a step: the gradients are the last "
                      "step's");
  if (!options.resume.empty() && !options.initFrom.empty())
    return usageError("--resume and --init-from both give the initial state");
  // Two outputs of one name would overwrite each other at the end.
  std::pair<const char *, const std::string *> outputs[] = {
      {"--export", &options.exportPath},
      {"--dump-state", &options.dumpState},
      {"--metrics", &options.metrics},
      {"--trace", &options.trace}};
  for (size_t i = 0; i < std::size(outputs); ++i)
    for (size_t j = i + 1; j < std::size(outputs); ++j)
      if (!outputs[i].second->empty() &&
          *outputs[i].second == *outputs[j].second)
        return usageError(std::string(outputs[i].first) + " and " +
                          outputs[j].first + " both write '" +
                          *outputs[i].second + "'");
  return Status::ok();
}

/// What each rank last did, for zero-run to say where the job was when
/// mpirun ends it (Open MPI ends every rank as soon as one dies, before any
/// could report it). Under --nproc each rank keeps its record in a file of
/// its own in the directory that the launcher names in ZERO_RUN_STATUS_DIR,
/// mapped shared, so that what it wrote last is there after a SIGKILL, and
/// the launcher says which rank died where. Under a plain mpirun the record
/// is the rank's own, and a rank that mpirun's SIGTERM ends while it runs
/// says where it was.
constexpr const char *kStatusDirVariable = "ZERO_RUN_STATUS_DIR";

struct RankRecord {
  enum State : int32_t {
    Running = 1,
    /// Ended on its own: with an error it printed, or done.
    Exited = 2,
    /// Ended by a signal it could catch (mpirun's SIGTERM to the others).
    Signalled = 3,
  };
  char magic[8];
  volatile int32_t state;
  volatile int32_t signal;
  int64_t rank;
  int64_t step;
  /// Where it was: "its all_gather of bucket at step.mlir:12:3".
  char where[480];
};
static_assert(sizeof(RankRecord) <= 4096, "one page");
constexpr char kRecordMagic[8] = "zrrank1";

/// This rank's record: mapped from the launcher's directory, or its own
/// (reportOnSignal); null outside MPI.
RankRecord *rankRecord = nullptr;
RankRecord ownRankRecord;
/// Whether a terminating signal is reported by this rank itself (no
/// launcher of ours to read the record).
bool reportOnSignal = false;
std::mutex rankRecordMutex;

void noteRank(int64_t step, const std::string &where) {
  if (!rankRecord)
    return;
  std::lock_guard<std::mutex> lock(rankRecordMutex);
  rankRecord->step = step;
  std::snprintf(rankRecord->where, sizeof(rankRecord->where), "%s",
                where.c_str());
}

void endRankRecord() {
  if (rankRecord)
    rankRecord->state = RankRecord::Exited;
}

/// Appends the decimal `value` to `out` (async-signal-safe).
void appendDecimal(char *&out, int64_t value) {
  char digits[24];
  int count = 0;
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value)
                                 : static_cast<uint64_t>(value);
  do {
    digits[count++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude);
  if (value < 0)
    *out++ = '-';
  while (count)
    *out++ = digits[--count];
}

/// Under a plain mpirun: one line saying where this rank was when the
/// launcher's signal ended it, written with write(2) (async-signal-safe).
void reportTerminatingSignal(const RankRecord &record, int number) {
  char line[768];
  // At most 480 bytes of `where` and 200 of the rest.
  char *out = line;
  auto append = [&](const char *text, size_t limit = SIZE_MAX) {
    for (size_t i = 0; i < limit && text[i] && out < line + sizeof(line) - 2;
         ++i)
      *out++ = text[i];
  };
  append("zero-run: rank ");
  appendDecimal(out, record.rank);
  append(": ended by signal ");
  appendDecimal(out, number);
  append(" from its launcher");
  if (record.step > 0) {
    append(" in step ");
    appendDecimal(out, record.step);
    append(",");
  }
  append(" in ");
  // Bounded: noteRank may have been rewriting it.
  append(record.where, sizeof(record.where));
  append(": the launcher ends every rank when one fails or dies, or when "
         "it is stopped itself; the failing rank's error, or the "
         "launcher's message, says which");
  *out++ = '\n';
  ssize_t ignored = ::write(STDERR_FILENO, line, out - line);
  (void)ignored;
}

extern "C" void onTerminatingSignal(int number) {
  // Only stores and write(2): async-signal-safe. Then the default action,
  // which ends the process with the signal as before.
  if (rankRecord) {
    if (reportOnSignal && rankRecord->state == RankRecord::Running)
      reportTerminatingSignal(*rankRecord, number);
    rankRecord->signal = number;
    rankRecord->state = RankRecord::Signalled;
  }
  std::signal(number, SIG_DFL);
  std::raise(number);
}

/// Starts the record of a rank under MPI: keeps it itself under a plain
/// mpirun; maps it from the launcher's directory under --nproc, best effort
/// (a rank that cannot still runs, and the launcher then says that it has
/// no record of it).
void startRecord(RankRecord *record, int64_t rank) {
  rankRecord = record;
  rankRecord->state = RankRecord::Running;
  rankRecord->rank = rank;
  rankRecord->step = 0;
  std::snprintf(rankRecord->where, sizeof(rankRecord->where), "%s",
                "its set-up (the schedule, the communicator, the state)");
  std::memcpy(rankRecord->magic, kRecordMagic, sizeof(kRecordMagic));
  for (int number : {SIGTERM, SIGINT, SIGHUP})
    std::signal(number, onTerminatingSignal);
}

/// Under --nproc, the errors this rank prints go to a file of its own in the
/// launcher's directory, and the launcher prints them, in rank order, when
/// mpirun has ended: Open MPI may drop the last lines a failing rank writes
/// to stderr while it tears the job down. -1: they go to stderr.
int rankErrorFd = -1;

/// The files of rank `rank` in the launcher's directory: its record, and
/// the errors it printed.
std::string getRankRecordPath(const std::string &directory, int64_t rank) {
  return directory + "/rank-" + std::to_string(rank);
}
std::string getRankErrorPath(const std::string &directory, int64_t rank) {
  return getRankRecordPath(directory, rank) + ".errors";
}
/// Where Open MPI keeps this job's session files: the launcher's directory.
std::string getMpiSessionBase(const std::string &directory) {
  return directory + "/mpi";
}

/// Prints one line of this rank's errors ("zero-run: ..." without the
/// newline).
void printErrorLine(const std::string &line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (rankErrorFd >= 0 && done < text.size()) {
    ssize_t n = ::write(rankErrorFd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += n;
  }
  if (done == text.size())
    return;
  // No file, or it is full: what is left goes to stderr.
  std::fputs(text.c_str() + done, stderr);
  std::fflush(stderr);
}

void openRankRecord(int64_t rank) {
  const char *directory = std::getenv(kStatusDirVariable);
  if (!directory || !*directory) {
    reportOnSignal = true;
    startRecord(&ownRankRecord, rank);
    return;
  }
  rankErrorFd = ::open(getRankErrorPath(directory, rank).c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW |
                           O_CLOEXEC,
                       0600);
  int fd = ::open(getRankRecordPath(directory, rank).c_str(),
                  O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  void *memory = MAP_FAILED;
  if (::ftruncate(fd, 4096) == 0)
    memory = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (memory == MAP_FAILED)
    return;
  startRecord(static_cast<RankRecord *>(memory), rank);
}

/// The launcher, after mpirun ended with `status` (a waitpid status): one
/// line for each of the `nproc` ranks that died without ending on its own
/// or by mpirun's signal, saying where it was.
void reportDeadRanks(const std::string &directory, int64_t nproc, int status) {
  for (int64_t rank = 0; rank < nproc; ++rank) {
    RankRecord record{};
    int fd = ::open(getRankRecordPath(directory, rank).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    bool read = fd >= 0 &&
                ::read(fd, &record, sizeof(record)) ==
                    static_cast<ssize_t>(sizeof(record)) &&
                std::memcmp(record.magic, kRecordMagic, sizeof(kRecordMagic)) ==
                    0;
    if (fd >= 0)
      ::close(fd);
    std::string how =
        WIFSIGNALED(status)
            ? "mpirun itself was ended by signal " +
                  std::to_string(WTERMSIG(status))
            : "mpirun ended the job with exit status " +
                  std::to_string(WEXITSTATUS(status));
    if (!read) {
      std::fprintf(stderr,
                   "zero-run: rank %lld ended before it started its run "
                   "(no record of it); %s\n",
                   static_cast<long long>(rank), how.c_str());
      continue;
    }
    if (record.state != RankRecord::Running)
      continue;
    record.where[sizeof(record.where) - 1] = '\0';
    std::string step =
        record.step > 0 ? "in step " + std::to_string(record.step) + ", "
                        : std::string();
    std::fprintf(stderr,
                 "zero-run: rank %lld died %sin %s: it was killed by a "
                 "signal or crashed, without an error of its own; %s\n",
                 static_cast<long long>(rank), step.c_str(), record.where,
                 how.c_str());
  }
  std::fflush(stderr);
}

/// The launcher, after mpirun ended: the errors each of the `nproc` ranks
/// printed (printErrorLine), in rank order. The files are the ranks' own, in
/// the launcher's directory; each is read up to a bound.
void printRankErrors(const std::string &directory, int64_t nproc) {
  constexpr size_t kMaxBytes = 1 << 20;
  for (int64_t rank = 0; rank < nproc; ++rank) {
    int fd = ::open(getRankErrorPath(directory, rank).c_str(),
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      continue;
    struct stat info;
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
      std::string text(std::min<size_t>(info.st_size, kMaxBytes), '\0');
      ssize_t n = ::read(fd, text.data(), text.size());
      if (n > 0)
        std::fwrite(text.data(), 1, n, stderr);
    }
    ::close(fd);
  }
  std::fflush(stderr);
}

/// The launcher's child, mpirun, for the signals the launcher passes on.
volatile pid_t launchedMpirun = -1;

extern "C" void forwardSignal(int number) {
  if (launchedMpirun > 0)
    ::kill(launchedMpirun, number);
}

/// Runs `mpirun -np N <itself> <args without --nproc>` and waits for it;
/// when it fails, says which rank died where (reportDeadRanks). Exits as
/// mpirun did.
int relaunch(const Options &options) {
  char self[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) {
    std::fprintf(stderr, "zero-run: --nproc: cannot find this program: %s\n",
                 std::strerror(errno));
    return 1;
  }
  self[length] = '\0';
  // The ranks' records, in a directory of this launcher's own.
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/zero-run.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  std::string directory;
  if (::mkdtemp(name.data()))
    directory = name.data();
  std::vector<std::string> args = {"mpirun", "--oversubscribe", "-np",
                                   std::to_string(options.nproc)};
  // Open MPI refuses root unless told; the user chose to run as root.
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  if (!directory.empty()) {
    args.push_back("-x");
    args.push_back(std::string(kStatusDirVariable) + "=" + directory);
  }
  args.push_back(self);
  args.insert(args.end(), options.forwarded.begin(), options.forwarded.end());
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child == 0) {
    // Open MPI keeps its session files under one directory per host and
    // user, which concurrent mpiruns create and remove under each other
    // ("mkdir ...: File exists"); this job's go in the launcher's own
    // directory, unless the user chose where.
    if (!directory.empty())
      for (const char *variable :
           {"OMPI_MCA_orte_tmpdir_base", "PRTE_MCA_prte_tmpdir_base"})
        ::setenv(variable, getMpiSessionBase(directory).c_str(),
                 /*overwrite=*/0);
    execvp("mpirun", argv.data());
    std::fprintf(stderr, "zero-run: --nproc: cannot run mpirun: %s\n",
                 std::strerror(errno));
    std::fflush(stderr);
    ::_exit(127);
  }
  auto removeRecords = [&] {
    if (directory.empty())
      return;
    for (int64_t rank = 0; rank < options.nproc; ++rank) {
      ::unlink(getRankRecordPath(directory, rank).c_str());
      ::unlink(getRankErrorPath(directory, rank).c_str());
    }
    // Open MPI removes its session files when the job ends normally; what
    // a killed job left is this launcher's alone (remove_all follows no
    // link out of it).
    std::error_code ignored;
    std::filesystem::remove_all(getMpiSessionBase(directory), ignored);
    ::rmdir(directory.c_str());
  };
  if (child < 0) {
    std::fprintf(stderr, "zero-run: --nproc: cannot start mpirun: %s\n",
                 std::strerror(errno));
    removeRecords();
    return 1;
  }
  // ^C and the like reach mpirun, which ends the ranks as it does.
  launchedMpirun = child;
  for (int number : {SIGINT, SIGTERM, SIGHUP})
    std::signal(number, forwardSignal);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!directory.empty())
    printRankErrors(directory, options.nproc);
  int code = WIFEXITED(status) ? WEXITSTATUS(status)
                               : 128 + WTERMSIG(status);
  if (code != 0 && code != 127 && !directory.empty())
    reportDeadRanks(directory, options.nproc, status);
  removeRecords();
  return code;
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
  printErrorLine("zero-run: " + prefix + message);
}

/// Prints an error the ranks agreed on (Session::agree): rank 0's names every
/// failed rank's, one per line; the other ranks' is empty.
void printAgreedError(const Status &status) {
  if (Session::isReported(status))
    return;
  const std::string &message = status.message();
  for (size_t begin = 0; begin <= message.size();) {
    size_t end = message.find('\n', begin);
    if (end == std::string::npos)
      end = message.size();
    printErrorLine("zero-run: " + message.substr(begin, end - begin));
    begin = end + 1;
  }
}

/// Everything that must work before the first step, on every rank.
struct Run {
  std::unique_ptr<Session> session;
  /// With --save; destroyed before the session it saves.
  std::unique_ptr<CheckpointSaver> saver;
  /// Rank 0's outputs (null where not asked for, and on other ranks).
  std::unique_ptr<OutputFile> metrics, trace, exported, dumped;
};

/// This process's MPI rank as its launcher sets it, 0 without one.
int64_t getRankFromEnvironment() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *value = std::getenv(name))
      return std::atoll(value);
  return 0;
}

SessionOptions getSessionOptions(const Options &options, bool underMpi) {
  SessionOptions session;
  session.device = options.device;
  session.gpusPerNode = static_cast<int>(options.gpusPerNode);
  session.useMpi = underMpi;
  session.commTimeoutSeconds = options.commTimeout;
  session.interNodeNsPerByte = options.interNodeNsPerByte;
  session.memoryLimit = options.memoryLimit;
  session.debug = options.debug;
  session.trace = !options.trace.empty();
  session.seed = options.seed;
  session.dataFile = options.data;
  session.dataArrays = options.dataArrays;
  session.shuffleData = options.shuffleData;
  session.initFrom = options.initFrom;
  session.resumeFrom = options.resume;
  session.nvmePath = options.nvmePath;
  session.keepGradients = options.keepGradients;
  if (options.nvmeFailWriteAt >= 0) {
    session.nvmeFaults.failAtFileOffset = options.nvmeFailWriteAt;
    session.nvmeFaults.failWrites = true;
    session.nvmeFaults.errorNumber = ENOSPC;
    session.nvmeFaults.fromStep = 1;
  }
  int64_t failAt = options.failAtStep, failRank = options.failRank;
  if (failAt >= 0 || rankRecord) {
    // The rank is known only once MPI is up: each rank checks its own.
    session.beforeCollective = [failAt, failRank](int64_t step,
                                                  const Instruction &inst) {
      if (rankRecord)
        noteRank(step, "its " + inst.op + " of bucket " +
                           (inst.loc.empty() ? inst.path : "at " + inst.loc));
      if (failAt >= 0 && step == failAt &&
          getRankFromEnvironment() == failRank)
        std::raise(SIGKILL);
    };
  }
  return session;
}

/// The files of rank 0, opened before the first step: a run must not fail
/// at its end for a path it could not write.
Status openOutputs(const Options &options, Run &run) {
  if (!options.saveDirectory.empty()) {
    ZERO_RETURN_IF_ERROR(prepareCheckpointDirectory(options.saveDirectory));
    // Another run's directory is refused before the first step, not at the
    // first save.
    ZERO_RETURN_IF_ERROR(
        checkCheckpointOwner(*run.session, options.saveDirectory));
  }
  std::pair<const std::string *, std::unique_ptr<OutputFile> *> outputs[] = {
      {&options.metrics, &run.metrics},
      {&options.trace, &run.trace},
      {&options.exportPath, &run.exported},
      {&options.dumpState, &run.dumped}};
  for (auto &[path, file] : outputs) {
    if (path->empty())
      continue;
    StatusOr<std::unique_ptr<OutputFile>> opened = OutputFile::open(*path);
    if (!opened.isOk())
      return opened.status();
    *file = std::move(*opened);
  }
  return Status::ok();
}

/// Whether a NaN or infinite loss ends the run: the schedule has a loss, and
/// no dynamic fp16 loss scale (a `loss_scale` state that a result updates,
/// docs/Passes.md), whose overflow check skips such a step by itself.
bool stopsOnNonfiniteLoss(const Schedule &schedule) {
  bool hasLoss = false;
  for (const ResultInfo &result : schedule.results()) {
    if (result.kind == ResultInfo::Kind::Loss)
      hasLoss = true;
    else if (schedule.arguments()[result.argument].state == "loss_scale")
      return false;
  }
  return hasLoss;
}

/// The error of a step whose mean loss is not finite, naming each rank whose
/// own loss is not (a collective; rank 0 gets the message).
StatusOr<std::string> describeNonfiniteLoss(Session &session,
                                            const StepStats &stats) {
  auto text = [](double value) -> std::string {
    return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  };
  Communicator &comm = session.communicator();
  CollectiveContext context{"gather of the losses (step " +
                                std::to_string(stats.step) + ")",
                            nullptr};
  StatusOr<std::vector<std::string>> losses = comm.gatherBytes(
      std::isfinite(stats.loss) ? std::string() : text(stats.loss), context);
  if (!losses.isOk())
    return losses.status();
  std::string ranks;
  for (size_t rank = 0; rank < losses->size(); ++rank)
    if (!(*losses)[rank].empty())
      ranks += std::string(ranks.empty() ? "" : ", ") + "rank " +
               std::to_string(rank) + ": " + (*losses)[rank];
  if (ranks.empty()) // each finite, their sum not
    ranks = "the mean: " + text(stats.meanLoss);
  return session.schedule().name() + ": step " + std::to_string(stats.step) +
         ": non-finite loss (" + ranks +
         "); the run stops (--allow-nonfinite lets it go on)";
}

std::string formatDouble(const char *format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

Status writeMetrics(Communicator &comm, Run &run, const StepStats &stats) {
  double tokensPerSecond =
      stats.stepTimeSeconds > 0
          ? run.session->data().tokensPerStep() / stats.stepTimeSeconds
          : 0;
  nlohmann::json line = {
      {"step", stats.step},
      {"rank", comm.rank()},
      {"loss", stats.loss},
      {"mean_loss", stats.meanLoss},
      {"step_time_s", stats.stepTimeSeconds},
      {"tokens_per_s", tokensPerSecond},
      {"peak_bytes", stats.peakBytes},
      {"bytes_sent", stats.bytesSent},
      {"bytes_received", stats.bytesReceived},
      {"bytes_sent_inter_node", stats.bytesSentInterNode},
      {"bytes_received_inter_node", stats.bytesReceivedInterNode},
      {"inter_node_delay_ns", stats.interNodeDelayNs},
      {"bytes_host_to_device", stats.bytesHostToDevice},
      {"bytes_device_to_host", stats.bytesDeviceToHost},
      {"bytes_nvme_read", stats.bytesNvmeRead},
      {"bytes_nvme_write", stats.bytesNvmeWrite}};
  for (int i = 0; i < kNumMemorySpaces; ++i)
    line["peak_bytes_by_space"]
        [getMemorySpaceName(static_cast<MemorySpace>(i))] =
            stats.peakBytesBySpace[i];
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
    ZERO_RETURN_IF_ERROR(run.metrics->write(text + "\n"));
  // A full disk shows at the step it happens.
  return run.metrics->flush();
}

/// Rank 0 writes every rank's `lines` (a collective).
Status writeEventMetrics(Communicator &comm, Run &run,
                         const std::vector<nlohmann::json> &lines,
                         const std::string &what) {
  std::string text;
  for (const nlohmann::json &line : lines)
    text += line.dump() + "\n";
  CollectiveContext context{"gather of the metrics (" + what + ")", nullptr};
  StatusOr<std::vector<std::string>> gathered = comm.gatherBytes(text, context);
  if (!gathered.isOk())
    return gathered.status();
  if (comm.rank() != 0)
    return Status::ok();
  for (const std::string &rank : *gathered)
    ZERO_RETURN_IF_ERROR(run.metrics->write(rank));
  return run.metrics->flush();
}

/// The metrics of the saves completed since the last call: one line per
/// save and rank (a collective).
Status writeSaveMetrics(Communicator &comm, Run &run) {
  std::vector<nlohmann::json> lines;
  for (const CheckpointSaveStats &save : run.saver->takeStats())
    lines.push_back({{"event", "save"},
                     {"step", save.step},
                     {"rank", comm.rank()},
                     {"background", save.background},
                     {"bytes_written", save.bytesWritten},
                     {"snapshot_s", save.snapshotSeconds},
                     {"write_s", save.writeSeconds},
                     {"wait_s", save.waitSeconds},
                     {"complete_s", save.completeSeconds}});
  return writeEventMetrics(comm, run, lines, "saves");
}

enum class Outcome {
  Done,
  /// Failed where every rank can still end normally.
  Failed,
  /// Stopped at a non-finite loss, its outputs written.
  Stopped,
  /// Failed in the middle of the run: the peers may wait in a collective.
  FailedMidRun,
};

/// Writes a gathered output into its file and renames it into place.
Status finish(OutputFile &file, const std::function<Status()> &write) {
  Status status = write();
  return status.isOk() ? file.commit() : status;
}

/// Every parameter's fp32 value (`<name>`), gradient (`grad/<name>`, where
/// the schedule records one) and optimizer states (`<key>/<name>`) through
/// the full accessors (collectives: rank 0 gets the tensors).
StatusOr<std::vector<NamedTensor>> dumpState(Session &session) {
  const Schedule &schedule = session.schedule();
  std::vector<NamedTensor> tensors;
  auto add = [&](const std::string &name, const ArgumentInfo &param,
                 StatusOr<std::vector<float>> values) -> Status {
    if (!values.isOk())
      return values.status();
    if (session.rank() == 0)
      tensors.push_back({name, param.layout.shape, std::move(*values)});
    return Status::ok();
  };
  for (size_t i = 0; i < schedule.arguments().size(); ++i) {
    const ArgumentInfo &param = schedule.arguments()[i];
    if (param.kind != ArgumentInfo::Kind::Param)
      continue;
    ZERO_RETURN_IF_ERROR(
        add(param.name, param, getFullFp32Param(session, param.name)));
    // Plain SGD has no record; runMain refuses a schedule without any.
    bool recorded = std::any_of(
        schedule.gradientRecords().begin(), schedule.gradientRecords().end(),
        [&](const GradientRecord &record) {
          return record.paramArgument == static_cast<int64_t>(i);
        });
    if (recorded)
      ZERO_RETURN_IF_ERROR(
          add("grad/" + param.name, param, getFullGrad(session, param.name)));
    for (const ArgumentInfo &state : schedule.arguments())
      if (state.kind == ArgumentInfo::Kind::State &&
          state.paramArgument == static_cast<int64_t>(i) &&
          state.state != "master")
        ZERO_RETURN_IF_ERROR(
            add(state.state + "/" + param.name, param,
                getFullOptimizerState(session, param.name, state.state)));
  }
  return tensors;
}

/// Starts a checkpoint of the steps taken (a collective), completed before
/// it returns with --save-sync; the test hooks act on save number `index`
/// (1-based).
Status save(const Options &options, Run &run, int64_t index) {
  CheckpointSaveOptions save;
  save.directory = options.saveDirectory;
  save.keep = options.keep;
  save.background = !options.saveSync;
  if (run.session->rank() == options.failRank) {
    if (index == options.failAtSave)
      save.afterRankFile = [] { std::raise(SIGKILL); };
    save.failRankFile = index == options.failWriteAtSave;
  }
  noteRank(run.session->executor().stepsTaken(),
           "the checkpoint of step " +
               std::to_string(run.session->executor().stepsTaken()));
  return run.saver->start(save);
}

Outcome runSteps(const Options &options, Run &run) {
  Session &session = *run.session;
  Communicator &comm = session.communicator();
  auto fail = [&](const Status &status, Outcome outcome) {
    printError(&comm, describe(status));
    return outcome;
  };
  // The ranks agree on a failed save, unless a rank died in it: then the
  // others cannot end normally (MPI_Finalize would wait for it), so a failed
  // save ends the job as a failed step does.
  auto failSave = [&](const Status &status) {
    printAgreedError(status);
    return Outcome::FailedMidRun;
  };
  int64_t saves = 0, savedAt = -1;
  // A background save completes at the end of the first step after it at
  // which every rank's writer is through (the ranks poll together), at the
  // latest at the next save or the end of the run, which wait for it.
  auto pollSave = [&]() -> Status {
    if (!run.saver || !run.saver->isPending())
      return Status::ok();
    StatusOr<bool> completed = run.saver->completeIfWritten();
    if (!completed.isOk())
      return completed.status();
    return *completed && !options.metrics.empty() ? writeSaveMetrics(comm, run)
                                                  : Status::ok();
  };
  if (const std::optional<CheckpointLoadStats> &loaded = session.resumeStats();
      loaded && !options.metrics.empty()) {
    Status status = writeEventMetrics(comm, run,
                                      {{{"event", "load"},
                                        {"step", loaded->step},
                                        {"rank", comm.rank()},
                                        {"bytes_read", loaded->bytesRead},
                                        {"load_s", loaded->seconds}}},
                                      "load");
    if (!status.isOk())
      return fail(status, Outcome::FailedMidRun);
  }
  const bool stopOnNonfinite =
      !options.allowNonfinite && stopsOnNonfiniteLoss(session.schedule());
  // Rank 0's message when a non-finite loss stopped the run.
  std::optional<std::string> stopped;
  for (int64_t i = 0; i < options.steps && !stopped; ++i) {
    int64_t next = session.executor().stepsTaken() + 1;
    noteRank(next, "step " + std::to_string(next) +
                       ", before its first collective");
    StatusOr<StepStats> stats = session.step();
    if (!stats.isOk())
      return fail(stats.status(), Outcome::FailedMidRun);
    // The mean is the same on every rank, so all of them stop together.
    bool nonfinite = stopOnNonfinite && !std::isfinite(stats->meanLoss);
    bool print = i == 0 || i + 1 == options.steps ||
                 (i + 1) % options.printEvery == 0 || nonfinite;
    if (comm.rank() == 0 && print) {
      double tokensPerSecond = stats->stepTimeSeconds > 0
                                   ? session.data().tokensPerStep() *
                                         comm.size() / stats->stepTimeSeconds
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
      Status status = writeMetrics(comm, run, *stats);
      if (!status.isOk())
        return fail(status, Outcome::FailedMidRun);
    }
    Status completed = pollSave();
    if (!completed.isOk())
      return failSave(completed);
    if (nonfinite) {
      StatusOr<std::string> message = describeNonfiniteLoss(session, *stats);
      if (!message.isOk())
        return fail(message.status(), Outcome::FailedMidRun);
      stopped = std::move(*message);
    } else if (options.saveEvery > 0 && stats->step % options.saveEvery == 0) {
      Status saved = save(options, run, ++saves);
      // Its completion, or the pending one's before it.
      if (saved.isOk() && !options.metrics.empty())
        saved = writeSaveMetrics(comm, run);
      if (!saved.isOk())
        return failSave(saved);
      savedAt = stats->step;
    }
  }
  if (!options.saveDirectory.empty() && !stopped &&
      savedAt != session.executor().stepsTaken()) {
    Status saved = save(options, run, ++saves);
    if (saved.isOk() && !options.metrics.empty())
      saved = writeSaveMetrics(comm, run);
    if (!saved.isOk())
      return failSave(saved);
  }
  if (run.saver && run.saver->isPending()) {
    Status completed = run.saver->complete();
    if (completed.isOk() && !options.metrics.empty())
      completed = writeSaveMetrics(comm, run);
    if (!completed.isOk())
      return failSave(completed);
  }
  // The last collectives first; then rank 0 writes the files, and a failed
  // write leaves no rank waiting.
  std::vector<TraceEvent> events;
  if (!options.trace.empty()) {
    StatusOr<std::vector<TraceEvent>> gathered = session.gatherTrace();
    if (!gathered.isOk())
      return fail(gathered.status(), Outcome::FailedMidRun);
    events = std::move(*gathered);
  }
  // The export streams: rank 0 writes each tensor as its gather completes,
  // so that no rank holds the whole model. A write that fails stops the
  // writing, not the gathers the other ranks are in; it is reported below.
  Status exportWritten = Status::ok();
  if (!options.exportPath.empty()) {
    Executor &executor = session.executor();
    if (run.exported)
      exportWritten = writeSafetensorsHeader(
          *run.exported, executor.exportedTensors(),
          {{"producer", "zero-run"},
           {"schedule", session.schedule().name()},
           {"steps", std::to_string(executor.stepsTaken())},
           {"seed", std::to_string(options.seed)}});
    Status gathered = executor.exportParameters([&](NamedTensor &&tensor) {
      if (run.exported && exportWritten.isOk())
        exportWritten = writeSafetensorsData(*run.exported, tensor);
      return Status::ok();
    });
    if (!gathered.isOk())
      return fail(gathered, Outcome::FailedMidRun);
  }
  std::vector<NamedTensor> dumped;
  if (!options.dumpState.empty()) {
    StatusOr<std::vector<NamedTensor>> state = dumpState(session);
    if (!state.isOk())
      return fail(state.status(), Outcome::FailedMidRun);
    dumped = std::move(*state);
  }
  Outcome outcome = stopped ? Outcome::Stopped : Outcome::Done;
  if (comm.rank() != 0)
    return outcome;
  // Each output on its own: one that fails loses no other.
  if (run.metrics) {
    Status status = run.metrics->commit();
    if (!status.isOk())
      outcome = fail(status, Outcome::Failed);
  }
  if (run.trace) {
    Status status = finish(
        *run.trace, [&] { return writeChromeTrace(*run.trace, events); });
    if (!status.isOk())
      outcome = fail(status, Outcome::Failed);
  }
  if (run.exported) {
    Status status = finish(*run.exported, [&] { return exportWritten; });
    if (!status.isOk())
      outcome = fail(status, Outcome::Failed);
  }
  if (run.dumped) {
    std::map<std::string, std::string> metadata = {
        {"producer", "zero-run"},
        {"schedule", session.schedule().name()},
        {"steps", std::to_string(session.executor().stepsTaken())}};
    Status status = finish(*run.dumped, [&] {
      return writeSafetensors(*run.dumped, dumped, metadata);
    });
    if (!status.isOk())
      outcome = fail(status, Outcome::Failed);
  }
  if (stopped) {
    std::fprintf(stderr, "zero-run: %s\n", stopped->c_str());
    std::fflush(stderr);
  }
  return outcome;
}

/// --explain: the cost model's plan of one step, printed (and written as
/// JSON); runs nothing.
int explain(const Options &options) {
  StatusOr<Schedule> schedule = Schedule::load(options.schedule);
  if (!schedule.isOk()) {
    std::fprintf(stderr, "zero-run: %s\n", schedule.status().message().c_str());
    return 1;
  }
  StatusOr<CostExplanation> explanation =
      explainSchedule(*schedule, options.explain, options.explainSettings);
  if (!explanation.isOk()) {
    std::fprintf(stderr, "zero-run: --explain: %s\n",
                 explanation.status().message().c_str());
    return 1;
  }
  if (!options.explainJson.empty()) {
    StatusOr<std::unique_ptr<OutputFile>> file =
        OutputFile::open(options.explainJson);
    Status written = file.isOk() ? (*file)->write(
                                       costExplanationToJson(*explanation))
                                 : file.status();
    if (written.isOk())
      written = (*file)->commit();
    if (!written.isOk()) {
      std::fprintf(stderr, "zero-run: --explain-json: %s\n",
                   written.message().c_str());
      return 1;
    }
  }
  // "h100 with vector_eff=0.62, launch_us=5"
  std::string device = options.explain;
  const char *separator = " with ";
  for (const DeviceFigure &setting : explanation->settings) {
    char figure[96];
    std::snprintf(figure, sizeof(figure), "%s%s=%g", separator,
                  setting.name.c_str(), setting.value);
    device += figure;
    separator = ", ";
  }
  std::printf("%s: one step on %s, predicted by the cost model\n%s",
              options.schedule.c_str(), device.c_str(),
              formatCostExplanation(*explanation).c_str());
  return 0;
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
  if (!options.explain.empty())
    return explain(options);
  bool underMpi = isLaunchedByMpi();
  if (options.nproc > 0) {
    if (underMpi) {
      std::fprintf(stderr, "zero-run: --nproc: already started by an MPI "
                           "launcher; give the ranks to mpirun -np instead\n");
      return 2;
    }
    return relaunch(options);
  }
  if (underMpi)
    openRankRecord(getRankFromEnvironment());

  int exitCode = 1;
  Run run;
  SessionOptions sessionOptions = getSessionOptions(options, underMpi);
  // Rank 0 reports a failed set-up before any rank leaves it.
  bool setUpReported = false;
  sessionOptions.reportSetUpFailure = [&](const Status &status) {
    printAgreedError(status);
    setUpReported = true;
  };
  StatusOr<std::unique_ptr<Session>> session =
      Session::create(options.schedule, std::move(sessionOptions));
  if (!session.isOk()) {
    if (!setUpReported)
      printAgreedError(session.status());
    return 1;
  }
  run.session = std::move(*session);
  if (!options.saveDirectory.empty())
    run.saver = std::make_unique<CheckpointSaver>(*run.session);
  Communicator &comm = run.session->communicator();
  // How the NVMe swap store falls short of what was asked (buffered I/O).
  if (const NvmeSwapSpace *nvme = run.session->executor().nvmeSwap();
      nvme && !nvme->notice().empty() && comm.rank() == 0)
    std::fprintf(stderr, "zero-run: %s\n", nvme->notice().c_str());
  Outcome outcome = Outcome::Failed;
  // Only rank 0 writes files; its failure to open one ends every rank.
  Status local = comm.rank() == 0 ? openOutputs(options, run) : Status::ok();
  // The dump needs the gradient records: refuse before the first step.
  const Schedule &schedule = run.session->schedule();
  if (local.isOk() && !options.dumpState.empty() &&
      !schedule.hasGradientRecords())
    local = ZERO_ERROR(kInvalidArgument,
                       "--dump-state: " + schedule.name() +
                           " has no gradient record (its `gradients`); "
                           "compile it again with this zero-opt");
  Status opened = run.session->agree(local);
  if (opened.isOk())
    outcome = runSteps(options, run);
  else
    printAgreedError(opened);
  // The metrics of the steps that ran are whole lines: keep them when a step
  // failed. The other outputs of a failed run are removed with their
  // temporary files, since the job may end before destructors run.
  if (outcome == Outcome::FailedMidRun && run.metrics &&
      run.metrics->isOpen()) {
    Status status = run.metrics->commit();
    if (!status.isOk())
      printError(&comm, describe(status));
  }
  run.metrics.reset();
  run.trace.reset();
  run.exported.reset();
  run.dumped.reset();
  exitCode = outcome == Outcome::Done ? 0 : 1;
  // A save still pending when a step failed is dropped: `latest` keeps
  // naming the previous checkpoint.
  if (run.saver)
    run.saver->abandon();
  // Peers left inside a collective would wait until their timeout: end
  // the whole job instead.
  if (outcome == Outcome::FailedMidRun) {
    // This rank said what failed: it ends on its own, not dies.
    endRankRecord();
    run.session->abortJob(exitCode);
  }
  return exitCode;
}

} // namespace

int main(int argc, char **argv) {
  // Library code reports errors as Status values; this is the last guard
  // against a crash (an allocation that fails, say).
  int code = 1;
  try {
    code = runMain(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "zero-run: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "zero-run: internal error\n");
  }
  endRankRecord();
  return code;
}
