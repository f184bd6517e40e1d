//===- NvmeSwap.cpp - a rank's nvme arena in a file, over io_uring --------===//
//
// One worker thread owns the io_uring. It cuts each request into chunks of at
// most one bounce buffer, aligned to the file's block alignment, places them
// one after another in the pool (bufferCount x bufferSize bytes, used as a
// ring, so that small tensors pack), and keeps up to queueDepth I/O requests
// in flight: while the disk moves one chunk, the worker copies the next into
// the pool (a write) or the previous out of it (a read). A write whose first or
// last block is partial reads that block first (read-modify-write). Submitters
// wake the worker through an eventfd polled on the ring, so that it waits in
// one place.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/NvmeSwap.h"

#include <liburing.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zero::runtime {

namespace {

int64_t roundDown(int64_t value, int64_t alignment) {
  return value & ~(alignment - 1);
}

int64_t roundUp(int64_t value, int64_t alignment) {
  return roundDown(value + alignment - 1, alignment);
}

StatusCode codeOf(int error) {
  switch (error) {
  case ENOSPC:
  case EDQUOT:
  case EFBIG:
    return StatusCode::kResourceExhausted;
  case ENOENT:
    return StatusCode::kNotFound;
  case EWOULDBLOCK:
    return StatusCode::kFailedPrecondition;
  default:
    return StatusCode::kUnavailable;
  }
}

Status errnoStatus(const std::string &path, const std::string &what,
                   int error) {
  return Status(codeOf(error), path + ": " + what + ": " + std::strerror(error),
                __FILE__, __LINE__);
}

/// Byte ranges of the arena whose last write failed, each with the tensor
/// that wrote it: reading them is an error until a write succeeds there.
class FailedRanges {
public:
  struct Range {
    int64_t begin;
    int64_t end;
    std::string label;
  };

  void add(int64_t begin, int64_t end, const std::string &label) {
    erase(begin, end);
    ranges_[begin] = {end, label};
  }

  void erase(int64_t begin, int64_t end) {
    auto it = ranges_.lower_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second.end > begin)
      --it;
    while (it != ranges_.end() && it->first < end) {
      int64_t first = it->first;
      Entry entry = it->second;
      it = ranges_.erase(it);
      if (first < begin)
        ranges_[first] = {begin, entry.label};
      if (entry.end > end)
        ranges_[end] = {entry.end, entry.label};
    }
  }

  /// The first failed range that overlaps [begin, end).
  std::optional<Range> find(int64_t begin, int64_t end) const {
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second.end > begin)
      --it;
    if (it == ranges_.end() || it->first >= end)
      return std::nullopt;
    return Range{it->first, it->second.end, it->second.label};
  }

private:
  struct Entry {
    int64_t end;
    std::string label;
  };
  std::map<int64_t, Entry> ranges_;
};

struct Job {
  NvmeSwapSpace::Ticket ticket = 0;
  bool isWrite = false;
  int64_t offset = 0;
  int64_t bytes = 0;
  std::byte *memory = nullptr;
  std::string label;
  int64_t step = -1;
  int64_t nextChunk = 0; // aligned file offset of the next chunk
  int64_t fileEnd = 0;   // aligned end of the request's blocks
  int chunksInFlight = 0;
  bool allStarted = false;
  bool failed = false;
  Status status;
};

struct Chunk;

/// One io_uring request: at most blockSize bytes of a chunk.
struct Request {
  Chunk *chunk = nullptr;
  bool isWrite = false;
  bool edge = false; // the read of a read-modify-write
  int64_t fileOffset = 0;
  int64_t length = 0;
  std::byte *memory = nullptr;
};

/// The part of a job that one stretch of the pool carries.
struct Chunk {
  std::byte *buffer = nullptr;
  int64_t poolOffset = 0;
  Job *job = nullptr;                 // null once done
  int64_t fileBegin = 0, fileEnd = 0; // aligned
  int64_t dataBegin = 0, dataEnd = 0; // the job's bytes in it
  bool readingEdges = false;
  int requestsLeft = 0;
  std::deque<Request> requests; // a deque: pending_ points into it
};

} // namespace

class NvmeSwapSpace::Impl {
public:
  ~Impl();
  Status open(const NvmeSwapOptions &options);
  Ticket submit(bool isWrite, int64_t offset, std::byte *memory, int64_t bytes,
                const std::string &label);
  Status wait(Ticket ticket);
  Status drain();

  NvmeSwapOptions options;
  std::string path;
  std::string lockPath;
  std::string notice;
  bool directIo = false;
  std::atomic<int64_t> step{-1};
  std::atomic<int64_t> bytesWritten{0}, bytesRead{0}, fileBytesWritten{0},
      fileBytesRead{0}, writes{0}, reads{0};

private:
  Status lock();
  Status openFile();
  void run();
  void takeIncoming(bool &stopping);
  void startChunks();
  void startChunk(Job &job, Chunk &chunk, int64_t begin, int64_t end);
  void addRequests(Chunk &chunk, int64_t begin, int64_t end, bool isWrite,
                   bool edge);
  bool conflicts(int64_t begin, int64_t end, bool isWrite) const;
  int64_t allocate(int64_t bytes) const;
  void submitRequests();
  void submitRing();
  bool armPoll();
  void waitForCompletions();
  void completeRequest(Request &request, int result);
  void chunkDone(Chunk &chunk);
  void finishChunks();
  void finishStarted();
  void complete(Job &job);
  void fail(Job &job, Status status);
  void breakDown(Status status);
  Status ioError(const Job &job, const Request &request, int error) const;
  std::string context(const Job &job) const;

  int lockFd_ = -1;
  int fd_ = -1;
  int eventFd_ = -1;
  bool ringReady_ = false;
  io_uring ring_;
  std::byte *buffers_ = nullptr;
  int64_t poolBytes_ = 0;
  // The chunks in the pool, oldest first: the bytes from the oldest's
  // poolOffset to poolHead_ (wrapping around) are taken. Done chunks leave
  // from the front only, so one slow chunk holds the space after it. A
  // deque: requests point at its elements.
  std::deque<Chunk> chunks_;
  int64_t poolHead_ = 0;
  std::thread worker_;

  // Shared with submitters, under mutex_.
  std::mutex mutex_;
  std::condition_variable done_;
  std::deque<std::unique_ptr<Job>> incoming_;
  std::map<Ticket, std::optional<Status>> tickets_;
  int64_t incomplete_ = 0;
  // Who waits, so that a completion wakes the submitters only when one of
  // them can go on.
  std::multiset<Ticket> awaited_;
  int drainers_ = 0;
  Ticket nextTicket_ = 1;
  bool stop_ = false;
  std::optional<Status> broken_;

  // The worker's own.
  std::deque<std::unique_ptr<Job>> starting_; // chunks left to start
  std::vector<std::unique_ptr<Job>> running_; // chunks in flight only
  std::deque<Request *> pending_;             // requests not yet submitted
  std::vector<Chunk *> finished_; // chunks whose requests all completed
  int chunksInFlight_ = 0;
  int requestsInFlight_ = 0;
  FailedRanges failedRanges_;
  char pollTag_ = 0;
  bool pollArmed_ = false;
  bool dead_ = false; // broken down: the worker only waits to be stopped
};

NvmeSwapSpace::Impl::~Impl() {
  if (worker_.joinable()) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      stop_ = true;
    }
    done_.notify_all(); // a broken-down worker waits on it
    uint64_t one = 1;
    (void)!::write(eventFd_, &one, sizeof(one));
    worker_.join();
  }
  if (ringReady_)
    io_uring_queue_exit(&ring_);
  if (eventFd_ >= 0)
    ::close(eventFd_);
  if (fd_ >= 0)
    ::close(fd_);
  std::free(buffers_);
  // Unlinked while still locked, so that no other job locks this inode
  // (lock() checks the inode it locked is the one the path names).
  if (lockFd_ >= 0) {
    ::unlink(lockPath.c_str());
    ::close(lockFd_);
  }
}

Status NvmeSwapSpace::Impl::open(const NvmeSwapOptions &opts) {
  options = opts;
  const std::string &dir = options.nvmePath;
  if (dir.empty())
    return ZERO_ERROR(kInvalidArgument, "nvme_path is empty");
  auto invalid = [&](const std::string &what) {
    return ZERO_ERROR(kInvalidArgument, "nvme swap of rank " +
                                            std::to_string(options.rank) +
                                            " in '" + dir + "': " + what);
  };
  if (options.rank < 0)
    return invalid("rank " + std::to_string(options.rank) + " is negative");
  if (options.arenaBytes < 0)
    return invalid("the arena size " + std::to_string(options.arenaBytes) +
                   " is negative");
  int64_t alignment = options.alignment;
  if (alignment < 512 || (alignment & (alignment - 1)) != 0)
    return invalid("alignment " + std::to_string(alignment) +
                   " is not a power of two of at least 512");
  if (options.bufferCount < 1 || options.bufferCount > 1024)
    return invalid("buffer_count " + std::to_string(options.bufferCount) +
                   " is not in [1, 1024]");
  if (options.bufferSize < 1 || options.bufferSize > (int64_t(1) << 32))
    return invalid("buffer_size " + std::to_string(options.bufferSize) +
                   " is not in [1, 2^32]");
  if (options.blockSize < 1 || options.blockSize > (int64_t(1) << 30))
    return invalid("aio.block_size " + std::to_string(options.blockSize) +
                   " is not in [1, 2^30]");
  if (options.queueDepth < 1 || options.queueDepth > 4096)
    return invalid("aio.queue_depth " + std::to_string(options.queueDepth) +
                   " is not in [1, 4096]");
  options.bufferSize = roundUp(options.bufferSize, alignment);
  options.blockSize = roundUp(options.blockSize, alignment);

  struct stat info;
  if (::stat(dir.c_str(), &info) != 0)
    return errnoStatus(dir, "nvme_path", errno);
  if (!S_ISDIR(info.st_mode))
    return errnoStatus(dir, "nvme_path", ENOTDIR);
  std::string stem = dir + (dir.back() == '/' ? "" : "/") + "zero-swap.rank" +
                     std::to_string(options.rank);
  path = stem + ".bin";
  lockPath = stem + ".lock";
  ZERO_RETURN_IF_ERROR(lock());
  ZERO_RETURN_IF_ERROR(openFile());

  // Huge pages make a request one physically contiguous DMA segment: with
  // 4 KiB pages a 1 MiB request has 256 segments, more than a device takes
  // in one command (virtio-blk: 254), and the block layer splits it.
  // docs/PERFORMANCE.md measures the difference.
  void *memory = nullptr;
  size_t total = size_t(options.bufferCount) * size_t(options.bufferSize);
  size_t poolAlignment = options.hugePages
                             ? std::max<size_t>(size_t(2) << 20, alignment)
                             : size_t(alignment);
  if (int error = ::posix_memalign(&memory, poolAlignment, total))
    return errnoStatus(path,
                       "cannot allocate " + std::to_string(total) +
                           " bytes of bounce buffers",
                       error);
  buffers_ = static_cast<std::byte *>(memory);
  if (options.hugePages)
    (void)::madvise(memory, total, MADV_HUGEPAGE); // advice: may be ignored
  poolBytes_ = int64_t(total);

  eventFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (eventFd_ < 0)
    return errnoStatus(path, "cannot create an eventfd", errno);
  // One entry more than the requests for the eventfd's poll.
  if (int rc = io_uring_queue_init(options.queueDepth + 1, &ring_, 0); rc < 0)
    return errnoStatus(path, "cannot set up io_uring", -rc);
  ringReady_ = true;
  worker_ = std::thread([this] { run(); });
  return Status::ok();
}

Status NvmeSwapSpace::Impl::lock() {
  std::string holder = "rank " + std::to_string(options.rank) + "'s lock";
  // Retried while the file this job locked is not the one the path names: a
  // job that ended unlinked it between our open and our flock.
  for (int attempt = 0; attempt < 16; ++attempt) {
    int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return errnoStatus(lockPath, "cannot create the swap lock file", errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int error = errno;
      char pid[32] = {0};
      ssize_t got = ::pread(fd, pid, sizeof(pid) - 1, 0);
      ::close(fd);
      std::string who = got > 0 ? " (pid " + std::string(pid, got) + ")" : "";
      if (error == EWOULDBLOCK)
        return Status(
            StatusCode::kFailedPrecondition,
            lockPath + ": another job" + who +
                " is swapping to this nvme_path as rank " +
                std::to_string(options.rank) +
                "; give each job its own nvme_path: " + std::strerror(error),
            __FILE__, __LINE__);
      return errnoStatus(lockPath, "cannot lock the swap lock file", error);
    }
    struct stat locked, named;
    if (::fstat(fd, &locked) == 0 && ::stat(lockPath.c_str(), &named) == 0 &&
        locked.st_dev == named.st_dev && locked.st_ino == named.st_ino) {
      lockFd_ = fd;
      std::string pid = std::to_string(::getpid());
      if (::ftruncate(fd, 0) != 0 ||
          ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size()))
        return errnoStatus(lockPath, "cannot write the swap lock file", errno);
      return Status::ok();
    }
    ::close(fd);
  }
  return errnoStatus(lockPath,
                     "cannot lock the swap lock file: it keeps "
                     "being replaced",
                     EAGAIN);
}

Status NvmeSwapSpace::Impl::openFile() {
  // The lock is held: a file of this name is a crashed job's, replaced.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0)
    return errnoStatus(path, "cannot create the swap file", errno);
  // Nameless from now on: the blocks go back to the file system when the
  // descriptor closes, however the job ends.
  if (::unlink(path.c_str()) != 0)
    return errnoStatus(path, "cannot unlink the open swap file", errno);

  if (options.directIo != DirectIoMode::kOff) {
    // F_SETFL refuses O_DIRECT (EINVAL) where the file system lacks it.
    int error = 0;
    int flags = ::fcntl(fd_, F_GETFL);
    if (options.faults.refuseDirectIo)
      error = EINVAL;
    else if (flags < 0 || ::fcntl(fd_, F_SETFL, flags | O_DIRECT) != 0)
      error = errno;
    if (error == 0) {
      directIo = true;
    } else if (options.directIo == DirectIoMode::kRequire) {
      return errnoStatus(path,
                         "the file system refuses O_DIRECT, which the "
                         "options require",
                         error);
    } else {
      notice = path + ": the file system refuses O_DIRECT (" +
               std::strerror(error) + "): swapping through the page cache";
    }
  }

  int64_t fileBytes = roundUp(options.arenaBytes, options.alignment);
  if (fileBytes == 0)
    return Status::ok();
  if (options.preallocate) {
    // fallocate, not posix_fallocate: where the file system cannot reserve
    // blocks, glibc's emulation would write the whole arena.
    if (::fallocate(fd_, 0, 0, fileBytes) == 0)
      return Status::ok();
    int error = errno;
    if (error != EOPNOTSUPP)
      return errnoStatus(path,
                         "cannot reserve " + std::to_string(fileBytes) +
                             " bytes for rank " + std::to_string(options.rank) +
                             "'s nvme arena",
                         error);
  }
  if (::ftruncate(fd_, fileBytes) != 0)
    return errnoStatus(path,
                       "cannot size the swap file to " +
                           std::to_string(fileBytes) + " bytes",
                       errno);
  return Status::ok();
}

NvmeSwapSpace::Ticket NvmeSwapSpace::Impl::submit(bool isWrite, int64_t offset,
                                                  std::byte *memory,
                                                  int64_t bytes,
                                                  const std::string &label) {
  auto job = std::make_unique<Job>();
  job->isWrite = isWrite;
  job->offset = offset;
  job->bytes = bytes;
  job->memory = memory;
  job->label = label;
  job->step = step.load();
  std::optional<Status> early;
  if (offset < 0 || bytes < 0 || offset > options.arenaBytes ||
      bytes > options.arenaBytes - offset)
    early = Status(StatusCode::kOutOfRange,
                   path + ": " + context(*job) + ": cannot " +
                       (isWrite ? "write" : "read") + " tensor '" + label +
                       "': bytes [" + std::to_string(offset) + ", " +
                       std::to_string(offset) + " + " + std::to_string(bytes) +
                       ") are not inside the nvme arena of " +
                       std::to_string(options.arenaBytes) + " bytes",
                   __FILE__, __LINE__);
  else if (bytes > 0 && !memory)
    early = Status(StatusCode::kInvalidArgument,
                   path + ": " + context(*job) + ": cannot " +
                       (isWrite ? "write" : "read") + " tensor '" + label +
                       "': its memory is null",
                   __FILE__, __LINE__);
  else if (bytes == 0)
    early = Status::ok();

  std::unique_lock<std::mutex> guard(mutex_);
  Ticket ticket = nextTicket_++;
  job->ticket = ticket;
  if (!early && broken_)
    early = *broken_;
  if (early) {
    tickets_[ticket] = std::move(*early);
    return ticket;
  }
  job->nextChunk = roundDown(offset, options.alignment);
  job->fileEnd = roundUp(offset + bytes, options.alignment);
  tickets_[ticket] = std::nullopt;
  ++incomplete_;
  incoming_.push_back(std::move(job));
  guard.unlock();
  uint64_t one = 1;
  (void)!::write(eventFd_, &one, sizeof(one));
  return ticket;
}

Status NvmeSwapSpace::Impl::wait(Ticket ticket) {
  std::unique_lock<std::mutex> guard(mutex_);
  while (true) {
    auto it = tickets_.find(ticket);
    if (it == tickets_.end())
      return ZERO_ERROR(kInvalidArgument,
                        path + ": ticket " + std::to_string(ticket) +
                            " is not outstanding (never issued, or already "
                            "waited on)");
    if (it->second) {
      Status status = std::move(*it->second);
      tickets_.erase(it);
      return status;
    }
    auto awaited = awaited_.insert(ticket);
    done_.wait(guard);
    awaited_.erase(awaited);
  }
}

Status NvmeSwapSpace::Impl::drain() {
  std::unique_lock<std::mutex> guard(mutex_);
  ++drainers_;
  done_.wait(guard, [&] { return incomplete_ == 0; });
  --drainers_;
  Status first;
  for (auto &entry : tickets_)
    if (first.isOk() && !entry.second->isOk())
      first = std::move(*entry.second);
  tickets_.clear();
  return first;
}

std::string NvmeSwapSpace::Impl::context(const Job &job) const {
  std::string text = "rank " + std::to_string(options.rank);
  if (job.step >= 0)
    text += ", step " + std::to_string(job.step);
  return text;
}

Status NvmeSwapSpace::Impl::ioError(const Job &job, const Request &request,
                                    int error) const {
  std::string text =
      path + ": " + context(job) + ": cannot " +
      (job.isWrite ? "write" : "read") + " tensor '" + job.label +
      "' at offset " + std::to_string(job.offset) + " (" +
      std::to_string(job.bytes) + " bytes): the " +
      (request.isWrite ? "write" : "read") + " of " +
      std::to_string(request.length) + " bytes at file offset " +
      std::to_string(request.fileOffset) +
      (request.edge ? " (the edge block of a partial write)" : "") +
      " failed: " + (error ? std::strerror(error) : "no bytes transferred");
  if (error == EINVAL && directIo)
    text += " (O_DIRECT with alignment " + std::to_string(options.alignment) +
            ": the device may need a larger alignment)";
  return Status(error ? codeOf(error) : StatusCode::kResourceExhausted, text,
                __FILE__, __LINE__);
}

//===----------------------------------------------------------------------===//
// The worker
//===----------------------------------------------------------------------===//

void NvmeSwapSpace::Impl::run() {
  bool stopping = false;
  while (!dead_) {
    if (!pollArmed_ && armPoll())
      submitRing();
    takeIncoming(stopping);
    startChunks();
    submitRequests();
    if (dead_)
      return;
    if (!finished_.empty()) {
      finishChunks();
      continue;
    }
    if (stopping && starting_.empty() && running_.empty() &&
        chunksInFlight_ == 0)
      return;
    waitForCompletions();
  }
}

void NvmeSwapSpace::Impl::takeIncoming(bool &stopping) {
  std::lock_guard<std::mutex> guard(mutex_);
  while (!incoming_.empty()) {
    starting_.push_back(std::move(incoming_.front()));
    incoming_.pop_front();
  }
  stopping = stop_;
}

bool NvmeSwapSpace::Impl::conflicts(int64_t begin, int64_t end,
                                    bool isWrite) const {
  for (const Chunk &chunk : chunks_)
    if (chunk.job && chunk.fileBegin < end && begin < chunk.fileEnd &&
        (isWrite || chunk.job->isWrite))
      return true;
  return false;
}

int64_t NvmeSwapSpace::Impl::allocate(int64_t bytes) const {
  if (chunks_.empty())
    return 0;
  int64_t tail = chunks_.front().poolOffset;
  if (poolHead_ > tail) { // taken: [tail, head)
    if (poolHead_ + bytes <= poolBytes_)
      return poolHead_;
    return bytes <= tail ? 0 : -1;
  }
  // Wrapped, taken: [tail, end) and [0, head).
  return poolHead_ + bytes <= tail ? poolHead_ : -1;
}

void NvmeSwapSpace::Impl::startChunks() {
  while (!starting_.empty()) {
    Job &job = *starting_.front();
    if (job.failed || job.nextChunk >= job.fileEnd) {
      finishStarted();
      continue;
    }
    if (!options.overlapEvents && chunksInFlight_ > 0)
      return;
    int64_t begin = job.nextChunk;
    int64_t end = std::min(job.fileEnd, begin + options.bufferSize);
    int64_t poolOffset = allocate(end - begin);
    if (poolOffset < 0)
      return;
    // Overlapping requests run in submission order (head-of-line).
    if (conflicts(begin, end, job.isWrite))
      return;
    job.nextChunk = end;
    int64_t dataBegin = std::max(begin, job.offset);
    int64_t dataEnd = std::min(end, job.offset + job.bytes);
    if (!job.isWrite) {
      if (auto range = failedRanges_.find(dataBegin, dataEnd)) {
        fail(job, Status(StatusCode::kFailedPrecondition,
                         path + ": " + context(job) + ": cannot read tensor '" +
                             job.label + "' at offset " +
                             std::to_string(job.offset) + " (" +
                             std::to_string(job.bytes) + " bytes): bytes [" +
                             std::to_string(range->begin) + ", " +
                             std::to_string(range->end) +
                             ") were last written by tensor '" + range->label +
                             "', whose write failed",
                         __FILE__, __LINE__));
        continue;
      }
    }
    chunks_.emplace_back();
    Chunk &chunk = chunks_.back();
    chunk.poolOffset = poolOffset;
    chunk.buffer = buffers_ + poolOffset;
    poolHead_ = poolOffset + (end - begin);
    startChunk(job, chunk, begin, end);
    // The disk starts on this chunk while the next one is copied.
    submitRequests();
    if (dead_)
      return;
  }
}

void NvmeSwapSpace::Impl::startChunk(Job &job, Chunk &chunk, int64_t begin,
                                     int64_t end) {
  chunk.job = &job;
  chunk.fileBegin = begin;
  chunk.fileEnd = end;
  chunk.dataBegin = std::max(begin, job.offset);
  chunk.dataEnd = std::min(end, job.offset + job.bytes);
  chunk.requests.clear();
  chunk.requestsLeft = 0;
  ++chunksInFlight_;
  ++job.chunksInFlight;
  if (!job.isWrite) {
    addRequests(chunk, begin, end, false, false);
    return;
  }
  // The blocks the write covers only in part keep their other bytes.
  int64_t alignment = options.alignment;
  bool head = chunk.dataBegin > begin;
  bool tail = chunk.dataEnd < end;
  chunk.readingEdges = head || tail;
  if (!chunk.readingEdges) {
    std::memcpy(chunk.buffer, job.memory + (begin - job.offset), end - begin);
    addRequests(chunk, begin, end, true, false);
    return;
  }
  if (head && tail && end - begin == alignment) {
    addRequests(chunk, begin, end, false, true);
    return;
  }
  if (head)
    addRequests(chunk, begin, begin + alignment, false, true);
  if (tail)
    addRequests(chunk, end - alignment, end, false, true);
}

void NvmeSwapSpace::Impl::addRequests(Chunk &chunk, int64_t begin, int64_t end,
                                      bool isWrite, bool edge) {
  for (int64_t at = begin; at < end; at += options.blockSize) {
    Request request;
    request.chunk = &chunk;
    request.isWrite = isWrite;
    request.edge = edge;
    request.fileOffset = at;
    request.length = std::min(end - at, options.blockSize);
    request.memory = chunk.buffer + (at - chunk.fileBegin);
    chunk.requests.push_back(request);
    pending_.push_back(&chunk.requests.back());
    ++chunk.requestsLeft;
  }
}

void NvmeSwapSpace::Impl::submitRequests() {
  bool prepared = false;
  const NvmeSwapFaults &faults = options.faults;
  while (!dead_ && !pending_.empty() &&
         requestsInFlight_ < options.queueDepth) {
    Request &request = *pending_.front();
    if (faults.failAtFileOffset >= 0 && request.isWrite == faults.failWrites &&
        step.load() >= faults.fromStep &&
        request.fileOffset <= faults.failAtFileOffset &&
        faults.failAtFileOffset < request.fileOffset + request.length) {
      pending_.pop_front();
      completeRequest(request, -faults.errorNumber);
      continue;
    }
    io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
    if (!sqe)
      break;
    pending_.pop_front();
    if (request.isWrite)
      io_uring_prep_write(sqe, fd_, request.memory, request.length,
                          request.fileOffset);
    else
      io_uring_prep_read(sqe, fd_, request.memory, request.length,
                         request.fileOffset);
    io_uring_sqe_set_data(sqe, &request);
    ++requestsInFlight_;
    if (options.singleSubmit)
      submitRing();
    else
      prepared = true;
  }
  if (prepared && !dead_)
    submitRing();
}

void NvmeSwapSpace::Impl::submitRing() {
  while (true) {
    int rc = io_uring_submit(&ring_);
    if (rc >= 0 || rc == -EINTR)
      return;
    // Out of kernel resources for now: retried once requests complete.
    if ((rc == -EAGAIN || rc == -EBUSY) && requestsInFlight_ > 0)
      return;
    if (rc == -EAGAIN || rc == -EBUSY) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    breakDown(errnoStatus(path, "io_uring_submit", -rc));
    return;
  }
}

bool NvmeSwapSpace::Impl::armPoll() {
  io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
  if (!sqe)
    return false; // the ring is full of requests not yet taken: retried
  io_uring_prep_poll_add(sqe, eventFd_, POLLIN);
  io_uring_sqe_set_data(sqe, &pollTag_);
  pollArmed_ = true;
  return true;
}

void NvmeSwapSpace::Impl::waitForCompletions() {
  io_uring_cqe *cqe = nullptr;
  int rc = io_uring_wait_cqe(&ring_, &cqe);
  if (rc == -EINTR)
    return;
  if (rc < 0) {
    breakDown(errnoStatus(path, "io_uring_wait_cqe", -rc));
    return;
  }
  unsigned head;
  unsigned seen = 0;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    ++seen;
    void *data = io_uring_cqe_get_data(cqe);
    if (data == &pollTag_) {
      uint64_t count;
      (void)!::read(eventFd_, &count, sizeof(count));
      pollArmed_ = false; // armed again at the top of the loop
      continue;
    }
    --requestsInFlight_;
    completeRequest(*static_cast<Request *>(data), cqe->res);
  }
  io_uring_cq_advance(&ring_, seen);
  // Requests waiting for a slot go before the copies out of finished chunks.
  submitRequests();
}

void NvmeSwapSpace::Impl::completeRequest(Request &request, int result) {
  Chunk &chunk = *request.chunk;
  Job &job = *chunk.job;
  if (result > 0) {
    (request.isWrite ? fileBytesWritten : fileBytesRead) += result;
    if (result < request.length) {
      // A short transfer: the rest goes again.
      request.fileOffset += result;
      request.memory += result;
      request.length -= result;
      pending_.push_front(&request);
      return;
    }
  } else {
    fail(job, ioError(job, request, -result));
  }
  if (--chunk.requestsLeft == 0)
    finished_.push_back(&chunk);
}

void NvmeSwapSpace::Impl::finishChunks() {
  std::vector<Chunk *> chunks;
  chunks.swap(finished_);
  for (Chunk *chunk : chunks)
    chunkDone(*chunk);
}

void NvmeSwapSpace::Impl::chunkDone(Chunk &chunk) {
  Job &job = *chunk.job;
  int64_t length = chunk.dataEnd - chunk.dataBegin;
  std::byte *inBuffer = chunk.buffer + (chunk.dataBegin - chunk.fileBegin);
  std::byte *inMemory = job.memory + (chunk.dataBegin - job.offset);
  if (chunk.readingEdges && !job.failed) {
    chunk.readingEdges = false;
    std::memcpy(inBuffer, inMemory, length);
    addRequests(chunk, chunk.fileBegin, chunk.fileEnd, true, false);
    return;
  }
  if (!job.failed) {
    if (job.isWrite)
      failedRanges_.erase(chunk.dataBegin, chunk.dataEnd);
    else
      std::memcpy(inMemory, inBuffer, length);
  }
  chunk.job = nullptr;
  chunk.readingEdges = false;
  --chunksInFlight_;
  while (!chunks_.empty() && !chunks_.front().job)
    chunks_.pop_front();
  if (chunks_.empty())
    poolHead_ = 0;
  if (--job.chunksInFlight == 0 && job.allStarted) {
    complete(job);
    auto it =
        std::find_if(running_.begin(), running_.end(),
                     [&](const auto &entry) { return entry.get() == &job; });
    running_.erase(it);
  }
}

void NvmeSwapSpace::Impl::finishStarted() {
  std::unique_ptr<Job> job = std::move(starting_.front());
  starting_.pop_front();
  job->allStarted = true;
  if (job->chunksInFlight == 0)
    complete(*job);
  else
    running_.push_back(std::move(job));
}

void NvmeSwapSpace::Impl::fail(Job &job, Status status) {
  if (job.failed)
    return;
  job.failed = true;
  job.status = std::move(status);
  // From now on its bytes are no tensor's: reads of them fail, whatever
  // part of the write reached the disk.
  if (job.isWrite)
    failedRanges_.add(job.offset, job.offset + job.bytes, job.label);
}

void NvmeSwapSpace::Impl::complete(Job &job) {
  if (!job.failed) {
    (job.isWrite ? bytesWritten : bytesRead) += job.bytes;
    ++(job.isWrite ? writes : reads);
  }
  bool wake;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    tickets_[job.ticket] = job.status;
    --incomplete_;
    wake = awaited_.count(job.ticket) || (drainers_ > 0 && incomplete_ == 0);
  }
  if (wake)
    done_.notify_all();
}

void NvmeSwapSpace::Impl::breakDown(Status status) {
  // The ring cannot be trusted: every request fails, now and later. The
  // requests the kernel holds are abandoned; their buffers live until the
  // ring is torn down.
  dead_ = true;
  std::deque<std::unique_ptr<Job>> jobs;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    broken_ = status;
    jobs.swap(incoming_);
  }
  for (auto &job : starting_)
    jobs.push_back(std::move(job));
  for (auto &job : running_)
    jobs.push_back(std::move(job));
  starting_.clear();
  running_.clear();
  pending_.clear();
  finished_.clear();
  chunks_.clear();
  poolHead_ = 0;
  chunksInFlight_ = 0;
  requestsInFlight_ = 0;
  for (auto &job : jobs) {
    fail(*job, status);
    complete(*job);
  }
  // Nothing more can complete (submit() sees broken_): wait for the
  // destructor.
  std::unique_lock<std::mutex> guard(mutex_);
  done_.wait(guard, [&] { return stop_; });
}

//===----------------------------------------------------------------------===//
// NvmeSwapSpace
//===----------------------------------------------------------------------===//

NvmeSwapSpace::NvmeSwapSpace(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

NvmeSwapSpace::~NvmeSwapSpace() = default;

StatusOr<std::unique_ptr<NvmeSwapSpace>>
NvmeSwapSpace::create(const NvmeSwapOptions &options) {
  auto impl = std::make_unique<Impl>();
  ZERO_RETURN_IF_ERROR(impl->open(options));
  return std::unique_ptr<NvmeSwapSpace>(new NvmeSwapSpace(std::move(impl)));
}

NvmeSwapSpace::Ticket NvmeSwapSpace::write(int64_t offset, const void *src,
                                           int64_t bytes,
                                           const std::string &label) {
  // The worker only reads through this pointer.
  return impl_->submit(
      true, offset,
      const_cast<std::byte *>(static_cast<const std::byte *>(src)), bytes,
      label);
}

NvmeSwapSpace::Ticket NvmeSwapSpace::read(int64_t offset, void *dst,
                                          int64_t bytes,
                                          const std::string &label) {
  return impl_->submit(false, offset, static_cast<std::byte *>(dst), bytes,
                       label);
}

Status NvmeSwapSpace::wait(Ticket ticket) { return impl_->wait(ticket); }

Status NvmeSwapSpace::drain() { return impl_->drain(); }

void NvmeSwapSpace::setStep(int64_t step) { impl_->step = step; }

const std::string &NvmeSwapSpace::path() const { return impl_->path; }

bool NvmeSwapSpace::directIo() const { return impl_->directIo; }

const std::string &NvmeSwapSpace::notice() const { return impl_->notice; }

NvmeSwapStats NvmeSwapSpace::stats() const {
  NvmeSwapStats stats;
  stats.bytesWritten = impl_->bytesWritten;
  stats.bytesRead = impl_->bytesRead;
  stats.fileBytesWritten = impl_->fileBytesWritten;
  stats.fileBytesRead = impl_->fileBytesRead;
  stats.writes = impl_->writes;
  stats.reads = impl_->reads;
  return stats;
}

} // namespace zero::runtime
