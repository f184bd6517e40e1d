//===- NvmeSwap.h - a rank's nvme arena in a file ---------------*- C++ -*-===//
//
// ZeRO-Infinity's swapper: the nvme memory space of one rank is one file of
// the arena's size, and each swapped tensor is an (offset, bytes) range in
// it, as planned by the compiler. Reads and writes are asynchronous: they
// return a ticket at once and a worker thread moves the bytes through
// io_uring, staged through a pool of aligned bounce buffers so that O_DIRECT
// works whatever the alignment of the caller's memory, offsets and sizes.
// docs/Runtime.md, "NVMe swap store", describes the file, the lock, the
// alignment and the errors.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_NVMESWAP_H
#define ZERO_RUNTIME_NVMESWAP_H

#include "zero/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace zero::runtime {

/// Whether the swap file bypasses the page cache.
enum class DirectIoMode {
  kAuto,    // O_DIRECT where the file system allows it, else buffered I/O
            // and a notice (NvmeSwapSpace::notice())
  kRequire, // O_DIRECT or an error at create()
  kOff,     // buffered I/O
};

/// Failures to inject, for tests: what a file system or a disk does that a
/// test cannot provoke on demand.
struct NvmeSwapFaults {
  /// The file system refuses O_DIRECT (EINVAL), as tmpfs did before
  /// Linux 6.6.
  bool refuseDirectIo = false;
  /// The I/O request whose file range contains this byte of the swap file
  /// fails with `errorNumber`; -1 for none.
  int64_t failAtFileOffset = -1;
  /// Fail writes (true) or reads (false) at failAtFileOffset.
  bool failWrites = true;
  int errorNumber = 0;
  /// Only from this step on (setStep); -1: always.
  int64_t fromStep = -1;
};

/// DeepSpeed's `offload_*.nvme_path`, `buffer_count`, `buffer_size` and
/// `aio` knobs, and the rank's arena.
struct NvmeSwapOptions {
  /// The directory of the swap file (it must exist).
  std::string nvmePath;
  int rank = 0;
  /// The nvme arena's size (`memory.arenas.nvme` of the schedule).
  int64_t arenaBytes = 0;
  /// Bounce buffers: a pool of bufferCount x bufferSize bytes (bufferSize
  /// rounded up to `alignment`) through which requests stream in chunks of
  /// at most bufferSize bytes; small chunks share a buffer's bytes.
  int bufferCount = 4;
  int64_t bufferSize = int64_t(16) << 20;
  /// aio.block_size: the largest single I/O request.
  int64_t blockSize = int64_t(1) << 20;
  /// aio.queue_depth: the most requests in flight.
  int queueDepth = 8;
  /// aio.single_submit: one io_uring_submit per request instead of one per
  /// batch.
  bool singleSubmit = false;
  /// aio.overlap_events: start the next chunk while the current one is in
  /// flight; false runs one chunk at a time.
  bool overlapEvents = true;
  /// The alignment of file offsets, sizes and buffers for O_DIRECT: a power
  /// of two, at least the device's logical block size (4096 covers 512-byte
  /// and 4 KiB devices).
  int64_t alignment = 4096;
  DirectIoMode directIo = DirectIoMode::kAuto;
  /// Back the bounce buffers with transparent huge pages (madvise), so that
  /// each request is one DMA segment.
  bool hugePages = true;
  /// Reserve the whole file at create() (fallocate), so that a disk too
  /// small for the arena is an error there and not in the middle of a step.
  bool preallocate = true;
  NvmeSwapFaults faults;
};

/// What the store has moved; payload bytes count requests that completed
/// without error, file bytes every byte the disk transferred (alignment and
/// read-modify-write of edge blocks included).
struct NvmeSwapStats {
  int64_t bytesWritten = 0;
  int64_t bytesRead = 0;
  int64_t fileBytesWritten = 0;
  int64_t fileBytesRead = 0;
  int64_t writes = 0;
  int64_t reads = 0;
};

/// The nvme arena of one rank: `<nvmePath>/zero-swap.rank<R>.bin`, locked
/// against other jobs by `<nvmePath>/zero-swap.rank<R>.lock`.
///
/// Thread-safe: any thread may submit and wait. Requests run in submission
/// order where their (block-aligned) ranges overlap and one of them writes,
/// so a read after a write of the same bytes returns what was written
/// whether or not the caller waited on the write; disjoint requests overlap.
/// The caller's memory must stay valid (and, for a write, unchanged) until
/// the ticket is waited on.
class NvmeSwapSpace {
public:
  /// Identifies a submitted request until it is waited on; 0 is none.
  using Ticket = uint64_t;

  /// Checks the directory, takes the lock, creates the file and starts the
  /// worker. Fails with the path and the reason: a missing or non-directory
  /// nvmePath, a directory where the file cannot be created, a lock held by
  /// another process, a refused O_DIRECT under kRequire, a disk too small.
  static StatusOr<std::unique_ptr<NvmeSwapSpace>>
  create(const NvmeSwapOptions &options);

  /// Waits for every request, then removes the file and the lock.
  ~NvmeSwapSpace();
  NvmeSwapSpace(const NvmeSwapSpace &) = delete;
  NvmeSwapSpace &operator=(const NvmeSwapSpace &) = delete;

  /// Copies `bytes` from `src` to bytes [offset, offset + bytes) of the
  /// arena. `label` (the tensor's name) and the current step name the
  /// request in errors. An invalid range is reported by wait().
  Ticket write(int64_t offset, const void *src, int64_t bytes,
               const std::string &label);
  /// Copies bytes [offset, offset + bytes) of the arena to `dst`. Reading
  /// bytes whose last write failed is an error naming that write.
  Ticket read(int64_t offset, void *dst, int64_t bytes,
              const std::string &label);

  /// Blocks until the request is complete; its error, if any. Each ticket
  /// is waited on once (by wait() or drain()).
  Status wait(Ticket ticket);
  /// Blocks until every request submitted so far is complete, and waits on
  /// all their tickets; the first error among them.
  Status drain();

  /// The step that errors name from now on (the executor sets it); -1 (the
  /// default) for none.
  void setStep(int64_t step);

  /// The swap file's path (the file itself is unlinked once open, so that
  /// a crashed job leaves no arena behind).
  const std::string &path() const;
  bool directIo() const;
  /// One line on how the store falls short of what was asked (buffered I/O
  /// in place of O_DIRECT), empty if it does not; for the caller to print.
  const std::string &notice() const;
  NvmeSwapStats stats() const;

  class Impl;

private:
  explicit NvmeSwapSpace(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_NVMESWAP_H
