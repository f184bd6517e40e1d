//===- Initialize.cpp - the arguments' first values, and their export -----===//
//
// Every rank generates the full parameter with a counter-based generator
// keyed by (seed, name, element) and keeps the part it owns, so the initial
// model is the same for every world size and stage (docs/Runtime.md,
// "Initialization"). Export goes the other way: the owned parts are
// all-gathered back into full fp32 tensors.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Executor.h"
#include "zero/runtime/Init.h"

#include "ops/ElementMath.h"

#include "ops/Quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace zero::runtime {

namespace {

std::string joinShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The first element of `tensor` that is NaN or infinite, as an error naming
/// it by flat and multi-dimensional index: a non-finite initial weight would
/// only show later as a non-finite loss.
} // namespace

void storeFloats(const float *values, int64_t count, TensorRef dst,
                 int64_t offset) {
  for (int64_t i = 0; i < count; ++i) {
    float v = values[i];
    switch (dst.dtype) {
    case DType::F32:
      static_cast<float *>(dst.data)[offset + i] = v;
      break;
    case DType::F64:
      static_cast<double *>(dst.data)[offset + i] = v;
      break;
    case DType::BF16:
      static_cast<uint16_t *>(dst.data)[offset + i] = ops::narrowF32ToBF16(v);
      break;
    case DType::F16:
      static_cast<uint16_t *>(dst.data)[offset + i] = ops::narrowToF16(v);
      break;
    default:
      break; // parameters and states are floats (Schedule checks it)
    }
  }
}

std::vector<float> loadFloats(TensorRef src, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    switch (src.dtype) {
    case DType::F32:
      out[i] = static_cast<const float *>(src.data)[i];
      break;
    case DType::F64:
      out[i] = static_cast<float>(static_cast<const double *>(src.data)[i]);
      break;
    case DType::BF16:
      out[i] = ops::widenBF16(static_cast<const uint16_t *>(src.data)[i]);
      break;
    case DType::F16:
      out[i] = ops::widenF16(static_cast<const uint16_t *>(src.data)[i]);
      break;
    default:
      out[i] = 0;
    }
  }
  return out;
}

std::vector<float> loadValueFloats(const ValueInfo &value, const void *stored) {
  TensorRef elements{const_cast<void *>(stored), value.dtype, &value.shape,
                     value.numel};
  std::vector<std::byte> dequantized;
  if (const std::optional<QuantizedStorage> &q = value.quantized) {
    dequantized.resize(
        static_cast<size_t>(value.numel * getDTypeWidth(value.dtype)));
    const auto *packed = static_cast<const uint8_t *>(stored);
    // Packed as one operand of the quantized all-gather: scales, values.
    quantize::dequantizeElements(
        packed + getPackedScaleBytes(value.numel, q->blockSize), packed,
        value.numel, static_cast<int>(q->bits), q->blockSize,
        quantize::getQuantizedFormat(value.dtype), dequantized.data());
    elements.data = dequantized.data();
  }
  return loadFloats(elements, value.numel);
}

void storeValueFloats(const float *values, const ValueInfo &value,
                      void *stored) {
  const std::optional<QuantizedStorage> &q = value.quantized;
  std::vector<std::byte> rounded;
  if (q)
    rounded.resize(
        static_cast<size_t>(value.numel * getDTypeWidth(value.dtype)));
  TensorRef elements{q ? rounded.data() : stored, value.dtype, &value.shape,
                     value.numel};
  storeFloats(values, value.numel, elements);
  if (!q)
    return;
  // The dtype's elements quantized, as the quantized all-gather quantizes
  // an unquantized shard: the gathered values are the same.
  auto *packed = static_cast<uint8_t *>(stored);
  quantize::quantizeElements(
      rounded.data(), quantize::getQuantizedFormat(value.dtype), value.numel,
      static_cast<int>(q->bits), q->blockSize,
      packed + getPackedScaleBytes(value.numel, q->blockSize), packed);
}

namespace {

/// Every element of `dst` set to `value`.
void storeValue(double value, TensorRef dst) {
  for (int64_t i = 0; i < dst.numel; ++i) {
    switch (dst.dtype) {
    case DType::F32:
      static_cast<float *>(dst.data)[i] = static_cast<float>(value);
      break;
    case DType::F64:
      static_cast<double *>(dst.data)[i] = value;
      break;
    case DType::BF16:
      static_cast<uint16_t *>(dst.data)[i] = ops::narrowToBF16(value);
      break;
    case DType::F16:
      static_cast<uint16_t *>(dst.data)[i] = ops::narrowToF16(value);
      break;
    case DType::I64:
    case DType::Index:
      static_cast<int64_t *>(dst.data)[i] = static_cast<int64_t>(value);
      break;
    case DType::I32:
      static_cast<int32_t *>(dst.data)[i] = static_cast<int32_t>(value);
      break;
    case DType::I1:
      static_cast<uint8_t *>(dst.data)[i] = value != 0;
      break;
    }
  }
}

/// Each tiled weight's last tile, by argument index: the weight is
/// complete, and exported, after it.
std::map<std::string, size_t> getLastTiles(const Schedule &s) {
  std::map<std::string, size_t> lastTile;
  for (size_t i = 0; i < s.arguments().size(); ++i)
    if (s.arguments()[i].kind == ArgumentInfo::Kind::Param &&
        s.arguments()[i].tile)
      lastTile[s.arguments()[i].tile->param] = i;
  return lastTile;
}

} // namespace

Status Executor::initialize(const InitOptions &options) {
  const Schedule &s = *schedule_;
  const int64_t rank = communicator_.rank();

  // Checked before anything is written, the same on every rank: a
  // parameter with no initializer (a frozen tensor that zero-import-torch
  // marked: a module's buffer) takes its values from the file only.
  if (!options.parameters)
    for (const ArgumentInfo &arg : s.arguments())
      if (arg.kind == ArgumentInfo::Kind::Param &&
          arg.init.kind == InitSpec::Kind::File)
        return ZERO_ERROR(
            kInvalidArgument,
            s.name() + ": parameter '" +
                (arg.tile ? arg.tile->param : arg.name) +
                "' has no initializer (init 'file': a frozen tensor whose "
                "values come from a weights file): give --init-from FILE");

  // Elements [begin, begin + count) of parameter `param`'s initial value in
  // fp32 (begin + count <= numel). A tile's are those of its block of the
  // weight: the same values as the untiled weight's, element for element.
  auto initialValues = [&](const ArgumentInfo &param, int64_t begin,
                           int64_t count, std::vector<float> &out) -> Status {
    out.assign(static_cast<size_t>(count), 0.0f);
    const std::string &name = param.tile ? param.tile->param : param.name;
    const std::vector<int64_t> &shape =
        param.tile ? param.tile->shape : param.layout.shape;
    // Calls `copy(source, count, to)` for each run of elements contiguous
    // in the weight: the source element index, the run's length, the index
    // into `out`.
    auto forEachRun = [&](auto copy) {
      if (!param.tile) {
        copy(begin, count, int64_t(0));
        return;
      }
      const int64_t cols = param.layout.shape[1];
      for (int64_t i = begin; i < begin + count;) {
        int64_t row = i / cols, col = i % cols;
        int64_t run = std::min(cols - col, begin + count - i);
        copy((param.tile->offset[0] + row) * shape[1] + param.tile->offset[1] +
                 col,
             run, i - begin);
        i += run;
      }
    };
    if (options.parameters) {
      // Only this rank's part of the tensor is read (and checked finite).
      const SafetensorsReader &file = *options.parameters;
      const std::vector<int64_t> *given = file.shape(name);
      if (!given)
        return ZERO_ERROR(kNotFound, file.path() + ": no tensor '" + name +
                                         "', a parameter of " + s.name());
      if (*given != shape)
        return ZERO_ERROR(kInvalidArgument,
                          file.path() + ": tensor '" + name + "' has shape " +
                              joinShape(*given) + ", but the parameter of " +
                              s.name() + " has shape " + joinShape(shape));
      Status read = Status::ok();
      forEachRun([&](int64_t from, int64_t n, int64_t to) {
        if (read.isOk())
          read = file.read(name, from, n, out.data() + to);
      });
      return read;
    }
    switch (param.init.kind) {
    case InitSpec::Kind::Normal:
      forEachRun([&](int64_t from, int64_t n, int64_t to) {
        fillNormal(options.seed, name, from, n,
                   static_cast<float>(param.init.std), out.data() + to);
      });
      break;
    case InitSpec::Kind::Ones:
      std::fill(out.begin(), out.end(), 1.0f);
      break;
    default:
      break;
    }
    return Status::ok();
  };

  // The part of `param` that `dst` holds: the whole parameter, or this
  // rank's shard of the flattened, zero-padded one.
  auto fillPart = [&](const ArgumentInfo &param, bool shard,
                      TensorRef dst) -> Status {
    const PartitionLayout &layout = param.layout;
    ElementRange part =
        shard ? layout.ownedRange(rank) : ElementRange{0, layout.numel};
    std::vector<float> values;
    ZERO_RETURN_IF_ERROR(initialValues(param, part.begin, part.size(), values));
    storeValue(0, dst); // the padding
    storeFloats(values.data(), part.size(), dst);
    return Status::ok();
  };

  // Each argument is built in host memory and written to the device.
  std::vector<std::byte> host;
  for (size_t i = 0; i < s.arguments().size(); ++i) {
    const ArgumentInfo &arg = s.arguments()[i];
    if (arg.kind == ArgumentInfo::Kind::Data)
      continue;
    const ValueInfo &value = s.values().values[arg.value];
    TensorRef dst = argumentData(i);
    host.assign(static_cast<size_t>(value.bytes()), std::byte{0});
    dst.data = host.data();
    switch (arg.kind) {
    case ArgumentInfo::Kind::Param:
      if (value.quantized) {
        // The shard as the unquantized argument would hold it, quantized.
        std::vector<float> shard(static_cast<size_t>(value.numel), 0.0f);
        ElementRange part = arg.layout.ownedRange(rank);
        std::vector<float> owned;
        ZERO_RETURN_IF_ERROR(
            initialValues(arg, part.begin, part.size(), owned));
        std::copy(owned.begin(), owned.end(), shard.begin());
        storeValueFloats(shard.data(), value, host.data());
        break;
      }
      ZERO_RETURN_IF_ERROR(fillPart(arg, arg.sharded, dst));
      break;
    case ArgumentInfo::Kind::State:
      if (arg.state == "master")
        ZERO_RETURN_IF_ERROR(
            fillPart(s.arguments()[arg.paramArgument], s.stage() >= 1, dst));
      else
        storeValue(
            arg.init.kind == InitSpec::Kind::Value ? arg.init.value : 0.0, dst);
      break;
    case ArgumentInfo::Kind::Step:
      storeValue(arg.init.value, dst);
      break;
    case ArgumentInfo::Kind::Data:
      break;
    }
    ZERO_RETURN_IF_ERROR(writeTensor(arg.value, host.data()));
  }
  return Status::ok();
}

std::vector<NamedTensor> Executor::exportedTensors() const {
  const Schedule &s = *schedule_;
  std::map<std::string, size_t> lastTile = getLastTiles(s);
  std::vector<NamedTensor> tensors;
  for (size_t i = 0; i < s.arguments().size(); ++i) {
    const ArgumentInfo &param = s.arguments()[i];
    if (param.kind != ArgumentInfo::Kind::Param)
      continue;
    if (!param.tile)
      tensors.push_back({param.name, param.layout.shape, {}});
    else if (lastTile[param.tile->param] == i)
      tensors.push_back({param.tile->param, param.tile->shape, {}});
  }
  return tensors;
}

StatusOr<std::vector<NamedTensor>> Executor::exportParameters() {
  std::vector<NamedTensor> tensors;
  ZERO_RETURN_IF_ERROR(exportParameters([&](NamedTensor &&tensor) {
    tensors.push_back(std::move(tensor));
    return Status::ok();
  }));
  return tensors;
}

Status
Executor::exportParameters(const std::function<Status(NamedTensor &&)> &emit) {
  const Schedule &s = *schedule_;
  std::map<int64_t, size_t> master; // param argument -> its master state
  for (size_t i = 0; i < s.arguments().size(); ++i) {
    const ArgumentInfo &arg = s.arguments()[i];
    if (arg.kind == ArgumentInfo::Kind::State && arg.state == "master")
      master[arg.paramArgument] = i;
  }
  std::map<std::string, size_t> lastTile = getLastTiles(s);
  const bool root = hostCommunicator().rank() == 0;
  Status emitted = Status::ok();
  auto give = [&](NamedTensor &&tensor) {
    if (emitted.isOk())
      emitted = emit(std::move(tensor));
  };
  // The tiled weights being assembled, by name.
  std::map<std::string, NamedTensor> tiled;
  for (size_t i = 0; i < s.arguments().size(); ++i) {
    const ArgumentInfo &param = s.arguments()[i];
    if (param.kind != ArgumentInfo::Kind::Param)
      continue;
    const PartitionLayout &layout = param.layout;
    auto it = master.find(static_cast<int64_t>(i));
    bool fromMaster = it != master.end();
    const ValueInfo &value =
        s.values().values[s.arguments()[fromMaster ? it->second : i].value];
    std::vector<std::byte> host(static_cast<size_t>(value.bytes()));
    ZERO_RETURN_IF_ERROR(readTensor(value.id, host.data()));
    bool shard = fromMaster ? s.stage() >= 1 : param.sharded;
    NamedTensor tensor;
    tensor.name = param.name;
    tensor.shape = layout.shape;
    // A parameter stored quantized comes back dequantized, in its dtype.
    std::vector<float> local = loadValueFloats(value, host.data());
    host.clear();
    host.shrink_to_fit();
    if (!shard) {
      local.resize(static_cast<size_t>(layout.numel));
      tensor.data = std::move(local);
    } else {
      // Ranks 0 .. layout.worldSize - 1 hold the shards, the others
      // replicas of them (PartitionLayout).
      std::vector<float> full(
          static_cast<size_t>(hostCommunicator().size() * layout.shardNumel));
      CollectiveContext context{
          "all_gather of '" + param.name + "' for the export", nullptr};
      ZERO_RETURN_IF_ERROR(hostCommunicator().allGather(
          local.data(), full.data(), layout.shardNumel, DType::F32, context));
      full.resize(static_cast<size_t>(layout.numel));
      tensor.data = std::move(full);
    }
    if (!root)
      continue;
    if (!param.tile) {
      give(std::move(tensor));
      continue;
    }
    const TileInfo &tile = *param.tile;
    NamedTensor &weight = tiled[tile.param];
    if (weight.data.empty()) {
      weight.name = tile.param;
      weight.shape = tile.shape;
      weight.data.assign(static_cast<size_t>(tile.shape[0] * tile.shape[1]),
                         0.0f);
    }
    const int64_t rows = layout.shape[0], cols = layout.shape[1];
    for (int64_t r = 0; r < rows; ++r)
      std::copy_n(tensor.data.begin() + r * cols, cols,
                  weight.data.begin() + (tile.offset[0] + r) * tile.shape[1] +
                      tile.offset[1]);
    if (lastTile[tile.param] == i) {
      give(std::move(weight));
      tiled.erase(tile.param);
    }
  }
  return emitted;
}

} // namespace zero::runtime
