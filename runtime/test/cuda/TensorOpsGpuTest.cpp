//===- TensorOpsGpuTest.cpp - fills, constants and extract on the GPU -----===//
//
// linalg.fill (with the cast from the scalar's type), tensor.splat, tensor
// constants, tensor.from_elements and tensor.extract against the host
// device, on every dtype and on empty, one-element and odd-sized tensors
// (the 16-byte vector fill has a head and a tail). All exact: the values
// are moved and converted, never computed.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace zero::runtime;
using namespace zero::runtime::cudatest;

namespace {

TEST(CudaTensorOps, FillCastsFromEveryType) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(11);
  const std::vector<json> floatValues = {1.5,   -0.0,    "nan", "-inf", 3e9,
                                         -7.25, 70000.0, 1e-30, -3e38};
  const std::vector<json> intValues = {
      0, 1, -1, 300, INT32_MIN, int64_t(1) << 40, INT64_MIN};
  for (DType from : allDTypes()) {
    const std::vector<json> &values = isFloat(from) ? floatValues : intValues;
    for (DType to : allDTypes()) {
      ScheduleBuilder b;
      std::vector<int64_t> results;
      for (size_t v = 0; v < values.size(); ++v) {
        json value =
            from == DType::I1 ? json(values[v].get<int64_t>() & 1) : values[v];
        int64_t scalar = b.constant(from, value);
        for (int64_t n : {0, 1, 7, 33}) {
          int64_t init = b.tensor(to, {n});
          int64_t result = b.tensor(to, {n}, init);
          b.op({{"op", "linalg.fill"},
                {"operands", {scalar, init}},
                {"results", {result}}});
          results.push_back(result);
        }
      }
      Runner r(b);
      ZERO_ASSERT_RUNNER(r);
      r.step();
      for (int64_t result : results)
        expectSameElements(r.readHost(result), r.readGpu(result), to,
                           std::string("fill ") + dtypeName(from) + " -> " +
                               dtypeName(to));
    }
  }
}

TEST(CudaTensorOps, SplatAndConstants) {
  ZERO_REQUIRE_GPU();
  for (DType type : allDTypes()) {
    ScheduleBuilder b;
    std::vector<int64_t> results;
    const json value = isFloat(type) ? json(-2.75) : json(1);
    int64_t scalar = b.constant(type, value);
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{0}, {1}, {17}, {3, 5}, {}, {1000}}) {
      int64_t splat = b.tensor(type, shape);
      b.op({{"op", "tensor.splat"},
            {"operands", {scalar}},
            {"results", {splat}}});
      results.push_back(splat);
      int64_t splatConstant = b.tensor(type, shape);
      b.op({{"op", "arith.constant"},
            {"value", {{"splat", isFloat(type) ? json("-inf") : json(-1)}}},
            {"results", {splatConstant}}});
      results.push_back(splatConstant);
    }
    // Data constants: every special value, and the empty tensor.
    json data = json::array();
    if (isFloat(type))
      data = {0.1, -0.0, "nan", "inf", "-inf", 65519.0, 1e-45, -3.5};
    else if (type == DType::I1)
      data = {0, 1, 1, 0, 1};
    else
      data = {0, -1, 5, INT32_MIN, int64_t(1) << 35, INT64_MAX, 7};
    int64_t constant = b.tensor(type, {static_cast<int64_t>(data.size())});
    b.op({{"op", "arith.constant"},
          {"value", {{"data", data}}},
          {"results", {constant}}});
    results.push_back(constant);
    int64_t empty = b.tensor(type, {0, 4});
    b.op({{"op", "arith.constant"},
          {"value", {{"data", json::array()}}},
          {"results", {empty}}});
    results.push_back(empty);
    Runner r(b);
    ZERO_ASSERT_RUNNER(r);
    // Twice: constants are written every step, whatever the buffer held.
    for (int step = 0; step < 2; ++step) {
      for (int64_t result : results) {
        const ValueInfo &info = r.schedule().values().values[result];
        std::mt19937_64 rng(step);
        r.write(result, randomBytes(type, info.numel, rng));
      }
      r.step();
      for (int64_t result : results)
        expectSameElements(r.readHost(result), r.readGpu(result), type,
                           std::string("splat/constant ") + dtypeName(type));
    }
  }
}

TEST(CudaTensorOps, ExtractAndFromElements) {
  ZERO_REQUIRE_GPU();
  std::mt19937_64 rng(12);
  for (DType type : allDTypes()) {
    ScheduleBuilder b;
    const std::vector<int64_t> shape = {3, 4, 5};
    int64_t source = b.tensor(type, shape);
    // Every element extracted (rank 3), then rebuilt in reverse order.
    std::vector<int64_t> scalars;
    std::vector<int64_t> index(3, 0);
    std::vector<int64_t> indexValues;
    for (int64_t i = 0; i < 5; ++i)
      indexValues.push_back(b.constant(DType::Index, i));
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 5; ++k)
          scalars.push_back(b.extract(
              source, type, {indexValues[i], indexValues[j], indexValues[k]}));
    std::vector<int64_t> reversed(scalars.rbegin(), scalars.rend());
    int64_t rebuilt = b.tensor(type, {60});
    b.op({{"op", "tensor.from_elements"},
          {"operands", reversed},
          {"results", {rebuilt}}});
    // A rank-0 tensor and a one-element from_elements.
    int64_t zeroD = b.tensor(type, {});
    int64_t element = b.extract(zeroD, type);
    int64_t one = b.tensor(type, {1, 1});
    b.op({{"op", "tensor.from_elements"},
          {"operands", {element}},
          {"results", {one}}});
    Runner r(b);
    ZERO_ASSERT_RUNNER(r);
    r.write(source, randomBytes(type, 60, rng));
    r.write(zeroD, randomBytes(type, 1, rng));
    r.step();
    expectSameElements(r.readHost(rebuilt), r.readGpu(rebuilt), type,
                       std::string("from_elements ") + dtypeName(type));
    expectSameElements(r.readHost(one), r.readGpu(one), type,
                       std::string("rank 0 ") + dtypeName(type));
    for (int64_t s : scalars) {
      Scalar h = r.scalarHost(s), g = r.scalarGpu(s);
      if (isFloat(type) && std::isnan(h.f) && std::isnan(g.f))
        continue;
      EXPECT_EQ(h.i, g.i) << "register " << s << " " << dtypeName(type);
    }
  }
}

TEST(CudaTensorOps, ExtractOutOfRangeFailsLikeTheHost) {
  ZERO_REQUIRE_GPU();
  for (int64_t bad : {3, -1, 1000}) {
    ScheduleBuilder b;
    int64_t source = b.tensor(DType::F32, {2, 3});
    int64_t i = b.constant(DType::Index, 1);
    int64_t j = b.constant(DType::Index, bad);
    b.extract(source, DType::F32, {i, j});
    Runner r(b);
    ZERO_ASSERT_RUNNER(r);
    auto [host, gpu] = r.failingStep();
    EXPECT_NE(host, "");
    EXPECT_EQ(host, gpu);
    // The executors refuse further steps after a failure.
    auto [host2, gpu2] = r.failingStep();
    EXPECT_EQ(host2, gpu2);
  }
}

TEST(CudaTensorOps, ExtractInABodyFailsInItsStepLikeTheHost) {
  ZERO_REQUIRE_GPU();
  // A generated kernel's tensor.extract outside its table: reported at the
  // end of the step that ran it (also when it is the last), in the host's
  // words.
  ScheduleBuilder b;
  int64_t table = b.tensor(DType::F32, {4, 8});
  int64_t x = b.tensor(DType::F32, {8});
  int64_t init = b.tensor(DType::F32, {8});
  int64_t result = b.tensor(DType::F32, {8}, init);
  int64_t bad = b.constant(DType::Index, 7);
  int64_t a = b.scalar(DType::F32), o = b.scalar(DType::F32);
  int64_t d = b.scalar(DType::Index), v = b.scalar(DType::F32);
  json body = {{"arguments", {a, o}},
               {"ops",
                {{{"op", "linalg.index"},
                  {"dim", 0},
                  {"operands", json::array()},
                  {"results", {d}}},
                 {{"op", "tensor.extract"},
                  {"operands", {table, bad, d}},
                  {"results", {v}}}}},
               {"yield", {v}}};
  b.op({{"op", "linalg.generic"},
        {"operands", {x, init}},
        {"results", {result}},
        {"indexing_maps", {{0}, {0}}},
        {"iterator_types", {"parallel"}},
        {"body", body}});
  Runner r(b);
  ZERO_ASSERT_RUNNER(r);
  auto [host, gpu] = r.failingStep();
  EXPECT_NE(host.find("body.ops[1]: tensor.extract index 7 is out of range "
                      "for dimension 0 (size 4) of value 0 (%t0)"),
            std::string::npos)
      << host;
  EXPECT_EQ(host, gpu);
}

} // namespace
