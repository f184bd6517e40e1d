//===- OpContext.cpp - checking one instruction of a schedule -------------===//

#include "OpContext.h"

#include <algorithm>

namespace zero::runtime::host {

using Json = nlohmann::json;

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string describeValue(const ValueInfo &value) {
  std::string text = "value " + std::to_string(value.id);
  if (!value.name.empty())
    text += " (" + value.name + ")";
  return text;
}

int64_t getNumel(const std::vector<int64_t> &shape) {
  int64_t numel = 1;
  for (int64_t size : shape)
    numel *= size;
  return numel;
}

std::string OpContext::name() const {
  if (!what_.empty())
    return what_;
  auto it = op_.find("op");
  return it != op_.end() && it->is_string() ? it->get<std::string>() : "";
}

Status OpSite::error(StatusCode code, const std::string &field,
                     const std::string &message) const {
  std::string text = path;
  if (!field.empty())
    text += (field[0] == '[' ? "" : ".") + field;
  text += ": " + message + " at " + (loc.empty() ? "an unknown location" : loc);
  return Status(code, std::move(text), __FILE__, __LINE__);
}

Status OpContext::error(const std::string &field,
                        const std::string &message) const {
  return site().error(StatusCode::kInvalidArgument, field, message);
}

Status OpContext::checkKeys(std::initializer_list<const char *> common,
                            std::initializer_list<const char *> fields) const {
  if (!op_.is_object())
    return error("", "expected an object");
  for (auto it = op_.begin(); it != op_.end(); ++it) {
    const std::string &key = it.key();
    auto matches = [&](const char *name) { return key == name; };
    if (std::any_of(common.begin(), common.end(), matches) ||
        std::any_of(fields.begin(), fields.end(), matches))
      continue;
    std::string expected;
    for (const char *field : fields)
      expected += std::string(expected.empty() ? "" : ", ") + "'" + field + "'";
    return error(key,
                 "unknown key for " + name() +
                     (expected.empty() ? " (it takes no fields)"
                                       : " (its fields: " + expected + ")"));
  }
  return Status::ok();
}

StatusOr<std::vector<const ValueInfo *>>
OpContext::getValues(const char *key) const {
  auto it = op_.find(key);
  if (it == op_.end())
    return error("", std::string("missing field '") + key + "'");
  if (!it->is_array())
    return error(key, "expected an array of value ids");
  std::vector<const ValueInfo *> list;
  for (size_t i = 0; i < it->size(); ++i) {
    const Json &entry = (*it)[i];
    std::string field = std::string(key) + "[" + std::to_string(i) + "]";
    if (!entry.is_number_integer())
      return error(field, "expected a value id, got " + entry.dump());
    const ValueInfo *value = values_.lookup(entry.get<int64_t>());
    if (!value)
      return error(field, "value " + entry.dump() + " is not defined");
    list.push_back(value);
  }
  return list;
}

Status OpContext::expectCount(const char *key,
                              const std::vector<const ValueInfo *> &list,
                              size_t count) const {
  if (list.size() == count)
    return Status::ok();
  return error(key, name() + " takes " + std::to_string(count) + " " + key +
                        ", got " + std::to_string(list.size()));
}

static std::string indexed(const char *key, size_t index) {
  return std::string(key) + "[" + std::to_string(index) + "]";
}

Status OpContext::expectTensor(const char *key, size_t index,
                               const ValueInfo &value) const {
  if (value.isTensor)
    return Status::ok();
  return error(indexed(key, index),
               "expected a tensor, got scalar " + describeValue(value));
}

Status OpContext::expectScalar(const char *key, size_t index,
                               const ValueInfo &value) const {
  if (!value.isTensor)
    return Status::ok();
  return error(indexed(key, index),
               "expected a scalar, got tensor " + describeValue(value));
}

Status OpContext::expectDType(const char *key, size_t index,
                              const ValueInfo &value, DType dtype) const {
  if (value.dtype == dtype)
    return Status::ok();
  return error(indexed(key, index),
               std::string("expected dtype ") + getDTypeName(dtype) + ", got " +
                   getDTypeName(value.dtype) + " for " + describeValue(value));
}

Status OpContext::expectShape(const char *key, size_t index,
                              const ValueInfo &value,
                              const std::vector<int64_t> &shape) const {
  if (value.shape == shape)
    return Status::ok();
  return error(indexed(key, index), "expected shape " + formatShape(shape) +
                                        ", got " + formatShape(value.shape) +
                                        " for " + describeValue(value));
}

StatusOr<const Json *> OpContext::getField(const char *key) const {
  auto it = op_.find(key);
  if (it == op_.end())
    return error("", "missing field '" + std::string(key) + "' of " + name());
  return &*it;
}

StatusOr<int64_t> OpContext::getInt(const char *key) const {
  StatusOr<const Json *> field = getField(key);
  if (!field.isOk())
    return field.status();
  if (!(*field)->is_number_integer())
    return error(key, "expected an integer, got " + (*field)->dump());
  return (*field)->get<int64_t>();
}

StatusOr<double> OpContext::getNumber(const char *key) const {
  StatusOr<const Json *> field = getField(key);
  if (!field.isOk())
    return field.status();
  if (!(*field)->is_number())
    return error(key, "expected a number, got " + (*field)->dump());
  return (*field)->get<double>();
}

StatusOr<bool> OpContext::getBool(const char *key) const {
  StatusOr<const Json *> field = getField(key);
  if (!field.isOk())
    return field.status();
  if (!(*field)->is_boolean())
    return error(key, "expected true or false, got " + (*field)->dump());
  return (*field)->get<bool>();
}

StatusOr<std::string> OpContext::getString(const char *key) const {
  StatusOr<const Json *> field = getField(key);
  if (!field.isOk())
    return field.status();
  if (!(*field)->is_string())
    return error(key, "expected a string, got " + (*field)->dump());
  return (*field)->get<std::string>();
}

static bool readIntList(const Json &node, std::vector<int64_t> &out) {
  if (!node.is_array())
    return false;
  for (const Json &entry : node) {
    if (!entry.is_number_integer())
      return false;
    out.push_back(entry.get<int64_t>());
  }
  return true;
}

StatusOr<std::vector<int64_t>> OpContext::getIntList(const char *key) const {
  StatusOr<const Json *> field = getField(key);
  if (!field.isOk())
    return field.status();
  std::vector<int64_t> list;
  if (!readIntList(**field, list))
    return error(key, "expected an array of integers, got " + (*field)->dump());
  return list;
}

StatusOr<std::vector<std::vector<int64_t>>>
OpContext::getIntListList(const char *key) const {
  StatusOr<const Json *> field = getField(key);
  if (!field.isOk())
    return field.status();
  std::vector<std::vector<int64_t>> lists;
  bool ok = (*field)->is_array();
  for (size_t i = 0; ok && i < (*field)->size(); ++i) {
    lists.emplace_back();
    ok = readIntList((**field)[i], lists.back());
  }
  if (!ok)
    return error(key, "expected an array of arrays of integers, got " +
                          (*field)->dump());
  return lists;
}

Status OpContext::expectPermutation(const char *key,
                                    const std::vector<int64_t> &list) const {
  std::vector<bool> seen(list.size(), false);
  for (int64_t entry : list) {
    if (entry < 0 || entry >= static_cast<int64_t>(list.size()) || seen[entry])
      return error(key, "expected a permutation of the integers in [0, " +
                            std::to_string(list.size()) + "), got " +
                            formatShape(list));
    seen[entry] = true;
  }
  return Status::ok();
}

} // namespace zero::runtime::host
