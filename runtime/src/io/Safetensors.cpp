//===- Safetensors.cpp - fp32 tensors in the safetensors format -----------===//

#include "zero/runtime/Safetensors.h"

#include "FileRead.h"
#include "IOSupport.h"
#include "Json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include <sys/stat.h>
#include <unistd.h>

namespace zero::runtime {

using nlohmann::json;

namespace {

struct DTypeWidth {
  const char *name;
  int64_t width;
};
constexpr DTypeWidth kDTypeWidths[] = {
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
    {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U64", 8},  {"U32", 4},
    {"U16", 2}, {"U8", 1},  {"BOOL", 1}};

void swapFloatBytes(float *data, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    uint32_t word;
    std::memcpy(&word, &data[i], 4);
    word = (word >> 24) | ((word >> 8) & 0xFF00u) | ((word << 8) & 0xFF0000u) |
           (word << 24);
    std::memcpy(&data[i], &word, 4);
  }
}

/// One entry of the header, checked.
struct TensorEntry {
  std::string name;
  std::string dtype;
  int64_t width = 4;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// Reads a non-negative integer JSON value of field `field` of `what`.
StatusOr<uint64_t> readCount(const json &value, const std::string &path,
                             const std::string &what) {
  if (!value.is_number_unsigned())
    return ZERO_ERROR(kInvalidArgument, path + ": " + what +
                                            " must be a non-negative "
                                            "integer, got " +
                                            value.dump());
  return value.get<uint64_t>();
}

StatusOr<TensorEntry> parseEntry(const std::string &name, const json &value,
                                 const std::string &path, uint64_t dataBytes,
                                 bool anyDType) {
  std::string where = "tensor '" + name + "'";
  if (!value.is_object())
    return ZERO_ERROR(kInvalidArgument, path + ": " + where +
                                            ": expected an object, got " +
                                            value.dump());
  for (const auto &item : value.items())
    if (item.key() != "dtype" && item.key() != "shape" &&
        item.key() != "data_offsets")
      return ZERO_ERROR(kInvalidArgument, path + ": " + where +
                                              ": unknown field '" + item.key() +
                                              "'");
  for (const char *field : {"dtype", "shape", "data_offsets"})
    if (!value.contains(field))
      return ZERO_ERROR(kInvalidArgument, path + ": " + where +
                                              ": missing field '" + field +
                                              "'");
  const json &dtype = value["dtype"];
  if (!dtype.is_string())
    return ZERO_ERROR(kInvalidArgument, path + ": " + where +
                                            ": dtype must be a string, got " +
                                            dtype.dump());
  TensorEntry entry;
  entry.name = name;
  entry.dtype = dtype.get<std::string>();
  entry.width = getSafetensorsDTypeWidth(entry.dtype);
  if (entry.width == 0 || (!anyDType && entry.dtype != "F32"))
    return ZERO_ERROR(kInvalidArgument,
                      path + ": " + where + ": dtype " + entry.dtype +
                          " is not supported (only " +
                          (anyDType ? "the format's dtypes" : "F32") + ")");
  const json &shape = value["shape"];
  if (!shape.is_array())
    return ZERO_ERROR(kInvalidArgument, path + ": " + where +
                                            ": shape must be an array, got " +
                                            shape.dump());
  // Count elements in bytes against the data size, so that a huge shape
  // cannot overflow.
  uint64_t numel = 1;
  bool tooBig = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    StatusOr<uint64_t> dim =
        readCount(shape[i], path, where + ": shape[" + std::to_string(i) + "]");
    if (!dim.isOk())
      return dim.status();
    entry.shape.push_back(static_cast<int64_t>(*dim));
    if (*dim == 0)
      numel = 0;
    else if (numel != 0 && (*dim > dataBytes || numel > dataBytes / *dim))
      tooBig = true;
    else
      numel *= *dim;
  }
  if (tooBig && numel != 0)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": " + where + ": shape " + shape.dump() +
                          " needs more bytes than the file's data (" +
                          std::to_string(dataBytes) + " bytes)");

  const json &offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": " + where +
                          ": data_offsets must be [begin, end], got " +
                          offsets.dump());
  StatusOr<uint64_t> begin =
      readCount(offsets[0], path, where + ": data_offsets[0]");
  if (!begin.isOk())
    return begin.status();
  StatusOr<uint64_t> end =
      readCount(offsets[1], path, where + ": data_offsets[1]");
  if (!end.isOk())
    return end.status();
  entry.begin = *begin;
  entry.end = *end;
  std::string range = "data_offsets [" + std::to_string(entry.begin) + ", " +
                      std::to_string(entry.end) + "]";
  if (entry.end < entry.begin)
    return ZERO_ERROR(kInvalidArgument, path + ": " + where + ": " + range +
                                            " end before they begin");
  if (entry.end > dataBytes)
    return ZERO_ERROR(kOutOfRange,
                      path + ": " + where + ": " + range +
                          " run past the end of the data (" +
                          std::to_string(dataBytes) +
                          " bytes): the file is truncated or the offsets "
                          "are wrong");
  uint64_t width = static_cast<uint64_t>(entry.width);
  if (numel > dataBytes / width || entry.end - entry.begin != numel * width)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": " + where + ": " + range + " hold " +
                          std::to_string(entry.end - entry.begin) +
                          " bytes, but shape " + shape.dump() + " of " +
                          entry.dtype + " needs " +
                          std::to_string(numel * width));
  return entry;
}

/// The header's tensors, checked against the `dataBytes` bytes after it and
/// sorted by their data; `anyDType`: every dtype of the format, else F32.
StatusOr<std::vector<TensorEntry>>
parseHeader(const std::string &headerText, const std::string &path,
            uint64_t dataBytes, bool anyDType,
            std::map<std::string, std::string> *metadata) {
  // nlohmann keeps the last of two equal keys; a header with duplicates is
  // ambiguous, so the parser refuses them (and any nesting past its bound).
  io::JsonLimits limits;
  limits.rejectDuplicateKeys = true;
  StatusOr<json> parsed =
      io::parseJson(headerText, path, "the header is not valid JSON", limits);
  if (!parsed.isOk())
    return parsed.status();
  const json &header = *parsed;
  if (!header.is_object())
    return ZERO_ERROR(kInvalidArgument,
                      path + ": the header must be a JSON object, got " +
                          std::string(header.type_name()));

  std::vector<TensorEntry> entries;
  for (const auto &item : header.items()) {
    if (item.key() == "__metadata__") {
      if (!item.value().is_object())
        return ZERO_ERROR(kInvalidArgument,
                          path + ": __metadata__ must be an object, got " +
                              item.value().dump());
      for (const auto &meta : item.value().items()) {
        if (!meta.value().is_string())
          return ZERO_ERROR(kInvalidArgument, path + ": __metadata__: '" +
                                                  meta.key() +
                                                  "' must be a string, got " +
                                                  meta.value().dump());
        if (metadata)
          (*metadata)[meta.key()] = meta.value().get<std::string>();
      }
      continue;
    }
    StatusOr<TensorEntry> entry =
        parseEntry(item.key(), item.value(), path, dataBytes, anyDType);
    if (!entry.isOk())
      return entry.status();
    entries.push_back(std::move(*entry));
  }

  std::sort(entries.begin(), entries.end(),
            [](const TensorEntry &a, const TensorEntry &b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  // Empty tensors hold no bytes and overlap nothing.
  const TensorEntry *previous = nullptr;
  for (const TensorEntry &entry : entries) {
    if (entry.begin == entry.end)
      continue;
    if (previous && entry.begin < previous->end)
      return ZERO_ERROR(kInvalidArgument, path + ": the data of tensors '" +
                                              previous->name + "' and '" +
                                              entry.name + "' overlap");
    previous = &entry;
  }
  return entries;
}

/// A tensor as the header names it: its data holds `count` elements.
struct HeaderItem {
  const std::string *name;
  std::string dtype;
  const std::vector<int64_t> *shape;
  uint64_t count;
};

/// The 8-byte length and the header of a file of `items`, their data in
/// that order; errors name `path`.
StatusOr<std::string>
encodeHeader(const std::vector<HeaderItem> &items,
             const std::map<std::string, std::string> &metadata,
             const std::string &path) {
  json header = json::object();
  uint64_t offset = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const HeaderItem &item = items[i];
    const std::string &name = *item.name;
    std::string where = "tensor #" + std::to_string(i) + " ('" + name + "')";
    if (name.empty() || name == "__metadata__")
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + where + ": invalid tensor name");
    if (header.contains(name))
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + where + ": the name is used twice");
    int64_t width = getSafetensorsDTypeWidth(item.dtype);
    if (width == 0)
      return ZERO_ERROR(kInvalidArgument, path + ": " + where + ": dtype '" +
                                              item.dtype +
                                              "' is not one of the format's");
    uint64_t numel = 1;
    for (int64_t dim : *item.shape) {
      if (dim < 0)
        return ZERO_ERROR(kInvalidArgument, path + ": " + where +
                                                ": negative dimension " +
                                                std::to_string(dim));
      numel *= static_cast<uint64_t>(dim);
    }
    if (numel != item.count)
      return ZERO_ERROR(kInvalidArgument, path + ": " + where + ": shape " +
                                              json(*item.shape).dump() +
                                              " has " + std::to_string(numel) +
                                              " elements, but the data " +
                                              std::to_string(item.count));
    uint64_t bytes = numel * static_cast<uint64_t>(width);
    header[name] = {{"dtype", item.dtype},
                    {"shape", *item.shape},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty())
    header["__metadata__"] = metadata;

  std::string headerText;
  try {
    headerText = header.dump();
  } catch (const json::type_error &error) {
    return ZERO_ERROR(kInvalidArgument,
                      path +
                          ": a tensor name or metadata entry is not valid "
                          "UTF-8: " +
                          error.what());
  }
  // Pad with spaces so that the data starts 8-byte aligned.
  headerText.append((8 - headerText.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t length = headerText.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>(length >> (8 * i));
  return out + headerText;
}

/// Reverses the bytes of each `width`-byte element of `bytes`.
void swapElementBytes(std::string &bytes, int64_t width) {
  for (size_t i = 0; i + width <= bytes.size(); i += width)
    std::reverse(bytes.begin() + i, bytes.begin() + i + width);
}

} // namespace

int64_t getSafetensorsDTypeWidth(const std::string &dtype) {
  for (const DTypeWidth &known : kDTypeWidths)
    if (dtype == known.name)
      return known.width;
  return 0;
}

StatusOr<std::vector<NamedTensor>>
readSafetensors(const std::string &path,
                std::map<std::string, std::string> *metadata) {
  StatusOr<SafetensorsReader> reader = SafetensorsReader::open(path, metadata);
  if (!reader.isOk())
    return reader.status();
  std::vector<NamedTensor> tensors;
  tensors.reserve(reader->order_.size());
  for (const std::string &name : reader->order_) {
    NamedTensor tensor;
    tensor.name = name;
    const auto &entry = reader->entries_.at(name);
    tensor.shape = entry.shape;
    tensor.data.resize(static_cast<size_t>(entry.numel));
    ZERO_RETURN_IF_ERROR(
        reader->readValues(name, 0, entry.numel, tensor.data.data()));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

/// The header of `tensors`: their counts from their data, or (a header
/// written before the data exists) from their shapes.
static Status writeHeader(OutputFile &file,
                          const std::vector<NamedTensor> &tensors,
                          const std::map<std::string, std::string> &metadata,
                          bool countFromData) {
  std::vector<HeaderItem> items;
  for (const NamedTensor &tensor : tensors) {
    uint64_t count = tensor.data.size();
    if (!countFromData) {
      count = 1;
      for (int64_t dim : tensor.shape)
        count *= static_cast<uint64_t>(std::max<int64_t>(dim, 0));
    }
    items.push_back({&tensor.name, "F32", &tensor.shape, count});
  }
  StatusOr<std::string> header = encodeHeader(items, metadata, file.path());
  if (!header.isOk())
    return header.status();
  return file.write(*header);
}

Status writeSafetensorsHeader(
    OutputFile &file, const std::vector<NamedTensor> &tensors,
    const std::map<std::string, std::string> &metadata) {
  return writeHeader(file, tensors, metadata, /*countFromData=*/false);
}

Status writeSafetensorsData(OutputFile &file, const NamedTensor &tensor) {
  if (io::hostIsLittleEndian())
    return file.write(tensor.data.data(), tensor.data.size() * 4);
  std::vector<float> swapped = tensor.data;
  swapFloatBytes(swapped.data(), swapped.size());
  return file.write(swapped.data(), swapped.size() * 4);
}

Status writeSafetensors(OutputFile &file,
                        const std::vector<NamedTensor> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  ZERO_RETURN_IF_ERROR(
      writeHeader(file, tensors, metadata, /*countFromData=*/true));
  for (const NamedTensor &tensor : tensors)
    ZERO_RETURN_IF_ERROR(writeSafetensorsData(file, tensor));
  return Status::ok();
}

Status writeSafetensors(const std::string &path,
                        const std::vector<NamedTensor> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::open(path);
  if (!file.isOk())
    return file.status();
  ZERO_RETURN_IF_ERROR(writeSafetensors(**file, tensors, metadata));
  return (*file)->commit();
}

StatusOr<std::vector<RawTensorSpan>>
parseRawSafetensorsSpans(const char *data, size_t size, const std::string &path,
                         std::map<std::string, std::string> *metadata) {
  if (size < 8)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": truncated: " + std::to_string(size) +
                          " bytes, but the header length alone takes 8");
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = (headerBytes << 8) | static_cast<unsigned char>(data[i]);
  if (headerBytes > size - 8)
    return ZERO_ERROR(kInvalidArgument,
                      path +
                          ": truncated or not safetensors: the header "
                          "length " +
                          std::to_string(headerBytes) + " exceeds the " +
                          std::to_string(size - 8) + " bytes after it");
  uint64_t dataBytes = size - 8 - headerBytes;
  StatusOr<std::vector<TensorEntry>> entries =
      parseHeader(std::string(data + 8, headerBytes), path, dataBytes,
                  /*anyDType=*/true, metadata);
  if (!entries.isOk())
    return entries.status();
  std::vector<RawTensorSpan> tensors;
  for (TensorEntry &entry : *entries)
    tensors.push_back({std::move(entry.name), std::move(entry.dtype),
                       std::move(entry.shape), 8 + headerBytes + entry.begin,
                       entry.end - entry.begin});
  return tensors;
}

StatusOr<std::vector<RawTensor>>
parseRawSafetensors(const std::string &bytes, const std::string &path,
                    std::map<std::string, std::string> *metadata) {
  StatusOr<std::vector<RawTensorSpan>> spans =
      parseRawSafetensorsSpans(bytes.data(), bytes.size(), path, metadata);
  if (!spans.isOk())
    return spans.status();
  std::vector<RawTensor> tensors;
  for (RawTensorSpan &span : *spans) {
    RawTensor tensor;
    tensor.name = std::move(span.name);
    tensor.dtype = std::move(span.dtype);
    tensor.shape = std::move(span.shape);
    tensor.bytes = bytes.substr(span.offset, span.bytes);
    if (!io::hostIsLittleEndian())
      swapElementBytes(tensor.bytes, getSafetensorsDTypeWidth(tensor.dtype));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

StatusOr<std::string>
encodeRawSafetensors(const std::vector<RawTensor> &tensors,
                     const std::map<std::string, std::string> &metadata,
                     const std::string &path) {
  std::vector<HeaderItem> items;
  for (const RawTensor &tensor : tensors) {
    int64_t width = getSafetensorsDTypeWidth(tensor.dtype);
    items.push_back({&tensor.name, tensor.dtype, &tensor.shape,
                     width == 0 || tensor.bytes.size() % width != 0
                         ? ~uint64_t(0)
                         : tensor.bytes.size() / width});
  }
  StatusOr<std::string> out = encodeHeader(items, metadata, path);
  if (!out.isOk())
    return out.status();
  for (const RawTensor &tensor : tensors) {
    if (io::hostIsLittleEndian()) {
      *out += tensor.bytes;
      continue;
    }
    std::string swapped = tensor.bytes;
    swapElementBytes(swapped, getSafetensorsDTypeWidth(tensor.dtype));
    *out += swapped;
  }
  return out;
}

StatusOr<std::string>
encodeRawSafetensorsHeader(const std::vector<RawTensorHeader> &tensors,
                           const std::map<std::string, std::string> &metadata,
                           const std::string &path) {
  std::vector<HeaderItem> items;
  for (const RawTensorHeader &tensor : tensors) {
    uint64_t width = getSafetensorsDTypeWidth(tensor.dtype);
    items.push_back({&tensor.name, tensor.dtype, &tensor.shape,
                     width == 0 || tensor.bytes % width != 0
                         ? ~uint64_t(0)
                         : tensor.bytes / width});
  }
  return encodeHeader(items, metadata, path);
}

void swapLittleEndian(char *data, size_t size, int64_t width) {
  if (io::hostIsLittleEndian() || width <= 1)
    return;
  for (size_t i = 0; i + width <= size; i += width)
    std::reverse(data + i, data + i + width);
}

StatusOr<SafetensorsReader>
SafetensorsReader::open(const std::string &path,
                        std::map<std::string, std::string> *metadata) {
  StatusOr<int> opened = io::openRegularFile(path);
  if (!opened.isOk())
    return opened.status();
  SafetensorsReader reader;
  reader.path_ = path;
  reader.fd_ = *opened;
  struct stat info;
  if (::fstat(reader.fd_, &info) != 0)
    return io::errnoError(path, "cannot stat", errno);
  const uint64_t fileBytes = static_cast<uint64_t>(info.st_size);
  if (fileBytes < 8)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": truncated: " + std::to_string(fileBytes) +
                          " bytes, but the header length alone takes 8");
  unsigned char lengthBytes[8];
  if (::pread(reader.fd_, lengthBytes, 8, 0) != 8)
    return ZERO_ERROR(kUnavailable, path + ": cannot read the header length");
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = (headerBytes << 8) | lengthBytes[i];
  if (headerBytes > fileBytes - 8)
    return ZERO_ERROR(kInvalidArgument,
                      path +
                          ": truncated or not safetensors: the header "
                          "length " +
                          std::to_string(headerBytes) + " exceeds the " +
                          std::to_string(fileBytes - 8) + " bytes after it");
  std::string headerText(headerBytes, '\0');
  if (headerBytes != 0 &&
      ::pread(reader.fd_, headerText.data(), headerBytes, 8) !=
          static_cast<ssize_t>(headerBytes))
    return ZERO_ERROR(kUnavailable, path + ": cannot read the header");
  StatusOr<std::vector<TensorEntry>> parsed =
      parseHeader(headerText, path, fileBytes - 8 - headerBytes,
                  /*anyDType=*/false, metadata);
  if (!parsed.isOk())
    return parsed.status();
  for (TensorEntry &entry : *parsed) {
    reader.order_.push_back(entry.name);
    // f32 only (anyDType false): 4 bytes an element.
    reader.entries_[entry.name] = {
        std::move(entry.shape),
        static_cast<int64_t>(entry.end - entry.begin) / 4,
        8 + headerBytes + entry.begin};
  }
  return reader;
}

SafetensorsReader::SafetensorsReader(SafetensorsReader &&other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_),
      entries_(std::move(other.entries_)), order_(std::move(other.order_)) {
  other.fd_ = -1;
}

SafetensorsReader &
SafetensorsReader::operator=(SafetensorsReader &&other) noexcept {
  std::swap(path_, other.path_);
  std::swap(fd_, other.fd_);
  std::swap(entries_, other.entries_);
  std::swap(order_, other.order_);
  return *this;
}

SafetensorsReader::~SafetensorsReader() {
  if (fd_ >= 0)
    ::close(fd_);
}

const std::vector<int64_t> *
SafetensorsReader::shape(const std::string &name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second.shape;
}

Status SafetensorsReader::readValues(const std::string &name, int64_t begin,
                                     int64_t count, float *out) const {
  const Entry &entry = entries_.at(name);
  const size_t bytes = static_cast<size_t>(count) * 4;
  size_t done = 0;
  while (done < bytes) {
    ssize_t got = ::pread(fd_, reinterpret_cast<char *>(out) + done,
                          bytes - done,
                          static_cast<off_t>(entry.offset + begin * 4 + done));
    if (got <= 0)
      return ZERO_ERROR(kUnavailable, path_ + ": tensor '" + name +
                                          "': cannot read its data");
    done += static_cast<size_t>(got);
  }
  if (!io::hostIsLittleEndian())
    swapFloatBytes(out, static_cast<size_t>(count));
  return Status::ok();
}

Status SafetensorsReader::read(const std::string &name, int64_t begin,
                               int64_t count, float *out) const {
  ZERO_RETURN_IF_ERROR(readValues(name, begin, count, out));
  const Entry &entry = entries_.at(name);
  const float *bad = std::find_if(out, out + count,
                                  [](float v) { return !std::isfinite(v); });
  if (bad == out + count)
    return Status::ok();
  const int64_t flat = begin + (bad - out);
  std::vector<int64_t> index(entry.shape.size());
  int64_t rest = flat;
  for (size_t d = entry.shape.size(); d-- > 0;) {
    index[d] = rest % entry.shape[d];
    rest /= entry.shape[d];
  }
  std::string where;
  for (size_t d = 0; d < index.size(); ++d)
    where += (d ? ", " : "") + std::to_string(index[d]);
  const std::string value = std::isnan(*bad) ? "nan" : *bad > 0 ? "inf" : "-inf";
  return ZERO_ERROR(kInvalidArgument,
                    path_ + ": tensor '" + name + "' holds " + value +
                        " at element " + std::to_string(flat) + " (index [" +
                        where + "]): initial weights must be finite");
}

} // namespace zero::runtime
