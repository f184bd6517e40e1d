//===- OutputFileTest.cpp - files that appear whole or not at all ---------===//

#include "zero/runtime/OutputFile.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace zero::runtime;

namespace {

class OutputFileTest : public test::TempDirTest {
protected:
  /// The names in the test's directory.
  std::set<std::string> entries() const {
    std::set<std::string> names;
    DIR *handle = ::opendir(dir.c_str());
    while (dirent *entry = ::readdir(handle))
      if (std::string(entry->d_name) != "." &&
          entry->d_name != std::string(".."))
        names.insert(entry->d_name);
    ::closedir(handle);
    return names;
  }

  static std::string read(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static void writeText(const std::string &file, const std::string &text) {
    std::ofstream(file, std::ios::binary) << text;
  }
};

TEST_F(OutputFileTest, AppearsUnderItsNameOnlyWhenCommitted) {
  StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::open(path("out"));
  ASSERT_TRUE(file.isOk()) << file.status().message();
  ASSERT_TRUE((*file)->write("whole").isOk());
  ASSERT_TRUE((*file)->flush().isOk());
  // Until the commit the bytes are under the temporary name only.
  std::string temporary = "out.tmp." + std::to_string(::getpid()) + ".0";
  EXPECT_EQ(entries(), std::set<std::string>{temporary});
  EXPECT_EQ(read(path(temporary)), "whole");
  ASSERT_TRUE((*file)->commit().isOk());
  EXPECT_EQ(entries(), std::set<std::string>{"out"});
  EXPECT_EQ(read(path("out")), "whole");
  Status late = (*file)->write("more");
  EXPECT_EQ(late.message(), path("out") + ": written after its end");
}

TEST_F(OutputFileTest, AnUncommittedFileLeavesTheOldOne) {
  writeText(path("out"), "old");
  ::chmod(path("out").c_str(), 0640);
  {
    StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::open(path("out"));
    ASSERT_TRUE(file.isOk()) << file.status().message();
    ASSERT_TRUE((*file)->write("new, but never committed").isOk());
  }
  EXPECT_EQ(entries(), std::set<std::string>{"out"});
  EXPECT_EQ(read(path("out")), "old");

  // A committed replacement keeps the old file's permissions.
  StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::open(path("out"));
  ASSERT_TRUE(file.isOk());
  ASSERT_TRUE((*file)->write("new").isOk());
  ASSERT_TRUE((*file)->commit().isOk());
  EXPECT_EQ(read(path("out")), "new");
  struct stat info;
  ASSERT_EQ(::stat(path("out").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
}

TEST_F(OutputFileTest, TwoOpensOfOnePathDoNotShareATemporaryFile) {
  StatusOr<std::unique_ptr<OutputFile>> first = OutputFile::open(path("out"));
  StatusOr<std::unique_ptr<OutputFile>> second = OutputFile::open(path("out"));
  ASSERT_TRUE(first.isOk() && second.isOk());
  EXPECT_EQ(entries().size(), 2u);
  ASSERT_TRUE((*first)->write("first").isOk());
  ASSERT_TRUE((*second)->write("second").isOk());
  ASSERT_TRUE((*first)->commit().isOk());
  ASSERT_TRUE((*second)->commit().isOk());
  EXPECT_EQ(read(path("out")), "second");
  EXPECT_EQ(entries(), std::set<std::string>{"out"});
}

TEST_F(OutputFileTest, CreatesMissingDirectories) {
  StatusOr<std::unique_ptr<OutputFile>> file =
      OutputFile::open(path("a/b/out"));
  ASSERT_TRUE(file.isOk()) << file.status().message();
  ASSERT_TRUE((*file)->commit().isOk());
  EXPECT_EQ(read(path("a/b/out")), "");
}

TEST_F(OutputFileTest, RefusesPathsItCannotWrite) {
  writeText(path("file"), "x");
  StatusOr<std::unique_ptr<OutputFile>> underFile =
      OutputFile::open(path("file/sub/out"));
  ASSERT_FALSE(underFile.isOk());
  EXPECT_EQ(underFile.status().message(),
            path("file/sub/out") + ": cannot create the directory '" +
                path("file") + "': Not a directory");

  StatusOr<std::unique_ptr<OutputFile>> directory = OutputFile::open(dir);
  ASSERT_FALSE(directory.isOk());
  EXPECT_EQ(directory.status().message(),
            dir + ": cannot write: Is a directory");

  StatusOr<std::unique_ptr<OutputFile>> slash = OutputFile::open(path("new/"));
  ASSERT_FALSE(slash.isOk());
  EXPECT_EQ(slash.status().message(),
            path("new/") + ": cannot write: Is a directory");

  StatusOr<std::unique_ptr<OutputFile>> empty = OutputFile::open("");
  ASSERT_FALSE(empty.isOk());
  EXPECT_EQ(empty.status().message(), "an output path is empty");
  EXPECT_EQ(entries(), std::set<std::string>{"file"});
}

TEST_F(OutputFileTest, ReplacesTheTargetOfALink) {
  ASSERT_EQ(::mkdir(path("real").c_str(), 0777), 0);
  writeText(path("real/out"), "old");
  ASSERT_EQ(::symlink("real/out", path("link").c_str()), 0);
  StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::open(path("link"));
  ASSERT_TRUE(file.isOk()) << file.status().message();
  ASSERT_TRUE((*file)->write("new").isOk());
  ASSERT_TRUE((*file)->commit().isOk());
  struct stat info;
  ASSERT_EQ(::lstat(path("link").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_EQ(read(path("real/out")), "new");
}

TEST_F(OutputFileTest, ADeviceIsWrittenDirectlyAndAFullDiskNamed) {
  // /dev/full: the open succeeds, the first write that reaches it fails.
  ASSERT_EQ(::symlink("/dev/full", path("full").c_str()), 0);
  for (const std::string &name : {std::string("/dev/full"), path("full")}) {
    StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::open(name);
    ASSERT_TRUE(file.isOk()) << file.status().message();
    ASSERT_TRUE((*file)->write("bytes").isOk()); // buffered
    Status committed = (*file)->commit();
    EXPECT_EQ(committed.code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(committed.message(),
              name + ": write failed: No space left on device");
    EXPECT_FALSE((*file)->isOpen());
  }
  StatusOr<std::unique_ptr<OutputFile>> null = OutputFile::open("/dev/null");
  ASSERT_TRUE(null.isOk());
  ASSERT_TRUE((*null)->write("gone").isOk());
  EXPECT_TRUE((*null)->commit().isOk());
}

} // namespace
