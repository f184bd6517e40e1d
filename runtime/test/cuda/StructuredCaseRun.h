//===- StructuredCaseRun.h - a structured case on the host backend -*- C++
//-*-===//
//
// A case of StructuredCases.h as a one-instruction schedule, and its run on
// the host backend: the reference that the GPU (StructuredGpuTest) and the
// generated kernels compiled for the CPU (GeneratedOnCpuTest) are compared
// with.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_STRUCTUREDCASERUN_H
#define ZERO_RUNTIME_TEST_CUDA_STRUCTUREDCASERUN_H

#include "StructuredCases.h"

#include "zero/runtime/Device.h"
#include "zero/runtime/Memory.h"
#include "zero/runtime/Schedule.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace zero::runtime::test {

/// A case as a schedule: one buffer per tensor that owns memory, an
/// arith.constant per scalar from outside, then the op.
struct CaseSchedule {
  std::shared_ptr<const Schedule> schedule;
  std::vector<int64_t> offsets; // by value id (tensors)
  const Instruction *op = nullptr;
};

inline CaseSchedule buildSchedule(const StructuredCase &c, std::string &error) {
  using json = nlohmann::json;
  CaseSchedule result;
  json buffers = json::array(), values = json::array(), compute = json::array();
  std::vector<int64_t> bufferOf(c.values.size(), -1);
  result.offsets.assign(c.values.size(), 0);
  int64_t offset = 0, numBuffers = 0;
  for (size_t i = 0; i < c.values.size(); ++i) {
    const ValueSpec &v = c.values[i];
    const std::string name = "%v" + std::to_string(i);
    if (!v.isTensor) {
      values.push_back({{"id", i},
                        {"kind", "scalar"},
                        {"dtype", getDTypeName(v.dtype)},
                        {"name", name}});
      if (v.external)
        compute.push_back(
            {{"op", "arith.constant"},
             {"point", compute.size()},
             {"loc", "case.mlir:1:1"},
             {"value", isFloat(v.dtype)
                           ? json(v.constant)
                           : json(static_cast<int64_t>(v.constant))},
             {"operands", json::array()},
             {"results", {i}}});
      continue;
    }
    if (v.aliasOf >= 0) {
      bufferOf[i] = bufferOf[v.aliasOf];
      result.offsets[i] = result.offsets[v.aliasOf];
    } else {
      const int64_t bytes = v.numel() * getDTypeWidth(v.dtype);
      bufferOf[i] = numBuffers++;
      result.offsets[i] = offset;
      buffers.push_back({{"id", bufferOf[i]},
                         {"name", name},
                         {"category", "activation"},
                         {"role", ""},
                         {"space", "device"},
                         {"offset", offset},
                         {"bytes", bytes},
                         {"live", {0, 0}}});
      offset += (bytes + 255) / 256 * 256 + 256;
    }
    values.push_back({{"id", i},
                      {"kind", "tensor"},
                      {"dtype", getDTypeName(v.dtype)},
                      {"shape", v.shape},
                      {"buffer", bufferOf[i]},
                      {"name", name}});
  }
  json op = c.inst;
  op["point"] = compute.size();
  op["loc"] = "case.mlir:1:1";
  compute.push_back(op);
  // Buffers are live to the return after the op. The test writes the
  // tensors the op does not write before the step, as data: the loader
  // proves that every value read is written first.
  for (json &buffer : buffers)
    buffer["live"] = {0, compute.size()};
  json arguments = json::array();
  for (size_t i = 0; i < c.values.size(); ++i) {
    const json &results = op["results"];
    if (!c.values[i].isTensor || c.values[i].aliasOf >= 0 ||
        std::find(results.begin(), results.end(), json(i)) != results.end())
      continue;
    json arg = {
        {"value", i}, {"kind", "data"}, {"name", "%v" + std::to_string(i)}};
    if (!isFloat(c.values[i].dtype))
      arg["bound"] = std::numeric_limits<int32_t>::max();
    arguments.push_back(arg);
  }
  json root = {
      {"format", "zero-schedule"},
      {"version", 1},
      {"stage", 0},
      {"world_size", 1},
      {"topology", {{"grid", {1}}}},
      {"memory",
       {{"alignment", 64},
        {"arenas", {{"device", offset}, {"host", 0}, {"nvme", 0}}}}},
      {"buffers", buffers},
      {"values", values},
      {"arguments", arguments},
      {"results", json::array()},
      {"streams", {"compute"}},
      {"events", 0},
      {"instructions", {{"compute", compute}}},
  };
  StatusOr<Schedule> schedule = Schedule::parse(root.dump(), "case.json");
  if (!schedule.isOk()) {
    error = schedule.status().toString();
    return result;
  }
  result.schedule = std::make_shared<const Schedule>(std::move(*schedule));
  result.op = &result.schedule->streams()[0].instructions.back();
  return result;
}

/// The host backend's run of a case: the results' bytes, or the error.
struct HostRun {
  Status status;
  std::vector<std::vector<uint8_t>> results; // by StructuredCase::checked
  std::vector<Scalar> registers;             // by value id (outside scalars)
};

inline HostRun runOnHost(const StructuredCase &c, const CaseSchedule &s) {
  HostRun run;
  std::unique_ptr<Device> device = createHostDevice();
  MemoryTracker tracker;
  run.status = device->load(*s.schedule, 0, 1, tracker);
  if (!run.status.isOk())
    return run;
  std::byte *base = device->arenaBase(MemorySpace::Device);
  for (size_t i = 0; i < c.values.size(); ++i)
    if (c.values[i].isTensor && c.values[i].aliasOf < 0 &&
        c.values[i].numel() > 0) {
      std::vector<uint8_t> data = makeCaseData(c.values[i], i + 1);
      run.status = device->write(base + s.offsets[i], data.data(),
                                 static_cast<int64_t>(data.size()));
      if (!run.status.isOk())
        return run;
    }
  for (const Instruction &inst : s.schedule->streams()[0].instructions) {
    StatusOr<std::unique_ptr<PreparedOp>> op = device->prepare(inst);
    if (!op.isOk()) {
      run.status = op.status();
      return run;
    }
    run.status = (*op)->run(1);
    if (!run.status.isOk())
      return run;
  }
  run.registers.resize(c.values.size());
  for (size_t i = 0; i < c.values.size(); ++i)
    if (c.values[i].external) {
      StatusOr<Scalar> value = device->readScalar(static_cast<int64_t>(i));
      if (value.isOk())
        run.registers[i] = *value;
    }
  for (int64_t id : c.checked) {
    const ValueSpec &v = c.values[id];
    std::vector<uint8_t> bytes(v.numel() * getDTypeWidth(v.dtype));
    if (!bytes.empty())
      run.status = device->read(bytes.data(), base + s.offsets[id],
                                static_cast<int64_t>(bytes.size()));
    run.results.push_back(std::move(bytes));
  }
  return run;
}

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_CUDA_STRUCTUREDCASERUN_H
