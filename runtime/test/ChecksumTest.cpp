//===- ChecksumTest.cpp - CRC-32 of bytes and files -----------------------===//

#include "zero/runtime/Checksum.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

using namespace zero::runtime;

namespace {

TEST(Checksum, IsTheCrc32OfZlibAndGzip) {
  // The check value of CRC-32/ISO-HDLC, the CRC of zlib, gzip and PNG.
  EXPECT_EQ(formatCrc32(computeCrc32(std::string("123456789"))), "cbf43926");
  EXPECT_EQ(formatCrc32(computeCrc32(std::string())), "00000000");
  // A CRC continued over pieces is the CRC of the whole.
  uint32_t part = computeCrc32("12345", 5);
  EXPECT_EQ(computeCrc32("6789", 4, part),
            computeCrc32(std::string("123456789")));
}

TEST(Checksum, IsZlibsCrc32AtEveryAlignment) {
  // ISA-L folds 16 and 64 bytes at a time: every length around those steps,
  // at every alignment, against zlib's table-driven CRC.
  std::string bytes(4096 + 64, '\0');
  uint32_t state = 12345;
  for (char &c : bytes) {
    state = state * 1103515245u + 12345u;
    c = static_cast<char>(state >> 24);
  }
  for (size_t offset = 0; offset < 16; ++offset)
    for (size_t size :
         {size_t(0), size_t(15), size_t(63), size_t(64), size_t(65), size_t(79),
          size_t(80), size_t(127), size_t(128), size_t(1000), size_t(4096)}) {
      const auto *at =
          reinterpret_cast<const unsigned char *>(bytes.data() + offset);
      uLong expected = ::crc32(0x1234u, at, static_cast<uInt>(size));
      EXPECT_EQ(computeCrc32(at, size, 0x1234u), expected)
          << "offset " << offset << ", size " << size;
    }
}

TEST(Checksum, CombinesTheCrc32sOfPieces) {
  std::string whole = "checkpoint rank file";
  for (size_t cut : {size_t(0), size_t(1), size_t(10), whole.size()}) {
    uint32_t a = computeCrc32(whole.data(), cut);
    uint32_t b = computeCrc32(whole.data() + cut, whole.size() - cut);
    EXPECT_EQ(combineCrc32(a, b, whole.size() - cut), computeCrc32(whole))
        << "cut at " << cut;
  }
}

} // namespace
