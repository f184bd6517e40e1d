//===- TokenDataTest.cpp - token streams for language models --------------===//

#include "zero/runtime/TokenData.h"

#include "zero/runtime/Init.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace zero::runtime;

namespace {

class TokenData : public test::TempDirTest {
protected:
  /// Writes `ids` as little-endian uint16.
  std::string writeTokens(const std::string &name,
                          const std::vector<uint16_t> &ids) {
    std::string bytes;
    for (uint16_t id : ids) {
      bytes.push_back(static_cast<char>(id & 0xFF));
      bytes.push_back(static_cast<char>(id >> 8));
    }
    return writeBytes(name, bytes);
  }
};

std::vector<uint16_t> iota(int n, int mod) {
  std::vector<uint16_t> ids(n);
  for (int i = 0; i < n; ++i)
    ids[i] = static_cast<uint16_t>(i % mod);
  return ids;
}

} // namespace

TEST_F(TokenData, ReadsLittleEndianIds) {
  std::string file = writeTokens("data.bin", {1, 300, 65535, 2, 7});
  StatusOr<TokenStream> stream = TokenStream::openFile(file, 3, 65536);
  ASSERT_TRUE(stream.isOk()) << stream.status().toString();
  EXPECT_EQ(stream->size(), 5);
  EXPECT_EQ(stream->at(1), 300);
  EXPECT_EQ(stream->at(2), 65535);
}

TEST_F(TokenData, WindowFormula) {
  // 100 tokens 0..99, S = 8: offsets are global row * 8 mod (100 - 9 = 91).
  std::string file = writeTokens("data.bin", iota(100, 1000));
  StatusOr<TokenStream> opened = TokenStream::openFile(file, 8, 1000);
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  const TokenStream &stream = *opened;
  const int64_t seq = 8;
  for (int64_t row = 0; row < 120; ++row) {
    int32_t tokens[8], targets[8];
    stream.window(row, seq, tokens, targets);
    int64_t offset = row * seq % 91;
    for (int64_t i = 0; i < seq; ++i) {
      ASSERT_EQ(tokens[i], offset + i) << row;
      ASSERT_EQ(targets[i], offset + i + 1);
    }
  }
  // Wrap-around: global row 11 starts at 88 mod 91 = 88 and reads up to
  // target 96 < 100; global row 12 starts at 96 mod 91 = 5.
  int32_t tokens[8], targets[8];
  stream.window(11, 8, tokens, targets);
  EXPECT_EQ(tokens[0], 88);
  EXPECT_EQ(targets[7], 96);
  stream.window(12, 8, tokens, nullptr);
  EXPECT_EQ(tokens[0], 5);
  stream.window(12, 8, nullptr, targets);
  EXPECT_EQ(targets[0], 6);
}

TEST_F(TokenData, SmallestStreamAndHugeSteps) {
  // S + 2 tokens: the only offset is 0.
  std::string file = writeTokens("data.bin", {5, 6, 7, 8, 9, 10});
  StatusOr<TokenStream> stream = TokenStream::openFile(file, 4, 11);
  ASSERT_TRUE(stream.isOk()) << stream.status().toString();
  int32_t tokens[8], targets[8];
  stream->window(123456789, 4, tokens, targets);
  EXPECT_EQ(tokens[0], 5);
  EXPECT_EQ(targets[3], 9);
  // Global row * seqLength beyond int64: 2^62 * 8 mod 91.
  file = writeTokens("long.bin", iota(100, 1000));
  StatusOr<TokenStream> longer = TokenStream::openFile(file, 8, 1000);
  ASSERT_TRUE(longer.isOk());
  int64_t row = int64_t(1) << 62;
  int64_t rowMod = 1; // 2^62 mod 91
  for (int i = 0; i < 62; ++i)
    rowMod = rowMod * 2 % 91;
  longer->window(row, 8, tokens, nullptr);
  EXPECT_EQ(tokens[0], rowMod * 8 % 91);
}

TEST_F(TokenData, FileErrors) {
  StatusOr<TokenStream> missing =
      TokenStream::openFile(dir + "/nope.bin", 4, 10);
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.bin: cannot open"),
            std::string::npos);

  std::string odd = writeBytes("odd.bin", std::string(11, '\0'));
  StatusOr<TokenStream> oddSize = TokenStream::openFile(odd, 4, 10);
  ASSERT_FALSE(oddSize.isOk());
  EXPECT_EQ(oddSize.status().message(),
            odd + ": 11 bytes, an odd size for uint16 tokens");

  std::string shortFile = writeTokens("data.bin", iota(10, 5));
  StatusOr<TokenStream> tooShort = TokenStream::openFile(shortFile, 64, 96);
  ASSERT_FALSE(tooShort.isOk());
  EXPECT_EQ(tooShort.status().message(),
            shortFile +
                ": 10 tokens, but a window of seq_length 64 needs at least 66");
  // One token fewer than the minimum.
  StatusOr<TokenStream> almost = TokenStream::openFile(shortFile, 9, 96);
  ASSERT_FALSE(almost.isOk());
  EXPECT_TRUE(TokenStream::openFile(shortFile, 8, 96).isOk());

  std::vector<uint16_t> ids = iota(100, 50);
  ids[77] = 1234;
  std::string bad = writeTokens("bad.bin", ids);
  StatusOr<TokenStream> outOfRange = TokenStream::openFile(bad, 8, 96);
  ASSERT_FALSE(outOfRange.isOk());
  EXPECT_EQ(outOfRange.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(
      outOfRange.status().message(),
      bad +
          ": token 1234 at position 77 is out of range for a vocabulary of 96");
  // The bound is exclusive.
  ids[77] = 96;
  writeTokens("bad.bin", ids);
  EXPECT_FALSE(TokenStream::openFile(bad, 8, 96).isOk());
  ids[77] = 95;
  writeTokens("bad.bin", ids);
  EXPECT_TRUE(TokenStream::openFile(bad, 8, 96).isOk());

  StatusOr<TokenStream> directory = TokenStream::openFile(dir, 8, 96);
  ASSERT_FALSE(directory.isOk());
  EXPECT_NE(directory.status().message().find("not a regular file"),
            std::string::npos);

  StatusOr<TokenStream> badSeq = TokenStream::openFile(bad, 0, 96);
  ASSERT_FALSE(badSeq.isOk());
  EXPECT_NE(badSeq.status().message().find("seq_length must be at least 1"),
            std::string::npos);
  StatusOr<TokenStream> badBound = TokenStream::openFile(bad, 8, 70000);
  ASSERT_FALSE(badBound.isOk());
  EXPECT_NE(
      badBound.status().message().find("a vocabulary of 70000 does not fit"),
      std::string::npos);
}

// --data naming a FIFO with no writer: refused, naming it, before open()
// could wait for a writer (the alarm fails a regression instead of hanging).
TEST_F(TokenData, AFifoIsRefusedWithoutBlocking) {
  const std::string fifo = path("tokens.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ::alarm(30);
  StatusOr<TokenStream> opened = TokenStream::openFile(fifo, 4, 10);
  ::alarm(0);
  ASSERT_FALSE(opened.isOk());
  EXPECT_EQ(opened.status().message(), fifo + ": not a regular file (a FIFO)");
}

TEST_F(TokenData, SyntheticStream) {
  TokenStream a = TokenStream::synthetic(7, 65, 1000);
  TokenStream b = TokenStream::synthetic(7, 65, 1000);
  ASSERT_EQ(a.size(), 1000);
  std::vector<int64_t> counts(65, 0);
  for (int64_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a.at(i), b.at(i));
    ASSERT_EQ(a.at(i), syntheticInt(7, "tokens", 0, i, 65));
    ++counts[a.at(i)];
  }
  // Every id shows up (1000 draws of 65 values).
  for (int64_t c : counts)
    EXPECT_GT(c, 0);
  EXPECT_EQ(TokenStream::synthetic(9, 50257, 1).at(0), 49226); // zero_random.py
  EXPECT_EQ(TokenStream::synthetic(1, 65).size(), 1 << 20);
  // Copies share the data.
  TokenStream c = a;
  EXPECT_EQ(c.at(999), a.at(999));
}
