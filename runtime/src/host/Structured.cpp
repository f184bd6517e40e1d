//===- Structured.cpp - loop nests of linalg.map/reduce/generic -----------===//

#include "Structured.h"

#include "Copy.h"
#include "Elements.h"
#include "Parallel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

namespace zero::runtime::host {

namespace {

/// Iteration points evaluated together: large enough that the per-op
/// dispatch vanishes, small enough that a body's columns stay in cache.
constexpr int64_t kChunk = 512;

int64_t product(const std::vector<int64_t> &sizes,
                const std::vector<int> &dims) {
  int64_t n = 1;
  for (int d : dims)
    n *= sizes[d];
  return n;
}

/// Splits the loops into parallel and reduction ones; false unless every
/// output indexes each parallel loop and no reduction loop: only then does
/// each block of parallel points own its output elements.
bool splitLoops(const LoopNest &nest, std::vector<int> &pDims,
                std::vector<int> &rDims) {
  for (size_t d = 0; d < nest.loopSizes.size(); ++d)
    (nest.isReduction[d] ? rDims : pDims).push_back(static_cast<int>(d));
  for (const LoopOperand &output : nest.outputs) {
    for (int d : rDims)
      if (output.strides[d] != 0)
        return false;
    for (int d : pDims)
      if (output.strides[d] == 0 && nest.loopSizes[d] != 1)
        return false;
  }
  return true;
}

/// Per-thread scratch memory, reused across ops and steps.
struct Workspace {
  std::vector<Scalar> columns;
  std::vector<int64_t> offsets;
  std::vector<int64_t> scratch;
  std::vector<int64_t> index;
  std::vector<int64_t> rIndex;
  std::vector<int64_t> base;
  std::vector<char> contiguous;
  const void *owner = nullptr;
  uint64_t run = 0;
};

Workspace &getWorkspace() {
  static thread_local Workspace workspace;
  return workspace;
}

std::atomic<uint64_t> runCounter{0};

/// The general loop nest, interpreting its body over blocks of points.
class LoopNestOp : public ComputeOp {
public:
  explicit LoopNestOp(LoopNest nest) : nest_(std::move(nest)) {
    sequential_ = !splitLoops(nest_, pDims_, rDims_);
    if (sequential_) { // every loop in order, one point at a time
      pDims_.clear();
      rDims_.clear();
      for (size_t d = 0; d < nest_.loopSizes.size(); ++d)
        pDims_.push_back(static_cast<int>(d));
    }
    chunk_ = sequential_ ? 1 : kChunk;
    numP_ = product(nest_.loopSizes, pDims_);
    numR_ = product(nest_.loopSizes, rDims_);
    const size_t numInputs = nest_.inputs.size();
    needsDestination_ = sequential_ || !rDims_.empty();
    for (size_t o = 0; o < nest_.outputs.size(); ++o)
      needsDestination_ |= nest_.body.usesArgument(numInputs + o);
    for (const auto &index : nest_.body.indexSlots()) {
      auto p = std::find(pDims_.begin(), pDims_.end(), index.first);
      if (p != pDims_.end())
        pIndexSlots_.emplace_back(index.second, p - pDims_.begin());
      else
        rIndexSlots_.emplace_back(
            index.second, std::find(rDims_.begin(), rDims_.end(), index.first) -
                              rDims_.begin());
    }
    for (const LoopOperand &operand : nest_.inputs)
      operands_.push_back(&operand);
    for (const LoopOperand &operand : nest_.outputs)
      operands_.push_back(&operand);
    // Operands whose offset is the linear index over the parallel loops.
    std::vector<int64_t> pSizes;
    for (int d : pDims_)
      pSizes.push_back(nest_.loopSizes[d]);
    const std::vector<int64_t> pStrides = getRowMajorStrides(pSizes);
    allLinear_ = true;
    for (const LoopOperand *operand : operands_) {
      bool linear = true;
      for (size_t d = 0; d < pDims_.size(); ++d)
        linear &= pSizes[d] == 1 || operand->strides[pDims_[d]] == pStrides[d];
      linear_.push_back(linear);
      allLinear_ &= linear;
    }
  }

  Status run(Frame &frame) override {
    std::vector<const void *> inputs;
    for (const LoopOperand &input : nest_.inputs)
      inputs.push_back(frame.tensor(input.value).data);
    std::vector<void *> outputs;
    for (size_t o = 0; o < nest_.outputs.size(); ++o) {
      TensorRef result = frame.tensor(nest_.results[o]);
      TensorRef dest = frame.tensor(nest_.outputs[o].value);
      if (needsDestination_ && result.data != dest.data)
        std::memmove(result.data, dest.data,
                     nest_.outputNumel[o] *
                         getDTypeWidth(nest_.outputs[o].dtype));
      outputs.push_back(result.data);
    }
    BodyBindings bindings;
    nest_.body.bind(frame, bindings);
    if (numP_ == 0 || numR_ == 0)
      return Status::ok();

    const uint64_t runId = ++runCounter;
    Status failure;
    std::mutex mutex;
    const int64_t work =
        sequential_
            ? 0
            : numP_ * numR_ * static_cast<int64_t>(nest_.body.numSteps() + 1);
    parallelBlocks(numP_, chunk_, work, [&](int64_t begin, int64_t end) {
      Status status = runBlock(begin, end, inputs, outputs, bindings, runId);
      if (!status.isOk()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (failure.isOk())
          failure = std::move(status);
      }
    });
    return failure;
  }

private:
  Status runBlock(int64_t begin, int64_t end,
                  const std::vector<const void *> &inputs,
                  const std::vector<void *> &outputs,
                  const BodyBindings &bindings, uint64_t runId) const {
    const Body &body = nest_.body;
    const int64_t chunk = chunk_;
    const int64_t count = end - begin;
    const size_t numInputs = nest_.inputs.size();
    const size_t numOperands = operands_.size();
    Workspace &w = getWorkspace();
    if (w.owner != this || w.run != runId) {
      if (static_cast<int64_t>(w.columns.size()) < body.numSlots() * chunk)
        w.columns.resize(body.numSlots() * chunk);
      if (w.offsets.size() < numOperands * chunk)
        w.offsets.resize(numOperands * chunk);
      if (static_cast<int64_t>(w.scratch.size()) < chunk)
        w.scratch.resize(chunk);
      body.fillInvariants(w.columns.data(), chunk, bindings);
      w.owner = this;
      w.run = runId;
    }
    Scalar *columns = w.columns.data();
    int64_t *offsets = w.offsets.data();
    auto column = [&](int slot) { return columns + slot * chunk; };

    // Offsets of each operand at the block's parallel points. An operand
    // indexed row-major by the parallel loops sits at the block's linear
    // index; the others get an offset per point, filled a line of the
    // innermost parallel loop at a time.
    const std::vector<int64_t> &sizes = nest_.loopSizes;
    const size_t numP = pDims_.size();
    w.index.assign(numP, 0);
    int64_t rest = begin;
    for (size_t d = numP; d-- > 0;) {
      w.index[d] = rest % sizes[pDims_[d]];
      rest /= sizes[pDims_[d]];
    }
    w.contiguous.assign(numOperands, 0);
    w.base.assign(numOperands, 0);
    for (size_t j = 0; j < numOperands; ++j)
      if (linear_[j]) {
        w.contiguous[j] = 1;
        w.base[j] = begin;
      }
    if (numP == 0) {
      for (size_t j = 0; j < numOperands; ++j)
        w.contiguous[j] = 1; // one point, at offset 0
    } else if (!allLinear_ || !pIndexSlots_.empty()) {
      const int innerLoop = pDims_[numP - 1];
      const int64_t innerSize = sizes[innerLoop];
      bool singleLine = true;
      for (int64_t k = 0; k < count;) {
        const int64_t line = std::min(count - k, innerSize - w.index[numP - 1]);
        singleLine &= k == 0 && line == count;
        for (size_t j = 0; j < numOperands; ++j) {
          if (linear_[j])
            continue;
          const std::vector<int64_t> &strides = operands_[j]->strides;
          int64_t start = 0;
          for (size_t d = 0; d < numP; ++d)
            start += w.index[d] * strides[pDims_[d]];
          const int64_t stride = strides[innerLoop];
          int64_t *o = offsets + j * chunk + k;
          for (int64_t i = 0; i < line; ++i)
            o[i] = start + i * stride;
        }
        for (const auto &slot : pIndexSlots_) {
          Scalar *out = column(slot.first) + k;
          const int64_t value = w.index[slot.second];
          const bool inner = slot.second == numP - 1;
          for (int64_t i = 0; i < line; ++i)
            out[i].i = inner ? value + i : value;
        }
        k += line;
        w.index[numP - 1] += line;
        for (size_t d = numP - 1; d > 0 && w.index[d] == sizes[pDims_[d]];
             --d) {
          w.index[d] = 0;
          ++w.index[d - 1];
        }
      }
      for (size_t j = 0; j < numOperands; ++j)
        if (!linear_[j] && singleLine &&
            operands_[j]->strides[innerLoop] == 1) {
          w.contiguous[j] = 1;
          w.base[j] = offsets[j * chunk];
        }
    }
    auto load = [&](const void *data, DType dtype, size_t j, int64_t extra,
                    Scalar *out) {
      const int64_t *o = offsets + j * chunk;
      if (w.contiguous[j]) {
        loadColumn(data, dtype, nullptr, w.base[j] + extra, count, out);
      } else if (extra == 0) {
        loadColumn(data, dtype, o, 0, count, out);
      } else {
        for (int64_t k = 0; k < count; ++k)
          w.scratch[k] = o[k] + extra;
        loadColumn(data, dtype, w.scratch.data(), 0, count, out);
      }
    };

    // The reduction loops in lexicographic order; each output element of
    // the block accumulates in its output argument's column.
    w.rIndex.assign(rDims_.size(), 0);
    std::vector<int64_t> rOffsets(numInputs, 0);
    for (int64_t r = 0; r < numR_; ++r) {
      for (const auto &slot : rIndexSlots_) {
        Scalar *out = column(slot.first);
        for (int64_t k = 0; k < count; ++k)
          out[k].i = w.rIndex[slot.second];
      }
      for (size_t i = 0; i < numInputs; ++i)
        if (body.usesArgument(i))
          load(inputs[i], nest_.inputs[i].dtype, i, rOffsets[i],
               column(static_cast<int>(i)));
      if (r == 0)
        for (size_t o = 0; o < outputs.size(); ++o)
          if (body.usesArgument(numInputs + o))
            load(outputs[o], nest_.outputs[o].dtype, numInputs + o, 0,
                 column(static_cast<int>(numInputs + o)));
      ZERO_RETURN_IF_ERROR(body.eval(columns, chunk, count, bindings));
      if (r + 1 == numR_)
        break;
      for (size_t o = 0; o < outputs.size(); ++o) {
        const int argument = static_cast<int>(numInputs + o);
        const int yielded = body.yieldSlots()[o];
        if (body.usesArgument(argument) && yielded != argument)
          std::memcpy(column(argument), column(yielded),
                      count * sizeof(Scalar));
      }
      for (size_t d = rDims_.size(); d-- > 0;) {
        const int loop = rDims_[d];
        for (size_t i = 0; i < numInputs; ++i)
          rOffsets[i] += nest_.inputs[i].strides[loop];
        if (++w.rIndex[d] < sizes[loop])
          break;
        for (size_t i = 0; i < numInputs; ++i)
          rOffsets[i] -= sizes[loop] * nest_.inputs[i].strides[loop];
        w.rIndex[d] = 0;
      }
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      const size_t j = numInputs + o;
      const int64_t *off = offsets + j * chunk;
      const Scalar *values = column(body.yieldSlots()[o]);
      if (w.contiguous[j])
        storeColumn(outputs[o], nest_.outputs[o].dtype, nullptr, w.base[j],
                    count, values);
      else
        storeColumn(outputs[o], nest_.outputs[o].dtype, off, 0, count, values);
    }
    return Status::ok();
  }

  LoopNest nest_;
  std::vector<const LoopOperand *> operands_; // inputs, then outputs
  std::vector<bool> linear_;
  bool allLinear_ = true;
  std::vector<int> pDims_, rDims_;
  std::vector<std::pair<int, size_t>> pIndexSlots_, rIndexSlots_;
  bool sequential_ = false;
  bool needsDestination_ = false;
  int64_t chunk_ = kChunk;
  int64_t numP_ = 0, numR_ = 0;
};

//===----------------------------------------------------------------------===//
// Fast paths. Each computes exactly what the general nest computes: an f32
// +, -, *, / done in float equals the double result rounded to float.
//===----------------------------------------------------------------------===//

template <typename T> inline T maximumOf(T x, T y) {
  if (std::isnan(x))
    return x;
  if (std::isnan(y))
    return y;
  if (x == y)
    return std::signbit(x) ? y : x;
  return x > y ? x : y;
}

template <typename T> inline T minimumOf(T x, T y) {
  if (std::isnan(x))
    return x;
  if (std::isnan(y))
    return y;
  if (x == y)
    return std::signbit(x) ? x : y;
  return x < y ? x : y;
}

constexpr int64_t kElementBlock = 16384;

/// `yield op(in0, in1)` or `yield op(in0)` over identically shaped,
/// contiguous operands, in native types.
class FastMapOp : public ComputeOp {
public:
  FastMapOp(ScalarOp op, std::vector<int64_t> operands, int64_t result,
            int64_t numel)
      : op_(op), operands_(std::move(operands)), result_(result),
        numel_(numel) {}

  static bool supports(const ScalarOp &op, DType inputType) {
    switch (op.kind) {
    case ScalarOpKind::AddF:
    case ScalarOpKind::SubF:
    case ScalarOpKind::MulF:
    case ScalarOpKind::DivF:
    case ScalarOpKind::MaximumF:
    case ScalarOpKind::MinimumF:
    case ScalarOpKind::NegF:
      return op.resultType == DType::F32;
    case ScalarOpKind::ExtF:
      return op.resultType == DType::F32 &&
             (inputType == DType::BF16 || inputType == DType::F16);
    case ScalarOpKind::TruncF:
      return inputType == DType::F32 &&
             (op.resultType == DType::BF16 || op.resultType == DType::F16);
    default:
      return false;
    }
  }

  Status run(Frame &frame) override {
    void *out = frame.tensor(result_).data;
    const void *a = frame.tensor(operands_[0]).data;
    const void *b = operands_.size() > 1 ? frame.tensor(operands_[1]).data : a;
    switch (op_.kind) {
    case ScalarOpKind::AddF:
      return binary(a, b, out, [](float x, float y) { return x + y; });
    case ScalarOpKind::SubF:
      return binary(a, b, out, [](float x, float y) { return x - y; });
    case ScalarOpKind::MulF:
      return binary(a, b, out, [](float x, float y) { return x * y; });
    case ScalarOpKind::DivF:
      return binary(a, b, out, [](float x, float y) { return x / y; });
    case ScalarOpKind::MaximumF:
      return binary(a, b, out,
                    [](float x, float y) { return maximumOf<float>(x, y); });
    case ScalarOpKind::MinimumF:
      return binary(a, b, out,
                    [](float x, float y) { return minimumOf<float>(x, y); });
    case ScalarOpKind::NegF:
      return unary<float, float>(a, out, [](float x) { return -x; });
    case ScalarOpKind::ExtF:
      if (op_.operandType == DType::BF16)
        return unary<uint16_t, float>(
            a, out, [](uint16_t x) { return ops::widenBF16(x); });
      return unary<uint16_t, float>(
          a, out, [](uint16_t x) { return ops::widenF16(x); });
    case ScalarOpKind::TruncF:
      if (op_.resultType == DType::BF16)
        return unary<float, uint16_t>(
            a, out, [](float x) { return ops::narrowF32ToBF16(x); });
      return unary<float, uint16_t>(
          a, out, [](float x) { return ops::narrowToF16(x); });
    default:
      return Status::ok();
    }
  }

private:
  template <typename Fn>
  Status binary(const void *a, const void *b, void *out, Fn fn) {
    const float *x = static_cast<const float *>(a);
    const float *y = static_cast<const float *>(b);
    float *z = static_cast<float *>(out);
    parallelBlocks(numel_, kElementBlock, numel_, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        z[i] = fn(x[i], y[i]);
    });
    return Status::ok();
  }

  template <typename In, typename Out, typename Fn>
  Status unary(const void *a, void *out, Fn fn) {
    const In *x = static_cast<const In *>(a);
    Out *z = static_cast<Out *>(out);
    parallelBlocks(numel_, kElementBlock, numel_, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        z[i] = fn(x[i]);
    });
    return Status::ok();
  }

  ScalarOp op_;
  std::vector<int64_t> operands_;
  int64_t result_;
  int64_t numel_;
};

/// `yield op(in, init)` reductions (addf, mulf, maximumf, minimumf) on f32 or
/// f64, each output element combined in increasing order of the reduction
/// loops like the general nest.
class FastReduceOp : public ComputeOp {
public:
  FastReduceOp(LoopNest nest, std::vector<int> pDims, std::vector<int> rDims,
               ScalarOpKind kind)
      : nest_(std::move(nest)), pDims_(std::move(pDims)),
        rDims_(std::move(rDims)), kind_(kind) {}

  static bool supports(ScalarOpKind kind) {
    return kind == ScalarOpKind::AddF || kind == ScalarOpKind::MulF ||
           kind == ScalarOpKind::MaximumF || kind == ScalarOpKind::MinimumF;
  }

  Status run(Frame &frame) override {
    const void *in = frame.tensor(nest_.inputs[0].value).data;
    TensorRef result = frame.tensor(nest_.results[0]);
    TensorRef dest = frame.tensor(nest_.outputs[0].value);
    const DType dtype = nest_.outputs[0].dtype;
    if (result.data != dest.data)
      std::memmove(result.data, dest.data,
                   nest_.outputNumel[0] * getDTypeWidth(dtype));
    if (dtype == DType::F32)
      dispatch<float>(static_cast<const float *>(in),
                      static_cast<float *>(result.data));
    else
      dispatch<double>(static_cast<const double *>(in),
                       static_cast<double *>(result.data));
    return Status::ok();
  }

private:
  template <typename T> void dispatch(const T *in, T *out) const {
    switch (kind_) {
    case ScalarOpKind::AddF:
      return reduce(in, out, [](T x, T y) { return x + y; });
    case ScalarOpKind::MulF:
      return reduce(in, out, [](T x, T y) { return x * y; });
    case ScalarOpKind::MaximumF:
      return reduce(in, out, [](T x, T y) { return maximumOf<T>(y, x); });
    default:
      return reduce(in, out, [](T x, T y) { return minimumOf<T>(y, x); });
    }
  }

  /// combine(accumulator, element).
  template <typename T, typename Combine>
  void reduce(const T *in, T *out, Combine combine) const {
    const std::vector<int64_t> &sizes = nest_.loopSizes;
    const std::vector<int64_t> &inStrides = nest_.inputs[0].strides;
    const std::vector<int64_t> &outStrides = nest_.outputs[0].strides;
    const int64_t numP = product(sizes, pDims_);
    const int64_t numR = product(sizes, rDims_);
    if (numP == 0 || numR == 0)
      return;
    // The innermost reduction loop runs as a strided line; the outer ones
    // step an odometer.
    const int lastR = rDims_.back();
    const int64_t lineLength = sizes[lastR];
    const int64_t lineStride = inStrides[lastR];
    const int64_t numLines = numR / lineLength;
    const bool pContiguous =
        !pDims_.empty() && inStrides[pDims_.back()] == 1 && lineStride != 1;
    const int64_t block =
        pContiguous ? 1024 : std::max<int64_t>(1, 4096 / numR);

    auto lineOffset = [&](std::vector<int64_t> &index, int64_t &offset) {
      for (size_t d = rDims_.size() - 1; d-- > 0;) {
        const int loop = rDims_[d];
        offset += inStrides[loop];
        if (++index[d] < sizes[loop])
          return;
        offset -= sizes[loop] * inStrides[loop];
        index[d] = 0;
      }
    };

    parallelBlocks(numP, block, numP * numR, [&](int64_t begin, int64_t end) {
      const int64_t count = end - begin;
      std::vector<int64_t> inOff(count), outOff(count);
      std::vector<int64_t> index(pDims_.size(), 0);
      int64_t rest = begin;
      for (size_t d = pDims_.size(); d-- > 0;) {
        index[d] = rest % sizes[pDims_[d]];
        rest /= sizes[pDims_[d]];
      }
      int64_t inCur = 0, outCur = 0;
      for (size_t d = 0; d < pDims_.size(); ++d) {
        inCur += index[d] * inStrides[pDims_[d]];
        outCur += index[d] * outStrides[pDims_[d]];
      }
      for (int64_t k = 0; k < count; ++k) {
        inOff[k] = inCur;
        outOff[k] = outCur;
        for (size_t d = pDims_.size(); d-- > 0;) {
          const int loop = pDims_[d];
          inCur += inStrides[loop];
          outCur += outStrides[loop];
          if (++index[d] < sizes[loop])
            break;
          inCur -= sizes[loop] * inStrides[loop];
          outCur -= sizes[loop] * outStrides[loop];
          index[d] = 0;
        }
      }
      std::vector<int64_t> rIndex(rDims_.size(), 0);
      if (!pContiguous) {
        // Each output element runs through all its elements in order.
        for (int64_t k = 0; k < count; ++k) {
          T acc = out[outOff[k]];
          std::fill(rIndex.begin(), rIndex.end(), 0);
          int64_t lineStart = 0;
          for (int64_t line = 0; line < numLines; ++line) {
            const T *p = in + inOff[k] + lineStart;
            for (int64_t i = 0; i < lineLength; ++i)
              acc = combine(acc, p[i * lineStride]);
            lineOffset(rIndex, lineStart);
          }
          out[outOff[k]] = acc;
        }
        return;
      }
      // Neighbouring outputs read neighbouring inputs: step all of the
      // block's accumulators through each reduction point in order.
      std::vector<T> acc(count);
      for (int64_t k = 0; k < count; ++k)
        acc[k] = out[outOff[k]];
      bool inContiguous = true;
      for (int64_t k = 1; k < count && inContiguous; ++k)
        inContiguous = inOff[k] == inOff[0] + k;
      int64_t lineStart = 0;
      for (int64_t line = 0; line < numLines; ++line) {
        for (int64_t i = 0; i < lineLength; ++i) {
          const int64_t offset = lineStart + i * lineStride;
          if (inContiguous) {
            const T *p = in + inOff[0] + offset;
            for (int64_t k = 0; k < count; ++k)
              acc[k] = combine(acc[k], p[k]);
          } else {
            for (int64_t k = 0; k < count; ++k)
              acc[k] = combine(acc[k], in[inOff[k] + offset]);
          }
        }
        lineOffset(rIndex, lineStart);
      }
      for (int64_t k = 0; k < count; ++k)
        out[outOff[k]] = acc[k];
    });
  }

  LoopNest nest_;
  std::vector<int> pDims_, rDims_;
  ScalarOpKind kind_;
};

} // namespace

std::unique_ptr<ComputeOp> createLoopNestOp(LoopNest nest) {
  std::vector<int> pDims, rDims;
  const bool blocked = splitLoops(nest, pDims, rDims);
  std::vector<int> arguments;
  const ScalarOp *single = nest.body.getSingleOp(arguments);
  const size_t numInputs = nest.inputs.size();

  if (blocked && single && rDims.empty() && nest.outputs.size() == 1 &&
      numInputs >= 1) {
    const std::vector<int64_t> identity = getRowMajorStrides(nest.loopSizes);
    bool elementwise = nest.outputs[0].strides == identity;
    std::vector<int64_t> operands;
    for (int argument : arguments) {
      if (argument >= static_cast<int>(numInputs) ||
          nest.inputs[argument].strides != identity)
        elementwise = false;
      else
        operands.push_back(nest.inputs[argument].value);
    }
    if (elementwise && !operands.empty() &&
        FastMapOp::supports(*single, nest.inputs[arguments[0]].dtype))
      return std::make_unique<FastMapOp>(*single, std::move(operands),
                                         nest.results[0], nest.outputNumel[0]);
  }

  if (blocked && single && !rDims.empty() && numInputs == 1 &&
      nest.outputs.size() == 1 && FastReduceOp::supports(single->kind) &&
      arguments.size() == 2 && arguments[0] != arguments[1]) {
    const DType dtype = nest.outputs[0].dtype;
    if ((dtype == DType::F32 || dtype == DType::F64) &&
        nest.inputs[0].dtype == dtype)
      return std::make_unique<FastReduceOp>(std::move(nest), std::move(pDims),
                                            std::move(rDims), single->kind);
  }
  return std::make_unique<LoopNestOp>(std::move(nest));
}

} // namespace zero::runtime::host
