//===- QuantizeGpuTest.cpp - the block quantizer's kernels against the host
//===//
//
// The CUDA device's quantizer (Quantize.cu) writes the bytes of the host's
// (ops/Quantize.h) on the same input, bit for bit: scales (NaN ones too)
// and packed levels, for f32, bf16 and f16 elements, int8 and int4, blocks
// of zeros, a partial last block, odd and even int4 counts, blocks with an
// infinity or a NaN; and the dequantized elements, the f32 hop sums and the
// rounded sums (avg) of the quantized reduce-scatter. Scales sit at odd
// byte offsets, as in the packed blocks. Skips, with the reason, where no
// GPU is visible.
//
//===----------------------------------------------------------------------===//

#include "RequireCuda.h"

#include "CudaOps.h"
#include "QuantizeCases.h"
#include "ops/Quantize.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::test;

namespace {

/// Device memory of `bytes`, freed at the end of the test.
struct DeviceBytes {
  explicit DeviceBytes(size_t bytes) : size(bytes) {
    EXPECT_EQ(cudaMalloc(&data, std::max<size_t>(bytes, 1)), cudaSuccess);
  }
  ~DeviceBytes() { cudaFree(data); }
  DeviceBytes(const DeviceBytes &) = delete;
  DeviceBytes &operator=(const DeviceBytes &) = delete;
  std::byte *get() const { return static_cast<std::byte *>(data); }
  void upload(const void *from, size_t bytes, size_t at = 0) {
    ASSERT_EQ(cudaMemcpy(get() + at, from, bytes, cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  std::vector<uint8_t> download(size_t bytes, size_t at = 0) const {
    std::vector<uint8_t> to(bytes);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(to.data(), get() + at, bytes, cudaMemcpyDeviceToHost),
              cudaSuccess);
    return to;
  }
  void *data = nullptr;
  size_t size;
};

TEST(QuantizeGpu, QuantizesAsTheHostBitForBit) {
  ZERO_REQUIRE_CUDA();
  unsigned seed = 1;
  for (const QuantizeCase &c : getQuantizeCases())
    for (bool nonFinite : {false, true}) {
      SCOPED_TRACE(describeQuantizeCase(c) +
                   (nonFinite ? ", with inf and NaN" : ""));
      const std::vector<uint8_t> in = asElements(
          makeFloats(c.n, c.blockSize, nonFinite, seed++), c.type);
      const size_t valueBytes =
          static_cast<size_t>(getQuantizedBytes(c.n, c.bits));
      const size_t scaleBytes =
          static_cast<size_t>(4 * getNumBlocks(c.n, c.blockSize));
      std::vector<uint8_t> values(valueBytes), scales(kScaleOffset + scaleBytes);
      quantize::quantizeElements(
          in.data(), quantize::getQuantizedFormat(c.type), c.n, c.bits,
          c.blockSize, values.data(), scales.data() + kScaleOffset);

      DeviceBytes input(in.size()), outValues(valueBytes),
          outScales(kScaleOffset + scaleBytes);
      input.upload(in.data(), in.size());
      // Garbage first: every byte must be written.
      ASSERT_EQ(cudaMemset(outValues.data, 0xA5, valueBytes), cudaSuccess);
      Status status = cuda::enqueueQuantizeBlocks(
          input.data, c.type, c.n, c.bits, c.blockSize, outValues.data,
          outScales.get() + kScaleOffset, nullptr);
      ASSERT_TRUE(status.isOk()) << status.toString();
      EXPECT_EQ(outScales.download(scaleBytes, kScaleOffset),
                std::vector<uint8_t>(scales.begin() + kScaleOffset,
                                     scales.end()));
      EXPECT_EQ(outValues.download(valueBytes), values);
    }
}

TEST(QuantizeGpu, DequantizesAsTheHostBitForBit) {
  ZERO_REQUIRE_CUDA();
  unsigned seed = 100;
  for (const QuantizeCase &c : getQuantizeCases()) {
    SCOPED_TRACE(describeQuantizeCase(c));
    const PackedCase host = packOnHost(c, seed++);
    const size_t scaleBytes = host.scaleBytes;
    const std::vector<uint8_t> &packed = host.packed;
    const std::vector<uint8_t> &expected = host.dequantized;
    DeviceBytes device(packed.size()), out(expected.size());
    device.upload(packed.data(), packed.size());
    Status status = cuda::enqueueDequantizeBlocks(
        device.get() + kScaleOffset + scaleBytes, device.get() + kScaleOffset,
        c.n, c.bits, c.blockSize, c.type, out.data, nullptr);
    ASSERT_TRUE(status.isOk()) << status.toString();
    EXPECT_EQ(out.download(expected.size()), expected);
  }
}

// qgZ's hop: sums += dequantized, in f32, sender after sender; then the
// results rounded, divided by the group size for avg.
TEST(QuantizeGpu, AccumulatesAndRoundsTheSumsAsTheHost) {
  ZERO_REQUIRE_CUDA();
  const int64_t n = 1001, blockSize = 64;
  std::vector<float> sums = makeFloats(n, blockSize, false, 7);
  std::vector<float> expected = sums;
  DeviceBytes deviceSums(n * 4);
  deviceSums.upload(sums.data(), n * 4);
  for (unsigned sender = 0; sender < 3; ++sender) {
    SCOPED_TRACE("sender " + std::to_string(sender));
    const std::vector<float> x =
        makeFloats(n, blockSize, sender == 2, 20 + sender);
    const PackedHop hop = packHopOnHost(x, blockSize, expected);
    const std::vector<uint8_t> &packed = hop.packed;
    const size_t scaleBytes = hop.scaleBytes;
    DeviceBytes device(packed.size());
    device.upload(packed.data(), packed.size());
    Status status = cuda::enqueueAccumulateDequantized(
        device.get() + 1 + scaleBytes, device.get() + 1, n, 4, blockSize,
        reinterpret_cast<float *>(deviceSums.data), nullptr);
    ASSERT_TRUE(status.isOk()) << status.toString();
    std::vector<uint8_t> bytes(n * 4);
    std::memcpy(bytes.data(), expected.data(), bytes.size());
    EXPECT_EQ(deviceSums.download(n * 4), bytes);
  }
  for (DType type : {DType::F32, DType::BF16, DType::F16})
    for (int64_t divisor : {1, 3, 4}) {
      SCOPED_TRACE("type " + std::to_string(static_cast<int>(type)) +
                   ", divisor " + std::to_string(divisor));
      const size_t bytes = static_cast<size_t>(n * getDTypeWidth(type));
      std::vector<uint8_t> rounded(bytes);
      quantize::roundSums(expected.data(), n, divisor,
                          quantize::getQuantizedFormat(type), rounded.data());
      DeviceBytes out(bytes);
      Status status = cuda::enqueueRoundSums(
          reinterpret_cast<const float *>(deviceSums.data), n, divisor, type,
          out.data, nullptr);
      ASSERT_TRUE(status.isOk()) << status.toString();
      EXPECT_EQ(out.download(bytes), rounded);
    }
}

TEST(QuantizeGpu, RefusesWhatTheQuantizerDoesNotTake) {
  ZERO_REQUIRE_CUDA();
  DeviceBytes buffer(64);
  Status odd = cuda::enqueueQuantizeBlocks(buffer.data, DType::F32, 8, 4, 3,
                                           buffer.data, buffer.data, nullptr);
  EXPECT_EQ(odd.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(odd.message().find("4 bits in blocks of 3"), std::string::npos)
      << odd.message();
  Status type = cuda::enqueueDequantizeBlocks(buffer.data, buffer.data, 8, 8,
                                              4, DType::F64, buffer.data,
                                              nullptr);
  EXPECT_EQ(type.code(), StatusCode::kInvalidArgument);
}

} // namespace
