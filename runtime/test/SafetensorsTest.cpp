//===- SafetensorsTest.cpp - fp32 tensors in the safetensors format -------===//

#include "zero/runtime/Safetensors.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

using namespace zero::runtime;

namespace {

class Safetensors : public test::TempDirTest {
protected:
  /// A file: the 8-byte little-endian length of `header`, `header`, `data`.
  std::string writeRaw(const std::string &name, const std::string &header,
                       const std::string &data) {
    std::string bytes;
    uint64_t length = header.size();
    for (int i = 0; i < 8; ++i)
      bytes.push_back(static_cast<char>(length >> (8 * i)));
    return writeBytes(name, bytes + header + data);
  }

  static std::string readBytes(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  /// The error message of reading a file with this header and data.
  std::string readError(const std::string &header, const std::string &data,
                        StatusCode code = StatusCode::kInvalidArgument) {
    std::string file = writeRaw("bad.safetensors", header, data);
    StatusOr<std::vector<NamedTensor>> result = readSafetensors(file);
    EXPECT_FALSE(result.isOk()) << header;
    if (result.isOk())
      return "";
    EXPECT_EQ(result.status().code(), code) << result.status().toString();
    // Every error names the file.
    EXPECT_EQ(result.status().message().rfind(file + ": ", 0), 0u)
        << result.status().toString();
    return result.status().message();
  }
};

/// Little-endian bytes of floats.
std::string floatBytes(std::initializer_list<float> values) {
  std::string bytes;
  for (float v : values) {
    uint32_t word;
    std::memcpy(&word, &v, 4);
    for (int i = 0; i < 4; ++i)
      bytes.push_back(static_cast<char>(word >> (8 * i)));
  }
  return bytes;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_F(Safetensors, RoundTrip) {
  std::vector<NamedTensor> tensors = {
      {"wte.weight", {2, 3}, {1, -2, 3.5f, 1e-30f, -0.0f, 65504}},
      {"b", {3}, {0.25f, 0.5f, 0.75f}},
      {"scalar", {}, {42}},
      {"empty", {0, 4}, {}},
  };
  std::string file = path("model.safetensors");
  ASSERT_TRUE(writeSafetensors(file, tensors, {{"step", "7"}}).isOk());

  // The header is 8-byte aligned, as the format's writers make it.
  std::string bytes = readBytes(file);
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = (headerBytes << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(headerBytes % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + headerBytes + (6 + 3 + 1) * 4);

  std::map<std::string, std::string> metadata;
  StatusOr<std::vector<NamedTensor>> read = readSafetensors(file, &metadata);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  ASSERT_EQ(read->size(), tensors.size());
  // Back in the written order (the empty tensor sorts by its offsets).
  std::vector<std::string> names;
  for (const NamedTensor &t : *read)
    names.push_back(t.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"wte.weight", "b", "scalar", "empty"}));
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ((*read)[i].shape, tensors[i].shape) << tensors[i].name;
    ASSERT_EQ((*read)[i].data.size(), tensors[i].data.size());
    EXPECT_EQ((*read)[i].data, tensors[i].data) << tensors[i].name;
  }
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"step", "7"}}));
}

// The bytes safetensors' own writer (safetensors.numpy.save_file({"b": ...,
// "a": ...}, metadata={"format": "np"})) produces: "__metadata__" first, data
// sorted by name, header padded with spaces to a multiple of 8.
TEST_F(Safetensors, ReadsTheReferenceWritersBytes) {
  std::string header =
      R"({"__metadata__":{"format":"np"},"a":{"dtype":"F32","shape":[2,2],)"
      R"("data_offsets":[0,16]},"b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})";
  header.append((8 - (8 + header.size()) % 8) % 8, ' ');
  std::string file = writeRaw("reference.safetensors", header,
                              floatBytes({1.0f, 2.0f, -3.0f, 0.5f, 7.0f}));
  std::map<std::string, std::string> metadata;
  StatusOr<std::vector<NamedTensor>> read = readSafetensors(file, &metadata);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].name, "a");
  EXPECT_EQ((*read)[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((*read)[0].data, (std::vector<float>{1.0f, 2.0f, -3.0f, 0.5f}));
  EXPECT_EQ((*read)[1].name, "b");
  EXPECT_EQ((*read)[1].data, (std::vector<float>{7.0f}));
  EXPECT_EQ(metadata.at("format"), "np");
  // And without the padding and with the data of "b" first.
  header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
           R"("b":{"shape":[],"dtype":"F32","data_offsets":[0,4]}})";
  file = writeRaw("unpadded.safetensors", header, floatBytes({9, 1, 2}));
  read = readSafetensors(file);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ((*read)[0].name, "b");
  EXPECT_EQ((*read)[0].data, (std::vector<float>{9}));
  EXPECT_EQ((*read)[1].data, (std::vector<float>{1, 2}));
}

// A header nested 100,000 deep: refused by the bounded parser, naming the
// file, before anything walks it recursively (the entry's message dumps
// the value).
TEST_F(Safetensors, DeeplyNestedHeader) {
  const int depth = 100000;
  std::string header = R"({"a": )" + std::string(depth, '[') +
                       std::string(depth, ']') + "}";
  EXPECT_TRUE(contains(readError(header, floatBytes({1})),
                       "the header is not valid JSON: nested deeper than 256 "
                       "levels of arrays and objects"));
}

// --init-from naming a FIFO with no writer: refused before open() blocks.
TEST_F(Safetensors, AFifoIsRefusedWithoutBlocking) {
  const std::string fifo = path("init.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ::alarm(30);
  StatusOr<std::vector<NamedTensor>> read = readSafetensors(fifo);
  ::alarm(0);
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().message(), fifo + ": not a regular file (a FIFO)");
}

TEST_F(Safetensors, MissingFile) {
  StatusOr<std::vector<NamedTensor>> read = readSafetensors(path("nope"));
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(read.status().message(), "nope: cannot open"));
}

TEST_F(Safetensors, TruncatedFiles) {
  std::string file = writeBytes("short.safetensors", "abc");
  StatusOr<std::vector<NamedTensor>> read = readSafetensors(file);
  ASSERT_FALSE(read.isOk());
  EXPECT_TRUE(
      contains(read.status().message(),
               "truncated: 3 bytes, but the header length alone takes 8"));

  // Cut inside the header.
  ASSERT_TRUE(writeSafetensors(path("full"), {{"a", {2}, {1, 2}}}).isOk());
  std::string bytes = readBytes(path("full"));
  file = writeBytes("cut-header.safetensors", bytes.substr(0, 20));
  read = readSafetensors(file);
  ASSERT_FALSE(read.isOk());
  EXPECT_TRUE(
      contains(read.status().message(), "exceeds the 12 bytes after it"))
      << read.status().message();

  // Cut inside the data.
  file = writeBytes("cut-data.safetensors", bytes.substr(0, bytes.size() - 2));
  read = readSafetensors(file);
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(contains(read.status().message(),
                       "tensor 'a': data_offsets [0, 8] run past the end of "
                       "the data (6 bytes): the file is truncated"))
      << read.status().message();
}

TEST_F(Safetensors, MalformedHeaders) {
  std::string data = floatBytes({1, 2});
  EXPECT_TRUE(contains(readError(R"({"a": {"dtype": "F32",)", data),
                       "the header is not valid JSON: "));
  EXPECT_TRUE(contains(readError("[1, 2]", data),
                       "the header must be a JSON object, got array"));
  EXPECT_TRUE(contains(readError(R"({"a": 3})", data),
                       "tensor 'a': expected an object, got 3"));
  EXPECT_TRUE(
      contains(readError(R"({"a": {"dtype": "F32", "shape": [2]}})", data),
               "tensor 'a': missing field 'data_offsets'"));
  EXPECT_TRUE(contains(
      readError(
          R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": 1}})",
          data),
      "tensor 'a': unknown field 'x'"));
  EXPECT_TRUE(contains(
      readError(
          R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})",
          data),
      "tensor 'a': shape[0] must be a non-negative integer, got -2"));
  EXPECT_TRUE(contains(
      readError(
          R"({"a": {"dtype": "F32", "shape": 2, "data_offsets": [0, 8]}})",
          data),
      "tensor 'a': shape must be an array, got 2"));
  EXPECT_TRUE(contains(
      readError(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})",
                data),
      "tensor 'a': data_offsets must be [begin, end], got [0]"));
  EXPECT_TRUE(contains(
      readError(
          R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
          R"( "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
          data),
      "the header is not valid JSON: the key 'a' appears twice in one object"));
  EXPECT_TRUE(contains(readError(R"({"__metadata__": {"format": 1}})", data),
                       "__metadata__: 'format' must be a string, got 1"));
}

TEST_F(Safetensors, OnlyF32) {
  std::string message = readError(
      R"({"w": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}})",
      floatBytes({1, 2}));
  EXPECT_TRUE(
      contains(message, "tensor 'w': dtype F16 is not supported (only F32)"))
      << message;
}

TEST_F(Safetensors, OffsetsOutOfRange) {
  std::string data = floatBytes({1, 2});
  EXPECT_TRUE(contains(
      readError(
          R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
          data, StatusCode::kOutOfRange),
      "tensor 'a': data_offsets [4, 12] run past the end of the data (8 "
      "bytes)"));
  EXPECT_TRUE(contains(
      readError(
          R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})",
          data),
      "tensor 'a': data_offsets [8, 0] end before they begin"));
  EXPECT_TRUE(contains(
      readError(
          R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})",
          data),
      "tensor 'a': data_offsets [0, 8] hold 8 bytes, but shape [3] of F32 "
      "needs 12"));
  EXPECT_TRUE(contains(
      readError(
          R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
          R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
          data),
      "the data of tensors 'a' and 'b' overlap"));
  EXPECT_TRUE(contains(
      readError(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296], )"
                R"("data_offsets": [0, 8]}})",
                data),
      "needs more bytes than the file's data (8 bytes)"));
}

TEST_F(Safetensors, WriteErrors) {
  // A full disk: /dev/full accepts the open and fails the flush.
  Status full = writeSafetensors("/dev/full", {{"a", {2}, {1, 2}}});
  ASSERT_FALSE(full.isOk());
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(contains(full.message(),
                       "/dev/full: write failed: No space left on device"))
      << full.message();

  // Missing directories are made; a file in their place is an error.
  Status missingDir = writeSafetensors(path("no/such/dir.safetensors"), {});
  EXPECT_TRUE(missingDir.isOk()) << missingDir.message();
  ASSERT_TRUE(writeSafetensors(path("x"), {{"a", {1}, {1}}}).isOk());
  Status underFile = writeSafetensors(path("x/a.safetensors"), {});
  ASSERT_FALSE(underFile.isOk());
  EXPECT_EQ(underFile.message(), path("x/a.safetensors") +
                                     ": cannot create the directory '" +
                                     path("x") + "': Not a directory");

  Status isDir = writeSafetensors(dir, {});
  ASSERT_FALSE(isDir.isOk());
  EXPECT_EQ(isDir.message(), dir + ": cannot write: Is a directory");

  Status mismatch = writeSafetensors(path("x"), {{"a", {2, 2}, {1, 2, 3}}});
  ASSERT_FALSE(mismatch.isOk());
  EXPECT_TRUE(
      contains(mismatch.message(),
               "tensor #0 ('a'): shape [2,2] has 4 elements, but the data 3"))
      << mismatch.message();

  Status twice =
      writeSafetensors(path("x"), {{"a", {1}, {1}}, {"a", {1}, {2}}});
  ASSERT_FALSE(twice.isOk());
  EXPECT_TRUE(
      contains(twice.message(), "tensor #1 ('a'): the name is used twice"));

  Status reserved = writeSafetensors(path("x"), {{"__metadata__", {1}, {1}}});
  ASSERT_FALSE(reserved.isOk());
  EXPECT_TRUE(contains(reserved.message(), "invalid tensor name"));
}

TEST_F(Safetensors, RawTensorsRoundTrip) {
  std::vector<RawTensor> tensors = {
      {"w", "BF16", {2}, std::string("\x80\x3f\x00\x40", 4)},
      {"step", "I64", {}, std::string("\x05\0\0\0\0\0\0\0", 8)},
      {"flag", "BOOL", {1}, std::string("\x01", 1)}};
  StatusOr<std::string> bytes =
      encodeRawSafetensors(tensors, {{"step", "5"}}, "raw.safetensors");
  ASSERT_TRUE(bytes.isOk()) << bytes.status().message();
  std::map<std::string, std::string> metadata;
  StatusOr<std::vector<RawTensor>> read =
      parseRawSafetensors(*bytes, "raw.safetensors", &metadata);
  ASSERT_TRUE(read.isOk()) << read.status().message();
  ASSERT_EQ(read->size(), 3u);
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ((*read)[i].name, tensors[i].name);
    EXPECT_EQ((*read)[i].dtype, tensors[i].dtype);
    EXPECT_EQ((*read)[i].shape, tensors[i].shape);
    EXPECT_EQ((*read)[i].bytes, tensors[i].bytes);
  }
  EXPECT_EQ(metadata["step"], "5");
  // The F32 reader refuses the other dtypes by name.
  std::string file = writeBytes("raw.safetensors", *bytes);
  StatusOr<std::vector<NamedTensor>> floats = readSafetensors(file);
  ASSERT_FALSE(floats.isOk());
  EXPECT_TRUE(contains(floats.status().message(), "(only F32)"));
}

TEST_F(Safetensors, HeaderAloneIsTheFilesFirstBytes) {
  std::vector<RawTensor> tensors = {{"w", "F32", {2}, std::string(8, '\1')},
                                    {"step", "I64", {}, std::string(8, '\0')}};
  StatusOr<std::string> bytes =
      encodeRawSafetensors(tensors, {{"step", "5"}}, "raw.safetensors");
  ASSERT_TRUE(bytes.isOk()) << bytes.status().message();
  std::vector<RawTensorHeader> headers;
  for (const RawTensor &tensor : tensors)
    headers.push_back(
        {tensor.name, tensor.dtype, tensor.shape, tensor.bytes.size()});
  StatusOr<std::string> header =
      encodeRawSafetensorsHeader(headers, {{"step", "5"}}, "raw.safetensors");
  ASSERT_TRUE(header.isOk()) << header.status().message();
  EXPECT_EQ(*header + tensors[0].bytes + tensors[1].bytes, *bytes);
  // A size that is not the shape's is refused as encodeRawSafetensors does.
  headers[0].bytes = 12;
  StatusOr<std::string> wrong =
      encodeRawSafetensorsHeader(headers, {}, "raw.safetensors");
  ASSERT_FALSE(wrong.isOk());
  EXPECT_TRUE(contains(wrong.status().message(),
                       "raw.safetensors: tensor #0 ('w'): shape [2] has 2 "
                       "elements, but the data 3"))
      << wrong.status().message();
}

TEST_F(Safetensors, RawTensorErrors) {
  StatusOr<std::string> unknown =
      encodeRawSafetensors({{"w", "F8", {1}, "x"}}, {}, "raw.safetensors");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_TRUE(contains(unknown.status().message(),
                       "raw.safetensors: tensor #0 ('w'): dtype 'F8' is not "
                       "one of the format's"))
      << unknown.status().message();
  StatusOr<std::string> bytes = encodeRawSafetensors(
      {{"w", "F16", {2}, std::string(4, '\0')}}, {}, "raw.safetensors");
  ASSERT_TRUE(bytes.isOk());
  StatusOr<std::vector<RawTensor>> truncated = parseRawSafetensors(
      bytes->substr(0, bytes->size() - 1), "raw.safetensors");
  ASSERT_FALSE(truncated.isOk());
  EXPECT_TRUE(contains(truncated.status().message(),
                       "raw.safetensors: tensor 'w': data_offsets [0, 4] run "
                       "past the end of the data (3 bytes)"))
      << truncated.status().message();
}
