//===- QuantizedParamStep.h - parameters stored quantized -------*- C++ -*-===//
//
// ZeRO++'s zero_quantized_nontrainable_weights: a frozen parameter stored
// block-quantized, read by the quantized all-gather of its block size. Runs
// makeQuantizedGatherSchedule with parameter operands, some stored
// quantized, next to the same schedule with every parameter plain, and
// checks every stored and gathered byte against the plain run and the block
// quantizer. Shared by the one-rank and the two-rank tests.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_QUANTIZEDPARAMSTEP_H
#define ZERO_RUNTIME_TEST_QUANTIZEDPARAMSTEP_H

#include "zero/runtime/Communicator.h"
#include "zero/runtime/Executor.h"

#include "ops/Quantize.h"

#include "TestSchedules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zero::runtime::test {

using Bytes = std::vector<uint8_t>;

/// What a run of one step left: each operand's stored bytes after the
/// initialization, each result's bytes after the step, and the step's
/// counters.
struct QuantizedParamRun {
  std::vector<Bytes> params;
  std::vector<Bytes> gathered;
  StepStats stats;
};

inline Bytes readValueBytes(Executor &executor, int64_t id) {
  std::string bytes;
  EXPECT_TRUE(executor.readTensor(id, bytes).isOk());
  return Bytes(bytes.begin(), bytes.end());
}

/// Initializes `schedule` (makeQuantizedGatherSchedule of `count` parameter
/// operands) with `seed` and runs one step.
inline QuantizedParamRun runQuantizedParamGather(Communicator &comm,
                                                 const json &schedule,
                                                 int count, uint64_t seed) {
  QuantizedParamRun run;
  StatusOr<Schedule> parsed = Schedule::parse(schedule.dump(), "q.json");
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  if (!parsed.isOk())
    return run;
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), comm);
  EXPECT_TRUE(created.isOk()) << created.status().toString();
  if (!created.isOk())
    return run;
  Executor &executor = **created;
  EXPECT_TRUE(executor.initialize({seed}).isOk());
  for (int i = 0; i < count; ++i)
    run.params.push_back(readValueBytes(executor, i));
  StatusOr<StepStats> stats = executor.step();
  EXPECT_TRUE(stats.isOk()) << stats.status().toString();
  if (stats.isOk())
    run.stats = *stats;
  for (int i = 0; i < count; ++i)
    run.gathered.push_back(readValueBytes(executor, count + i));
  return run;
}

/// `elements` (n of `dtype`) block-quantized with the runtime's quantizer,
/// packed as one operand of the quantized all-gather: the f32 scales, then
/// the int8 values.
inline Bytes quantizePacked(const Bytes &elements, int64_t n, DType dtype,
                            int64_t blockSize) {
  Bytes packed(static_cast<size_t>(getPackedBytes(n, 8, blockSize)));
  quantize::quantizeElements(
      elements.data(), quantize::getQuantizedFormat(dtype), n, 8, blockSize,
      packed.data() + getPackedScaleBytes(n, blockSize), packed.data());
  return packed;
}

/// The inverse, rounded to `dtype`: what the quantized all-gather gives.
inline Bytes dequantizePacked(const Bytes &packed, int64_t n, DType dtype,
                              int64_t blockSize) {
  Bytes elements(static_cast<size_t>(n * getDTypeWidth(dtype)));
  quantize::dequantizeElements(
      packed.data() + getPackedScaleBytes(n, blockSize), packed.data(), n, 8,
      blockSize, quantize::getQuantizedFormat(dtype), elements.data());
  return elements;
}

/// Runs the schedule of parameters `numels` of `dtype` with the operands
/// `quantized` flags stored quantized in blocks of `blockSize`, and the same
/// with every parameter plain, on every rank of `comm`, and checks that:
/// a parameter stored quantized holds quantize(its plain shard), the others
/// the plain shard; every gathered byte equals the plain run's and the
/// quantizer's round trip of every rank's plain shard (padding dropped);
/// and the counters are the plain run's, (N-1) * P.
inline void checkQuantizedParamGather(Communicator &comm,
                                      const std::vector<int> &numels,
                                      const std::string &dtypeName,
                                      int blockSize,
                                      const std::vector<bool> &quantized) {
  const int n = comm.size();
  const int count = static_cast<int>(numels.size());
  const DType dtype = dtypeName == "f32" ? DType::F32 : DType::BF16;
  const int64_t width = getDTypeWidth(dtype);
  QuantizedParamRun plain = runQuantizedParamGather(
      comm,
      makeQuantizedGatherSchedule(n, numels, dtypeName.c_str(), blockSize,
                                  std::vector<bool>(numels.size(), false)),
      count, 5);
  QuantizedParamRun stored = runQuantizedParamGather(
      comm,
      makeQuantizedGatherSchedule(n, numels, dtypeName.c_str(), blockSize,
                                  quantized),
      count, 5);
  ASSERT_EQ(plain.params.size(), static_cast<size_t>(count));
  ASSERT_EQ(stored.params.size(), static_cast<size_t>(count));
  std::vector<int64_t> shards;
  for (int i = 0; i < count; ++i) {
    SCOPED_TRACE("operand " + std::to_string(i));
    const int64_t shard = (numels[i] + n - 1) / n;
    shards.push_back(shard);
    EXPECT_EQ(stored.params[i],
              quantized[i]
                  ? quantizePacked(plain.params[i], shard, dtype, blockSize)
                  : plain.params[i]);
    EXPECT_EQ(stored.gathered[i], plain.gathered[i]);
    // Every rank's plain shard, and its round trip where it is owned.
    Bytes every(static_cast<size_t>(n * shard * width));
    ASSERT_TRUE(comm.allGather(plain.params[i].data(), every.data(),
                               shard * width, DType::I1,
                               {"plain shards", nullptr})
                    .isOk());
    Bytes expected;
    for (int r = 0; r < n; ++r) {
      Bytes own(every.begin() + r * shard * width,
                every.begin() + (r + 1) * shard * width);
      Bytes back =
          dequantizePacked(quantizePacked(own, shard, dtype, blockSize), shard,
                           dtype, blockSize);
      expected.insert(expected.end(), back.begin(), back.end());
    }
    expected.resize(static_cast<size_t>(numels[i] * width));
    EXPECT_EQ(stored.gathered[i], expected);
  }
  EXPECT_EQ(stored.stats.bytesSent, plain.stats.bytesSent);
  EXPECT_EQ(stored.stats.bytesReceived, plain.stats.bytesReceived);
  EXPECT_EQ(stored.stats.bytesSent,
            (n - 1) * quantizedGatherBytes(shards, blockSize));
}

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_QUANTIZEDPARAMSTEP_H
