//===- OpContext.cpp - checking one instruction of a schedule -------------===//

#include "OpContext.h"

#include <algorithm>

namespace zero::runtime::ops {

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
  return op_ ? op_->op : "";
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

StatusOr<std::vector<const ValueInfo *>>
OpContext::getValues(const char *key) const {
  const std::vector<int64_t> &ids =
      std::string(key) == "operands" ? op_->operands : op_->results;
  std::vector<const ValueInfo *> list;
  for (size_t i = 0; i < ids.size(); ++i) {
    const ValueInfo *value = values_.lookup(ids[i]);
    if (!value)
      return error(std::string(key) + "[" + std::to_string(i) + "]",
                   "value " + std::to_string(ids[i]) + " is not defined");
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

StatusOr<Field> OpContext::getField(const char *key) const {
  for (const FieldInfo &info : kFieldInfos)
    if (info.name == key && op_ && op_->fields.has(info.field))
      return info.field;
  return error("", "missing field '" + std::string(key) + "' of " + name());
}

StatusOr<int64_t> OpContext::getInt(const char *key) const {
  StatusOr<Field> field = getField(key);
  if (!field.isOk())
    return field.status();
  return fields().getInt(*field);
}

StatusOr<double> OpContext::getNumber(const char *key) const {
  StatusOr<Field> field = getField(key);
  if (!field.isOk())
    return field.status();
  return fields().getNumber(*field);
}

StatusOr<bool> OpContext::getBool(const char *key) const {
  StatusOr<Field> field = getField(key);
  if (!field.isOk())
    return field.status();
  return fields().getBool(*field);
}

StatusOr<std::string> OpContext::getString(const char *key) const {
  StatusOr<Field> field = getField(key);
  if (!field.isOk())
    return field.status();
  return fields().getString(*field);
}

StatusOr<std::vector<int64_t>> OpContext::getIntList(const char *key) const {
  StatusOr<Field> field = getField(key);
  if (!field.isOk())
    return field.status();
  return fields().getIntList(*field);
}

StatusOr<std::vector<std::vector<int64_t>>>
OpContext::getIntListList(const char *key) const {
  StatusOr<Field> field = getField(key);
  if (!field.isOk())
    return field.status();
  return fields().getIntListList(*field);
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

StatusOr<OpValues> getOpValues(const OpContext &ctx) {
  OpValues values;
  StatusOr<std::vector<const ValueInfo *>> operands = ctx.getValues("operands");
  if (!operands.isOk())
    return operands.status();
  StatusOr<std::vector<const ValueInfo *>> results = ctx.getValues("results");
  if (!results.isOk())
    return results.status();
  values.operands = std::move(*operands);
  values.results = std::move(*results);
  return values;
}

} // namespace zero::runtime::ops
