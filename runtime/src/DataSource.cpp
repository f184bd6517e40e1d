//===- DataSource.cpp - what the data arguments hold each step ------------===//

#include "zero/runtime/DataSource.h"
#include "zero/runtime/Init.h"

#include "ops/ElementMath.h"

#include <algorithm>
#include <vector>

namespace zero::runtime {

namespace {
bool isTokenArgument(const ArgumentInfo &arg, const ValueInfo &value) {
  return (arg.name == "tokens" || arg.name == "targets") &&
         !isFloat(value.dtype);
}

std::string joinShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Rows of a data tensor: every dimension but the last (one row for a
/// vector of one element per row).
int64_t getRows(const std::vector<int64_t> &shape, int64_t numel) {
  if (shape.empty())
    return 1;
  if (shape.size() == 1)
    return shape[0];
  return shape.back() == 0 ? 0 : numel / shape.back();
}

void storeInt(TensorRef tensor, int64_t index, int64_t value) {
  switch (tensor.dtype) {
  case DType::I32:
    static_cast<int32_t *>(tensor.data)[index] = static_cast<int32_t>(value);
    break;
  case DType::I64:
  case DType::Index:
    static_cast<int64_t *>(tensor.data)[index] = value;
    break;
  case DType::I1:
    static_cast<uint8_t *>(tensor.data)[index] = value != 0;
    break;
  default:
    break;
  }
}

void storeFloat(TensorRef tensor, int64_t index, float value) {
  switch (tensor.dtype) {
  case DType::F32:
    static_cast<float *>(tensor.data)[index] = value;
    break;
  case DType::F64:
    static_cast<double *>(tensor.data)[index] = value;
    break;
  case DType::BF16:
    static_cast<uint16_t *>(tensor.data)[index] = ops::narrowF32ToBF16(value);
    break;
  case DType::F16:
    static_cast<uint16_t *>(tensor.data)[index] = ops::narrowToF16(value);
    break;
  default:
    break;
  }
}
} // namespace

StatusOr<DataSource> DataSource::create(const Schedule &schedule,
                                        const DataOptions &options, int rank,
                                        int worldSize) {
  DataSource source;
  source.seed_ = options.seed;
  source.rank_ = rank;
  source.worldSize_ = worldSize;
  const ArgumentInfo *tokenArg = nullptr;
  const ArgumentInfo *firstData = nullptr;
  int64_t seqLength = 0;
  for (size_t i = 0; i < schedule.arguments().size(); ++i) {
    const ArgumentInfo &arg = schedule.arguments()[i];
    if (arg.kind != ArgumentInfo::Kind::Data)
      continue;
    const ValueInfo &value = schedule.values().values[arg.value];
    source.rowsPerStep_[arg.name] = getRows(value.shape, value.numel);
    source.startRows_[arg.name] = 0;
    if (!firstData)
      firstData = &arg;
    if (!isTokenArgument(arg, value))
      continue;
    if (value.shape.size() != 2 && value.shape.size() != 3)
      return ZERO_ERROR(kInvalidArgument,
                        schedule.name() + ": arguments[" + std::to_string(i) +
                            "]: token data '" + arg.name + "' has shape " +
                            joinShape(value.shape) +
                            "; expected [batch, seq_length] or "
                            "[micro_steps, batch, seq_length]");
    if (tokenArg) {
      const ValueInfo &other = schedule.values().values[tokenArg->value];
      if (other.shape != value.shape || tokenArg->bound != arg.bound)
        return ZERO_ERROR(kInvalidArgument,
                          schedule.name() + ": arguments[" + std::to_string(i) +
                              "]: '" + arg.name + "' differs from '" +
                              tokenArg->name +
                              "' in shape or bound; they are windows of one "
                              "token stream");
      continue;
    }
    tokenArg = &arg;
    seqLength = value.shape.back();
  }
  if (tokenArg) {
    const ValueInfo &value = schedule.values().values[tokenArg->value];
    source.tokensPerStep_ = value.numel;
    if (options.tokenFile.empty()) {
      source.tokens_ = TokenStream::synthetic(options.seed, tokenArg->bound);
    } else {
      StatusOr<TokenStream> stream =
          TokenStream::openFile(options.tokenFile, seqLength, tokenArg->bound);
      if (!stream.isOk())
        return stream.status();
      source.tokens_ = std::move(*stream);
    }
  } else {
    if (!options.tokenFile.empty())
      return ZERO_ERROR(kInvalidArgument,
                        options.tokenFile + ": " + schedule.name() +
                            " has no token data argument (an integer data "
                            "argument named tokens or targets) to read it "
                            "into");
    if (firstData)
      source.tokensPerStep_ =
          getRows(schedule.values().values[firstData->value].shape,
                  schedule.values().values[firstData->value].numel);
  }
  return source;
}

Status DataSource::fill(const ArgumentInfo &arg, int64_t step,
                        TensorRef tensor) const {
  const std::vector<int64_t> &shape = *tensor.shape;
  bool integer = !isFloat(tensor.dtype);
  int64_t first = getGlobalRow(arg.name, step, getRows(shape, tensor.numel));
  if (first < 0)
    return ZERO_ERROR(kOutOfRange, "data: step " + std::to_string(step) +
                                       " of '" + arg.name +
                                       "' reads beyond row 2^53");
  if ((arg.name == "tokens" || arg.name == "targets") && integer) {
    // [B, S], or [G, B, S] with gradient accumulation: row g * B + b of a
    // per-rank batch of G * B rows.
    int64_t seqLength = shape.back();
    int64_t rows = seqLength == 0 ? 0 : tensor.numel / seqLength;
    bool targets = arg.name == "targets";
    std::vector<int32_t> window(static_cast<size_t>(seqLength));
    for (int64_t row = 0; row < rows; ++row) {
      tokens_->window(first + row, seqLength, targets ? nullptr : window.data(),
                      targets ? window.data() : nullptr);
      for (int64_t j = 0; j < seqLength; ++j)
        storeInt(tensor, row * seqLength + j, window[j]);
    }
    return Status::ok();
  }
  int64_t rows = getRows(shape, tensor.numel);
  int64_t perRow = rows == 0 ? 0 : tensor.numel / rows;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t global = first + row;
    for (int64_t j = 0; j < perRow; ++j) {
      int64_t index = row * perRow + j;
      if (integer)
        storeInt(tensor, index,
                 syntheticInt(seed_, arg.name, global, j, arg.bound));
      else
        storeFloat(tensor, index, syntheticFloat(seed_, arg.name, global, j));
    }
  }
  return Status::ok();
}

int64_t DataSource::getGlobalRow(const std::string &name, int64_t step,
                                 int64_t rows) const {
  auto start = startRows_.find(name);
  int64_t before = start == startRows_.end() ? 0 : start->second;
  // In 128 bits: the rows of all steps outgrow int64 only on absurd steps,
  // which fill refuses rather than wrap.
  __int128 row =
      before +
      (static_cast<__int128>(step - startStep_) * worldSize_ + rank_) * rows;
  return row < 0 || row > kMaxDataRows ? -1 : static_cast<int64_t>(row);
}

std::map<std::string, int64_t> DataSource::rowsRead(int64_t step) const {
  std::map<std::string, int64_t> rows;
  for (const auto &[name, perStep] : rowsPerStep_)
    rows[name] = std::min<__int128>(
        startRows_.at(name) +
            static_cast<__int128>(step - startStep_) * worldSize_ * perStep,
        kMaxDataRows);
  return rows;
}

Status DataSource::resumeAt(int64_t step,
                            const std::map<std::string, int64_t> &rowsRead) {
  for (const auto &[name, rows] : rowsRead)
    if (!rowsPerStep_.count(name))
      return ZERO_ERROR(kFailedPrecondition,
                        "data: rows of '" + name +
                            "' were read, but the schedule has no data "
                            "argument of that name");
  for (const auto &[name, perStep] : rowsPerStep_) {
    auto rows = rowsRead.find(name);
    if (rows == rowsRead.end())
      return ZERO_ERROR(kFailedPrecondition,
                        "data: no rows read of data argument '" + name + "'");
    if (rows->second < 0 || rows->second > kMaxDataRows)
      return ZERO_ERROR(kFailedPrecondition,
                        "data: " + std::to_string(rows->second) +
                            " rows read of '" + name + "'; expected 0 to 2^53");
  }
  startStep_ = step;
  startRows_ = rowsRead;
  return Status::ok();
}

DataFiller DataSource::filler() const {
  return [this](const ArgumentInfo &arg, int64_t step, TensorRef tensor) {
    return fill(arg, step, tensor);
  };
}

} // namespace zero::runtime
