//===- ChecksumTest.cpp - CRC-32 of bytes and files -----------------------===//

#include "zero/runtime/Checksum.h"

#include <gtest/gtest.h>

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

} // namespace
