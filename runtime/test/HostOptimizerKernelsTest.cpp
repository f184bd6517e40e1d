//===- HostOptimizerKernelsTest.cpp - vector and scalar optimizer loops ---===//
//
// The AVX2 and AVX-512 loops of zero.adam and zero.sgd against the scalar
// loop, bit for bit, on random data in every mode: odd lengths (a partial
// last vector), infinities, NaNs, denormals, huge and tiny values.
//
// Which NaN an instruction returns when two operands are different NaNs is
// the compiler's choice (it orders commutative operands freely) in either
// loop, so no element mixes two different NaNs: an element either holds
// only x86's default NaN (the one invalid operations produce), or exactly
// one NaN with a payload among finite values that produce no other.
//
//===----------------------------------------------------------------------===//

#include "host/OptimizerKernels.h"
#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/host/Threads.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace zero::runtime;
using namespace zero::runtime::host;

namespace {

template <typename T> struct Bits;
template <> struct Bits<float> {
  using U = uint32_t;
  static constexpr int kMantissa = 23, kExponent = 8;
  static constexpr U kDefaultNaN = 0xffc00000u;
};
template <> struct Bits<double> {
  using U = uint64_t;
  static constexpr int kMantissa = 52, kExponent = 11;
  static constexpr U kDefaultNaN = 0xfff8000000000000u;
};

template <typename T> T fromBits(typename Bits<T>::U bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// Random values, and random NaNs of either kind.
template <typename T> class Values {
public:
  using U = typename Bits<T>::U;
  explicit Values(std::mt19937_64 &rng) : rng_(rng) {}

  /// Any finite bit pattern: denormals, zeros and the largest values.
  T anyFinite() {
    const U maxExponent = (U(1) << Bits<T>::kExponent) - 2;
    const U exponent = rng_() % (maxExponent + 1);
    const U mantissa = rng_() & ((U(1) << Bits<T>::kMantissa) - 1);
    const U sign = U(rng_() & 1) << (sizeof(U) * 8 - 1);
    return fromBits<T>(sign | exponent << Bits<T>::kMantissa | mantissa);
  }
  /// A value an optimizer meets: about 1e-4 to 1e1 in magnitude.
  T moderate(bool positive = false) {
    std::uniform_real_distribution<double> exponent(-4, 1);
    const T value = static_cast<T>(std::pow(10.0, exponent(rng_)));
    return positive || rng_() % 2 ? value : -value;
  }
  /// Zeros, infinities, the default NaN, denormals, huge and tiny values.
  T special() {
    const T kSpecials[] = {T(0),
                           -T(0),
                           INFINITY,
                           -INFINITY,
                           fromBits<T>(Bits<T>::kDefaultNaN),
                           std::numeric_limits<T>::denorm_min(),
                           -std::numeric_limits<T>::denorm_min() * T(3),
                           std::numeric_limits<T>::min() / T(3),
                           std::numeric_limits<T>::max(),
                           -std::numeric_limits<T>::max() / T(2),
                           std::numeric_limits<T>::min(),
                           T(1)};
    return kSpecials[rng_() % (sizeof(kSpecials) / sizeof(T))];
  }
  /// A NaN with a random payload and sign, quiet or signaling.
  T payloadNaN() {
    const U exponent = ((U(1) << Bits<T>::kExponent) - 1) << Bits<T>::kMantissa;
    U mantissa = rng_() & ((U(1) << Bits<T>::kMantissa) - 1);
    if (mantissa == 0)
      mantissa = 1;
    const U sign = U(rng_() & 1) << (sizeof(U) * 8 - 1);
    return fromBits<T>(sign | exponent | mantissa);
  }

private:
  std::mt19937_64 &rng_;
};

/// The kinds of element the inputs mix, see the file comment.
enum class Kind { Moderate, AnyFinite, Special, PayloadNaN };

/// The 16-bit form of an f32 gradient value: its bits rounded, or for a
/// payload NaN a 16-bit NaN with a random payload.
uint16_t toHalf(float value, DType type, bool payloadNaN,
                std::mt19937_64 &rng) {
  if (payloadNaN) {
    const uint16_t sign = (rng() & 1) << 15;
    uint16_t mantissa = rng() & (type == DType::BF16 ? 0x7f : 0x3ff);
    if (mantissa == 0)
      mantissa = 1;
    return sign | (type == DType::BF16 ? 0x7f80 : 0x7c00) | mantissa;
  }
  return type == DType::BF16 ? floatToBF16(value) : roundToF16(value);
}

/// The arrays of one Adam test, with their own memory.
template <typename T> struct AdamData {
  std::vector<T> param, m, v, vMax;
  std::vector<unsigned char> grad;
  std::vector<uint16_t> param16;
  DType gradType;

  AdamArrays<T> arrays(bool amsgrad, DType param16Type) {
    return {param.data(),
            grad.data(),
            gradType,
            m.data(),
            v.data(),
            amsgrad ? vMax.data() : nullptr,
            param16.empty() ? nullptr : param16.data(),
            param16Type};
  }
};

template <typename T>
AdamData<T> makeAdamData(int64_t n, DType gradType, bool param16,
                         std::mt19937_64 &rng) {
  Values<T> values(rng);
  AdamData<T> d;
  d.gradType = gradType;
  d.param.resize(n);
  d.m.resize(n);
  d.v.resize(n);
  d.vMax.resize(n);
  std::vector<T> grad(n);
  std::vector<bool> gradNaN(n, false);
  for (int64_t i = 0; i < n; ++i) {
    T *slots[] = {&d.param[i], &grad[i], &d.m[i], &d.v[i], &d.vMax[i]};
    const Kind kind = static_cast<Kind>(rng() % 4);
    for (int s = 0; s < 5; ++s) {
      switch (kind) {
      case Kind::Moderate:
      case Kind::PayloadNaN:
        // v and its maximum are nonnegative in a run.
        *slots[s] = values.moderate(s >= 3);
        break;
      case Kind::AnyFinite:
        *slots[s] = values.anyFinite();
        break;
      case Kind::Special:
        *slots[s] = values.special();
        break;
      }
    }
    if (kind == Kind::PayloadNaN) {
      const int s = static_cast<int>(rng() % 5);
      *slots[s] = values.payloadNaN();
      gradNaN[i] = s == 1;
    }
  }
  const int64_t width = getDTypeWidth(gradType);
  d.grad.resize(n * width);
  for (int64_t i = 0; i < n; ++i) {
    if (gradType == DType::BF16 || gradType == DType::F16) {
      const uint16_t half =
          toHalf(static_cast<float>(grad[i]), gradType, gradNaN[i], rng);
      std::memcpy(&d.grad[i * 2], &half, 2);
    } else {
      std::memcpy(&d.grad[i * width], &grad[i], width);
    }
  }
  if (param16)
    d.param16.assign(n, 0x5555);
  return d;
}

std::vector<KernelIsa> vectorIsas() {
  std::vector<KernelIsa> isas;
  if (getSupportedKernelIsa() >= KernelIsa::Avx2)
    isas.push_back(KernelIsa::Avx2);
  if (getSupportedKernelIsa() >= KernelIsa::Avx512)
    isas.push_back(KernelIsa::Avx512);
  return isas;
}

template <typename T>
void expectSameBits(const std::vector<T> &expected,
                    const std::vector<T> &actual, const std::string &what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  if (!expected.empty() &&
      std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(T)))
    for (size_t i = 0; i < expected.size(); ++i)
      if (std::memcmp(&expected[i], &actual[i], sizeof(T))) {
        ADD_FAILURE() << what << ": first difference at element " << i << " of "
                      << expected.size() << ": " << expected[i] << " vs "
                      << actual[i];
        return;
      }
}

const int64_t kLengths[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1027};

struct AdamMode {
  bool amsgrad, biasCorrection;
  const char *decay; // "none", "l2" or "adamw"
};

std::vector<AdamMode> allAdamModes() {
  std::vector<AdamMode> modes;
  for (bool amsgrad : {false, true})
    for (bool biasCorrection : {false, true})
      for (const char *decay : {"none", "l2", "adamw"})
        modes.push_back({amsgrad, biasCorrection, decay});
  return modes;
}

AdamHyperparameters makeHyperparameters(const AdamMode &mode,
                                        std::mt19937_64 &rng) {
  const double lrs[] = {static_cast<double>(1e-3f), 0.1, 1.0};
  const double beta1s[] = {0.9, 0.0, static_cast<double>(0.85f)};
  const int64_t steps[] = {1, 2, 7, 1000};
  AdamHyperparameters h;
  h.lr = lrs[rng() % 3];
  h.beta1 = beta1s[rng() % 3];
  h.beta2 = rng() % 2 ? 0.999 : 0.95;
  h.eps = rng() % 2 ? 1e-8 : 1e-6;
  h.weightDecay = std::string(mode.decay) == "none" ? 0.0 : 0.01;
  h.step = steps[rng() % 4];
  h.adamw = std::string(mode.decay) == "adamw";
  h.biasCorrection = mode.biasCorrection;
  h.amsgrad = mode.amsgrad;
  return h;
}

std::string describe(KernelIsa isa, const AdamMode &mode, DType gradType,
                     int param16, int64_t n) {
  return std::string(getKernelIsaName(isa)) +
         " amsgrad=" + std::to_string(mode.amsgrad) +
         " bias_correction=" + std::to_string(mode.biasCorrection) +
         " decay=" + mode.decay + " grad=" + getDTypeName(gradType) +
         " param16=" +
         (param16 < 0 ? "none" : getDTypeName(static_cast<DType>(param16))) +
         " n=" + std::to_string(n);
}

template <typename T>
void checkAdamAgainstScalar(const std::vector<DType> &gradTypes,
                            const std::vector<int> &param16Types) {
  const std::vector<KernelIsa> isas = vectorIsas();
  if (isas.empty())
    GTEST_SKIP() << "this CPU has neither AVX2 with FMA nor AVX-512";
  std::mt19937_64 rng(42);
  for (KernelIsa isa : isas)
    for (const AdamMode &mode : allAdamModes())
      for (DType gradType : gradTypes)
        for (int param16 : param16Types)
          for (int64_t n : kLengths) {
            const std::string what = describe(isa, mode, gradType, param16, n);
            const AdamHyperparameters h = makeHyperparameters(mode, rng);
            const AdamConstants<T> c = getAdamConstants<T>(h);
            const DType param16Type =
                param16 < 0 ? DType::BF16 : static_cast<DType>(param16);
            AdamData<T> scalar =
                makeAdamData<T>(n, gradType, param16 >= 0, rng);
            AdamData<T> vector = scalar;
            adamLoop(KernelIsa::Scalar, c,
                     scalar.arrays(h.amsgrad, param16Type), n);
            adamLoop(isa, c, vector.arrays(h.amsgrad, param16Type), n);
            expectSameBits(scalar.param, vector.param, what + " param");
            expectSameBits(scalar.m, vector.m, what + " m");
            expectSameBits(scalar.v, vector.v, what + " v");
            expectSameBits(scalar.vMax, vector.vMax, what + " vMax");
            expectSameBits(scalar.param16, vector.param16, what + " param16");
            if (::testing::Test::HasFailure())
              return;
          }
}

TEST(HostOptimizerKernels, AdamF32VectorLoopsMatchTheScalarLoopBitwise) {
  checkAdamAgainstScalar<float>(
      {DType::F32, DType::BF16, DType::F16},
      {-1, static_cast<int>(DType::BF16), static_cast<int>(DType::F16)});
}

TEST(HostOptimizerKernels, AdamF64VectorLoopsMatchTheScalarLoopBitwise) {
  checkAdamAgainstScalar<double>({DType::F64}, {-1});
}

TEST(HostOptimizerKernels, FusedParam16EqualsConvertingAfterwards) {
  // Every form, one thread and several blocks: the 16-bit copy written in
  // the loop is the updated f32 parameter converted afterwards.
  std::mt19937_64 rng(7);
  std::vector<KernelIsa> isas = vectorIsas();
  isas.insert(isas.begin(), KernelIsa::Scalar);
  for (KernelIsa isa : isas)
    for (DType param16Type : {DType::BF16, DType::F16})
      for (int64_t n : {int64_t(17), int64_t(3 * 4096 + 5)}) {
        const AdamMode mode{false, true, "adamw"};
        const AdamHyperparameters h = makeHyperparameters(mode, rng);
        AdamData<float> d = makeAdamData<float>(n, DType::BF16, true, rng);
        adamLoop(isa, getAdamConstants<float>(h), d.arrays(false, param16Type),
                 n);
        std::vector<uint16_t> converted(n);
        for (int64_t i = 0; i < n; ++i)
          converted[i] = param16Type == DType::BF16 ? floatToBF16(d.param[i])
                                                    : roundToF16(d.param[i]);
        expectSameBits(
            converted, d.param16,
            describe(isa, mode, DType::BF16, static_cast<int>(param16Type), n));
      }
}

TEST(HostOptimizerKernels, RunAdamStepWritesTheParam16CopyOnThreads) {
  // runAdamStep on two threads over many blocks: the same state as without
  // the copy, and the copy is the parameter converted.
  const int64_t n = 70001;
  std::mt19937_64 rng(3);
  setHostThreads(2);
  for (DType gradType : {DType::F32, DType::BF16, DType::F16})
    for (DType param16Type : {DType::BF16, DType::F16}) {
      const AdamMode mode{true, true, "l2"};
      const AdamHyperparameters h = makeHyperparameters(mode, rng);
      AdamData<float> fused = makeAdamData<float>(n, gradType, true, rng);
      AdamData<float> plain = fused;
      runAdamStep(h, n, fused.param.data(), fused.grad.data(), gradType,
                  fused.m.data(), fused.v.data(), fused.vMax.data(),
                  fused.param16.data(), param16Type);
      runAdamStep(h, n, plain.param.data(), plain.grad.data(), gradType,
                  plain.m.data(), plain.v.data(), plain.vMax.data());
      const std::string what = std::string("grad=") + getDTypeName(gradType) +
                               " param16=" + getDTypeName(param16Type);
      expectSameBits(plain.param, fused.param, what + " param");
      expectSameBits(plain.m, fused.m, what + " m");
      expectSameBits(plain.v, fused.v, what + " v");
      expectSameBits(plain.vMax, fused.vMax, what + " vMax");
      std::vector<uint16_t> converted(n);
      for (int64_t i = 0; i < n; ++i)
        converted[i] = param16Type == DType::BF16 ? floatToBF16(plain.param[i])
                                                  : roundToF16(plain.param[i]);
      expectSameBits(converted, fused.param16, what + " param16");
    }
  setHostThreads(1);
}

template <typename T> void checkSgdAgainstScalar() {
  const std::vector<KernelIsa> isas = vectorIsas();
  if (isas.empty())
    GTEST_SKIP() << "this CPU has neither AVX2 with FMA nor AVX-512";
  std::mt19937_64 rng(11);
  Values<T> values(rng);
  for (KernelIsa isa : isas)
    for (double weightDecay : {0.0, 0.01})
      for (double momentum : {0.0, 0.9})
        for (double dampening : {0.0, 0.1})
          for (bool nesterov : {false, true})
            for (int64_t n : kLengths) {
              if (nesterov && (momentum == 0 || dampening != 0))
                continue;
              SgdConstants<T> c;
              c.weightDecay = static_cast<T>(weightDecay);
              c.momentum = static_cast<T>(momentum);
              c.oneMinusDampening = static_cast<T>(1.0 - dampening);
              c.negLr = static_cast<T>(-static_cast<double>(1e-2f));
              c.nesterov = nesterov;
              std::vector<T> param(n), grad(n), buf(n);
              for (int64_t i = 0; i < n; ++i) {
                T *slots[] = {&param[i], &grad[i], &buf[i]};
                const Kind kind = static_cast<Kind>(rng() % 4);
                for (T *slot : slots)
                  *slot = kind == Kind::AnyFinite ? values.anyFinite()
                          : kind == Kind::Special ? values.special()
                                                  : values.moderate();
                if (kind == Kind::PayloadNaN)
                  *slots[rng() % 3] = values.payloadNaN();
              }
              std::vector<T> vParam = param, vBuf = buf;
              sgdLoop(KernelIsa::Scalar, c, n, param.data(), grad.data(),
                      buf.data());
              sgdLoop(isa, c, n, vParam.data(), grad.data(), vBuf.data());
              const std::string what =
                  std::string(getKernelIsaName(isa)) +
                  " weight_decay=" + std::to_string(weightDecay) +
                  " momentum=" + std::to_string(momentum) +
                  " dampening=" + std::to_string(dampening) +
                  " nesterov=" + std::to_string(nesterov) +
                  " n=" + std::to_string(n);
              expectSameBits(param, vParam, what + " param");
              expectSameBits(buf, vBuf, what + " buf");
              if (::testing::Test::HasFailure())
                return;
            }
}

TEST(HostOptimizerKernels, SgdF32VectorLoopsMatchTheScalarLoopBitwise) {
  checkSgdAgainstScalar<float>();
}

TEST(HostOptimizerKernels, SgdF64VectorLoopsMatchTheScalarLoopBitwise) {
  checkSgdAgainstScalar<double>();
}

TEST(HostOptimizerKernels, SetKernelIsaFallsBackToWhatTheCpuHas) {
  const KernelIsa supported = getSupportedKernelIsa();
  setKernelIsa(KernelIsa::Avx512);
  EXPECT_EQ(getKernelIsa(), supported);
  setKernelIsa(KernelIsa::Scalar);
  EXPECT_EQ(getKernelIsa(), KernelIsa::Scalar);
  setKernelIsa(supported);
  EXPECT_EQ(getKernelIsa(), supported);
}

} // namespace
