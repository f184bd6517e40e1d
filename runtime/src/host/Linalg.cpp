//===- Linalg.cpp - the linalg ops of a schedule --------------------------===//
//
// matmul and batch_matmul (OpenBLAS for f32/f64), transpose, broadcast,
// fill, copy, and the checks that turn map, reduce and generic into loop
// nests (Structured.h).
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

/// `value` must be a tensor of `like`'s shape and dtype.
Status expectLike(const OpContext &ctx, const char *key, size_t index,
                  const ValueInfo &value, const ValueInfo &like) {
  ZERO_RETURN_IF_ERROR(ctx.expectTensor(key, index, value));
  ZERO_RETURN_IF_ERROR(ctx.expectDType(key, index, value, like.dtype));
  return ctx.expectShape(key, index, value, like.shape);
}

Status expectTensors(const OpContext &ctx, const char *key,
                     const std::vector<const ValueInfo *> &list) {
  for (size_t i = 0; i < list.size(); ++i)
    ZERO_RETURN_IF_ERROR(ctx.expectTensor(key, i, *list[i]));
  return Status::ok();
}

/// `dims` must be distinct dimensions of a rank-`rank` tensor.
Status expectDimensions(const OpContext &ctx, const char *key,
                        const std::vector<int64_t> &dims, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank)
      return ctx.error(key, "dimension " + std::to_string(dim) +
                                " is out of range for rank " +
                                std::to_string(rank));
    if (seen[dim])
      return ctx.error(key,
                       "dimension " + std::to_string(dim) + " is listed twice");
    seen[dim] = true;
  }
  return Status::ok();
}

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
    const float betaF = s_.zeroInit ? 0.0f : 1.0f;
    const double beta = s_.zeroInit ? 0.0 : 1.0;
#ifdef ZERO_HAVE_OPENBLAS
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

HostOpOr prepareMatmul(const OpContext &ctx, bool batched) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 3));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &a = *v.operands[0], &b = *v.operands[1], &c = *v.operands[2];
  const size_t rank = batched ? 3 : 2;
  for (size_t i = 0; i < 3; ++i)
    if (v.operands[i]->shape.size() != rank)
      return ctx.error("operands[" + std::to_string(i) + "]",
                       ctx.name() + " expects rank-" + std::to_string(rank) +
                           " operands, got shape " +
                           formatShape(v.operands[i]->shape) + " for " +
                           describeValue(*v.operands[i]));
  const size_t o = batched ? 1 : 0;
  StatusOr<GemmLayout> layout = getGemmLayout(ctx.op());
  if (!layout.isOk())
    return ctx.error("indexing_maps", layout.status().message());
  MatmulOp::Spec spec;
  spec.layout = *layout;
  spec.batch = batched ? a.shape[0] : 1;
  spec.m = a.shape[layout->transposeA ? o + 1 : o];
  spec.k = a.shape[layout->transposeA ? o : o + 1];
  spec.n = b.shape[layout->transposeB ? o : o + 1];
  std::vector<int64_t> bShape = layout->transposeB
                                    ? std::vector<int64_t>{spec.n, spec.k}
                                    : std::vector<int64_t>{spec.k, spec.n};
  std::vector<int64_t> cShape = {spec.m, spec.n};
  if (batched) {
    bShape.insert(bShape.begin(), spec.batch);
    cShape.insert(cShape.begin(), spec.batch);
  }
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 1, b, bShape));
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 2, c, cShape));
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], c));
  for (size_t i = 0; i < 2; ++i)
    if (isFloat(v.operands[i]->dtype) != isFloat(c.dtype))
      return ctx.error("operands[" + std::to_string(i) + "]",
                       ctx.name() + " mixes integer and float operands (" +
                           getDTypeName(v.operands[i]->dtype) + " and " +
                           getDTypeName(c.dtype) + ")");
  spec.a = a.id;
  spec.b = b.id;
  spec.c = c.id;
  spec.result = v.results[0]->id;
  spec.aType = a.dtype;
  spec.bType = b.dtype;
  spec.cType = c.dtype;
  StatusOr<bool> ordered = useOrderedMatmul();
  if (!ordered.isOk())
    return ordered.status();
  spec.ordered = *ordered;
  spec.zeroInit = ctx.zeroInit();
  StatusOr<bool> tf32 = roundsOperandsToTf32(ctx.op());
  if (!tf32.isOk())
    return ctx.error("round_operands", tf32.status().message());
  spec.tf32 = *tf32;
  if (spec.tf32 && (a.dtype != DType::F32 || b.dtype != DType::F32 ||
                    c.dtype != DType::F32))
    return ctx.error("round_operands",
                     ctx.name() + " rounds f32 operands to tf32, got " +
                         getDTypeName(a.dtype) + ", " + getDTypeName(b.dtype) +
                         " and " + getDTypeName(c.dtype));
  ensureBlasThreads();
  return std::unique_ptr<ComputeOp>(new MatmulOp(spec));
}

HostOpOr prepareTranspose(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &input = *v.operands[0], &init = *v.operands[1];
  StatusOr<std::vector<int64_t>> perm = ctx.getIntList("permutation");
  if (!perm.isOk())
    return perm.status();
  if (perm->size() != input.shape.size())
    return ctx.error("permutation", "has " + std::to_string(perm->size()) +
                                        " entries for an input of rank " +
                                        std::to_string(input.shape.size()));
  ZERO_RETURN_IF_ERROR(ctx.expectPermutation("permutation", *perm));
  std::vector<int64_t> shape;
  for (int64_t dim : *perm)
    shape.push_back(input.shape[dim]);
  ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 1, init, input.dtype));
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 1, init, shape));
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], init));
  return std::unique_ptr<ComputeOp>(
      new StridedCopyOp(ops::describeStridedCopy(ctx.op(), ctx.values()), 0));
}

HostOpOr prepareBroadcast(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &input = *v.operands[0], &init = *v.operands[1];
  StatusOr<std::vector<int64_t>> dims = ctx.getIntList("dimensions");
  if (!dims.isOk())
    return dims.status();
  const int64_t rank = init.shape.size();
  ZERO_RETURN_IF_ERROR(expectDimensions(ctx, "dimensions", *dims, rank));
  if (static_cast<int64_t>(input.shape.size() + dims->size()) != rank)
    return ctx.error("dimensions", "adds " + std::to_string(dims->size()) +
                                       " dimensions to an input of rank " +
                                       std::to_string(input.shape.size()) +
                                       ", but the destination has rank " +
                                       std::to_string(rank));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims->begin(), dims->end(), d) == dims->end())
      kept.push_back(init.shape[d]);
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 0, input, kept));
  ZERO_RETURN_IF_ERROR(ctx.expectDType("operands", 1, init, input.dtype));
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], init));
  return std::unique_ptr<ComputeOp>(
      new StridedCopyOp(ops::describeStridedCopy(ctx.op(), ctx.values()), 0));
}

HostOpOr prepareFill(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(ctx.expectScalar("operands", 0, *v.operands[0]));
  ZERO_RETURN_IF_ERROR(ctx.expectTensor("operands", 1, *v.operands[1]));
  const ValueInfo &value = *v.operands[0], &init = *v.operands[1];
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], init));
  return std::unique_ptr<ComputeOp>(new FillOp(
      value.id, value.dtype, v.results[0]->id, init.dtype, init.numel));
}

HostOpOr prepareCopy(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  ZERO_RETURN_IF_ERROR(ctx.expectCount("operands", v.operands, 2));
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &input = *v.operands[0], &init = *v.operands[1];
  ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", 1, init, input.shape));
  ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", 0, *v.results[0], init));
  return std::unique_ptr<ComputeOp>(new CopyOp(
      input.id, input.dtype, v.results[0]->id, init.dtype, init.numel));
}

//===----------------------------------------------------------------------===//
// map, reduce, generic
//===----------------------------------------------------------------------===//

/// Checks the results against the destinations (the last `numOutputs`
/// operands) and finishes the nest of the checked op with `body`: its loops
/// and strides from the one lowering (ops/LoopSpace.h).
static HostOpOr finishNest(const OpContext &ctx, const OpValues &v,
                           Body body, size_t numOutputs) {
  ops::LoopSpace space = ops::lowerToLoopSpace(ctx.op(), ctx.values());
  LoopNest nest;
  nest.loopSizes = std::move(space.loopSizes);
  nest.isReduction = std::move(space.isReduction);
  nest.inputs = std::move(space.inputs);
  nest.outputs = std::move(space.outputs);
  nest.body = std::move(body);
  const size_t first = v.operands.size() - numOutputs;
  for (size_t o = 0; o < numOutputs; ++o) {
    const ValueInfo &dest = *v.operands[first + o];
    ZERO_RETURN_IF_ERROR(expectLike(ctx, "results", o, *v.results[o], dest));
    nest.results.push_back(v.results[o]->id);
    nest.outputNumel.push_back(dest.numel);
  }
  return createLoopNestOp(std::move(nest));
}

HostOpOr prepareMap(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  if (v.operands.empty())
    return ctx.error("operands", "linalg.map takes its inputs, then the "
                                 "destination, got no operands");
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, 1));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &init = *v.operands.back();
  std::vector<DType> argumentTypes;
  for (size_t i = 0; i + 1 < v.operands.size(); ++i) {
    ZERO_RETURN_IF_ERROR(
        ctx.expectShape("operands", i, *v.operands[i], init.shape));
    argumentTypes.push_back(v.operands[i]->dtype);
  }
  argumentTypes.push_back(init.dtype);
  StatusOr<Body> body = Body::parse(
      ctx, argumentTypes, "the inputs' elements, then the destination's",
      {init.dtype}, static_cast<int64_t>(init.shape.size()));
  if (!body.isOk())
    return body.status();
  return finishNest(ctx, v, std::move(*body), 1);
}

HostOpOr prepareReduce(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  if (v.operands.empty() || v.operands.size() % 2 != 0)
    return ctx.error("operands", "linalg.reduce takes N inputs, then N "
                                 "destinations, got " +
                                     std::to_string(v.operands.size()) +
                                     " operands");
  const size_t n = v.operands.size() / 2;
  ZERO_RETURN_IF_ERROR(ctx.expectCount("results", v.results, n));
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));
  const ValueInfo &input = *v.operands[0];
  StatusOr<std::vector<int64_t>> dims = ctx.getIntList("dimensions");
  if (!dims.isOk())
    return dims.status();
  const int64_t rank = input.shape.size();
  ZERO_RETURN_IF_ERROR(expectDimensions(ctx, "dimensions", *dims, rank));

  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims->begin(), dims->end(), d) == dims->end())
      kept.push_back(input.shape[d]);

  std::vector<DType> argumentTypes, yieldTypes;
  for (size_t i = 0; i < n; ++i) {
    ZERO_RETURN_IF_ERROR(
        ctx.expectShape("operands", i, *v.operands[i], input.shape));
    argumentTypes.push_back(v.operands[i]->dtype);
  }
  for (size_t i = n; i < 2 * n; ++i) {
    ZERO_RETURN_IF_ERROR(ctx.expectShape("operands", i, *v.operands[i], kept));
    argumentTypes.push_back(v.operands[i]->dtype);
    yieldTypes.push_back(v.operands[i]->dtype);
  }
  StatusOr<Body> body = Body::parse(
      ctx, argumentTypes, "the inputs' elements, then the destinations'",
      yieldTypes, rank);
  if (!body.isOk())
    return body.status();
  return finishNest(ctx, v, std::move(*body), n);
}

HostOpOr prepareGeneric(const OpContext &ctx) {
  ZERO_ASSIGN_VALUES(v, ctx);
  const size_t numOutputs = v.results.size();
  if (numOutputs == 0 || numOutputs > v.operands.size())
    return ctx.error("results", "linalg.generic has one result per "
                                "destination (the last operands), got " +
                                    std::to_string(numOutputs) +
                                    " results "
                                    "for " +
                                    std::to_string(v.operands.size()) +
                                    " operands");
  ZERO_RETURN_IF_ERROR(expectTensors(ctx, "operands", v.operands));

  const std::vector<std::string> &iterators =
      ctx.fields().getStringList(Field::IteratorTypes);
  for (size_t d = 0; d < iterators.size(); ++d) {
    const std::string &type = iterators[d];
    if (type != "parallel" && type != "reduction")
      return ctx.error("iterator_types[" + std::to_string(d) + "]",
                       "expected \"parallel\" or \"reduction\", got \"" + type +
                           "\"");
  }
  const size_t numLoops = iterators.size();

  StatusOr<std::vector<std::vector<int64_t>>> maps =
      ctx.getIntListList("indexing_maps");
  if (!maps.isOk())
    return maps.status();
  if (maps->size() != v.operands.size())
    return ctx.error("indexing_maps",
                     "has " + std::to_string(maps->size()) + " maps for " +
                         std::to_string(v.operands.size()) + " operands");
  std::vector<int64_t> loopSizes(numLoops, -1);
  std::vector<size_t> sizeFrom(numLoops, 0);
  for (size_t j = 0; j < maps->size(); ++j) {
    const std::vector<int64_t> &map = (*maps)[j];
    const ValueInfo &operand = *v.operands[j];
    const std::string field = "indexing_maps[" + std::to_string(j) + "]";
    if (map.size() != operand.shape.size())
      return ctx.error(field, "has " + std::to_string(map.size()) +
                                  " results, but operand " + std::to_string(j) +
                                  ", " + describeValue(operand) +
                                  ", has rank " +
                                  std::to_string(operand.shape.size()));
    std::vector<bool> seen(numLoops, false);
    for (size_t dim = 0; dim < map.size(); ++dim) {
      const int64_t loop = map[dim];
      if (loop < 0 || loop >= static_cast<int64_t>(numLoops))
        return ctx.error(field, "loop dimension " + std::to_string(loop) +
                                    " is out of range for " +
                                    std::to_string(numLoops) + " loops");
      if (seen[loop])
        return ctx.error(field, "loop dimension " + std::to_string(loop) +
                                    " appears twice (only projected "
                                    "permutations are supported)");
      seen[loop] = true;
      if (loopSizes[loop] < 0) {
        loopSizes[loop] = operand.shape[dim];
        sizeFrom[loop] = j;
      } else if (loopSizes[loop] != operand.shape[dim]) {
        return ctx.error(
            field, "loop dimension " + std::to_string(loop) + " has size " +
                       std::to_string(operand.shape[dim]) + " here but " +
                       std::to_string(loopSizes[loop]) + " in operand " +
                       std::to_string(sizeFrom[loop]));
      }
    }
  }
  for (size_t loop = 0; loop < numLoops; ++loop)
    if (loopSizes[loop] < 0)
      return ctx.error("indexing_maps", "loop dimension " +
                                            std::to_string(loop) +
                                            " is indexed by no operand, so "
                                            "its size is unknown");

  const size_t numInputs = v.operands.size() - numOutputs;
  std::vector<DType> argumentTypes, yieldTypes;
  for (size_t j = 0; j < v.operands.size(); ++j) {
    argumentTypes.push_back(v.operands[j]->dtype);
    if (j >= numInputs)
      yieldTypes.push_back(v.operands[j]->dtype);
  }
  StatusOr<Body> body = Body::parse(
      ctx, argumentTypes, "the inputs' elements, then the destinations'",
      yieldTypes, static_cast<int64_t>(numLoops));
  if (!body.isOk())
    return body.status();
  return finishNest(ctx, v, std::move(*body), numOutputs);
}

} // namespace zero::runtime::host
