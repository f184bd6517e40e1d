//===- Linalg.cpp - the linalg ops of a schedule --------------------------===//
//
// matmul and batch_matmul (OpenBLAS for f32/f64), transpose, broadcast,
// fill, copy, and map, reduce and generic as loop nests (Structured.h), each
// built from an instruction ops/Check.h has checked.
//
//===----------------------------------------------------------------------===//

#include "Copy.h"
#include "Elements.h"
#include "HostOps.h"
#include "Parallel.h"
#include "ScalarOps.h"
#include "Structured.h"

#include "Gemm.h"

#ifdef ZERO_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace zero::runtime::host {

namespace {

//===----------------------------------------------------------------------===//
// matmul, batch_matmul
//===----------------------------------------------------------------------===//

/// ZERO_HOST_MATMUL=ordered: every matmul takes the element loop, which adds
/// the products into the init in increasing k, rounding after each
/// operation, instead of OpenBLAS (whose micro-kernels sum in registers and
/// add to the init once). Then a product whose reduction is split and chained
/// through the init (zero-tile-linear) gives the bits of the unsplit one.
/// Empty or "blas": OpenBLAS for f32/f64, and for bf16/f16 operands with an
/// f32 init (widened exactly to f32 first). Anything else is an error.
static StatusOr<bool> useOrderedMatmul() {
  static const char *value = std::getenv("ZERO_HOST_MATMUL");
  if (!value || !*value || std::string(value) == "blas")
    return false;
  if (std::string(value) == "ordered")
    return true;
  return ZERO_ERROR(kInvalidArgument, "ZERO_HOST_MATMUL='" +
                                          std::string(value) +
                                          "': expected 'ordered' or 'blas'");
}

/// C += A B per batch, into the result (a copy of C where it lives apart);
/// A and B each possibly stored transposed (Gemm.h).
class MatmulOp : public ComputeOp {
public:
  struct Spec {
    int64_t a, b, c, result;
    DType aType, bType, cType;
    int64_t batch, m, n, k;
    GemmLayout layout;
    bool ordered = false;
    /// The init is zeros nothing else reads (Instruction::zeroInit): C is
    /// not read, the product starts from zero (BLAS's beta = 0).
    bool zeroInit = false;
    /// f32 operands rounded to tf32 before they are multiplied.
    bool tf32 = false;
  };
  explicit MatmulOp(Spec spec) : s_(spec) {}

  Status run(Frame &frame) override {
    const char *a = static_cast<const char *>(frame.tensor(s_.a).data);
    const char *b = static_cast<const char *>(frame.tensor(s_.b).data);
    char *result = static_cast<char *>(frame.tensor(s_.result).data);
    const void *c = frame.tensor(s_.c).data;
    const int64_t cBytes = s_.batch * s_.m * s_.n * getDTypeWidth(s_.cType);
    if (s_.m == 0 || s_.n == 0 || s_.k == 0) {
      if (s_.zeroInit)
        std::memset(result, 0, cBytes);
      else if (c != result)
        std::memmove(result, c, cBytes);
      return Status::ok();
    }
    // A zero init is not read: the products start from zero (beta = 0).
    if (!s_.zeroInit && c != result)
      std::memmove(result, c, cBytes);
#ifdef ZERO_HAVE_OPENBLAS
    const float betaF = s_.zeroInit ? 0.0f : 1.0f;
    const double beta = s_.zeroInit ? 0.0 : 1.0;
    const bool allF32 = !s_.ordered && !s_.tf32 && s_.aType == DType::F32 &&
                        s_.bType == DType::F32 && s_.cType == DType::F32;
    const bool allF64 = !s_.ordered && s_.aType == DType::F64 &&
                        s_.bType == DType::F64 && s_.cType == DType::F64;
    // 16-bit operands with f32 accumulation: widened exactly to f32, then
    // the f32 product.
    auto widens = [](DType t) {
      return t == DType::F32 || t == DType::BF16 || t == DType::F16;
    };
    const bool widened = !s_.ordered && !allF32 && s_.cType == DType::F32 &&
                         widens(s_.aType) && widens(s_.bType);
#endif
    // Without OpenBLAS (a GPU machine's minimal build) every type takes the
    // element loop.
    for (int64_t i = 0; i < s_.batch; ++i) {
      const int64_t aOff = i * s_.m * s_.k, bOff = i * s_.k * s_.n,
                    cOff = i * s_.m * s_.n;
#ifdef ZERO_HAVE_OPENBLAS
      if (allF32)
        cblas_sgemm(CblasRowMajor, transA(), transB(), s_.m, s_.n, s_.k, 1.0f,
                    reinterpret_cast<const float *>(a) + aOff, lda(),
                    reinterpret_cast<const float *>(b) + bOff, ldb(), betaF,
                    reinterpret_cast<float *>(result) + cOff, s_.n);
      else if (allF64)
        cblas_dgemm(CblasRowMajor, transA(), transB(), s_.m, s_.n, s_.k, 1.0,
                    reinterpret_cast<const double *>(a) + aOff, lda(),
                    reinterpret_cast<const double *>(b) + bOff, ldb(), beta,
                    reinterpret_cast<double *>(result) + cOff, s_.n);
      else if (widened)
        runWidened(a, aOff, b, bOff, reinterpret_cast<float *>(result) + cOff,
                   betaF);
      else
#endif
        runElementwise(a, aOff, b, bOff, result, cOff);
    }
    return Status::ok();
  }

private:
#ifdef ZERO_HAVE_OPENBLAS
  /// C (f32) = A B + beta C for f32, bf16 or f16 operands: each widened
  /// exactly to f32, or f32 ones rounded to tf32 (scratch of this run), then
  /// cblas_sgemm.
  void runWidened(const void *a, int64_t aOff, const void *b, int64_t bOff,
                  float *c, float beta) const {
    std::vector<float> aScratch, bScratch;
    const bool tf32 = s_.tf32;
    auto widen = [tf32](const void *data, DType type, int64_t offset,
                        int64_t count, std::vector<float> &scratch) {
      if (type == DType::F32 && !tf32)
        return static_cast<const float *>(data) + offset;
      scratch.resize(count);
      loadFloats(data, type, offset, count, scratch.data());
      if (tf32)
        for (float &x : scratch)
          x = ops::roundF32ToTF32(x);
      return static_cast<const float *>(scratch.data());
    };
    const float *aWide = widen(a, s_.aType, aOff, s_.m * s_.k, aScratch);
    const float *bWide = widen(b, s_.bType, bOff, s_.k * s_.n, bScratch);
    cblas_sgemm(CblasRowMajor, transA(), transB(), s_.m, s_.n, s_.k, 1.0f,
                aWide, lda(), bWide, ldb(), beta, c, s_.n);
  }

  /// BLAS's view of the operands (row-major): A [m, k] or, transposed,
  /// [k, m]; B [k, n] or [n, k].
  CBLAS_TRANSPOSE transA() const {
    return s_.layout.transposeA ? CblasTrans : CblasNoTrans;
  }
  CBLAS_TRANSPOSE transB() const {
    return s_.layout.transposeB ? CblasTrans : CblasNoTrans;
  }
  int64_t lda() const { return s_.layout.transposeA ? s_.m : s_.k; }
  int64_t ldb() const { return s_.layout.transposeB ? s_.k : s_.n; }
#endif

  /// linalg.matmul's body for other types: the operands cast to C's type,
  /// then c = c + a * b rounded after each op, k in increasing order.
  void runElementwise(const void *a, int64_t aOff, const void *b, int64_t bOff,
                      void *c, int64_t cOff) const {
    const int64_t m = s_.m, n = s_.n, k = s_.k;
    const DType ct = s_.cType;
    // B as [k, n], read in place or through its transpose.
    std::vector<Scalar> bCast(k * n), row(n);
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        bCast[p * n + j] = roundOperand(castScalar(
            loadElement(b, s_.bType,
                        bOff + (s_.layout.transposeB ? j * k + p : p * n + j)),
            s_.bType, ct));
    const bool floats = isFloat(ct);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j)
        row[j] = s_.zeroInit ? Scalar{} : loadElement(c, ct, cOff + i * n + j);
      for (int64_t p = 0; p < k; ++p) {
        Scalar x = roundOperand(castScalar(
            loadElement(a, s_.aType,
                        aOff + (s_.layout.transposeA ? p * m + i : i * k + p)),
            s_.aType, ct));
        const Scalar *bRow = bCast.data() + p * n;
        for (int64_t j = 0; j < n; ++j) {
          if (floats) {
            row[j].f =
                roundFloat(row[j].f + roundFloat(x.f * bRow[j].f, ct), ct);
          } else {
            uint64_t product =
                static_cast<uint64_t>(x.i) * static_cast<uint64_t>(bRow[j].i);
            int64_t term = wrapInt(static_cast<int64_t>(product), ct);
            row[j].i =
                wrapInt(static_cast<int64_t>(static_cast<uint64_t>(row[j].i) +
                                             static_cast<uint64_t>(term)),
                        ct);
          }
        }
      }
      for (int64_t j = 0; j < n; ++j)
        storeElement(c, ct, cOff + i * n + j, row[j]);
    }
  }

  /// An operand element as the product reads it: rounded to tf32 where the
  /// GEMM says so (its operands are f32, exact in the double it is held in).
  Scalar roundOperand(Scalar x) const {
    if (s_.tf32)
      x.f = ops::roundF32ToTF32(static_cast<float>(x.f));
    return x;
  }

  Spec s_;
};

//===----------------------------------------------------------------------===//
// fill, copy
//===----------------------------------------------------------------------===//

class FillOp : public ComputeOp {
public:
  FillOp(int64_t value, DType from, int64_t result, DType to, int64_t numel)
      : value_(value), from_(from), result_(result), to_(to), numel_(numel) {}
  Status run(Frame &frame) override {
    fillElements(frame.tensor(result_).data, to_, numel_,
                 castScalar(frame.scalar(value_), from_, to_));
    return Status::ok();
  }

private:
  int64_t value_;
  DType from_;
  int64_t result_;
  DType to_;
  int64_t numel_;
};

class CopyOp : public ComputeOp {
public:
  CopyOp(int64_t source, DType from, int64_t result, DType to, int64_t numel)
      : source_(source), from_(from), result_(result), to_(to), numel_(numel) {}
  Status run(Frame &frame) override {
    const void *source = frame.tensor(source_).data;
    void *result = frame.tensor(result_).data;
    if (from_ == to_) {
      if (source != result)
        std::memmove(result, source, numel_ * getDTypeWidth(to_));
      return Status::ok();
    }
    for (int64_t i = 0; i < numel_; ++i)
      storeElement(result, to_, i,
                   castScalar(loadElement(source, from_, i), from_, to_));
    return Status::ok();
  }

private:
  int64_t source_;
  DType from_;
  int64_t result_;
  DType to_;
  int64_t numel_;
};

} // namespace

HostOpOr buildMatmul(const OpContext &ctx, const Instruction &inst) {
  const ValueTable &values = ctx.values();
  const GemmShape gemm = getGemmShape(inst, values);
  const ValueInfo &a = values.values[inst.operands[0]];
  const ValueInfo &b = values.values[inst.operands[1]];
  const ValueInfo &c = values.values[inst.operands[2]];
  MatmulOp::Spec spec;
  spec.layout = gemm.layout;
  spec.batch = gemm.batch;
  spec.m = gemm.m;
  spec.n = gemm.n;
  spec.k = gemm.k;
  spec.a = a.id;
  spec.b = b.id;
  spec.c = c.id;
  spec.result = inst.results[0];
  spec.aType = a.dtype;
  spec.bType = b.dtype;
  spec.cType = c.dtype;
  StatusOr<bool> ordered = useOrderedMatmul();
  if (!ordered.isOk())
    return ordered.status();
  spec.ordered = *ordered;
  spec.zeroInit = inst.zeroInit;
  StatusOr<bool> tf32 = roundsOperandsToTf32(inst); // checked
  spec.tf32 = tf32.isOk() && *tf32;
  ensureBlasThreads();
  return std::unique_ptr<ComputeOp>(new MatmulOp(spec));
}

HostOpOr buildStridedCopy(const OpContext &ctx) {
  ops::StridedCopy copy = ops::describeStridedCopy(ctx.op(), ctx.values());
  const int64_t destBytes =
      copy.dest >= 0 ? ctx.values().values[copy.dest].bytes() : 0;
  return std::unique_ptr<ComputeOp>(
      new StridedCopyOp(std::move(copy), destBytes));
}

HostOpOr buildFill(const OpContext &ctx) {
  const ValueInfo &value = ctx.values().values[ctx.op().operands[0]];
  const ValueInfo &result = ctx.values().values[ctx.op().results[0]];
  return std::unique_ptr<ComputeOp>(
      new FillOp(value.id, value.dtype, result.id, result.dtype, result.numel));
}

HostOpOr buildCopy(const OpContext &ctx) {
  const ValueInfo &input = ctx.values().values[ctx.op().operands[0]];
  const ValueInfo &result = ctx.values().values[ctx.op().results[0]];
  return std::unique_ptr<ComputeOp>(
      new CopyOp(input.id, input.dtype, result.id, result.dtype, result.numel));
}

HostOpOr buildLoopNest(const OpContext &ctx, ops::BodyProgram body) {
  // Loops and strides from the one lowering (ops/LoopSpace.h); the results
  // are the last operands' (the destinations') new values.
  ops::LoopSpace space = ops::lowerToLoopSpace(ctx.op(), ctx.values());
  LoopNest nest;
  nest.loopSizes = std::move(space.loopSizes);
  nest.isReduction = std::move(space.isReduction);
  nest.inputs = std::move(space.inputs);
  nest.outputs = std::move(space.outputs);
  nest.body = Body(std::move(body));
  for (int64_t result : ctx.op().results) {
    nest.results.push_back(result);
    nest.outputNumel.push_back(ctx.values().values[result].numel);
  }
  return createLoopNestOp(std::move(nest));
}

} // namespace zero::runtime::host
