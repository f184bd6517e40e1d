//===- HostTestUtil.h - a hand-built program for host kernel tests -*- C++
//-*-===//
//
// A ValueTable built value by value and a Frame over one byte vector, so that
// tests decode single instructions (decodeInstruction), prepare them on the
// host (host::prepareComputeOp) and run them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_HOSTTESTUTIL_H
#define ZERO_RUNTIME_TEST_HOSTTESTUTIL_H

#include "host/HostOp.h"
#include "ops/Check.h"
#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Schedule.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime::test {

class TestProgram : public host::Frame {
public:
  /// A tensor value with its own memory, or sharing `aliasOf`'s.
  int64_t tensor(DType dtype, std::vector<int64_t> shape,
                 const std::string &name = "", int64_t aliasOf = -1) {
    ValueInfo info = makeInfo(name);
    info.isTensor = true;
    info.dtype = dtype;
    info.shape = std::move(shape);
    info.numel = 1;
    for (int64_t size : info.shape)
      info.numel *= size;
    info.buffer = static_cast<int64_t>(offsets_.size());
    if (aliasOf >= 0) {
      offsets_.push_back(offsets_[aliasOf]);
    } else {
      offsets_.push_back(arena_.size());
      size_t bytes = info.numel * getDTypeWidth(dtype);
      arena_.resize(arena_.size() + ((bytes + 63) / 64 + 1) * 64);
    }
    values.values.push_back(info);
    scalars_.emplace_back();
    return info.id;
  }

  int64_t scalar(DType dtype, const std::string &name = "") {
    ValueInfo info = makeInfo(name);
    info.dtype = dtype;
    offsets_.push_back(0);
    values.values.push_back(info);
    scalars_.emplace_back();
    return info.id;
  }

  template <typename T> T *data(int64_t id) {
    return reinterpret_cast<T *>(arena_.data() + offsets_[id]);
  }
  template <typename T> void set(int64_t id, const std::vector<T> &values) {
    std::memcpy(data<T>(id), values.data(), values.size() * sizeof(T));
  }
  template <typename T> std::vector<T> get(int64_t id) {
    const ValueInfo &info = values.values[id];
    return std::vector<T>(data<T>(id), data<T>(id) + info.numel);
  }
  /// A tensor of any float type or i32/i64 from doubles (rounded to the
  /// type), and back.
  void setValues(int64_t id, const std::vector<double> &values) {
    const DType type = this->values.values[id].dtype;
    for (size_t i = 0; i < values.size(); ++i) {
      const double v = values[i];
      switch (type) {
      case DType::F32: data<float>(id)[i] = static_cast<float>(v); break;
      case DType::F64: data<double>(id)[i] = v; break;
      case DType::BF16: data<uint16_t>(id)[i] = roundToBF16(v); break;
      case DType::F16: data<uint16_t>(id)[i] = roundToF16(v); break;
      case DType::I32: data<int32_t>(id)[i] = static_cast<int32_t>(v); break;
      default: data<int64_t>(id)[i] = static_cast<int64_t>(v); break;
      }
    }
  }
  std::vector<double> getValues(int64_t id) {
    const ValueInfo &info = values.values[id];
    std::vector<double> out(info.numel);
    for (int64_t i = 0; i < info.numel; ++i)
      switch (info.dtype) {
      case DType::F32: out[i] = data<float>(id)[i]; break;
      case DType::F64: out[i] = data<double>(id)[i]; break;
      case DType::BF16: out[i] = bf16ToFloat(data<uint16_t>(id)[i]); break;
      case DType::F16: out[i] = f16ToFloat(data<uint16_t>(id)[i]); break;
      case DType::I32: out[i] = data<int32_t>(id)[i]; break;
      default: out[i] = static_cast<double>(data<int64_t>(id)[i]); break;
      }
    return out;
  }
  void setF(int64_t id, double value) { scalars_[id].f = value; }
  void setI(int64_t id, int64_t value) { scalars_[id].i = value; }

  /// Decodes one instruction as instructions.compute[0] at "m.mlir:1:1";
  /// `op` gets "point" and "loc" unless it has them.
  StatusOr<Instruction> decode(nlohmann::json op) {
    if (op.is_object() && !op.contains("point"))
      op["point"] = 0;
    if (op.is_object() && !op.contains("loc"))
      op["loc"] = "m.mlir:1:1";
    return decodeInstruction(op.dump(), "instructions.compute[0]", values,
                             worldSize_);
  }
  /// Prepares one decoded instruction for the host.
  StatusOr<std::unique_ptr<host::ComputeOp>> prepare(const nlohmann::json &op) {
    StatusOr<Instruction> inst = decode(op);
    if (!inst.isOk())
      return inst.status();
    return host::prepareComputeOp(*inst, "", values);
  }
  /// Prepares and runs; fails the test on any error.
  void run(const nlohmann::json &op) {
    StatusOr<std::unique_ptr<host::ComputeOp>> prepared = prepare(op);
    ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
    Status status = (*prepared)->run(*this);
    ASSERT_TRUE(status.isOk()) << status.toString();
  }
  /// The message of the error that preparing `op` gives ("" if none).
  /// The host refuses exactly what the one check of every device refuses
  /// (ops::checkComputeOp), with the same words: the test fails otherwise.
  std::string prepareError(const nlohmann::json &op) {
    StatusOr<Instruction> inst = decode(op);
    if (!inst.isOk())
      return inst.status().message();
    const Status checked =
        ops::checkComputeOp(ops::getInstructionContext(*inst, "", values))
            .status();
    StatusOr<std::unique_ptr<host::ComputeOp>> prepared =
        host::prepareComputeOp(*inst, "", values);
    const std::string message =
        prepared.isOk() ? "" : prepared.status().message();
    EXPECT_EQ(checked.isOk() ? "" : checked.message(), message)
        << "the host and ops::checkComputeOp disagree on " << op.dump();
    return message;
  }

  // Frame.
  TensorRef tensor(int64_t id) override {
    const ValueInfo &info = values.values[id];
    return {arena_.data() + offsets_[id], info.dtype, &info.shape, info.numel};
  }
  Scalar &scalar(int64_t id) override { return scalars_[id]; }
  int rank() const override { return rank_; }
  int worldSize() const override { return worldSize_; }
  void setRank(int rank, int worldSize) {
    rank_ = rank;
    worldSize_ = worldSize;
  }

  ValueTable values;

private:
  ValueInfo makeInfo(const std::string &name) {
    ValueInfo info;
    info.id = static_cast<int64_t>(values.values.size());
    info.name = name.empty() ? "%" + std::to_string(info.id) : name;
    return info;
  }

  std::vector<std::byte> arena_ = std::vector<std::byte>(64);
  std::vector<size_t> offsets_;
  std::vector<Scalar> scalars_;
  int rank_ = 0;
  int worldSize_ = 1;
};

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_HOSTTESTUTIL_H
