//===- FileRead.cpp - whole-file reads that report what has arrived -------===//
//
// readDirect: the file is cut into chunks; up to `depth` chunks are read at
// once, each request for whole blocks (the last one past the end of the file,
// which O_DIRECT answers short). Completions come in any order; `arrived` is
// called over the prefix of chunks that are complete. Every request is
// reaped before returning, also on an error, since the kernel writes into
// the caller's memory until then. readBuffered: a reader thread and the
// caller's thread hand over the count of bytes read under a mutex.
//
//===----------------------------------------------------------------------===//

#include "FileRead.h"

#include "IOSupport.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#ifdef ZERO_RUNTIME_HAVE_LIBURING
#include <liburing.h>
#endif

namespace zero::runtime::io {

namespace {
const char *describeFileType(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a plain file";
}
} // namespace

StatusOr<int> openRegularFile(const std::string &path, int flags) {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer without it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
  if (fd < 0)
    return openError(path, "cannot open");
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return errnoError(path, "cannot stat", error);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return ZERO_ERROR(kInvalidArgument,
                      path + ": not a regular file (" +
                          describeFileType(info.st_mode) + ")");
  }
  // Reads of a regular file never block on O_NONBLOCK's account, but the
  // descriptor is handed on (to stdio, to io_uring) as an ordinary one.
  int status = ::fcntl(fd, F_GETFL);
  if (status < 0 || ::fcntl(fd, F_SETFL, status & ~O_NONBLOCK) < 0) {
    int error = errno;
    ::close(fd);
    return errnoError(path, "cannot clear O_NONBLOCK", error);
  }
  return fd;
}

StatusOr<MappedFile> mapRegularFile(const std::string &path) {
  StatusOr<int> opened = openRegularFile(path);
  if (!opened.isOk())
    return opened.status();
  const int fd = *opened;
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return errnoError(path, "cannot stat", error);
  }
  MappedFile file;
  file.size = static_cast<size_t>(info.st_size);
  if (file.size == 0) { // mmap refuses an empty mapping
    ::close(fd);
    return file;
  }
  void *mapped = ::mmap(nullptr, file.size, PROT_READ, MAP_PRIVATE, fd, 0);
  int mapError = errno;
  ::close(fd); // The mapping stays valid without the descriptor.
  if (mapped == MAP_FAILED)
    return ZERO_ERROR(kResourceExhausted,
                      path + ": cannot map: " + std::strerror(mapError));
  const size_t size = file.size;
  file.data = std::shared_ptr<const char>(
      static_cast<const char *>(mapped),
      [size](const char *p) { ::munmap(const_cast<char *>(p), size); });
  return file;
}

StatusOr<std::string> readRegularFile(const std::string &path,
                                      const std::string &what,
                                      size_t maxBytes) {
  StatusOr<int> opened = openRegularFile(path);
  if (!opened.isOk())
    return opened.status();
  const int fd = *opened;
  std::string text;
  char chunk[1 << 16];
  while (true) {
    ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      int error = errno;
      ::close(fd);
      return errnoError(path, "cannot read " + what, error);
    }
    if (got == 0)
      break;
    if (text.size() + static_cast<size_t>(got) > maxBytes) {
      ::close(fd);
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + what + " is larger than the " +
                            std::to_string(maxBytes) + " bytes allowed");
    }
    text.append(chunk, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

#ifndef ZERO_RUNTIME_HAVE_LIBURING

StatusOr<std::optional<size_t>>
readDirect(const std::string &, char *, size_t,
           const std::function<void(size_t, size_t)> &, DirectReadOptions) {
  return std::optional<size_t>(); // built without liburing
}

#else

namespace {

/// One chunk of the file: [offset, offset + length), `done` bytes of it
/// read so far.
struct Chunk {
  size_t offset = 0;
  size_t length = 0;
  size_t done = 0;
  bool complete = false;
};

class DirectReader {
public:
  DirectReader(const std::string &path, char *data, size_t size,
               DirectReadOptions options)
      : path_(path), data_(data), size_(size), options_(options) {}

  ~DirectReader() {
    if (ringReady_)
      io_uring_queue_exit(&ring_);
    if (fd_ >= 0)
      ::close(fd_);
  }

  /// False where this way of reading is not available: the file system
  /// refuses O_DIRECT, or the kernel (or a seccomp filter) io_uring.
  StatusOr<bool> open() {
    // Checked as a regular file first (a FIFO is refused, not read another
    // way), then switched to O_DIRECT: EINVAL where the file system refuses
    // it, to be read another way.
    StatusOr<int> opened = openRegularFile(path_);
    if (!opened.isOk())
      return opened.status();
    fd_ = *opened;
    int status = ::fcntl(fd_, F_GETFL);
    if (status < 0)
      return errnoError(path_, "cannot read the file status flags", errno);
    if (::fcntl(fd_, F_SETFL, status | O_DIRECT) < 0) {
      if (errno == EINVAL)
        return false;
      return errnoError(path_, "cannot set O_DIRECT", errno);
    }
    if (io_uring_queue_init(options_.depth, &ring_, 0) < 0)
      return false;
    ringReady_ = true;
    // IORING_OP_READ came with Linux 5.6: on an older kernel every read
    // would fail with EINVAL.
    io_uring_probe *probe = io_uring_get_probe_ring(&ring_);
    const bool reads =
        probe && io_uring_opcode_supported(probe, IORING_OP_READ);
    if (probe)
      io_uring_free_probe(probe);
    if (!reads)
      return false;
    for (size_t offset = 0; offset < size_; offset += options_.chunkBytes)
      chunks_.push_back(
          {offset, std::min(options_.chunkBytes, size_ - offset), 0, false});
    return true;
  }

  StatusOr<size_t> run(const std::function<void(size_t, size_t)> &arrived) {
    Status failure = Status::ok();
    size_t next = 0;      // the first chunk not yet asked for
    size_t delivered = 0; // the chunks passed to `arrived`
    while (true) {
      while (failure.isOk() && prepared_ + inKernel_ < options_.depth &&
             next < chunks_.size() && chunks_[next].offset < end_)
        if (!submit(next++)) {
          failure = ZERO_ERROR(kInternal, path_ + ": io_uring ring full");
          break;
        }
      if (failure.isOk())
        failure = submitPrepared();
      // Requests never submitted are dropped with the ring; those in the
      // kernel are reaped before returning, since it writes into `data`.
      if (inKernel_ == 0)
        break;
      io_uring_cqe *cqe = nullptr;
      int rc = io_uring_wait_cqe(&ring_, &cqe);
      if (rc == -EINTR || rc == -EAGAIN)
        continue;
      if (rc < 0) {
        // Nothing more can be reaped. The kernel pinned the pages of the
        // requests in flight, so they land there and not in memory the
        // caller reuses (the rank file's buffer is its own mapping).
        return errnoError(path_, "io_uring_wait_cqe", -rc);
      }
      const size_t index = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
      const int result = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      --inKernel_;
      if (failure.isOk())
        failure = complete(index, result);
      // The complete prefix, up to where the file ends: chunks past the end
      // of a file cut short read nothing and give no range.
      while (failure.isOk() && delivered < chunks_.size() &&
             chunks_[delivered].complete) {
        const Chunk &chunk = chunks_[delivered++];
        const size_t stop = std::min(chunk.offset + chunk.done, end_);
        if (stop > chunk.offset)
          arrived(chunk.offset, stop);
      }
    }
    if (!failure.isOk())
      return failure;
    return std::min(end_, size_);
  }

private:
  bool submit(size_t index) {
    io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
    if (!sqe)
      return false;
    Chunk &chunk = chunks_[index];
    // Whole blocks from a block boundary: the rest of the chunk, the last
    // block past the end of the file where it ends inside it.
    const size_t begin = chunk.offset + chunk.done;
    const size_t length =
        roundUpToDirectBlocks(chunk.offset + chunk.length) - begin;
    io_uring_prep_read(sqe, fd_, data_ + begin, static_cast<unsigned>(length),
                       begin);
    io_uring_sqe_set_data64(sqe, index);
    ++prepared_;
    return true;
  }

  /// Hands the prepared requests to the kernel. Out of kernel resources
  /// with nothing in flight, it tries again shortly: waiting for a
  /// completion then would wait for ever.
  Status submitPrepared() {
    while (prepared_ > 0) {
      int rc = io_uring_submit(&ring_);
      if (rc > 0) {
        prepared_ -= std::min<unsigned>(prepared_, rc);
        inKernel_ += rc;
        continue;
      }
      if (rc == -EINTR)
        continue;
      if (rc == -EAGAIN || rc == -EBUSY || rc == 0) {
        if (inKernel_ > 0)
          return Status::ok(); // again after a completion
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      return errnoError(path_, "io_uring_submit", -rc);
    }
    return Status::ok();
  }

  /// Takes a read's result: the chunk is complete, asked for again from
  /// where it stopped, or the file turns out to end inside it.
  Status complete(size_t index, int result) {
    Chunk &chunk = chunks_[index];
    if (result == -EINTR || result == -EAGAIN)
      return resubmit(index);
    if (result < 0)
      return errnoError(path_, "cannot read", -result);
    chunk.done += static_cast<size_t>(result);
    if (chunk.done >= chunk.length) {
      chunk.done = chunk.length;
      chunk.complete = true;
      return Status::ok();
    }
    // Short: the end of the file (cut short since its size was taken) unless
    // it stopped at a block boundary with bytes after it.
    if (result == 0 || (chunk.offset + chunk.done) % kDirectAlignment != 0) {
      end_ = std::min(end_, chunk.offset + chunk.done);
      chunk.complete = true;
      return Status::ok();
    }
    return resubmit(index);
  }

  Status resubmit(size_t index) {
    if (!submit(index))
      return ZERO_ERROR(kInternal, path_ + ": io_uring ring full");
    return Status::ok();
  }

  std::string path_;
  char *data_;
  size_t size_;
  DirectReadOptions options_;
  int fd_ = -1;
  io_uring ring_{};
  bool ringReady_ = false;
  std::vector<Chunk> chunks_;
  unsigned prepared_ = 0;                // requests prepared, not yet submitted
  unsigned inKernel_ = 0;                // requests submitted, not yet reaped
  size_t end_ = static_cast<size_t>(-1); // where the file was found to end
};

} // namespace

StatusOr<std::optional<size_t>>
readDirect(const std::string &path, char *data, size_t size,
           const std::function<void(size_t, size_t)> &arrived,
           DirectReadOptions options) {
  DirectReader reader(path, data, size, options);
  StatusOr<bool> opened = reader.open();
  if (!opened.isOk())
    return opened.status();
  if (!*opened)
    return std::optional<size_t>();
  StatusOr<size_t> read = reader.run(arrived);
  if (!read.isOk())
    return read.status();
  return std::optional<size_t>(*read);
}

#endif // ZERO_RUNTIME_HAVE_LIBURING

StatusOr<size_t>
readBuffered(const std::string &path, char *data, size_t size,
             const std::function<void(size_t, size_t)> &arrived,
             size_t chunkBytes) {
  StatusOr<int> opened = openRegularFile(path);
  if (!opened.isOk())
    return opened.status();
  const int fd = *opened;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::mutex mutex;
  std::condition_variable progress;
  size_t ready = 0;
  bool finished = false;
  int error = 0;
  std::thread reader([&] {
    size_t done = 0;
    while (done < size) {
      ssize_t got = ::read(fd, data + done, std::min(chunkBytes, size - done));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0) {
        std::lock_guard<std::mutex> lock(mutex);
        error = got < 0 ? errno : 0;
        break;
      }
      done += static_cast<size_t>(got);
      std::lock_guard<std::mutex> lock(mutex);
      ready = done;
      progress.notify_one();
    }
    std::lock_guard<std::mutex> lock(mutex);
    finished = true;
    progress.notify_one();
  });
  size_t delivered = 0;
  while (true) {
    size_t upTo;
    bool last;
    {
      std::unique_lock<std::mutex> lock(mutex);
      progress.wait(lock, [&] { return finished || ready > delivered; });
      upTo = ready;
      last = finished;
    }
    if (upTo > delivered)
      arrived(delivered, upTo);
    delivered = upTo;
    if (last)
      break;
  }
  reader.join();
  ::close(fd);
  if (error != 0)
    return errnoError(path, "cannot read", error);
  return delivered;
}

} // namespace zero::runtime::io
