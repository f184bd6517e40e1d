//===- Safetensors.h - fp32 tensors in the safetensors format ---*- C++ -*-===//
//
// The safetensors format (huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON header, then the raw tensor data. The
// header maps each tensor name to {"dtype", "shape", "data_offsets": [begin,
// end]} (offsets relative to the start of the data) and may hold a
// "__metadata__" object of strings. The runtime reads and writes "F32" only:
// parameters, master weights and optimizer states are fp32 checkpoints.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SAFETENSORS_H
#define ZERO_RUNTIME_SAFETENSORS_H

#include "zero/runtime/OutputFile.h"
#include "zero/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zero::runtime {

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// A tensor in any element type the format names ("F32", "BF16", "I64",
/// ...) as its little-endian bytes.
struct RawTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

/// The bytes of one element of safetensors dtype `dtype`, 0 for a name the
/// format does not have.
int64_t getSafetensorsDTypeWidth(const std::string &dtype);

/// Reads every tensor, in the order of their data in the file. Errors name
/// the file and the tensor or field: a malformed header, a dtype other than
/// F32, data offsets out of range or disagreeing with the shape, a truncated
/// file. `metadata`, when given, receives the "__metadata__" entries.
StatusOr<std::vector<NamedTensor>>
readSafetensors(const std::string &path,
                std::map<std::string, std::string> *metadata = nullptr);

/// Writes `tensors` with their data in the given order; the header's keys
/// are sorted and it is padded with spaces to a multiple of 8 bytes, as the
/// format's own writers do. Errors: a duplicate or empty name, data that
/// disagrees with the shape, an unwritable path, a full disk (every write
/// and the close are checked). The file appears whole or not at all
/// (OutputFile.h).
Status
writeSafetensors(const std::string &path,
                 const std::vector<NamedTensor> &tensors,
                 const std::map<std::string, std::string> &metadata = {});
/// The same into a file opened earlier, which the caller commits.
Status
writeSafetensors(OutputFile &file, const std::vector<NamedTensor> &tensors,
                 const std::map<std::string, std::string> &metadata = {});
/// The same file written tensor by tensor: the header of `tensors` (names
/// and shapes, their data in that order; NamedTensor::data unused), then
/// writeSafetensorsData of each, in order.
Status writeSafetensorsHeader(OutputFile &file,
                              const std::vector<NamedTensor> &tensors,
                              const std::map<std::string, std::string> &metadata);
Status writeSafetensorsData(OutputFile &file, const NamedTensor &tensor);

/// The tensors of a whole file's `bytes`, checked as readSafetensors checks
/// a file, in any dtype the format names; errors name `path`.
StatusOr<std::vector<RawTensor>>
parseRawSafetensors(const std::string &bytes, const std::string &path,
                    std::map<std::string, std::string> *metadata = nullptr);
/// A tensor of a file's bytes, without a copy of its data: the data's
/// offset from the file's start and its size.
struct RawTensorSpan {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};
/// The tensors of a whole file's `size` bytes at `data`, checked as
/// parseRawSafetensors checks them, where their data lies (in the format's
/// byte order, little-endian).
StatusOr<std::vector<RawTensorSpan>> parseRawSafetensorsSpans(
    const char *data, size_t size, const std::string &path,
    std::map<std::string, std::string> *metadata = nullptr);
/// The bytes of a file of `tensors`, laid out as writeSafetensors lays them
/// out; errors (those of writeSafetensors, an unknown dtype) name `path`.
StatusOr<std::string>
encodeRawSafetensors(const std::vector<RawTensor> &tensors,
                     const std::map<std::string, std::string> &metadata,
                     const std::string &path);

/// A tensor whose data lies elsewhere: its name, dtype, shape and size.
struct RawTensorHeader {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

/// The 8-byte length and the header that encodeRawSafetensors writes before
/// the data of `tensors`, which follows in the given order: a file can be
/// assembled without copying the data twice. Errors as encodeRawSafetensors'.
StatusOr<std::string>
encodeRawSafetensorsHeader(const std::vector<RawTensorHeader> &tensors,
                           const std::map<std::string, std::string> &metadata,
                           const std::string &path);

/// Puts `size` bytes of `width`-byte elements between this host's byte
/// order and the format's (little-endian), in place: the same swap either
/// way, none on a little-endian host.
void swapLittleEndian(char *data, size_t size, int64_t width);

/// An fp32 safetensors file read range by range (`--init-from`): only the
/// header is parsed at open, and each read fetches the elements asked for,
/// so that a rank of a sharded run reads (and holds) only its shards, not
/// the whole model. Header errors as readSafetensors's.
class SafetensorsReader {
public:
  /// `metadata`, when given, receives the "__metadata__" entries.
  static StatusOr<SafetensorsReader>
  open(const std::string &path,
       std::map<std::string, std::string> *metadata = nullptr);
  SafetensorsReader(SafetensorsReader &&other) noexcept;
  SafetensorsReader &operator=(SafetensorsReader &&other) noexcept;
  ~SafetensorsReader();

  const std::string &path() const { return path_; }
  /// The shape of tensor `name`, or null where the file has none.
  const std::vector<int64_t> *shape(const std::string &name) const;
  /// Elements [begin, begin + count) of tensor `name` (which must exist,
  /// begin + count <= its size) into `out`. A non-finite element is an
  /// error naming the tensor, its element and index ("initial weights must
  /// be finite"); a short read names the tensor.
  Status read(const std::string &name, int64_t begin, int64_t count,
              float *out) const;

private:
  // readSafetensors reads every tensor whole, unchecked, through it.
  friend StatusOr<std::vector<NamedTensor>>
  readSafetensors(const std::string &path,
                  std::map<std::string, std::string> *metadata);
  SafetensorsReader() = default;
  /// read without the finite check.
  Status readValues(const std::string &name, int64_t begin, int64_t count,
                    float *out) const;
  struct Entry {
    std::vector<int64_t> shape;
    int64_t numel = 0;
    uint64_t offset = 0; // of its first byte in the file
  };
  std::string path_;
  int fd_ = -1;
  std::map<std::string, Entry> entries_;
  /// The tensors' names in the order of their data.
  std::vector<std::string> order_;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_SAFETENSORS_H
