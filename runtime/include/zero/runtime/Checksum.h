//===- Checksum.h - CRC-32 of bytes and files -------------------*- C++ -*-===//
//
// The checksum of the checkpoint's files and of a schedule: CRC-32 (the
// polynomial of zlib, gzip and PNG, so that `python3 -c "import zlib"` or
// `crc32 FILE` check a file by hand), computed by zlib.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CHECKSUM_H
#define ZERO_RUNTIME_CHECKSUM_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace zero::runtime {

/// The CRC-32 of `size` bytes at `data`, continuing `previous` (0 to start).
uint32_t computeCrc32(const void *data, size_t size, uint32_t previous = 0);
inline uint32_t computeCrc32(const std::string &bytes) {
  return computeCrc32(bytes.data(), bytes.size());
}
/// The CRC-32 of bytes A then B from the CRC-32s of A and of B (`sizeB`
/// bytes long), without reading them again (zlib's crc32_combine).
uint32_t combineCrc32(uint32_t crcA, uint32_t crcB, uint64_t sizeB);
/// Eight lowercase hexadecimal digits, as `crc32` prints it.
std::string formatCrc32(uint32_t crc);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_CHECKSUM_H
