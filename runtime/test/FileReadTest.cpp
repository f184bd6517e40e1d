//===- FileReadTest.cpp - io::readDirect and io::readBuffered -------------===//
//
// Both readers, on files of sizes around the block and chunk boundaries
// (8 KiB chunks; readDirect with three requests in flight): every byte as
// written, `arrived` called in file order over contiguous non-empty ranges
// that end at the file's size (readDirect: once per chunk), a file shorter
// than asked for read to its end, and a missing file named. readDirect's
// cases skip, saying why, where the temporary directory's file system
// refuses O_DIRECT or the kernel has no io_uring (it returns nullopt).
//
//===----------------------------------------------------------------------===//

#include "io/FileRead.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace zero::runtime;

namespace {

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("zero-direct-read-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

std::vector<char> writeRandomFile(const std::string &path, size_t size) {
  std::mt19937 rng(static_cast<unsigned>(size));
  std::vector<char> bytes(size);
  for (char &byte : bytes)
    byte = static_cast<char>(rng());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(size));
  return bytes;
}

struct AlignedFree {
  void operator()(char *memory) const { std::free(memory); }
};

std::unique_ptr<char, AlignedFree> allocate(size_t size) {
  return std::unique_ptr<char, AlignedFree>(static_cast<char *>(
      std::aligned_alloc(io::kDirectAlignment, io::roundUpToDirectBlocks(size) +
                                                   io::kDirectAlignment)));
}

constexpr io::DirectReadOptions kSmallChunks{8192, 3};

enum class Reader { Direct, Buffered };

/// The bytes read, or nullopt where readDirect is not available here.
StatusOr<std::optional<size_t>>
readWith(Reader reader, const std::string &path, char *data, size_t size,
         const std::function<void(size_t, size_t)> &arrived) {
  if (reader == Reader::Direct)
    return io::readDirect(path, data, size, arrived, kSmallChunks);
  StatusOr<size_t> read =
      io::readBuffered(path, data, size, arrived, kSmallChunks.chunkBytes);
  if (!read.isOk())
    return read.status();
  return std::optional<size_t>(*read);
}

class FileRead : public testing::TestWithParam<Reader> {};

} // namespace

TEST_P(FileRead, ReadsEveryByteAndReportsPrefixesInOrder) {
  for (size_t size : {size_t(0), size_t(1), size_t(4095), size_t(4096),
                      size_t(4097), size_t(8192), size_t(3 * 8192 + 5),
                      size_t(5 * 8192), size_t(11 * 8192 + 4096 + 17)}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const std::string path = tempPath(std::to_string(size));
    const std::vector<char> expected = writeRandomFile(path, size);
    auto memory = allocate(size);
    std::vector<std::pair<size_t, size_t>> ranges;
    StatusOr<std::optional<size_t>> read = readWith(
        GetParam(), path, memory.get(), size,
        [&](size_t begin, size_t end) { ranges.emplace_back(begin, end); });
    std::filesystem::remove(path);
    ASSERT_TRUE(read.isOk()) << read.status().toString();
    if (!read->has_value())
      GTEST_SKIP() << "O_DIRECT or io_uring not available in "
                   << std::filesystem::temp_directory_path();
    EXPECT_EQ(**read, size);
    EXPECT_EQ(std::vector<char>(memory.get(), memory.get() + size), expected);
    // readDirect: one call per 8 KiB chunk; both: each range starting where
    // the last ended.
    if (GetParam() == Reader::Direct)
      EXPECT_EQ(ranges.size(), (size + 8191) / 8192);
    size_t end = 0;
    for (auto [begin, stop] : ranges) {
      EXPECT_EQ(begin, end);
      EXPECT_GT(stop, begin);
      end = stop;
    }
    EXPECT_EQ(end, size);
  }
}

TEST_P(FileRead, AFileShorterThanAskedIsReadToItsEnd) {
  const size_t actual = 2 * 8192 + 100;
  const std::string path = tempPath("short");
  const std::vector<char> expected = writeRandomFile(path, actual);
  const size_t asked = 6 * 8192;
  auto memory = allocate(asked);
  // Contiguous non-empty ranges: the chunks past the end (in flight before
  // the end was found) read nothing and give none.
  size_t reported = 0;
  bool contiguous = true;
  StatusOr<std::optional<size_t>> read = readWith(
      GetParam(), path, memory.get(), asked, [&](size_t begin, size_t end) {
        contiguous &= begin == reported && begin < end;
        reported = end;
      });
  std::filesystem::remove(path);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  if (!read->has_value())
    GTEST_SKIP() << "O_DIRECT or io_uring not available";
  EXPECT_EQ(**read, actual);
  EXPECT_TRUE(contiguous);
  EXPECT_EQ(reported, actual);
  EXPECT_EQ(std::vector<char>(memory.get(), memory.get() + actual), expected);
}

TEST_P(FileRead, AMissingFileIsNamed) {
  const std::string path = tempPath("missing");
  auto memory = allocate(4096);
  StatusOr<std::optional<size_t>> read =
      readWith(GetParam(), path, memory.get(), 4096, [](size_t, size_t) {});
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find(path + ": cannot open"),
            std::string::npos)
      << read.status().message();
}

// A FIFO with no writer: open() would wait for one for ever. Both readers
// refuse it, naming it, before anything blocks; the alarm turns a
// regression into a failure rather than a hang.
TEST_P(FileRead, AFifoIsRefusedWithoutBlocking) {
  const std::string path = tempPath("fifo");
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto memory = allocate(4096);
  ::alarm(30);
  StatusOr<std::optional<size_t>> read =
      readWith(GetParam(), path, memory.get(), 4096, [](size_t, size_t) {});
  ::alarm(0);
  ::unlink(path.c_str());
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().message(), path + ": not a regular file (a FIFO)");
}

INSTANTIATE_TEST_SUITE_P(Readers, FileRead,
                         testing::Values(Reader::Direct, Reader::Buffered),
                         [](const testing::TestParamInfo<Reader> &info) {
                           return info.param == Reader::Direct ? "Direct"
                                                               : "Buffered";
                         });

TEST(OpenRegularFile, RefusesDirectoriesAndDevicesAndReadsFiles) {
  StatusOr<int> directory = io::openRegularFile("/");
  ASSERT_FALSE(directory.isOk());
  EXPECT_EQ(directory.status().message(), "/: not a regular file (a directory)");
  StatusOr<int> device = io::openRegularFile("/dev/null");
  ASSERT_FALSE(device.isOk());
  EXPECT_EQ(device.status().message(),
            "/dev/null: not a regular file (a character device)");

  const std::string path = tempPath("text");
  writeRandomFile(path, 100);
  StatusOr<int> file = io::openRegularFile(path);
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  // Handed on blocking, as an ordinary descriptor.
  EXPECT_EQ(::fcntl(*file, F_GETFL) & O_NONBLOCK, 0);
  ::close(*file);
  StatusOr<std::string> text = io::readRegularFile(path, "the file", 100);
  ASSERT_TRUE(text.isOk()) << text.status().toString();
  EXPECT_EQ(text->size(), 100u);
  StatusOr<std::string> large = io::readRegularFile(path, "the file", 99);
  ASSERT_FALSE(large.isOk());
  EXPECT_EQ(large.status().message(),
            path + ": the file is larger than the 99 bytes allowed");
  ::unlink(path.c_str());
}
