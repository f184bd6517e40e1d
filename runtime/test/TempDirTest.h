//===- TempDirTest.h - a fresh directory per test ---------------*- C++ -*-===//
//
// The fixture of the tests that write files: each test gets its own
// directory under gtest's temporary directory, removed after it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_TEMPDIRTEST_H
#define ZERO_RUNTIME_TEST_TEMPDIRTEST_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

namespace zero::runtime::test {

class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "zero-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }

  std::string path(const std::string &name) const { return dir + "/" + name; }

  /// Writes `bytes` to the file `name` of the directory; its path.
  std::string writeBytes(const std::string &name, const std::string &bytes) {
    std::string file = path(name);
    std::ofstream(file, std::ios::binary) << bytes;
    return file;
  }

  std::string dir;
};

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_TEMPDIRTEST_H
