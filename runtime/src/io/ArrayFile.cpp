//===- ArrayFile.cpp - a dataset array read sample by sample --------------===//

#include "ArrayFile.h"

#include "zero/runtime/Safetensors.h"

#include "FileRead.h"
#include "IOSupport.h"
#include "ops/ElementMath.h"

#include <cerrno>
#include <cstring>
#include <limits>


namespace zero::runtime::io {

namespace {

/// NumPy's little-endian (or byte-order-free) descrs, by safetensors name.
struct NpyType {
  const char *descr;
  const char *dtype;
};
constexpr NpyType kNpyTypes[] = {
    {"<f4", "F32"}, {"<f8", "F64"}, {"<f2", "F16"},  {"<i4", "I32"},
    {"<i8", "I64"}, {"<i2", "I16"}, {"|i1", "I8"},   {"|u1", "U8"},
    {"<u2", "U16"}, {"<u4", "U32"}, {"|b1", "BOOL"},
};

Status formatError(const std::string &path, const std::string &what) {
  return ZERO_ERROR(kInvalidArgument, path + ": " + what);
}

/// The value of `key` in a .npy header's Python dict literal, up to the
/// next top-level comma or the closing brace; "" if absent.
std::string npyField(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return "";
  at = header.find(':', at);
  if (at == std::string::npos)
    return "";
  size_t end = at + 1;
  int depth = 0;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  std::string value = header.substr(at + 1, end - at - 1);
  size_t first = value.find_first_not_of(" ");
  size_t last = value.find_last_not_of(" ");
  return first == std::string::npos ? ""
                                    : value.substr(first, last - first + 1);
}

/// Parses a .npy header: the dtype, the shape and where the data starts.
Status parseNpyHeader(const std::string &path, const char *bytes,
                      size_t size, std::string &dtype,
                      std::vector<int64_t> &shape, size_t &dataOffset) {
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0)
    return formatError(path, "not a NumPy .npy file (no \\x93NUMPY magic)");
  const unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) |
                   static_cast<size_t>(static_cast<unsigned char>(bytes[9]))
                       << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return formatError(path, "truncated .npy header");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = headerLength << 8 | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return formatError(path, ".npy format version " + std::to_string(major) +
                                 " is not supported (1 to 3 are)");
  }
  if (headerLength > size - headerStart)
    return formatError(path, "the .npy header of " +
                                 std::to_string(headerLength) +
                                 " bytes runs past the end of the file");
  const std::string header(bytes + headerStart, headerLength);
  dataOffset = headerStart + headerLength;

  std::string descr = npyField(header, "descr");
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    return formatError(path, "the .npy header has no 'descr'");
  descr = descr.substr(1, descr.size() - 2);
  if (descr.size() == 3 && descr[0] == '=')
    descr[0] = '<'; // native order; refused below on a big-endian host
  dtype.clear();
  for (const NpyType &type : kNpyTypes)
    if (descr == type.descr)
      dtype = type.dtype;
  if (dtype.empty())
    return formatError(path, "dtype '" + descr +
                                 "' is not supported (little-endian float16, "
                                 "float32, float64, int8 to int64, uint8 to "
                                 "uint32 or bool)");
  if (npyField(header, "fortran_order") != "False")
    return formatError(path, "the array is in Fortran order; save it in C "
                             "order (np.ascontiguousarray)");
  std::string dims = npyField(header, "shape");
  if (dims.size() < 2 || dims.front() != '(' || dims.back() != ')')
    return formatError(path, "the .npy header has no 'shape' tuple");
  shape.clear();
  size_t at = 1;
  while (at < dims.size() - 1) {
    size_t end = dims.find(',', at);
    if (end == std::string::npos)
      end = dims.size() - 1;
    std::string item = dims.substr(at, end - at);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) {
      errno = 0;
      char *stop = nullptr;
      long long value = std::strtoll(item.c_str(), &stop, 10);
      if (*stop != '\0' || errno != 0 || value < 0)
        return formatError(path, "shape entry '" + item +
                                     "' is not a non-negative integer");
      shape.push_back(value);
    }
    at = end + 1;
  }
  return Status::ok();
}

} // namespace

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

StatusOr<ArrayFile> ArrayFile::open(const std::string &path,
                                    const std::string &tensorName) {
  if (!hostIsLittleEndian())
    return formatError(path, "array files are read on little-endian hosts "
                             "only");
  StatusOr<MappedFile> mapped = mapRegularFile(path);
  if (!mapped.isOk())
    return mapped.status();
  const size_t size = mapped->size;
  if (size == 0)
    return formatError(path, "empty file");
  ArrayFile array;
  array.path_ = path;
  array.mapping_ = mapped->data;
  const char *bytes = array.mapping_.get();

  size_t offset = 0, available = 0;
  const bool isSafetensors =
      path.size() >= 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0;
  if (isSafetensors) {
    StatusOr<std::vector<RawTensorSpan>> spans =
        parseRawSafetensorsSpans(bytes, size, path);
    if (!spans.isOk())
      return spans.status();
    const RawTensorSpan *chosen = nullptr;
    std::string names;
    for (const RawTensorSpan &span : *spans) {
      names += (names.empty() ? "" : ", ") + span.name;
      if (span.name == tensorName)
        chosen = &span;
    }
    if (!chosen && spans->size() == 1)
      chosen = &spans->front();
    if (!chosen)
      return formatError(path, "no tensor '" + tensorName +
                                   "' (the file holds " +
                                   (names.empty() ? "none" : names) + ")");
    array.dtype_ = chosen->dtype;
    array.shape_ = chosen->shape;
    offset = chosen->offset;
    available = chosen->bytes;
  } else {
    ZERO_RETURN_IF_ERROR(parseNpyHeader(path, bytes, size, array.dtype_,
                                        array.shape_, offset));
    available = size - offset;
  }

  static const std::pair<const char *, int> kWidths[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U32", 4},  {"U16", 2},
      {"U8", 1},  {"BOOL", 1}};
  for (const auto &[name, width] : kWidths)
    if (array.dtype_ == name)
      array.width_ = width;
  if (array.width_ == 0)
    return formatError(path, "dtype " + array.dtype_ + " is not supported");
  array.isFloat_ = array.dtype_[0] == 'F' || array.dtype_ == "BF16";
  if (array.shape_.empty())
    return formatError(path, "a 0-d array has no samples; the first "
                             "dimension indexes them");
  __int128 numel = 1;
  for (int64_t d : array.shape_)
    numel *= d;
  if (numel * array.width_ != static_cast<__int128>(available))
    return formatError(
        path, "shape " + formatShape(array.shape_) + " of " + array.dtype_ +
                  " needs " +
                  std::to_string(static_cast<int64_t>(numel * array.width_)) +
                  " bytes of data, the file holds " +
                  std::to_string(available));
  array.sampleNumel_ = 1;
  for (size_t i = 1; i < array.shape_.size(); ++i)
    array.sampleNumel_ *= array.shape_[i];
  array.data_ = bytes + offset;
  return array;
}

double ArrayFile::loadFloat(int64_t index) const {
  const char *p = data_ + index * width_;
  if (dtype_ == "F32") {
    float value;
    std::memcpy(&value, p, 4);
    return value;
  }
  if (dtype_ == "F64") {
    double value;
    std::memcpy(&value, p, 8);
    return value;
  }
  unsigned short bits;
  std::memcpy(&bits, p, 2);
  return dtype_ == "F16" ? ops::widenF16(bits) : ops::widenBF16(bits);
}

int64_t ArrayFile::loadInt(int64_t index) const {
  const char *p = data_ + index * width_;
  int64_t value = 0;
  if (dtype_ == "I64") {
    std::memcpy(&value, p, 8);
  } else if (dtype_ == "I32") {
    int32_t v;
    std::memcpy(&v, p, 4);
    value = v;
  } else if (dtype_ == "I16") {
    int16_t v;
    std::memcpy(&v, p, 2);
    value = v;
  } else if (dtype_ == "I8") {
    value = static_cast<int8_t>(*p);
  } else if (dtype_ == "U32") {
    uint32_t v;
    std::memcpy(&v, p, 4);
    value = v;
  } else if (dtype_ == "U16") {
    uint16_t v;
    std::memcpy(&v, p, 2);
    value = v;
  } else {
    value = static_cast<uint8_t>(*p);
  }
  return value;
}

} // namespace zero::runtime::io
