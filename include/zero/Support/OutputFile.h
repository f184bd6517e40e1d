//===- OutputFile.h - Files the tools write, with their write errors -*- C++
//-*-===//
//
// A raw_fd_ostream remembers a failed write (a full disk, a closed pipe) and,
// if nobody looked, ends the process when it is destroyed with "LLVM ERROR:
// IO failure on output stream", naming no file. Every output of the tools
// (-o, --zero-report, --zero-memory-timeline, --zero-emit-schedule, stdout)
// is finished with keepOutputFile, which turns such an error into one that
// names the file.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_SUPPORT_OUTPUTFILE_H
#define ZERO_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace zero {

/// "cannot write 'FILE': REASON" for a failed write to `path` ("-": stdout).
inline llvm::Error makeWriteError(llvm::StringRef path, std::error_code error) {
  return llvm::createStringError(
      error, "cannot write '" +
                 (path == "-" ? llvm::StringRef("<stdout>") : path) +
                 "': " + error.message());
}

/// Flushes `os` (written to `path`) and returns its write error, if any,
/// clearing it from the stream so that its destructor does not end the
/// process.
inline llvm::Error checkStream(llvm::raw_fd_ostream &os, llvm::StringRef path) {
  os.flush();
  if (!os.has_error())
    return llvm::Error::success();
  std::error_code error = os.error();
  os.clear_error();
  return makeWriteError(path, error);
}

/// Finishes `file`: flushes and closes it, and keeps it if every write
/// succeeded. Otherwise returns "cannot write 'FILE': REASON" and leaves the
/// file to be removed (a regular file; not /dev/full or stdout) when `file`
/// is destroyed.
inline llvm::Error keepOutputFile(llvm::ToolOutputFile &file) {
  llvm::StringRef path = file.outputFilename();
  llvm::raw_fd_ostream &os = file.os();
  // Closing flushes and reports a failed close too; stdout is only flushed.
  if (path == "-")
    os.flush();
  else
    os.close();
  std::error_code error = os.error();
  os.clear_error();
  if (error)
    return makeWriteError(path, error);
  file.keep();
  return llvm::Error::success();
}

/// Abandons `file` after a failure: it is removed when destroyed (a regular
/// file), and a failed write to it does not end the process.
inline void discardOutputFile(llvm::ToolOutputFile &file) {
  llvm::raw_fd_ostream &os = file.os();
  if (file.outputFilename() == "-")
    os.flush();
  else
    os.close();
  os.clear_error();
}

} // namespace zero

#endif // ZERO_SUPPORT_OUTPUTFILE_H
