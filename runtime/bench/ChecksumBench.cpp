//===- ChecksumBench.cpp - CRC-32 throughput: the runtime's and zlib's ----===//
//
// The CRC-32 of a checkpoint's bytes: computeCrc32 (ISA-L where built with
// it) against zlib's crc32 on the same buffer, warm in memory. Prints one
// JSON object per measurement: {"crc": name, "bytes": n, "gb_per_s": best of
// --repeat}.
//
//   zero-bench-checksum [--bytes N] [--repeat R]
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Checksum.h"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

using namespace zero::runtime;

namespace {

double bestSeconds(int repeat, const std::function<uint32_t()> &run,
                   uint32_t &crc) {
  double best = 1e30;
  for (int i = 0; i < repeat; ++i) {
    auto begin = std::chrono::steady_clock::now();
    crc = run();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - begin)
                              .count());
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  size_t bytes = size_t(256) << 20;
  int repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--bytes"))
      bytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "zero-bench-checksum: unknown flag %s\n", argv[i]);
      return 1;
    }
  }
  std::vector<unsigned char> data(bytes);
  uint32_t state = 12345;
  for (unsigned char &byte : data) {
    state = state * 1103515245u + 12345u;
    byte = static_cast<unsigned char>(state >> 24);
  }
  uint32_t ours = 0, zlib = 0;
  double oursSeconds = bestSeconds(
      repeat, [&] { return computeCrc32(data.data(), data.size()); }, ours);
  double zlibSeconds = bestSeconds(
      repeat,
      [&] {
        uLong crc = 0;
        for (size_t done = 0; done < bytes;) {
          size_t chunk = std::min<size_t>(bytes - done, UINT_MAX);
          crc = ::crc32(crc, data.data() + done, static_cast<uInt>(chunk));
          done += chunk;
        }
        return static_cast<uint32_t>(crc);
      },
      zlib);
  if (ours != zlib) {
    std::fprintf(stderr,
                 "zero-bench-checksum: CRC-32 %08x differs from "
                 "zlib's %08x\n",
                 ours, zlib);
    return 1;
  }
  std::printf("{\"crc\": \"computeCrc32\", \"bytes\": %zu, \"gb_per_s\": "
              "%.2f}\n",
              bytes, bytes / oursSeconds / 1e9);
  std::printf("{\"crc\": \"zlib\", \"bytes\": %zu, \"gb_per_s\": %.2f}\n",
              bytes, bytes / zlibSeconds / 1e9);
  return 0;
}
