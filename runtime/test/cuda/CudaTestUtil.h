//===- CudaTestUtil.h - one schedule on the host and the GPU ----*- C++ -*-===//
//
// The CUDA backend's kernel tests build a small schedule (values with a
// buffer each, one compute stream), run it on the host device (the
// reference semantics) and on GPU 0 through the executor, with the same
// inputs, and compare what comes out. Without a GPU every test skips with
// the reason createCudaDevice gives.
//
// ZERO_GPU_TESTS_ON_HOST=1 runs the "GPU" side on a second host device
// instead: the tests then check their own schedules and comparisons on a
// machine without a GPU (every comparison must hold exactly).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_CUDATESTUTIL_H
#define ZERO_RUNTIME_TEST_CUDA_CUDATESTUTIL_H

#include "zero/runtime/Communicator.h"
#include "zero/runtime/Device.h"
#include "zero/runtime/Executor.h"
#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/Schedule.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace zero::runtime::cudatest {

using nlohmann::json;
using Bytes = std::vector<uint8_t>;

inline bool gpuTestsOnHost() {
  const char *value = std::getenv("ZERO_GPU_TESTS_ON_HOST");
  return value && *value && std::string(value) != "0";
}

/// Why the GPU tests cannot run here; empty when they can.
inline const std::string &gpuUnavailableReason() {
  static const std::string reason = [] {
    if (gpuTestsOnHost())
      return std::string();
    StatusOr<std::unique_ptr<Device>> device = createCudaDevice(0);
    return device.isOk() ? std::string()
                         : "no GPU: " + device.status().message();
  }();
  return reason;
}

#define ZERO_REQUIRE_GPU()                                                     \
  do {                                                                         \
    if (!::zero::runtime::cudatest::gpuUnavailableReason().empty())            \
      GTEST_SKIP() << ::zero::runtime::cudatest::gpuUnavailableReason();       \
  } while (false)

inline std::unique_ptr<Device> createTestDevice() {
  if (gpuTestsOnHost())
    return createHostDevice();
  StatusOr<std::unique_ptr<Device>> device = createCudaDevice(0);
  return device.isOk() ? std::move(*device) : nullptr;
}

inline const char *dtypeName(DType type) { return getDTypeName(type); }

inline const std::vector<DType> &allDTypes() {
  static const std::vector<DType> types = {DType::F32, DType::F64,  DType::BF16,
                                           DType::F16, DType::I64,  DType::I32,
                                           DType::I1,  DType::Index};
  return types;
}
inline const std::vector<DType> &floatDTypes() {
  static const std::vector<DType> types = {DType::F32, DType::F64, DType::BF16,
                                           DType::F16};
  return types;
}

/// The unit roundoff of a float dtype (half an ulp of 1).
inline double unitRoundoff(DType type) {
  switch (type) {
  case DType::F64:
    return std::ldexp(1.0, -53);
  case DType::BF16:
    return std::ldexp(1.0, -8);
  case DType::F16:
    return std::ldexp(1.0, -11);
  default:
    return std::ldexp(1.0, -24);
  }
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

/// A schedule of one compute stream, built value by value: each tensor in a
/// buffer of its own (64-byte aligned, live throughout) or sharing an
/// earlier tensor's.
class ScheduleBuilder {
public:
  /// The memory space of the buffers made from now on ("device", the
  /// default, or "host").
  void setSpace(const std::string &space) { space_ = space; }

  int64_t tensor(DType dtype, const std::vector<int64_t> &shape,
                 int64_t aliasOf = -1) {
    const int64_t id = static_cast<int64_t>(values_.size());
    int64_t numel = 1;
    for (int64_t size : shape)
      numel *= size;
    int64_t buffer;
    if (aliasOf >= 0) {
      buffer = bufferOf_[aliasOf];
    } else {
      buffer = static_cast<int64_t>(buffers_.size());
      const int64_t bytes = std::max<int64_t>(numel * getDTypeWidth(dtype), 1);
      buffers_.push_back({{"id", buffer},
                          {"name", "b" + std::to_string(buffer)},
                          {"category", "activation"},
                          {"role", ""},
                          {"space", space_},
                          {"offset", offsets_[space_]},
                          {"bytes", bytes},
                          {"live", {0, 0}}}); // see text()
      offsets_[space_] += (bytes + 63) / 64 * 64;
    }
    bufferOf_.push_back(buffer);
    values_.push_back({{"id", id},
                       {"kind", "tensor"},
                       {"dtype", getDTypeName(dtype)},
                       {"shape", shape},
                       {"buffer", buffer},
                       {"name", "%t" + std::to_string(id)}});
    return id;
  }

  int64_t scalar(DType dtype) {
    const int64_t id = static_cast<int64_t>(values_.size());
    bufferOf_.push_back(-1);
    values_.push_back({{"id", id},
                       {"kind", "scalar"},
                       {"dtype", getDTypeName(dtype)},
                       {"name", "%s" + std::to_string(id)}});
    return id;
  }

  /// Appends a compute instruction; point and loc are added.
  void op(json inst) {
    inst["point"] = static_cast<int64_t>(compute_.size());
    inst["loc"] = "t.mlir:" + std::to_string(compute_.size() + 1) + ":1";
    if (!inst.contains("operands"))
      inst["operands"] = json::array();
    compute_.push_back(std::move(inst));
  }

  /// A scalar constant; `value` is a JSON number or "nan"/"inf"/"-inf".
  int64_t constant(DType dtype, const json &value) {
    const int64_t id = scalar(dtype);
    op({{"op", "arith.constant"}, {"value", value}, {"results", {id}}});
    return id;
  }

  /// A linalg.map truncating float tensor `input` to `to` into a new
  /// tensor (the 16-bit copy of a parameter), or into `aliasOf`'s buffer;
  /// returns the result.
  int64_t truncate(int64_t input, DType to, int64_t aliasOf = -1) {
    const json &value = values_[input];
    const std::vector<int64_t> shape = value["shape"];
    const DType from =
        *parseDType(value["dtype"].get<std::string>(), "dtype");
    const int64_t dest = tensor(to, shape, aliasOf);
    const int64_t result = tensor(to, shape, dest);
    const int64_t in = scalar(from), out = scalar(to), narrow = scalar(to);
    op({{"op", "linalg.map"},
        {"operands", {input, dest}},
        {"results", {result}},
        {"body",
         {{"arguments", {in, out}},
          {"ops", json::array({{{"op", "arith.truncf"},
                                {"operands", {in}},
                                {"results", {narrow}}}})},
          {"yield", {narrow}}}}});
    return result;
  }

  /// tensor.extract of a rank-0 tensor (or of `indices`).
  int64_t extract(int64_t tensorId, DType dtype,
                  const std::vector<int64_t> &indices = {}) {
    const int64_t id = scalar(dtype);
    json operands = json::array({tensorId});
    for (int64_t index : indices)
      operands.push_back(index);
    op({{"op", "tensor.extract"}, {"operands", operands}, {"results", {id}}});
    return id;
  }

  std::string text() const {
    // The test writes the tensors no instruction writes before the step, as
    // data: the loader proves that every value read is written first.
    std::vector<bool> written(values_.size(), false);
    for (const json &inst : compute_)
      for (const json &id : inst["results"])
        written[id.get<int64_t>()] = true;
    json arguments = json::array();
    for (size_t id = 0; id < values_.size(); ++id) {
      const json &value = values_[id];
      if (written[id] || value["kind"] != "tensor")
        continue;
      json arg = {{"value", id}, {"kind", "data"}, {"name", value["name"]}};
      StatusOr<DType> dtype =
          parseDType(value["dtype"].get<std::string>(), "dtype");
      if (dtype.isOk() && !isFloat(*dtype))
        arg["bound"] = std::numeric_limits<int32_t>::max();
      arguments.push_back(arg);
    }
    // Buffers are live throughout: to the return after the last point.
    json buffers = buffers_;
    for (json &buffer : buffers)
      buffer["live"] = {0, compute_.size()};
    json schedule = {
        {"format", "zero-schedule"},
        {"version", 1},
        {"stage", 0},
        {"world_size", 1},
        {"topology", {{"grid", {1}}}},
        {"memory",
         {{"alignment", 64},
          {"arenas",
           {{"device", offsets_.at("device")},
            {"host", offsets_.at("host")},
            {"nvme", 0}}}}},
        {"buffers", buffers},
        {"values", values_},
        {"arguments", arguments},
        {"results", json::array()},
        {"streams", {"compute"}},
        {"events", 0},
        {"instructions", {{"compute", compute_}}},
    };
    return schedule.dump();
  }

private:
  json buffers_ = json::array();
  json values_ = json::array();
  json compute_ = json::array();
  std::vector<int64_t> bufferOf_;
  std::string space_ = "device";
  std::map<std::string, int64_t> offsets_ = {{"device", 0}, {"host", 0}};
};

/// A region body: its arguments, its ops and the value it yields.
inline json body(const std::vector<int64_t> &arguments, json ops,
                 int64_t yield) {
  return {
      {"arguments", arguments}, {"ops", std::move(ops)}, {"yield", {yield}}};
}

/// zero.adam as AdamW with bias correction, betas (0.9, 0.999), eps 1e-8
/// and weight decay 0.01, without amsgrad; `extra` adds fields.
inline json adamWInstruction(json operands, json results, json extra = {}) {
  json op = {{"op", "zero.adam"},
             {"beta1", 0.9},
             {"beta2", 0.999},
             {"eps", 1e-8},
             {"weight_decay", 0.01},
             {"mode", "adamw"},
             {"bias_correction", true},
             {"amsgrad", false},
             {"operands", std::move(operands)},
             {"results", std::move(results)}};
  if (extra.is_object())
    op.update(extra);
  return op;
}

/// Sets (or with null, unsets) an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

/// The schedule on the host device and on the GPU, with the same inputs.
/// `hostCompute`, when given, is ZERO_CUDA_HOST_COMPUTE for the GPU's
/// device.
class Runner {
public:
  explicit Runner(const ScheduleBuilder &builder, ExecutorOptions options = {},
                  const char *hostCompute = nullptr) {
    comm_ = createSelfCommunicator();
    StatusOr<Schedule> parsed = Schedule::parse(builder.text(), "t.json");
    if (!parsed.isOk()) {
      error_ = "parse: " + parsed.status().toString();
      return;
    }
    schedule_ = std::make_shared<const Schedule>(std::move(*parsed));
    StatusOr<std::unique_ptr<Executor>> host =
        Executor::create(schedule_, createHostDevice(), *comm_, options);
    if (!host.isOk()) {
      error_ = "host: " + host.status().toString();
      return;
    }
    host_ = std::move(*host);
    std::optional<ScopedEnv> env;
    if (hostCompute)
      env.emplace("ZERO_CUDA_HOST_COMPUTE", hostCompute);
    StatusOr<std::unique_ptr<Executor>> gpu =
        Executor::create(schedule_, createTestDevice(), *comm_, options);
    if (!gpu.isOk()) {
      error_ = "gpu: " + gpu.status().toString();
      return;
    }
    gpu_ = std::move(*gpu);
  }

  /// Empty when both executors were created.
  const std::string &error() const { return error_; }
  Executor &host() { return *host_; }
  Executor &gpu() { return *gpu_; }

  void write(int64_t id, const Bytes &bytes) {
    const ValueInfo &value = schedule_->values().values[id];
    ASSERT_EQ(static_cast<int64_t>(bytes.size()),
              value.numel * getDTypeWidth(value.dtype));
    if (bytes.empty())
      return;
    Status h = host_->writeTensor(id, bytes.data());
    ASSERT_TRUE(h.isOk()) << h.toString();
    Status g = gpu_->writeTensor(id, bytes.data());
    ASSERT_TRUE(g.isOk()) << g.toString();
  }

  /// Runs one step on both; both must succeed.
  void step() {
    StatusOr<StepStats> h = host_->step();
    ASSERT_TRUE(h.isOk()) << "host: " << h.status().toString();
    StatusOr<StepStats> g = gpu_->step();
    ASSERT_TRUE(g.isOk()) << "gpu: " << g.status().toString();
  }

  /// Runs one step on both and returns both errors ("" when it succeeded).
  std::pair<std::string, std::string> failingStep() {
    StatusOr<StepStats> h = host_->step();
    StatusOr<StepStats> g = gpu_->step();
    return {h.isOk() ? "" : h.status().message(),
            g.isOk() ? "" : g.status().message()};
  }

  Bytes read(Executor &executor, int64_t id) {
    const ValueInfo &value = schedule_->values().values[id];
    Bytes bytes(static_cast<size_t>(value.numel * getDTypeWidth(value.dtype)));
    if (!bytes.empty()) {
      Status status = executor.readTensor(id, bytes.data());
      EXPECT_TRUE(status.isOk()) << status.toString();
    }
    return bytes;
  }
  Bytes readHost(int64_t id) { return read(*host_, id); }
  Bytes readGpu(int64_t id) { return read(*gpu_, id); }

  Scalar scalar(Executor &executor, int64_t id) {
    StatusOr<Scalar> value = executor.device().readScalar(id);
    EXPECT_TRUE(value.isOk()) << value.status().toString();
    return value.isOk() ? *value : Scalar{};
  }
  Scalar scalarHost(int64_t id) { return scalar(*host_, id); }
  Scalar scalarGpu(int64_t id) { return scalar(*gpu_, id); }

  const Schedule &schedule() const { return *schedule_; }

private:
  std::unique_ptr<Communicator> comm_;
  std::shared_ptr<const Schedule> schedule_;
  std::unique_ptr<Executor> host_;
  std::unique_ptr<Executor> gpu_;
  std::string error_;
};

#define ZERO_ASSERT_RUNNER(runner)                                             \
  ASSERT_TRUE((runner).error().empty()) << (runner).error()

//===----------------------------------------------------------------------===//
// Elements
//===----------------------------------------------------------------------===//

/// Element `i` of `bytes` as a double (floats) or an int64 (integers).
inline double floatAt(const Bytes &bytes, DType type, int64_t i) {
  const uint8_t *p = bytes.data();
  switch (type) {
  case DType::F32: {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, p + 8 * i, 8);
    return d;
  }
  case DType::BF16: {
    uint16_t b;
    std::memcpy(&b, p + 2 * i, 2);
    return bf16ToFloat(b);
  }
  case DType::F16: {
    uint16_t b;
    std::memcpy(&b, p + 2 * i, 2);
    return f16ToDouble(b);
  }
  default:
    return 0;
  }
}

inline int64_t intAt(const Bytes &bytes, DType type, int64_t i) {
  const uint8_t *p = bytes.data();
  switch (type) {
  case DType::I64:
  case DType::Index: {
    int64_t v;
    std::memcpy(&v, p + 8 * i, 8);
    return v;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case DType::I1:
    return p[i] != 0;
  default:
    return 0;
  }
}

/// Writes a double (rounded to nearest even) or an integer (wrapped) as
/// element `i`.
inline void setFloat(Bytes &bytes, DType type, int64_t i, double value) {
  uint8_t *p = bytes.data();
  switch (type) {
  case DType::F32: {
    float f = static_cast<float>(value);
    std::memcpy(p + 4 * i, &f, 4);
    return;
  }
  case DType::F64:
    std::memcpy(p + 8 * i, &value, 8);
    return;
  case DType::BF16: {
    uint16_t b = roundToBF16(value);
    std::memcpy(p + 2 * i, &b, 2);
    return;
  }
  case DType::F16: {
    uint16_t b = roundToF16(value);
    std::memcpy(p + 2 * i, &b, 2);
    return;
  }
  default:
    return;
  }
}

inline void setInt(Bytes &bytes, DType type, int64_t i, int64_t value) {
  uint8_t *p = bytes.data();
  switch (type) {
  case DType::I64:
  case DType::Index:
    std::memcpy(p + 8 * i, &value, 8);
    return;
  case DType::I32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(p + 4 * i, &v, 4);
    return;
  }
  case DType::I1:
    p[i] = static_cast<uint8_t>(value & 1);
    return;
  default:
    return;
  }
}

inline Bytes makeBytes(DType type, int64_t numel) {
  return Bytes(static_cast<size_t>(numel * getDTypeWidth(type)), 0);
}

/// A 0-d tensor's bytes holding `value`.
inline Bytes scalarBytes(DType type, double value) {
  Bytes bytes = makeBytes(type, 1);
  if (isFloat(type))
    setFloat(bytes, type, 0, value);
  else
    setInt(bytes, type, 0, static_cast<int64_t>(value));
  return bytes;
}

/// Random elements: floats normal(0, scale) rounded to the type, integers
/// uniform in [lo, hi] (i1: 0 or 1).
inline Bytes randomBytes(DType type, int64_t numel, std::mt19937_64 &rng,
                         double scale = 1.0, int64_t lo = -100,
                         int64_t hi = 100) {
  Bytes bytes = makeBytes(type, numel);
  std::normal_distribution<double> normal(0.0, scale);
  std::uniform_int_distribution<int64_t> uniform(lo, hi);
  for (int64_t i = 0; i < numel; ++i) {
    if (isFloat(type))
      setFloat(bytes, type, i, normal(rng));
    else
      setInt(bytes, type, i,
             type == DType::I1 ? uniform(rng) & 1 : uniform(rng));
  }
  return bytes;
}

/// Values that probe every cast: specials, out-of-range for the integer
/// types, halfway cases, negative zero.
inline Bytes makeCastInputs(DType type, int64_t n, std::mt19937_64 &rng) {
  Bytes bytes = makeBytes(type, n);
  const double floats[] = {
      0.0,           -0.0,   1.0,      -1.0,       0.5,
      -2.5,          3.7,    -3.7,     1e10,       -1e10,
      3e38,          -3e38,  65504,    70000,      1e-8,
      -1e-40,        NAN,    INFINITY, -INFINITY,  2147483647.0,
      -2147483649.0, 9.3e18, -9.3e18,  1.00390625, 255.5};
  const int64_t ints[] = {0,
                          1,
                          -1,
                          2,
                          127,
                          -128,
                          255,
                          65535,
                          65536,
                          16777217,
                          -16777217,
                          INT32_MAX,
                          INT32_MIN,
                          int64_t(INT32_MAX) + 1,
                          INT64_MAX,
                          INT64_MIN,
                          (int64_t(1) << 53) + 1};
  std::uniform_int_distribution<int> pick(0, 1000);
  for (int64_t i = 0; i < n; ++i) {
    if (isFloat(type))
      setFloat(bytes, type, i,
               floats[i % std::size(floats)] * (i >= int64_t(std::size(floats))
                                                    ? 1.0 + pick(rng) / 1000.0
                                                    : 1.0));
    else
      setInt(bytes, type, i, ints[i % std::size(ints)] + (i / 17) * pick(rng));
  }
  return bytes;
}

/// Element bits as an unsigned integer, for exact comparisons.
inline uint64_t bitsAt(const Bytes &bytes, DType type, int64_t i) {
  const int64_t width = getDTypeWidth(type);
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data() + width * i, static_cast<size_t>(width));
  return bits;
}

inline bool isNanAt(const Bytes &bytes, DType type, int64_t i) {
  return isFloat(type) && std::isnan(floatAt(bytes, type, i));
}

/// The elements must be equal bit for bit; two NaNs are equal whatever their
/// bits (sign and payload are not part of the semantics).
inline void expectSameElements(const Bytes &expected, const Bytes &actual,
                               DType type, const std::string &what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  const int64_t n = static_cast<int64_t>(expected.size()) / getDTypeWidth(type);
  int failures = 0;
  for (int64_t i = 0; i < n && failures < 10; ++i) {
    if (isNanAt(expected, type, i) && isNanAt(actual, type, i))
      continue;
    if (bitsAt(expected, type, i) != bitsAt(actual, type, i)) {
      ++failures;
      ADD_FAILURE() << what << ": element " << i << " of " << n << " ("
                    << getDTypeName(type) << "): host "
                    << (isFloat(type)
                            ? std::to_string(floatAt(expected, type, i))
                            : std::to_string(intAt(expected, type, i)))
                    << " (bits " << std::hex << bitsAt(expected, type, i)
                    << "), gpu "
                    << (isFloat(type) ? std::to_string(floatAt(actual, type, i))
                                      : std::to_string(intAt(actual, type, i)))
                    << " (bits " << bitsAt(actual, type, i) << std::dec << ")";
    }
  }
}

/// The distance in units in the last place of `type` between two finite
/// floats of that type (their bit patterns mapped to a monotonic integer
/// line); 0 for two NaNs, huge for NaN against a number.
inline int64_t ulpDistance(double a, double b, DType type) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0
                                          : std::numeric_limits<int64_t>::max();
  auto ordered = [&](double x) -> int64_t {
    int64_t bits;
    switch (type) {
    case DType::F64: {
      std::memcpy(&bits, &x, 8);
      break;
    }
    case DType::F32: {
      float f = static_cast<float>(x);
      int32_t b32;
      std::memcpy(&b32, &f, 4);
      bits = b32;
      if (b32 < 0)
        bits = std::numeric_limits<int32_t>::min() - int64_t(b32);
      return bits;
    }
    default: {
      uint16_t b16 = type == DType::BF16 ? roundToBF16(x) : roundToF16(x);
      int64_t v = b16 & 0x7fff;
      return (b16 & 0x8000) ? -v : v;
    }
    }
    return bits < 0 ? std::numeric_limits<int64_t>::min() - bits : bits;
  };
  const int64_t x = ordered(a), y = ordered(b);
  return x > y ? x - y : y - x;
}

/// The optimizers' tolerance (OptimizerGpuTest.cpp): 1 ulp of the type;
/// for f64, 1e-14 relative to the larger value, 1e-300 absolute.
inline void expectClose(const Bytes &host, const Bytes &gpu, DType type,
                        const std::string &what) {
  ASSERT_EQ(host.size(), gpu.size());
  const int64_t n = static_cast<int64_t>(host.size()) / getDTypeWidth(type);
  int failures = 0;
  for (int64_t i = 0; i < n && failures < 10; ++i) {
    const double h = floatAt(host, type, i), g = floatAt(gpu, type, i);
    bool ok;
    if (type == DType::F64)
      ok = (std::isnan(h) && std::isnan(g)) || h == g ||
           std::fabs(h - g) <=
               1e-14 * std::max(std::fabs(h), std::fabs(g)) + 1e-300;
    else
      ok = ulpDistance(h, g, type) <= 1;
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << ": element " << i << ": host " << h << ", gpu "
                    << g;
    }
  }
}

} // namespace zero::runtime::cudatest

#endif // ZERO_RUNTIME_TEST_CUDA_CUDATESTUTIL_H
