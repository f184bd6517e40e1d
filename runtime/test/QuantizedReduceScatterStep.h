//===- QuantizedReduceScatterStep.h - a qgZ step ----------------*- C++ -*-===//
//
// Runs makeQuantizedReduceScatterSchedule on MPI ranks and checks every
// element of the rank's shards exactly against a reference that replays
// the hops of docs/ScheduleFormat.md ("Quantized reduce-scatters") on every
// member's known tensors with the block quantizer: quantize each chunk
// (padding zeros included), add the dequantized copies in f32 in the order
// of the senders, re-quantize the partial sums for the next hop. Shared by
// the two-rank and the group tests.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_QUANTIZEDREDUCESCATTERSTEP_H
#define ZERO_RUNTIME_TEST_QUANTIZEDREDUCESCATTERSTEP_H

#include "QuantizedGatherStep.h"

#include <map>

namespace zero::runtime::test {

/// Element e of member k's full tensor of operand i (`numel` elements),
/// before rounding to the element type: in operand 0, member 0's element 1
/// is NaN (its block of chunk 0 comes back NaN).
inline float quantizedReduceScatterInput(int i, int k, int e, int seed) {
  if (i == 0 && k == 0 && e == 1)
    return std::numeric_limits<float>::quiet_NaN();
  int level = (e * 7 + i * 3 + k * 5 + seed) % 13 - 6;
  return static_cast<float>(level) * 0.29f * static_cast<float>(1 << (e % 4)) +
         0.013f * static_cast<float>(k + 1);
}

/// The shards that member `k` of a group over axes of sizes `axisSizes`
/// (row-major, hops from the last axis; none for a group of one) ends with,
/// operand after operand, as floats of `dtype`.
inline std::vector<float> referenceQuantizedReduceScatter(
    const std::vector<int> &axisSizes, int k, const std::vector<int> &numels,
    const std::string &dtype, int64_t blockSize, bool avg, int seed) {
  // No axis: a group of one rank, which keeps its own chunk.
  const size_t axes = axisSizes.size();
  std::vector<int> strides(axes, 1);
  for (size_t t = axes; t-- > 1;)
    strides[t - 1] = strides[t] * axisSizes[t];
  const int groupSize = axes == 0 ? 1 : strides[0] * axisSizes[0];
  auto coordinate = [&](int x, size_t t) {
    return x / strides[t] % axisSizes[t];
  };
  const size_t count = numels.size();
  std::vector<int> shards(count), at(count);
  int chunkNumel = 0;
  for (size_t i = 0; i < count; ++i) {
    shards[i] = (numels[i] + groupSize - 1) / groupSize;
    at[i] = chunkNumel;
    chunkNumel += shards[i];
  }
  // Per member, the chunks it holds: group index -> its values.
  using Chunks = std::map<int, std::vector<float>>;
  std::vector<Chunks> held(groupSize);
  for (int m = 0; m < groupSize; ++m)
    for (int j = 0; j < groupSize; ++j) {
      std::vector<float> &chunk = held[m][j];
      chunk.assign(chunkNumel, 0.0f);
      for (size_t i = 0; i < count; ++i)
        for (int e = 0; e < shards[i]; ++e) {
          int element = j * shards[i] + e;
          if (element < numels[i])
            chunk[at[i] + e] =
                roundedTo(dtype, quantizedReduceScatterInput(
                                     static_cast<int>(i), m, element, seed));
        }
    }
  struct Packed {
    std::vector<uint8_t> values;
    std::vector<float> scales;
  };
  for (size_t t = axes; t-- > 0;) {
    std::vector<std::map<int, std::vector<Packed>>> packed(groupSize);
    for (int m = 0; m < groupSize; ++m)
      for (const auto &[j, chunk] : held[m])
        for (size_t i = 0; i < count; ++i) {
          Packed p;
          p.values.resize(quantize::getQuantizedBytes(shards[i], 4));
          p.scales.resize(quantize::getNumBlocks(shards[i], blockSize));
          quantize::quantizeBlocks(chunk.data() + at[i], shards[i], 4,
                                   blockSize, p.values.data(), p.scales.data());
          packed[m][j].push_back(std::move(p));
        }
    std::vector<Chunks> next(groupSize);
    for (int m = 0; m < groupSize; ++m)
      for (const auto &[j, chunk] : held[m]) {
        if (coordinate(j, t) != coordinate(m, t))
          continue;
        std::vector<float> &sums = next[m][j];
        sums.assign(chunkNumel, 0.0f);
        for (int c = 0; c < axisSizes[t]; ++c) {
          int sender = m + (c - coordinate(m, t)) * strides[t];
          for (size_t i = 0; i < count; ++i) {
            const Packed &p = packed[sender].at(j)[i];
            quantize::accumulateDequantized(p.values.data(), p.scales.data(),
                                            shards[i], 4, blockSize,
                                            sums.data() + at[i]);
          }
        }
      }
    held = std::move(next);
  }
  EXPECT_EQ(held[k].size(), 1u);
  std::vector<float> result = held[k].at(k);
  for (float &x : result)
    x = roundedTo(dtype, avg ? x / static_cast<float>(groupSize) : x);
  return result;
}

/// Runs `schedule` (makeQuantizedReduceScatterSchedule of `numels`,
/// `dtype`, block size `blockSize`, possibly over grid axes) with this rank
/// member `k` of a group over axes of sizes `axisSizes`, whose members share
/// `seed`; checks the shards exactly and returns the step's stats.
inline StepStats runQuantizedReduceScatterStep(
    Communicator &comm, const json &schedule, const std::vector<int> &axisSizes,
    int k, int seed, const std::vector<int> &numels, const std::string &dtype,
    int64_t blockSize, bool avg) {
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
  for (int i = 0; i < count; ++i) {
    auto *bytes = static_cast<unsigned char *>(executor.tensorData(i).data);
    for (int e = 0; e < numels[i]; ++e) {
      float value = quantizedReduceScatterInput(i, k, e, seed);
      if (dtype == "f32") {
        std::memcpy(bytes + e * width, &value, 4);
        continue;
      }
      uint16_t bits = dtype == "bf16" ? floatToBF16(value) : roundToF16(value);
      std::memcpy(bytes + e * width, &bits, 2);
    }
  }
  StatusOr<StepStats> stats = executor.step();
  EXPECT_TRUE(stats.isOk()) << stats.status().toString();
  if (!stats.isOk())
    return {};
  std::vector<float> expected = referenceQuantizedReduceScatter(
      axisSizes, k, numels, dtype, blockSize, avg, seed);
  int groupSize = 1;
  for (int size : axisSizes)
    groupSize *= size;
  size_t at = 0;
  int nanCount = 0;
  for (int i = 0; i < count; ++i) {
    const int shard = (numels[i] + groupSize - 1) / groupSize;
    const auto *bytes =
        static_cast<const unsigned char *>(executor.tensorData(count + i).data);
    for (int e = 0; e < shard; ++e, ++at) {
      float got;
      if (dtype == "f32") {
        std::memcpy(&got, bytes + e * width, 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, bytes + e * width, 2);
        got = dtype == "bf16" ? bf16ToFloat(bits) : f16ToFloat(bits);
      }
      if (std::isnan(expected[at])) {
        ++nanCount;
        EXPECT_TRUE(std::isnan(got)) << "operand " << i << " element " << e;
      } else {
        EXPECT_EQ(got, expected[at]) << "operand " << i << " element " << e;
      }
    }
  }
  // Only member 0's shard holds the NaN's block.
  EXPECT_EQ(nanCount > 0, k == 0);
  return *stats;
}

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_QUANTIZEDREDUCESCATTERSTEP_H
