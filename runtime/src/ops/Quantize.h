//===- Quantize.h - symmetric block quantization of floats ------*- C++ -*-===//
//
// The block quantizer of ZeRO++'s quantized collectives (docs/Runtime.md,
// "Block quantization"): int8 for parameter all-gathers (qwZ) and int4 for
// gradient all-to-alls (qgZ). A tensor of n floats is cut into blocks of
// `blockSize` consecutive elements (the last may be shorter); each block
// stores one fp32 scale, absmax / qmax with qmax = 2^(bits-1) - 1 (127 or
// 7), and each element q = round(x / scale) in [-qmax, qmax], rounded to
// nearest, ties to even. Dequantized, x' = q * scale, so that
// |x - x'| <= scale / 2 = absmax / (2 qmax) for every element (up to the
// float rounding of the division and the product). Unlike DeepSpeed's kernel
// (scale absmax / 128, +absmax saturating to 127) no value saturates.
//
// A block of zeros has scale 0 and comes back exactly. A block holding an
// infinity or a NaN has scale NaN: every element of it comes back NaN, so
// that a non-finite value is never dropped or turned finite (an fp16
// overflow still reaches the loss scaler's check; a non-finite weight the
// loss).
//
// int4 values are packed two to a byte, element 2i in the low nibble, in
// two's complement.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_QUANTIZE_H
#define ZERO_RUNTIME_OPS_QUANTIZE_H

#include "zero/runtime/Program.h"

#include <cstdint>

namespace zero::runtime::quantize {

// The sizes of blocks and packed values, shared with the schedule's decoder.
using zero::runtime::getNumBlocks;
using zero::runtime::getQuantizedBytes;

/// Quantizes `in` (n floats) into `out` (getQuantizedBytes(n, bits) bytes)
/// and `scales` (getNumBlocks(n, blockSize) floats). `bits` is 4 or 8,
/// `blockSize` at least 1 (even for 4 bits, so that no byte holds two
/// blocks).
void quantizeBlocks(const float *in, int64_t n, int bits, int64_t blockSize,
                    uint8_t *out, float *scales);

/// The inverse: `out[i] = q[i] * scales[i / blockSize]`.
void dequantizeBlocks(const uint8_t *in, const float *scales, int64_t n,
                      int bits, int64_t blockSize, float *out);

/// Adds the dequantized blocks to `sums`: `sums[i] += q[i] * scale[i /
/// blockSize]` in f32, the scales read as bytes at any alignment (the
/// packed chunks of the quantized reduce-scatter, qgZ). A NaN scale makes
/// its block's sums NaN.
void accumulateDequantized(const uint8_t *in, const void *scales, int64_t n,
                           int bits, int64_t blockSize, float *sums);

/// The float formats that quantizeElements reads and dequantizeElements
/// writes.
enum class QuantizedFormat { F32, BF16, F16 };

/// The format of a quantized tensor's elements: f32, bf16 or f16 (the
/// loader refuses other element types).
inline QuantizedFormat getQuantizedFormat(DType type) {
  return type == DType::F32    ? QuantizedFormat::F32
         : type == DType::BF16 ? QuantizedFormat::BF16
                               : QuantizedFormat::F16;
}

/// As quantizeBlocks, of n elements of `format` at `in`, each read exactly
/// as a float. Nothing need be aligned: the elements and the scales (the
/// f32 bytes of getNumBlocks(n, blockSize) floats) are read and written as
/// bytes, for the packed blocks of the quantized all-gather (qwZ), which
/// may start at any byte.
void quantizeElements(const void *in, QuantizedFormat format, int64_t n,
                      int bits, int64_t blockSize, uint8_t *out, void *scales);

/// The inverse: element i is q[i] * scale[i / blockSize] in f32, rounded to
/// `format` (to nearest, ties to even, FloatFormats.h), written to `out`.
void dequantizeElements(const uint8_t *in, const void *scales, int64_t n,
                        int bits, int64_t blockSize, QuantizedFormat format,
                        void *out);

/// Rounds n sums to `format` (to nearest, ties to even) into `out`, which
/// need not be aligned, each divided by `divisor` in f32 first unless it is
/// 1 (avg): the quantized reduce-scatter's results.
void roundSums(const float *sums, int64_t n, int64_t divisor,
               QuantizedFormat format, void *out);

} // namespace zero::runtime::quantize

#endif // ZERO_RUNTIME_OPS_QUANTIZE_H
