//===- TokenData.cpp - token streams for language models ------------------===//

#include "zero/runtime/TokenData.h"

#include "zero/runtime/Init.h"

#include "ArrayFile.h"
#include "FileRead.h"
#include "IOSupport.h"

#include <cassert>

namespace zero::runtime {

Status TokenStream::check(const std::string &path, int64_t seqLength,
                          int64_t bound) const {
  if (size_ < seqLength + 2)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": " + std::to_string(size_) +
                          " tokens, but a window of seq_length " +
                          std::to_string(seqLength) + " needs at least " +
                          std::to_string(seqLength + 2));
  // Every id once here, so that a window never reads a bad one.
  for (int64_t i = 0; i < size_; ++i)
    if (at(i) >= bound)
      return ZERO_ERROR(kOutOfRange,
                        path + ": token " + std::to_string(at(i)) +
                            " at position " + std::to_string(i) +
                            " is out of range for a vocabulary of " +
                            std::to_string(bound));
  return Status::ok();
}

StatusOr<TokenStream> TokenStream::openArray(const std::string &path,
                                             int64_t seqLength,
                                             int64_t bound) {
  StatusOr<io::ArrayFile> array = io::ArrayFile::open(path, "tokens");
  if (!array.isOk())
    return array.status();
  const std::string &dtype = array->dtype();
  if (array->shape().size() != 1 ||
      (dtype != "U16" && dtype != "U32" && dtype != "I32" && dtype != "I64"))
    return ZERO_ERROR(kInvalidArgument,
                      path + ": token ids are a 1-D array of uint16, uint32, "
                             "int32 or int64; this one is " +
                          dtype + " of shape " +
                          io::formatShape(array->shape()));
  const int64_t size = array->samples();
  std::shared_ptr<const void> data;
  int width = 4;
  if (dtype == "U16" || dtype == "U32") {
    // The mapping itself, read in place.
    width = dtype == "U16" ? 2 : 4;
    data = std::shared_ptr<const void>(array->mapping(), array->data());
  } else {
    std::shared_ptr<uint32_t> ids(new uint32_t[size > 0 ? size : 1],
                                  std::default_delete<uint32_t[]>());
    for (int64_t i = 0; i < size; ++i) {
      int64_t id = array->loadInt(i);
      if (id < 0 || id >= bound)
        return ZERO_ERROR(kOutOfRange,
                          path + ": token " + std::to_string(id) +
                              " at position " + std::to_string(i) +
                              " is out of range for a vocabulary of " +
                              std::to_string(bound));
      ids.get()[i] = static_cast<uint32_t>(id);
    }
    data = ids;
  }
  TokenStream stream(std::move(data), size, width);
  ZERO_RETURN_IF_ERROR(stream.check(path, seqLength, bound));
  return stream;
}

StatusOr<TokenStream> TokenStream::openFile(const std::string &path,
                                            int64_t seqLength, int64_t bound) {
  if (seqLength < 1)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": seq_length must be at least 1, got " +
                          std::to_string(seqLength));
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0)
    return openArray(path, seqLength, bound);
  if (bound < 1 || bound > 65536)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": a vocabulary of " + std::to_string(bound) +
                          " does not fit uint16 token ids (1..65536); give "
                          "the ids as a .npy array of uint32");
  StatusOr<io::MappedFile> mapped = io::mapRegularFile(path);
  if (!mapped.isOk())
    return mapped.status();
  const int64_t bytes = static_cast<int64_t>(mapped->size);
  if (bytes % 2 != 0)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": " + std::to_string(bytes) +
                          " bytes, an odd size for uint16 tokens");
  const int64_t size = bytes / 2;
  std::shared_ptr<const void> data = mapped->data;
  if (!io::hostIsLittleEndian() && size > 0) {
    std::shared_ptr<uint16_t> swapped(new uint16_t[size],
                                      std::default_delete<uint16_t[]>());
    const uint16_t *raw = static_cast<const uint16_t *>(data.get());
    for (int64_t i = 0; i < size; ++i)
      swapped.get()[i] = static_cast<uint16_t>((raw[i] >> 8) | (raw[i] << 8));
    data = swapped;
  }
  TokenStream stream(std::move(data), size, 2);
  ZERO_RETURN_IF_ERROR(stream.check(path, seqLength, bound));
  return stream;
}

TokenStream TokenStream::synthetic(uint64_t seed, int64_t bound,
                                   int64_t numTokens) {
  assert(bound >= 1 && bound <= (int64_t(1) << 32) && numTokens >= 0);
  const size_t count = numTokens > 0 ? numTokens : 1;
  if (bound <= 65536) {
    std::shared_ptr<uint16_t> data(new uint16_t[count],
                                   std::default_delete<uint16_t[]>());
    for (int64_t i = 0; i < numTokens; ++i)
      data.get()[i] =
          static_cast<uint16_t>(syntheticInt(seed, "tokens", 0, i, bound));
    return TokenStream(std::move(data), numTokens, 2);
  }
  std::shared_ptr<uint32_t> data(new uint32_t[count],
                                 std::default_delete<uint32_t[]>());
  for (int64_t i = 0; i < numTokens; ++i)
    data.get()[i] =
        static_cast<uint32_t>(syntheticInt(seed, "tokens", 0, i, bound));
  return TokenStream(std::move(data), numTokens, 4);
}

int64_t TokenStream::at(int64_t i) const {
  assert(i >= 0 && i < size_);
  return width_ == 2 ? static_cast<const uint16_t *>(data_.get())[i]
                     : static_cast<const uint32_t *>(data_.get())[i];
}

void TokenStream::window(int64_t row, int64_t seqLength, int32_t *tokens,
                         int32_t *targets) const {
  assert(seqLength >= 1 && size_ >= seqLength + 2 && row >= 0 &&
         "the stream is too short for this window");
  int64_t span = size_ - seqLength - 1;
  // In 128 bits: row * seqLength outgrows int64 long before a run ends on a
  // large file.
  int64_t offset =
      static_cast<int64_t>(static_cast<__int128>(row) * seqLength % span);
  if (tokens)
    for (int64_t i = 0; i < seqLength; ++i)
      tokens[i] = static_cast<int32_t>(at(offset + i));
  if (targets)
    for (int64_t i = 0; i < seqLength; ++i)
      targets[i] = static_cast<int32_t>(at(offset + i + 1));
}

} // namespace zero::runtime
