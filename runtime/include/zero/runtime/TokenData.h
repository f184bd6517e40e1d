//===- TokenData.h - token streams for language models ----------*- C++ -*-===//
//
// nanoGPT's data format: a file of little-endian uint16 token ids (train.bin);
// or a 1-D NumPy array of integer ids (.npy), whose uint32 or wider ids hold
// vocabularies above 65,536.
// Each step every rank cuts its rows out of the stream at offsets that depend
// only on the global row, so the data seen by the whole job does not depend on
// the world size.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TOKENDATA_H
#define ZERO_RUNTIME_TOKENDATA_H

#include "zero/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace zero::runtime {

class TokenStream {
public:
  /// Maps the file read-only. Errors: a missing or unreadable file, an odd
  /// byte size, fewer than seqLength + 2 tokens ("data.bin: 10 tokens, but a
  /// window of seq_length 64 needs at least 66"), a token >= bound
  /// ("data.bin: token 1234 at position 77 is out of range for a vocabulary
  /// of 96").
  /// A path ending in .npy is a 1-D array of uint16, uint32, int32 or
  /// int64 ids (errors as above, and for another rank or dtype).
  static StatusOr<TokenStream> openFile(const std::string &path,
                                        int64_t seqLength, int64_t bound);

  /// A deterministic synthetic stream of `numTokens` ids in [0, bound)
  /// (bound up to 2^32):
  /// token i is syntheticInt(seed, "tokens", 0, i, bound) (Init.h).
  static TokenStream synthetic(uint64_t seed, int64_t bound,
                               int64_t numTokens = 1 << 20);

  /// Number of tokens.
  int64_t size() const { return size_; }
  /// Token `i` (0 <= i < size()).
  int64_t at(int64_t i) const;

  /// The window of global row `row` (the rows of the job in order: which
  /// rank reads which row is DataSource's):
  ///   o = row * seqLength mod (size() - seqLength - 1)
  /// tokens = data[o : o + seqLength], targets = data[o + 1 : o + seqLength
  /// + 1]. Writes seqLength int32 values to each (either may be null).
  /// Requires size() >= seqLength + 2 (openFile checks it).
  void window(int64_t row, int64_t seqLength, int32_t *tokens,
              int32_t *targets) const;

private:
  TokenStream(std::shared_ptr<const void> data, int64_t size, int width)
      : data_(std::move(data)), size_(size), width_(width) {}
  static StatusOr<TokenStream> openArray(const std::string &path,
                                         int64_t seqLength, int64_t bound);
  /// Checks the length against a window and every id against the bound.
  Status check(const std::string &path, int64_t seqLength,
               int64_t bound) const;

  // The mapping (or the synthetic vector) is shared by copies: little-endian
  // ids of width_ bytes (2 or 4).
  std::shared_ptr<const void> data_;
  int64_t size_ = 0;
  int width_ = 2;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_TOKENDATA_H
