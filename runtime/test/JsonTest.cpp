//===- JsonTest.cpp - io::parseJson, the runtime's bounded JSON parser ----===//
//
// The bounds hold exactly (256 levels parse, 257 do not; the size limit to
// the byte), a document nested 100,000 deep is refused without a recursive
// walk, duplicate keys are refused where asked for, and every error names
// the file.
//
//===----------------------------------------------------------------------===//

#include "io/Json.h"

#include <gtest/gtest.h>

#include <string>

using namespace zero::runtime;

namespace {

std::string nested(int depth, const std::string &inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

TEST(Json, DepthIsBoundedExactly) {
  StatusOr<nlohmann::json> deepest = io::parseJson(nested(256, "1"), "f.json");
  ASSERT_TRUE(deepest.isOk()) << deepest.status().toString();
  StatusOr<nlohmann::json> deeper = io::parseJson(nested(257, "1"), "f.json");
  ASSERT_FALSE(deeper.isOk());
  EXPECT_EQ(deeper.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(deeper.status().message(),
            "f.json: not valid JSON: nested deeper than 256 levels of arrays "
            "and objects");
  // Objects count as arrays do.
  std::string objects;
  for (int i = 0; i < 257; ++i)
    objects += "{\"a\": ";
  objects += "1" + std::string(257, '}');
  EXPECT_FALSE(io::parseJson(objects, "f.json").isOk());
}

TEST(Json, AHundredThousandLevelsAreRefusedWithoutCrashing) {
  StatusOr<nlohmann::json> parsed =
      io::parseJson("{\"x\": " + nested(100000) + "}", "m.json", "the manifest");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().message(),
            "m.json: the manifest: nested deeper than 256 levels of arrays "
            "and objects");
}

TEST(Json, SizeIsBounded) {
  io::JsonLimits limits;
  limits.maxBytes = 7;
  EXPECT_TRUE(io::parseJson("[1,2,3]", "f.json", "not valid JSON", limits)
                  .isOk());
  StatusOr<nlohmann::json> large =
      io::parseJson("[1,2,34]", "f.json", "not valid JSON", limits);
  ASSERT_FALSE(large.isOk());
  EXPECT_EQ(large.status().message(),
            "f.json: not valid JSON: 8 bytes, more than the 7 bytes allowed");
}

TEST(Json, SyntaxErrorsAndDuplicateKeysNameTheFile) {
  StatusOr<nlohmann::json> cut = io::parseJson("{\"a\": [1, ", "f.json");
  ASSERT_FALSE(cut.isOk());
  EXPECT_EQ(cut.status().message().rfind("f.json: not valid JSON: ", 0), 0u)
      << cut.status().message();
  EXPECT_NE(cut.status().message().find("parse error at line 1"),
            std::string::npos)
      << cut.status().message();

  const std::string twice = R"({"a": {"b": 1, "b": 2}, "c": {"b": 3}})";
  EXPECT_TRUE(io::parseJson(twice, "f.json").isOk());
  io::JsonLimits limits;
  limits.rejectDuplicateKeys = true;
  StatusOr<nlohmann::json> refused =
      io::parseJson(twice, "f.json", "not valid JSON", limits);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().message(),
            "f.json: not valid JSON: the key 'b' appears twice in one object");
  // The same key in two objects is no duplicate.
  EXPECT_TRUE(io::parseJson(R"({"a": {"b": 1}, "c": {"b": 3}})", "f.json",
                            "not valid JSON", limits)
                  .isOk());
}

} // namespace
