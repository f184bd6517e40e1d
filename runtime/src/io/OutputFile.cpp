//===- OutputFile.cpp - files that appear whole or not at all -------------===//

#include "zero/runtime/OutputFile.h"

#include "IOSupport.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zero::runtime {

namespace {

using io::errnoError;

/// `mkdir -p directory`; errors name `path`, the file being opened, and the
/// directory that could not be made.
Status createDirectories(const std::string &path,
                         const std::string &directory) {
  for (size_t end = 1; end <= directory.size(); ++end) {
    if (end < directory.size() && directory[end] != '/')
      continue;
    std::string prefix = directory.substr(0, end);
    if (prefix.back() == '/')
      continue;
    if (::mkdir(prefix.c_str(), 0777) == 0)
      continue;
    int error = errno;
    struct stat info;
    if (error == EEXIST) {
      if (::stat(prefix.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
        continue;
      error = ENOTDIR; // a file is in the way
    }
    return errnoError(path, "cannot create the directory '" + prefix + "'",
                      error);
  }
  return Status::ok();
}

} // namespace

StatusOr<std::unique_ptr<OutputFile>>
OutputFile::open(const std::string &path) {
  if (path.empty())
    return ZERO_ERROR(kInvalidArgument, "an output path is empty");
  // "out/" names a directory, even one that does not exist yet.
  if (path.back() == '/')
    return errnoError(path, "cannot write", EISDIR);
  // Replace a link's target, not the link.
  std::string target = path;
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
    char resolved[PATH_MAX];
    if (!::realpath(path.c_str(), resolved))
      return errnoError(path, "cannot follow the symbolic link", errno);
    target = resolved;
  }
  bool exists = ::stat(target.c_str(), &info) == 0;
  if (exists && S_ISDIR(info.st_mode))
    return errnoError(path, "cannot write", EISDIR);
  if (exists && !S_ISREG(info.st_mode)) {
    // A device or a FIFO: nothing to rename onto.
    std::FILE *file = std::fopen(target.c_str(), "wb");
    if (!file)
      return errnoError(path, "cannot write", errno);
    return std::unique_ptr<OutputFile>(
        new OutputFile(path, target, std::string(), file));
  }

  size_t slash = target.rfind('/');
  if (slash != std::string::npos && slash > 0)
    ZERO_RETURN_IF_ERROR(createDirectories(path, target.substr(0, slash)));
  return openTemporary(path, target, exists ? &info : nullptr);
}

StatusOr<std::unique_ptr<OutputFile>>
OutputFile::openNoFollow(const std::string &path) {
  if (path.empty())
    return ZERO_ERROR(kInvalidArgument, "an output path is empty");
  struct stat info;
  bool exists = ::lstat(path.c_str(), &info) == 0;
  if (!exists && errno != ENOENT)
    return errnoError(path, "cannot write", errno);
  // A link is replaced by the rename, so only its mode is not kept.
  if (exists && S_ISLNK(info.st_mode))
    return openTemporary(path, path, nullptr);
  if (exists && !S_ISREG(info.st_mode))
    return errnoError(path, "cannot write",
                      S_ISDIR(info.st_mode) ? EISDIR : EINVAL);
  return openTemporary(path, path, exists ? &info : nullptr);
}

StatusOr<std::unique_ptr<OutputFile>>
OutputFile::openTemporary(const std::string &path, const std::string &target,
                          const struct stat *replaced) {
  // O_EXCL: two runs writing the same path never share a temporary file,
  // and a link planted under the temporary name is never followed.
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temporary = target + ".tmp." + std::to_string(::getpid()) + "." +
                std::to_string(attempt);
    fd = ::open(temporary.c_str(),
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 99))
      return errnoError(path, "cannot write", errno);
  }
  // A replaced file keeps its permissions.
  if (replaced)
    (void)::fchmod(fd, replaced->st_mode & 07777);
  std::FILE *file = ::fdopen(fd, "wb");
  if (!file) {
    int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return errnoError(path, "cannot write", error);
  }
  return std::unique_ptr<OutputFile>(
      new OutputFile(path, target, temporary, file));
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (file_)
    std::fclose(file_);
  file_ = nullptr;
  if (!temporary_.empty())
    ::unlink(temporary_.c_str());
  temporary_.clear();
}

Status OutputFile::write(const void *data, size_t size) {
  if (!file_)
    return ZERO_ERROR(kFailedPrecondition, path_ + ": written after its end");
  if (size == 0)
    return Status::ok();
  errno = 0;
  if (std::fwrite(data, 1, size, file_) != size) {
    Status status = io::writeError(path_, "write failed");
    discard();
    return status;
  }
  return Status::ok();
}

Status OutputFile::flush() {
  if (!file_)
    return ZERO_ERROR(kFailedPrecondition, path_ + ": flushed after its end");
  errno = 0;
  if (std::fflush(file_) != 0 || std::ferror(file_)) {
    Status status = io::writeError(path_, "write failed");
    discard();
    return status;
  }
  return Status::ok();
}

Status OutputFile::startWriteback() {
  ZERO_RETURN_IF_ERROR(flush());
  // Advice only: a file system or device that cannot do it (a pipe) leaves
  // it all to commit().
  if (!temporary_.empty())
    (void)::sync_file_range(::fileno(file_), 0, 0, SYNC_FILE_RANGE_WRITE);
  return Status::ok();
}

Status OutputFile::commit() {
  Status status = flush();
  if (!status.isOk())
    return status;
  // The data reaches the disk before the name does: after a crash the final
  // name holds the old file or the whole new one.
  errno = 0;
  if (!temporary_.empty() && ::fsync(::fileno(file_)) != 0) {
    status = io::writeError(path_, "write failed");
    discard();
    return status;
  }
  errno = 0;
  int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) {
    status = io::writeError(path_, "close failed");
    discard();
    return status;
  }
  if (temporary_.empty())
    return Status::ok();
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    status = errnoError(path_, "cannot rename '" + temporary_ + "' into place",
                        errno);
    discard();
    return status;
  }
  temporary_.clear();
  return Status::ok();
}

} // namespace zero::runtime
