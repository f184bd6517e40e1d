//===- DataSource.cpp - what the data arguments hold each step ------------===//

#include "zero/runtime/DataSource.h"
#include "zero/runtime/Init.h"

#include "io/ArrayFile.h"
#include "ops/ElementMath.h"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <vector>

namespace zero::runtime {

namespace {
bool isTokenArgument(const ArgumentInfo &arg, const ValueInfo &value) {
  return (arg.name == "tokens" || arg.name == "targets") &&
         !isFloat(value.dtype);
}

using io::formatShape;

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

void storeFloat(TensorRef tensor, int64_t index, double value) {
  switch (tensor.dtype) {
  case DType::F32:
    static_cast<float *>(tensor.data)[index] = static_cast<float>(value);
    break;
  case DType::F64:
    static_cast<double *>(tensor.data)[index] = value;
    break;
  case DType::BF16:
    static_cast<uint16_t *>(tensor.data)[index] = ops::narrowToBF16(value);
    break;
  case DType::F16:
    static_cast<uint16_t *>(tensor.data)[index] = ops::narrowToF16(value);
    break;
  default:
    break;
  }
}
} // namespace

/// An argument fed from an array file.
struct DataSource::ArrayArgument {
  io::ArrayFile file;
  /// Samples the argument holds per rank and step.
  int64_t samplesPerStep = 0;
};

struct DataSource::PermutationCache {
  std::mutex mutex;
  int64_t epoch = -1;
  std::vector<int64_t> rows;
};

DataSource::DataSource() : permutation_(new PermutationCache) {}
DataSource::DataSource(DataSource &&) noexcept = default;
DataSource &DataSource::operator=(DataSource &&) noexcept = default;
DataSource::~DataSource() = default;

/// Epoch `epoch`'s permutation of `samples` rows (getArrayRow).
static std::vector<int64_t> shuffleRows(uint64_t seed, int64_t samples,
                                        int64_t epoch) {
  std::vector<int64_t> rows(static_cast<size_t>(samples));
  std::iota(rows.begin(), rows.end(), int64_t(0));
  for (int64_t i = samples - 1; i > 0; --i)
    std::swap(rows[i], rows[syntheticInt(seed, "shuffle", epoch, i, i + 1)]);
  return rows;
}

int64_t getArrayRow(uint64_t seed, bool shuffle, int64_t samples,
                    int64_t sample) {
  if (!shuffle)
    return sample % samples;
  return shuffleRows(seed, samples, sample / samples)[sample % samples];
}

int64_t DataSource::rowOf(int64_t samples, int64_t sample) const {
  if (!shuffle_)
    return sample % samples;
  std::lock_guard<std::mutex> lock(permutation_->mutex);
  const int64_t epoch = sample / samples;
  if (permutation_->epoch != epoch) {
    permutation_->rows = shuffleRows(seed_, samples, epoch);
    permutation_->epoch = epoch;
  }
  return permutation_->rows[sample % samples];
}

Status DataSource::openArrays(const Schedule &schedule,
                              const DataOptions &options) {
  std::string dataNames;
  for (const ArgumentInfo &arg : schedule.arguments())
    if (arg.kind == ArgumentInfo::Kind::Data)
      dataNames += (dataNames.empty() ? "" : ", ") + arg.name;
  const std::string &step = schedule.name();
  int64_t samples = -1;
  std::string samplesFrom;
  for (const auto &[name, path] : options.arrayFiles) {
    const ArgumentInfo *arg = nullptr;
    for (const ArgumentInfo &candidate : schedule.arguments())
      if (candidate.kind == ArgumentInfo::Kind::Data && candidate.name == name)
        arg = &candidate;
    if (!arg)
      return ZERO_ERROR(kInvalidArgument,
                        "--data " + name + "=" + path + ": " + step +
                            " has no data argument '" + name +
                            "' (its data arguments: " +
                            (dataNames.empty() ? "none" : dataNames) + ")");
    StatusOr<io::ArrayFile> file = io::ArrayFile::open(path, name);
    if (!file.isOk())
      return file.status();
    const ValueInfo &value = schedule.values().values[arg->value];
    // The argument is [samples per step, sample shape...], or with gradient
    // accumulation [micro steps, samples, sample shape...].
    const std::vector<int64_t> &shape = file->shape();
    const std::vector<int64_t> sample(shape.begin() + 1, shape.end());
    const size_t lead = value.shape.size() >= sample.size()
                            ? value.shape.size() - sample.size()
                            : 0;
    if (value.shape.size() < sample.size() + 1 ||
        !std::equal(sample.begin(), sample.end(), value.shape.begin() + lead))
      return ZERO_ERROR(kInvalidArgument,
                        path + ": samples of shape " + formatShape(sample) +
                            " (the array is " + formatShape(shape) +
                            "), but data argument '" + name + "' of " + step +
                            " is " + formatShape(value.shape) +
                            ", whose samples are " +
                            formatShape(std::vector<int64_t>(
                                value.shape.begin() + std::min<size_t>(
                                                          1, value.shape.size()),
                                value.shape.end())));
    if (file->isFloat() != isFloat(value.dtype))
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + file->dtype() + " data for " +
                            getDTypeName(value.dtype) + " argument '" + name +
                            "' of " + step + " (float data feeds float "
                            "arguments, integer data integer ones)");
    if (!file->isFloat() && arg->bound > 0) {
      const int64_t numel = file->samples() * file->sampleNumel();
      for (int64_t i = 0; i < numel; ++i) {
        int64_t id = file->loadInt(i);
        if (id < 0 || id >= arg->bound)
          return ZERO_ERROR(
              kOutOfRange,
              path + ": value " + std::to_string(id) + " of sample " +
                  std::to_string(i / std::max<int64_t>(file->sampleNumel(), 1)) +
                  " is outside [0, " + std::to_string(arg->bound) +
                  "), the bound of data argument '" + name + "'");
      }
    }
    if (file->samples() == 0)
      return ZERO_ERROR(kInvalidArgument, path + ": no samples");
    if (samples >= 0 && file->samples() != samples)
      return ZERO_ERROR(kInvalidArgument,
                        path + ": " + std::to_string(file->samples()) +
                            " samples, but " + samplesFrom + " has " +
                            std::to_string(samples) +
                            "; every array of a dataset holds one row per "
                            "sample");
    samples = file->samples();
    samplesFrom = path;
    auto array = std::make_unique<ArrayArgument>(
        ArrayArgument{std::move(*file), 0});
    array->samplesPerStep =
        value.numel / std::max<int64_t>(array->file.sampleNumel(), 1);
    rowsPerStep_[name] = array->samplesPerStep;
    arrays_[name] = std::move(array);
  }
  if (!arrays_.empty())
    for (const ArgumentInfo &arg : schedule.arguments())
      if (arg.kind == ArgumentInfo::Kind::Data && !arrays_.count(arg.name))
        return ZERO_ERROR(kInvalidArgument,
                          "--data: data argument '" + arg.name + "' of " +
                              step + " has no array file, while " +
                              arrays_.begin()->first +
                              " has one; give each its file (--data " +
                              arg.name + "=FILE)");
  return Status::ok();
}

Status DataSource::fillArray(const ArrayArgument &array,
                             const ArgumentInfo &arg, int64_t step,
                             TensorRef tensor) const {
  const int64_t first = getGlobalRow(arg.name, step, array.samplesPerStep);
  if (first < 0)
    return ZERO_ERROR(kOutOfRange, "data: step " + std::to_string(step) +
                                       " of '" + arg.name +
                                       "' reads beyond sample 2^53");
  const io::ArrayFile &file = array.file;
  const int64_t perSample = file.sampleNumel();
  for (int64_t s = 0; s < array.samplesPerStep; ++s) {
    const int64_t row = rowOf(file.samples(), first + s);
    for (int64_t j = 0; j < perSample; ++j) {
      const int64_t from = row * perSample + j, to = s * perSample + j;
      if (file.isFloat())
        storeFloat(tensor, to, file.loadFloat(from));
      else
        storeInt(tensor, to, file.loadInt(from));
    }
  }
  return Status::ok();
}

StatusOr<DataSource> DataSource::create(const Schedule &schedule,
                                        const DataOptions &options, int rank,
                                        int worldSize) {
  DataSource source;
  source.seed_ = options.seed;
  source.rank_ = rank;
  source.worldSize_ = worldSize;
  source.shuffle_ = options.shuffle;
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
    if (!isTokenArgument(arg, value) || options.arrayFiles.count(arg.name))
      continue;
    if (value.shape.size() != 2 && value.shape.size() != 3)
      return ZERO_ERROR(kInvalidArgument,
                        schedule.name() + ": arguments[" + std::to_string(i) +
                            "]: token data '" + arg.name + "' has shape " +
                            formatShape(value.shape) +
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
  ZERO_RETURN_IF_ERROR(source.openArrays(schedule, options));
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
    if (firstData && source.arrays_.count(firstData->name))
      source.tokensPerStep_ = source.arrays_[firstData->name]->samplesPerStep;
    else if (firstData)
      source.tokensPerStep_ =
          getRows(schedule.values().values[firstData->value].shape,
                  schedule.values().values[firstData->value].numel);
  }
  return source;
}

Status DataSource::fill(const ArgumentInfo &arg, int64_t step,
                        TensorRef tensor) const {
  auto array = arrays_.find(arg.name);
  if (array != arrays_.end())
    return fillArray(*array->second, arg, step, tensor);
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
