//===- Safetensors.cpp - fp32 tensors in the safetensors format -----------===//

#include "zero/runtime/Safetensors.h"

#include "IOSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#include <sys/stat.h>

namespace zero::runtime {

using nlohmann::json;

namespace {

void swapFloatBytes(float *data, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    uint32_t word;
    std::memcpy(&word, &data[i], 4);
    word = (word >> 24) | ((word >> 8) & 0xFF00u) | ((word << 8) & 0xFF0000u) |
           (word << 24);
    std::memcpy(&data[i], &word, 4);
  }
}

/// Closes the file on every path out of a function.
struct FileCloser {
  void operator()(std::FILE *file) const {
    if (file)
      std::fclose(file);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

/// One entry of the header, checked.
struct TensorEntry {
  std::string name;
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
                                 const std::string &path, uint64_t dataBytes) {
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
  if (dtype.get<std::string>() != "F32")
    return ZERO_ERROR(kInvalidArgument, path + ": " + where + ": dtype " +
                                            dtype.get<std::string>() +
                                            " is not supported (only F32)");

  TensorEntry entry;
  entry.name = name;
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
  if (entry.end - entry.begin != numel * 4)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": " + where + ": " + range + " hold " +
                          std::to_string(entry.end - entry.begin) +
                          " bytes, but shape " + shape.dump() +
                          " of F32 needs " + std::to_string(numel * 4));
  return entry;
}

} // namespace

StatusOr<std::vector<NamedTensor>>
readSafetensors(const std::string &path,
                std::map<std::string, std::string> *metadata) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file)
    return io::openError(path, "cannot open");
  struct stat info;
  if (::fstat(fileno(file.get()), &info) != 0)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return ZERO_ERROR(kInvalidArgument, path + ": not a regular file");
  uint64_t fileBytes = static_cast<uint64_t>(info.st_size);
  if (fileBytes < 8)
    return ZERO_ERROR(kInvalidArgument,
                      path + ": truncated: " + std::to_string(fileBytes) +
                          " bytes, but the header length alone takes 8");

  unsigned char lengthBytes[8];
  if (std::fread(lengthBytes, 1, 8, file.get()) != 8)
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
      std::fread(headerText.data(), 1, headerBytes, file.get()) != headerBytes)
    return ZERO_ERROR(kUnavailable, path + ": cannot read the header");
  uint64_t dataBytes = fileBytes - 8 - headerBytes;

  // nlohmann keeps the last of two equal keys; a header with duplicates is
  // ambiguous, so find them while parsing (one set of keys per open object).
  std::vector<std::set<std::string>> openObjects;
  std::string duplicate;
  json header = json::parse(
      headerText,
      [&](int, json::parse_event_t event, json &parsed) {
        if (event == json::parse_event_t::object_start)
          openObjects.emplace_back();
        else if (event == json::parse_event_t::object_end)
          openObjects.pop_back();
        else if (event == json::parse_event_t::key && duplicate.empty() &&
                 !openObjects.back().insert(parsed.get<std::string>()).second)
          duplicate = parsed.get<std::string>();
        return true;
      },
      /*allow_exceptions=*/false);
  if (header.is_discarded()) {
    // Parse again with exceptions for the position of the error.
    std::string reason = "malformed JSON";
    try {
      json ignored = json::parse(headerText);
    } catch (const json::parse_error &error) {
      reason = error.what();
    }
    return ZERO_ERROR(kInvalidArgument,
                      path + ": the header is not valid JSON: " + reason);
  }
  if (!duplicate.empty())
    return ZERO_ERROR(kInvalidArgument, path + ": the header has the key '" +
                                            duplicate + "' twice");
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
        parseEntry(item.key(), item.value(), path, dataBytes);
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

  std::vector<NamedTensor> tensors;
  tensors.reserve(entries.size());
  for (TensorEntry &entry : entries) {
    NamedTensor tensor;
    tensor.name = std::move(entry.name);
    tensor.shape = std::move(entry.shape);
    size_t count = (entry.end - entry.begin) / 4;
    tensor.data.resize(count);
    if (count != 0) {
      if (::fseeko(file.get(),
                   static_cast<off_t>(8 + headerBytes + entry.begin),
                   SEEK_SET) != 0 ||
          std::fread(tensor.data.data(), 4, count, file.get()) != count)
        return ZERO_ERROR(kUnavailable, path + ": tensor '" + tensor.name +
                                            "': cannot read its data");
      if (!io::hostIsLittleEndian())
        swapFloatBytes(tensor.data.data(), count);
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

Status writeSafetensors(OutputFile &file,
                        const std::vector<NamedTensor> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  const std::string &path = file.path();
  json header = json::object();
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const NamedTensor &tensor = tensors[i];
    std::string where =
        "tensor #" + std::to_string(i) + " ('" + tensor.name + "')";
    if (tensor.name.empty() || tensor.name == "__metadata__")
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + where + ": invalid tensor name");
    if (header.contains(tensor.name))
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + where + ": the name is used twice");
    uint64_t numel = 1;
    for (int64_t dim : tensor.shape) {
      if (dim < 0)
        return ZERO_ERROR(kInvalidArgument, path + ": " + where +
                                                ": negative dimension " +
                                                std::to_string(dim));
      numel *= static_cast<uint64_t>(dim);
    }
    if (numel != tensor.data.size())
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + where + ": shape " +
                            json(tensor.shape).dump() + " has " +
                            std::to_string(numel) + " elements, but the data " +
                            std::to_string(tensor.data.size()));
    header[tensor.name] = {{"dtype", "F32"},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + numel * 4}}};
    offset += numel * 4;
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
  unsigned char lengthBytes[8];
  uint64_t length = headerText.size();
  for (int i = 0; i < 8; ++i)
    lengthBytes[i] = static_cast<unsigned char>(length >> (8 * i));

  ZERO_RETURN_IF_ERROR(file.write(lengthBytes, 8));
  ZERO_RETURN_IF_ERROR(file.write(headerText));
  std::vector<float> swapped;
  for (const NamedTensor &tensor : tensors) {
    const float *data = tensor.data.data();
    if (!io::hostIsLittleEndian()) {
      swapped = tensor.data;
      swapFloatBytes(swapped.data(), swapped.size());
      data = swapped.data();
    }
    ZERO_RETURN_IF_ERROR(file.write(data, tensor.data.size() * 4));
  }
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

} // namespace zero::runtime
