//===- QuantizedStorageTest.cpp - parameters stored quantized -------------===//
//
// ZeRO++'s zero_quantized_nontrainable_weights on one rank: the loader's
// checks of a value's `quantized` and of its readers, the initialization
// and the quantized all-gather of a parameter stored quantized, checkpoints
// of it (the same storage bit for bit, across quantized and plain by
// dequantizing), its export and its state accessors.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/Session.h"
#include "zero/runtime/StateAccess.h"

#include "QuantizedParamStep.h"
#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

/// Parameters w0 [7] stored quantized and w1 [3] plain, bf16, gathered in
/// one bucket with blocks of 3, on one rank.
json makeStoredSchedule() {
  return makeQuantizedGatherSchedule(1, {7, 3}, "bf16", 3, {true, false});
}

// --- The loader --------------------------------------------------------===//

TEST(QuantizedStorage, Loads) {
  StatusOr<Schedule> parsed =
      Schedule::parse(makeStoredSchedule().dump(), "s.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  const ValueInfo &w0 = parsed->values().values[0];
  ASSERT_TRUE(w0.quantized);
  EXPECT_EQ(w0.quantized->blockSize, 3);
  // ceil(7 / 3) f32 scales, then 7 int8 values.
  EXPECT_EQ(w0.bytes(), 4 * 3 + 7);
  EXPECT_FALSE(parsed->values().values[1].quantized);
}

TEST(QuantizedStorage, RefusesMalformedFields) {
  json s = makeStoredSchedule();
  json &q = s["values"][0]["quantized"];
  q["bits"] = 4;
  EXPECT_SCHEDULE_ERROR(s, "values[0].quantized.bits: 4 is not supported (8)");
  q["bits"] = 8;
  q["block_size"] = 0;
  EXPECT_SCHEDULE_ERROR(s, "values[0].quantized.block_size: 0 is out of "
                           "range [1, ...]");
  q.erase("block_size");
  EXPECT_SCHEDULE_ERROR(s, "values[0].quantized: missing key 'block_size'");
  q["block_size"] = 3;
  q["signed"] = true;
  EXPECT_SCHEDULE_ERROR(s, "values[0].quantized: unknown key 'signed'");
  s["values"][0]["quantized"] = 8;
  EXPECT_SCHEDULE_ERROR(s, "values[0].quantized: expected an object");

  json old = makeStoredSchedule();
  old["version"] = 2;
  EXPECT_SCHEDULE_ERROR(old, "values[0].quantized: 'quantized' needs version "
                             "3 (the schedule is version 2)");
  json integer = makeStoredSchedule();
  integer["values"][0]["dtype"] = "i32";
  EXPECT_SCHEDULE_ERROR(integer,
                        "values[0].quantized: a quantized tensor holds f32, "
                        "bf16 or f16 elements, but value 0 (%w0) is i32");
  json scalar = makeStoredSchedule();
  scalar["values"][0] = {{"id", 0},
                         {"kind", "scalar"},
                         {"dtype", "f32"},
                         {"quantized", {{"bits", 8}, {"block_size", 3}}}};
  EXPECT_SCHEDULE_ERROR(scalar, "values[0].quantized: a scalar has no "
                                "quantized: it lives in a register");
  // The packed bytes must fit the buffer: 19 here.
  json small = makeStoredSchedule();
  small["buffers"][0]["bytes"] = 18;
  EXPECT_SCHEDULE_ERROR(small, "values[0]: tensor value 0 [7] x bf16 stored "
                               "quantized (19 bytes) is larger than its "
                               "buffer 0 'w0' (18 bytes)");
}

TEST(QuantizedStorage, OnlyAShardedParameterIsStoredQuantized) {
  json whole = makeStoredSchedule();
  whole["arguments"][0]["sharded"] = false;
  EXPECT_SCHEDULE_ERROR(whole, "arguments[0].value: value 0 (%w0) is stored "
                               "quantized, but parameter 'w0' is not "
                               "sharded: only a sharded parameter may be "
                               "(zero_quantized_nontrainable_weights)");
  json data = makeQuantizedGatherSchedule(1, {7, 3}, "bf16", 3);
  data["values"][0]["quantized"] = {{"bits", 8}, {"block_size", 3}};
  data["buffers"][0]["bytes"] = 19;
  EXPECT_SCHEDULE_ERROR(data, "arguments[0].value: value 0 (%t0) is stored "
                              "quantized, but only a sharded parameter may "
                              "be (zero_quantized_nontrainable_weights)");
}

TEST(QuantizedStorage, OnlyAQuantizedGatherOfItsBlockSizeReadsIt) {
  json other = makeStoredSchedule();
  other["values"][0]["quantized"]["block_size"] = 4;
  EXPECT_SCHEDULE_ERROR(other,
                        "instructions.comm[0].operands[0]: value 0 (%w0) is "
                        "stored quantized "
                        "(zero_quantized_nontrainable_weights); only a "
                        "quantized all_gather of block_size 4 reads it");
  json plainGather = makeStoredSchedule();
  plainGather["instructions"]["comm"][0].erase("quantize");
  EXPECT_SCHEDULE_ERROR(plainGather,
                        "instructions.comm[0].operands[0]: value 0 (%w0) is "
                        "stored quantized "
                        "(zero_quantized_nontrainable_weights); only a "
                        "quantized all_gather of block_size 3 reads it");
  json compute = makeStoredSchedule();
  compute["instructions"]["compute"].push_back({{"op", "linalg.copy"},
                                                {"point", 0},
                                                {"loc", "q.mlir:2:1"},
                                                {"operands", {0, 2}},
                                                {"results", {2}}});
  EXPECT_SCHEDULE_ERROR(compute,
                        "instructions.compute[0].operands[0]: value 0 (%w0) "
                        "is stored quantized "
                        "(zero_quantized_nontrainable_weights); only a "
                        "quantized all_gather of block_size 3 reads it");
}

/// makeStoredSchedule with a swap of w0 (point 0, on `copy`) into `%w0.host`
/// (value 4, in host memory), stored as `quantized` says (null: plain).
json makeSwapSchedule(const json &quantized) {
  json s = makeStoredSchedule();
  json buffer = makeBuffer(5, "w0.host", "parameter", 0, 19, 0, 1);
  buffer["space"] = "host";
  s["buffers"].push_back(buffer);
  s["memory"]["arenas"]["host"] = 64;
  json value = makeTensor(4, "%w0.host", {7}, 5, "bf16");
  if (!quantized.is_null())
    value["quantized"] = quantized;
  s["values"].push_back(value);
  s["streams"] = {"compute", "comm", "copy"};
  s["instructions"]["copy"] = json::array({{{"op", "swap"},
                                            {"point", 0},
                                            {"loc", "q.mlir:3:1"},
                                            {"operands", {0}},
                                            {"results", {4}}}});
  return s;
}

TEST(QuantizedStorage, ASwapMovesItStoredAlike) {
  StatusOr<Schedule> alike = Schedule::parse(
      makeSwapSchedule({{"bits", 8}, {"block_size", 3}}).dump(), "s.json");
  EXPECT_TRUE(alike.isOk()) << alike.status().toString();
  const std::string message =
      "instructions.copy[0].results[0]: value 4 (%w0.host) and value 0 (%w0) "
      "are not stored alike (both quantized in blocks of one size, or "
      "neither): a swap moves the stored bytes as they are";
  EXPECT_SCHEDULE_ERROR(makeSwapSchedule(json()), message);
  EXPECT_SCHEDULE_ERROR(makeSwapSchedule({{"bits", 8}, {"block_size", 4}}),
                        message);
}

TEST(QuantizedStorage, NothingWritesIt) {
  // The gather's result stored quantized (its f32 buffer holds the bytes).
  json result = makeQuantizedGatherSchedule(1, {7, 3}, "f32", 3, {true, false});
  result["values"][2]["quantized"] = {{"bits", 8}, {"block_size", 3}};
  EXPECT_SCHEDULE_ERROR(result,
                        "instructions.comm[0].results[0]: value 2 (%T0) is "
                        "stored quantized "
                        "(zero_quantized_nontrainable_weights); no "
                        "instruction but a swap writes it");
  json update = makeStoredSchedule();
  update["results"].push_back(
      {{"value", 2}, {"kind", "update"}, {"argument", 0}});
  EXPECT_SCHEDULE_ERROR(update, "results[0].argument: argument 0's value 0 "
                                "(%w0) is stored quantized "
                                "(zero_quantized_nontrainable_weights): a "
                                "frozen parameter is not updated");
}

// --- Initialization and the gather --------------------------------------===//

TEST(QuantizedStorage, GathersAsTheQuantizedGatherOfThePlainShard) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  checkQuantizedParamGather(*comm, {7, 3, 12}, "bf16", 3, {true, false, true});
  checkQuantizedParamGather(*comm, {7, 3, 12}, "f32", 5, {false, true, true});
}

class QuantizedStorageFiles : public test::TempDirTest {};

TEST_F(QuantizedStorageFiles, QuantizesTheInitialWeightsItReads) {
  std::unique_ptr<Communicator> comm = createSelfCommunicator();
  StatusOr<Schedule> parsed =
      Schedule::parse(makeStoredSchedule().dump(), "q.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  StatusOr<std::unique_ptr<Executor>> created =
      Executor::create(std::make_shared<const Schedule>(std::move(*parsed)),
                       createHostDevice(), *comm);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  // w0's values need rounding to bf16 (1 + 2^-9 is not one).
  const std::vector<NamedTensor> given = {
      {"w0", {7}, {0.25f, -3, 1.0f + 1.0f / 512, 0, 6.5f, -0.75f, 100}},
      {"w1", {3}, {1, 2, 3}}};
  ASSERT_TRUE(writeSafetensors(path("init.safetensors"), given).isOk());
  StatusOr<SafetensorsReader> reader =
      SafetensorsReader::open(path("init.safetensors"));
  ASSERT_TRUE(reader.isOk()) << reader.status().toString();
  InitOptions options;
  options.parameters = &*reader;
  ASSERT_TRUE((*created)->initialize(options).isOk());
  Bytes rounded(14);
  for (int i = 0; i < 7; ++i) {
    uint16_t bits = floatToBF16(given[0].data[i]);
    std::memcpy(rounded.data() + 2 * i, &bits, 2);
  }
  EXPECT_EQ(readValueBytes(**created, 0),
            quantizePacked(rounded, 7, DType::BF16, 3));
}

// --- Checkpoints, export, accessors -------------------------------------===//

class QuantizedStorageCheckpoint : public TempDirTest {
protected:
  /// A session of `schedule` (seed 5), resumed from `checkpoint` unless
  /// empty.
  std::unique_ptr<Session> open(const json &schedule,
                                const std::string &checkpoint = "") {
    StatusOr<Schedule> parsed = Schedule::parse(schedule.dump(), "q.json");
    EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
    if (!parsed.isOk())
      return nullptr;
    SessionOptions options;
    options.seed = 5;
    options.resumeFrom = checkpoint;
    StatusOr<std::unique_ptr<Session>> session = Session::create(
        std::make_shared<const Schedule>(std::move(*parsed)), options);
    EXPECT_TRUE(session.isOk()) << session.status().toString();
    return session.isOk() ? std::move(*session) : nullptr;
  }

  std::string save(Session &session, const std::string &name) {
    std::string directory = path(name);
    EXPECT_TRUE(prepareCheckpointDirectory(directory).isOk());
    Status saved = saveCheckpoint(session, {directory});
    EXPECT_TRUE(saved.isOk()) << saved.toString();
    return directory;
  }
};

/// bf16 elements as floats.
std::vector<float> bf16Floats(const Bytes &bytes) {
  std::vector<float> values(bytes.size() / 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    values[i] = bf16ToFloat(bits);
  }
  return values;
}

TEST_F(QuantizedStorageCheckpoint, SavesAndLoadsTheStoredBytes) {
  std::unique_ptr<Session> saved = open(makeStoredSchedule());
  ASSERT_TRUE(saved);
  const Bytes stored = readValueBytes(saved->executor(), 0);
  const Bytes w1 = readValueBytes(saved->executor(), 1);
  const Bytes dequantized = dequantizePacked(stored, 7, DType::BF16, 3);
  std::string checkpoint = save(*saved, "q");

  // The same storage: bit for bit.
  std::unique_ptr<Session> same = open(makeStoredSchedule(), checkpoint);
  ASSERT_TRUE(same);
  EXPECT_EQ(readValueBytes(same->executor(), 0), stored);
  EXPECT_EQ(readValueBytes(same->executor(), 1), w1);

  // Into a schedule that keeps w0 plain: its dequantized values.
  json plain =
      makeQuantizedGatherSchedule(1, {7, 3}, "bf16", 3, {false, false});
  std::unique_ptr<Session> unquantized = open(plain, checkpoint);
  ASSERT_TRUE(unquantized);
  EXPECT_EQ(readValueBytes(unquantized->executor(), 0), dequantized);
  EXPECT_EQ(readValueBytes(unquantized->executor(), 1), w1);

  // Into blocks of another size: dequantized, quantized again.
  json blocks =
      makeQuantizedGatherSchedule(1, {7, 3}, "bf16", 4, {true, false});
  std::unique_ptr<Session> reblocked = open(blocks, checkpoint);
  ASSERT_TRUE(reblocked);
  EXPECT_EQ(readValueBytes(reblocked->executor(), 0),
            quantizePacked(dequantized, 7, DType::BF16, 4));

  // Consolidated and exported: the dequantized values, in fp32 of bf16.
  StatusOr<std::vector<RawTensor>> whole =
      consolidateCheckpoint(checkpoint, "BF16");
  ASSERT_TRUE(whole.isOk()) << whole.status().toString();
  ASSERT_EQ(whole->size(), 2u);
  EXPECT_EQ(whole->front().name, "w0");
  EXPECT_EQ(Bytes(whole->front().bytes.begin(), whole->front().bytes.end()),
            dequantized);
  StatusOr<std::vector<NamedTensor>> exported = saved->exportParameters();
  ASSERT_TRUE(exported.isOk()) << exported.status().toString();
  ASSERT_EQ(exported->size(), 2u);
  EXPECT_EQ(exported->front().data, bf16Floats(dequantized));
}

// A schedule that sets its master weights from the 16-bit parameters reads
// every rank's file, as a resharding load, and still restores the stored
// bytes as saved.
TEST_F(QuantizedStorageCheckpoint, KeepsTheStoredBytesWhenReadingEveryRank) {
  json schedule = makeStoredSchedule();
  schedule["checkpoint"] = {{"load_from_fp32_weights", false}};
  std::unique_ptr<Session> saved = open(schedule);
  ASSERT_TRUE(saved);
  const Bytes stored = readValueBytes(saved->executor(), 0);
  std::unique_ptr<Session> loaded = open(schedule, save(*saved, "q"));
  ASSERT_TRUE(loaded);
  EXPECT_EQ(readValueBytes(loaded->executor(), 0), stored);
}

TEST_F(QuantizedStorageCheckpoint, RefusesAMalformedQuantizedEntry) {
  std::unique_ptr<Session> saved = open(makeStoredSchedule());
  ASSERT_TRUE(saved);
  const std::string checkpoint = save(*saved, "q");
  const std::string manifestPath = checkpoint + "/step-0/manifest.json";
  json manifest = json::parse(std::ifstream(manifestPath));
  ASSERT_EQ(manifest["tensors"][0]["name"], "param/w0");
  EXPECT_EQ(manifest["tensors"][0]["dtype"], "U8");
  EXPECT_EQ(manifest["tensors"][0]["shape"], json({19}));
  EXPECT_EQ(
      manifest["tensors"][0]["quantized"],
      json(
          {{"bits", 8}, {"block_size", 3}, {"dtype", "BF16"}, {"shape", {7}}}));
  manifest["tensors"][0]["quantized"]["bits"] = 4;
  std::ofstream(manifestPath) << manifest.dump();
  Status verified = verifyCheckpoint(checkpoint);
  EXPECT_EQ(verified.message(),
            manifestPath + ": tensor 'param/w0': 'quantized' must be {bits: "
                           "8, block_size: at least 1, dtype: F32, BF16 or "
                           "F16, shape} of a U8 tensor");
}

TEST_F(QuantizedStorageCheckpoint, QuantizesAPlainCheckpointOnLoad) {
  json plain =
      makeQuantizedGatherSchedule(1, {7, 3}, "bf16", 3, {false, false});
  std::unique_ptr<Session> saved = open(plain);
  ASSERT_TRUE(saved);
  const std::vector<float> values = {0.5f, -1.25f, 3, 0, 7.5f, -0.125f, 2};
  ASSERT_TRUE(setFullFp32Param(*saved, "w0", values).isOk());
  const Bytes elements = readValueBytes(saved->executor(), 0);
  EXPECT_EQ(bf16Floats(elements), values);
  std::string checkpoint = save(*saved, "p");

  std::unique_ptr<Session> loaded = open(makeStoredSchedule(), checkpoint);
  ASSERT_TRUE(loaded);
  const Bytes stored = readValueBytes(loaded->executor(), 0);
  EXPECT_EQ(stored, quantizePacked(elements, 7, DType::BF16, 3));
  // The accessors read it dequantized and write it quantized.
  StatusOr<std::vector<float>> full = getFullFp32Param(*loaded, "w0");
  ASSERT_TRUE(full.isOk()) << full.status().toString();
  EXPECT_EQ(*full, bf16Floats(dequantizePacked(stored, 7, DType::BF16, 3)));
  ASSERT_TRUE(setFullFp32Param(*loaded, "w0", values).isOk());
  EXPECT_EQ(readValueBytes(loaded->executor(), 0), stored);
}

} // namespace
