//===- Program.cpp - element types of a schedule --------------------------===//

#include "zero/runtime/Program.h"

namespace zero::runtime {

namespace {
struct DTypeEntry {
  DType type;
  const char *name;
  int64_t width;
};
constexpr DTypeEntry kDTypes[] = {
    {DType::F32, "f32", 4},  {DType::F64, "f64", 8}, {DType::BF16, "bf16", 2},
    {DType::F16, "f16", 2},  {DType::I64, "i64", 8}, {DType::I32, "i32", 4},
    {DType::I1, "i1", 1},    {DType::Index, "index", 8},
};
} // namespace

StatusOr<DType> parseDType(std::string_view name, const std::string &path) {
  for (const DTypeEntry &entry : kDTypes)
    if (name == entry.name)
      return entry.type;
  return ZERO_ERROR(kInvalidArgument,
                    path + ": unknown dtype '" + std::string(name) +
                        "' (expected f32, f64, bf16, f16, i64, i32, i1 or "
                        "index)");
}

const char *getDTypeName(DType type) {
  return kDTypes[static_cast<int>(type)].name;
}

int64_t getDTypeWidth(DType type) {
  return kDTypes[static_cast<int>(type)].width;
}

bool isFloat(DType type) {
  return type == DType::F32 || type == DType::F64 || type == DType::BF16 ||
         type == DType::F16;
}

} // namespace zero::runtime
