//===- Checkpoint.cpp - a run's whole state, saved and resumed ------------===//
//
// Saving: rank 0 makes DIR/.step-<S>.tmp-<nonce>/, every rank copies its
// state into a snapshot and writes and fsyncs its file there from it (on a
// thread of its own for a background save, while training goes on); at the
// completion the ranks agree, rank 0 gathers each file's size and CRC-32,
// writes the manifest, fsyncs the directory, renames it to DIR/step-<S>,
// fsyncs DIR, replaces DIR/latest and prunes. A crash at any point leaves
// DIR/latest naming a complete checkpoint; the next save removes the
// temporary directories that crashed saves left.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/DataSource.h"

#include "io/FileRead.h"
#include "io/IOSupport.h"
#include "io/Json.h"
#include "zero/runtime/Checksum.h"
#include "zero/runtime/Executor.h"
#include "ops/ElementMath.h"
#include "zero/runtime/Layout.h"
#include "zero/runtime/OutputFile.h"
#include "zero/runtime/Safetensors.h"
#include "zero/runtime/Session.h"
#include "zero/runtime/Sizes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zero::runtime {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char *kFormat = "zero-checkpoint";
constexpr const char *kManifestName = "manifest.json";
constexpr const char *kLatestName = "latest";
constexpr const char *kLockName = ".lock";
constexpr const char *kStepPrefix = "step-";
/// The temporary directory of a save: ".step-<S>.tmp-<nonce>".
constexpr const char *kTemporaryMark = ".tmp-";
constexpr size_t kNonceLength = 16;

std::string getStepName(int64_t step) {
  return kStepPrefix + std::to_string(step);
}

std::string getRankFileName(int64_t rank) {
  return "rank-" + std::to_string(rank) + ".safetensors";
}

std::string joinPath(const std::string &directory, const std::string &name) {
  return directory.empty() || directory.back() == '/' ? directory + name
                                                      : directory + "/" + name;
}

/// A JSON value in a message: strings without quotes.
std::string showValue(const json &value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

/// The step of a directory named "step-<S>", or -1.
int64_t parseStepName(const std::string &name) {
  if (name.rfind(kStepPrefix, 0) != 0)
    return -1;
  std::string digits = name.substr(std::strlen(kStepPrefix));
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

/// A failed call of the file system, from errno.
Status errnoError(const std::string &path, const std::string &what) {
  return io::errnoError(path, what, errno);
}

/// Makes a rename or a new entry of `directory` durable.
Status syncDirectory(const std::string &directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errnoError(directory, "cannot open the directory to sync it");
  int synced = ::fsync(fd);
  int error = errno;
  ::close(fd);
  errno = error;
  if (synced != 0)
    return errnoError(directory, "cannot sync the directory");
  return Status::ok();
}

/// At most `limit` bytes of `text` (a file's contents) as a message quotes
/// them: escaped, in double quotes, "..." after where they were cut.
std::string quotePrefix(const std::string &text, size_t limit = 40) {
  std::string quoted = json(text.substr(0, limit))
                           .dump(-1, ' ', /*ensure_ascii=*/true,
                                 json::error_handler_t::replace);
  return text.size() > limit ? quoted + "..." : quoted;
}

/// Text read from a file (a rank file's metadata, a tensor's name or dtype)
/// in a message: as it is where it is short and plain, else quotePrefix.
std::string showFileText(const std::string &text) {
  bool plain = text.size() <= 40 &&
               std::all_of(text.begin(), text.end(), [](char c) {
                 return c >= 0x20 && c < 0x7f && c != '\'' && c != '"';
               });
  return plain ? text : quotePrefix(text);
}

/// A value of a manifest in a message: its JSON, escaped, cut after
/// `limit` characters.
std::string abbreviate(const json &value, size_t limit = 200) {
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true,
                                json::error_handler_t::replace);
  return text.size() > limit ? text.substr(0, limit) + "..." : text;
}

/// The error for a symbolic link found at `path` inside a checkpoint
/// directory, where none is ever followed.
Status linkError(const std::string &path) {
  return ZERO_ERROR(kFailedPrecondition,
                    path + ": a symbolic link in a checkpoint directory, "
                           "which is never followed (a checkpoint's files "
                           "and step directories are its own)");
}

/// Opens the file `path` of a checkpoint directory for reading, without
/// following a link there (O_NOFOLLOW) or waiting on a FIFO (O_NONBLOCK);
/// anything but a regular file is refused. `info` receives its fstat.
StatusOr<int> openOwnFile(const std::string &path, struct stat &info) {
  int fd = ::open(path.c_str(),
                  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP)
      return linkError(path);
    return errnoError(path, "cannot open");
  }
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return io::errnoError(path, "cannot open", error);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return ZERO_ERROR(kFailedPrecondition,
                      path + ": not a regular file, in a checkpoint "
                             "directory");
  }
  return fd;
}

/// The whole file `path` of a checkpoint directory (openOwnFile), at most
/// `limit` bytes: a larger one is refused without being read.
StatusOr<std::string> readWholeFile(const std::string &path,
                                    size_t limit = size_t(256) << 20) {
  struct stat info;
  info.st_mode = 0;
  StatusOr<int> fd = openOwnFile(path, info);
  if (!fd.isOk())
    return fd.status();
  if (static_cast<uint64_t>(info.st_size) > limit) {
    ::close(*fd);
    return ZERO_ERROR(kInvalidArgument,
                      path + ": " + std::to_string(info.st_size) +
                          " bytes, more than such a file of a checkpoint "
                          "has (" +
                          std::to_string(limit) + ")");
  }
  std::string bytes;
  char chunk[65536];
  for (;;) {
    ssize_t got = ::read(*fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      int error = errno;
      ::close(*fd);
      return io::errnoError(path, "cannot read", error);
    }
    if (got == 0)
      break;
    bytes.append(chunk, static_cast<size_t>(got));
    if (bytes.size() > limit) {
      ::close(*fd);
      return ZERO_ERROR(kInvalidArgument,
                        path + ": more than " + std::to_string(limit) +
                            " bytes, more than such a file of a checkpoint "
                            "has");
    }
  }
  ::close(*fd);
  return bytes;
}

/// Memory for a whole rank file, not zeroed first: filled by a read or a
/// snapshot, whose copy is then the first touch of each page. `data` is
/// aligned for O_DIRECT, with room for the file's last block whole.
struct FileBuffer {
  std::unique_ptr<char[]> storage;
  char *data = nullptr;
  size_t size = 0;
};

/// `size` bytes of uninitialized memory, null when out of memory. (Asking
/// for huge pages with madvise made the loads here slower, 0.4-0.5 GB/s
/// against 1.5: with defrag "madvise" each fault may compact memory.)
std::unique_ptr<char[]> allocateFileMemory(size_t size) {
  return std::unique_ptr<char[]>(new (std::nothrow) char[size]);
}

/// The first kDirectAlignment boundary at or after `memory`.
char *alignForDirect(char *memory) {
  uintptr_t base = reinterpret_cast<uintptr_t>(memory);
  return memory + (io::kDirectAlignment - base % io::kDirectAlignment) %
                      io::kDirectAlignment;
}

/// The file at `path` (its size when opened) and its CRC-32 in `crc`, which
/// is computed over what has arrived while the rest is read, so that it
/// costs no time beyond the disk's: with O_DIRECT and several reads in
/// flight where the file system and the kernel allow it, else with a reader
/// thread (io/FileRead.h).
StatusOr<FileBuffer> readChecksummed(const std::string &path, uint32_t &crc) {
  // The file is opened without following a link, and read through that
  // open file (/proc/self/fd/N reopens the same inode, for O_DIRECT), so
  // that a link put in its place after the check is not followed either.
  struct stat info;
  info.st_mode = 0;
  StatusOr<int> fd = openOwnFile(path, info);
  if (!fd.isOk())
    return fd.status();
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{*fd};
  std::string opened = "/proc/self/fd/" + std::to_string(*fd);
  if (::access(opened.c_str(), R_OK) != 0)
    opened = path;
  // Errors of the reads name the checkpoint's file, not the descriptor.
  auto named = [&](const Status &status) {
    std::string message = status.message();
    if (opened != path)
      for (size_t at = message.find(opened); at != std::string::npos;
           at = message.find(opened, at + path.size()))
        message.replace(at, opened.size(), path);
    return Status(status.code(), message, __FILE__, __LINE__);
  };
  FileBuffer file;
  file.size = static_cast<size_t>(info.st_size);
  file.storage = allocateFileMemory(io::roundUpToDirectBlocks(file.size) +
                                    io::kDirectAlignment);
  if (!file.storage)
    return ZERO_ERROR(kResourceExhausted, path + ": cannot allocate " +
                                              std::to_string(file.size) +
                                              " bytes to read it");
  file.data = alignForDirect(file.storage.get());
  crc = 0;
  auto checksum = [&](size_t begin, size_t end) {
    crc = computeCrc32(file.data + begin, end - begin, crc);
  };
  StatusOr<std::optional<size_t>> direct =
      io::readDirect(opened, file.data, file.size, checksum);
  if (!direct.isOk())
    return named(direct.status());
  StatusOr<size_t> read =
      direct->has_value()
          ? StatusOr<size_t>(**direct)
          : io::readBuffered(opened, file.data, file.size, checksum);
  if (!read.isOk())
    return named(read.status());
  // A file cut short since its size was taken: what was read.
  file.size = *read;
  return file;
}

const char *getSafetensorsDType(DType type) {
  switch (type) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::BF16:
    return "BF16";
  case DType::F16:
    return "F16";
  case DType::I64:
  case DType::Index:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I1:
    return "BOOL";
  }
  return "";
}

json describeLayout(const PartitionLayout &layout) {
  return {{"shape", layout.shape},
          {"numel", layout.numel},
          {"world_size", layout.worldSize},
          {"padded_numel", layout.paddedNumel},
          {"shard_numel", layout.shardNumel}};
}

/// The DType of safetensors float dtype `name` (F32, BF16, F16).
std::optional<DType> parseFloatDType(const std::string &name) {
  if (name == "F32")
    return DType::F32;
  if (name == "BF16")
    return DType::BF16;
  if (name == "F16")
    return DType::F16;
  return std::nullopt;
}

/// The dtype of tensor `entry`'s elements: its own, or for a tensor stored
/// quantized (its bytes U8) the dtype its packed bytes hold.
std::string getElementDType(const json &entry) {
  return (entry.contains("quantized") ? entry["quantized"]["dtype"]
                                      : entry["dtype"])
      .get<std::string>();
}

/// The value that tensor `entry` stored quantized is: its `quantized`
/// element dtype and shape, packed in its bits and block size (checked for
/// form by checkTensorEntryForm).
ValueInfo getStoredValue(const json &entry) {
  const json &q = entry["quantized"];
  ValueInfo value;
  value.isTensor = true;
  value.dtype = *parseFloatDType(q["dtype"].get<std::string>());
  value.shape = q["shape"].get<std::vector<int64_t>>();
  value.numel = 1;
  for (int64_t dim : value.shape)
    value.numel *= dim;
  value.quantized = QuantizedStorage{q["bits"].get<int64_t>(),
                                     q["block_size"].get<int64_t>()};
  return value;
}

/// `elements` (value.numel elements of value.dtype) as `value` stores them:
/// block-quantized where it is stored quantized (storeValueFloats), else as
/// they are.
std::string packElements(std::string elements, const ValueInfo &value) {
  if (!value.quantized)
    return elements;
  std::vector<float> floats =
      loadFloats({const_cast<char *>(elements.data()), value.dtype,
                  &value.shape, value.numel},
                 value.numel);
  std::string packed(static_cast<size_t>(value.bytes()), '\0');
  storeValueFloats(floats.data(), value, packed.data());
  return packed;
}

/// The inverse for a rank's part of tensor `entry` (`bytes`, as its file
/// holds it): its elements in getElementDType(entry), dequantized where it
/// is stored quantized.
StatusOr<std::string> unpackElements(const std::string &bytes,
                                     const json &entry,
                                     const std::string &path) {
  if (!entry.contains("quantized"))
    return bytes;
  ValueInfo value = getStoredValue(entry);
  if (static_cast<int64_t>(bytes.size()) != value.bytes())
    return ZERO_ERROR(kInvalidArgument,
                      path + ": tensor '" + entry["name"].get<std::string>() +
                          "' holds " + std::to_string(bytes.size()) +
                          " bytes, but its quantized elements pack into " +
                          std::to_string(value.bytes()));
  std::vector<float> floats = loadValueFloats(value, bytes.data());
  std::string elements(
      static_cast<size_t>(value.numel * getDTypeWidth(value.dtype)), '\0');
  storeFloats(floats.data(), value.numel,
              {elements.data(), value.dtype, &value.shape, value.numel});
  return elements;
}

/// One argument the schedule carries from step to step, as the checkpoint
/// names and describes it. The description is the manifest's entry, and a
/// schedule that loads the checkpoint must describe it the same way.
struct StateTensor {
  size_t argument = 0;
  std::string name;
  json description;
};

/// The layout that cuts argument `arg` (a parameter or a parameter's state)
/// across the ranks: a parameter's own, and a parameter's states are cut
/// as its master weights (Initialize.cpp).
const PartitionLayout &getCutLayout(const Schedule &schedule,
                                    const ArgumentInfo &arg) {
  return arg.kind == ArgumentInfo::Kind::State
             ? schedule.arguments()[arg.paramArgument].layout
             : arg.layout;
}

/// Every param, state and step argument of `schedule`, in argument order.
/// Names: "param/<name>", "<state>/<param>", "<state>" for step-level
/// states, "step".
std::vector<StateTensor> getStateTensors(const Schedule &schedule) {
  std::vector<StateTensor> tensors;
  for (size_t i = 0; i < schedule.arguments().size(); ++i) {
    const ArgumentInfo &arg = schedule.arguments()[i];
    const ValueInfo &value = schedule.values().values[arg.value];
    StateTensor tensor;
    tensor.argument = i;
    json &d = tensor.description;
    switch (arg.kind) {
    case ArgumentInfo::Kind::Data:
      continue;
    case ArgumentInfo::Kind::Param:
      tensor.name = "param/" + arg.name;
      d["kind"] = "param";
      d["param"] = arg.name;
      d["sharded"] = arg.sharded;
      d["layout"] = describeLayout(getCutLayout(schedule, arg));
      if (arg.tile)
        d["tile"] = {{"param", arg.tile->param},
                     {"shape", arg.tile->shape},
                     {"offset", arg.tile->offset}};
      break;
    case ArgumentInfo::Kind::State:
      d["kind"] = "state";
      d["state"] = arg.state;
      if (arg.param.empty()) {
        tensor.name = arg.state;
        break;
      }
      tensor.name = arg.state + "/" + arg.param;
      d["param"] = arg.param;
      d["sharded"] = schedule.stage() >= 1;
      d["layout"] = describeLayout(getCutLayout(schedule, arg));
      break;
    case ArgumentInfo::Kind::Step:
      tensor.name = "step";
      d["kind"] = "step";
      break;
    }
    d["name"] = tensor.name;
    d["dtype"] = getSafetensorsDType(value.dtype);
    d["shape"] = value.shape;
    // A parameter stored quantized is saved as its packed bytes, so that a
    // resume with the same quantization restores them bit for bit.
    if (const std::optional<QuantizedStorage> &q = value.quantized) {
      d["quantized"] = {{"bits", q->bits},
                        {"block_size", q->blockSize},
                        {"dtype", d["dtype"]},
                        {"shape", d["shape"]}};
      d["dtype"] = "U8";
      d["shape"] = {value.bytes()};
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

/// The model's parameters as the schedule has them: name, full shape, dtype.
json describeParameters(const Schedule &schedule) {
  json parameters = json::array();
  for (const ArgumentInfo &arg : schedule.arguments())
    if (arg.kind == ArgumentInfo::Kind::Param)
      parameters.push_back(
          {{"name", arg.name},
           {"shape", arg.layout.shape},
           {"dtype",
            getSafetensorsDType(schedule.values().values[arg.value].dtype)}});
  return parameters;
}

/// What a resumed run's data must agree with. The token file's name is not
/// compared (the file may have moved); the manifest records it besides.
json describeData(const CheckpointData &data) {
  if (data.arrays)
    return {{"seed", data.seed},
            {"source", "arrays"},
            {"order", data.shuffle ? "shuffled" : "sequential"}};
  return {{"seed", data.seed},
          {"source", data.tokenFile.empty() ? "synthetic" : "token_file"}};
}

/// Each tensor's CRC-32 by name, so that a corrupt file's error names the
/// tensor.
json describeTensorChecksums(const std::vector<RawTensor> &tensors) {
  json checksums = json::object();
  for (const RawTensor &tensor : tensors)
    checksums[tensor.name] = formatCrc32(computeCrc32(tensor.bytes));
  return checksums;
}

/// Where in a file whose CRC-32 differs from the manifest's the damage is:
/// the header, or the first tensor whose own CRC-32 differs.
std::string locateCorruption(const FileBuffer &bytes, const std::string &path,
                             const json &file) {
  StatusOr<std::vector<RawTensor>> tensors =
      parseRawSafetensors(std::string(bytes.data, bytes.size), path);
  if (!tensors.isOk())
    return "its header is damaged (" + tensors.status().message() + ")";
  json checksums = describeTensorChecksums(*tensors);
  const json &saved = file.value("tensor_crc32", json::object());
  for (const auto &item : checksums.items())
    if (saved.contains(item.key()) && saved[item.key()] != item.value())
      return "tensor '" + item.key() + "' has CRC-32 " +
             item.value().get<std::string>() + ", the manifest gives " +
             showValue(saved[item.key()]);
  return "its header differs";
}

/// Writes `rank`'s file of step `step` at `path` from `tensors` (the first
/// half only when `fail`, as on a full disk) and its manifest entry
/// `record`.
Status writeRankTensors(const std::vector<RawTensor> &tensors,
                        const std::string &path, int64_t step, int64_t rank,
                        bool fail, json &record) {
  std::map<std::string, std::string> metadata = {
      {"format", kFormat},
      {"step", std::to_string(step)},
      {"rank", std::to_string(rank)}};
  StatusOr<std::string> bytes = encodeRawSafetensors(tensors, metadata, path);
  if (!bytes.isOk())
    return bytes.status();
  StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::openNoFollow(path);
  if (!file.isOk())
    return file.status();
  if (fail) {
    ZERO_RETURN_IF_ERROR((*file)->write(bytes->data(), bytes->size() / 2));
    return Status(StatusCode::kResourceExhausted,
                  path + ": write failed: " + std::strerror(ENOSPC), __FILE__,
                  __LINE__);
  }
  ZERO_RETURN_IF_ERROR((*file)->write(*bytes));
  ZERO_RETURN_IF_ERROR((*file)->commit());
  record = {{"path", getRankFileName(rank)},
            {"rank", rank},
            {"bytes", bytes->size()},
            {"crc32", formatCrc32(computeCrc32(*bytes))},
            {"tensor_crc32", describeTensorChecksums(tensors)}};
  return Status::ok();
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

/// A tensor of a snapshot: where its bytes lie in the file image.
struct SnapshotTensor {
  std::string name;
  size_t offset = 0;
  size_t bytes = 0;
};

/// The bytes checksummed and then written at a time: few system calls, and
/// still in the cache when written after the checksum.
constexpr size_t kWriteChunk = size_t(4) << 20;
/// The bytes written between two starts of their writeback: the disk writes
/// while the next ones are checksummed and copied, instead of all of them
/// waiting for the final fsync.
constexpr size_t kWritebackBytes = size_t(16) << 20;

/// The manifest's entry of rank `rank`'s file.
json describeRankFile(int64_t rank, size_t bytes, uint32_t crc,
                      json tensorChecksums) {
  return {{"path", getRankFileName(rank)},
          {"rank", rank},
          {"bytes", bytes},
          {"crc32", formatCrc32(crc)},
          {"tensor_crc32", std::move(tensorChecksums)}};
}

/// Writes the `size` bytes at `data` at `path` with O_DIRECT (under a
/// temporary name, fsynced, renamed): the disk reads them from the snapshot
/// by DMA, with no copy into the page cache, which on a rank bound to one
/// core takes the CPU from its steps (docs/PERFORMANCE.md, "Checkpoints").
/// `data` is aligned to io::kDirectAlignment and readable up to `size` rounded
/// up to it; the file is cut to `size` after. `supported` is false, and
/// nothing written, where the file system refuses O_DIRECT.
Status writeDirect(const char *data, size_t size, const std::string &path,
                   const std::atomic<bool> &cancel, bool &supported) {
  std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0666);
  supported = fd >= 0 || errno != EINVAL;
  if (fd < 0)
    return supported ? errnoError(path, "cannot write") : Status::ok();
  auto fail = [&](Status status) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return status;
  };
  size_t padded = io::roundUpToDirectBlocks(size);
  for (size_t done = 0; done < padded;) {
    if (cancel.load(std::memory_order_relaxed))
      return fail(ZERO_ERROR(kUnavailable, path + ": the save was abandoned"));
    size_t chunk = std::min(kWriteChunk, padded - done);
    errno = 0;
    ssize_t written =
        ::pwrite(fd, data + done, chunk, static_cast<off_t>(done));
    if (written < 0 && errno == EINTR)
      continue;
    // A short write leaves an offset O_DIRECT cannot continue from; the
    // next write would fail with the reason (a full disk) anyway.
    if (written <= 0 || written % io::kDirectAlignment != 0) {
      if (written >= 0)
        errno = ENOSPC;
      return fail(io::writeError(path, "write failed"));
    }
    done += static_cast<size_t>(written);
  }
  errno = 0;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 || ::fsync(fd) != 0)
    return fail(io::writeError(path, "write failed"));
  if (::close(fd) != 0) {
    Status status = io::writeError(path, "close failed");
    ::unlink(temporary.c_str());
    return status;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    Status status = errnoError(path, "cannot rename '" + temporary + "' to it");
    ::unlink(temporary.c_str());
    return status;
  }
  return Status::ok();
}

/// Writes the file image `data` (`size` bytes: `headerBytes` of header, then
/// `tensors`; aligned and padded as writeDirect needs) at `path`, fsynced
/// and renamed into place: with O_DIRECT (writeDirect), or where the file
/// system refuses it through the page cache (OutputFile), each tensor's
/// CRC-32 then in the same pass as its write. The test hook `fail` writes
/// the first half through the page cache and fails as on a full disk. Each
/// tensor's CRC-32 and the file's, combined from them, and the size go to
/// `record`, the file's manifest entry. No communicator calls: it runs on a
/// background save's writer thread, and MPI is not thread-multiple.
Status writeSnapshot(const char *data, size_t size, size_t headerBytes,
                     const std::vector<SnapshotTensor> &tensors,
                     const std::string &path, int64_t rank, bool fail,
                     const std::atomic<bool> &cancel, json &record) {
  if (!fail) {
    // The checksums first, in a pass over the snapshot, then the file with
    // O_DIRECT where the file system takes it.
    uint32_t fileCrc = computeCrc32(data, headerBytes);
    json checksums = json::object();
    for (const SnapshotTensor &tensor : tensors) {
      uint32_t crc = computeCrc32(data + tensor.offset, tensor.bytes);
      checksums[tensor.name] = formatCrc32(crc);
      fileCrc = combineCrc32(fileCrc, crc, tensor.bytes);
    }
    bool supported = false;
    ZERO_RETURN_IF_ERROR(writeDirect(data, size, path, cancel, supported));
    if (supported) {
      record = describeRankFile(rank, size, fileCrc, std::move(checksums));
      return Status::ok();
    }
  }
  StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::openNoFollow(path);
  if (!file.isOk())
    return file.status();
  if (fail) {
    ZERO_RETURN_IF_ERROR((*file)->write(data, size / 2));
    return Status(StatusCode::kResourceExhausted,
                  path + ": write failed: " + std::strerror(ENOSPC), __FILE__,
                  __LINE__);
  }
  uint32_t fileCrc = computeCrc32(data, headerBytes);
  ZERO_RETURN_IF_ERROR((*file)->write(data, headerBytes));
  json checksums = json::object();
  size_t unsynced = 0;
  for (const SnapshotTensor &tensor : tensors) {
    uint32_t crc = 0;
    for (size_t done = 0; done < tensor.bytes;) {
      if (cancel.load(std::memory_order_relaxed))
        return ZERO_ERROR(kUnavailable, path + ": the save was abandoned");
      size_t chunk = std::min(kWriteChunk, tensor.bytes - done);
      const char *bytes = data + tensor.offset + done;
      crc = computeCrc32(bytes, chunk, crc);
      ZERO_RETURN_IF_ERROR((*file)->write(bytes, chunk));
      done += chunk;
      unsynced += chunk;
      if (unsynced >= kWritebackBytes) {
        ZERO_RETURN_IF_ERROR((*file)->startWriteback());
        unsynced = 0;
      }
    }
    checksums[tensor.name] = formatCrc32(crc);
    fileCrc = combineCrc32(fileCrc, crc, tensor.bytes);
  }
  ZERO_RETURN_IF_ERROR((*file)->commit());
  record = describeRankFile(rank, size, fileCrc, std::move(checksums));
  return Status::ok();
}

/// Removes what crashed saves left in `directory`: ".step-*.tmp-*".
void removeTemporaries(const std::string &directory) {
  std::error_code error;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(directory, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(std::string(".") + kStepPrefix, 0) == 0 &&
        name.find(kTemporaryMark) != std::string::npos)
      fs::remove_all(entry.path(), error);
  }
}

/// Rank 0's claim on a checkpoint directory for one save, released when it
/// is destroyed (or the process ends): a second job saving into the same
/// directory is refused instead of removing the first one's temporary
/// directory as what a crashed save left.
class SaveLock {
public:
  SaveLock() = default;
  SaveLock(const SaveLock &) = delete;
  SaveLock &operator=(const SaveLock &) = delete;
  ~SaveLock() {
    if (fd >= 0)
      ::close(fd);
  }

  Status acquire(const std::string &directory) {
    std::string path = joinPath(directory, kLockName);
    // A link planted as the lock file is never followed (nor created).
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno == ELOOP)
      return linkError(path);
    if (fd < 0)
      return errnoError(path, "cannot open the lock file");
    struct stat info;
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
      return ZERO_ERROR(kFailedPrecondition,
                        path + ": not a regular file, as a checkpoint "
                               "directory's lock file");
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
      return Status::ok();
    if (errno != EWOULDBLOCK)
      return errnoError(path, "cannot lock it");
    return ZERO_ERROR(kFailedPrecondition,
                      path + ": another run is saving a checkpoint into " +
                          directory +
                          " (one run saves into a directory at a "
                          "time)");
  }

private:
  int fd = -1;
};

/// The step directories of `directory` that hold a manifest, by step.
std::map<int64_t, std::string> listSteps(const std::string &directory) {
  std::map<int64_t, std::string> steps;
  std::error_code error;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(directory, error)) {
    int64_t step = parseStepName(entry.path().filename().string());
    struct stat info;
    // A link named like a step is not one of the directory's own.
    if (step >= 0 && entry.is_directory(error) && !entry.is_symlink(error) &&
        ::lstat((entry.path() / kManifestName).c_str(), &info) == 0 &&
        S_ISREG(info.st_mode))
      steps[step] = entry.path().string();
  }
  return steps;
}

/// The run a manifest names as its owner ("run"), empty for none (a
/// checkpoint of an older runtime).
std::string getRunId(const json &manifest) {
  return manifest.is_object() && manifest.contains("run") &&
                 manifest["run"].is_string()
             ? manifest["run"].get<std::string>()
             : std::string();
}

/// A new run's id: the UTC time of its first save and 32 random bits,
/// "20261206T041500Z-3f2a9c1b".
std::string makeRunId() {
  std::random_device random;
  std::mt19937_64 generator((uint64_t(random()) << 32) ^ random() ^
                            uint64_t(::getpid()) ^
                            uint64_t(std::time(nullptr)));
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &utc);
  char bits[16];
  std::snprintf(bits, sizeof(bits), "%08x",
                static_cast<unsigned>(generator() & 0xffffffffu));
  return std::string(stamp) + "-" + bits;
}

/// Rank 0 (or zero-ckpt), holding the directory's lock: `directory` belongs
/// to one run, whose id its checkpoints' manifests carry. A save of run
/// `runId` into a directory with a checkpoint of another run is refused
/// (a run that resumed from it carries its id on), and so is one into a
/// directory whose `latest` is not a file of its own.
Status checkOwner(const std::string &directory, const std::string &runId) {
  std::string latest = joinPath(directory, kLatestName);
  struct stat info;
  if (::lstat(latest.c_str(), &info) == 0) {
    if (S_ISLNK(info.st_mode))
      return linkError(latest);
    if (!S_ISREG(info.st_mode))
      return ZERO_ERROR(kFailedPrecondition,
                        latest + ": not a regular file, in a checkpoint "
                                 "directory");
  }
  for (const auto &[step, path] : listSteps(directory)) {
    std::string manifestPath = joinPath(path, kManifestName);
    StatusOr<std::string> text = readWholeFile(manifestPath);
    if (!text.isOk())
      return text.status();
    json manifest = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    std::string owner = getRunId(manifest);
    if (owner.empty() || owner == runId)
      continue;
    return ZERO_ERROR(
        kFailedPrecondition,
        directory + ": belongs to run " + quotePrefix(owner, 64) + " (its " +
            getStepName(step) + "), and this run" +
            (runId.empty() ? std::string()
                           : " (" + quotePrefix(runId, 64) + ")") +
            " did not resume from it: a checkpoint directory holds the "
            "checkpoints of one run; save into another directory, or resume "
            "from this one");
  }
  return Status::ok();
}

/// Rank 0: `directory`, claimed by `lock` for run `runId` (checkOwner),
/// and a new temporary step directory in it.
Status makeTemporary(const std::string &directory, const std::string &temporary,
                     SaveLock &lock, const std::string &runId) {
  ZERO_RETURN_IF_ERROR(prepareCheckpointDirectory(directory));
  ZERO_RETURN_IF_ERROR(lock.acquire(directory));
  ZERO_RETURN_IF_ERROR(checkOwner(directory, runId));
  removeTemporaries(directory);
  if (::mkdir(temporary.c_str(), 0777) != 0)
    return errnoError(temporary, "cannot create the directory");
  return Status::ok();
}

/// Rank 0 (or zero-ckpt), every rank file in `temporary`: writes the
/// manifest, renames `temporary` to `directory`/step-<step> (exchanging it
/// with an old one), points `latest` at it and prunes to `keep` steps (0:
/// all).
Status publishDirectory(const std::string &directory,
                        const std::string &temporary, int64_t step,
                        const json &manifest, int64_t keep) {
  std::string manifestPath = joinPath(temporary, kManifestName);
  StatusOr<std::unique_ptr<OutputFile>> file =
      OutputFile::openNoFollow(manifestPath);
  if (!file.isOk())
    return file.status();
  ZERO_RETURN_IF_ERROR((*file)->write(manifest.dump(2) + "\n"));
  ZERO_RETURN_IF_ERROR((*file)->commit());
  ZERO_RETURN_IF_ERROR(syncDirectory(temporary));

  // A step saved before (a resumed run that saves it again) is replaced by
  // exchanging the two directories in one rename, so that step-S holds a
  // complete checkpoint at every moment; the old one, now under the
  // temporary name, is removed after.
  std::string stepDirectory = joinPath(directory, getStepName(step));
  // Whatever is there (a link too) is exchanged, never followed.
  std::error_code error;
  struct stat info;
  bool replaced = ::lstat(stepDirectory.c_str(), &info) == 0;
  if (replaced) {
    if (::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD,
                    stepDirectory.c_str(), RENAME_EXCHANGE) != 0)
      return errnoError(stepDirectory,
                        "cannot exchange it with '" + temporary + "'");
  } else if (::rename(temporary.c_str(), stepDirectory.c_str()) != 0) {
    return errnoError(stepDirectory,
                      "cannot rename '" + temporary + "' into place");
  }
  ZERO_RETURN_IF_ERROR(syncDirectory(directory));
  if (replaced)
    fs::remove_all(temporary, error);

  // The rename replaces `latest` itself, never what a link there names.
  StatusOr<std::unique_ptr<OutputFile>> latest =
      OutputFile::openNoFollow(joinPath(directory, kLatestName));
  if (!latest.isOk())
    return latest.status();
  ZERO_RETURN_IF_ERROR((*latest)->write(getStepName(step) + "\n"));
  ZERO_RETURN_IF_ERROR((*latest)->commit());
  ZERO_RETURN_IF_ERROR(syncDirectory(directory));

  if (keep > 0) {
    std::map<int64_t, std::string> steps = listSteps(directory);
    int64_t excess = static_cast<int64_t>(steps.size()) - keep;
    for (auto it = steps.begin(); excess > 0 && it != steps.end();
         ++it, --excess)
      if (it->first != step)
        fs::remove_all(it->second, error);
  }
  return Status::ok();
}

/// Rank 0, every rank's file written: the manifest, the rename into place,
/// `latest`, the pruning.
Status publish(Session &session, const CheckpointSaveOptions &options,
               const std::string &temporary, int64_t step,
               const std::string &runId,
               const std::vector<std::string> &records) {
  const Schedule &schedule = session.schedule();
  json files = json::array();
  for (const std::string &record : records)
    files.push_back(json::parse(record));
  json tensors = json::array();
  for (const StateTensor &state : getStateTensors(schedule))
    tensors.push_back(state.description);
  CheckpointData run = getCheckpointData(session.options());
  json data = describeData(run);
  data["token_file"] = run.tokenFile;
  data["rows_read"] = session.data().rowsRead(step);
  json manifest = {{"format", kFormat},
                   {"version", kCheckpointVersion},
                   {"run", runId},
                   {"step", step},
                   {"world_size", schedule.worldSize()},
                   {"stage", schedule.stage()},
                   {"schedule",
                    {{"name", schedule.name()},
                     {"function", schedule.function()},
                     {"crc32", formatCrc32(schedule.checksum())}}},
                   {"data", data},
                   {"parameters", describeParameters(schedule)},
                   {"tensors", tensors},
                   {"files", files}};
  return publishDirectory(options.directory, temporary, step, manifest,
                          options.keep);
}

/// Where two descriptions differ, the first field in a fixed order (dtype
/// and shape first, nested objects field by field): "dtype F32 in the
/// checkpoint, BF16 in step.json"; empty when they agree. `exact`: a field
/// that only `saved` has differs too.
std::string compareDescriptions(const json &saved, const json &expected,
                                const std::string &scheduleName,
                                bool exact = true,
                                const std::string &prefix = "") {
  std::vector<std::string> keys;
  for (const char *first : {"dtype", "shape"})
    if (expected.contains(first))
      keys.push_back(first);
  for (const auto &item : expected.items())
    if (std::find(keys.begin(), keys.end(), item.key()) == keys.end())
      keys.push_back(item.key());
  for (const std::string &key : keys) {
    const json &want = expected[key];
    if (!saved.contains(key))
      return prefix + key + " (none) in the checkpoint, " + showValue(want) +
             " in " + scheduleName;
    const json &have = saved[key];
    if (have == want)
      continue;
    if (have.is_object() && want.is_object())
      return compareDescriptions(have, want, scheduleName, exact,
                                 prefix + key + ".");
    return prefix + key + " " + showValue(have) + " in the checkpoint, " +
           showValue(want) + " in " + scheduleName;
  }
  for (const auto &item : saved.items())
    if (exact && !expected.contains(item.key()))
      return prefix + item.key() + " " + showValue(item.value()) +
             " in the checkpoint, none in " + scheduleName;
  return "";
}

/// The fields of the manifest that every reader relies on.
/// A list of `rank` (-1: any) non-negative integers, as shapes and offsets
/// are.
bool isDimensionList(const json &value, int rank = -1) {
  if (!value.is_array() ||
      (rank >= 0 && value.size() != static_cast<size_t>(rank)))
    return false;
  return std::all_of(value.begin(), value.end(), [](const json &dim) {
    return dim.is_number_integer() && dim.get<int64_t>() >= 0;
  });
}

/// Why a tensor entry's optional fields are malformed (empty: they are
/// not): what consolidating and resharding trust is checked here, before a
/// hostile manifest can size a buffer.
std::string checkTensorEntryForm(const json &entry) {
  for (const char *field : {"kind", "param", "state"})
    if (entry.contains(field) && !entry[field].is_string())
      return std::string("'") + field + "' must be a string";
  if (entry.contains("sharded") && !entry["sharded"].is_boolean())
    return "'sharded' must be a boolean";
  if (!isDimensionList(entry["shape"]))
    return "'shape' must list non-negative integers";
  if (entry.contains("layout")) {
    const json &layout = entry["layout"];
    if (!layout.is_object() || !layout.contains("shape") ||
        !isDimensionList(layout["shape"]))
      return "'layout' needs a shape of non-negative integers";
    int64_t numel = 1;
    for (const json &dim : layout["shape"])
      if (__builtin_mul_overflow(numel, dim.get<int64_t>(), &numel))
        return "the layout's shape has more elements than fit 64 bits";
    for (const char *field :
         {"numel", "world_size", "padded_numel", "shard_numel"})
      if (layout.contains(field) && (!layout[field].is_number_integer() ||
                                     layout[field].get<int64_t>() < 0))
        return std::string("layout '") + field +
               "' must be a non-negative integer";
    if (layout.value("numel", numel) != numel)
      return "layout numel " + layout["numel"].dump() +
             " is not the product of its shape " + layout["shape"].dump();
    int64_t worldSize = layout.value("world_size", int64_t(1));
    int64_t padded = layout.value("padded_numel", numel);
    int64_t shard = layout.value("shard_numel", padded);
    if (worldSize < 1 || padded < numel ||
        (layout.contains("shard_numel") && shard * worldSize != padded))
      return "layout " + layout.dump() +
             " does not cut its elements into world_size equal shards";
  }
  if (entry.contains("quantized")) {
    const json &q = entry["quantized"];
    if (!q.is_object() || !q.contains("bits") || q["bits"] != 8 ||
        !q.contains("block_size") || !q["block_size"].is_number_integer() ||
        q["block_size"].get<int64_t>() < 1 || !q.contains("dtype") ||
        !q["dtype"].is_string() ||
        !parseFloatDType(q["dtype"].get<std::string>()) ||
        !q.contains("shape") || !isDimensionList(q["shape"]) ||
        entry.value("dtype", "") != "U8")
      return "'quantized' must be {bits: 8, block_size: at least 1, dtype: "
             "F32, BF16 or F16, shape} of a U8 tensor";
    int64_t numel = 1;
    for (const json &dim : q["shape"])
      if (__builtin_mul_overflow(numel, dim.get<int64_t>(), &numel) ||
          numel > (int64_t(1) << 50))
        return "the quantized shape has more than 2^50 elements";
  }
  if (entry.contains("tile")) {
    const json &tile = entry["tile"];
    if (!tile.is_object() || !tile.contains("param") ||
        !tile["param"].is_string() || !tile.contains("shape") ||
        !isDimensionList(tile["shape"], 2) || !tile.contains("offset") ||
        !isDimensionList(tile["offset"], 2) || !entry.contains("layout") ||
        !isDimensionList(entry["layout"]["shape"], 2))
      return "'tile' must be {param, shape: [rows, cols], offset: [row, "
             "col]} of a 2-d layout";
    for (int d = 0; d < 2; ++d)
      if (tile["offset"][d].get<int64_t>() +
              entry["layout"]["shape"][d].get<int64_t>() >
          tile["shape"][d].get<int64_t>())
        return "tile " + tile.dump() + " of shape " +
               entry["layout"]["shape"].dump() + " lies outside its weight";
  }
  return "";
}

Status checkManifestForm(const json &manifest, const std::string &path) {
  if (!manifest.is_object() || manifest.value("format", "") != kFormat)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": not a checkpoint manifest (format '" +
                          std::string(kFormat) + "')");
  for (const char *field : {"version", "step", "world_size", "stage"})
    if (!manifest.contains(field) || !manifest[field].is_number_integer())
      return ZERO_ERROR(kInvalidArgument,
                        path + ": '" + field + "' must be an integer");
  for (const char *field : {"tensors", "files", "parameters"})
    if (!manifest.contains(field) || !manifest[field].is_array())
      return ZERO_ERROR(kInvalidArgument,
                        path + ": '" + field + "' must be an array");
  if (manifest["version"] != kCheckpointVersion)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": format version " + manifest["version"].dump() +
                          " is not supported: this runtime reads version " +
                          std::to_string(kCheckpointVersion));
  if (manifest["world_size"].get<int64_t>() < 1 ||
      manifest["world_size"].get<int64_t>() > kMaxWorldSize)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": 'world_size' must be 1 to " +
                          std::to_string(kMaxWorldSize) + ", got " +
                          manifest["world_size"].dump());
  if (manifest.contains("run")) {
    const json &run = manifest["run"];
    bool valid = run.is_string() && !run.get<std::string>().empty() &&
                 run.get<std::string>().size() <= 64;
    for (char c : valid ? run.get<std::string>() : std::string())
      valid = valid && (std::isalnum(static_cast<unsigned char>(c)) ||
                        c == '-' || c == '_');
    if (!valid)
      return ZERO_ERROR(kInvalidArgument,
                        path +
                            ": 'run' must be a run id (1 to 64 letters, "
                            "digits, '-' or '_'), got " +
                            abbreviate(run));
  }
  if (manifest.contains("data")) {
    const json &data = manifest["data"];
    if (!data.is_object() ||
        (data.contains("seed") && !data["seed"].is_number_unsigned()) ||
        (data.contains("source") && !data["source"].is_string()) ||
        (data.contains("token_file") && !data["token_file"].is_string()))
      return ZERO_ERROR(kInvalidArgument,
                        path +
                            ": 'data' must be {seed: <unsigned>, source: "
                            "<string>, token_file: <string>, rows_read: "
                            "{<argument>: <rows>}}, got " +
                            abbreviate(data));
    if (data.contains("rows_read")) {
      const json &rows = data["rows_read"];
      bool valid = rows.is_object();
      for (const auto &item : rows.items())
        valid =
            valid && item.value().is_number_unsigned() &&
            item.value().get<uint64_t>() <= static_cast<uint64_t>(kMaxDataRows);
      if (!valid)
        return ZERO_ERROR(kInvalidArgument,
                          path +
                              ": 'data.rows_read' must map each data "
                              "argument to the rows read (0 to 2^53), got " +
                              abbreviate(rows));
    }
  }
  for (const json &entry : manifest["tensors"]) {
    if (!entry.is_object() || !entry.contains("name") ||
        !entry["name"].is_string() || !entry.contains("dtype") ||
        !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry["shape"].is_array())
      return ZERO_ERROR(
          kInvalidArgument,
          path +
              ": a tensor entry needs name, dtype and shape: " +
              abbreviate(entry));
    if (std::string problem = checkTensorEntryForm(entry); !problem.empty())
      return ZERO_ERROR(kInvalidArgument, path + ": tensor '" +
                                              entry["name"].get<std::string>() +
                                              "': " + problem);
  }
  for (const json &file : manifest["files"]) {
    if (!file.is_object() || !file.contains("rank") ||
        !file["rank"].is_number_integer() || !file.contains("path") ||
        !file["path"].is_string() || !file.contains("bytes") ||
        !file["bytes"].is_number_unsigned() || !file.contains("crc32") ||
        !file["crc32"].is_string())
      return ZERO_ERROR(kInvalidArgument,
                        path +
                            ": a file entry needs rank, path, bytes and "
                            "crc32: " +
                            abbreviate(file));
    // A rank's file is the plain name the runtime gives it, in the step
    // directory: never a path that leads elsewhere.
    int64_t rank = file["rank"].get<int64_t>();
    int64_t worldSize = manifest["world_size"].get<int64_t>();
    if (rank < 0 || rank >= worldSize)
      return ZERO_ERROR(kInvalidArgument,
                        path + ": a file entry's rank " +
                            std::to_string(rank) + " is not one of the " +
                            std::to_string(worldSize) +
                            " ranks of world_size");
    std::string expected = getRankFileName(rank);
    if (file["path"].get<std::string>() != expected)
      return ZERO_ERROR(kInvalidArgument,
                        path + ": the file of rank " + std::to_string(rank) +
                            " must be '" + expected +
                            "' in the step directory, got path " +
                            abbreviate(file["path"], 80));
  }
  return Status::ok();
}

/// The manifest of the checkpoint that `path` names (findCheckpoint), checked
/// for form.
struct Manifest {
  std::string directory;
  std::string path;
  json content;
};

StatusOr<Manifest> readManifest(const std::string &path) {
  StatusOr<std::string> directory = findCheckpoint(path);
  if (!directory.isOk())
    return directory.status();
  Manifest manifest;
  manifest.directory = *directory;
  manifest.path = joinPath(*directory, kManifestName);
  StatusOr<std::string> text = readWholeFile(manifest.path);
  if (!text.isOk())
    return text.status();
  StatusOr<json> parsed = io::parseJson(*text, manifest.path);
  if (!parsed.isOk())
    return parsed.status();
  manifest.content = std::move(*parsed);
  ZERO_RETURN_IF_ERROR(checkManifestForm(manifest.content, manifest.path));
  return manifest;
}

/// The checks of the manifest against the schedule and the data.
Status verifyManifest(const json &manifest, const std::string &path,
                      const Schedule &schedule, const CheckpointData &data,
                      bool &reshard) {
  auto mismatch = [&](const std::string &what) {
    return ZERO_ERROR(kFailedPrecondition, path + ": " + what);
  };
  // Saved at another world size or stage: the tensors are put together and
  // cut anew, so only what they are (not how they were cut) must agree.
  // Or with its tensors cut across another number of ranks (a layout of one
  // node's ranks, replicated across the nodes, against one of the world).
  reshard = manifest["world_size"] != schedule.worldSize() ||
            manifest["stage"] != schedule.stage();
  // Or stored quantized in another way (or not at all): dequantized, put
  // together and cut anew, and quantized as the schedule stores it.
  std::map<std::string, json> savedCuts, savedQuantized;
  for (const json &entry : manifest["tensors"]) {
    if (entry.contains("layout"))
      savedCuts[entry["name"].get<std::string>()] =
          entry["layout"].value("world_size", json());
    savedQuantized[entry["name"].get<std::string>()] =
        entry.value("quantized", json());
  }
  for (const StateTensor &state : getStateTensors(schedule)) {
    auto cut = savedCuts.find(state.name);
    if (cut != savedCuts.end() && state.description.contains("layout") &&
        cut->second != state.description["layout"]["world_size"])
      reshard = true;
    auto quantized = savedQuantized.find(state.name);
    if (quantized != savedQuantized.end() &&
        quantized->second != state.description.value("quantized", json()))
      reshard = true;
  }
  auto comparable = [&](json description) {
    if (!reshard)
      return description;
    // What the elements are, however they are stored.
    description["dtype"] = getElementDType(description);
    description.erase("quantized");
    json whole = description.contains("layout") ? description["layout"]["shape"]
                                                : json();
    description.erase("sharded");
    description.erase("shape");
    description.erase("layout");
    if (!whole.is_null())
      description["layout"] = {{"shape", whole}};
    return description;
  };
  std::string dataDiffers = compareDescriptions(
      manifest.value("data", json::object()), describeData(data), "this run",
      /*exact=*/false);
  if (!dataDiffers.empty())
    return mismatch("data: " + dataDiffers +
                    "; a resumed run reads the data of the saved one");

  std::map<std::string, const json *> saved;
  for (const json &entry : manifest["tensors"])
    saved[entry["name"].get<std::string>()] = &entry;
  std::vector<StateTensor> expected = getStateTensors(schedule);
  for (const StateTensor &state : expected) {
    auto it = saved.find(state.name);
    if (it == saved.end())
      return mismatch("no tensor '" + state.name + "', which " +
                      schedule.name() +
                      " has: the checkpoint is of another model");
    std::string differs =
        compareDescriptions(comparable(*it->second),
                            comparable(state.description), schedule.name());
    if (!differs.empty())
      return mismatch("tensor '" + state.name + "': " + differs);
    saved.erase(it);
  }
  if (!saved.empty())
    return mismatch("tensor '" + saved.begin()->first + "', which " +
                    schedule.name() +
                    " does not have: the checkpoint is of another model");
  return Status::ok();
}

/// The tensors of a rank's file, checked against the manifest: each tensor
/// it lists with its dtype and shape, no other, and the step.
StatusOr<std::vector<RawTensorSpan>> checkRankFile(const FileBuffer &bytes,
                                                   const std::string &path,
                                                   const json &manifest,
                                                   int64_t rank) {
  std::map<std::string, std::string> metadata;
  StatusOr<std::vector<RawTensorSpan>> tensors =
      parseRawSafetensorsSpans(bytes.data, bytes.size, path, &metadata);
  if (!tensors.isOk())
    return tensors.status();
  std::string step = std::to_string(manifest["step"].get<int64_t>());
  if (metadata["step"] != step)
    return ZERO_ERROR(kFailedPrecondition,
                      path + ": holds step '" + showFileText(metadata["step"]) +
                          "', but the manifest is of step " + step);
  // A file listed for another rank would load that rank's shards.
  if (metadata["format"] != kFormat || metadata["rank"] != std::to_string(rank))
    return ZERO_ERROR(kFailedPrecondition,
                      path + ": holds rank '" + showFileText(metadata["rank"]) +
                          "' of format '" + showFileText(metadata["format"]) +
                          "', but the manifest lists it for rank " +
                          std::to_string(rank) + " of a " + kFormat);
  std::map<std::string, const RawTensorSpan *> byName;
  for (const RawTensorSpan &tensor : *tensors)
    byName[tensor.name] = &tensor;
  for (const json &entry : manifest["tensors"]) {
    std::string name = entry["name"].get<std::string>();
    auto it = byName.find(name);
    if (it == byName.end())
      return ZERO_ERROR(kFailedPrecondition, path + ": no tensor '" + name +
                                                 "', which the manifest lists");
    const RawTensorSpan &tensor = *it->second;
    if (tensor.dtype != entry["dtype"] || json(tensor.shape) != entry["shape"])
      return ZERO_ERROR(
          kFailedPrecondition,
          path + ": tensor '" + name + "' is " + showFileText(tensor.dtype) +
              " " + abbreviate(json(tensor.shape)) +
              ", but the manifest gives " +
              showValue(entry["dtype"]) + " " + entry["shape"].dump());
    byName.erase(it);
  }
  if (!byName.empty())
    return ZERO_ERROR(kFailedPrecondition,
                      path + ": tensor '" +
                          showFileText(byName.begin()->first) +
                          "', which the manifest does not list");
  return tensors;
}

/// Each rank's file as verifyFiles reads it, and where its tensors lie.
using RankTensorsCallback = std::function<void(
    int64_t rank, FileBuffer file, const std::vector<RawTensorSpan> &tensors)>;

/// Copies of the tensors of `file`, in this host's byte order.
std::vector<RawTensor> copyTensors(const FileBuffer &file,
                                   const std::vector<RawTensorSpan> &spans) {
  std::vector<RawTensor> tensors;
  for (const RawTensorSpan &span : spans) {
    RawTensor tensor{span.name, span.dtype, span.shape,
                     std::string(file.data + span.offset, span.bytes)};
    swapLittleEndian(tensor.bytes.data(), tensor.bytes.size(),
                     getSafetensorsDTypeWidth(tensor.dtype));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

/// Checks that the file of every rank of the manifest is there with its
/// size; reads those of `rank` (-1: of every rank), checks their CRC-32 and
/// tensors (checkRankFile) and hands the tensors to `take`.
Status verifyFiles(const Manifest &manifest, int64_t rank,
                   const RankTensorsCallback &take) {
  const json &content = manifest.content;
  const int64_t worldSize = content["world_size"].get<int64_t>();
  std::map<int64_t, const json *> byRank;
  for (const json &file : content["files"])
    byRank[file["rank"].get<int64_t>()] = &file;
  for (int64_t r = 0; r < worldSize; ++r) {
    auto it = byRank.find(r);
    if (it == byRank.end())
      return ZERO_ERROR(kInvalidArgument, manifest.path + ": no file of rank " +
                                              std::to_string(r));
    const json &file = *it->second;
    std::string path =
        joinPath(manifest.directory, file["path"].get<std::string>());
    uint64_t expectedBytes = file["bytes"].get<uint64_t>();
    struct stat info;
    if (::lstat(path.c_str(), &info) != 0)
      return errnoError(path, "rank " + std::to_string(r) +
                                  "'s file of the checkpoint is missing");
    if (S_ISLNK(info.st_mode))
      return linkError(path);
    if (static_cast<uint64_t>(info.st_size) != expectedBytes)
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + std::to_string(info.st_size) +
                            " bytes, but the manifest gives " +
                            std::to_string(expectedBytes) +
                            ": the file is truncated or was replaced");
  }
  for (int64_t r = 0; r < worldSize; ++r) {
    if (rank >= 0 && r != rank)
      continue;
    const json &file = *byRank[r];
    std::string path =
        joinPath(manifest.directory, file["path"].get<std::string>());
    uint32_t checksum = 0;
    StatusOr<FileBuffer> bytes = readChecksummed(path, checksum);
    if (!bytes.isOk())
      return bytes.status();
    std::string crc = formatCrc32(checksum);
    if (crc != file["crc32"].get<std::string>())
      return ZERO_ERROR(kInvalidArgument,
                        path + ": the file is corrupt: CRC-32 " + crc +
                            ", the manifest gives " +
                            file["crc32"].get<std::string>() + "; " +
                            locateCorruption(*bytes, path, file));
    StatusOr<std::vector<RawTensorSpan>> tensors =
        checkRankFile(*bytes, path, content, r);
    if (!tensors.isOk())
      return tensors.status();
    take(r, std::move(*bytes), *tensors);
  }
  return Status::ok();
}

/// Elements of safetensors dtype `from` as `to` (floats only): copied where
/// the two agree, else rounded to nearest even.
StatusOr<std::string> convertElements(const std::string &bytes,
                                      const std::string &from,
                                      const std::string &to) {
  if (from == to)
    return bytes;
  auto element = [&](size_t i) -> double {
    if (from == "F64") {
      double value;
      std::memcpy(&value, bytes.data() + 8 * i, 8);
      return value;
    }
    if (from == "F32") {
      float value;
      std::memcpy(&value, bytes.data() + 4 * i, 4);
      return value;
    }
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    return from == "BF16" ? ops::widenBF16(bits) : ops::widenF16(bits);
  };
  if (from != "F64" && from != "F32" && from != "BF16" && from != "F16")
    return ZERO_ERROR(kInvalidArgument,
                      "cannot convert " + from + " elements to " + to);
  size_t count = bytes.size() / getSafetensorsDTypeWidth(from);
  std::string out(count * getSafetensorsDTypeWidth(to), '\0');
  for (size_t i = 0; i < count; ++i) {
    if (to == "F32") {
      float value = static_cast<float>(element(i));
      std::memcpy(out.data() + 4 * i, &value, 4);
      continue;
    }
    uint16_t bits = to == "BF16" ? ops::narrowToBF16(element(i))
                                 : ops::narrowToF16(element(i));
    std::memcpy(out.data() + 2 * i, &bits, 2);
  }
  return out;
}

} // namespace

Status prepareCheckpointDirectory(const std::string &directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    return ZERO_ERROR(kInvalidArgument,
                      directory + ": cannot create the checkpoint directory: " +
                          error.message());
  if (!fs::is_directory(directory, error))
    return ZERO_ERROR(kInvalidArgument,
                      directory + ": not a directory, for checkpoints");
  if (::access(directory.c_str(), W_OK) != 0)
    return errnoError(directory, "cannot write checkpoints");
  return Status::ok();
}

/// The id that the checkpoints of `session`'s run carry (checkOwner): the
/// one of the checkpoint it resumed from, else a new one, made once. It
/// belongs to the session, so that every saver of the run saves as the run.
static const std::string &getSessionRunId(Session &session) {
  std::string &runId = session.checkpointRunId();
  if (runId.empty()) {
    const std::optional<CheckpointLoadStats> &resumed = session.resumeStats();
    runId = resumed && !resumed->runId.empty() ? resumed->runId : makeRunId();
  }
  return runId;
}

Status checkCheckpointOwner(Session &session, const std::string &directory) {
  return checkOwner(directory, getSessionRunId(session));
}

/// A save between its start and its completion.
struct CheckpointSaver::Pending {
  CheckpointSaveOptions options;
  int64_t step = 0;
  int64_t rank = 0;
  std::string temporary;
  /// This rank's file in `temporary`.
  std::string path;
  /// Rank 0's, held until the completion.
  SaveLock lock;
  /// The file image in the saver's buffer: the header, then the tensors.
  const char *data = nullptr;
  size_t size = 0;
  size_t headerBytes = 0;
  std::vector<SnapshotTensor> tensors;
  std::thread writer;
  std::atomic<bool> cancel{false};
  /// Set by the writer when it is through.
  std::atomic<bool> done{false};
  /// The writer's outcome and manifest entry, read once it is joined.
  Status written;
  json record;
  CheckpointSaveStats stats;

  void write() {
    Clock::time_point begin = Clock::now();
    // An exception must not leave a thread: it would end the process.
    try {
      written = writeSnapshot(data, size, headerBytes, tensors, path, rank,
                              options.failRankFile, cancel, record);
    } catch (const std::exception &e) {
      written = ZERO_ERROR(kInternal, path + ": " + e.what());
    }
    stats.writeSeconds = secondsSince(begin);
    if (options.afterRankFile)
      options.afterRankFile();
    done.store(true, std::memory_order_release);
  }
};

CheckpointSaver::CheckpointSaver(Session &session) : session_(session) {}

CheckpointSaver::~CheckpointSaver() { abandon(); }

int64_t CheckpointSaver::pendingStep() const {
  return pending_ ? pending_->step : -1;
}

std::vector<CheckpointSaveStats> CheckpointSaver::takeStats() {
  return std::exchange(stats_, {});
}

/// Copies this rank's state tensors into the saver's buffer, laid out as
/// the rank's file: the header, then each tensor's bytes.
static Status takeSnapshot(Executor &executor, CheckpointSaver::Pending &p,
                           std::unique_ptr<char[]> &buffer, size_t &capacity) {
  const Schedule &schedule = executor.schedule();
  std::vector<StateTensor> states = getStateTensors(schedule);
  std::vector<RawTensorHeader> headers;
  for (const StateTensor &state : states) {
    const ValueInfo &value =
        schedule.values().values[schedule.arguments()[state.argument].value];
    headers.push_back({state.name,
                       state.description["dtype"].get<std::string>(),
                       state.description["shape"].get<std::vector<int64_t>>(),
                       static_cast<uint64_t>(value.bytes())});
  }
  std::map<std::string, std::string> metadata = {
      {"format", kFormat},
      {"step", std::to_string(p.step)},
      {"rank", std::to_string(p.rank)}};
  StatusOr<std::string> header =
      encodeRawSafetensorsHeader(headers, metadata, p.path);
  if (!header.isOk())
    return header.status();
  size_t size = header->size();
  for (const RawTensorHeader &tensor : headers)
    size += tensor.bytes;
  // Aligned, and padded to a whole block, for O_DIRECT (writeDirect).
  size_t padded = io::roundUpToDirectBlocks(size);
  if (padded + io::kDirectAlignment > capacity) {
    buffer.reset();
    capacity = 0;
    // Uninitialized: the snapshot writes every byte.
    buffer = allocateFileMemory(padded + io::kDirectAlignment);
    if (!buffer)
      return ZERO_ERROR(kResourceExhausted,
                        p.path + ": cannot allocate " + std::to_string(size) +
                            " bytes of host memory for the snapshot");
    capacity = padded + io::kDirectAlignment;
  }
  char *data = alignForDirect(buffer.get());
  std::memcpy(data, header->data(), header->size());
  std::memset(data + size, 0, padded - size);
  size_t offset = header->size();
  for (size_t i = 0; i < states.size(); ++i) {
    char *at = data + offset;
    ZERO_RETURN_IF_ERROR(executor.readTensor(
        schedule.arguments()[states[i].argument].value, at));
    swapLittleEndian(at, headers[i].bytes,
                     getSafetensorsDTypeWidth(headers[i].dtype));
    p.tensors.push_back({headers[i].name, offset, headers[i].bytes});
    offset += headers[i].bytes;
  }
  p.data = data;
  p.size = size;
  p.headerBytes = header->size();
  return Status::ok();
}

Status CheckpointSaver::start(const CheckpointSaveOptions &options) {
  ZERO_RETURN_IF_ERROR(complete());
  Executor &executor = session_.executor();
  Communicator &comm = session_.communicator();
  auto pending = std::make_unique<Pending>();
  Pending &p = *pending;
  p.options = options;
  p.step = executor.stepsTaken();
  p.rank = comm.rank();
  p.stats.step = p.step;
  p.stats.background = options.background;

  // Rank 0 names the temporary directory and makes it.
  std::string nonce(kNonceLength, '0');
  if (comm.rank() == 0) {
    std::random_device random;
    std::mt19937_64 generator((uint64_t(random()) << 32) ^ random() ^
                              uint64_t(::getpid()));
    const char *digits = "0123456789abcdef";
    for (char &c : nonce)
      c = digits[generator() % 16];
  }
  CollectiveContext context{"checkpoint of step " + std::to_string(p.step),
                            nullptr};
  ZERO_RETURN_IF_ERROR(comm.broadcastBytes(nonce, 0, context));
  p.temporary = joinPath(options.directory,
                         "." + getStepName(p.step) + kTemporaryMark + nonce);
  p.path = joinPath(p.temporary, getRankFileName(p.rank));
  const std::string runId =
      comm.rank() == 0 ? getSessionRunId(session_) : std::string();
  ZERO_RETURN_IF_ERROR(session_.agree(
      comm.rank() == 0
          ? makeTemporary(options.directory, p.temporary, p.lock, runId)
          : Status::ok(),
      "agreement of the ranks in the checkpoint of step " +
          std::to_string(p.step)));

  Clock::time_point begin = Clock::now();
  p.written = takeSnapshot(executor, p, buffer_, capacity_);
  p.stats.snapshotSeconds = secondsSince(begin);
  pending_ = std::move(pending);
  // A failed snapshot is reported at the completion, where the ranks agree.
  if (p.written.isOk()) {
    if (options.background)
      p.writer = std::thread([&p] { p.write(); });
    else
      p.write();
  }
  return options.background ? Status::ok() : complete();
}

Status CheckpointSaver::complete() {
  if (!pending_)
    return Status::ok();
  // The lock and the snapshot are released with it, whatever the outcome.
  std::unique_ptr<Pending> pending = std::move(pending_);
  Pending &p = *pending;
  Clock::time_point begin = Clock::now();
  if (p.writer.joinable())
    p.writer.join();
  p.stats.waitSeconds = secondsSince(begin);

  begin = Clock::now();
  Communicator &comm = session_.communicator();
  const std::string agreement =
      "agreement of the ranks in the checkpoint of step " +
      std::to_string(p.step);
  CollectiveContext context{"checkpoint of step " + std::to_string(p.step),
                            nullptr};
  auto discard = [&](const Status &status) {
    if (comm.rank() == 0) {
      std::error_code error;
      fs::remove_all(p.temporary, error);
    }
    return status;
  };
  Status agreed = session_.agree(p.written, agreement);
  if (!agreed.isOk())
    return discard(agreed);
  StatusOr<std::vector<std::string>> records =
      comm.gatherBytes(p.record.dump(), context);
  if (!records.isOk())
    return discard(records.status());
  Status published =
      comm.rank() == 0 ? publish(session_, p.options, p.temporary, p.step,
                                 session_.checkpointRunId(), *records)
                       : Status::ok();
  agreed = session_.agree(published, agreement);
  if (!agreed.isOk())
    return discard(agreed);
  p.stats.completeSeconds = secondsSince(begin);
  p.stats.bytesWritten = p.size;
  stats_.push_back(p.stats);
  return Status::ok();
}

StatusOr<bool> CheckpointSaver::completeIfWritten() {
  if (!pending_)
    return false;
  int32_t done = !pending_->writer.joinable() ||
                 pending_->done.load(std::memory_order_acquire);
  Communicator &comm = session_.communicator();
  CollectiveContext context{"poll of the writers of the checkpoint of step " +
                                std::to_string(pending_->step),
                            nullptr};
  if (comm.size() > 1)
    ZERO_RETURN_IF_ERROR(
        comm.allReduce(&done, &done, 1, DType::I32, ReduceOp::Min, context));
  if (!done)
    return false;
  ZERO_RETURN_IF_ERROR(complete());
  return true;
}

void CheckpointSaver::abandon() {
  if (!pending_)
    return;
  pending_->cancel.store(true, std::memory_order_relaxed);
  if (pending_->writer.joinable())
    pending_->writer.join();
  // Another rank's writer may still create its file in the directory; what
  // is left the next save removes.
  if (pending_->rank == 0) {
    std::error_code error;
    fs::remove_all(pending_->temporary, error);
  }
  pending_.reset();
}

Status saveCheckpoint(Session &session, const CheckpointSaveOptions &options) {
  CheckpointSaveOptions now = options;
  now.background = false;
  CheckpointSaver saver(session);
  return saver.start(now);
}

StatusOr<std::string> findCheckpoint(const std::string &path) {
  // Nothing inside a checkpoint directory is followed: not `latest`, not a
  // step directory (named so by the path given, by `latest` or found), not
  // a manifest. The path given may lead through links up to there.
  std::string base = fs::path(path).filename().string();
  bool named = base == kLatestName || parseStepName(base) >= 0;
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0)
    return ZERO_ERROR(kNotFound, path + ": no checkpoint there");
  if (named && S_ISLNK(info.st_mode))
    return linkError(path);
  std::error_code error;
  std::string manifest = joinPath(path, kManifestName);
  if (fs::is_directory(path, error) &&
      ::lstat(manifest.c_str(), &info) == 0) {
    if (S_ISLNK(info.st_mode))
      return linkError(manifest);
    return path;
  }
  std::string latest = path;
  std::string directory = fs::path(path).parent_path().string();
  if (fs::is_directory(path, error)) {
    latest = joinPath(path, kLatestName);
    directory = path;
    if (::lstat(latest.c_str(), &info) != 0) {
      std::map<int64_t, std::string> steps = listSteps(path);
      if (steps.empty())
        return ZERO_ERROR(kNotFound,
                          path + ": no checkpoint (no step-<S> directory "
                                 "with a manifest, no 'latest')");
      return steps.rbegin()->second;
    }
  } else if (!fs::is_regular_file(path, error)) {
    return ZERO_ERROR(kNotFound, path + ": no checkpoint there");
  }
  // `latest` holds "step-<S>\n": a few bytes, read without following a link.
  StatusOr<std::string> text = readWholeFile(latest, 4096);
  if (!text.isOk())
    return text.status();
  std::string name = *text;
  while (!name.empty() && (name.back() == '\n' || name.back() == ' '))
    name.pop_back();
  if (parseStepName(name) < 0)
    return ZERO_ERROR(kInvalidArgument,
                      latest + ": names " + quotePrefix(name) +
                          ", not a step-<S> directory");
  std::string step = joinPath(directory.empty() ? "." : directory, name);
  if (::lstat(step.c_str(), &info) == 0 && S_ISLNK(info.st_mode))
    return linkError(step);
  manifest = joinPath(step, kManifestName);
  if (::lstat(manifest.c_str(), &info) == 0 && S_ISLNK(info.st_mode))
    return linkError(manifest);
  if (!fs::is_regular_file(manifest, error))
    return ZERO_ERROR(kNotFound, latest + ": names " + name +
                                     ", which holds no complete checkpoint");
  return step;
}

/// Every rank's tensors by name, in rank order.
using RankTensors = std::vector<std::map<std::string, RawTensor>>;

/// Every rank file of `manifest`, checked as verifyCheckpoint checks them.
static StatusOr<RankTensors> readEveryRank(const Manifest &manifest) {
  RankTensors ranks;
  ZERO_RETURN_IF_ERROR(verifyFiles(
      manifest, /*rank=*/-1,
      [&](int64_t, FileBuffer file, const std::vector<RawTensorSpan> &spans) {
        std::map<std::string, RawTensor> byName;
        for (RawTensor &tensor : copyTensors(file, spans))
          byName[tensor.name] = std::move(tensor);
        ranks.push_back(std::move(byName));
      }));
  return ranks;
}

/// Tensor `entry` of a manifest whole: its shards joined in rank order,
/// without padding (a tensor that is not sharded: rank 0's). A layout of
/// fewer ranks than the checkpoint's has its shards on ranks 0 .. its
/// world_size - 1 and replicas of them on the others (PartitionLayout).
static StatusOr<std::string> joinShards(const RankTensors &ranks,
                                        const json &entry,
                                        const std::string &path) {
  std::string name = entry["name"].get<std::string>();
  bool sharded = entry.value("sharded", false);
  int64_t shards = static_cast<int64_t>(ranks.size());
  if (sharded && entry.contains("layout") &&
      entry["layout"].contains("world_size")) {
    int64_t worldSize = entry["layout"]["world_size"].get<int64_t>();
    if (worldSize < 1 || shards % worldSize != 0)
      return ZERO_ERROR(kInvalidArgument,
                        path + ": tensor '" + name + "' is cut across " +
                            std::to_string(worldSize) + " ranks, but the " +
                            std::to_string(shards) +
                            " ranks of the checkpoint are not copies of them");
    shards = worldSize;
  }
  std::string whole;
  for (int64_t rank = 0; rank < shards; ++rank) {
    StatusOr<std::string> part =
        unpackElements(ranks[rank].at(name).bytes, entry, path);
    if (!part.isOk())
      return part.status();
    whole += *part;
    if (!sharded)
      break;
  }
  if (!entry.contains("layout"))
    return whole;
  int64_t width = getSafetensorsDTypeWidth(getElementDType(entry));
  int64_t numel = entry["layout"]["numel"].get<int64_t>();
  if (static_cast<int64_t>(whole.size()) < numel * width)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": tensor '" + name + "' holds " +
                          std::to_string(whole.size() / width) +
                          " elements on all ranks, but its layout " +
                          std::to_string(numel));
  whole.resize(static_cast<size_t>(numel * width));
  return whole;
}

/// Rank `rank`'s part of tensor `whole` of `width`-byte elements: its shard
/// of `layout` (padded with zeros) when `sharded`, else all of it.
static std::string cutShard(const std::string &whole, int64_t width,
                            const PartitionLayout &layout, bool sharded,
                            int64_t rank) {
  if (!sharded)
    return whole;
  std::string padded = whole;
  padded.resize(static_cast<size_t>(layout.paddedNumel * width), '\0');
  return padded.substr(static_cast<size_t>(layout.shardBegin(rank) * width),
                       static_cast<size_t>(layout.shardNumel * width));
}

/// This rank's tensors of `schedule` from every rank file of `manifest`,
/// saved at another world size or stage: each put together and cut as the
/// schedule cuts it. Without `schedule.loadFromFp32Weights()`, the master
/// weights are the 16-bit parameters put together and widened to fp32.
static StatusOr<std::vector<std::string>>
reshardForRank(const Manifest &manifest, const Schedule &schedule,
               int64_t rank) {
  StatusOr<RankTensors> ranks = readEveryRank(manifest);
  if (!ranks.isOk())
    return ranks.status();
  std::map<std::string, const json *> entries;
  for (const json &entry : manifest.content["tensors"])
    entries[entry["name"].get<std::string>()] = &entry;
  std::vector<std::string> parts;
  for (const StateTensor &state : getStateTensors(schedule)) {
    const ArgumentInfo &arg = schedule.arguments()[state.argument];
    const json *entry = entries.at(state.name);
    bool fromParameter = !schedule.loadFromFp32Weights() &&
                         arg.kind == ArgumentInfo::Kind::State &&
                         arg.state == "master";
    // Stored quantized and cut as saved (a load that reads every rank for
    // the master weights): the rank's bytes as saved, since quantizing the
    // dequantized values again may move them by a rounding of the scale.
    if (!fromParameter && state.description.contains("quantized") &&
        *entry == state.description &&
        manifest.content["world_size"] == schedule.worldSize()) {
      parts.push_back((*ranks)[rank].at(state.name).bytes);
      continue;
    }
    if (fromParameter)
      entry = entries.at("param/" + arg.param);
    StatusOr<std::string> whole = joinShards(*ranks, *entry, manifest.path);
    if (whole.isOk() && fromParameter)
      whole = convertElements(*whole, getElementDType(*entry), "F32");
    if (!whole.isOk())
      return whole.status();
    int64_t width =
        getSafetensorsDTypeWidth(getElementDType(state.description));
    std::string part =
        state.description.contains("layout")
            ? cutShard(*whole, width, getCutLayout(schedule, arg),
                       state.description.value("sharded", false), rank)
            : *whole;
    // Quantized anew where the schedule stores the tensor quantized.
    parts.push_back(
        packElements(std::move(part), schedule.values().values[arg.value]));
  }
  return parts;
}

/// The data that `manifest` records, with the rows that a resumed run of
/// `schedule` reads on from: one entry per data argument, `tokens` and
/// `targets` (windows of one stream) at the same row. A manifest without
/// rows (written before they were recorded) gives none.
static StatusOr<CheckpointData> getSavedData(const Manifest &manifest,
                                             const Schedule &schedule) {
  json data = manifest.content.value("data", json::object());
  CheckpointData saved;
  saved.seed = data.value("seed", uint64_t(0));
  saved.tokenFile = data.value("token_file", "");
  if (!data.contains("rows_read"))
    return saved;
  for (const auto &item : data["rows_read"].items())
    saved.rowsRead[item.key()] = item.value().get<int64_t>();
  auto refuse = [&](const std::string &what) {
    return ZERO_ERROR(kFailedPrecondition,
                      manifest.path + ": 'data.rows_read' " + what);
  };
  std::map<std::string, int64_t> unmatched = saved.rowsRead;
  for (const ArgumentInfo &arg : schedule.arguments()) {
    if (arg.kind != ArgumentInfo::Kind::Data)
      continue;
    if (!unmatched.erase(arg.name))
      return refuse("has no entry for data argument '" + arg.name + "' of " +
                    schedule.name());
  }
  if (!unmatched.empty())
    return refuse("names '" + unmatched.begin()->first + "', which " +
                  schedule.name() + " has no data argument of");
  auto tokens = saved.rowsRead.find("tokens");
  auto targets = saved.rowsRead.find("targets");
  if (tokens != saved.rowsRead.end() && targets != saved.rowsRead.end() &&
      tokens->second != targets->second)
    return refuse("gives " + std::to_string(tokens->second) +
                  " rows of 'tokens' and " + std::to_string(targets->second) +
                  " of 'targets', which are windows of one stream");
  return saved;
}

/// The bytes of the rank files that loading reads: `rank`'s, or every
/// rank's.
static uint64_t countBytesRead(const json &manifest, int64_t rank, bool every) {
  uint64_t bytes = 0;
  for (const json &file : manifest["files"])
    if (every || file["rank"].get<int64_t>() == rank)
      bytes += file["bytes"].get<uint64_t>();
  return bytes;
}

StatusOr<CheckpointData> loadCheckpoint(Executor &executor,
                                        const std::string &path,
                                        const CheckpointData &data,
                                        CheckpointLoadStats *stats) {
  Clock::time_point begin = Clock::now();
  StatusOr<Manifest> manifest = readManifest(path);
  if (!manifest.isOk())
    return manifest.status();
  const Schedule &schedule = executor.schedule();
  bool reshard = false;
  ZERO_RETURN_IF_ERROR(verifyManifest(manifest->content, manifest->path,
                                      schedule, data, reshard));
  StatusOr<CheckpointData> saved = getSavedData(*manifest, schedule);
  if (!saved.isOk())
    return saved.status();
  // Master weights from the parameters need the parameters whole, as a
  // resharding load does.
  bool everyRank = reshard || !schedule.loadFromFp32Weights();
  auto record = [&] {
    if (!stats)
      return;
    stats->step = manifest->content["step"].get<int64_t>();
    stats->runId = getRunId(manifest->content);
    stats->bytesRead = countBytesRead(
        manifest->content, executor.communicator().rank(), everyRank);
    stats->seconds = secondsSince(begin);
  };
  if (everyRank) {
    StatusOr<std::vector<std::string>> parts =
        reshardForRank(*manifest, schedule, executor.communicator().rank());
    if (!parts.isOk())
      return parts.status();
    std::vector<StateTensor> states = getStateTensors(schedule);
    for (size_t i = 0; i < states.size(); ++i)
      ZERO_RETURN_IF_ERROR(executor.writeTensor(
          schedule.arguments()[states[i].argument].value, (*parts)[i].data()));
    executor.resumeAt(manifest->content["step"].get<int64_t>());
    record();
    return saved;
  }
  // The manifest lists the schedule's tensors, and the file the manifest's:
  // everything is checked before the first tensor is written.
  // The tensors go from the file's bytes into the executor: no copy between.
  FileBuffer file;
  std::vector<RawTensorSpan> spans;
  ZERO_RETURN_IF_ERROR(verifyFiles(
      *manifest, executor.communicator().rank(),
      [&](int64_t, FileBuffer own, const std::vector<RawTensorSpan> &where) {
        file = std::move(own);
        spans = where;
      }));
  std::map<std::string, const RawTensorSpan *> byName;
  for (const RawTensorSpan &span : spans)
    byName[span.name] = &span;
  for (const StateTensor &state : getStateTensors(schedule)) {
    const RawTensorSpan &span = *byName.at(state.name);
    char *bytes = file.data + span.offset;
    swapLittleEndian(bytes, span.bytes, getSafetensorsDTypeWidth(span.dtype));
    ZERO_RETURN_IF_ERROR(executor.writeTensor(
        schedule.arguments()[state.argument].value, bytes));
  }
  executor.resumeAt(manifest->content["step"].get<int64_t>());
  record();
  return saved;
}

StatusOr<CheckpointInfo> readCheckpointInfo(const std::string &path) {
  StatusOr<Manifest> manifest = readManifest(path);
  if (!manifest.isOk())
    return manifest.status();
  const json &content = manifest->content;
  CheckpointInfo info;
  info.directory = manifest->directory;
  info.version = content["version"].get<int64_t>();
  info.step = content["step"].get<int64_t>();
  info.worldSize = content["world_size"].get<int64_t>();
  info.stage = content["stage"].get<int64_t>();
  json schedule = content.value("schedule", json::object());
  info.schedule = schedule.value("name", "");
  info.scheduleCrc32 = schedule.value("crc32", "");
  json data = content.value("data", json::object());
  info.data.seed = data.value("seed", uint64_t(0));
  info.data.tokenFile = data.value("token_file", "");
  json rowsRead = data.value("rows_read", json::object());
  for (const auto &item : rowsRead.items())
    info.data.rowsRead[item.key()] = item.value().get<int64_t>();
  for (const json &entry : content["tensors"]) {
    CheckpointTensorInfo tensor;
    tensor.name = entry["name"].get<std::string>();
    tensor.dtype = entry["dtype"].get<std::string>();
    for (const json &dim : entry["shape"])
      tensor.shape.push_back(dim.is_number_integer() ? dim.get<int64_t>() : -1);
    tensor.sharded = entry.value("sharded", false);
    info.tensors.push_back(std::move(tensor));
  }
  for (const json &entry : content["parameters"]) {
    CheckpointTensorInfo parameter;
    parameter.name = entry.value("name", "");
    parameter.dtype = entry.value("dtype", "");
    for (const json &dim : entry.value("shape", json::array()))
      parameter.shape.push_back(dim.is_number_integer() ? dim.get<int64_t>()
                                                        : -1);
    info.parameters.push_back(std::move(parameter));
  }
  for (const json &entry : content["files"])
    info.files.push_back(
        {entry["rank"].get<int64_t>(), entry["path"].get<std::string>(),
         entry["bytes"].get<uint64_t>(), entry["crc32"].get<std::string>()});
  return info;
}

Status verifyCheckpoint(const std::string &path) {
  StatusOr<Manifest> manifest = readManifest(path);
  if (!manifest.isOk())
    return manifest.status();
  return verifyFiles(
      *manifest, /*rank=*/-1,
      [](int64_t, FileBuffer, const std::vector<RawTensorSpan> &) {});
}

/// A checkpoint's manifest and every rank file, checked as
/// verifyCheckpoint checks them.
struct WholeCheckpoint {
  Manifest manifest;
  RankTensors ranks;
};

static StatusOr<WholeCheckpoint> readWholeCheckpoint(const std::string &path) {
  StatusOr<Manifest> manifest = readManifest(path);
  if (!manifest.isOk())
    return manifest.status();
  StatusOr<RankTensors> ranks = readEveryRank(*manifest);
  if (!ranks.isOk())
    return ranks.status();
  return WholeCheckpoint{std::move(*manifest), std::move(*ranks)};
}

StatusOr<std::vector<RawTensor>>
consolidateCheckpoint(const std::string &path, const std::string &dtype) {
  if (dtype != "F32" && dtype != "BF16" && dtype != "F16")
    return ZERO_ERROR(kInvalidArgument, "consolidating into " + dtype +
                                            ": the dtype must be F32, BF16 "
                                            "or F16");
  StatusOr<WholeCheckpoint> whole = readWholeCheckpoint(path);
  if (!whole.isOk())
    return whole.status();
  const Manifest *manifest = &whole->manifest;
  const RankTensors &ranks = whole->ranks;
  std::map<std::string, const json *> entries;
  for (const json &entry : manifest->content["tensors"])
    entries[entry["name"].get<std::string>()] = &entry;

  std::vector<RawTensor> weights;
  // A tiled weight is whole at the place of its first tile.
  std::map<std::string, size_t> tiled;
  for (const json &entry : manifest->content["tensors"]) {
    if (entry.value("kind", "") != "param")
      continue;
    std::string param = entry.value("param", "");
    const json &layout = entry.value("layout", json::object());
    if (!layout.contains("numel") || !layout["numel"].is_number_integer() ||
        !layout.contains("shape") || !layout["shape"].is_array())
      return ZERO_ERROR(kInvalidArgument,
                        manifest->path + ": tensor '" +
                            entry["name"].get<std::string>() +
                            "' has no layout with shape and numel");
    // The parameter itself where it has the dtype asked for (the model's own
    // 16-bit weights), else its fp32 master weights where there are some.
    const json *source = &entry;
    auto master = entries.find("master/" + param);
    if (getElementDType(entry) != dtype && master != entries.end())
      source = master->second;
    // A parameter's master weights are cut as the parameter is. One stored
    // quantized is consolidated dequantized (joinShards).
    std::string from = getElementDType(*source);
    StatusOr<std::string> bytes = joinShards(ranks, *source, manifest->path);
    if (!bytes.isOk())
      return bytes.status();
    StatusOr<std::string> converted = convertElements(*bytes, from, dtype);
    if (!converted.isOk())
      return converted.status();

    RawTensor weight;
    weight.dtype = dtype;
    weight.name = param;
    for (const json &dim : layout["shape"])
      weight.shape.push_back(dim.get<int64_t>());
    weight.bytes = std::move(*converted);
    if (!entry.contains("tile")) {
      weights.push_back(std::move(weight));
      continue;
    }
    const json &tile = entry["tile"];
    std::vector<int64_t> shape = tile["shape"].get<std::vector<int64_t>>();
    std::vector<int64_t> offset = tile["offset"].get<std::vector<int64_t>>();
    int64_t elementBytes = getSafetensorsDTypeWidth(dtype);
    auto [at, first] =
        tiled.emplace(tile["param"].get<std::string>(), weights.size());
    if (first) {
      RawTensor whole;
      whole.name = at->first;
      whole.dtype = dtype;
      whole.shape = shape;
      whole.bytes.assign(
          static_cast<size_t>(shape[0] * shape[1] * elementBytes), '\0');
      weights.push_back(std::move(whole));
    }
    RawTensor &whole = weights[at->second];
    if (whole.shape != shape)
      return ZERO_ERROR(kInvalidArgument, manifest->path + ": the tiles of '" +
                                              at->first +
                                              "' disagree on its shape");
    const int64_t rows = weight.shape[0], cols = weight.shape[1];
    for (int64_t r = 0; r < rows; ++r)
      std::copy_n(weight.bytes.begin() + r * cols * elementBytes,
                  cols * elementBytes,
                  whole.bytes.begin() +
                      ((offset[0] + r) * shape[1] + offset[1]) * elementBytes);
  }
  return weights;
}

Status checkOutsideCheckpoint(const std::string &path,
                              const std::string &output) {
  StatusOr<std::string> step = findCheckpoint(path);
  if (!step.isOk())
    return step.status();
  std::error_code error;
  // The step directory, and the checkpoint directory it is a step of.
  std::vector<fs::path> directories = {fs::canonical(*step, error)};
  if (error)
    return ZERO_ERROR(kNotFound, *step + ": cannot resolve it: " +
                                     error.message());
  if (parseStepName(directories[0].filename().string()) >= 0)
    directories.push_back(directories[0].parent_path());
  fs::path resolved = fs::weakly_canonical(fs::absolute(output, error), error);
  if (error)
    return ZERO_ERROR(kInvalidArgument, output + ": cannot resolve it: " +
                                            error.message());
  auto refuse = [&](const std::string &why) {
    return ZERO_ERROR(kInvalidArgument,
                      output + ": " + why +
                          ", which this command reads: write the output "
                          "outside the checkpoint");
  };
  for (const fs::path &directory : directories) {
    auto inside = std::mismatch(directory.begin(), directory.end(),
                                resolved.begin(), resolved.end());
    if (inside.first == directory.end())
      return refuse("lies in the checkpoint directory " + directory.string());
  }
  // A hard link, or the same file under another name.
  struct stat target;
  if (::stat(output.c_str(), &target) != 0)
    return Status::ok();
  for (const fs::directory_entry &entry :
       fs::directory_iterator(*step, error)) {
    struct stat info;
    if (::lstat(entry.path().c_str(), &info) == 0 &&
        info.st_dev == target.st_dev && info.st_ino == target.st_ino)
      return refuse("is the checkpoint's file " + entry.path().string());
  }
  return Status::ok();
}

Status reshardCheckpoint(const std::string &path, int64_t worldSize,
                         int64_t stage, const std::string &output) {
  // Refused before anything is read or sized by it.
  if (worldSize < 1 || worldSize > kMaxWorldSize)
    return ZERO_ERROR(kInvalidArgument,
                      "resharding to world size " + std::to_string(worldSize) +
                          ": the world size must be 1 to " +
                          std::to_string(kMaxWorldSize) +
                          " (the runtime's limit, as for a schedule)");
  if (stage > 3)
    return ZERO_ERROR(kInvalidArgument,
                      "resharding to stage " + std::to_string(stage) +
                          ": the stage must be 0 to 3");
  ZERO_RETURN_IF_ERROR(checkOutsideCheckpoint(path, output));
  StatusOr<WholeCheckpoint> whole = readWholeCheckpoint(path);
  if (!whole.isOk())
    return whole.status();
  const Manifest *manifest = &whole->manifest;
  const RankTensors &ranks = whole->ranks;
  json content = manifest->content;
  const int64_t step = content["step"].get<int64_t>();
  if (stage < 0)
    stage = content["stage"].get<int64_t>();

  // Every tensor whole, then cut anew, in the manifest's order (the order
  // the rank files hold them in).
  std::vector<std::vector<RawTensor>> files(static_cast<size_t>(worldSize));
  for (json &entry : content["tensors"]) {
    std::string name = entry["name"].get<std::string>();
    std::string dtype = entry["dtype"].get<std::string>();
    // Cut as elements: a tensor stored quantized is dequantized, cut, and
    // quantized again in its block size.
    int64_t width = getSafetensorsDTypeWidth(getElementDType(entry));
    StatusOr<std::string> whole = joinShards(ranks, entry, manifest->path);
    if (!whole.isOk())
      return whole.status();
    std::vector<int64_t> shape = ranks.front().at(name).shape;
    bool sharded = entry.value("sharded", false);
    std::optional<PartitionLayout> layout;
    if (entry.contains("layout")) {
      StatusOr<PartitionLayout> cut = PartitionLayout::create(
          entry["layout"]["shape"].get<std::vector<int64_t>>(), worldSize);
      if (!cut.isOk())
        return ZERO_ERROR(kInvalidArgument, manifest->path + ": tensor '" +
                                                name +
                                                "': " + cut.status().message());
      layout = *cut;
      std::string kind = entry.value("kind", "");
      if (kind == "param")
        sharded = stage == 3;
      else if (kind == "state" && entry.contains("param"))
        sharded = stage >= 1;
      entry["layout"] = describeLayout(*layout);
      entry["sharded"] = sharded;
      shape =
          sharded ? std::vector<int64_t>{layout->shardNumel} : layout->shape;
      entry["shape"] = shape;
    }
    std::optional<ValueInfo> stored;
    if (entry.contains("quantized")) {
      if (layout)
        entry["quantized"]["shape"] = shape;
      stored = getStoredValue(entry);
      shape = {stored->bytes()};
      entry["shape"] = shape;
    }
    for (int64_t rank = 0; rank < worldSize; ++rank) {
      RawTensor tensor;
      tensor.name = name;
      tensor.dtype = dtype;
      tensor.shape = shape;
      tensor.bytes =
          layout ? cutShard(*whole, width, *layout, sharded, rank) : *whole;
      if (stored)
        tensor.bytes = packElements(tensor.bytes, *stored);
      files[rank].push_back(std::move(tensor));
    }
  }

  ZERO_RETURN_IF_ERROR(prepareCheckpointDirectory(output));
  SaveLock lock;
  std::string temporary =
      joinPath(output, "." + getStepName(step) + kTemporaryMark + "reshard");
  ZERO_RETURN_IF_ERROR(
      makeTemporary(output, temporary, lock, getRunId(content)));
  json records = json::array();
  for (int64_t rank = 0; rank < worldSize; ++rank) {
    json record;
    Status written = writeRankTensors(
        files[rank], joinPath(temporary, getRankFileName(rank)), step, rank,
        /*fail=*/false, record);
    if (!written.isOk()) {
      std::error_code error;
      fs::remove_all(temporary, error);
      return written;
    }
    records.push_back(std::move(record));
  }
  content["world_size"] = worldSize;
  content["stage"] = stage;
  content["files"] = std::move(records);
  return publishDirectory(output, temporary, step, content, /*keep=*/0);
}

} // namespace zero::runtime
