//===- Checksum.cpp - CRC-32 of bytes and files ---------------------------===//
//
// Debian's zlib computes CRC-32 with tables, slower than a disk reads a
// checkpoint; where ISA-L is installed (libisal-dev) its crc32_gzip_refl,
// the same CRC folded with carry-less multiplications, computes it instead
// (docs/PERFORMANCE.md, "Checkpoints"). zlib stays the fallback (the GPU
// machine builds the runtime without ISA-L) and combines CRCs.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Checksum.h"

#include <zlib.h>

#ifdef ZERO_HAVE_ISAL
#include <isa-l/crc.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdio>

namespace zero::runtime {

uint32_t computeCrc32(const void *data, size_t size, uint32_t previous) {
  auto *bytes = static_cast<const unsigned char *>(data);
#ifdef ZERO_HAVE_ISAL
  return ::crc32_gzip_refl(previous, bytes, size);
#else
  // zlib takes at most UINT_MAX bytes a call.
  uLong crc = previous;
  while (size > 0) {
    size_t chunk = std::min<size_t>(size, UINT_MAX);
    crc = ::crc32(crc, bytes, static_cast<uInt>(chunk));
    bytes += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
#endif
}

uint32_t combineCrc32(uint32_t crcA, uint32_t crcB, uint64_t sizeB) {
  return static_cast<uint32_t>(
      ::crc32_combine(crcA, crcB, static_cast<z_off_t>(sizeB)));
}

std::string formatCrc32(uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", static_cast<unsigned>(crc));
  return text;
}

} // namespace zero::runtime
