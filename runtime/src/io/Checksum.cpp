//===- Checksum.cpp - CRC-32 of bytes and files ---------------------------===//

#include "zero/runtime/Checksum.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdio>

namespace zero::runtime {

uint32_t computeCrc32(const void *data, size_t size, uint32_t previous) {
  // zlib takes at most UINT_MAX bytes a call.
  auto *bytes = static_cast<const Bytef *>(data);
  uLong crc = previous;
  while (size > 0) {
    size_t chunk = std::min<size_t>(size, UINT_MAX);
    crc = ::crc32(crc, bytes, static_cast<uInt>(chunk));
    bytes += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

std::string formatCrc32(uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", static_cast<unsigned>(crc));
  return text;
}

} // namespace zero::runtime
