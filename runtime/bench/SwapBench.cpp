//===- SwapBench.cpp - throughput of the NVMe swap store ------------------===//
//
// Writes and reads back --total bytes as tensors of --tensor bytes, once
// through an NvmeSwapSpace (every write submitted, then drain(); the same for
// the reads) and once as a plain loop of pwrite/pread calls, one per tensor,
// on an O_DIRECT file in the same directory: what a program gets from the
// disk with no store in between (its memory on 4 KiB pages, or huge pages
// with --plain-huge-pages). Both files are preallocated and written once
// before timing. Prints one JSON object per measurement;
// benchmarks/nvme_swap.py runs it and makes the table.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/NvmeSwap.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace zero::runtime;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "zero-bench-swap: %s\n", message.c_str());
  std::exit(1);
}

int64_t integer(const char *flag, const char *text) {
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (!*text || *end || value < 0)
    die(std::string(flag) + ": '" + text + "' is not a non-negative integer");
  return value;
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void report(const char *method, const char *op, int64_t bytes, double seconds,
            int64_t tensor, bool direct) {
  std::printf("{\"method\": \"%s\", \"op\": \"%s\", \"bytes\": %lld, "
              "\"tensor_bytes\": %lld, \"seconds\": %.6f, \"gbps\": %.4f, "
              "\"direct\": %s}\n",
              method, op, static_cast<long long>(bytes),
              static_cast<long long>(tensor), seconds, bytes / seconds / 1e9,
              direct ? "true" : "false");
  std::fflush(stdout);
}

/// The baseline: one pwrite or pread per tensor, in order, each waited on.
class PlainFile {
public:
  PlainFile(const std::string &path, int64_t bytes) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    direct_ = fd_ >= 0;
    if (fd_ < 0)
      fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd_ < 0)
      die(path + ": " + std::strerror(errno));
    ::unlink(path.c_str());
    if (int error = ::posix_fallocate(fd_, 0, bytes))
      die(path + ": fallocate: " + std::strerror(error));
  }
  ~PlainFile() { ::close(fd_); }

  void transfer(bool write, std::byte *memory, int64_t total, int64_t tensor) {
    for (int64_t at = 0; at < total; at += tensor) {
      int64_t length = std::min(tensor, total - at);
      for (int64_t done = 0; done < length;) {
        ssize_t got =
            write ? ::pwrite(fd_, memory + at + done, length - done, at + done)
                  : ::pread(fd_, memory + at + done, length - done, at + done);
        if (got <= 0)
          die(path_ + (write ? ": pwrite: " : ": pread: ") +
              (got < 0 ? std::strerror(errno) : "no progress"));
        done += got;
      }
    }
  }
  bool direct() const { return direct_; }

private:
  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
};

void storeTransfer(NvmeSwapSpace &store, bool write, std::byte *memory,
                   int64_t total, int64_t tensor) {
  for (int64_t at = 0; at < total; at += tensor) {
    int64_t length = std::min(tensor, total - at);
    if (write)
      (void)store.write(at, memory + at, length, "bench");
    else
      (void)store.read(at, memory + at, length, "bench");
  }
  Status status = store.drain();
  if (!status.isOk())
    die(status.toString());
}

/// Random bytes, 4 KiB aligned, or on 2 MiB huge pages where asked (the
/// memory of the store's bounce buffers), for the plain loop.
std::byte *alignedBytes(int64_t bytes, unsigned seed, bool hugePages) {
  void *memory = nullptr;
  if (::posix_memalign(&memory, hugePages ? 2 << 20 : 4096, bytes) != 0)
    die("cannot allocate " + std::to_string(bytes) + " bytes");
  if (hugePages)
    ::madvise(memory, bytes, MADV_HUGEPAGE);
  auto *data = static_cast<std::byte *>(memory);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < bytes; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    data[i] = std::byte(state);
  }
  return data;
}

} // namespace

int main(int argc, char **argv) {
  NvmeSwapOptions options; // the store's defaults unless flags say otherwise
  int64_t total = int64_t(64) << 20;
  int64_t tensor = int64_t(4) << 20;
  int repeat = 5;
  bool plainHugePages = false;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--single-submit") {
      options.singleSubmit = true;
      continue;
    }
    if (flag == "--no-overlap") {
      options.overlapEvents = false;
      continue;
    }
    if (flag == "--no-huge-pages") {
      options.hugePages = false;
      continue;
    }
    if (flag == "--plain-huge-pages") {
      plainHugePages = true;
      continue;
    }
    if (i + 1 >= argc)
      die(flag + ": needs a value (or unknown flag)");
    const char *value = argv[++i];
    if (flag == "--dir")
      options.nvmePath = value;
    else if (flag == "--total")
      total = integer(argv[i - 1], value);
    else if (flag == "--tensor")
      tensor = integer(argv[i - 1], value);
    else if (flag == "--repeat")
      repeat = integer(argv[i - 1], value);
    else if (flag == "--buffer-count")
      options.bufferCount = integer(argv[i - 1], value);
    else if (flag == "--buffer-size")
      options.bufferSize = integer(argv[i - 1], value);
    else if (flag == "--block-size")
      options.blockSize = integer(argv[i - 1], value);
    else if (flag == "--queue-depth")
      options.queueDepth = integer(argv[i - 1], value);
    else if (flag == "--direct")
      options.directIo = std::string(value) == "require"
                             ? DirectIoMode::kRequire
                         : std::string(value) == "off" ? DirectIoMode::kOff
                                                       : DirectIoMode::kAuto;
    else
      die("unknown flag " + flag);
  }
  if (options.nvmePath.empty() || total <= 0 || tensor <= 0 ||
      tensor % 4096 != 0)
    die("usage: zero-bench-swap --dir DIR [--total BYTES] [--tensor BYTES "
        "(a multiple of 4096)] [--repeat N] [--buffer-count N] "
        "[--buffer-size BYTES] [--block-size BYTES] [--queue-depth N] "
        "[--direct auto|require|off] [--single-submit] [--no-overlap] "
        "[--no-huge-pages] [--plain-huge-pages]");
  options.arenaBytes = total;

  auto created = NvmeSwapSpace::create(options);
  if (!created.isOk())
    die(created.status().toString());
  NvmeSwapSpace &store = *created.value();
  if (!store.notice().empty())
    std::fprintf(stderr, "zero-bench-swap: %s\n", store.notice().c_str());
  PlainFile plain(options.nvmePath + "/zero-bench-plain." +
                      std::to_string(::getpid()) + ".bin",
                  total);

  std::byte *source = alignedBytes(total, 1, plainHugePages);
  std::byte *back = alignedBytes(total, 2, plainHugePages);
  // Warm-up: both files written once (extents converted), checked once.
  storeTransfer(store, true, source, total, tensor);
  storeTransfer(store, false, back, total, tensor);
  if (std::memcmp(source, back, total) != 0)
    die("the store read back other bytes than it wrote");
  plain.transfer(true, source, total, tensor);
  plain.transfer(false, back, total, tensor);

  // Interleaved, and each first every other round, so that both see the
  // same load and neither always follows the other.
  for (int r = 0; r < repeat; ++r) {
    for (bool write : {true, false}) {
      for (bool storeTurn : {r % 2 == 1, r % 2 == 0}) {
        std::byte *memory = write ? source : back;
        double start = now();
        if (storeTurn)
          storeTransfer(store, write, memory, total, tensor);
        else
          plain.transfer(write, memory, total, tensor);
        report(storeTurn ? "store" : "plain", write ? "write" : "read", total,
               now() - start, tensor,
               storeTurn ? store.directIo() : plain.direct());
      }
    }
  }
  std::free(source);
  std::free(back);
  return 0;
}
