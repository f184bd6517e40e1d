//===- QuantizedGatherStep.h - a step of a quantized all-gather -*- C++ -*-===//
//
// Runs makeQuantizedGatherSchedule on MPI ranks and checks every gathered
// element against the block quantizer applied to every member's known
// shard: dequantize(quantize(shard)), rounded to the element type, padding
// dropped. Shared by the two-rank and the group tests.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_QUANTIZEDGATHERSTEP_H
#define ZERO_RUNTIME_TEST_QUANTIZEDGATHERSTEP_H

#include "zero/runtime/Communicator.h"
#include "zero/runtime/Executor.h"
#include "zero/runtime/FloatFormats.h"

#include "ops/Quantize.h"

#include "TestSchedules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace zero::runtime::test {

/// Element j of member r's shard of operand i (`shard` elements of a tensor
/// of `numel`), before rounding to the element type: padding is zero; in
/// operand 0, member 0's element 1 is NaN (its block comes back NaN) and the
/// last member's shard is all zeros (its blocks come back zeros).
inline float quantizedGatherInput(int i, int r, int j, int shard, int numel,
                                  int members, int seed) {
  if (r * shard + j >= numel)
    return 0.0f;
  if (i == 0 && r == 0 && j == 1)
    return std::numeric_limits<float>::quiet_NaN();
  if (i == 0 && r == members - 1)
    return 0.0f;
  int level = (j * 7 + i * 3 + r * 5 + seed) % 11 - 5;
  return static_cast<float>(level) * 0.37f * static_cast<float>(1 << (j % 3)) +
         0.01f * static_cast<float>(r + 1);
}

/// Element `value` stored as `dtype` and read back as a float.
inline float roundedTo(const std::string &dtype, float value) {
  if (dtype == "bf16")
    return bf16ToFloat(floatToBF16(value));
  if (dtype == "f16")
    return f16ToFloat(roundToF16(value));
  return value;
}

/// Runs `schedule` (makeQuantizedGatherSchedule of `numels`, `dtype`, block
/// size `blockSize`, possibly over grid axes) with this rank member `k` of a
/// group of `n` ranks whose members share `seed`, checks the gathered
/// tensors, and returns the step's stats.
inline StepStats
runQuantizedGatherStep(Communicator &comm, const json &schedule, int n, int k,
                       int seed, const std::vector<int> &numels,
                       const std::string &dtype, int64_t blockSize) {
  StatusOr<Schedule> parsed = Schedule::parse(schedule.dump(), "q.json");
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  if (!parsed.isOk())
    return {};
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), comm);
  EXPECT_TRUE(created.isOk()) << created.status().toString();
  if (!created.isOk())
    return {};
  Executor &executor = **created;
  const int count = static_cast<int>(numels.size());
  const int width = dtype == "f32" ? 4 : 2;
  auto store = [&](void *to, int64_t j, float value) {
    auto *bytes = static_cast<unsigned char *>(to) + j * width;
    if (dtype == "f32") {
      std::memcpy(bytes, &value, 4);
      return;
    }
    uint16_t bits = dtype == "bf16" ? floatToBF16(value) : roundToF16(value);
    std::memcpy(bytes, &bits, 2);
  };
  auto load = [&](const void *from, int64_t j) {
    const auto *bytes = static_cast<const unsigned char *>(from) + j * width;
    if (dtype == "f32") {
      float value;
      std::memcpy(&value, bytes, 4);
      return value;
    }
    uint16_t bits;
    std::memcpy(&bits, bytes, 2);
    return dtype == "bf16" ? bf16ToFloat(bits) : f16ToFloat(bits);
  };
  for (int i = 0; i < count; ++i) {
    int shard = (numels[i] + n - 1) / n;
    for (int j = 0; j < shard; ++j)
      store(executor.tensorData(i).data, j,
            quantizedGatherInput(i, k, j, shard, numels[i], n, seed));
  }
  StatusOr<StepStats> stats = executor.step();
  EXPECT_TRUE(stats.isOk()) << stats.status().toString();
  if (!stats.isOk())
    return {};
  for (int i = 0; i < count; ++i) {
    const int shard = (numels[i] + n - 1) / n;
    const void *out = executor.tensorData(count + i).data;
    for (int r = 0; r < n; ++r) {
      // The quantizer on member r's shard, as that rank stored it.
      std::vector<float> in(shard), back(shard);
      for (int j = 0; j < shard; ++j)
        in[j] = roundedTo(
            dtype, quantizedGatherInput(i, r, j, shard, numels[i], n, seed));
      std::vector<uint8_t> q(shard);
      std::vector<float> scales(quantize::getNumBlocks(shard, blockSize));
      quantize::quantizeBlocks(in.data(), shard, 8, blockSize, q.data(),
                               scales.data());
      quantize::dequantizeBlocks(q.data(), scales.data(), shard, 8, blockSize,
                                 back.data());
      for (int j = 0; j < shard && r * shard + j < numels[i]; ++j) {
        const int64_t at = r * shard + j;
        float expected = roundedTo(dtype, back[j]);
        float got = load(out, at);
        if (std::isnan(expected))
          EXPECT_TRUE(std::isnan(got))
              << "operand " << i << " element " << at << ": " << got;
        else
          EXPECT_EQ(got, expected) << "operand " << i << " element " << at;
      }
    }
    // The special blocks: NaN, exact zeros.
    if (i == 0) {
      // Element 0 shares element 1's block unless blocks are single.
      EXPECT_EQ(std::isnan(load(out, 0)), blockSize > 1);
      EXPECT_TRUE(std::isnan(load(out, 1)));
      for (int j = (n - 1) * shard; j < numels[0]; ++j)
        EXPECT_EQ(load(out, j), 0.0f) << "element " << j;
    }
  }
  return *stats;
}

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_QUANTIZEDGATHERSTEP_H
