//===- HostLinalgTest.cpp - linalg ops of the host backend ----------------===//

#include "HostTestUtil.h"

#include "ops/ElementMath.h"
#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/host/Threads.h"

#include <cfloat>
#include <cmath>
#include <random>

using namespace zero::runtime;
using namespace zero::runtime::test;
using nlohmann::json;

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float &value : values)
    value = dist(rng);
  return values;
}

json instr(const std::string &op, std::vector<int64_t> operands,
           std::vector<int64_t> results) {
  return {{"op", op}, {"operands", operands}, {"results", results}};
}

/// A body {"arguments", "ops", "yield"}.
json body(std::vector<int64_t> arguments, json ops,
          std::vector<int64_t> yield) {
  return {{"arguments", arguments}, {"ops", ops}, {"yield", yield}};
}

json bodyOp(const std::string &op, std::vector<int64_t> operands,
            int64_t result) {
  return {{"op", op}, {"operands", operands}, {"results", {result}}};
}

} // namespace

TEST(HostMatmul, AccumulatesIntoTheDestinationLikeNaiveLoops) {
  TestProgram p;
  const int64_t m = 7, k = 13, n = 5;
  int64_t a = p.tensor(DType::F32, {m, k});
  int64_t b = p.tensor(DType::F32, {k, n});
  int64_t c = p.tensor(DType::F32, {m, n});
  int64_t r = p.tensor(DType::F32, {m, n}); // its own memory: starts as C
  std::vector<float> av = randomFloats(m * k, 1), bv = randomFloats(k * n, 2),
                     cv = randomFloats(m * n, 3);
  p.set(a, av);
  p.set(b, bv);
  p.set(c, cv);
  p.run(instr("linalg.matmul", {a, b, c}, {r}));
  std::vector<float> result = p.get<float>(r);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double expected = cv[i * n + j];
      for (int64_t q = 0; q < k; ++q)
        expected += double(av[i * k + q]) * bv[q * n + j];
      EXPECT_NEAR(result[i * n + j], expected, 1e-5) << i << "," << j;
    }
  EXPECT_EQ(p.get<float>(c), cv); // the destination operand is not touched
}

TEST(HostMatmul, InPlaceAndBatched) {
  TestProgram p;
  int64_t a = p.tensor(DType::F32, {2, 2, 3});
  int64_t b = p.tensor(DType::F32, {2, 3, 2});
  int64_t c = p.tensor(DType::F32, {2, 2, 2});
  int64_t r = p.tensor(DType::F32, {2, 2, 2}, "", c);
  p.set<float>(a, {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0});
  p.set<float>(b, {1, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 7});
  p.set<float>(c, {1, 1, 1, 1, 0, 0, 0, 0});
  p.run(instr("linalg.batch_matmul", {a, b, c}, {r}));
  // Batch 0: [[4,5],[10,11]] + 1; batch 1: [[2,3],[4,5]].
  EXPECT_EQ(p.get<float>(r), (std::vector<float>{5, 6, 11, 12, 2, 3, 4, 5}));
}

TEST(HostMatmul, BF16RoundsAfterEveryMultiplyAndAdd) {
  TestProgram p;
  int64_t a = p.tensor(DType::BF16, {1, 3});
  int64_t b = p.tensor(DType::BF16, {3, 1});
  int64_t c = p.tensor(DType::BF16, {1, 1});
  int64_t r = p.tensor(DType::BF16, {1, 1});
  // 256 + 1 rounds back to 256 in bf16 (8 bits), so the order and the
  // per-op rounding show: ((0 + 256) + 1) + 1 = 256.
  p.set<uint16_t>(a, {roundToBF16(256), roundToBF16(1), roundToBF16(1)});
  p.set<uint16_t>(b, {roundToBF16(1), roundToBF16(1), roundToBF16(1)});
  p.set<uint16_t>(c, {roundToBF16(0)});
  p.run(instr("linalg.matmul", {a, b, c}, {r}));
  EXPECT_EQ(p.get<uint16_t>(r)[0], roundToBF16(256));
}

TEST(HostMatmul, SixteenBitOperandsAccumulateInF32) {
  // bf16 x f16 operands with an f32 init (16-bit compute): the operands are
  // widened exactly, so the product is the f32 product of their values, bit
  // for bit; and within f32 reassociation of the ordered element loop.
  const int64_t m = 6, k = 40, n = 7;
  std::vector<float> av = randomFloats(m * k, 4), bv = randomFloats(k * n, 5),
                     cv = randomFloats(m * n, 6);
  std::vector<uint16_t> a16(m * k), b16(k * n);
  std::vector<float> aWide(m * k), bWide(k * n);
  for (int64_t i = 0; i < m * k; ++i) {
    a16[i] = roundToBF16(av[i]);
    aWide[i] = bf16ToFloat(a16[i]);
  }
  for (int64_t i = 0; i < k * n; ++i) {
    b16[i] = roundToF16(bv[i]);
    bWide[i] = f16ToFloat(b16[i]);
  }
  auto product = [&](bool sixteen) {
    TestProgram p;
    int64_t a = p.tensor(sixteen ? DType::BF16 : DType::F32, {m, k});
    int64_t b = p.tensor(sixteen ? DType::F16 : DType::F32, {k, n});
    int64_t c = p.tensor(DType::F32, {m, n});
    int64_t r = p.tensor(DType::F32, {m, n});
    if (sixteen) {
      p.set(a, a16);
      p.set(b, b16);
    } else {
      p.set(a, aWide);
      p.set(b, bWide);
    }
    p.set(c, cv);
    p.run(instr("linalg.matmul", {a, b, c}, {r}));
    return p.get<float>(r);
  };
  const std::vector<float> sixteen = product(true);
  EXPECT_EQ(sixteen, product(false));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double expected = cv[i * n + j];
      for (int64_t q = 0; q < k; ++q)
        expected += double(aWide[i * k + q]) * bWide[q * n + j];
      EXPECT_NEAR(sixteen[i * n + j], expected, 1e-5) << i << "," << j;
    }
}

TEST(HostMatmul, TransposedOperandsAreReadInPlace) {
  // A stored [k, m] and B stored [n, k] (indexing maps with their loops
  // swapped: a transpose folded into the GEMM) give the bits of the GEMM
  // of their transposes, on every path: OpenBLAS in f32 and f64, 16-bit
  // operands widened into f32, the element loop for bf16 and integers;
  // plain and batched.
  const int64_t batch = 3, m = 5, k = 9, n = 4;
  struct Types {
    DType a, c;
  };
  for (Types t : {Types{DType::F32, DType::F32}, Types{DType::F64, DType::F64},
                  Types{DType::BF16, DType::F32}, Types{DType::BF16, DType::BF16},
                  Types{DType::I32, DType::I32}})
    for (bool batched : {false, true})
      for (int transposes = 0; transposes < 4; ++transposes) {
        const bool ta = transposes & 1, tb = transposes & 2;
        const int64_t nb = batched ? batch : 1;
        auto shape = [&](int64_t rows, int64_t cols) {
          return batched ? std::vector<int64_t>{batch, rows, cols}
                         : std::vector<int64_t>{rows, cols};
        };
        // Small integers: exact in every type.
        auto values = [](int64_t count, int seed) {
          std::vector<double> v(count);
          for (int64_t i = 0; i < count; ++i)
            v[i] = static_cast<double>((i * 7 + seed * 3) % 11) - 5;
          return v;
        };
        const std::vector<double> av = values(nb * m * k, 1),
                                  bv = values(nb * k * n, 2),
                                  cv = values(nb * m * n, 3);
        // A's [k, m] storage: element (b, i, q) at b * m * k + q * m + i.
        std::vector<double> aT(av.size()), bT(bv.size());
        for (int64_t b = 0; b < nb; ++b) {
          for (int64_t i = 0; i < m; ++i)
            for (int64_t q = 0; q < k; ++q)
              aT[b * m * k + q * m + i] = av[b * m * k + i * k + q];
          for (int64_t q = 0; q < k; ++q)
            for (int64_t j = 0; j < n; ++j)
              bT[b * k * n + j * k + q] = bv[b * k * n + q * n + j];
        }
        auto run = [&](bool readTa, bool readTb) {
          TestProgram p;
          const int64_t a = p.tensor(t.a, readTa ? shape(k, m) : shape(m, k));
          const int64_t b = p.tensor(t.a, readTb ? shape(n, k) : shape(k, n));
          const int64_t c = p.tensor(t.c, shape(m, n));
          const int64_t r = p.tensor(t.c, shape(m, n));
          p.setValues(a, readTa ? aT : av);
          p.setValues(b, readTb ? bT : bv);
          p.setValues(c, cv);
          json op = instr(batched ? "linalg.batch_matmul" : "linalg.matmul",
                          {a, b, c}, {r});
          if (readTa || readTb) {
            const int64_t o = batched ? 1 : 0;
            auto map = [&](int64_t row, int64_t col) {
              return batched ? json{0, row, col} : json{row, col};
            };
            op["indexing_maps"] = {readTa ? map(o + 2, o) : map(o, o + 2),
                                   readTb ? map(o + 1, o + 2)
                                          : map(o + 2, o + 1),
                                   map(o, o + 1)};
          }
          p.run(op);
          return p.getValues(r);
        };
        EXPECT_EQ(run(ta, tb), run(false, false))
            << getDTypeName(t.a) << " into " << getDTypeName(t.c)
            << (batched ? " batched" : "") << " transposes " << transposes;
      }
}

TEST(HostMatmul, Tf32OperandsAreRoundedBeforeTheProduct) {
  // round_operands "tf32": the f32 operands rounded to 10 mantissa bits
  // (to nearest, ties to even), then the f32 product: the bits of the plain
  // f32 GEMM of the rounded operands, on OpenBLAS and on the element loop
  // alike, and not those of the unrounded GEMM.
  const int64_t m = 6, k = 40, n = 7;
  std::vector<float> av = randomFloats(m * k, 7), bv = randomFloats(k * n, 8),
                     cv = randomFloats(m * n, 9);
  std::vector<float> aRounded(av.size()), bRounded(bv.size());
  for (size_t i = 0; i < av.size(); ++i)
    aRounded[i] = ops::roundF32ToTF32(av[i]);
  for (size_t i = 0; i < bv.size(); ++i)
    bRounded[i] = ops::roundF32ToTF32(bv[i]);
  auto product = [&](const std::vector<float> &a32,
                     const std::vector<float> &b32, bool tf32) {
    TestProgram p;
    int64_t a = p.tensor(DType::F32, {m, k});
    int64_t b = p.tensor(DType::F32, {k, n});
    int64_t c = p.tensor(DType::F32, {m, n});
    int64_t r = p.tensor(DType::F32, {m, n});
    p.set(a, a32);
    p.set(b, b32);
    p.set(c, cv);
    json op = instr("linalg.matmul", {a, b, c}, {r});
    if (tf32)
      op["round_operands"] = "tf32";
    p.run(op);
    return p.get<float>(r);
  };
  const std::vector<float> tf32 = product(av, bv, true);
  EXPECT_EQ(tf32, product(aRounded, bRounded, false));
  EXPECT_NE(tf32, product(av, bv, false));
}

TEST(HostMatmul, Tf32RoundsToNearestEven) {
  // 1 + 2^-10 is a tf32; 1 + 2^-11 is the tie between it and 1 (to 1, even)
  // and 1 + 3 * 2^-11 the tie between 1 + 2^-10 and 1 + 2^-9 (up, even);
  // anything above a tie rounds up; infinities and NaNs stay.
  EXPECT_EQ(ops::roundF32ToTF32(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);
  EXPECT_EQ(ops::roundF32ToTF32(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(ops::roundF32ToTF32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_EQ(ops::roundF32ToTF32(1.0f + 0x1p-11f + 0x1p-23f),
            1.0f + 0x1p-10f);
  EXPECT_EQ(ops::roundF32ToTF32(-(1.0f + 0x1p-11f + 0x1p-23f)),
            -(1.0f + 0x1p-10f));
  EXPECT_EQ(ops::roundF32ToTF32(-(1.0f + 0x1p-11f)), -1.0f);
  EXPECT_EQ(ops::roundF32ToTF32(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(ops::roundF32ToTF32(NAN)));
  // The largest f32 is above the largest tf32's half-way point: infinity.
  EXPECT_EQ(ops::roundF32ToTF32(FLT_MAX), INFINITY);
  EXPECT_EQ(ops::roundF32ToTF32(-FLT_MAX), -INFINITY);
  // Denormals keep f32's exponent: multiples of 2^-136 stay, the smallest
  // f32 denormal rounds to zero.
  EXPECT_EQ(ops::roundF32ToTF32(0x1p-136f), 0x1p-136f);
  EXPECT_EQ(ops::roundF32ToTF32(0x1p-149f), 0.0f);
}

TEST(HostMatmul, Integers) {
  TestProgram p;
  int64_t a = p.tensor(DType::I32, {1, 2});
  int64_t b = p.tensor(DType::I32, {2, 1});
  int64_t c = p.tensor(DType::I32, {1, 1});
  int64_t r = p.tensor(DType::I32, {1, 1}, "", c);
  p.set<int32_t>(a, {65536, 3});
  p.set<int32_t>(b, {65536, 4});
  p.set<int32_t>(c, {1});
  p.run(instr("linalg.matmul", {a, b, c}, {r}));
  EXPECT_EQ(p.get<int32_t>(r)[0], 13); // 2^32 wraps to 0
}

TEST(HostLinalg, TransposeBroadcastFillCopy) {
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {2, 3});
  int64_t t = p.tensor(DType::F32, {3, 2});
  int64_t tr = p.tensor(DType::F32, {3, 2});
  int64_t v = p.tensor(DType::F32, {3});
  int64_t bd = p.tensor(DType::F32, {2, 3, 4});
  int64_t br = p.tensor(DType::F32, {2, 3, 4});
  int64_t s = p.scalar(DType::F64);
  int64_t fd = p.tensor(DType::BF16, {5});
  int64_t fr = p.tensor(DType::BF16, {5});
  int64_t cd = p.tensor(DType::F16, {2, 3});
  int64_t cr = p.tensor(DType::F16, {2, 3}, "", cd);
  p.set<float>(x, {0, 1, 2, 3, 4, 5});
  p.set<float>(v, {7, 8, 9});
  p.setF(s, 1.00390625 + 1e-9); // casts to bf16 1.0078125 (rounded once)
  json transpose = instr("linalg.transpose", {x, t}, {tr});
  transpose["permutation"] = {1, 0};
  p.run(transpose);
  EXPECT_EQ(p.get<float>(tr), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  json broadcast = instr("linalg.broadcast", {v, bd}, {br});
  broadcast["dimensions"] = {0, 2};
  p.run(broadcast);
  std::vector<float> bv = p.get<float>(br);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(bv[(i * 3 + j) * 4 + k], 7 + j);
  p.run(instr("linalg.fill", {s, fd}, {fr}));
  for (uint16_t bits : p.get<uint16_t>(fr))
    EXPECT_EQ(bits, 0x3F81);
  p.run(instr("linalg.copy", {x, cd}, {cr}));
  std::vector<uint16_t> halves = p.get<uint16_t>(cr);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(f16ToDouble(halves[i]), i);
}

TEST(HostMap, OneOpFastPathsMatchTheInterpreter) {
  // The same computation through the f32 fast path (one op) and through the
  // interpreter (the op then a multiply by 1) gives the same bits.
  TestProgram p;
  const int64_t n = 100000; // several blocks, several threads
  int64_t x = p.tensor(DType::F32, {n});
  int64_t y = p.tensor(DType::F32, {n});
  int64_t d = p.tensor(DType::F32, {n});
  int64_t fast = p.tensor(DType::F32, {n});
  int64_t slow = p.tensor(DType::F32, {n});
  int64_t a0 = p.scalar(DType::F32), a1 = p.scalar(DType::F32),
          a2 = p.scalar(DType::F32), t = p.scalar(DType::F32),
          one = p.scalar(DType::F32), u = p.scalar(DType::F32);
  int64_t b0 = p.scalar(DType::F32), b1 = p.scalar(DType::F32),
          b2 = p.scalar(DType::F32), t2 = p.scalar(DType::F32);
  std::vector<float> xv = randomFloats(n, 4), yv = randomFloats(n, 5);
  xv[3] = NAN;
  yv[4] = -0.0f;
  xv[4] = 0.0f;
  p.set(x, xv);
  p.set(y, yv);
  for (const char *name : {"arith.addf", "arith.subf", "arith.mulf",
                           "arith.divf", "arith.maximumf", "arith.minimumf"}) {
    json map = instr("linalg.map", {x, y, d}, {fast});
    map["body"] = body({b0, b1, b2}, {bodyOp(name, {b0, b1}, t2)}, {t2});
    p.run(map);
    json general = instr("linalg.map", {x, y, d}, {slow});
    json oneOp = bodyOp("arith.constant", {}, one);
    oneOp["value"] = 1.0;
    general["body"] = body(
        {a0, a1, a2},
        {bodyOp(name, {a0, a1}, t), oneOp, bodyOp("arith.mulf", {t, one}, u)},
        {u});
    p.run(general);
    std::vector<float> fv = p.get<float>(fast), sv = p.get<float>(slow);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(std::memcmp(&fv[i], &sv[i], 4), 0) << name << " at " << i;
    if (std::string(name) == "arith.maximumf") {
      EXPECT_TRUE(std::isnan(fv[3]));    // NaN propagates
      EXPECT_FALSE(std::signbit(fv[4])); // max(+0, -0) = +0
    }
    if (std::string(name) == "arith.minimumf")
      EXPECT_TRUE(std::signbit(fv[4]));
  }
}

TEST(HostMap, TruncAndExtConvert) {
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {4});
  int64_t hd = p.tensor(DType::BF16, {4});
  int64_t h = p.tensor(DType::BF16, {4});
  int64_t fd = p.tensor(DType::F32, {4});
  int64_t f = p.tensor(DType::F32, {4});
  int64_t a = p.scalar(DType::F32), b = p.scalar(DType::BF16),
          c = p.scalar(DType::BF16), e = p.scalar(DType::F32),
          g = p.scalar(DType::F32);
  p.set<float>(x, {1.0f, 1.00390625f, 1.01171875f, 3e38f});
  json trunc = instr("linalg.map", {x, hd}, {h});
  trunc["body"] = body({a, b}, {bodyOp("arith.truncf", {a}, c)}, {c});
  p.run(trunc);
  EXPECT_EQ(p.get<uint16_t>(h),
            (std::vector<uint16_t>{0x3F80, 0x3F80, 0x3F82, 0x7F62}));
  json ext = instr("linalg.map", {h, fd}, {f});
  ext["body"] = body({b, e}, {bodyOp("arith.extf", {b}, g)}, {g});
  p.run(ext);
  EXPECT_EQ(p.get<float>(f)[2], 1.015625f);
}

TEST(HostMap, BodyReadsTheDestination) {
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {3});
  int64_t d = p.tensor(DType::F32, {3});
  int64_t r = p.tensor(DType::F32, {3}); // apart: starts as a copy of d
  int64_t a = p.scalar(DType::F32), o = p.scalar(DType::F32),
          s = p.scalar(DType::F32);
  p.set<float>(x, {1, 2, 3});
  p.set<float>(d, {10, 20, 30});
  json map = instr("linalg.map", {x, d}, {r});
  map["body"] = body({a, o}, {bodyOp("arith.subf", {o, a}, s)}, {s});
  p.run(map);
  EXPECT_EQ(p.get<float>(r), (std::vector<float>{9, 18, 27}));
}

TEST(HostReduce, CombinesInIncreasingIndexOrderFromTheDestination) {
  // 1e8 + 1 is 1e8 in f32: only the order destination, in(0), in(1), ...
  // gives these results.
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {2, 4});
  int64_t rowInit = p.tensor(DType::F32, {2});
  int64_t rows = p.tensor(DType::F32, {2});
  int64_t y = p.tensor(DType::F32, {3, 2});
  int64_t colInit = p.tensor(DType::F32, {2});
  int64_t cols = p.tensor(DType::F32, {2});
  int64_t in = p.scalar(DType::F32), acc = p.scalar(DType::F32),
          sum = p.scalar(DType::F32);
  p.set<float>(x, {1e8f, 1, -1e8f, 1, 1, 1e8f, 1, -1e8f});
  p.set<float>(rowInit, {0, 0});
  json reduce = instr("linalg.reduce", {x, rowInit}, {rows});
  reduce["dimensions"] = {1};
  reduce["body"] =
      body({in, acc}, {bodyOp("arith.addf", {in, acc}, sum)}, {sum});
  p.run(reduce);
  // Row 0: ((1e8 + 1) - 1e8) + 1 = 1; row 1: ((1 + 1e8) + 1) - 1e8 = 0.
  EXPECT_EQ(p.get<float>(rows), (std::vector<float>{1, 0}));
  // Over the outer dimension, from the destination 1: column 0:
  // ((1 + 1e8) - 1e8) + 1 = 1; column 1: ((1 + 1) + 1e8) - 1e8 = 0.
  p.set<float>(y, {1e8f, 1, -1e8f, 1e8f, 1, -1e8f});
  p.set<float>(colInit, {1, 1});
  reduce = instr("linalg.reduce", {y, colInit}, {cols});
  reduce["dimensions"] = {0};
  reduce["body"] =
      body({in, acc}, {bodyOp("arith.addf", {in, acc}, sum)}, {sum});
  p.run(reduce);
  EXPECT_EQ(p.get<float>(cols), (std::vector<float>{1, 0}));
}

TEST(HostReduce, GeneralBodiesAndTheFastPathAgree) {
  // Sum of squares over a middle dimension: the interpreter (two ops) and
  // the fast path (a map, then addf) must give the same bits.
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {8, 300, 5});
  int64_t sq = p.tensor(DType::F32, {8, 300, 5});
  int64_t init = p.tensor(DType::F32, {8, 5});
  int64_t viaMap = p.tensor(DType::F32, {8, 5});
  int64_t direct = p.tensor(DType::F32, {8, 5});
  int64_t a = p.scalar(DType::F32), b = p.scalar(DType::F32),
          c = p.scalar(DType::F32), i = p.scalar(DType::F32),
          o = p.scalar(DType::F32), s = p.scalar(DType::F32),
          q = p.scalar(DType::F32), t = p.scalar(DType::F32);
  p.set(x, randomFloats(8 * 300 * 5, 9));
  p.set(init, std::vector<float>(40, 0.5f));
  json map = instr("linalg.map", {x, sq}, {sq});
  map["body"] = body({a, b}, {bodyOp("arith.mulf", {a, a}, c)}, {c});
  p.run(map);
  json fast = instr("linalg.reduce", {sq, init}, {viaMap});
  fast["dimensions"] = {1};
  fast["body"] = body({i, o}, {bodyOp("arith.addf", {i, o}, s)}, {s});
  p.run(fast);
  json general = instr("linalg.reduce", {x, init}, {direct});
  general["dimensions"] = {1};
  general["body"] = body(
      {i, o},
      {bodyOp("arith.mulf", {i, i}, q), bodyOp("arith.addf", {q, o}, t)}, {t});
  p.run(general);
  EXPECT_EQ(p.get<float>(viaMap), p.get<float>(direct));
  EXPECT_EQ(p.get<float>(init), std::vector<float>(40, 0.5f));
}

TEST(HostReduce, MaximumPropagatesNaNAndTwoOutputs) {
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {2, 3});
  int64_t y = p.tensor(DType::I64, {2, 3});
  int64_t mi = p.tensor(DType::F32, {2});
  int64_t si = p.tensor(DType::I64, {2});
  int64_t mr = p.tensor(DType::F32, {2}, "", mi);
  int64_t sr = p.tensor(DType::I64, {2}, "", si);
  int64_t a = p.scalar(DType::F32), b = p.scalar(DType::I64),
          c = p.scalar(DType::F32), d = p.scalar(DType::I64),
          m = p.scalar(DType::F32), s = p.scalar(DType::I64);
  p.set<float>(x, {1, NAN, 3, -1, -5, -2});
  p.set<int64_t>(y, {1, 2, 3, 4, 5, 6});
  p.set<float>(mi, {-INFINITY, -INFINITY});
  p.set<int64_t>(si, {100, 0});
  json reduce = instr("linalg.reduce", {x, y, mi, si}, {mr, sr});
  reduce["dimensions"] = {1};
  reduce["body"] = body(
      {a, b, c, d},
      {bodyOp("arith.maximumf", {a, c}, m), bodyOp("arith.addi", {b, d}, s)},
      {m, s});
  p.run(reduce);
  std::vector<float> maxima = p.get<float>(mr);
  EXPECT_TRUE(std::isnan(maxima[0]));
  EXPECT_EQ(maxima[1], -1);
  EXPECT_EQ(p.get<int64_t>(sr), (std::vector<int64_t>{106, 15}));
}

namespace {
/// The gather of zero-model's embedding: out[i, j] = table[tokens[i], j].
json embeddingGather(TestProgram &p, int64_t tokens, int64_t table,
                     int64_t dest, int64_t result) {
  int64_t in = p.scalar(DType::I32), out = p.scalar(DType::F32),
          row = p.scalar(DType::Index), col = p.scalar(DType::Index),
          element = p.scalar(DType::F32);
  json indexOp = bodyOp("linalg.index", {}, col);
  indexOp["dim"] = 1;
  json generic = instr("linalg.generic", {tokens, dest}, {result});
  generic["indexing_maps"] = {{0}, {0, 1}};
  generic["iterator_types"] = {"parallel", "parallel"};
  generic["body"] = body({in, out},
                         {bodyOp("arith.index_cast", {in}, row), indexOp,
                          bodyOp("tensor.extract", {table, row, col}, element)},
                         {element});
  return generic;
}
} // namespace

TEST(HostGeneric, EmbeddingGather) {
  TestProgram p;
  int64_t tokens = p.tensor(DType::I32, {5});
  int64_t table = p.tensor(DType::F32, {4, 3});
  int64_t dest = p.tensor(DType::F32, {5, 3});
  int64_t result = p.tensor(DType::F32, {5, 3}, "", dest);
  json generic = embeddingGather(p, tokens, table, dest, result);
  p.set<int32_t>(tokens, {3, 0, 3, 1, 2});
  std::vector<float> tv(12);
  for (int i = 0; i < 12; ++i)
    tv[i] = static_cast<float>(i);
  p.set(table, tv);
  p.run(generic);
  EXPECT_EQ(p.get<float>(result), (std::vector<float>{9, 10, 11, 0, 1, 2, 9, 10,
                                                      11, 3, 4, 5, 6, 7, 8}));

  // A token outside the table is an error of the run, naming the op.
  p.set<int32_t>(tokens, {3, 0, 4, 1, 2});
  StatusOr<std::unique_ptr<host::ComputeOp>> op = p.prepare(generic);
  ASSERT_TRUE(op.isOk());
  Status status = (*op)->run(p);
  EXPECT_EQ(
      status.message(),
      "instructions.compute[0].body.ops[2]: tensor.extract index 4 is out "
      "of range for dimension 0 (size 4) of value 1 (%1) at m.mlir:1:1");
}

TEST(HostGeneric, OneHotAndCausalMask) {
  TestProgram p;
  int64_t tokens = p.tensor(DType::I32, {3});
  int64_t dest = p.tensor(DType::F32, {4, 3});
  int64_t result = p.tensor(DType::F32, {4, 3});
  int64_t maskDest = p.tensor(DType::F32, {3, 3});
  int64_t mask = p.tensor(DType::F32, {3, 3}, "", maskDest);
  // zero-model's one-hot for the embedding gradient: (vocab, tokens) with
  // the token map (d0, d1) -> (d1).
  int64_t in = p.scalar(DType::I32), out = p.scalar(DType::F32),
          tok = p.scalar(DType::Index), v = p.scalar(DType::Index),
          eq = p.scalar(DType::I1), zero = p.scalar(DType::F32),
          one = p.scalar(DType::F32), sel = p.scalar(DType::F32);
  json vIndex = bodyOp("linalg.index", {}, v);
  vIndex["dim"] = 0;
  json cmp = bodyOp("arith.cmpi", {v, tok}, eq);
  cmp["predicate"] = "eq";
  json c0 = bodyOp("arith.constant", {}, zero);
  c0["value"] = 0.0;
  json c1 = bodyOp("arith.constant", {}, one);
  c1["value"] = 1.0;
  json generic = instr("linalg.generic", {tokens, dest}, {result});
  generic["indexing_maps"] = {{1}, {0, 1}};
  generic["iterator_types"] = {"parallel", "parallel"};
  generic["body"] = body({in, out},
                         {bodyOp("arith.index_cast", {in}, tok), vIndex, cmp,
                          c0, c1, bodyOp("arith.select", {eq, one, zero}, sel)},
                         {sel});
  p.set<int32_t>(tokens, {2, 0, 2});
  p.run(generic);
  EXPECT_EQ(p.get<float>(result),
            (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0}));

  // The causal mask: -inf above the diagonal (a constant JSON cannot write
  // as a number).
  int64_t o2 = p.scalar(DType::F32), i0 = p.scalar(DType::Index),
          i1 = p.scalar(DType::Index), gt = p.scalar(DType::I1),
          z = p.scalar(DType::F32), ninf = p.scalar(DType::F32),
          m = p.scalar(DType::F32);
  json d0 = bodyOp("linalg.index", {}, i0);
  d0["dim"] = 0;
  json d1 = bodyOp("linalg.index", {}, i1);
  d1["dim"] = 1;
  json sgt = bodyOp("arith.cmpi", {i1, i0}, gt);
  sgt["predicate"] = "sgt";
  json cz = bodyOp("arith.constant", {}, z);
  cz["value"] = 0.0;
  json cn = bodyOp("arith.constant", {}, ninf);
  cn["value"] = "-inf";
  json causal = instr("linalg.generic", {maskDest}, {mask});
  causal["indexing_maps"] = {{0, 1}};
  causal["iterator_types"] = {"parallel", "parallel"};
  causal["body"] = body(
      {o2}, {d0, d1, sgt, cz, cn, bodyOp("arith.select", {gt, ninf, z}, m)},
      {m});
  p.run(causal);
  std::vector<float> mv = p.get<float>(mask);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(mv[i * 3 + j], j > i ? -INFINITY : 0.0f);
}

TEST(HostGeneric, ReductionIteratorsAndPermutedMaps) {
  // out[j] = init[j] + sum_i x[i, j] * w[j, i] with the reduction loop
  // first: (d0 reduction, d1 parallel).
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {3, 2});
  int64_t w = p.tensor(DType::F32, {2, 3});
  int64_t init = p.tensor(DType::F32, {2});
  int64_t out = p.tensor(DType::F32, {2});
  int64_t a = p.scalar(DType::F32), b = p.scalar(DType::F32),
          c = p.scalar(DType::F32), m = p.scalar(DType::F32),
          s = p.scalar(DType::F32);
  p.set<float>(x, {1, 2, 3, 4, 5, 6});
  p.set<float>(w, {1, 10, 100, 2, 20, 200});
  p.set<float>(init, {0.5, 0.25});
  json generic = instr("linalg.generic", {x, w, init}, {out});
  generic["indexing_maps"] = {{0, 1}, {1, 0}, {1}};
  generic["iterator_types"] = {"reduction", "parallel"};
  generic["body"] = body(
      {a, b, c},
      {bodyOp("arith.mulf", {a, b}, m), bodyOp("arith.addf", {c, m}, s)}, {s});
  p.run(generic);
  EXPECT_EQ(p.get<float>(out),
            (std::vector<float>{0.5f + 1 + 30 + 500, 0.25f + 4 + 80 + 1200}));
}

TEST(HostGeneric, OutputsThatDropALoopRunSequentially) {
  // The output indexes only d0 but both loops are "parallel": every point
  // writes, the last in loop order wins (as MLIR's loops do).
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {2, 3});
  int64_t init = p.tensor(DType::F32, {2});
  int64_t out = p.tensor(DType::F32, {2});
  int64_t a = p.scalar(DType::F32), c = p.scalar(DType::F32),
          s = p.scalar(DType::F32);
  p.set<float>(x, {1, 2, 3, 4, 5, 6});
  p.set<float>(init, {0, 0});
  json generic = instr("linalg.generic", {x, init}, {out});
  generic["indexing_maps"] = {{0, 1}, {0}};
  generic["iterator_types"] = {"parallel", "parallel"};
  generic["body"] = body({a, c}, {bodyOp("arith.addf", {a, c}, s)}, {s});
  p.run(generic);
  EXPECT_EQ(p.get<float>(out), (std::vector<float>{6, 15}));
}

TEST(HostMap, BodiesReadScalarsFromOutside) {
  // fp16 unscaling as zero-opt writes it: %in * %extracted, truncf to f16;
  // then the overflow check |x| uge inf.
  TestProgram p;
  int64_t x = p.tensor(DType::F32, {4});
  int64_t hd = p.tensor(DType::F16, {4});
  int64_t h = p.tensor(DType::F16, {4});
  int64_t fd = p.tensor(DType::F32, {4});
  int64_t flags = p.tensor(DType::F32, {4});
  int64_t scale = p.scalar(DType::F32, "%extracted");
  int64_t a = p.scalar(DType::F32), o = p.scalar(DType::F16),
          m = p.scalar(DType::F32), t = p.scalar(DType::F16),
          in = p.scalar(DType::F16), init = p.scalar(DType::F32),
          abs = p.scalar(DType::F16), inf = p.scalar(DType::F16),
          over = p.scalar(DType::I1), one = p.scalar(DType::F32),
          zero = p.scalar(DType::F32), sel = p.scalar(DType::F32);
  p.set<float>(x, {1.0f, 2.0f, 40000.0f, -3.0f});
  p.setF(scale, 2.0);
  json unscale = instr("linalg.map", {x, hd}, {h});
  unscale["body"] = body(
      {a, o},
      {bodyOp("arith.mulf", {a, scale}, m), bodyOp("arith.truncf", {m}, t)},
      {t});
  p.run(unscale);
  EXPECT_EQ(p.get<uint16_t>(h),
            (std::vector<uint16_t>{0x4000, 0x4400, 0x7C00, 0xC600}));
  json cInf = bodyOp("arith.constant", {}, inf);
  cInf["value"] = "inf";
  json cmp = bodyOp("arith.cmpf", {abs, inf}, over);
  cmp["predicate"] = "uge";
  json c1 = bodyOp("arith.constant", {}, one);
  c1["value"] = 1.0;
  json c0 = bodyOp("arith.constant", {}, zero);
  c0["value"] = 0.0;
  json check = instr("linalg.map", {h, fd}, {flags});
  check["body"] = body({in, init},
                       {bodyOp("math.absf", {in}, abs), cInf, cmp, c1, c0,
                        bodyOp("arith.select", {over, one, zero}, sel)},
                       {sel});
  p.run(check);
  EXPECT_EQ(p.get<float>(flags), (std::vector<float>{0, 0, 1, 0}));
}

TEST(HostStructured, ResultsDoNotDependOnTheThreadCount) {
  TestProgram p;
  const int64_t rows = 300, cols = 700;
  int64_t x = p.tensor(DType::F32, {rows, cols});
  int64_t d = p.tensor(DType::F32, {rows, cols});
  int64_t mapped = p.tensor(DType::F32, {rows, cols});
  int64_t init = p.tensor(DType::F32, {cols});
  int64_t summed = p.tensor(DType::F32, {cols});
  int64_t a = p.scalar(DType::F32), b = p.scalar(DType::F32),
          e = p.scalar(DType::F32), t = p.scalar(DType::F32),
          i = p.scalar(DType::F32), o = p.scalar(DType::F32),
          s = p.scalar(DType::F32), q = p.scalar(DType::F32);
  p.set(x, randomFloats(rows * cols, 11));
  json map = instr("linalg.map", {x, d}, {mapped});
  map["body"] = body(
      {a, b}, {bodyOp("math.exp", {a}, e), bodyOp("math.tanh", {e}, t)}, {t});
  json reduce = instr("linalg.reduce", {x, init}, {summed});
  reduce["dimensions"] = {0};
  reduce["body"] = body(
      {i, o},
      {bodyOp("arith.mulf", {i, i}, q), bodyOp("arith.addf", {q, o}, s)}, {s});
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    setHostThreads(threads);
    p.set(init, std::vector<float>(cols, 0));
    p.run(map);
    p.run(reduce);
    std::vector<float> both = p.get<float>(mapped);
    std::vector<float> sums = p.get<float>(summed);
    both.insert(both.end(), sums.begin(), sums.end());
    results.push_back(both);
  }
  setHostThreads(1);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST(HostLinalg, TransposesOfEveryShapeMatchNaiveLoops) {
  struct Case {
    std::vector<int64_t> shape, perm;
  };
  const Case cases[] = {{{3, 37, 45}, {0, 2, 1}},
                        {{2, 5, 3, 7}, {0, 2, 1, 3}},
                        {{70, 33}, {1, 0}},
                        {{4, 1, 6}, {2, 1, 0}},
                        {{2, 3, 4, 5}, {3, 1, 0, 2}}};
  for (const Case &c : cases) {
    TestProgram p;
    std::vector<int64_t> outShape;
    for (int64_t d : c.perm)
      outShape.push_back(c.shape[d]);
    int64_t x = p.tensor(DType::BF16, c.shape);
    int64_t init = p.tensor(DType::BF16, outShape);
    int64_t out = p.tensor(DType::BF16, outShape, "", init);
    int64_t numel = p.values.values[x].numel;
    std::vector<uint16_t> in(numel);
    for (int64_t i = 0; i < numel; ++i)
      in[i] = static_cast<uint16_t>(i);
    p.set(x, in);
    json transpose = instr("linalg.transpose", {x, init}, {out});
    transpose["permutation"] = c.perm;
    p.run(transpose);
    std::vector<uint16_t> result = p.get<uint16_t>(out);
    // out[i] = in[j] where j's index along dim perm[k] is i's along k.
    const size_t rank = c.shape.size();
    std::vector<int64_t> inStrides(rank, 1);
    for (size_t d = rank - 1; d-- > 0;)
      inStrides[d] = inStrides[d + 1] * c.shape[d + 1];
    for (int64_t i = 0; i < numel; ++i) {
      int64_t rest = i, j = 0;
      for (size_t k = rank; k-- > 0;) {
        j += (rest % outShape[k]) * inStrides[c.perm[k]];
        rest /= outShape[k];
      }
      ASSERT_EQ(result[i], in[j]) << "element " << i;
    }
  }
}
