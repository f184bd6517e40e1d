//===- StructuredCases.h - linalg.map/reduce/generic test cases -*- C++ -*-===//
//
// The instructions the generated kernels are tested on: every body op and
// dtype, every loop mapping (parallel, in-thread, sequential, the vector
// path's lengths and its three ways of reading an input), reductions,
// tensor.extract, scalars from outside, aliasing and empty tensors, and
// the cooperative reductions (a warp or a block per point, Codegen.h). Each
// case is a value table and one instruction; CodegenTest compiles every
// case's kernel with NVRTC (no GPU needed), StructuredGpuTest runs it on
// the GPU and on the host backend and compares: bitwise, except float
// sums and products that a cooperative reduction reassociates, which are
// compared within the error bound of compareReassociated.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_CUDA_STRUCTUREDCASES_H
#define ZERO_RUNTIME_TEST_CUDA_STRUCTUREDCASES_H

#include "zero/runtime/FloatFormats.h"
#include "zero/runtime/Program.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace zero::runtime::test {

struct ValueSpec {
  bool isTensor = false;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Shares the buffer of this (earlier) value.
  int64_t aliasOf = -1;
  /// Integer data in [lo, hi) when hi > lo (for floats too: sums of such
  /// values are exact in every order while they stay below 2^mantissa);
  /// else random over the type.
  int64_t lo = 0, hi = 0;
  /// Floats uniform in [low, high) when high > low, rounded to the dtype,
  /// a `specials` fraction of them NaN, +inf, -inf, +0 or -0.
  double low = 0, high = 0, specials = 0;
  /// A scalar from outside the body: its register holds `constant`.
  bool external = false;
  double constant = 0;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t size : shape)
      n *= size;
    return n;
  }
};

/// The bytes of every value as the tests write them (makeCaseData with seed
/// id + 1), by value id; empty for scalars and aliases.
using CaseData = std::vector<std::vector<uint8_t>>;

/// A float result whose elements combine an initial value and `terms`
/// values in another order than the host's (a cooperative sum or product).
struct Reassociated {
  size_t checked = 0; // index in StructuredCase::checked
  int64_t terms = 0;
  /// Per element, from the data in double: S = |init| + sum |term| for a
  /// sum, |init * prod term| for a product; inf or NaN where a term is.
  std::function<std::vector<double>(const CaseData &)> magnitude;
};

/// Element k of float data of `type`, as a double.
inline double elementAt(DType type, const std::vector<uint8_t> &bytes,
                        int64_t k) {
  switch (type) {
  case DType::F32: {
    float f;
    std::memcpy(&f, bytes.data() + 4 * k, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, bytes.data() + 8 * k, 8);
    return d;
  }
  default: {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * k, 2);
    return type == DType::BF16 ? bf16ToFloat(h) : f16ToDouble(h);
  }
  }
}

struct StructuredCase {
  std::string name;
  std::vector<ValueSpec> values; // value id = index
  nlohmann::json inst;           // the compute instruction (no point/loc)
  std::vector<int64_t> checked;  // the values compared after the run
  /// Uses exp, log, tanh, ...: CUDA's and glibc's double functions are not
  /// correctly rounded, so results may differ by a few ulps in f64 and by
  /// one ulp in the narrower types (computed in double, then rounded).
  bool transcendental = false;
  /// The run fails with an error containing this text.
  std::string runError;
  /// Results compared within compareReassociated's bound, not bitwise.
  std::vector<Reassociated> reassociated;
};

/// Builds one case: values, then a body, then the instruction.
class CaseBuilder {
public:
  explicit CaseBuilder(std::string name) { case_.name = std::move(name); }

  int64_t tensor(DType type, std::vector<int64_t> shape, int64_t aliasOf = -1) {
    ValueSpec value;
    value.isTensor = true;
    value.dtype = type;
    value.shape = std::move(shape);
    value.aliasOf = aliasOf;
    return add(value);
  }
  int64_t intTensor(DType type, std::vector<int64_t> shape, int64_t lo,
                    int64_t hi) {
    const int64_t id = tensor(type, std::move(shape));
    case_.values[id].lo = lo;
    case_.values[id].hi = hi;
    return id;
  }
  int64_t uniformTensor(DType type, std::vector<int64_t> shape, double low,
                        double high, double specials = 0) {
    const int64_t id = tensor(type, std::move(shape));
    case_.values[id].low = low;
    case_.values[id].high = high;
    case_.values[id].specials = specials;
    return id;
  }
  /// A tensor like `like` for a result (compared after the run).
  int64_t result(int64_t like, int64_t aliasOf = -1) {
    const int64_t id =
        tensor(case_.values[like].dtype, case_.values[like].shape, aliasOf);
    case_.checked.push_back(id);
    return id;
  }
  /// A scalar of the body (argument or op result).
  int64_t scalar(DType type) {
    ValueSpec value;
    value.dtype = type;
    return add(value);
  }
  int64_t external(DType type, double constant) {
    ValueSpec value;
    value.dtype = type;
    value.external = true;
    value.constant = constant;
    return add(value);
  }
  /// Appends a body op with one result of `type`; returns the result.
  int64_t op(const std::string &name, std::vector<int64_t> operands, DType type,
             nlohmann::json fields = nlohmann::json::object()) {
    const int64_t result = scalar(type);
    nlohmann::json op = fields;
    op["op"] = name;
    op["operands"] = operands;
    op["results"] = {result};
    ops_.push_back(op);
    return result;
  }
  int64_t constant(DType type, nlohmann::json value) {
    return op("arith.constant", {}, type, {{"value", value}});
  }
  int64_t index(int64_t dim) {
    return op("linalg.index", {}, DType::Index, {{"dim", dim}});
  }
  nlohmann::json body(const std::vector<int64_t> &arguments,
                      const std::vector<int64_t> &yields) {
    return {{"arguments", arguments}, {"ops", ops_}, {"yield", yields}};
  }
  DType dtypeOf(int64_t id) const { return case_.values[id].dtype; }

  StructuredCase finish(nlohmann::json inst) {
    case_.inst = std::move(inst);
    return case_;
  }
  StructuredCase &get() { return case_; }

private:
  int64_t add(const ValueSpec &value) {
    case_.values.push_back(value);
    return static_cast<int64_t>(case_.values.size()) - 1;
  }
  StructuredCase case_;
  nlohmann::json ops_ = nlohmann::json::array();
};

namespace detail {

inline nlohmann::json identityMap(size_t rank) {
  nlohmann::json map = nlohmann::json::array();
  for (size_t d = 0; d < rank; ++d)
    map.push_back(d);
  return map;
}

/// One generic over [n] with one output per body op: output k is the k-th
/// op of `makeOps` on the inputs' elements (every op tested on its own).
/// `makeOps(b, args)` appends ops and returns their results.
template <typename MakeOps>
StructuredCase opTable(const std::string &name, std::vector<DType> inputTypes,
                       int64_t n, MakeOps makeOps, bool transcendental = false,
                       std::vector<std::pair<int64_t, int64_t>> ranges = {}) {
  CaseBuilder b(name);
  std::vector<int64_t> inputs;
  for (size_t i = 0; i < inputTypes.size(); ++i) {
    if (i < ranges.size() && ranges[i].second > ranges[i].first)
      inputs.push_back(
          b.intTensor(inputTypes[i], {n}, ranges[i].first, ranges[i].second));
    else
      inputs.push_back(b.tensor(inputTypes[i], {n}));
  }
  std::vector<int64_t> args;
  for (DType type : inputTypes)
    args.push_back(b.scalar(type));
  const std::vector<int64_t> yields = makeOps(b, args);
  std::vector<int64_t> dests, results, outArgs;
  for (int64_t y : yields) {
    dests.push_back(b.tensor(b.dtypeOf(y), {n}));
    outArgs.push_back(b.scalar(b.dtypeOf(y)));
  }
  for (int64_t dest : dests)
    results.push_back(b.result(dest));
  std::vector<int64_t> all = args;
  all.insert(all.end(), outArgs.begin(), outArgs.end());
  std::vector<int64_t> operands = inputs;
  operands.insert(operands.end(), dests.begin(), dests.end());
  nlohmann::json maps = nlohmann::json::array();
  for (size_t i = 0; i < operands.size(); ++i)
    maps.push_back({0});
  nlohmann::json inst = {{"op", "linalg.generic"},
                         {"operands", operands},
                         {"results", results},
                         {"indexing_maps", maps},
                         {"iterator_types", {"parallel"}},
                         {"body", b.body(all, yields)}};
  StructuredCase result = b.finish(inst);
  result.transcendental = transcendental;
  return result;
}

/// Reassociated::magnitude of a reduction whose points are `rows` rows of
/// `cols` consecutive terms: |init[r]| plus (or times) each |term(data, k)|,
/// k the term's row-major index.
inline std::function<std::vector<double>(const CaseData &)>
rowMagnitude(DType initType, int64_t init, int64_t rows, int64_t cols,
             std::function<double(const CaseData &, int64_t)> term,
             bool product = false) {
  return [=](const CaseData &data) {
    std::vector<double> magnitude(rows);
    for (int64_t r = 0; r < rows; ++r) {
      double s = std::fabs(elementAt(initType, data[init], r));
      for (int64_t c = 0; c < cols; ++c) {
        const double t = std::fabs(term(data, r * cols + c));
        s = product ? s * t : s + t;
      }
      magnitude[r] = s;
    }
    return magnitude;
  };
}

/// rowMagnitude for a reduction over the rows of a [rows, cols] term: one
/// magnitude per column.
inline std::function<std::vector<double>(const CaseData &)>
columnMagnitude(DType initType, int64_t init, int64_t rows, int64_t cols,
                std::function<double(const CaseData &, int64_t)> term) {
  return [=](const CaseData &data) {
    std::vector<double> magnitude(cols);
    for (int64_t c = 0; c < cols; ++c) {
      double s = std::fabs(elementAt(initType, data[init], c));
      for (int64_t r = 0; r < rows; ++r)
        s += std::fabs(term(data, r * cols + c));
      magnitude[c] = s;
    }
    return magnitude;
  };
}

} // namespace detail

inline std::vector<StructuredCase> getStructuredCases() {
  using nlohmann::json;
  std::vector<StructuredCase> cases;
  const DType floatTypes[] = {DType::F32, DType::F64, DType::BF16, DType::F16};
  const char *cmpfPredicates[] = {"oeq", "ogt", "oge",  "olt",  "ole", "one",
                                  "ord", "ueq", "ugt",  "uge",  "ult", "ule",
                                  "une", "uno", "true", "false"};
  const char *cmpiPredicates[] = {"eq",  "ne",  "slt", "sle", "sgt",
                                  "sge", "ult", "ule", "ugt", "uge"};

  // Exactly rounded float ops, one output each, on every float type; each
  // op table also at a length that 8 divides, which the vector path takes
  // (Codegen.h, "Vectors").
  const char *vectorSuffix = " as vectors";
  for (const char *suffix : {"", vectorSuffix})
    for (DType t : floatTypes)
      cases.push_back(detail::opTable(
          std::string("float ops ") + getDTypeName(t) + suffix, {t, t},
          *suffix ? 296 : 301,
          [&](CaseBuilder &b, const std::vector<int64_t> &a) {
            std::vector<int64_t> r;
            for (const char *op :
                 {"arith.addf", "arith.subf", "arith.mulf", "arith.divf",
                  "arith.maximumf", "arith.minimumf", "arith.remf"})
              r.push_back(b.op(op, {a[0], a[1]}, t));
            for (const char *op : {"arith.negf", "math.absf", "math.floor",
                                   "math.ceil", "math.sqrt", "math.rsqrt"})
              r.push_back(b.op(op, {a[0]}, t));
            for (const char *p : cmpfPredicates)
              r.push_back(b.op("arith.cmpf", {a[0], a[1]}, DType::I1,
                               {{"predicate", p}}));
            const int64_t less = r[r.size() - 13]; // olt
            r.push_back(b.op("arith.select", {less, a[0], a[1]}, t));
            // A chain: every op rounds (x * y + x) / y - y.
            int64_t v = b.op("arith.mulf", {a[0], a[1]}, t);
            v = b.op("arith.addf", {v, a[0]}, t);
            v = b.op("arith.divf", {v, a[1]}, t);
            r.push_back(b.op("arith.subf", {v, a[1]}, t));
            return r;
          }));

  // Transcendental functions (last-ulp tolerance against glibc).
  for (const char *suffix : {"", vectorSuffix})
    for (DType t : floatTypes)
      cases.push_back(detail::opTable(
          std::string("math ") + getDTypeName(t) + suffix, {t, t},
          *suffix ? 216 : 211,
          [&](CaseBuilder &b, const std::vector<int64_t> &a) {
            std::vector<int64_t> r;
            for (const char *op : {"math.exp", "math.exp2", "math.log",
                                   "math.log2", "math.log1p", "math.tanh",
                                   "math.erf", "math.sin", "math.cos"})
              r.push_back(b.op(op, {a[0]}, t));
            r.push_back(b.op("math.powf", {a[0], a[1]}, t));
            return r;
          },
          /*transcendental=*/true));

  // Integer ops on every integer type.
  for (const char *suffix : {"", vectorSuffix})
    for (DType t : {DType::I32, DType::I64, DType::I1, DType::Index})
      cases.push_back(detail::opTable(
          std::string("integer ops ") + getDTypeName(t) + suffix, {t, t, t},
          *suffix ? 296 : 293,
          [&](CaseBuilder &b, const std::vector<int64_t> &a) {
            std::vector<int64_t> r;
            for (const char *op :
                 {"arith.addi", "arith.subi", "arith.muli", "arith.divsi",
                  "arith.divui", "arith.remsi", "arith.remui", "arith.maxsi",
                  "arith.minsi", "arith.andi", "arith.ori", "arith.xori"})
              r.push_back(b.op(op, {a[0], a[1]}, t));
            // Shift amounts mostly in range (the third input is small).
            for (const char *op : {"arith.shli", "arith.shrsi", "arith.shrui"})
              r.push_back(b.op(op, {a[0], a[2]}, t));
            for (const char *p : cmpiPredicates)
              r.push_back(b.op("arith.cmpi", {a[0], a[1]}, DType::I1,
                               {{"predicate", p}}));
            const int64_t less = r[r.size() - 8]; // slt
            r.push_back(b.op("arith.select", {less, a[0], a[1]}, t));
            return r;
          },
          false, {{0, 0}, {0, 0}, {-2, t == DType::I1 ? 2 : 70}}));

  // Casts between every pair the op set allows.
  for (const char *suffix : {"", vectorSuffix})
    cases.push_back(detail::opTable(
        std::string("casts") + suffix,
        {DType::F32, DType::I32, DType::I64, DType::I1, DType::F64, DType::BF16,
         DType::F16},
        *suffix ? 256 : 257,
        [&](CaseBuilder &b, const std::vector<int64_t> &a) {
          const int64_t x = a[0], k = a[1], l = a[2], c = a[3], d = a[4],
                        h = a[5], g = a[6];
          std::vector<int64_t> r = {
              b.op("arith.extf", {h}, DType::F32),
              b.op("arith.extf", {g}, DType::F64),
              b.op("arith.extf", {x}, DType::F64),
              b.op("arith.truncf", {x}, DType::BF16),
              b.op("arith.truncf", {d}, DType::F16),
              b.op("arith.truncf", {d}, DType::F32),
              b.op("arith.truncf", {d}, DType::BF16),
              b.op("arith.sitofp", {k}, DType::F32),
              b.op("arith.sitofp", {l}, DType::F32),
              b.op("arith.sitofp", {l}, DType::BF16),
              b.op("arith.sitofp", {c}, DType::F32),
              b.op("arith.sitofp", {l}, DType::F64),
              b.op("arith.uitofp", {k}, DType::F32),
              b.op("arith.uitofp", {l}, DType::F64),
              b.op("arith.uitofp", {l}, DType::F16),
              b.op("arith.uitofp", {c}, DType::F64),
              b.op("arith.fptosi", {x}, DType::I32),
              b.op("arith.fptosi", {d}, DType::I64),
              b.op("arith.fptosi", {x}, DType::I1),
              b.op("arith.fptosi", {h}, DType::I32),
              b.op("arith.fptoui", {x}, DType::I32),
              b.op("arith.fptoui", {d}, DType::I64),
              b.op("arith.fptoui", {g}, DType::I1),
              b.op("arith.extsi", {k}, DType::I64),
              b.op("arith.extsi", {c}, DType::I32),
              b.op("arith.extui", {k}, DType::I64),
              b.op("arith.extui", {c}, DType::I64),
              b.op("arith.trunci", {l}, DType::I32),
              b.op("arith.trunci", {k}, DType::I1),
              b.op("arith.bitcast", {k}, DType::F32),
              b.op("arith.bitcast", {l}, DType::F64),
          };
          // Bitcasts of floats to integers see a NaN's payload, which the
          // GPU's conversions need not keep: NaN becomes 0 first.
          for (int64_t f : {x, d}) {
            const DType type = b.dtypeOf(f);
            const int64_t zero = b.constant(type, 0.0);
            const int64_t ordered =
                b.op("arith.cmpf", {f, f}, DType::I1, {{"predicate", "ord"}});
            const int64_t clean =
                b.op("arith.select", {ordered, f, zero}, type);
            r.push_back(b.op("arith.bitcast", {clean},
                             type == DType::F32 ? DType::I32 : DType::I64));
          }
          const int64_t i = b.op("arith.index_cast", {k}, DType::Index);
          r.push_back(b.op("arith.index_cast", {i}, DType::I32));
          r.push_back(b.op("arith.bitcast", {i}, DType::F64));
          r.push_back(b.op("arith.index_cast", {c}, DType::Index));
          return r;
        }));

  // Scalars from outside the body and constants of every type: a map.
  {
    CaseBuilder b("map with outside scalars and constants");
    const int64_t x = b.tensor(DType::BF16, {2, 3, 45});
    const int64_t n = b.intTensor(DType::I32, {2, 3, 45}, -100, 100);
    const int64_t init = b.tensor(DType::BF16, {2, 3, 45});
    const int64_t out = b.result(init);
    const int64_t s = b.external(DType::BF16, 0.3);
    const int64_t m = b.external(DType::I32, 7);
    const int64_t ax = b.scalar(DType::BF16), an = b.scalar(DType::I32),
                  ai = b.scalar(DType::BF16);
    const int64_t half = b.constant(DType::BF16, 0.1);
    const int64_t three = b.constant(DType::I32, 3);
    const int64_t inf = b.constant(DType::F32, "inf");
    const int64_t big = b.constant(DType::I64, 1234567890123LL);
    int64_t v = b.op("arith.mulf", {ax, s}, DType::BF16);
    v = b.op("arith.addf", {v, half}, DType::BF16);
    int64_t k = b.op("arith.muli", {an, m}, DType::I32);
    k = b.op("arith.addi", {k, three}, DType::I32);
    const int64_t kf = b.op("arith.sitofp", {k}, DType::BF16);
    v = b.op("arith.addf", {v, kf}, DType::BF16);
    const int64_t vf = b.op("arith.extf", {v}, DType::F32);
    const int64_t lim = b.op("arith.minimumf", {vf, inf}, DType::F32);
    const int64_t bf = b.op("arith.sitofp", {big}, DType::F32);
    const int64_t sum = b.op("arith.addf", {lim, bf}, DType::F32);
    v = b.op("arith.truncf", {sum}, DType::BF16);
    v = b.op("arith.subf", {v, ai}, DType::BF16);
    cases.push_back(b.finish({{"op", "linalg.map"},
                              {"operands", {x, n, init}},
                              {"results", {out}},
                              {"body", b.body({ax, an, ai}, {v})}}));
  }

  // Reductions: sum of squares over the last dimension (row reduction: a
  // cooperative one, on integer-valued data, whose sums are exact in every
  // order), over the first (column reduction, one thread per column), and
  // max over two of three dims.
  for (int dim : {1, 0}) {
    CaseBuilder b(std::string("reduce sum of squares over dim ") +
                  std::to_string(dim));
    const int64_t x = dim == 1 ? b.intTensor(DType::F32, {37, 301}, -8, 8)
                               : b.tensor(DType::F32, {37, 301});
    const int64_t init = dim == 1 ? b.intTensor(DType::F32, {37}, -8, 8)
                                  : b.tensor(DType::F32, {301});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t sq = b.op("arith.mulf", {a, a}, DType::F32);
    const int64_t sum = b.op("arith.addf", {sq, acc}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.reduce"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"dimensions", {dim}},
                              {"body", b.body({a, acc}, {sum})}}));
  }
  {
    CaseBuilder b("reduce max over dims 0 and 2 in bf16");
    const int64_t x = b.tensor(DType::BF16, {3, 4, 5});
    const int64_t init = b.tensor(DType::BF16, {4});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::BF16), acc = b.scalar(DType::BF16);
    const int64_t m = b.op("arith.maximumf", {a, acc}, DType::BF16);
    cases.push_back(b.finish({{"op", "linalg.reduce"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"dimensions", {0, 2}},
                              {"body", b.body({a, acc}, {m})}}));
  }
  {
    // Cooperative; integer-valued, so that every partial sum is exact.
    CaseBuilder b("reduce sum in f16 into a result of its own");
    const int64_t x = b.intTensor(DType::F16, {5, 200}, -8, 8);
    const int64_t init = b.intTensor(DType::F16, {5}, -8, 8);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F16), acc = b.scalar(DType::F16);
    const int64_t sum = b.op("arith.addf", {a, acc}, DType::F16);
    cases.push_back(b.finish({{"op", "linalg.reduce"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"dimensions", {1}},
                              {"body", b.body({a, acc}, {sum})}}));
  }
  {
    // Argmax: two inputs, two accumulators, linalg.index of the reduced dim.
    CaseBuilder b("reduce argmax with linalg.index");
    const int64_t x = b.tensor(DType::F32, {6, 50});
    const int64_t y = b.intTensor(DType::I64, {6, 50}, 0, 5);
    const int64_t initV = b.tensor(DType::F32, {6});
    const int64_t initI = b.intTensor(DType::I64, {6}, -1, 0);
    const int64_t outV = b.result(initV, initV); // in place
    const int64_t outI = b.result(initI);
    const int64_t a = b.scalar(DType::F32), ay = b.scalar(DType::I64),
                  accV = b.scalar(DType::F32), accI = b.scalar(DType::I64);
    const int64_t i = b.index(1);
    const int64_t ii = b.op("arith.index_cast", {i}, DType::I64);
    const int64_t gt =
        b.op("arith.cmpf", {a, accV}, DType::I1, {{"predicate", "ogt"}});
    const int64_t v = b.op("arith.select", {gt, a, accV}, DType::F32);
    const int64_t w = b.op("arith.addi", {ii, ay}, DType::I64);
    const int64_t k = b.op("arith.select", {gt, w, accI}, DType::I64);
    cases.push_back(b.finish({{"op", "linalg.reduce"},
                              {"operands", {x, y, initV, initI}},
                              {"results", {outV, outI}},
                              {"dimensions", {1}},
                              {"body", b.body({a, ay, accV, accI}, {v, k})}}));
  }
  {
    CaseBuilder b("reduce over an empty dimension keeps the destination");
    const int64_t x = b.tensor(DType::F32, {4, 0});
    const int64_t init = b.tensor(DType::F32, {4});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t sum = b.op("arith.addf", {a, acc}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.reduce"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"dimensions", {1}},
                              {"body", b.body({a, acc}, {sum})}}));
  }
  {
    CaseBuilder b("map over an empty tensor");
    const int64_t x = b.tensor(DType::F32, {0, 3});
    const int64_t init = b.tensor(DType::F32, {0, 3});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), o = b.scalar(DType::F32);
    const int64_t neg = b.op("arith.negf", {a}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.map"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"body", b.body({a, o}, {neg})}}));
  }

  // Generics.
  {
    CaseBuilder b("generic matmul");
    const int64_t x = b.tensor(DType::F32, {9, 33});
    const int64_t y = b.tensor(DType::F32, {33, 7});
    const int64_t init = b.tensor(DType::F32, {9, 7});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), c = b.scalar(DType::F32),
                  acc = b.scalar(DType::F32);
    const int64_t p = b.op("arith.mulf", {a, c}, DType::F32);
    const int64_t s = b.op("arith.addf", {acc, p}, DType::F32);
    cases.push_back(
        b.finish({{"op", "linalg.generic"},
                  {"operands", {x, y, init}},
                  {"results", {out}},
                  {"indexing_maps", {{0, 2}, {2, 1}, {0, 1}}},
                  {"iterator_types", {"parallel", "parallel", "reduction"}},
                  {"body", b.body({a, c, acc}, {s})}}));
  }
  {
    CaseBuilder b("generic transposed output and broadcast input");
    const int64_t x = b.tensor(DType::F32, {8, 130});
    const int64_t bias = b.tensor(DType::F32, {130});
    const int64_t init = b.tensor(DType::F32, {130, 8});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), c = b.scalar(DType::F32),
                  o = b.scalar(DType::F32);
    const int64_t s = b.op("arith.addf", {a, c}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.generic"},
                              {"operands", {x, bias, init}},
                              {"results", {out}},
                              {"indexing_maps", {{0, 1}, {1}, {1, 0}}},
                              {"iterator_types", {"parallel", "parallel"}},
                              {"body", b.body({a, c, o}, {s})}}));
  }
  {
    // Softmax's numerator: exp(x - max) with the row max broadcast.
    CaseBuilder b("generic exp of x minus its row max");
    const int64_t x = b.tensor(DType::BF16, {12, 64});
    const int64_t mx = b.tensor(DType::BF16, {12});
    const int64_t init = b.tensor(DType::F32, {12, 64});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::BF16), m = b.scalar(DType::BF16),
                  o = b.scalar(DType::F32);
    const int64_t d = b.op("arith.subf", {a, m}, DType::BF16);
    const int64_t df = b.op("arith.extf", {d}, DType::F32);
    const int64_t e = b.op("math.exp", {df}, DType::F32);
    StructuredCase c = b.finish({{"op", "linalg.generic"},
                                 {"operands", {x, mx, init}},
                                 {"results", {out}},
                                 {"indexing_maps", {{0, 1}, {0}, {0, 1}}},
                                 {"iterator_types", {"parallel", "parallel"}},
                                 {"body", b.body({a, m, o}, {e})}});
    c.transcendental = true;
    cases.push_back(c);
  }
  {
    // The vector path's three ways to read an input: a bias contiguous
    // along the rows (a vector), a per-row scale (one value per thread) and
    // a transposed input (element by element); f32 bias and bf16 output
    // make vectors of 4.
    CaseBuilder b("generic bias, row scale and transposed input as vectors");
    const int64_t x = b.tensor(DType::BF16, {6, 64});
    const int64_t bias = b.tensor(DType::F32, {64});
    const int64_t scale = b.tensor(DType::BF16, {6});
    const int64_t xt = b.tensor(DType::BF16, {64, 6});
    const int64_t init = b.tensor(DType::BF16, {6, 64});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::BF16), c = b.scalar(DType::F32),
                  r = b.scalar(DType::BF16), t = b.scalar(DType::BF16),
                  o = b.scalar(DType::BF16);
    const int64_t af = b.op("arith.extf", {a}, DType::F32);
    const int64_t m = b.op("arith.mulf", {af, c}, DType::F32);
    const int64_t rt = b.op("arith.addf", {r, t}, DType::BF16);
    const int64_t rtf = b.op("arith.extf", {rt}, DType::F32);
    const int64_t sum = b.op("arith.addf", {m, rtf}, DType::F32);
    const int64_t y = b.op("arith.truncf", {sum}, DType::BF16);
    cases.push_back(
        b.finish({{"op", "linalg.generic"},
                  {"operands", {x, bias, scale, xt, init}},
                  {"results", {out}},
                  {"indexing_maps", {{0, 1}, {1}, {0}, {1, 0}, {0, 1}}},
                  {"iterator_types", {"parallel", "parallel"}},
                  {"body", b.body({a, c, r, t, o}, {y})}}));
  }
  {
    // The destination read as a vector: out = init + x in f16 (vectors of
    // 8), and a second f64 output of the same loop (vectors of 2 for both).
    CaseBuilder b("generic accumulating into its destinations as vectors");
    const int64_t x = b.tensor(DType::F16, {8, 40});
    const int64_t init = b.tensor(DType::F16, {8, 40});
    const int64_t initWide = b.tensor(DType::F64, {8, 40});
    const int64_t out = b.result(init);
    const int64_t outWide = b.result(initWide);
    const int64_t a = b.scalar(DType::F16), o = b.scalar(DType::F16),
                  w = b.scalar(DType::F64);
    const int64_t s = b.op("arith.addf", {o, a}, DType::F16);
    const int64_t e = b.op("arith.extf", {a}, DType::F64);
    const int64_t ws = b.op("arith.mulf", {w, e}, DType::F64);
    cases.push_back(b.finish({{"op", "linalg.generic"},
                              {"operands", {x, init, initWide}},
                              {"results", {out, outWide}},
                              {"indexing_maps", {{0, 1}, {0, 1}, {0, 1}}},
                              {"iterator_types", {"parallel", "parallel"}},
                              {"body", b.body({a, o, w}, {s, ws})}}));
  }
  {
    // A parallel loop no output indexes runs inside the thread, in order.
    CaseBuilder b("generic parallel loop indexed by no output");
    const int64_t x = b.tensor(DType::F32, {20, 30});
    const int64_t init = b.tensor(DType::F32, {20});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t s = b.op("arith.subf", {acc, a}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.generic"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"indexing_maps", {{0, 1}, {0}}},
                              {"iterator_types", {"parallel", "parallel"}},
                              {"body", b.body({a, acc}, {s})}}));
  }
  {
    // Reduce to a rank-0 tensor: one warp (integer-valued: exact).
    CaseBuilder b("generic full reduction to a scalar tensor");
    const int64_t x = b.intTensor(DType::F32, {3000}, -8, 8);
    const int64_t init = b.intTensor(DType::F32, {}, -8, 8);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t s = b.op("arith.addf", {acc, a}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.generic"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"indexing_maps", {{0}, json::array()}},
                              {"iterator_types", {"reduction"}},
                              {"body", b.body({a, acc}, {s})}}));
  }
  {
    // Outputs that disagree on a loop: the sequential nest.
    CaseBuilder b("generic sequential nest");
    const int64_t x = b.tensor(DType::F32, {6, 7});
    const int64_t init1 = b.tensor(DType::F32, {6});
    const int64_t init2 = b.tensor(DType::F32, {6, 7});
    const int64_t out1 = b.result(init1);
    const int64_t out2 = b.result(init2, init2);
    const int64_t a = b.scalar(DType::F32), o1 = b.scalar(DType::F32),
                  o2 = b.scalar(DType::F32);
    const int64_t s = b.op("arith.addf", {o1, a}, DType::F32);
    const int64_t t = b.op("arith.mulf", {s, o2}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.generic"},
                              {"operands", {x, init1, init2}},
                              {"results", {out1, out2}},
                              {"indexing_maps", {{0, 1}, {0}, {0, 1}}},
                              {"iterator_types", {"parallel", "parallel"}},
                              {"body", b.body({a, o1, o2}, {s, t})}}));
  }
  {
    // Two accumulators that swap every step (a yield is an argument).
    CaseBuilder b("generic accumulators that swap");
    const int64_t x = b.tensor(DType::F64, {5, 9});
    const int64_t init1 = b.tensor(DType::F64, {5});
    const int64_t init2 = b.tensor(DType::F64, {5});
    const int64_t out1 = b.result(init1);
    const int64_t out2 = b.result(init2);
    const int64_t a = b.scalar(DType::F64), o1 = b.scalar(DType::F64),
                  o2 = b.scalar(DType::F64);
    const int64_t s = b.op("arith.addf", {o1, a}, DType::F64);
    cases.push_back(b.finish({{"op", "linalg.generic"},
                              {"operands", {x, init1, init2}},
                              {"results", {out1, out2}},
                              {"indexing_maps", {{0, 1}, {0}, {0}}},
                              {"iterator_types", {"parallel", "reduction"}},
                              {"body", b.body({a, o1, o2}, {o2, s})}}));
  }
  for (bool outOfRange : {false, true}) {
    // Embedding lookup: tensor.extract from a table outside the body.
    CaseBuilder b(outOfRange ? "generic tensor.extract out of range"
                             : "generic tensor.extract embedding lookup");
    const int64_t tokens =
        b.intTensor(DType::I64, {3, 11}, 0, outOfRange ? 40 : 17);
    const int64_t table = b.tensor(DType::F32, {17, 24});
    const int64_t init = b.tensor(DType::F32, {3, 11, 24});
    const int64_t out = b.result(init);
    const int64_t tok = b.scalar(DType::I64), o = b.scalar(DType::F32);
    const int64_t d = b.index(2);
    const int64_t row = b.op("arith.index_cast", {tok}, DType::Index);
    const int64_t v = b.op("tensor.extract", {table, row, d}, DType::F32);
    StructuredCase c =
        b.finish({{"op", "linalg.generic"},
                  {"operands", {tokens, init}},
                  {"results", {out}},
                  {"indexing_maps", {{0, 1}, {0, 1, 2}}},
                  {"iterator_types", {"parallel", "parallel", "parallel"}},
                  {"body", b.body({tok, o}, {v})}});
    if (outOfRange)
      c.runError = "tensor.extract index ";
    cases.push_back(c);
  }
  // In place: the input, the destination and the result share a buffer
  // (a schedule's result lives in its destination's buffer).
  for (const char *suffix : {"", vectorSuffix}) {
    CaseBuilder b(std::string("map in place over its input") + suffix);
    const std::vector<int64_t> shape = *suffix ? std::vector<int64_t>{500, 16}
                                               : std::vector<int64_t>{1000, 37};
    const int64_t x = b.tensor(DType::F32, shape);
    const int64_t init = b.tensor(DType::F32, shape, x);
    const int64_t out = b.result(init, x);
    const int64_t a = b.scalar(DType::F32), o = b.scalar(DType::F32);
    const int64_t one = b.constant(DType::F32, 1.5);
    const int64_t s = b.op("arith.mulf", {a, one}, DType::F32);
    const int64_t t = b.op("arith.subf", {s, o}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.map"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"body", b.body({a, o}, {t})}}));
  }

  // A linalg.generic reducing rows: inputs [rows, cols], outputs [rows]
  // (linalg.reduce wants an input per output).
  auto rowGeneric = [](std::vector<int64_t> operands, size_t numInputs,
                       std::vector<int64_t> results, json body) {
    json maps = json::array();
    for (size_t i = 0; i < operands.size(); ++i)
      maps.push_back(i < numInputs ? json{0, 1} : json{0});
    return json{{"op", "linalg.generic"},
                {"operands", operands},
                {"results", results},
                {"indexing_maps", maps},
                {"iterator_types", {"parallel", "reduction"}},
                {"body", body}};
  };

  // Cooperative reductions (Codegen.h): a warp per point up to 4096
  // elements, a block of 256 threads above. Integer-valued floats and the
  // integer, max and min combines are exact in every order and compared
  // bitwise; other float sums and products within compareReassociated's
  // bound.
  using detail::rowMagnitude;
  {
    // Softmax's denominator over rows of 1000: a warp per row.
    CaseBuilder b("cooperative sum of exp over rows of 1000");
    const int64_t x = b.uniformTensor(DType::F32, {3, 1000}, -4, 4);
    const int64_t init = b.uniformTensor(DType::F32, {3}, -4, 4);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t e = b.op("math.exp", {a}, DType::F32);
    const int64_t sum = b.op("arith.addf", {e, acc}, DType::F32);
    StructuredCase c = b.finish({{"op", "linalg.reduce"},
                                 {"operands", {x, init}},
                                 {"results", {out}},
                                 {"dimensions", {1}},
                                 {"body", b.body({a, acc}, {sum})}});
    c.transcendental = true;
    c.reassociated.push_back(
        {0, 1000,
         rowMagnitude(DType::F32, init, 3, 1000,
                      [x](const CaseData &d, int64_t k) {
                        return std::exp(elementAt(DType::F32, d[x], k));
                      })});
    cases.push_back(c);
  }
  {
    // Two outputs with their own combines, exact on integer values.
    CaseBuilder b("cooperative sum and max of integer values over rows of "
                  "1000");
    const int64_t x = b.intTensor(DType::F32, {3, 1000}, -8, 8);
    const int64_t init0 = b.intTensor(DType::F32, {3}, -8, 8);
    const int64_t init1 = b.tensor(DType::F32, {3});
    const int64_t out0 = b.result(init0), out1 = b.result(init1);
    const int64_t a = b.scalar(DType::F32), acc0 = b.scalar(DType::F32),
                  acc1 = b.scalar(DType::F32);
    const int64_t sum = b.op("arith.addf", {acc0, a}, DType::F32);
    const int64_t max = b.op("arith.maximumf", {a, acc1}, DType::F32);
    cases.push_back(b.finish(rowGeneric({x, init0, init1}, 1, {out0, out1},
                                        b.body({a, acc0, acc1}, {sum, max}))));
  }
  {
    // Cross-entropy's logsumexp pieces over GPT-2's vocabulary, a block per
    // row: the bf16 max (exact) and the sum of exp in f32.
    CaseBuilder b("cooperative bf16 max and f32 sum of exp over rows of 50257");
    const int64_t x = b.uniformTensor(DType::BF16, {2, 50257}, -4, 4);
    const int64_t initM = b.uniformTensor(DType::BF16, {2}, -4, 4);
    const int64_t initS = b.uniformTensor(DType::F32, {2}, 0, 4);
    const int64_t outM = b.result(initM), outS = b.result(initS);
    const int64_t a = b.scalar(DType::BF16), accM = b.scalar(DType::BF16),
                  accS = b.scalar(DType::F32);
    const int64_t max = b.op("arith.maximumf", {accM, a}, DType::BF16);
    const int64_t wide = b.op("arith.extf", {a}, DType::F32);
    const int64_t e = b.op("math.exp", {wide}, DType::F32);
    const int64_t sum = b.op("arith.addf", {accS, e}, DType::F32);
    StructuredCase c =
        b.finish(rowGeneric({x, initM, initS}, 1, {outM, outS},
                            b.body({a, accM, accS}, {max, sum})));
    c.transcendental = true;
    c.reassociated.push_back(
        {1, 50257,
         rowMagnitude(DType::F32, initS, 2, 50257,
                      [x](const CaseData &d, int64_t k) {
                        return std::exp(elementAt(DType::BF16, d[x], k));
                      })});
    cases.push_back(c);
  }
  {
    // Row sums of 50257 f32: integer values (exact) and uniform ones.
    CaseBuilder b("cooperative f32 sums over rows of 50257");
    const int64_t x = b.intTensor(DType::F32, {2, 50257}, -8, 8);
    const int64_t y = b.uniformTensor(DType::F32, {2, 50257}, -1, 1);
    const int64_t init0 = b.intTensor(DType::F32, {2}, -8, 8);
    const int64_t init1 = b.uniformTensor(DType::F32, {2}, -1, 1);
    const int64_t out0 = b.result(init0), out1 = b.result(init1);
    const int64_t a = b.scalar(DType::F32), c = b.scalar(DType::F32),
                  acc0 = b.scalar(DType::F32), acc1 = b.scalar(DType::F32);
    const int64_t sum0 = b.op("arith.addf", {a, acc0}, DType::F32);
    const int64_t sum1 = b.op("arith.addf", {acc1, c}, DType::F32);
    StructuredCase sums =
        b.finish({{"op", "linalg.reduce"},
                  {"operands", {x, y, init0, init1}},
                  {"results", {out0, out1}},
                  {"dimensions", {1}},
                  {"body", b.body({a, c, acc0, acc1}, {sum0, sum1})}});
    sums.reassociated.push_back(
        {1, 50257,
         rowMagnitude(DType::F32, init1, 2, 50257,
                      [y](const CaseData &d, int64_t k) {
                        return elementAt(DType::F32, d[y], k);
                      })});
    cases.push_back(sums);
  }
  {
    // 33 < 64 elements: one thread per row, the host's order (exact on the
    // default data: NaN, infinities, large values).
    CaseBuilder b("cooperative threshold: rows of 33 stay one thread each");
    const int64_t x = b.tensor(DType::F32, {5, 33});
    const int64_t init = b.tensor(DType::F32, {5});
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t sum = b.op("arith.addf", {a, acc}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.reduce"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"dimensions", {1}},
                              {"body", b.body({a, acc}, {sum})}}));
  }
  {
    // maximumf/minimumf over NaN, infinities and zeros of both signs (the
    // products with 0): exact in every order.
    CaseBuilder b("cooperative max and min with NaN, infinities and signed "
                  "zeros");
    const int64_t x = b.tensor(DType::F32, {7, 100});
    const int64_t init0 = b.tensor(DType::F32, {7});
    const int64_t init1 = b.tensor(DType::F32, {7});
    const int64_t init2 = b.tensor(DType::F32, {7});
    const int64_t out0 = b.result(init0), out1 = b.result(init1),
                  out2 = b.result(init2);
    const int64_t a = b.scalar(DType::F32), acc0 = b.scalar(DType::F32),
                  acc1 = b.scalar(DType::F32), acc2 = b.scalar(DType::F32);
    const int64_t zero = b.constant(DType::F32, 0.0);
    const int64_t z = b.op("arith.mulf", {a, zero}, DType::F32);
    const int64_t max = b.op("arith.maximumf", {acc0, a}, DType::F32);
    const int64_t min = b.op("arith.minimumf", {a, acc1}, DType::F32);
    const int64_t maxZero = b.op("arith.maximumf", {acc2, z}, DType::F32);
    cases.push_back(b.finish(
        rowGeneric({x, init0, init1, init2}, 1, {out0, out1, out2},
                   b.body({a, acc0, acc1, acc2}, {max, min, maxZero}))));
  }
  {
    // Rows with a NaN or an infinity are NaN or infinite in every order
    // (exact); the others within the bound.
    CaseBuilder b("cooperative sum with NaN and infinities");
    const int64_t x = b.uniformTensor(DType::F32, {7, 100}, -2, 2, 0.02);
    const int64_t init = b.uniformTensor(DType::F32, {7}, -2, 2);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t sum = b.op("arith.addf", {acc, a}, DType::F32);
    StructuredCase c = b.finish({{"op", "linalg.reduce"},
                                 {"operands", {x, init}},
                                 {"results", {out}},
                                 {"dimensions", {1}},
                                 {"body", b.body({a, acc}, {sum})}});
    c.reassociated.push_back({0, 100,
                              rowMagnitude(DType::F32, init, 7, 100,
                                           [x](const CaseData &d, int64_t k) {
                                             return elementAt(DType::F32, d[x],
                                                              k);
                                           })});
    cases.push_back(c);
  }
  // Column reductions (Codegen.h): blocks of adjacent points, each reduced
  // by slices of the block.
  using detail::columnMagnitude;
  {
    // A bias gradient: f32 sums down 300 rows of 40 columns (8 points by 32
    // slices, the last block half full).
    CaseBuilder b("column sum of f32 over 300 rows of 40");
    const int64_t x = b.uniformTensor(DType::F32, {300, 40}, -2, 2);
    const int64_t init = b.uniformTensor(DType::F32, {40}, -2, 2);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t sum = b.op("arith.addf", {acc, a}, DType::F32);
    StructuredCase c = b.finish({{"op", "linalg.reduce"},
                                 {"operands", {x, init}},
                                 {"results", {out}},
                                 {"dimensions", {0}},
                                 {"body", b.body({a, acc}, {sum})}});
    c.reassociated.push_back({0, 300,
                              columnMagnitude(DType::F32, init, 300, 40,
                                              [x](const CaseData &d, int64_t k) {
                                                return elementAt(DType::F32,
                                                                 d[x], k);
                                              })});
    cases.push_back(c);
  }
  {
    // LayerNorm's weight and bias gradients in one generic: bf16 inputs
    // summed into f32 over [4, 50] rows of 50 columns (16 points by 16
    // slices), and their max; integer values, so exact in every order.
    CaseBuilder b("column sums of bf16 into f32 and max over 200 rows of 50");
    const int64_t x = b.intTensor(DType::BF16, {4, 50, 50}, -8, 8);
    const int64_t y = b.intTensor(DType::BF16, {4, 50, 50}, -8, 8);
    const int64_t init0 = b.intTensor(DType::F32, {50}, -8, 8);
    const int64_t init1 = b.intTensor(DType::BF16, {50}, -8, 8);
    const int64_t out0 = b.result(init0), out1 = b.result(init1);
    const int64_t a = b.scalar(DType::BF16), c = b.scalar(DType::BF16),
                  acc0 = b.scalar(DType::F32), acc1 = b.scalar(DType::BF16);
    const int64_t product = b.op("arith.mulf", {a, c}, DType::BF16);
    const int64_t wide = b.op("arith.extf", {product}, DType::F32);
    const int64_t sum = b.op("arith.addf", {wide, acc0}, DType::F32);
    const int64_t max = b.op("arith.maximumf", {acc1, c}, DType::BF16);
    cases.push_back(b.finish(
        {{"op", "linalg.generic"},
         {"operands", {x, y, init0, init1}},
         {"results", {out0, out1}},
         {"indexing_maps", {{0, 1, 2}, {0, 1, 2}, {2}, {2}}},
         {"iterator_types", {"reduction", "reduction", "parallel"}},
         {"body", b.body({a, c, acc0, acc1}, {sum, max})}}));
  }
  {
    CaseBuilder b("cooperative product over rows of 300");
    const int64_t x = b.uniformTensor(DType::F32, {3, 300}, 0.5, 1.5);
    const int64_t init = b.uniformTensor(DType::F32, {3}, 0.5, 1.5);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t product = b.op("arith.mulf", {a, acc}, DType::F32);
    StructuredCase c = b.finish({{"op", "linalg.reduce"},
                                 {"operands", {x, init}},
                                 {"results", {out}},
                                 {"dimensions", {1}},
                                 {"body", b.body({a, acc}, {product})}});
    c.reassociated.push_back({0, 300,
                              rowMagnitude(
                                  DType::F32, init, 3, 300,
                                  [x](const CaseData &d, int64_t k) {
                                    return elementAt(DType::F32, d[x], k);
                                  },
                                  /*product=*/true)});
    cases.push_back(c);
  }
  for (DType t : {DType::I32, DType::I64, DType::I1}) {
    // Every integer combine, one output each, the accumulator on either
    // side: exact (wrapping) in every order.
    CaseBuilder b(std::string("cooperative integer combines ") +
                  getDTypeName(t));
    const char *combines[] = {"arith.addi",  "arith.muli", "arith.maxsi",
                              "arith.minsi", "arith.andi", "arith.ori",
                              "arith.xori"};
    const int64_t x = b.tensor(t, {4, 300});
    std::vector<int64_t> operands = {x}, results, args, yields;
    for (size_t k = 0; k < 7; ++k)
      operands.push_back(b.tensor(t, {4}));
    for (size_t k = 0; k < 7; ++k)
      results.push_back(b.result(operands[k + 1]));
    const int64_t a = b.scalar(t);
    args.push_back(a);
    for (size_t k = 0; k < 7; ++k)
      args.push_back(b.scalar(t));
    for (size_t k = 0; k < 7; ++k)
      yields.push_back(b.op(combines[k],
                            k % 2 ? std::vector<int64_t>{a, args[k + 1]}
                                  : std::vector<int64_t>{args[k + 1], a},
                            t));
    cases.push_back(
        b.finish(rowGeneric(operands, 1, results, b.body(args, yields))));
  }
  {
    // Layer norm's variance: a generic with the row mean broadcast.
    CaseBuilder b("cooperative sum of squared deviations over rows of 768");
    const int64_t x = b.uniformTensor(DType::F32, {6, 768}, -3, 3);
    const int64_t mean = b.uniformTensor(DType::F32, {6}, -0.5, 0.5);
    const int64_t init = b.uniformTensor(DType::F32, {6}, 0, 1);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), m = b.scalar(DType::F32),
                  acc = b.scalar(DType::F32);
    const int64_t d = b.op("arith.subf", {a, m}, DType::F32);
    const int64_t sq = b.op("arith.mulf", {d, d}, DType::F32);
    const int64_t sum = b.op("arith.addf", {acc, sq}, DType::F32);
    StructuredCase c = b.finish({{"op", "linalg.generic"},
                                 {"operands", {x, mean, init}},
                                 {"results", {out}},
                                 {"indexing_maps", {{0, 1}, {0}, {0}}},
                                 {"iterator_types", {"parallel", "reduction"}},
                                 {"body", b.body({a, m, acc}, {sum})}});
    c.reassociated.push_back(
        {0, 768,
         rowMagnitude(DType::F32, init, 6, 768,
                      [x, mean](const CaseData &data, int64_t k) {
                        const double v =
                            elementAt(DType::F32, data[x], k) -
                            elementAt(DType::F32, data[mean], k / 768);
                        return v * v;
                      })});
    cases.push_back(c);
  }
  {
    // Two reduced loops flattened into a warp's elements (3 x 40 per point),
    // with linalg.index of both; exact.
    CaseBuilder b("cooperative reduction over loops 0 and 2 with linalg.index");
    const int64_t x = b.intTensor(DType::F32, {3, 4, 40}, -8, 8);
    const int64_t init0 = b.intTensor(DType::F32, {4}, -8, 8);
    const int64_t init1 = b.intTensor(DType::I64, {4}, -100, 100);
    const int64_t out0 = b.result(init0), out1 = b.result(init1);
    const int64_t a = b.scalar(DType::F32), acc0 = b.scalar(DType::F32),
                  acc1 = b.scalar(DType::I64);
    const int64_t sum = b.op("arith.addf", {acc0, a}, DType::F32);
    const int64_t i0 = b.index(0), i2 = b.index(2);
    const int64_t thousand = b.constant(DType::Index, 1000);
    const int64_t scaled = b.op("arith.muli", {i0, thousand}, DType::Index);
    const int64_t w = b.op("arith.addi", {scaled, i2}, DType::Index);
    const int64_t wide = b.op("arith.index_cast", {w}, DType::I64);
    const int64_t indices = b.op("arith.addi", {wide, acc1}, DType::I64);
    cases.push_back(
        b.finish({{"op", "linalg.generic"},
                  {"operands", {x, init0, init1}},
                  {"results", {out0, out1}},
                  {"indexing_maps", {{0, 1, 2}, {1}, {1}}},
                  {"iterator_types", {"reduction", "parallel", "reduction"}},
                  {"body", b.body({a, acc0, acc1}, {sum, indices})}}));
  }
  {
    // A block per point over two reduced dims (64 x 100 elements); exact.
    CaseBuilder b("cooperative block reduction over dims 1 and 2");
    const int64_t x = b.intTensor(DType::F32, {2, 64, 100}, -8, 8);
    const int64_t init = b.intTensor(DType::F32, {2}, -8, 8);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t sum = b.op("arith.addf", {a, acc}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.reduce"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"dimensions", {1, 2}},
                              {"body", b.body({a, acc}, {sum})}}));
  }
  for (bool outOfRange : {false, true}) {
    // tensor.extract inside a cooperative sum: an index outside the table is
    // reported as on the other paths.
    CaseBuilder b(outOfRange ? "cooperative sum of tensor.extract out of range"
                             : "cooperative sum of tensor.extract");
    const int64_t tokens =
        b.intTensor(DType::I64, {3, 100}, 0, outOfRange ? 40 : 17);
    const int64_t table = b.intTensor(DType::F32, {17}, -8, 8);
    const int64_t init = b.intTensor(DType::F32, {3}, -8, 8);
    const int64_t out = b.result(init);
    const int64_t tok = b.scalar(DType::I64), acc = b.scalar(DType::F32);
    const int64_t row = b.op("arith.index_cast", {tok}, DType::Index);
    const int64_t v = b.op("tensor.extract", {table, row}, DType::F32);
    const int64_t sum = b.op("arith.addf", {acc, v}, DType::F32);
    StructuredCase c = b.finish({{"op", "linalg.generic"},
                                 {"operands", {tokens, init}},
                                 {"results", {out}},
                                 {"indexing_maps", {{0, 1}, {0}}},
                                 {"iterator_types", {"parallel", "reduction"}},
                                 {"body", b.body({tok, acc}, {sum})}});
    if (outOfRange)
      c.runError = "tensor.extract index ";
    cases.push_back(c);
  }
  {
    // An input strided along the reduced loop (a transposed operand): one
    // thread per point, whose neighbours read neighbouring elements; exact.
    CaseBuilder b("cooperative rule: a strided input stays one thread per "
                  "point");
    const int64_t x = b.intTensor(DType::F32, {1000, 3}, -8, 8);
    const int64_t init = b.intTensor(DType::F32, {3}, -8, 8);
    const int64_t out = b.result(init);
    const int64_t a = b.scalar(DType::F32), acc = b.scalar(DType::F32);
    const int64_t sum = b.op("arith.addf", {acc, a}, DType::F32);
    cases.push_back(b.finish({{"op", "linalg.generic"},
                              {"operands", {x, init}},
                              {"results", {out}},
                              {"indexing_maps", {{1, 0}, {0}}},
                              {"iterator_types", {"parallel", "reduction"}},
                              {"body", b.body({a, acc}, {sum})}}));
  }
  return cases;
}

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

/// The bytes of `value`'s elements in memory: random and deterministic in
/// `seed`, already in their dtype, with zeros of both signs, infinities,
/// NaN, denormals, the largest values, integer extremes and large floats
/// (for the saturating casts) mixed in.
inline std::vector<uint8_t> makeCaseData(const ValueSpec &value,
                                         uint64_t seed) {
  const int64_t numel = value.numel();
  const int64_t width = getDTypeWidth(value.dtype);
  std::vector<uint8_t> bytes(static_cast<size_t>(numel * width));
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + 12345);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < numel; ++k) {
    uint8_t *at = bytes.data() + k * width;
    if (isFloat(value.dtype)) {
      double tiny = 1e-40, huge = 3.3e38;
      if (value.dtype == DType::F64) {
        tiny = 1e-310;
        huge = 1.7e308;
      } else if (value.dtype == DType::F16) {
        tiny = 3e-6;
        huge = 65504;
      }
      const double specials[] = {
          0.0,  -0.0, inf,  -inf,  std::numeric_limits<double>::quiet_NaN(),
          1.0,  -1.0, tiny, -tiny, huge,
          -huge};
      double v;
      const double r =
          value.hi > value.lo || value.high > value.low ? 1 : unit(rng);
      if (value.hi > value.lo) {
        v = static_cast<double>(
            value.lo + static_cast<int64_t>(
                           rng() % static_cast<uint64_t>(value.hi - value.lo)));
      } else if (value.high > value.low) {
        const double few[] = {std::numeric_limits<double>::quiet_NaN(), inf,
                              -inf, 0.0, -0.0};
        if (unit(rng) < value.specials)
          v = few[rng() % 5];
        else
          v = value.low + (value.high - value.low) * unit(rng);
      } else if (r < 0.05) {
        v = specials[rng() % (sizeof(specials) / sizeof(specials[0]))];
      } else if (r < 0.15) {
        v = static_cast<double>(static_cast<int64_t>(rng() % 17) - 8);
      } else {
        const bool big = r > 0.93;
        const int exponent = big ? static_cast<int>(rng() % 46) + 25
                                 : static_cast<int>(rng() % 13) - 6;
        v = std::ldexp(1.0 + unit(rng), exponent);
        if (rng() & 1)
          v = -v;
      }
      switch (value.dtype) {
      case DType::F32: {
        const float f = static_cast<float>(v);
        std::memcpy(at, &f, 4);
        break;
      }
      case DType::F64:
        std::memcpy(at, &v, 8);
        break;
      case DType::BF16: {
        const uint16_t h = roundToBF16(v);
        std::memcpy(at, &h, 2);
        break;
      }
      default: {
        const uint16_t h = roundToF16(v);
        std::memcpy(at, &h, 2);
        break;
      }
      }
      continue;
    }
    int64_t v;
    if (value.hi > value.lo) {
      v = value.lo + static_cast<int64_t>(
                         rng() % static_cast<uint64_t>(value.hi - value.lo));
    } else {
      const bool narrow = value.dtype == DType::I32;
      const int64_t extremes[] = {narrow ? std::numeric_limits<int32_t>::min()
                                         : std::numeric_limits<int64_t>::min(),
                                  narrow ? std::numeric_limits<int32_t>::max()
                                         : std::numeric_limits<int64_t>::max(),
                                  -1, 0, 1};
      const double r = unit(rng);
      if (r < 0.05)
        v = extremes[rng() % 5];
      else if (r < 0.35)
        v = static_cast<int64_t>(rng() % 17) - 8;
      else
        v = static_cast<int64_t>(rng());
    }
    switch (value.dtype) {
    case DType::I32: {
      const int32_t i = static_cast<int32_t>(static_cast<uint32_t>(v));
      std::memcpy(at, &i, 4);
      break;
    }
    case DType::I1:
      *at = static_cast<uint8_t>(v & 1);
      break;
    default:
      std::memcpy(at, &v, 8);
      break;
    }
  }
  return bytes;
}

/// "" when `actual` equals `expected` element by element (any NaN equals
/// any NaN; floats may differ by `ulps` units in the last place of their
/// dtype), else the first difference.
inline std::string compareCaseData(DType type,
                                   const std::vector<uint8_t> &expected,
                                   const std::vector<uint8_t> &actual,
                                   int ulps) {
  if (expected.size() != actual.size())
    return "sizes differ";
  const int64_t width = getDTypeWidth(type);
  const int64_t numel = static_cast<int64_t>(expected.size()) / width;
  for (int64_t k = 0; k < numel; ++k) {
    uint64_t a = 0, b = 0;
    std::memcpy(&a, expected.data() + k * width, width);
    std::memcpy(&b, actual.data() + k * width, width);
    if (a == b)
      continue;
    if (isFloat(type)) {
      const int bits = static_cast<int>(width * 8);
      const uint64_t sign = uint64_t(1) << (bits - 1);
      const uint64_t magnitude = sign - 1;
      const int mantissa = type == DType::F32    ? 23
                           : type == DType::F64  ? 52
                           : type == DType::BF16 ? 7
                                                 : 10;
      const uint64_t infinity = magnitude & ~((uint64_t(1) << mantissa) - 1);
      const bool nanA = (a & magnitude) > infinity,
                 nanB = (b & magnitude) > infinity;
      if (nanA && nanB)
        continue;
      if (!nanA && !nanB && ulps > 0) {
        auto ordered = [&](uint64_t x) {
          const int64_t m = static_cast<int64_t>(x & magnitude);
          return (x & sign) ? -m : m;
        };
        const int64_t d = ordered(a) - ordered(b);
        if (d <= ulps && d >= -ulps)
          continue;
      }
    }
    char text[160];
    std::snprintf(text, sizeof(text),
                  "element %lld: expected bits 0x%llx, got 0x%llx",
                  static_cast<long long>(k), static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return text;
  }
  return "";
}

inline CaseData makeAllCaseData(const StructuredCase &c) {
  CaseData data(c.values.size());
  for (size_t i = 0; i < c.values.size(); ++i)
    if (c.values[i].isTensor && c.values[i].aliasOf < 0)
      data[i] = makeCaseData(c.values[i], i + 1);
  return data;
}

/// "" when every element of `actual` is within the reassociation bound of
/// `expected` (the host's), else the first that is not.
///
/// The bound. Combining an initial value and n terms in any order is a
/// binary tree of n additions (or multiplications), each rounded once to
/// the dtype, so |computed - exact| <= gamma_n * S, gamma_n = n u / (1 - n u),
/// with u the dtype's unit roundoff (2^-24 f32, 2^-53 f64, 2^-8 bf16, 2^-11
/// f16) and S = |init| + sum |term_i| (products: |init * prod term_i|)
/// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 4.2
/// and Lemma 3.1). The host's sequential order and the GPU's tree both
/// satisfy it, hence |gpu - host| <= 2 gamma_n S; plus 4 u S because S is
/// computed from the exact terms (each rounds once, u) and a transcendental
/// term may differ by an ulp (2u) between CUDA's libm and glibc. It holds
/// while nothing overflows: an element whose S is not finite (an infinite
/// or NaN term) must match exactly (NaN any NaN), and one whose bound
/// reaches the dtype's largest value is an error of the case. The bound
/// uses the worst order (n roundings per term) rather than the GPU's
/// shallower tree, so it does not depend on the kernel's shape.
inline std::string compareReassociated(DType type,
                                       const std::vector<uint8_t> &expected,
                                       const std::vector<uint8_t> &actual,
                                       int64_t terms,
                                       const std::vector<double> &magnitude) {
  if (expected.size() != actual.size())
    return "sizes differ";
  const int mantissa = type == DType::F32    ? 23
                       : type == DType::F64  ? 52
                       : type == DType::BF16 ? 7
                                             : 10;
  const double largest = type == DType::F32    ? 3.4028234663852886e38
                         : type == DType::F64  ? 1.7976931348623157e308
                         : type == DType::BF16 ? 3.3895313892515355e38
                                               : 65504.0;
  const double u = std::ldexp(1.0, -(mantissa + 1));
  const double nu = static_cast<double>(terms) * u;
  if (nu >= 0.5)
    return "no useful bound for " + std::to_string(terms) + " terms";
  const double factor = 2 * nu / (1 - nu) + 4 * u;
  const int64_t numel =
      static_cast<int64_t>(expected.size()) / getDTypeWidth(type);
  if (static_cast<int64_t>(magnitude.size()) != numel)
    return "the magnitudes do not match the result";
  for (int64_t k = 0; k < numel; ++k) {
    const double a = elementAt(type, expected, k);
    const double b = elementAt(type, actual, k);
    const double s = magnitude[k];
    char text[200];
    if (!std::isfinite(s)) {
      if ((std::isnan(a) && std::isnan(b)) || a == b)
        continue;
      std::snprintf(text, sizeof(text),
                    "element %lld: expected %.9g, got %.9g (not finite: "
                    "exact)",
                    static_cast<long long>(k), a, b);
      return text;
    }
    const double bound = factor * s;
    if (s * (1 + factor) >= largest)
      return "element " + std::to_string(k) + ": a partial result may overflow";
    if (std::fabs(a - b) <= bound)
      continue;
    std::snprintf(text, sizeof(text),
                  "element %lld: expected %.9g, got %.9g, more than %.3g "
                  "apart (S = %.6g, n = %lld)",
                  static_cast<long long>(k), a, b, bound, s,
                  static_cast<long long>(terms));
    return text;
  }
  return "";
}

/// How many ulps apart a transcendental case's results may be. In f64 it is
/// room for both libraries' errors: CUDA documents up to 2 ulps for several
/// double functions (sin, cos, erf, pow) and glibc does not round them
/// correctly either (a GPU run found results 2 ulps apart in "math f64"). A
/// narrower result is the double result rounded, so results a few f64 ulps
/// apart round at most one ulp apart.
inline int getTranscendentalUlps(DType type) {
  return type == DType::F64 ? 4 : 1;
}

/// Compares result k (StructuredCase::checked[k]) of `c`: within the
/// reassociation bound when `c` lists it, else bitwise (NaN any NaN;
/// getTranscendentalUlps of slack for transcendental cases).
inline std::string compareCaseResult(const StructuredCase &c, size_t k,
                                     const std::vector<uint8_t> &expected,
                                     const std::vector<uint8_t> &actual,
                                     const CaseData &data) {
  const DType type = c.values[c.checked[k]].dtype;
  for (const Reassociated &r : c.reassociated)
    if (r.checked == k)
      return compareReassociated(type, expected, actual, r.terms,
                                 r.magnitude(data));
  return compareCaseData(type, expected, actual,
                         c.transcendental ? getTranscendentalUlps(type) : 0);
}

} // namespace zero::runtime::test

#endif // ZERO_RUNTIME_TEST_CUDA_STRUCTUREDCASES_H
