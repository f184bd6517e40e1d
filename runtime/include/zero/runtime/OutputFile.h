//===- OutputFile.h - files that appear whole or not at all -----*- C++ -*-===//
//
// An output of a run (an export, a trace, the metrics) is written under a
// temporary name in its own directory and renamed into place when complete,
// so a crash or a failed write never leaves a truncated file under the final
// name, and a file that existed stays as it was until the new one is whole.
// Opening it creates the temporary file (and the missing directories), so a
// path that cannot be written fails before a run starts, not at its end.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OUTPUTFILE_H
#define ZERO_RUNTIME_OUTPUTFILE_H

#include "zero/runtime/Status.h"

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>

struct stat;

namespace zero::runtime {

class OutputFile {
public:
  /// Opens `path` for writing: creates its missing parent directories and a
  /// temporary file "<name>.tmp.<pid>.<n>" beside the final one. A symbolic
  /// link is followed, so the link stays and its target is replaced. An
  /// existing path that is not a regular file (a device such as /dev/null or
  /// /dev/full, a FIFO) is written directly, since there is nothing to rename
  /// onto; a directory is an error. Errors name `path`.
  static StatusOr<std::unique_ptr<OutputFile>> open(const std::string &path);

  /// Opens `path`, a file of a directory the caller owns (a checkpoint's),
  /// for writing without following any link there: the temporary file is
  /// made with O_EXCL beside it, and the rename replaces a symbolic link at
  /// `path` itself, never its target. An existing entry that is neither a
  /// regular file nor a symbolic link (a directory, a FIFO) is an error; the
  /// parent directory must exist. Errors name `path`.
  static StatusOr<std::unique_ptr<OutputFile>>
  openNoFollow(const std::string &path);

  /// Removes the temporary file unless commit() succeeded.
  ~OutputFile();
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

  /// The path as given (for messages).
  const std::string &path() const { return path_; }

  /// Whether the file can still be written and committed: not after a
  /// commit or a failed write, which removes the temporary file.
  bool isOpen() const { return file_ != nullptr; }

  /// Appends bytes; a failure (a full disk) names the path.
  Status write(const void *data, size_t size);
  Status write(const std::string &text) {
    return write(text.data(), text.size());
  }
  /// Hands the buffered bytes to the kernel, so a failure shows now.
  Status flush();
  /// Flushes and starts writing the file's bytes so far to the disk without
  /// waiting for them (sync_file_range), so that the disk works while more
  /// is written and commit()'s fsync waits for less.
  Status startWriteback();
  /// Flushes and closes the file and renames it to its final name. After a
  /// failure the temporary file is removed and the final name untouched.
  Status commit();

private:
  OutputFile(std::string path, std::string target, std::string temporary,
             std::FILE *file)
      : path_(std::move(path)), target_(std::move(target)),
        temporary_(std::move(temporary)), file_(file) {}
  /// Creates the temporary file beside `target` (the final name, `path`
  /// with links resolved or not) with the mode of `replaced`, if given.
  static StatusOr<std::unique_ptr<OutputFile>>
  openTemporary(const std::string &path, const std::string &target,
                const struct stat *replaced);
  /// Closes and removes the temporary file (nothing for a direct write).
  void discard();

  std::string path_;
  /// The final file: `path_` with symbolic links resolved.
  std::string target_;
  /// Empty when the target is written directly.
  std::string temporary_;
  std::FILE *file_;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_OUTPUTFILE_H
