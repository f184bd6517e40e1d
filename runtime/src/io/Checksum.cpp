//===- Checksum.cpp - CRC-32 of bytes and files ---------------------------===//
//
// zlib's table-driven CRC-32 runs at about 1 GB/s, slower than a disk reads
// a checkpoint; on x86 with PCLMULQDQ the bulk of the bytes is folded with
// carry-less multiplications instead (Gopal et al., "Fast CRC Computation
// for Generic Polynomials Using PCLMULQDQ Instruction", Intel 2009; the
// constants of zlib's reflected polynomial, as Chromium's zlib has them),
// and zlib takes the head and tail.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Checksum.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdio>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ZERO_CRC32_PCLMUL 1
#endif

namespace zero::runtime {

namespace {

uint32_t zlibCrc32(const unsigned char *bytes, size_t size, uint32_t crc) {
  // zlib takes at most UINT_MAX bytes a call.
  uLong value = crc;
  while (size > 0) {
    size_t chunk = std::min<size_t>(size, UINT_MAX);
    value = ::crc32(value, bytes, static_cast<uInt>(chunk));
    bytes += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(value);
}

#ifdef ZERO_CRC32_PCLMUL
#define ZERO_PCLMUL __attribute__((target("pclmul,sse4.1")))

ZERO_PCLMUL inline __m128i load(const unsigned char *at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i *>(at));
}

/// `x` folded over 128 bits with constants `k` onto `next`.
ZERO_PCLMUL inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  __m128i low = _mm_clmulepi64_si128(x, k, 0x00);
  __m128i high = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(high, next), low);
}

/// The CRC register (not inverted) after `size` bytes, a multiple of 16 and
/// at least 64.
ZERO_PCLMUL uint32_t foldCrc32(const unsigned char *buf, size_t size,
                               uint32_t crc) {
  alignas(16) static const uint64_t k1k2[] = {0x0154442bd4, 0x01c6e41596};
  alignas(16) static const uint64_t k3k4[] = {0x01751997d0, 0x00ccaa009e};
  alignas(16) static const uint64_t k5k0[] = {0x0163cd6124, 0x0000000000};
  alignas(16) static const uint64_t poly[] = {0x01db710641, 0x01f7011641};
  __m128i x1 = load(buf), x2 = load(buf + 16), x3 = load(buf + 32),
          x4 = load(buf + 48);
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128(static_cast<int>(crc)));
  __m128i x0 = _mm_load_si128(reinterpret_cast<const __m128i *>(k1k2));
  buf += 64;
  size -= 64;
  // Four lanes of 16 bytes folded 64 bytes ahead.
  while (size >= 64) {
    x1 = fold(x1, x0, load(buf));
    x2 = fold(x2, x0, load(buf + 16));
    x3 = fold(x3, x0, load(buf + 32));
    x4 = fold(x4, x0, load(buf + 48));
    buf += 64;
    size -= 64;
  }
  // The four lanes into one, then 16 bytes at a time.
  x0 = _mm_load_si128(reinterpret_cast<const __m128i *>(k3k4));
  x1 = fold(x1, x0, x2);
  x1 = fold(x1, x0, x3);
  x1 = fold(x1, x0, x4);
  while (size >= 16) {
    x1 = fold(x1, x0, load(buf));
    buf += 16;
    size -= 16;
  }
  // 128 bits to 64, then Barrett's reduction to 32.
  x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
  x3 = _mm_setr_epi32(~0, 0, ~0, 0);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
  x0 = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(k5k0));
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_and_si128(x1, x3);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, x0, 0x00), x2);
  x0 = _mm_load_si128(reinterpret_cast<const __m128i *>(poly));
  x2 = _mm_and_si128(x1, x3);
  x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
  x2 = _mm_and_si128(x2, x3);
  x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return static_cast<uint32_t>(_mm_extract_epi32(x1, 1));
}

bool hasPclmul() {
  static const bool has =
      __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return has;
}
#endif

} // namespace

uint32_t computeCrc32(const void *data, size_t size, uint32_t previous) {
  auto *bytes = static_cast<const unsigned char *>(data);
#ifdef ZERO_CRC32_PCLMUL
  if (size >= 64 && hasPclmul()) {
    size_t bulk = size & ~size_t(15);
    previous = ~foldCrc32(bytes, bulk, ~previous);
    bytes += bulk;
    size -= bulk;
  }
#endif
  return zlibCrc32(bytes, size, previous);
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
