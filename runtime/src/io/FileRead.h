//===- FileRead.h - whole-file reads that report what has arrived -*- C++
//-*-===//
//
// Private to the runtime: how every reader opens a file (openRegularFile:
// never a FIFO, a device or a directory, and never blocking in open()), and
// how checkpoint loads read a rank file, so that
// the caller checksums what has arrived while the rest is read. A single
// buffered read() at a time leaves a virtual disk idle between requests
// and copies every byte out of the page cache; O_DIRECT reads through
// io_uring keep several requests at the disk and land in the caller's
// memory (readDirect). readBuffered is the way where that is not available.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SRC_IO_FILEREAD_H
#define ZERO_RUNTIME_SRC_IO_FILEREAD_H

#include "zero/runtime/Status.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace zero::runtime::io {

/// Opens the file at `path` for reading (O_RDONLY | O_CLOEXEC | `flags`):
/// the one way the runtime's readers open a file. It opens with O_NONBLOCK
/// first, so that a FIFO without a writer cannot block it, refuses anything
/// but a regular file ("<path>: not a regular file (a FIFO)"), then clears
/// O_NONBLOCK. Returns the descriptor, which the caller closes.
StatusOr<int> openRegularFile(const std::string &path, int flags = 0);

/// A regular file mapped read-only: its bytes (null when it is empty),
/// valid while a copy of `data` lives.
struct MappedFile {
  std::shared_ptr<const char> data;
  size_t size = 0;
};
/// Maps the file at `path` (opened by openRegularFile).
StatusOr<MappedFile> mapRegularFile(const std::string &path);

/// The whole regular file at `path` (opened by openRegularFile), refused
/// when it holds more than `maxBytes` bytes. `what` names the file in
/// messages ("the schedule").
StatusOr<std::string> readRegularFile(const std::string &path,
                                      const std::string &what,
                                      size_t maxBytes);

/// The alignment of O_DIRECT's buffers, offsets and sizes: the largest
/// logical block size of the disks in use.
inline constexpr size_t kDirectAlignment = 4096;

/// `size` rounded up to a whole number of kDirectAlignment blocks.
inline size_t roundUpToDirectBlocks(size_t size) {
  return (size + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment;
}

struct DirectReadOptions {
  size_t chunkBytes = size_t(8) << 20; ///< one request's bytes
  unsigned depth = 8;                  ///< requests in flight
};

/// Reads the first `size` bytes of the file at `path` into `data` (aligned
/// to kDirectAlignment, with room for roundUpToDirectBlocks(size) bytes)
/// with O_DIRECT through io_uring, and calls `arrived(begin, end)` in file
/// order as each prefix [0, end) becomes complete. Returns the bytes read:
/// fewer than `size` where the file ends sooner; nullopt, with nothing read,
/// where the file system refuses O_DIRECT or the kernel (or the build: no
/// liburing) has no io_uring, so that the caller reads another way. Errors
/// name `path`.
StatusOr<std::optional<size_t>>
readDirect(const std::string &path, char *data, size_t size,
           const std::function<void(size_t, size_t)> &arrived,
           DirectReadOptions options = {});

/// Reads the first `size` bytes of the file at `path` into `data` with
/// plain read()s of `chunkBytes` on a thread of its own, and calls
/// `arrived(begin, end)` on the calling thread, in file order, over each
/// non-empty range read since the last call. Returns the bytes read: fewer
/// than `size` where the file ends sooner. Errors name `path`.
StatusOr<size_t>
readBuffered(const std::string &path, char *data, size_t size,
             const std::function<void(size_t, size_t)> &arrived,
             size_t chunkBytes = size_t(16) << 20);

} // namespace zero::runtime::io

#endif // ZERO_RUNTIME_SRC_IO_FILEREAD_H
