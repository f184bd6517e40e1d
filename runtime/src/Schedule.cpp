//===- Schedule.cpp - reading and validating a schedule -------------------===//
//
// Every check of docs/ScheduleFormat.md that does not need the launch. The
// parser reads the document top-down and stops at the first error, which
// names the file and the JSON path of the field.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Schedule.h"

#include "Dataflow.h"
#include "io/FileRead.h"
#include "io/Json.h"
#include "zero/runtime/Checksum.h"
#include "zero/runtime/Sizes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <sstream>
#include <unordered_map>

using nlohmann::json;

namespace zero::runtime {

const char *getMemorySpaceName(MemorySpace space) {
  switch (space) {
  case MemorySpace::Device:
    return "device";
  case MemorySpace::Host:
    return "host";
  case MemorySpace::Nvme:
    return "nvme";
  }
  return "?";
}

const char *getReduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Avg:
    return "avg";
  case ReduceOp::Max:
    return "max";
  case ReduceOp::Min:
    return "min";
  }
  return "?";
}

std::string Instruction::describe() const {
  std::string text = path + " (" + op;
  if (!loc.empty())
    text += " at " + loc;
  return text + ")";
}

void OpFields::set(Field field, FieldValue value) {
  for (auto &entry : fields_)
    if (entry.first == field) {
      entry.second = std::move(value);
      return;
    }
  fields_.emplace_back(field, std::move(value));
}

const FieldValue *OpFields::find(Field field) const {
  for (const auto &entry : fields_)
    if (entry.first == field)
      return &entry.second;
  return nullptr;
}

std::string Schedule::where(const OpRecord &op,
                            const std::string &field) const {
  return name_ + ": " + op.path + (field.empty() ? "" : "." + field) + ": ";
}

std::string Schedule::describeValue(int64_t id) const {
  std::string text = "value " + std::to_string(id);
  if (const ValueInfo *info = values_.lookup(id))
    if (!info->name.empty())
      text += " (" + info->name + ")";
  return text;
}

namespace {

std::string joinShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

struct Edge {
  size_t stream;
  size_t index;
};

} // namespace

/// Reads the document top-down; every method returns the first error.
class ScheduleParser {
public:
  ScheduleParser(Schedule &schedule) : s(schedule) {}

  Status parse(const json &root);

private:
  Status error(const std::string &path, const std::string &message) const {
    return ZERO_ERROR(kInvalidArgument,
                      (s.name_.empty() ? "" : s.name_ + ": ") + path + ": " +
                          message);
  }

  Status checkKeys(const json &object, const std::string &path,
                   std::initializer_list<const char *> required,
                   std::initializer_list<const char *> optional,
                   const std::vector<std::string> &extra = {}) const;
  Status getObject(const json &object, const char *key, const std::string &path,
                   const json *&out) const;
  Status getArray(const json &object, const char *key, const std::string &path,
                  const json *&out) const;
  Status getInt(const json &object, const char *key, const std::string &path,
                int64_t &out, int64_t min = 0,
                int64_t max = std::numeric_limits<int64_t>::max()) const;
  Status getNumber(const json &object, const char *key, const std::string &path,
                   double &out) const;
  Status getString(const json &object, const char *key, const std::string &path,
                   std::string &out) const;
  Status getBool(const json &object, const char *key, const std::string &path,
                 bool &out) const;
  Status getIntList(const json &object, const char *key,
                    const std::string &path, std::vector<int64_t> &out,
                    int64_t min = 0) const;
  Status getSpace(const json &object, const std::string &path,
                  MemorySpace &out) const;

  Status parseMemory(const json &root);
  Status parseBuffers(const json &root);
  Status checkBufferOverlaps() const;
  Status parseValues(const json &root);
  /// A tensor value's `quantized` (version 3): how it is stored.
  Status parseQuantizedStorage(const json &object, const std::string &path,
                               ValueInfo &info) const;
  /// The readers and writers of tensors stored quantized: only a quantized
  /// all_gather of their block size reads one, only a swap moves one, and
  /// nothing else writes one.
  Status checkQuantizedValues() const;
  /// Marks each linalg.fill that only zero-initializes a later GEMM, and
  /// that GEMM (Instruction::skippedZeroFill, zeroInit).
  void markZeroFilledGemmInits();
  /// For a collective over `gridAxes`, the layout is cut for its group.
  /// `orNode`: a parameter's or a zero.local_shard's, which on a grid of
  /// several axes may be cut across the ranks of the grid's last axes (a
  /// node, or a MiCS group of nodes) and replicated across the other
  /// coordinates (Schedule::suffixGroupSizes; PartitionLayout).
  Status parseLayout(const json &object, const std::string &path,
                     PartitionLayout &out,
                     const std::vector<int64_t> &gridAxes = {},
                     bool orNode = false) const;
  Status parseInit(const json &object, const std::string &path,
                   InitSpec &out) const;
  Status parseTile(const json &object, const std::string &path,
                   const std::vector<int64_t> &tileShape,
                   std::optional<TileInfo> &out) const;
  Status parseArguments(const json &root);
  Status checkArgument(ArgumentInfo &arg, const std::string &path);
  Status checkTiles(const std::map<std::string, size_t> &params) const;
  Status parseResults(const json &root);
  Status parseStreams(const json &root);
  Status parseInstruction(const json &object, const std::string &path,
                          const std::string &stream, Instruction &inst);
  Status checkValueIds(const std::vector<int64_t> &ids, const std::string &path,
                       bool tensorsOnly) const;
  Status parseCollective(const json &object, Instruction &inst);
  /// A collective's `quantize` (after its layouts): the block size and P
  /// (all_gather) or C (reduce_scatter).
  Status parseQuantize(const json &object, Instruction &inst);
  Status parseGridAxes(const json &object, Instruction &inst) const;
  /// `hasPoint`: the swap carries its point (a schedule's always does; the
  /// missing key is reported after).
  Status parseSwap(Instruction &inst, bool hasPoint);
  /// Reads the tensor ids of `operands` and `results`; with `exactlyOne`,
  /// each list must hold one.
  Status parseTensorLists(const json &object, Instruction &inst,
                          bool exactlyOne);
  /// Fails unless the buffers of `inst`'s results are reserved from its
  /// point on: another stream writes them while compute runs on.
  Status checkWrittenFromStart(const Instruction &inst) const;
  /// The op name, operands, results and fields of a compute instruction
  /// or of a body's op (`inBody`), checked against OpSet.h.
  Status decodeOp(const json &object, bool inBody, const std::string &loc,
                  OpRecord &op) const;
  Status checkArity(const OpRecord &op, const std::string &loc) const;
  Status decodeField(const json &node, const FieldInfo &info,
                     const std::string &path, const std::string &loc,
                     FieldValue &out) const;
  Status decodeNumber(const json &node, const std::string &path,
                      const std::string &loc, Number &out) const;
  Status decodeBody(const json &node, const std::string &path,
                    const std::string &loc, RegionBody &out) const;
  /// `status` with the op's source location appended, like the backends'.
  Status atLoc(Status status, const std::string &loc) const {
    if (status.isOk())
      return status;
    return Status(status.code(),
                  status.message() + " at " +
                      (loc.empty() ? "an unknown location" : loc),
                  status.file(), status.line());
  }
  /// An error of an op, with its source location like the backends'.
  Status opError(const std::string &path, const std::string &message,
                 const std::string &loc) const {
    return error(path, message + " at " +
                           (loc.empty() ? "an unknown location" : loc));
  }

public:
  /// Decodes one compute instruction against the values already parsed.
  Status decodeComputeInstruction(const json &object, const std::string &path,
                                  Instruction &inst) {
    return parseInstruction(object, path, "compute", inst);
  }

  Status checkEvents() const;
  Status checkPoints();
  Status checkGatheredLayouts() const;
  Status checkStagingRegions() const;
  Status parseLoops(const json &root);
  Status parseGradients(const json &root);
  Status checkCarried(const json &entry, const std::string &path,
                      CarriedValue &out) const;
  Status checkLoopSlices() const;
  /// The instruction whose results hold `id`, if any.
  const Instruction *findWriter(int64_t id) const;
  /// "version 2 (the schedule is version 1)", for what version 1 lacks.
  Status needsVersion2(const std::string &path, const std::string &what) const {
    return error(path, what + " needs version 2 (the schedule is version " +
                           std::to_string(s.version_) + ")");
  }

  Schedule &s;
  /// The return point: the point after the last instruction's.
  int64_t returnPoint = 1;
  std::unordered_map<int64_t, size_t> bufferIndex;
  std::vector<std::string> bufferPaths;
};

Status ScheduleParser::checkKeys(const json &object, const std::string &path,
                                 std::initializer_list<const char *> required,
                                 std::initializer_list<const char *> optional,
                                 const std::vector<std::string> &extra) const {
  if (!object.is_object())
    return error(path, "expected an object");
  for (const char *key : required)
    if (!object.contains(key))
      return error(path, std::string("missing key '") + key + "'");
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string &key = it.key();
    auto matches = [&](const auto &list) {
      return std::any_of(list.begin(), list.end(),
                         [&](const auto &name) { return key == name; });
    };
    if (!matches(required) && !matches(optional) && !matches(extra))
      return error(path, "unknown key '" + key + "'");
  }
  return Status::ok();
}

/// "memory.alignment"; a top-level field is its key alone.
static std::string getFieldPath(const std::string &path, const char *key) {
  return path.empty() ? key : path + "." + key;
}

Status ScheduleParser::getObject(const json &object, const char *key,
                                 const std::string &path,
                                 const json *&out) const {
  const json &value = object.at(key);
  if (!value.is_object())
    return error(getFieldPath(path, key), "expected an object");
  out = &value;
  return Status::ok();
}

Status ScheduleParser::getArray(const json &object, const char *key,
                                const std::string &path,
                                const json *&out) const {
  const json &value = object.at(key);
  if (!value.is_array())
    return error(getFieldPath(path, key), "expected an array");
  out = &value;
  return Status::ok();
}

Status ScheduleParser::getInt(const json &object, const char *key,
                              const std::string &path, int64_t &out,
                              int64_t min, int64_t max) const {
  const json &value = object.at(key);
  std::string field = getFieldPath(path, key);
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() &&
       value.get<uint64_t>() >
           static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))
    return error(field, "expected an integer, got " + value.dump());
  out = value.get<int64_t>();
  if (out < min || out > max)
    return error(field, std::to_string(out) + " is out of range [" +
                            std::to_string(min) + ", " +
                            (max == std::numeric_limits<int64_t>::max()
                                 ? std::string("...")
                                 : std::to_string(max)) +
                            "]");
  return Status::ok();
}

Status ScheduleParser::getNumber(const json &object, const char *key,
                                 const std::string &path, double &out) const {
  const json &value = object.at(key);
  if (!value.is_number())
    return error(getFieldPath(path, key),
                 "expected a number, got " + value.dump());
  out = value.get<double>();
  return Status::ok();
}

Status ScheduleParser::getString(const json &object, const char *key,
                                 const std::string &path,
                                 std::string &out) const {
  const json &value = object.at(key);
  if (!value.is_string())
    return error(getFieldPath(path, key),
                 "expected a string, got " + value.dump());
  out = value.get<std::string>();
  return Status::ok();
}

Status ScheduleParser::getBool(const json &object, const char *key,
                               const std::string &path, bool &out) const {
  const json &value = object.at(key);
  if (!value.is_boolean())
    return error(getFieldPath(path, key),
                 "expected true or false, got " + value.dump());
  out = value.get<bool>();
  return Status::ok();
}

Status ScheduleParser::getIntList(const json &object, const char *key,
                                  const std::string &path,
                                  std::vector<int64_t> &out,
                                  int64_t min) const {
  const json *array;
  ZERO_RETURN_IF_ERROR(getArray(object, key, path, array));
  out.clear();
  for (size_t i = 0; i < array->size(); ++i) {
    const json &item = (*array)[i];
    std::string field = path + "." + key + "[" + std::to_string(i) + "]";
    if (!item.is_number_integer() ||
        (item.is_number_unsigned() &&
         item.get<uint64_t>() >
             static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))
      return error(field, "expected an integer, got " + item.dump());
    int64_t v = item.get<int64_t>();
    if (v < min)
      return error(field, std::to_string(v) + " is out of range (at least " +
                              std::to_string(min) + ")");
    out.push_back(v);
  }
  return Status::ok();
}

Status ScheduleParser::getSpace(const json &object, const std::string &path,
                                MemorySpace &out) const {
  std::string name;
  ZERO_RETURN_IF_ERROR(getString(object, "space", path, name));
  for (int i = 0; i < kNumMemorySpaces; ++i)
    if (name == getMemorySpaceName(static_cast<MemorySpace>(i))) {
      out = static_cast<MemorySpace>(i);
      return Status::ok();
    }
  return error(path + ".space", "unknown memory space '" + name +
                                    "' (expected device, host or nvme)");
}

namespace {

/// A linalg.fill of zeros whose result only a later GEMM of its stream
/// reads, as its init.
struct ZeroFilledInit {
  size_t stream, fill, gemm;
};

/// Every ZeroFilledInit, in stream order.
std::vector<ZeroFilledInit> findZeroFilledGemmInits(const Schedule &schedule) {
  const std::vector<ValueInfo> &values = schedule.values().values;
  // Every read of a value: operands and region bodies on every stream, the
  // step's results, the loop's carried values (frees are not reads).
  std::vector<int> reads(values.size(), 0);
  auto read = [&](int64_t id) {
    if (id >= 0 && static_cast<size_t>(id) < reads.size())
      ++reads[id];
  };
  for (const ResultInfo &result : schedule.results())
    read(result.value);
  if (const std::optional<LoopInfo> &loop = schedule.loop())
    for (const CarriedValue &carried : loop->carried) {
      read(carried.init);
      read(carried.next);
    }
  // The arith.constant that defines each scalar of the compute stream.
  std::vector<const Instruction *> constants(values.size(), nullptr);
  for (size_t s = 0; s < schedule.streams().size(); ++s)
    for (const Instruction &inst : schedule.streams()[s].instructions) {
      for (int64_t id : inst.operands)
        read(id);
      if (inst.kind == Instruction::Kind::Compute &&
          inst.code() == OpCode::Constant && inst.results.size() == 1)
        constants[inst.results[0]] = &inst;
      if (!inst.fields.has(Field::Body))
        continue;
      const RegionBody &body = inst.fields.getBody(Field::Body);
      for (const OpRecord &op : body.ops)
        for (int64_t id : op.operands)
          read(id);
      for (int64_t id : body.yield)
        read(id);
    }
  auto isZero = [&](int64_t id) {
    const Instruction *constant =
        id >= 0 && static_cast<size_t>(id) < constants.size() ? constants[id]
                                                               : nullptr;
    if (!constant || values[id].isTensor)
      return false;
    const Number &n = constant->fields.getConstant(Field::Value).elements[0];
    return n.isInteger ? n.i == 0 : n.f == 0.0; // -0.0 too: x + -0 is x
  };
  std::vector<ZeroFilledInit> fills;
  for (size_t stream = 0; stream < schedule.streams().size(); ++stream) {
    const std::vector<Instruction> &list =
        schedule.streams()[stream].instructions;
    // The GEMM that takes each value as its init (C), by value.
    std::map<int64_t, size_t> gemmOf;
    for (size_t j = 0; j < list.size(); ++j)
      if (list[j].kind == Instruction::Kind::Compute &&
          (list[j].code() == OpCode::Matmul ||
           list[j].code() == OpCode::BatchMatmul))
        gemmOf.emplace(list[j].operands[2], j);
    for (size_t i = 0; i < list.size(); ++i) {
      const Instruction &fill = list[i];
      if (fill.kind != Instruction::Kind::Compute ||
          fill.code() != OpCode::Fill)
        continue;
      const int64_t init = fill.results[0];
      auto found = gemmOf.find(init);
      if (found == gemmOf.end() || found->second < i || reads[init] != 1 ||
          !isZero(fill.operands[0]))
        continue;
      // Its one read is the GEMM's C (not A or B too). Between the two,
      // nothing reads the fill's result, and the plan gives its buffer to
      // no other value, so nothing sees it unfilled.
      const size_t j = found->second;
      const Instruction &gemm = list[j];
      if (gemm.operands[0] == init || gemm.operands[1] == init)
        continue;
      // Both in the loop's body, or both outside it.
      if (const std::optional<LoopInfo> &loop = schedule.loop();
          loop && loop->inBody(stream, i) != loop->inBody(stream, j))
        continue;
      fills.push_back({stream, i, j});
    }
  }
  return fills;
}

} // namespace

Status ScheduleParser::parse(const json &root) {
  if (!root.is_object())
    return error("(top level)", "expected a JSON object");
  // Format and version first: a later version may have other keys.
  if (!root.contains("format"))
    return error("format", "missing: not a zero schedule");
  std::string format;
  ZERO_RETURN_IF_ERROR(getString(root, "format", "", format));
  if (format != "zero-schedule")
    return error("format", "'" + format + "' is not 'zero-schedule'");
  if (!root.contains("version"))
    return error("version", "missing");
  int64_t version;
  ZERO_RETURN_IF_ERROR(getInt(root, "version", "", version,
                              std::numeric_limits<int64_t>::min()));
  if (version < 1 || version > 3)
    return error("version", "version " + std::to_string(version) +
                                " is not supported: this runtime reads "
                                "versions 1 to 3");
  s.version_ = version;
  ZERO_RETURN_IF_ERROR(
      checkKeys(root, "(top level)",
                {"format", "version", "stage", "world_size", "topology",
                 "memory", "buffers", "values", "arguments", "results",
                 "streams", "events", "instructions"},
                {"producer", "source", "function", "loops", "checkpoint",
                 "gradients"}));
  if (root.contains("loops") && version < 2)
    return needsVersion2("loops", "'loops'");
  for (const char *key : {"producer", "source", "function"})
    if (root.contains(key)) {
      std::string text;
      ZERO_RETURN_IF_ERROR(getString(root, key, "", text));
      if (std::string(key) == "source")
        s.source_ = text;
      else if (std::string(key) == "function")
        s.function_ = text;
    }
  ZERO_RETURN_IF_ERROR(getInt(root, "stage", "", s.stage_, 0, 3));
  ZERO_RETURN_IF_ERROR(
      getInt(root, "world_size", "", s.worldSize_, 1, kMaxWorldSize));
  const json *topology;
  ZERO_RETURN_IF_ERROR(getObject(root, "topology", "", topology));
  ZERO_RETURN_IF_ERROR(checkKeys(*topology, "topology", {"grid"}, {}));
  std::vector<int64_t> grid;
  ZERO_RETURN_IF_ERROR(getIntList(*topology, "grid", "topology", grid, 1));
  // [world_size], or from version 3 [nodes, ranks per node] or [replica
  // groups, nodes per group, ranks per node] (MiCS groups of several nodes),
  // node-major.
  if ((grid.size() == 2 || grid.size() == 3) && version >= 3) {
    // Each size at most the world size and the product checked as it grows,
    // so that it cannot overflow.
    int64_t product = 1;
    bool valid = true;
    for (size_t axis = 0; axis < grid.size(); ++axis) {
      // Every axis but the last (a node's ranks) has at least 2.
      const int64_t least = axis + 1 < grid.size() ? 2 : 1;
      valid &= grid[axis] >= least && grid[axis] <= s.worldSize_;
      if (!valid)
        break;
      product *= grid[axis];
      valid &= product <= s.worldSize_;
    }
    if (!valid || product != s.worldSize_)
      return error("topology.grid",
                   joinShape(grid) +
                       (grid.size() == 2
                            ? " is not [nodes, ranks per node]: at least 2 "
                              "nodes whose ranks make world_size = "
                            : " is not [replica groups, nodes per group, "
                              "ranks per node]: at least 2 groups of at "
                              "least 2 nodes whose ranks make world_size = ") +
                       std::to_string(s.worldSize_));
    s.ranksPerNode_ = grid.back();
  } else if (grid != std::vector<int64_t>{s.worldSize_}) {
    return error("topology.grid",
                 joinShape(grid) + " is not [world_size] = [" +
                     std::to_string(s.worldSize_) + "]" +
                     (version >= 3 ? ", [nodes, ranks per node] or [replica "
                                     "groups, nodes per group, ranks per node]"
                                   : ": versions 1 and 2 have one "
                                     "data-parallel dimension"));
  } else {
    s.ranksPerNode_ = s.worldSize_;
  }
  s.grid_ = grid;
  if (root.contains("checkpoint")) {
    const json *checkpoint;
    ZERO_RETURN_IF_ERROR(getObject(root, "checkpoint", "", checkpoint));
    ZERO_RETURN_IF_ERROR(
        checkKeys(*checkpoint, "checkpoint", {"load_from_fp32_weights"}, {}));
    ZERO_RETURN_IF_ERROR(getBool(*checkpoint, "load_from_fp32_weights",
                                 "checkpoint", s.loadFromFp32Weights_));
  }
  ZERO_RETURN_IF_ERROR(parseMemory(root));
  ZERO_RETURN_IF_ERROR(parseBuffers(root));
  ZERO_RETURN_IF_ERROR(parseValues(root));
  ZERO_RETURN_IF_ERROR(parseArguments(root));
  ZERO_RETURN_IF_ERROR(parseResults(root));
  ZERO_RETURN_IF_ERROR(parseStreams(root));
  ZERO_RETURN_IF_ERROR(checkQuantizedValues());
  ZERO_RETURN_IF_ERROR(checkPoints());
  ZERO_RETURN_IF_ERROR(checkGatheredLayouts());
  ZERO_RETURN_IF_ERROR(checkStagingRegions());
  ZERO_RETURN_IF_ERROR(parseLoops(root));
  ZERO_RETURN_IF_ERROR(checkEvents());
  ZERO_RETURN_IF_ERROR(checkDataflow(s));
  markZeroFilledGemmInits();
  // After the program's own checks: a record names an instruction by index.
  return parseGradients(root);
}

void ScheduleParser::markZeroFilledGemmInits() {
  for (const ZeroFilledInit &init : findZeroFilledGemmInits(s)) {
    std::vector<Instruction> &list = s.streams_[init.stream].instructions;
    list[init.fill].skippedZeroFill = true;
    list[init.gemm].zeroInit = true;
  }
}

Status ScheduleParser::parseMemory(const json &root) {
  const json *memory;
  ZERO_RETURN_IF_ERROR(getObject(root, "memory", "", memory));
  ZERO_RETURN_IF_ERROR(checkKeys(*memory, "memory", {"alignment", "arenas"},
                                 {"nvme_path", "aio"}));
  if (memory->contains("nvme_path")) {
    if (s.version_ < 2)
      return needsVersion2("memory.nvme_path", "'nvme_path'");
    ZERO_RETURN_IF_ERROR(
        getString(*memory, "nvme_path", "memory", s.nvmePath_));
  }
  if (memory->contains("aio")) {
    if (s.version_ < 2)
      return needsVersion2("memory.aio", "'aio'");
    const json *aio;
    ZERO_RETURN_IF_ERROR(getObject(*memory, "aio", "memory", aio));
    ZERO_RETURN_IF_ERROR(checkKeys(
        *aio, "memory.aio",
        {"block_size", "queue_depth", "single_submit", "overlap_events"}, {}));
    Schedule::AioSettings &settings = s.aio_;
    ZERO_RETURN_IF_ERROR(getInt(*aio, "block_size", "memory.aio",
                                settings.blockSize, 4096, int64_t(1) << 40));
    ZERO_RETURN_IF_ERROR(getInt(*aio, "queue_depth", "memory.aio",
                                settings.queueDepth, 1, 1 << 16));
    ZERO_RETURN_IF_ERROR(
        getBool(*aio, "single_submit", "memory.aio", settings.singleSubmit));
    ZERO_RETURN_IF_ERROR(
        getBool(*aio, "overlap_events", "memory.aio", settings.overlapEvents));
  }
  ZERO_RETURN_IF_ERROR(
      getInt(*memory, "alignment", "memory", s.alignment_, 1, 1 << 20));
  if ((s.alignment_ & (s.alignment_ - 1)) != 0)
    return error("memory.alignment",
                 std::to_string(s.alignment_) + " is not a power of two");
  const json *arenas;
  ZERO_RETURN_IF_ERROR(getObject(*memory, "arenas", "memory", arenas));
  ZERO_RETURN_IF_ERROR(
      checkKeys(*arenas, "memory.arenas", {}, {"device", "host", "nvme"}));
  for (int i = 0; i < kNumMemorySpaces; ++i) {
    const char *space = getMemorySpaceName(static_cast<MemorySpace>(i));
    if (arenas->contains(space))
      ZERO_RETURN_IF_ERROR(getInt(*arenas, space, "memory.arenas", s.arenas_[i],
                                  0, kMaxScheduleSize));
  }
  return Status::ok();
}

Status ScheduleParser::parseBuffers(const json &root) {
  static const char *kCategories[] = {"parameter",       "gradient",
                                      "optimizer_state", "input",
                                      "activation",      "communication"};
  static const char *kRoles[] = {"in flight", "gathered", "reduced",
                                 "swapped",   "staging",  "secondary"};
  const json *buffers;
  ZERO_RETURN_IF_ERROR(getArray(root, "buffers", "", buffers));
  for (size_t i = 0; i < buffers->size(); ++i) {
    const json &entry = (*buffers)[i];
    std::string path = "buffers[" + std::to_string(i) + "]";
    ZERO_RETURN_IF_ERROR(checkKeys(
        entry, path,
        {"id", "name", "category", "role", "space", "offset", "bytes", "live"},
        {}));
    BufferInfo buffer;
    ZERO_RETURN_IF_ERROR(getInt(entry, "id", path, buffer.id));
    if (!bufferIndex.emplace(buffer.id, i).second)
      return error(path + ".id", "buffer " + std::to_string(buffer.id) +
                                     " is defined twice (first at " +
                                     bufferPaths[bufferIndex[buffer.id]] + ")");
    ZERO_RETURN_IF_ERROR(getString(entry, "name", path, buffer.name));
    ZERO_RETURN_IF_ERROR(getString(entry, "category", path, buffer.category));
    if (std::none_of(std::begin(kCategories), std::end(kCategories),
                     [&](const char *c) { return buffer.category == c; }))
      return error(path + ".category",
                   "unknown category '" + buffer.category +
                       "' (expected parameter, gradient, optimizer_state, "
                       "input, activation or communication)");
    ZERO_RETURN_IF_ERROR(getString(entry, "role", path, buffer.role));
    if (!buffer.role.empty() &&
        std::none_of(std::begin(kRoles), std::end(kRoles),
                     [&](const char *r) { return buffer.role == r; }))
      return error(path + ".role",
                   "unknown role '" + buffer.role +
                       "' (expected 'in flight', gathered, reduced, "
                       "swapped, staging, secondary or empty)");
    ZERO_RETURN_IF_ERROR(getSpace(entry, path, buffer.space));
    ZERO_RETURN_IF_ERROR(getInt(entry, "offset", path, buffer.offset));
    ZERO_RETURN_IF_ERROR(getInt(entry, "bytes", path, buffer.bytes));
    if (buffer.offset % s.alignment_ != 0)
      return error(path + ".offset",
                   std::to_string(buffer.offset) +
                       " is not a multiple of memory.alignment (" +
                       std::to_string(s.alignment_) + ")");
    std::optional<int64_t> end = checkedAdd(buffer.offset, buffer.bytes);
    if (!end)
      return error(path, "buffer " + std::to_string(buffer.id) + " '" +
                             buffer.name + "': offset " +
                             std::to_string(buffer.offset) + " + bytes " +
                             std::to_string(buffer.bytes) + " overflows int64");
    int64_t arena = s.arenaBytes(buffer.space);
    if (*end > arena)
      return error(path, "buffer " + std::to_string(buffer.id) + " '" +
                             buffer.name + "' (bytes [" +
                             std::to_string(buffer.offset) + ", " +
                             std::to_string(*end) + ")) lies outside the " +
                             getMemorySpaceName(buffer.space) + " arena of " +
                             std::to_string(arena) + " bytes");
    std::vector<int64_t> live;
    ZERO_RETURN_IF_ERROR(getIntList(entry, "live", path, live));
    if (live.size() != 2 || live[0] > live[1])
      return error(path + ".live", joinShape(live) +
                                       " is not a range [first, last] of "
                                       "program points");
    buffer.liveBegin = live[0];
    buffer.liveEnd = live[1];
    s.buffers_.push_back(std::move(buffer));
    bufferPaths.push_back(path);
  }
  return checkBufferOverlaps();
}

Status ScheduleParser::checkBufferOverlaps() const {
  // A sweep over program points per space: the buffers live at the current
  // point are disjoint (else we stopped), so a new one need only be compared
  // with its neighbours by offset.
  for (int space = 0; space < kNumMemorySpaces; ++space) {
    std::vector<size_t> order;
    for (size_t i = 0; i < s.buffers_.size(); ++i)
      if (static_cast<int>(s.buffers_[i].space) == space &&
          s.buffers_[i].bytes > 0)
        order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return s.buffers_[a].liveBegin < s.buffers_[b].liveBegin;
    });
    std::map<int64_t, size_t> live; // offset -> buffer
    using Expiry = std::pair<int64_t, size_t>;
    std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>>
        expiries;
    for (size_t index : order) {
      const BufferInfo &buffer = s.buffers_[index];
      while (!expiries.empty() && expiries.top().first < buffer.liveBegin) {
        const BufferInfo &old = s.buffers_[expiries.top().second];
        auto it = live.find(old.offset);
        if (it != live.end() && it->second == expiries.top().second)
          live.erase(it);
        expiries.pop();
      }
      auto overlapping = [&](size_t other) -> Status {
        const BufferInfo &o = s.buffers_[other];
        auto range = [](const BufferInfo &b) {
          return "bytes [" + std::to_string(b.offset) + ", " +
                 std::to_string(b.offset + b.bytes) + "), live [" +
                 std::to_string(b.liveBegin) + ", " +
                 std::to_string(b.liveEnd) + "]";
        };
        return error(bufferPaths[index],
                     "buffer " + std::to_string(buffer.id) + " '" +
                         buffer.name + "' (" + range(buffer) +
                         ") overlaps buffer " + std::to_string(o.id) + " '" +
                         o.name + "' (" + bufferPaths[other] + ", " + range(o) +
                         ") in the " + getMemorySpaceName(buffer.space) +
                         " arena while both are live");
      };
      auto next = live.lower_bound(buffer.offset);
      if (next != live.end() && next->first < buffer.offset + buffer.bytes)
        return overlapping(next->second);
      if (next != live.begin()) {
        auto prev = std::prev(next);
        const BufferInfo &p = s.buffers_[prev->second];
        if (p.offset + p.bytes > buffer.offset)
          return overlapping(prev->second);
      }
      live.emplace(buffer.offset, index);
      expiries.emplace(buffer.liveEnd, index);
    }
  }
  return Status::ok();
}

Status ScheduleParser::parseValues(const json &root) {
  const json *values;
  ZERO_RETURN_IF_ERROR(getArray(root, "values", "", values));
  int64_t count = static_cast<int64_t>(values->size());
  s.values_.values.assign(count, ValueInfo());
  std::vector<size_t> firstPath(count, 0);
  for (size_t i = 0; i < values->size(); ++i) {
    const json &entry = (*values)[i];
    std::string path = "values[" + std::to_string(i) + "]";
    ZERO_RETURN_IF_ERROR(checkKeys(entry, path, {"id", "kind", "dtype"},
                                   {"shape", "buffer", "name", "quantized"}));
    int64_t id;
    ZERO_RETURN_IF_ERROR(getInt(entry, "id", path, id));
    if (id >= count)
      return error(path + ".id", "value id " + std::to_string(id) +
                                     " is out of range: ids are dense, 0 .. " +
                                     std::to_string(count - 1));
    ValueInfo &info = s.values_.values[id];
    if (info.id == id)
      return error(path + ".id", "value " + std::to_string(id) +
                                     " is defined twice (first at values[" +
                                     std::to_string(firstPath[id]) + "])");
    firstPath[id] = i;
    info.id = id;
    std::string kind, dtype;
    ZERO_RETURN_IF_ERROR(getString(entry, "kind", path, kind));
    ZERO_RETURN_IF_ERROR(getString(entry, "dtype", path, dtype));
    StatusOr<DType> type = parseDType(dtype, s.name_ + ": " + path + ".dtype");
    if (!type.isOk())
      return type.status();
    info.dtype = *type;
    if (entry.contains("name"))
      ZERO_RETURN_IF_ERROR(getString(entry, "name", path, info.name));
    if (kind == "scalar") {
      for (const char *key : {"shape", "buffer", "quantized"})
        if (entry.contains(key))
          return error(path + "." + key, "a scalar has no " + std::string(key) +
                                             ": it lives in a register");
      continue;
    }
    if (kind != "tensor")
      return error(path + ".kind",
                   "unknown kind '" + kind + "' (expected tensor or scalar)");
    info.isTensor = true;
    if (!entry.contains("shape"))
      return error(path, "missing key 'shape'");
    ZERO_RETURN_IF_ERROR(getIntList(entry, "shape", path, info.shape));
    std::optional<int64_t> numel = getShapeNumel(info.shape);
    if (!numel)
      return error(path + ".shape",
                   joinShape(info.shape) + " has more than 2^50 elements");
    info.numel = *numel;
    if (entry.contains("quantized"))
      ZERO_RETURN_IF_ERROR(
          parseQuantizedStorage(entry["quantized"], path + ".quantized", info));
    if (!entry.contains("buffer"))
      return error(path,
                   "tensor value " + std::to_string(id) + " has no buffer");
    int64_t buffer;
    ZERO_RETURN_IF_ERROR(getInt(entry, "buffer", path, buffer,
                                std::numeric_limits<int64_t>::min()));
    auto it = bufferIndex.find(buffer);
    if (it == bufferIndex.end())
      return error(path + ".buffer", "buffer " + std::to_string(buffer) +
                                         " of value " + std::to_string(id) +
                                         " is not defined");
    info.buffer = static_cast<int64_t>(it->second);
    const BufferInfo &b = s.buffers_[it->second];
    int64_t bytes = info.bytes();
    if (bytes > b.bytes)
      return error(path, "tensor value " + std::to_string(id) + " " +
                             joinShape(info.shape) + " x " + dtype +
                             (info.quantized ? " stored quantized" : "") +
                             " (" + std::to_string(bytes) +
                             " bytes) is larger than its buffer " +
                             std::to_string(b.id) + " '" + b.name + "' (" +
                             std::to_string(b.bytes) + " bytes)");
  }
  for (int64_t id = 0; id < count; ++id)
    if (s.values_.values[id].id != id)
      return error("values", "value id " + std::to_string(id) +
                                 " is missing: ids are dense, 0 .. " +
                                 std::to_string(count - 1));
  return Status::ok();
}

Status ScheduleParser::parseQuantizedStorage(const json &object,
                                             const std::string &path,
                                             ValueInfo &info) const {
  if (s.version_ < 3)
    return error(path, "'quantized' needs version 3 (the schedule is version " +
                           std::to_string(s.version_) + ")");
  ZERO_RETURN_IF_ERROR(checkKeys(object, path, {"bits", "block_size"}, {}));
  QuantizedStorage q;
  ZERO_RETURN_IF_ERROR(getInt(object, "bits", path, q.bits,
                              std::numeric_limits<int64_t>::min()));
  // int8, as the quantized all-gather (qwZ) that reads it moves.
  if (q.bits != 8)
    return error(path + ".bits",
                 std::to_string(q.bits) + " is not supported (8)");
  ZERO_RETURN_IF_ERROR(getInt(object, "block_size", path, q.blockSize, 1));
  if (info.dtype != DType::F32 && info.dtype != DType::BF16 &&
      info.dtype != DType::F16)
    return error(path, "a quantized tensor holds f32, bf16 or f16 elements, "
                       "but " +
                           s.describeValue(info.id) + " is " +
                           getDTypeName(info.dtype));
  info.quantized = q;
  return Status::ok();
}

Status ScheduleParser::parseLayout(const json &object, const std::string &path,
                                   PartitionLayout &out,
                                   const std::vector<int64_t> &gridAxes,
                                   bool orNode) const {
  ZERO_RETURN_IF_ERROR(
      checkKeys(object, path,
                {"shape", "world_size", "shard_numel", "padded_numel"}, {}));
  std::vector<int64_t> shape;
  int64_t worldSize, shardNumel, paddedNumel;
  ZERO_RETURN_IF_ERROR(getIntList(object, "shape", path, shape));
  ZERO_RETURN_IF_ERROR(getInt(object, "world_size", path, worldSize, 1));
  ZERO_RETURN_IF_ERROR(getInt(object, "shard_numel", path, shardNumel));
  ZERO_RETURN_IF_ERROR(getInt(object, "padded_numel", path, paddedNumel));
  if (!gridAxes.empty() && worldSize != s.groupSize(gridAxes))
    return error(path + ".world_size",
                 std::to_string(worldSize) + " differs from the group size " +
                     std::to_string(s.groupSize(gridAxes)) + " of grid_axes " +
                     joinShape(gridAxes));
  // A parameter's layout may also be cut across the ranks of the grid's
  // last axes (MiCS: a node, or a group of nodes) and replicated across the
  // other coordinates.
  const std::vector<int64_t> suffixes =
      orNode ? s.suffixGroupSizes() : std::vector<int64_t>{};
  if (gridAxes.empty() && worldSize != s.worldSize_ &&
      std::find(suffixes.begin(), suffixes.end(), worldSize) ==
          suffixes.end()) {
    if (suffixes.empty())
      return error(path + ".world_size",
                   std::to_string(worldSize) +
                       " differs from the schedule's world_size " +
                       std::to_string(s.worldSize_));
    // "4 (grid axes [1, 2]) or 2 (grid axes [2])"
    std::string sizes;
    for (size_t i = 0; i < suffixes.size(); ++i) {
      std::vector<int64_t> axes;
      for (size_t axis = i + 1; axis < s.grid_.size(); ++axis)
        axes.push_back(static_cast<int64_t>(axis));
      sizes += std::string(i == 0                     ? ""
                           : i + 1 == suffixes.size() ? " or "
                                                      : ", ") +
               std::to_string(suffixes[i]) + " (grid axes " + joinShape(axes) +
               ")";
    }
    return error(path + ".world_size",
                 std::to_string(worldSize) +
                     " is neither the schedule's world_size " +
                     std::to_string(s.worldSize_) +
                     " nor the ranks of the grid's last axes (topology.grid " +
                     joinShape(s.grid_) + "): " + sizes);
  }
  StatusOr<PartitionLayout> layout =
      PartitionLayout::create(shape, worldSize, paddedNumel);
  if (!layout.isOk())
    return error(path, layout.status().message());
  if (shardNumel != layout->shardNumel)
    return error(path + ".shard_numel",
                 std::to_string(shardNumel) + " is not padded_numel / " +
                     "world_size = " + std::to_string(layout->shardNumel));
  out = std::move(*layout);
  return Status::ok();
}

Status ScheduleParser::parseTile(const json &object, const std::string &path,
                                 const std::vector<int64_t> &tileShape,
                                 std::optional<TileInfo> &out) const {
  ZERO_RETURN_IF_ERROR(
      checkKeys(object, path, {"param", "shape", "offset"}, {}));
  TileInfo tile;
  ZERO_RETURN_IF_ERROR(getString(object, "param", path, tile.param));
  if (tile.param.empty())
    return error(path + ".param", "a tile needs the name of its weight");
  ZERO_RETURN_IF_ERROR(getIntList(object, "shape", path, tile.shape));
  ZERO_RETURN_IF_ERROR(getIntList(object, "offset", path, tile.offset));
  if (tile.shape.size() != 2 || tileShape.size() != 2 ||
      tile.offset.size() != 2)
    return error(path, "a tile is a block of a 2-D weight: shape, offset and "
                       "the layout's shape have 2 entries");
  for (size_t d = 0; d < 2; ++d)
    if (tile.offset[d] + tileShape[d] > tile.shape[d])
      return error(path + ".offset[" + std::to_string(d) + "]",
                   "the block at " + std::to_string(tile.offset[d]) +
                       " of size " + std::to_string(tileShape[d]) +
                       " does not lie within the weight's dimension of " +
                       std::to_string(tile.shape[d]));
  out = std::move(tile);
  return Status::ok();
}

Status ScheduleParser::parseInit(const json &object, const std::string &path,
                                 InitSpec &out) const {
  if (!object.is_object())
    return error(path, "expected an object");
  if (!object.contains("kind"))
    return error(path, "missing key 'kind'");
  std::string kind;
  ZERO_RETURN_IF_ERROR(getString(object, "kind", path, kind));
  if (kind == "normal") {
    ZERO_RETURN_IF_ERROR(checkKeys(object, path, {"kind", "std"}, {}));
    out.kind = InitSpec::Kind::Normal;
    ZERO_RETURN_IF_ERROR(getNumber(object, "std", path, out.std));
    if (!(out.std >= 0))
      return error(path + ".std", "must be at least 0");
  } else if (kind == "zeros" || kind == "ones" || kind == "param" ||
             kind == "file") {
    ZERO_RETURN_IF_ERROR(checkKeys(object, path, {"kind"}, {}));
    out.kind = kind == "zeros"  ? InitSpec::Kind::Zeros
               : kind == "ones" ? InitSpec::Kind::Ones
               : kind == "file" ? InitSpec::Kind::File
                                : InitSpec::Kind::Param;
  } else if (kind == "value") {
    ZERO_RETURN_IF_ERROR(checkKeys(object, path, {"kind", "value"}, {}));
    out.kind = InitSpec::Kind::Value;
    ZERO_RETURN_IF_ERROR(getNumber(object, "value", path, out.value));
  } else {
    return error(path + ".kind", "unknown init kind '" + kind +
                                     "' (expected normal, zeros, ones, "
                                     "file, param or value)");
  }
  return Status::ok();
}

Status ScheduleParser::parseArguments(const json &root) {
  const json *arguments;
  ZERO_RETURN_IF_ERROR(getArray(root, "arguments", "", arguments));
  std::map<int64_t, size_t> argumentOfValue;
  std::map<std::string, size_t> params, data, states;
  std::optional<size_t> step;
  for (size_t i = 0; i < arguments->size(); ++i) {
    const json &entry = (*arguments)[i];
    std::string path = "arguments[" + std::to_string(i) + "]";
    if (!entry.is_object())
      return error(path, "expected an object");
    if (!entry.contains("kind"))
      return error(path, "missing key 'kind'");
    ArgumentInfo arg;
    std::string kind;
    ZERO_RETURN_IF_ERROR(getString(entry, "kind", path, kind));
    if (kind == "param") {
      arg.kind = ArgumentInfo::Kind::Param;
      ZERO_RETURN_IF_ERROR(checkKeys(
          entry, path,
          {"value", "kind", "name", "layout", "sharded", "persistent", "init"},
          {"tile"}));
      ZERO_RETURN_IF_ERROR(getString(entry, "name", path, arg.name));
      if (arg.name.empty())
        return error(path + ".name", "a parameter needs a name");
      if (!params.emplace(arg.name, i).second)
        return error(path + ".name",
                     "parameter '" + arg.name +
                         "' is named twice (first at arguments[" +
                         std::to_string(params[arg.name]) + "])");
      const json *layout;
      ZERO_RETURN_IF_ERROR(getObject(entry, "layout", path, layout));
      ZERO_RETURN_IF_ERROR(parseLayout(*layout, path + ".layout", arg.layout,
                                       {}, /*orNode=*/true));
      ZERO_RETURN_IF_ERROR(getBool(entry, "sharded", path, arg.sharded));
      ZERO_RETURN_IF_ERROR(getBool(entry, "persistent", path, arg.persistent));
      ZERO_RETURN_IF_ERROR(parseInit(entry["init"], path + ".init", arg.init));
      if (arg.init.kind == InitSpec::Kind::Param ||
          arg.init.kind == InitSpec::Kind::Value)
        return error(path + ".init.kind",
                     "a parameter starts as normal, zeros, ones or file");
      if (entry.contains("tile")) {
        const json *tile;
        ZERO_RETURN_IF_ERROR(getObject(entry, "tile", path, tile));
        ZERO_RETURN_IF_ERROR(
            parseTile(*tile, path + ".tile", arg.layout.shape, arg.tile));
      }
    } else if (kind == "state") {
      arg.kind = ArgumentInfo::Kind::State;
      ZERO_RETURN_IF_ERROR(checkKeys(
          entry, path, {"value", "kind", "state", "init"}, {"param"}));
      ZERO_RETURN_IF_ERROR(getString(entry, "state", path, arg.state));
      static const char *kPerParam[] = {"master", "exp_avg", "exp_avg_sq",
                                        "max_exp_avg_sq", "momentum_buffer"};
      static const char *kStepLevel[] = {"loss_scale", "loss_scale_hysteresis",
                                         "good_steps"};
      bool perParam =
          std::any_of(std::begin(kPerParam), std::end(kPerParam),
                      [&](const char *k) { return arg.state == k; });
      bool stepLevel =
          std::any_of(std::begin(kStepLevel), std::end(kStepLevel),
                      [&](const char *k) { return arg.state == k; });
      if (!perParam && !stepLevel) {
        std::vector<std::string> known(std::begin(kPerParam),
                                       std::end(kPerParam));
        known.insert(known.end(), std::begin(kStepLevel), std::end(kStepLevel));
        std::string expected;
        for (size_t i = 0; i < known.size(); ++i)
          expected += (i == 0                  ? ""
                       : i + 1 == known.size() ? " or "
                                               : ", ") +
                      known[i];
        return error(path + ".state", "unknown state '" + arg.state +
                                          "' (expected " + expected + ")");
      }
      if (perParam) {
        if (!entry.contains("param"))
          return error(path, "state '" + arg.state +
                                 "' needs the key 'param' naming its "
                                 "parameter");
        ZERO_RETURN_IF_ERROR(getString(entry, "param", path, arg.param));
        auto it = params.find(arg.param);
        if (it == params.end())
          return error(path + ".param",
                       "'" + arg.param +
                           "' is not a parameter argument before it");
        arg.paramArgument = static_cast<int64_t>(it->second);
      } else if (entry.contains("param")) {
        return error(path + ".param", "state '" + arg.state +
                                          "' belongs to the step, not to "
                                          "a parameter");
      }
      // One state of each kind per parameter, and per step.
      std::string key = arg.param + "\n" + arg.state;
      if (!states.emplace(key, i).second)
        return error(path + ".state",
                     "state '" + arg.state + "'" +
                         (perParam ? " of '" + arg.param + "'" : "") +
                         " is already arguments[" +
                         std::to_string(states[key]) + "]");
      ZERO_RETURN_IF_ERROR(parseInit(entry["init"], path + ".init", arg.init));
      InitSpec::Kind expected = !perParam               ? InitSpec::Kind::Value
                                : arg.state == "master" ? InitSpec::Kind::Param
                                                        : InitSpec::Kind::Zeros;
      if (arg.init.kind != expected)
        return error(path + ".init.kind",
                     "state '" + arg.state + "' starts as " +
                         (expected == InitSpec::Kind::Value   ? "'value'"
                          : expected == InitSpec::Kind::Param ? "'param'"
                                                              : "'zeros'"));
    } else if (kind == "step") {
      arg.kind = ArgumentInfo::Kind::Step;
      ZERO_RETURN_IF_ERROR(
          checkKeys(entry, path, {"value", "kind", "init"}, {}));
      if (step)
        return error(path + ".kind", "a second step count (the first is "
                                     "arguments[" +
                                         std::to_string(*step) + "])");
      step = i;
      ZERO_RETURN_IF_ERROR(parseInit(entry["init"], path + ".init", arg.init));
      if (arg.init.kind != InitSpec::Kind::Value)
        return error(path + ".init.kind", "the step count starts as 'value'");
    } else if (kind == "data") {
      arg.kind = ArgumentInfo::Kind::Data;
      ZERO_RETURN_IF_ERROR(
          checkKeys(entry, path, {"value", "kind", "name"}, {"bound"}));
      ZERO_RETURN_IF_ERROR(getString(entry, "name", path, arg.name));
      if (arg.name.empty())
        return error(path + ".name", "a data argument needs a name");
      if (!data.emplace(arg.name, i).second)
        return error(path + ".name",
                     "data argument '" + arg.name +
                         "' is named twice (first at arguments[" +
                         std::to_string(data[arg.name]) + "])");
      if (entry.contains("bound"))
        ZERO_RETURN_IF_ERROR(getInt(entry, "bound", path, arg.bound, 1));
    } else {
      return error(path + ".kind", "unknown argument kind '" + kind +
                                       "' (expected param, state, step or "
                                       "data)");
    }
    ZERO_RETURN_IF_ERROR(getInt(entry, "value", path, arg.value,
                                std::numeric_limits<int64_t>::min()));
    if (!s.values_.lookup(arg.value))
      return error(path + ".value",
                   "value " + std::to_string(arg.value) + " is not defined");
    auto [it, inserted] = argumentOfValue.emplace(arg.value, i);
    if (!inserted)
      return error(path + ".value", "value " + std::to_string(arg.value) +
                                        " is already arguments[" +
                                        std::to_string(it->second) + "]");
    ZERO_RETURN_IF_ERROR(checkArgument(arg, path));
    s.arguments_.push_back(std::move(arg));
  }
  return checkTiles(params);
}

Status
ScheduleParser::checkTiles(const std::map<std::string, size_t> &params) const {
  // The tiles of each weight cover it exactly once, so that initialization
  // and export see every element of it once.
  std::map<std::string, std::vector<size_t>> tilesOf;
  for (size_t i = 0; i < s.arguments_.size(); ++i)
    if (s.arguments_[i].tile)
      tilesOf[s.arguments_[i].tile->param].push_back(i);
  for (const auto &[weight, tiles] : tilesOf) {
    std::string path = "arguments[" + std::to_string(tiles.front()) + "].tile";
    if (params.count(weight))
      return error(path + ".param",
                   "weight '" + weight + "' is also the name of a parameter");
    const TileInfo &first = *s.arguments_[tiles.front()].tile;
    int64_t covered = 0;
    for (size_t a = 0; a < tiles.size(); ++a) {
      const ArgumentInfo &arg = s.arguments_[tiles[a]];
      if (arg.tile->shape != first.shape)
        return error("arguments[" + std::to_string(tiles[a]) + "].tile.shape",
                     "differs from that of another tile of '" + weight + "'");
      covered += arg.layout.numel;
      for (size_t b = 0; b < a; ++b) {
        const ArgumentInfo &other = s.arguments_[tiles[b]];
        bool overlap = true;
        for (size_t d = 0; d < 2; ++d)
          overlap &=
              arg.tile->offset[d] <
                  other.tile->offset[d] + other.layout.shape[d] &&
              other.tile->offset[d] < arg.tile->offset[d] + arg.layout.shape[d];
        if (overlap)
          return error("arguments[" + std::to_string(tiles[a]) + "].tile",
                       "overlaps arguments[" + std::to_string(tiles[b]) +
                           "], another tile of '" + weight + "'");
      }
    }
    if (covered != first.shape[0] * first.shape[1])
      return error(path, "the tiles of '" + weight + "' cover " +
                             std::to_string(covered) + " of its " +
                             std::to_string(first.shape[0] * first.shape[1]) +
                             " elements");
  }
  return Status::ok();
}

Status ScheduleParser::checkArgument(ArgumentInfo &arg,
                                     const std::string &path) {
  const ValueInfo &value = s.values_.values[arg.value];
  std::string what = s.describeValue(arg.value);
  if (!value.isTensor)
    return error(path + ".value", what + " is a scalar; arguments are "
                                         "tensors");
  auto shapeError = [&](const std::string &expected) {
    return error(path + ".value",
                 what + " has shape " + joinShape(value.shape) + " x " +
                     getDTypeName(value.dtype) + ", but " + expected);
  };
  // Only the rank's shard of a parameter is stored quantized: the quantized
  // all-gather that reads it gathers shards.
  if (value.quantized && arg.kind != ArgumentInfo::Kind::Param)
    return error(path + ".value",
                 what +
                     " is stored quantized, but only a sharded parameter may "
                     "be (zero_quantized_nontrainable_weights)");
  if (value.quantized && !arg.sharded)
    return error(path + ".value",
                 what + " is stored quantized, but parameter '" + arg.name +
                     "' is not sharded: only a sharded parameter may be "
                     "(zero_quantized_nontrainable_weights)");
  switch (arg.kind) {
  case ArgumentInfo::Kind::Param: {
    if (!isFloat(value.dtype))
      return shapeError("a parameter is a floating-point tensor");
    // The compiler pads a parameter to the least multiple of its world
    // size: with the shard's size below, that ties the layout's element
    // count to the value (a layout of shape [0] or [] for an [8, 8] weight
    // would start and export a parameter of no or one element).
    const int64_t padded = PartitionLayout::getDefaultPaddedNumel(
        arg.layout.numel, arg.layout.worldSize);
    if (arg.layout.paddedNumel != padded)
      return error(path + ".layout.padded_numel",
                   std::to_string(arg.layout.paddedNumel) +
                       " is not the element count " +
                       std::to_string(arg.layout.numel) + " of shape " +
                       joinShape(arg.layout.shape) +
                       " rounded up to a multiple of world_size " +
                       std::to_string(arg.layout.worldSize) + " (" +
                       std::to_string(padded) +
                       "), as the compiler pads a parameter");
    if (arg.sharded) {
      if (value.numel != arg.layout.shardNumel)
        return shapeError("the shard of '" + arg.name + "' has " +
                          std::to_string(arg.layout.shardNumel) + " elements");
    } else if (value.shape != arg.layout.shape) {
      return shapeError("parameter '" + arg.name + "' has the shape " +
                        joinShape(arg.layout.shape));
    }
    break;
  }
  case ArgumentInfo::Kind::State: {
    if (arg.paramArgument < 0) {
      if (value.numel != 1)
        return shapeError("state '" + arg.state + "' is one element");
      break;
    }
    const ArgumentInfo &param = s.arguments_[arg.paramArgument];
    if (!isFloat(value.dtype))
      return shapeError("an optimizer state is a floating-point tensor");
    if (arg.state == "master" && value.dtype != DType::F32)
      return shapeError("master weights are f32");
    // Stages 1-3 keep the rank's shard of every state, stage 0 the whole.
    if (s.stage_ >= 1) {
      if (value.numel != param.layout.shardNumel)
        return shapeError("at stage " + std::to_string(s.stage_) +
                          " the state is the rank's shard of '" + arg.param +
                          "', " + std::to_string(param.layout.shardNumel) +
                          " elements");
    } else if (value.numel != param.layout.numel) {
      return shapeError("at stage 0 the state is the whole '" + arg.param +
                        "', " + std::to_string(param.layout.numel) +
                        " elements");
    }
    break;
  }
  case ArgumentInfo::Kind::Step:
    if (value.numel != 1 || isFloat(value.dtype))
      return shapeError("the step count is one integer");
    break;
  case ArgumentInfo::Kind::Data:
    if (!isFloat(value.dtype) && arg.bound == 0)
      return error(path, "integer data argument '" + arg.name +
                             "' needs a 'bound' (the vocabulary, the "
                             "classes)");
    break;
  }
  return Status::ok();
}

Status ScheduleParser::parseResults(const json &root) {
  const json *results;
  ZERO_RETURN_IF_ERROR(getArray(root, "results", "", results));
  std::map<int64_t, size_t> updated;
  for (size_t i = 0; i < results->size(); ++i) {
    const json &entry = (*results)[i];
    std::string path = "results[" + std::to_string(i) + "]";
    if (!entry.is_object())
      return error(path, "expected an object");
    if (!entry.contains("kind"))
      return error(path, "missing key 'kind'");
    ResultInfo result;
    std::string kind;
    ZERO_RETURN_IF_ERROR(getString(entry, "kind", path, kind));
    if (kind == "loss") {
      ZERO_RETURN_IF_ERROR(checkKeys(entry, path, {"value", "kind"}, {}));
      result.kind = ResultInfo::Kind::Loss;
    } else if (kind == "update") {
      ZERO_RETURN_IF_ERROR(
          checkKeys(entry, path, {"value", "kind", "argument"}, {}));
      result.kind = ResultInfo::Kind::Update;
      ZERO_RETURN_IF_ERROR(getInt(entry, "argument", path, result.argument));
      if (result.argument >= static_cast<int64_t>(s.arguments_.size()))
        return error(path + ".argument",
                     "argument " + std::to_string(result.argument) +
                         " does not exist (the schedule has " +
                         std::to_string(s.arguments_.size()) + ")");
      auto [it, inserted] = updated.emplace(result.argument, i);
      if (!inserted)
        return error(path + ".argument", "argument " +
                                             std::to_string(result.argument) +
                                             " is already updated by results[" +
                                             std::to_string(it->second) + "]");
    } else {
      return error(path + ".kind", "unknown result kind '" + kind +
                                       "' (expected loss or update)");
    }
    ZERO_RETURN_IF_ERROR(getInt(entry, "value", path, result.value,
                                std::numeric_limits<int64_t>::min()));
    const ValueInfo *value = s.values_.lookup(result.value);
    if (!value)
      return error(path + ".value",
                   "value " + std::to_string(result.value) + " is not defined");
    if (result.kind == ResultInfo::Kind::Loss) {
      if (s.lossValue_ >= 0)
        return error(path, "a second loss result");
      if (value->numel != 1 || !isFloat(value->dtype))
        return error(path + ".value", s.describeValue(result.value) +
                                          " is not one floating-point "
                                          "element: the loss is a scalar");
      s.lossValue_ = result.value;
    } else {
      const ValueInfo &target =
          s.values_.values[s.arguments_[result.argument].value];
      if (target.quantized)
        return error(path + ".argument",
                     "argument " + std::to_string(result.argument) + "'s " +
                         s.describeValue(target.id) +
                         " is stored quantized "
                         "(zero_quantized_nontrainable_weights): a frozen "
                         "parameter is not updated");
      if (!value->isTensor || value->dtype != target.dtype ||
          value->numel != target.numel)
        return error(
            path + ".value",
            s.describeValue(result.value) + " (" + joinShape(value->shape) +
                " x " + getDTypeName(value->dtype) +
                ") does not fit argument " + std::to_string(result.argument) +
                " (" + joinShape(target.shape) + " x " +
                getDTypeName(target.dtype) + ")");
    }
    s.results_.push_back(result);
  }
  return Status::ok();
}

Status ScheduleParser::checkValueIds(const std::vector<int64_t> &ids,
                                     const std::string &path,
                                     bool tensorsOnly) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    const ValueInfo *info = s.values_.lookup(ids[i]);
    std::string field = path + "[" + std::to_string(i) + "]";
    if (!info)
      return error(field,
                   "value " + std::to_string(ids[i]) + " is not defined");
    if (tensorsOnly && !info->isTensor)
      return error(field, s.describeValue(ids[i]) + " is a scalar, not a "
                                                    "tensor");
  }
  return Status::ok();
}

Status ScheduleParser::parseStreams(const json &root) {
  const json *streams;
  ZERO_RETURN_IF_ERROR(getArray(root, "streams", "", streams));
  std::vector<std::string> names;
  for (size_t i = 0; i < streams->size(); ++i) {
    std::string path = "streams[" + std::to_string(i) + "]";
    const json &name = (*streams)[i];
    if (!name.is_string())
      return error(path, "expected a stream name");
    std::string text = name.get<std::string>();
    if (text == "copy" && s.version_ < 2)
      return needsVersion2(path, "the stream 'copy'");
    if (text != "compute" && text != "comm" && text != "copy")
      return error(path, "unknown stream '" + text +
                             "' (expected compute, comm or copy)");
    if (std::find(names.begin(), names.end(), text) != names.end())
      return error(path, "stream '" + text + "' is listed twice");
    names.push_back(text);
  }
  if (std::find(names.begin(), names.end(), "compute") == names.end())
    return error("streams", "the stream 'compute' is missing");
  // The compute stream first: it runs on the caller's thread.
  std::stable_partition(names.begin(), names.end(),
                        [](const std::string &n) { return n == "compute"; });
  ZERO_RETURN_IF_ERROR(
      getInt(root, "events", "", s.numEvents_, 0, int64_t(1) << 30));
  const json *instructions;
  ZERO_RETURN_IF_ERROR(getObject(root, "instructions", "", instructions));
  for (auto it = instructions->begin(); it != instructions->end(); ++it)
    if (std::find(names.begin(), names.end(), it.key()) == names.end())
      return error("instructions." + it.key(),
                   "stream '" + it.key() + "' is not listed in 'streams'");
  for (const std::string &name : names) {
    std::string path = "instructions." + name;
    if (!instructions->contains(name))
      return error("instructions",
                   "missing the instructions of stream '" + name + "'");
    const json *list;
    ZERO_RETURN_IF_ERROR(
        getArray(*instructions, name.c_str(), "instructions", list));
    Stream stream;
    stream.name = name;
    stream.instructions.resize(list->size());
    for (size_t i = 0; i < list->size(); ++i) {
      std::string at = path + "[" + std::to_string(i) + "]";
      ZERO_RETURN_IF_ERROR(
          parseInstruction((*list)[i], at, name, stream.instructions[i]));
      // Optional for single ops (decodeInstruction), not in a schedule.
      for (const char *key : {"point", "loc"})
        if (!(*list)[i].contains(key))
          return error(at, std::string("missing key '") + key + "'");
    }
    s.streams_.push_back(std::move(stream));
  }
  return Status::ok();
}

Status ScheduleParser::checkQuantizedValues() const {
  auto stored = [&](int64_t id) -> const std::optional<QuantizedStorage> & {
    return s.values_.values[id].quantized;
  };
  auto refuseReader = [&](const std::string &field, int64_t id) {
    return error(field, s.describeValue(id) +
                            " is stored quantized "
                            "(zero_quantized_nontrainable_weights); only a "
                            "quantized all_gather of block_size " +
                            std::to_string(stored(id)->blockSize) +
                            " reads it");
  };
  auto refuseWriter = [&](const std::string &field, int64_t id) {
    return error(field, s.describeValue(id) +
                            " is stored quantized "
                            "(zero_quantized_nontrainable_weights); no "
                            "instruction but a swap writes it");
  };
  // A body's ops may read the tensors of the enclosing op (tensor.extract).
  std::function<Status(const OpRecord &)> checkOp =
      [&](const OpRecord &op) -> Status {
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (s.values_.lookup(op.operands[i]) && stored(op.operands[i]))
        return refuseReader(op.path + ".operands[" + std::to_string(i) + "]",
                            op.operands[i]);
    for (size_t i = 0; i < op.results.size(); ++i)
      if (s.values_.lookup(op.results[i]) && stored(op.results[i]))
        return refuseWriter(op.path + ".results[" + std::to_string(i) + "]",
                            op.results[i]);
    if (op.info && op.fields.has(Field::Body))
      for (const OpRecord &inner : op.fields.getBody(Field::Body).ops)
        ZERO_RETURN_IF_ERROR(checkOp(inner));
    return Status::ok();
  };
  for (const Stream &stream : s.streams_)
    for (const Instruction &inst : stream.instructions) {
      if (inst.kind == Instruction::Kind::Swap) {
        // The bytes move unchanged: both ends are stored alike.
        for (size_t i = 0; i < inst.operands.size(); ++i)
          if (stored(inst.operands[i]) != stored(inst.results[i]))
            return error(inst.path + ".results[" + std::to_string(i) + "]",
                         s.describeValue(inst.results[i]) + " and " +
                             s.describeValue(inst.operands[i]) +
                             " are not stored alike (both quantized in "
                             "blocks of one size, or neither): a swap "
                             "moves the stored bytes as they are");
        continue;
      }
      if (inst.kind == Instruction::Kind::AllGather && inst.quantize) {
        for (size_t i = 0; i < inst.operands.size(); ++i)
          if (stored(inst.operands[i]) &&
              stored(inst.operands[i])->blockSize != inst.quantize->blockSize)
            return refuseReader(inst.path + ".operands[" + std::to_string(i) +
                                    "]",
                                inst.operands[i]);
        for (size_t i = 0; i < inst.results.size(); ++i)
          if (stored(inst.results[i]))
            return refuseWriter(inst.path + ".results[" + std::to_string(i) +
                                    "]",
                                inst.results[i]);
        continue;
      }
      ZERO_RETURN_IF_ERROR(checkOp(inst));
    }
  return Status::ok();
}

Status ScheduleParser::parseInstruction(const json &object,
                                        const std::string &path,
                                        const std::string &stream,
                                        Instruction &inst) {
  inst.path = path;
  if (!object.is_object())
    return error(path, "expected an object");
  if (!object.contains("op"))
    return error(path, "missing key 'op'");
  ZERO_RETURN_IF_ERROR(getString(object, "op", path, inst.op));
  const std::string &op = inst.op;
  inst.info = lookupOp(op); // decodeOp checks it for compute ops
  if (op == "record" || op == "wait") {
    inst.kind =
        op == "record" ? Instruction::Kind::Record : Instruction::Kind::Wait;
    ZERO_RETURN_IF_ERROR(
        checkKeys(object, path, {"op", "event"}, {"point", "loc"}));
    ZERO_RETURN_IF_ERROR(getInt(object, "event", path, inst.event));
    if (inst.event >= s.numEvents_)
      return error(path + ".event", "event " + std::to_string(inst.event) +
                                        " is out of range: the schedule has " +
                                        std::to_string(s.numEvents_) +
                                        " events");
  } else if (op == "free") {
    inst.kind = Instruction::Kind::Free;
    ZERO_RETURN_IF_ERROR(
        checkKeys(object, path, {"op", "values"}, {"point", "loc"}));
    ZERO_RETURN_IF_ERROR(getIntList(object, "values", path, inst.values,
                                    std::numeric_limits<int64_t>::min()));
    ZERO_RETURN_IF_ERROR(checkValueIds(inst.values, path + ".values", true));
  } else if (op == "loop_slice") {
    // Checked against the loop by checkLoopSlices, once the loop is read.
    if (s.version_ < 2)
      return needsVersion2(path + ".op", "'loop_slice'");
    if (stream != "compute")
      return error(path + ".op", "'loop_slice' on stream '" + stream +
                                     "': it runs on stream 'compute'");
    inst.kind = Instruction::Kind::LoopSlice;
    ZERO_RETURN_IF_ERROR(checkKeys(object, path, {"op", "operands", "results"},
                                   {"point", "loc"}));
    ZERO_RETURN_IF_ERROR(parseTensorLists(object, inst, /*exactlyOne=*/true));
  } else if (op == "swap") {
    if (s.version_ < 2)
      return needsVersion2(path + ".op", "'swap'");
    if (stream != "copy")
      return error(path + ".op", "'swap' on stream '" + stream +
                                     "': swaps run on stream 'copy'");
    inst.kind = Instruction::Kind::Swap;
    ZERO_RETURN_IF_ERROR(checkKeys(object, path, {"op", "operands", "results"},
                                   {"point", "loc"}));
    ZERO_RETURN_IF_ERROR(parseTensorLists(object, inst, /*exactlyOne=*/false));
  } else if (op == "all_gather" || op == "reduce_scatter" ||
             op == "all_reduce") {
    inst.kind = op == "all_gather"       ? Instruction::Kind::AllGather
                : op == "reduce_scatter" ? Instruction::Kind::ReduceScatter
                                         : Instruction::Kind::AllReduce;
    if (stream != "comm")
      return error(path, "collective '" + op + "' on stream '" + stream +
                             "': collectives run on stream 'comm'");
    if (object.contains("quantize")) {
      if (s.version_ < 3)
        return error(path + ".quantize",
                     "'quantize' needs version 3 (the schedule is version " +
                         std::to_string(s.version_) + ")");
      if (inst.kind == Instruction::Kind::AllReduce)
        return error(path + ".quantize",
                     "'quantize' is supported on all_gather and "
                     "reduce_scatter only, not " +
                         op);
    }
    if (object.contains("hierarchical")) {
      if (s.version_ < 3)
        return error(path + ".hierarchical",
                     "'hierarchical' needs version 3 (the schedule is "
                     "version " +
                         std::to_string(s.version_) + ")");
      if (inst.kind != Instruction::Kind::AllGather)
        return error(path + ".hierarchical",
                     "'hierarchical' is supported on all_gather only, not " +
                         op);
      ZERO_RETURN_IF_ERROR(
          getBool(object, "hierarchical", path, inst.hierarchical));
    }
    if (inst.kind == Instruction::Kind::AllGather)
      ZERO_RETURN_IF_ERROR(checkKeys(object, path,
                                     {"op", "operands", "results", "layouts"},
                                     {"point", "loc", "staging", "grid_axes",
                                      "quantize", "hierarchical"}));
    else if (inst.kind == Instruction::Kind::ReduceScatter)
      ZERO_RETURN_IF_ERROR(checkKeys(
          object, path, {"op", "operands", "results", "layouts", "reduction"},
          {"point", "loc", "staging", "grid_axes", "quantize"}));
    else
      ZERO_RETURN_IF_ERROR(
          checkKeys(object, path, {"op", "operands", "results", "reduction"},
                    {"point", "loc", "staging", "layouts", "grid_axes"}));
  } else {
    if (stream != "compute")
      return error(path + ".op",
                   "'" + op + "' on stream '" + stream + "' (expected " +
                       (stream == "copy" ? "swap"
                                         : "all_gather, reduce_scatter, "
                                           "all_reduce") +
                       ", record or wait)");
    inst.kind = Instruction::Kind::Compute;
    auto loc = object.find("loc");
    ZERO_RETURN_IF_ERROR(decodeOp(
        object, /*inBody=*/false,
        loc != object.end() && loc->is_string() ? loc->get<std::string>() : "",
        inst));
  }
  if (object.contains("point"))
    ZERO_RETURN_IF_ERROR(getInt(object, "point", path, inst.point));
  if (object.contains("loc"))
    ZERO_RETURN_IF_ERROR(getString(object, "loc", path, inst.loc));
  if (inst.isCollective()) {
    for (const char *key : {"operands", "results"}) {
      if (!object.contains(key))
        continue;
      std::vector<int64_t> &ids =
          std::string(key) == "operands" ? inst.operands : inst.results;
      ZERO_RETURN_IF_ERROR(getIntList(object, key, path, ids,
                                      std::numeric_limits<int64_t>::min()));
      ZERO_RETURN_IF_ERROR(checkValueIds(ids, path + "." + key, true));
    }
  }
  if (inst.isCollective())
    return parseCollective(object, inst);
  if (inst.kind == Instruction::Kind::Swap)
    return parseSwap(inst, object.contains("point"));
  return Status::ok();
}

Status ScheduleParser::parseTensorLists(const json &object, Instruction &inst,
                                        bool exactlyOne) {
  for (const char *key : {"operands", "results"}) {
    std::vector<int64_t> &ids =
        std::string(key) == "operands" ? inst.operands : inst.results;
    std::string field = inst.path + "." + key;
    ZERO_RETURN_IF_ERROR(getIntList(object, key, inst.path, ids,
                                    std::numeric_limits<int64_t>::min()));
    if (exactlyOne && ids.size() != 1)
      return error(field,
                   "expected one tensor, got " + std::to_string(ids.size()));
    ZERO_RETURN_IF_ERROR(checkValueIds(ids, field, true));
  }
  return Status::ok();
}

Status ScheduleParser::checkWrittenFromStart(const Instruction &inst) const {
  const ValueTable &values = s.values_;
  for (size_t i = 0; i < inst.results.size(); ++i) {
    const BufferInfo &buffer =
        s.buffers_[values.values[inst.results[i]].buffer];
    if (buffer.liveBegin > inst.point)
      return error(inst.path + ".results[" + std::to_string(i) + "]",
                   s.describeValue(inst.results[i]) +
                       " is written from point " + std::to_string(inst.point) +
                       " on, but its buffer '" + buffer.name +
                       "' is reserved only from point " +
                       std::to_string(buffer.liveBegin));
  }
  return Status::ok();
}

Status ScheduleParser::parseSwap(Instruction &inst, bool hasPoint) {
  const std::string &path = inst.path;
  size_t count = inst.operands.size();
  if (count == 0)
    return error(path + ".operands", "a swap needs at least one tensor");
  if (inst.results.size() != count)
    return error(path + ".results", std::to_string(inst.results.size()) +
                                        " results for " +
                                        std::to_string(count) + " operands");
  const ValueTable &values = s.values_;
  for (size_t i = 0; i < count; ++i) {
    const ValueInfo &from = values.values[inst.operands[i]];
    const ValueInfo &to = values.values[inst.results[i]];
    std::string field = path + ".results[" + std::to_string(i) + "]";
    if (from.dtype != to.dtype || from.numel != to.numel)
      return error(field, s.describeValue(to.id) + " is " +
                              std::to_string(to.numel) + " " +
                              getDTypeName(to.dtype) + " elements, but " +
                              s.describeValue(from.id) + " is " +
                              std::to_string(from.numel) + " " +
                              getDTypeName(from.dtype) +
                              ": a swap moves a tensor as it is");
    MemorySpace fromSpace = s.buffers_[from.buffer].space;
    MemorySpace toSpace = s.buffers_[to.buffer].space;
    if (fromSpace == toSpace)
      return error(field, s.describeValue(to.id) + " and " +
                              s.describeValue(from.id) + " are both in " +
                              getMemorySpaceName(fromSpace) +
                              " memory: a swap moves a tensor to another "
                              "memory space");
  }
  return hasPoint ? checkWrittenFromStart(inst) : Status::ok();
}

/// "3 operands", "1 result", "6 to 8 operands", "at least 1 result".
static std::string describeCount(uint32_t least, uint32_t most,
                                 const char *noun) {
  std::string count =
      least == most         ? std::to_string(least)
      : most == kAnyNumber ? "at least " + std::to_string(least)
                           : std::to_string(least) + " to " +
                                 std::to_string(most);
  bool one = least == 1 && (most == 1 || most == kAnyNumber);
  return count + " " + noun + (one ? "" : "s");
}

Status ScheduleParser::checkArity(const OpRecord &op,
                                  const std::string &loc) const {
  const OpArity &arity = op.info->arity;
  if (!arity.admitsOperands(op.operands.size()))
    return opError(op.path + ".operands",
                   op.op + " takes " +
                       describeCount(arity.minOperands, arity.maxOperands,
                                     "operand") +
                       ", got " + std::to_string(op.operands.size()),
                   loc);
  if (!arity.admitsResults(op.results.size()))
    return opError(op.path + ".results",
                   op.op + " takes " +
                       describeCount(arity.minResults, arity.maxResults,
                                     "result") +
                       ", got " + std::to_string(op.results.size()),
                   loc);
  return Status::ok();
}

Status ScheduleParser::decodeOp(const json &object, bool inBody,
                                const std::string &loc, OpRecord &op) const {
  const std::string &path = op.path;
  if (!object.is_object())
    return opError(path, "expected an object", loc);
  if (!object.contains("op"))
    return opError(path, "missing key 'op'", loc);
  ZERO_RETURN_IF_ERROR(atLoc(getString(object, "op", path, op.op), loc));
  op.info = lookupOp(op.op);
  if (!op.info ||
      !(inBody ? op.info->isBodyOp() : op.info->isComputeStreamOp()))
    return opError(path + ".op",
                   "unsupported op '" + op.op + "'" +
                       (inBody ? " in a body (expected a scalar arith or math "
                                 "op, linalg.index or tensor.extract)"
                               : ""),
                   loc);
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string &key = it.key();
    if (key == "op" || key == "operands" || key == "results" ||
        (!inBody && (key == "point" || key == "loc")))
      continue;
    bool known = false;
    for (const Field *f = op.info->beginFields(); f != op.info->endFields();
         ++f)
      known |= getFieldInfo(*f).name == key;
    if (known)
      continue;
    std::string expected;
    for (const Field *f = op.info->beginFields(); f != op.info->endFields();
         ++f)
      expected += std::string(expected.empty() ? "" : ", ") + "'" +
                  std::string(getFieldInfo(*f).name) + "'";
    return opError(path + "." + key,
                   "unknown key for " + op.op +
                       (expected.empty() ? " (it takes no fields)"
                                         : " (its fields: " + expected + ")"),
                   loc);
  }
  for (const char *key : {"operands", "results"}) {
    if (!object.contains(key))
      return opError(path, std::string("missing key '") + key + "'", loc);
    std::vector<int64_t> &ids =
        std::string(key) == "operands" ? op.operands : op.results;
    ZERO_RETURN_IF_ERROR(atLoc(
        getIntList(object, key, path, ids, std::numeric_limits<int64_t>::min()),
        loc));
    ZERO_RETURN_IF_ERROR(
        atLoc(checkValueIds(ids, path + "." + key, false), loc));
  }
  // The op table's arity, before anything (the loader's proofs, the
  // gradient records, a backend) reads an operand or a result by position.
  ZERO_RETURN_IF_ERROR(checkArity(op, loc));
  for (const Field *f = op.info->beginFields(); f != op.info->endFields();
       ++f) {
    const FieldInfo &info = getFieldInfo(*f);
    std::string key(info.name);
    if (!object.contains(key) && op.info->isOptionalField(*f))
      continue;
    if (!object.contains(key))
      return opError(path, "missing field '" + key + "' of " + op.op, loc);
    FieldValue value;
    ZERO_RETURN_IF_ERROR(
        decodeField(object.at(key), info, path + "." + key, loc, value));
    op.fields.set(info.field, std::move(value));
  }
  return Status::ok();
}

Status ScheduleParser::decodeNumber(const json &node, const std::string &path,
                                    const std::string &loc, Number &out) const {
  out.text = node.dump();
  if (node.is_boolean()) {
    out.isInteger = true;
    out.i = node.get<bool>() ? 1 : 0;
  } else if (node.is_number_unsigned()) {
    // Integers of every width are written as their value; a uint64 above
    // the int64 range wraps as the integer types do.
    out.isInteger = true;
    out.i = static_cast<int64_t>(node.get<uint64_t>());
  } else if (node.is_number_integer()) {
    out.isInteger = true;
    out.i = node.get<int64_t>();
  } else if (node.is_number()) {
    out.f = node.get<double>();
    return Status::ok();
  } else if (node.is_string()) {
    const std::string &text = node.get_ref<const std::string &>();
    if (text == "inf" || text == "+inf")
      out.f = std::numeric_limits<double>::infinity();
    else if (text == "-inf")
      out.f = -std::numeric_limits<double>::infinity();
    else if (text == "nan")
      out.f = std::numeric_limits<double>::quiet_NaN();
    else if (text == "-nan")
      out.f = -std::numeric_limits<double>::quiet_NaN();
    else
      return opError(path,
                     "expected a number, \"inf\", \"-inf\" or \"nan\", "
                     "got " +
                         out.text,
                     loc);
    return Status::ok();
  } else {
    return opError(path, "expected a number, got " + out.text, loc);
  }
  out.f = static_cast<double>(out.i);
  return Status::ok();
}

Status ScheduleParser::decodeField(const json &node, const FieldInfo &info,
                                   const std::string &path,
                                   const std::string &loc,
                                   FieldValue &out) const {
  auto intList = [&](const json &list, std::vector<int64_t> &ids) -> bool {
    if (!list.is_array())
      return false;
    for (const json &entry : list) {
      if (!entry.is_number_integer())
        return false;
      ids.push_back(entry.get<int64_t>());
    }
    return true;
  };
  switch (info.kind) {
  case FieldKind::Int:
    if (!node.is_number_integer())
      return opError(path, "expected an integer, got " + node.dump(), loc);
    out = node.get<int64_t>();
    return Status::ok();
  case FieldKind::Number:
    if (!node.is_number())
      return opError(path, "expected a number, got " + node.dump(), loc);
    out = node.get<double>();
    return Status::ok();
  case FieldKind::Bool:
    if (!node.is_boolean())
      return opError(path, "expected true or false, got " + node.dump(), loc);
    out = node.get<bool>();
    return Status::ok();
  case FieldKind::String:
    if (!node.is_string())
      return opError(path, "expected a string, got " + node.dump(), loc);
    out = node.get<std::string>();
    return Status::ok();
  case FieldKind::IntList: {
    std::vector<int64_t> list;
    if (!intList(node, list))
      return opError(path, "expected an array of integers, got " + node.dump(),
                     loc);
    out = std::move(list);
    return Status::ok();
  }
  case FieldKind::IntListList: {
    std::vector<std::vector<int64_t>> lists;
    bool ok = node.is_array();
    for (size_t i = 0; ok && i < node.size(); ++i)
      ok = intList(node[i], lists.emplace_back());
    if (!ok)
      return opError(
          path, "expected an array of arrays of integers, got " + node.dump(),
          loc);
    out = std::move(lists);
    return Status::ok();
  }
  case FieldKind::StringList: {
    std::vector<std::string> list;
    bool ok = node.is_array();
    for (size_t i = 0; ok && i < node.size(); ++i) {
      ok = node[i].is_string();
      if (ok)
        list.push_back(node[i].get<std::string>());
    }
    if (!ok)
      return opError(path, "expected an array of strings, got " + node.dump(),
                     loc);
    out = std::move(list);
    return Status::ok();
  }
  case FieldKind::Constant: {
    ConstantValue constant;
    if (node.is_object()) {
      bool splat = node.size() == 1 && node.contains("splat");
      bool data =
          node.size() == 1 && node.contains("data") && node["data"].is_array();
      if (!splat && !data)
        return opError(path,
                       "a tensor constant is {\"splat\": x} or "
                       "{\"data\": [...]}, got " +
                           node.dump(),
                       loc);
      if (splat) {
        constant.form = ConstantValue::Form::Splat;
        ZERO_RETURN_IF_ERROR(decodeNumber(node["splat"], path + ".splat", loc,
                                          constant.elements.emplace_back()));
      } else {
        constant.form = ConstantValue::Form::Elements;
        const json &elements = node["data"];
        for (size_t i = 0; i < elements.size(); ++i)
          ZERO_RETURN_IF_ERROR(decodeNumber(
              elements[i], path + ".data[" + std::to_string(i) + "]", loc,
              constant.elements.emplace_back()));
      }
    } else {
      ZERO_RETURN_IF_ERROR(
          decodeNumber(node, path, loc, constant.elements.emplace_back()));
    }
    out = std::move(constant);
    return Status::ok();
  }
  case FieldKind::Layout: {
    PartitionLayout layout;
    ZERO_RETURN_IF_ERROR(
        atLoc(parseLayout(node, path, layout, {}, /*orNode=*/true), loc));
    out = std::move(layout);
    return Status::ok();
  }
  case FieldKind::Body: {
    auto body = std::make_shared<RegionBody>();
    ZERO_RETURN_IF_ERROR(decodeBody(node, path, loc, *body));
    out = std::shared_ptr<const RegionBody>(std::move(body));
    return Status::ok();
  }
  }
  return opError(path, "unknown field kind", loc);
}

Status ScheduleParser::decodeBody(const json &node, const std::string &path,
                                  const std::string &loc,
                                  RegionBody &out) const {
  if (!node.is_object())
    return opError(path,
                   "expected an object with \"arguments\", \"ops\" and "
                   "\"yield\"",
                   loc);
  ZERO_RETURN_IF_ERROR(
      atLoc(checkKeys(node, path, {"arguments", "ops", "yield"}, {}), loc));
  ZERO_RETURN_IF_ERROR(atLoc(getIntList(node, "arguments", path, out.arguments,
                                        std::numeric_limits<int64_t>::min()),
                             loc));
  ZERO_RETURN_IF_ERROR(
      atLoc(checkValueIds(out.arguments, path + ".arguments", false), loc));
  const json *ops;
  ZERO_RETURN_IF_ERROR(atLoc(getArray(node, "ops", path, ops), loc));
  out.ops.resize(ops->size());
  for (size_t i = 0; i < ops->size(); ++i) {
    out.ops[i].path = path + ".ops[" + std::to_string(i) + "]";
    ZERO_RETURN_IF_ERROR(decodeOp((*ops)[i], /*inBody=*/true, loc, out.ops[i]));
  }
  ZERO_RETURN_IF_ERROR(atLoc(getIntList(node, "yield", path, out.yield,
                                        std::numeric_limits<int64_t>::min()),
                             loc));
  return atLoc(checkValueIds(out.yield, path + ".yield", false), loc);
}

Status ScheduleParser::parseGridAxes(const json &object,
                                     Instruction &inst) const {
  const std::string path = inst.path + ".grid_axes";
  if (s.version_ < 3)
    return error(path, "'grid_axes' needs version 3 (the schedule is version " +
                           std::to_string(s.version_) + ")");
  ZERO_RETURN_IF_ERROR(
      getIntList(object, "grid_axes", inst.path, inst.gridAxes, 0));
  if (inst.gridAxes.empty())
    return error(path, "no axes: name at least one axis of topology.grid " +
                           joinShape(s.grid_) +
                           ", or leave grid_axes out for the whole world");
  for (size_t i = 0; i < inst.gridAxes.size(); ++i) {
    std::string field = path + "[" + std::to_string(i) + "]";
    int64_t axis = inst.gridAxes[i];
    if (axis >= static_cast<int64_t>(s.grid_.size()))
      return error(field, "axis " + std::to_string(axis) +
                              " is out of range: topology.grid " +
                              joinShape(s.grid_) + " has " +
                              std::to_string(s.grid_.size()) +
                              (s.grid_.size() == 1 ? " axis" : " axes"));
    if (i > 0 && axis <= inst.gridAxes[i - 1])
      return error(field, "axis " + std::to_string(axis) + " follows axis " +
                              std::to_string(inst.gridAxes[i - 1]) +
                              ": the axes are strictly increasing");
  }
  return Status::ok();
}

Status ScheduleParser::parseQuantize(const json &object, Instruction &inst) {
  const std::string path = inst.path + ".quantize";
  const bool gather = inst.kind == Instruction::Kind::AllGather;
  const std::string op = gather ? "all_gather" : "reduce_scatter";
  // int8 parameters (qwZ), int4 gradients (qgZ).
  const int64_t bits = gather ? 8 : 4;
  ZERO_RETURN_IF_ERROR(checkKeys(object, path, {"bits", "block_size"}, {}));
  Instruction::Quantization q;
  ZERO_RETURN_IF_ERROR(getInt(object, "bits", path, q.bits,
                              std::numeric_limits<int64_t>::min()));
  if (q.bits != bits)
    return error(path + ".bits", std::to_string(q.bits) +
                                     " is not supported for " + op + " (" +
                                     std::to_string(bits) + ")");
  ZERO_RETURN_IF_ERROR(
      getInt(object, "block_size", path, q.blockSize, gather ? 1 : 2));
  // Two int4 values share a byte: a byte must not straddle two blocks.
  if (!gather && q.blockSize % 2 != 0)
    return error(path + ".block_size", std::to_string(q.blockSize) +
                                           " must be even for 4-bit blocks");
  if (inst.dtype != DType::F32 && inst.dtype != DType::BF16 &&
      inst.dtype != DType::F16)
    return error(path, "a quantized " + op +
                           " moves f32, bf16 or f16 tensors, but the bucket "
                           "is " +
                           getDTypeName(inst.dtype));
  // P or C: every operand's scales (f32), then every operand's values.
  std::optional<int64_t> packed = 0;
  // Each shard is at most 2^50 elements: only the sum may overflow.
  for (const PartitionLayout &layout : inst.layouts)
    if (packed)
      packed = checkedAdd(*packed, getPackedBytes(layout.shardNumel,
                                                  static_cast<int>(q.bits),
                                                  q.blockSize));
  if (!packed)
    return error(path, gather
                           ? "the packed block's size in bytes overflows int64"
                           : "the packed chunk's size in bytes overflows "
                             "int64");
  q.packedBytes = *packed;
  inst.quantize = q;
  return Status::ok();
}

Status ScheduleParser::parseCollective(const json &object, Instruction &inst) {
  const std::string &path = inst.path;
  if (object.contains("grid_axes"))
    ZERO_RETURN_IF_ERROR(parseGridAxes(object, inst));
  size_t count = inst.operands.size();
  if (count == 0)
    return error(path + ".operands", "a collective needs at least one tensor");
  if (inst.results.size() != count)
    return error(path + ".results", std::to_string(inst.results.size()) +
                                        " results for " +
                                        std::to_string(count) + " operands");
  bool reduces = inst.kind != Instruction::Kind::AllGather;
  if (reduces) {
    std::string name;
    ZERO_RETURN_IF_ERROR(getString(object, "reduction", path, name));
    bool allReduce = inst.kind == Instruction::Kind::AllReduce;
    if (name == "sum")
      inst.reduction = ReduceOp::Sum;
    else if (name == "avg")
      inst.reduction = ReduceOp::Avg;
    else if (allReduce && name == "max")
      inst.reduction = ReduceOp::Max;
    else if (allReduce && name == "min")
      inst.reduction = ReduceOp::Min;
    else if (object.contains("quantize") && s.version_ >= 3 &&
             (name == "max" || name == "min"))
      return error(path + ".quantize",
                   "a quantized reduce_scatter reduces with sum or avg, not " +
                       name);
    else
      return error(path + ".reduction",
                   "unknown reduction '" + name + "' (expected " +
                       (allReduce ? "sum, avg, max or min" : "sum or avg") +
                       ")");
  }
  const ValueTable &values = s.values_;
  inst.dtype = values.values[inst.operands[0]].dtype;
  for (size_t i = 0; i < count; ++i)
    for (int64_t id : {inst.operands[i], inst.results[i]})
      if (values.values[id].dtype != inst.dtype)
        return error(path, s.describeValue(id) + " is " +
                               getDTypeName(values.values[id].dtype) +
                               ", but the bucket is " +
                               getDTypeName(inst.dtype) +
                               ": one collective moves one element type");
  if (inst.dtype == DType::I1)
    return error(path, "collectives of i1 tensors are not supported");
  // The comm stream writes the results while compute runs on: their bytes
  // must be reserved from the start's point on, not only from the wait's.
  if (object.contains("point"))
    ZERO_RETURN_IF_ERROR(checkWrittenFromStart(inst));

  bool padded = false;
  std::optional<int64_t> bucketNumel = 0;
  if (inst.kind == Instruction::Kind::AllReduce) {
    if (object.contains("layouts") && !object["layouts"].empty())
      return error(path + ".layouts", "an all_reduce moves whole tensors: "
                                      "no layouts");
    for (size_t i = 0; i < count; ++i) {
      const ValueInfo &in = values.values[inst.operands[i]];
      const ValueInfo &out = values.values[inst.results[i]];
      if (in.numel != out.numel)
        return error(path + ".results[" + std::to_string(i) + "]",
                     s.describeValue(out.id) + " has " +
                         std::to_string(out.numel) + " elements, but " +
                         s.describeValue(in.id) + " has " +
                         std::to_string(in.numel));
      if (bucketNumel)
        bucketNumel = checkedAdd(*bucketNumel, in.numel);
    }
  } else {
    const json *layouts;
    ZERO_RETURN_IF_ERROR(getArray(object, "layouts", path, layouts));
    if (layouts->size() != count)
      return error(path + ".layouts", std::to_string(layouts->size()) +
                                          " layouts for " +
                                          std::to_string(count) + " operands");
    bool gather = inst.kind == Instruction::Kind::AllGather;
    for (size_t i = 0; i < count; ++i) {
      PartitionLayout layout;
      std::string field = path + ".layouts[" + std::to_string(i) + "]";
      ZERO_RETURN_IF_ERROR(
          parseLayout((*layouts)[i], field, layout, inst.gridAxes));
      const ValueInfo &shard =
          values.values[gather ? inst.operands[i] : inst.results[i]];
      const ValueInfo &full =
          values.values[gather ? inst.results[i] : inst.operands[i]];
      std::string shardField = path + (gather ? ".operands[" : ".results[") +
                               std::to_string(i) + "]";
      std::string fullField = path + (gather ? ".results[" : ".operands[") +
                              std::to_string(i) + "]";
      if (shard.numel != layout.shardNumel)
        return error(shardField, s.describeValue(shard.id) + " has " +
                                     std::to_string(shard.numel) +
                                     " elements, but the layout's shard has " +
                                     std::to_string(layout.shardNumel));
      if (full.numel != layout.numel)
        return error(fullField, s.describeValue(full.id) + " has " +
                                    std::to_string(full.numel) +
                                    " elements, but the layout's tensor has " +
                                    std::to_string(layout.numel));
      padded |= layout.paddedNumel != layout.numel;
      if (bucketNumel)
        bucketNumel = checkedAdd(*bucketNumel, layout.shardNumel);
      inst.layouts.push_back(std::move(layout));
    }
  }

  if (object.contains("quantize"))
    ZERO_RETURN_IF_ERROR(parseQuantize(object["quantize"], inst));

  // Each count is at most 2^50, but a bucket sums many and the flat buffer
  // holds every rank's shards.
  std::optional<int64_t> bucketBytes =
      bucketNumel ? checkedMul(*bucketNumel, getDTypeWidth(inst.dtype))
                  : std::nullopt;
  if (bucketBytes && inst.kind != Instruction::Kind::AllReduce)
    bucketBytes = checkedMul(*bucketBytes, s.groupSize(inst.gridAxes));
  if (!bucketBytes)
    return error(path, "the flat bucket's size in bytes overflows int64");
  inst.bucketNumel = *bucketNumel;
  int64_t needed = *bucketBytes;
  bool needsStaging = count > 1 || padded;
  // A quantized all-gather gathers every rank's packed block in its staging;
  // a quantized reduce-scatter keeps its f32 partial sums there and the
  // packed chunks it sends and receives.
  const int64_t groupSize = s.groupSize(inst.gridAxes);
  std::string quantizedNeed; // what `needed` holds, for messages
  if (inst.quantize && inst.kind == Instruction::Kind::AllGather) {
    std::optional<int64_t> packedBytes =
        checkedMul(inst.quantize->packedBytes, groupSize);
    if (!packedBytes)
      return error(path, "the packed blocks' size in bytes overflows int64");
    needed = *packedBytes;
    needsStaging = true;
  } else if (inst.quantize) {
    // The first hop runs over the group's last axis of several ranks; the
    // chunks of the other coordinates on it stay (all of them without a
    // hop, in a group of one rank).
    const std::vector<GroupHop> hops = s.groupHops(inst.gridAxes);
    const int64_t kept =
        hops.empty() ? groupSize : groupSize / hops.back().size;
    std::optional<int64_t> sums = checkedMul(inst.bucketNumel, kept);
    if (sums)
      sums = checkedMul(*sums, 4);
    std::optional<int64_t> chunks =
        checkedMul(inst.quantize->packedBytes, groupSize);
    std::optional<int64_t> total =
        sums && chunks ? checkedMul(*chunks, 2) : std::nullopt;
    if (total)
      total = checkedAdd(*total, *sums);
    if (!total)
      return error(path, "the quantized reduce_scatter's staging size in "
                         "bytes overflows int64");
    inst.quantize->sumsBytes = *sums;
    needed = *total;
    needsStaging = true;
    quantizedNeed = "(f32 partial sums " + std::to_string(*sums) +
                    ", packed chunks 2 * " + std::to_string(*chunks) + ")";
  }
  if (object.contains("staging")) {
    const json &staging = object["staging"];
    std::string field = path + ".staging";
    ZERO_RETURN_IF_ERROR(
        checkKeys(staging, field, {"space", "offset", "bytes"}, {}));
    Region region;
    ZERO_RETURN_IF_ERROR(getSpace(staging, field, region.space));
    ZERO_RETURN_IF_ERROR(getInt(staging, "offset", field, region.offset));
    ZERO_RETURN_IF_ERROR(getInt(staging, "bytes", field, region.bytes));
    std::optional<int64_t> end = checkedAdd(region.offset, region.bytes);
    if (!end)
      return error(field, "offset " + std::to_string(region.offset) +
                              " + bytes " + std::to_string(region.bytes) +
                              " overflows int64");
    if (region.bytes < needed)
      return error(
          field + ".bytes",
          std::to_string(region.bytes) + " bytes is less than " +
              (!quantizedNeed.empty()
                   ? "the quantized reduce_scatter's " +
                         std::to_string(needed) + " " + quantizedNeed
               : inst.quantize
                   ? "the quantized blocks' " + std::to_string(needed) + " (" +
                         std::to_string(groupSize) + " ranks of " +
                         std::to_string(inst.quantize->packedBytes) + " bytes)"
                   : "the flat bucket's " + std::to_string(needed)));
    // The partial sums are read and written as floats.
    if (!quantizedNeed.empty() && region.offset % 4 != 0)
      return error(field + ".offset",
                   std::to_string(region.offset) +
                       " is not a multiple of 4, as the f32 partial sums of "
                       "a quantized reduce_scatter need");
    int64_t arena = s.arenaBytes(region.space);
    if (*end > arena)
      return error(field, "bytes [" + std::to_string(region.offset) + ", " +
                              std::to_string(*end) + ") lie outside the " +
                              getMemorySpaceName(region.space) + " arena of " +
                              std::to_string(arena) + " bytes");
    inst.staging = region;
  } else if (!quantizedNeed.empty()) {
    return error(path, "a quantized reduce_scatter needs a 'staging' region "
                       "of " +
                           std::to_string(needed) + " bytes " + quantizedNeed);
  } else if (inst.quantize) {
    return error(path, "a quantized all_gather needs a 'staging' region of " +
                           std::to_string(needed) + " bytes (" +
                           std::to_string(groupSize) + " ranks of " +
                           std::to_string(inst.quantize->packedBytes) +
                           " packed bytes)");
  } else if (needsStaging) {
    return error(path, std::string("a bucket of ") + std::to_string(count) +
                           (count == 1 ? " operand" : " operands") +
                           (padded ? " with padding" : "") +
                           " needs a 'staging' region of " +
                           std::to_string(needed) + " bytes");
  } else {
    // MPI takes the operand and the result directly: they may be the same
    // bytes (an in-place all-reduce) but must not partly overlap.
    const BufferInfo &in = s.bufferOf(inst.operands[0]);
    const BufferInfo &out = s.bufferOf(inst.results[0]);
    int64_t inBytes = s.values_.values[inst.operands[0]].bytes();
    int64_t outBytes = s.values_.values[inst.results[0]].bytes();
    bool same = in.space == out.space && in.offset == out.offset &&
                inst.kind == Instruction::Kind::AllReduce;
    bool overlap = in.space == out.space && in.offset < out.offset + outBytes &&
                   out.offset < in.offset + inBytes;
    if (overlap && !same)
      return error(path, "the operand's bytes and the result's overlap; "
                         "without staging they must be the same or "
                         "disjoint");
  }
  return Status::ok();
}

Status ScheduleParser::checkGatheredLayouts() const {
  // A sharded parameter is gathered with its own layout: the collective's
  // layout is the one the shard was cut with, and its result the whole
  // parameter that --export and checkpoints write with the argument's shape.
  std::unordered_map<int64_t, size_t> shardOf; // value -> argument
  for (size_t i = 0; i < s.arguments_.size(); ++i)
    if (s.arguments_[i].kind == ArgumentInfo::Kind::Param &&
        s.arguments_[i].sharded)
      shardOf.emplace(s.arguments_[i].value, i);
  auto describe = [](const PartitionLayout &layout) {
    return "shape " + joinShape(layout.shape) + ", world_size " +
           std::to_string(layout.worldSize) + ", padded_numel " +
           std::to_string(layout.paddedNumel);
  };
  for (const Stream &stream : s.streams_)
    for (const Instruction &inst : stream.instructions) {
      if (inst.kind != Instruction::Kind::AllGather)
        continue;
      for (size_t k = 0;
           k < inst.operands.size() && k < inst.layouts.size(); ++k) {
        auto it = shardOf.find(inst.operands[k]);
        if (it == shardOf.end())
          continue;
        const ArgumentInfo &arg = s.arguments_[it->second];
        if (inst.layouts[k] == arg.layout)
          continue;
        return error(inst.path + ".layouts[" + std::to_string(k) + "]",
                     "gathers the shard of parameter '" + arg.name +
                         "' (arguments[" + std::to_string(it->second) +
                         "]) with " + describe(inst.layouts[k]) +
                         ", but the parameter's layout has " +
                         describe(arg.layout));
      }
    }
  return Status::ok();
}

Status ScheduleParser::checkStagingRegions() const {
  // A staging region is reserved like a buffer from its collective's start
  // to its wait (the point of the wait on the event recorded after it): it
  // must not overlap the bytes of a buffer that holds a value and is live
  // then. Buffers that hold no value are the plan's staging reservations.
  std::vector<bool> holdsValue(s.buffers_.size(), false);
  for (const ValueInfo &value : s.values_.values)
    if (value.isTensor && value.buffer >= 0 &&
        static_cast<size_t>(value.buffer) < holdsValue.size())
      holdsValue[value.buffer] = true;
  // The latest point of a wait per event.
  std::vector<int64_t> waitPoint(s.numEvents_,
                                 std::numeric_limits<int64_t>::min());
  for (const Stream &stream : s.streams_)
    for (const Instruction &inst : stream.instructions)
      if (inst.kind == Instruction::Kind::Wait && inst.event >= 0 &&
          inst.event < s.numEvents_)
        waitPoint[inst.event] = std::max(waitPoint[inst.event], inst.point);
  for (const Stream &stream : s.streams_)
    for (size_t i = 0; i < stream.instructions.size(); ++i) {
      const Instruction &inst = stream.instructions[i];
      if (!inst.staging || inst.staging->bytes <= 0)
        continue;
      const Region &region = *inst.staging;
      int64_t begin = inst.point, end = inst.point;
      for (size_t j = i + 1; j < stream.instructions.size(); ++j) {
        const Instruction &next = stream.instructions[j];
        if (next.kind != Instruction::Kind::Record)
          continue;
        end = std::max(end, waitPoint[next.event]);
        break;
      }
      const int64_t regionEnd = region.offset + region.bytes;
      for (size_t b = 0; b < s.buffers_.size(); ++b) {
        const BufferInfo &buffer = s.buffers_[b];
        if (!holdsValue[b] || buffer.space != region.space ||
            buffer.bytes <= 0 || buffer.offset >= regionEnd ||
            region.offset >= buffer.offset + buffer.bytes ||
            buffer.liveEnd < begin || end < buffer.liveBegin)
          continue;
        return error(
            inst.path + ".staging",
            "bytes [" + std::to_string(region.offset) + ", " +
                std::to_string(regionEnd) + ") of the " +
                getMemorySpaceName(region.space) +
                " arena, reserved from point " + std::to_string(begin) +
                " to " + std::to_string(end) + ", overlap buffer " +
                std::to_string(buffer.id) + " '" + buffer.name + "' (" +
                bufferPaths[b] + ", bytes [" + std::to_string(buffer.offset) +
                ", " + std::to_string(buffer.offset + buffer.bytes) +
                "), live [" + std::to_string(buffer.liveBegin) + ", " +
                std::to_string(buffer.liveEnd) +
                "]): the collective would overwrite its values");
      }
    }
  return Status::ok();
}

Status ScheduleParser::checkPoints() {
  // Each stream runs its ops in program order (comm: the start ops').
  int64_t last = 0;
  for (const Stream &stream : s.streams_)
    for (size_t i = 0; i < stream.instructions.size(); ++i) {
      const Instruction &inst = stream.instructions[i];
      if (i > 0 && inst.point < stream.instructions[i - 1].point)
        return error(inst.path + ".point",
                     "point " + std::to_string(inst.point) +
                         " comes before the point " +
                         std::to_string(stream.instructions[i - 1].point) +
                         " of " + stream.instructions[i - 1].path +
                         ": a stream runs in program order");
      last = std::max(last, inst.point);
    }
  returnPoint = last + 1;
  // The function's return is the point after its last instruction's; no
  // buffer is reserved past it.
  for (size_t i = 0; i < s.buffers_.size(); ++i) {
    const BufferInfo &buffer = s.buffers_[i];
    if (buffer.liveEnd > last + 1)
      return error(bufferPaths[i] + ".live",
                   "[" + std::to_string(buffer.liveBegin) + ", " +
                       std::to_string(buffer.liveEnd) +
                       "] ends after the program: its last point is " +
                       std::to_string(last + 1) +
                       ", the return after the last instruction");
  }
  return Status::ok();
}

const Instruction *ScheduleParser::findWriter(int64_t id) const {
  for (const Stream &stream : s.streams_)
    for (const Instruction &inst : stream.instructions)
      if (std::find(inst.results.begin(), inst.results.end(), id) !=
          inst.results.end())
        return &inst;
  return nullptr;
}

Status ScheduleParser::parseGradients(const json &root) {
  if (!root.contains("gradients"))
    return Status::ok();
  const json *entries;
  ZERO_RETURN_IF_ERROR(getArray(root, "gradients", "", entries));
  s.hasGradientRecords_ = true;
  std::map<std::string, int64_t> params;
  for (size_t i = 0; i < s.arguments_.size(); ++i)
    if (s.arguments_[i].kind == ArgumentInfo::Kind::Param)
      params.emplace(s.arguments_[i].name, static_cast<int64_t>(i));
  const std::vector<Instruction> &compute = s.streams_[0].instructions;
  // Per parameter, the records' element ranges (offset -> record), to find
  // overlaps and gaps.
  std::map<int64_t, std::map<int64_t, size_t>> ranges;
  std::map<size_t, size_t> byInstruction;
  for (size_t i = 0; i < entries->size(); ++i) {
    const json &entry = (*entries)[i];
    const std::string path = "gradients[" + std::to_string(i) + "]";
    ZERO_RETURN_IF_ERROR(checkKeys(
        entry, path, {"instruction", "param", "argument", "offset"}, {}));
    GradientRecord record;
    int64_t index;
    ZERO_RETURN_IF_ERROR(getInt(entry, "instruction", path, index));
    if (index >= static_cast<int64_t>(compute.size()))
      return error(path + ".instruction",
                   "instructions.compute[" + std::to_string(index) +
                       "] does not exist (the stream has " +
                       std::to_string(compute.size()) + " instructions)");
    record.instruction = static_cast<size_t>(index);
    const Instruction &inst = compute[record.instruction];
    if (inst.kind != Instruction::Kind::Compute ||
        (inst.op != "zero.adam" && inst.op != "zero.sgd"))
      return error(path + ".instruction",
                   inst.describe() + " is no optimizer step (zero.adam or "
                                     "zero.sgd)");
    auto [seen, first] = byInstruction.emplace(record.instruction, i);
    if (!first)
      return error(path + ".instruction",
                   inst.describe() + " is already recorded by gradients[" +
                       std::to_string(seen->second) + "]");
    ZERO_RETURN_IF_ERROR(getString(entry, "param", path, record.param));
    auto param = params.find(record.param);
    if (param == params.end())
      return error(path + ".param",
                   "'" + record.param + "' is not a parameter's name");
    record.paramArgument = param->second;
    ZERO_RETURN_IF_ERROR(getInt(entry, "argument", path, record.argument));
    const ArgumentInfo *updated =
        record.argument < static_cast<int64_t>(s.arguments_.size())
            ? &s.arguments_[record.argument]
            : nullptr;
    if (record.argument != record.paramArgument &&
        (!updated || updated->kind != ArgumentInfo::Kind::State ||
         updated->state != "master" ||
         updated->paramArgument != record.paramArgument))
      return error(path + ".argument",
                   "argument " + std::to_string(record.argument) +
                       " is neither parameter '" + record.param +
                       "' (argument " + std::to_string(record.paramArgument) +
                       ") nor its master weights");
    ZERO_RETURN_IF_ERROR(getInt(entry, "offset", path, record.offset));
    record.grad = inst.operands.at(1);
    const ValueInfo &grad = s.values_.values[record.grad];
    record.numel = grad.numel;
    if (!grad.isTensor || !isFloat(grad.dtype))
      return error(path, inst.describe() + ": its grad operand " +
                             s.describeValue(record.grad) +
                             " is not a float tensor");
    const int64_t total = s.stateNumel(s.arguments_[record.paramArgument]);
    if (record.offset > total - record.numel)
      return error(path + ".offset",
                   "elements [" + std::to_string(record.offset) + ", " +
                       std::to_string(record.offset + record.numel) +
                       ") of the gradient of '" + record.param +
                       "' lie outside the " + std::to_string(total) +
                       " elements of its optimizer states on a rank");
    auto &of = ranges[record.paramArgument];
    auto next = of.lower_bound(record.offset);
    auto overlaps = [&](auto it) {
      const GradientRecord &other = s.gradients_[it->second];
      return it->first < record.offset + record.numel &&
             record.offset < it->first + other.numel;
    };
    for (auto it : {next, next == of.begin() ? of.end() : std::prev(next)})
      if (it != of.end() && overlaps(it))
        return error(path + ".offset",
                     "the elements of '" + record.param +
                         "' it records overlap those of gradients[" +
                         std::to_string(it->second) + "]");
    of.emplace(record.offset, s.gradients_.size());
    s.gradients_.push_back(std::move(record));
  }
  // A parameter's records cover its states: its gradient is whole.
  for (const auto &[arg, of] : ranges) {
    int64_t covered = 0;
    for (const auto &[offset, index] : of)
      covered += s.gradients_[index].numel;
    const int64_t total = s.stateNumel(s.arguments_[arg]);
    if (covered != total)
      return error("gradients", "the records of '" + s.arguments_[arg].name +
                                    "' cover " + std::to_string(covered) +
                                    " of its " + std::to_string(total) +
                                    " elements on a rank");
  }
  return Status::ok();
}

Status ScheduleParser::parseLoops(const json &root) {
  if (root.contains("loops")) {
    const json *loops;
    ZERO_RETURN_IF_ERROR(getArray(root, "loops", "", loops));
    if (loops->size() > 1)
      return error("loops", std::to_string(loops->size()) +
                                " loops: a schedule has at most one");
    if (loops->size() == 1) {
      const json &entry = (*loops)[0];
      const std::string path = "loops[0]";
      ZERO_RETURN_IF_ERROR(
          checkKeys(entry, path, {"count", "begin", "end", "carried"}, {}));
      LoopInfo loop;
      ZERO_RETURN_IF_ERROR(getInt(entry, "count", path, loop.count, 1));
      ZERO_RETURN_IF_ERROR(getInt(entry, "begin", path, loop.begin));
      ZERO_RETURN_IF_ERROR(getInt(entry, "end", path, loop.end));
      for (const char *key : {"begin", "end"}) {
        int64_t point = std::string(key) == "begin" ? loop.begin : loop.end;
        if (point > returnPoint)
          return error(path + "." + key,
                       "point " + std::to_string(point) +
                           " lies outside the program: its last point is " +
                           std::to_string(returnPoint) +
                           ", the return after the last instruction");
      }
      if (loop.begin > loop.end)
        return error(path + ".end", "point " + std::to_string(loop.end) +
                                        " comes before begin " +
                                        std::to_string(loop.begin));
      // Points never decrease along a stream, so each stream's body is
      // one run of instructions.
      for (const Stream &stream : s.streams_) {
        const auto &list = stream.instructions;
        auto first = std::find_if(list.begin(), list.end(), [&](const auto &i) {
          return i.point >= loop.begin;
        });
        auto last = std::find_if(first, list.end(), [&](const auto &i) {
          return i.point > loop.end;
        });
        loop.bodyBegin.push_back(first - list.begin());
        loop.bodyEnd.push_back(last - list.begin());
      }
      s.loop_ = std::move(loop);
      const json *carried;
      ZERO_RETURN_IF_ERROR(getArray(entry, "carried", path, carried));
      for (size_t i = 0; i < carried->size(); ++i) {
        CarriedValue value;
        std::string field = path + ".carried[" + std::to_string(i) + "]";
        ZERO_RETURN_IF_ERROR(checkCarried((*carried)[i], field, value));
        for (size_t j = 0; j < s.loop_->carried.size(); ++j)
          if (s.loop_->carried[j].value == value.value)
            return error(field + ".value", s.describeValue(value.value) +
                                               " is carried twice (first at " +
                                               path + ".carried[" +
                                               std::to_string(j) + "])");
        s.loop_->carried.push_back(value);
      }
    }
  }
  return checkLoopSlices();
}

Status ScheduleParser::checkCarried(const json &entry, const std::string &path,
                                    CarriedValue &out) const {
  ZERO_RETURN_IF_ERROR(checkKeys(entry, path, {"value", "init", "next"}, {}));
  const LoopInfo &loop = *s.loop_;
  const ValueTable &values = s.values_;
  for (const char *key : {"value", "init", "next"}) {
    int64_t id;
    ZERO_RETURN_IF_ERROR(
        getInt(entry, key, path, id, std::numeric_limits<int64_t>::min()));
    const ValueInfo *info = values.lookup(id);
    std::string field = path + "." + key;
    if (!info)
      return error(field, "value " + std::to_string(id) + " is not defined");
    if (!info->isTensor)
      return error(field, s.describeValue(id) + " is a scalar, not a tensor");
    (std::string(key) == "value"  ? out.value
     : std::string(key) == "init" ? out.init
                                  : out.next) = id;
    if (std::string(key) == "value")
      continue;
    const ValueInfo &carried = values.values[out.value];
    if (info->dtype != carried.dtype || info->shape != carried.shape)
      return error(field, s.describeValue(id) + " is " +
                              joinShape(info->shape) + " x " +
                              getDTypeName(info->dtype) + ", but " +
                              s.describeValue(out.value) + " is " +
                              joinShape(carried.shape) + " x " +
                              getDTypeName(carried.dtype) +
                              ": a carried value, its init and its next have "
                              "one type");
  }
  auto isArgument = [&](int64_t id) {
    return std::any_of(s.arguments_.begin(), s.arguments_.end(),
                       [&](const ArgumentInfo &a) { return a.value == id; });
  };
  // The loop writes the carried value, and nothing else does.
  if (isArgument(out.value))
    return error(path + ".value", s.describeValue(out.value) +
                                      " is an argument: a carried value is "
                                      "written only by the loop");
  if (const Instruction *writer = findWriter(out.value))
    return error(path + ".value", s.describeValue(out.value) +
                                      " is written by " + writer->describe() +
                                      ": a carried value is written only by "
                                      "the loop");
  const Instruction *init = findWriter(out.init);
  if (!isArgument(out.init) && (!init || init->point >= loop.begin))
    return error(path + ".init",
                 s.describeValue(out.init) +
                     (init ? " is written by " + init->describe() +
                                 ", at point " + std::to_string(init->point)
                           : std::string(" is neither an argument nor an "
                                         "instruction's result")) +
                     ": the init of a carried value is written before the "
                     "loop (point " +
                     std::to_string(loop.begin) + ")");
  const Instruction *next = findWriter(out.next);
  if (!next || next->point < loop.begin || next->point > loop.end)
    return error(path + ".next",
                 s.describeValue(out.next) +
                     (next ? " is written by " + next->describe() +
                                 ", at point " + std::to_string(next->point)
                           : std::string(" is no instruction's result")) +
                     ": the next of a carried value is written in the loop "
                     "body (points [" +
                     std::to_string(loop.begin) + ", " +
                     std::to_string(loop.end) + "])");
  // The end-of-iteration copy moves next into the value: the same bytes
  // make it a no-op, a partial overlap would corrupt it.
  const BufferInfo &to = s.bufferOf(out.value), &from = s.bufferOf(out.next);
  int64_t bytes = values.values[out.value].bytes();
  if (to.space == from.space && to.offset != from.offset &&
      to.offset < from.offset + bytes && from.offset < to.offset + bytes)
    return error(path + ".next", s.describeValue(out.next) +
                                     " partly overlaps the bytes of " +
                                     s.describeValue(out.value) +
                                     ": they must be the same or disjoint");
  return Status::ok();
}

Status ScheduleParser::checkLoopSlices() const {
  const Stream &compute = s.streams_[0];
  for (size_t i = 0; i < compute.instructions.size(); ++i) {
    const Instruction &inst = compute.instructions[i];
    if (inst.kind != Instruction::Kind::LoopSlice)
      continue;
    if (!s.loop_)
      return error(inst.path, "loop_slice outside a loop: the schedule has "
                              "no 'loops'");
    const LoopInfo &loop = *s.loop_;
    if (!loop.inBody(0, i))
      return error(inst.path, "loop_slice at point " +
                                  std::to_string(inst.point) +
                                  " lies outside the loop body (points [" +
                                  std::to_string(loop.begin) + ", " +
                                  std::to_string(loop.end) + "])");
    const ValueInfo &data = s.values_.values[inst.operands[0]];
    const ValueInfo &slice = s.values_.values[inst.results[0]];
    std::vector<int64_t> expected = {loop.count};
    expected.insert(expected.end(), slice.shape.begin(), slice.shape.end());
    if (data.dtype != slice.dtype || data.shape != expected)
      return error(inst.path + ".operands[0]",
                   s.describeValue(data.id) + " is " + joinShape(data.shape) +
                       " x " + getDTypeName(data.dtype) + ", but a slice " +
                       joinShape(slice.shape) + " x " +
                       getDTypeName(slice.dtype) + " of a loop of " +
                       std::to_string(loop.count) + " iterations takes " +
                       joinShape(expected) + " x " + getDTypeName(slice.dtype));
  }
  return Status::ok();
}

Status ScheduleParser::checkEvents() const {
  // Where each event is recorded.
  std::vector<std::optional<Edge>> record(s.numEvents_);
  std::vector<bool> waited(s.numEvents_, false);
  std::vector<std::string> firstWait(s.numEvents_);
  auto recordPath = [&](int64_t event) -> const std::string & {
    return s.streams_[record[event]->stream]
        .instructions[record[event]->index]
        .path;
  };
  for (size_t si = 0; si < s.streams_.size(); ++si) {
    const Stream &stream = s.streams_[si];
    for (size_t i = 0; i < stream.instructions.size(); ++i) {
      const Instruction &inst = stream.instructions[i];
      if (inst.kind == Instruction::Kind::Record) {
        if (record[inst.event])
          return error(inst.path, "event " + std::to_string(inst.event) +
                                      " is recorded twice (first at " +
                                      recordPath(inst.event) + ")");
        record[inst.event] = Edge{si, i};
      } else if (inst.kind == Instruction::Kind::Wait && !waited[inst.event]) {
        waited[inst.event] = true;
        firstWait[inst.event] = inst.path;
      }
    }
  }
  for (int64_t e = 0; e < s.numEvents_; ++e)
    if (waited[e] && !record[e])
      return error(firstWait[e], "waits on event " + std::to_string(e) +
                                     ", which is never recorded");
  // In a loop, a wait takes the record of its own iteration when both are
  // in the body, the last iteration's after the loop, and the one record
  // outside the body otherwise; before the loop there is none to take.
  const std::optional<LoopInfo> &loop = s.loop_;
  auto recordInBody = [&](int64_t event) {
    return loop && loop->inBody(record[event]->stream, record[event]->index);
  };
  if (loop)
    for (size_t si = 0; si < s.streams_.size(); ++si)
      for (size_t i = 0; i < loop->bodyBegin[si]; ++i) {
        const Instruction &inst = s.streams_[si].instructions[i];
        if (inst.kind == Instruction::Kind::Wait && recordInBody(inst.event))
          return error(inst.path,
                       "waits on event " + std::to_string(inst.event) +
                           " before the loop, but its record at " +
                           recordPath(inst.event) + " is in the loop body");
      }
  const int iterations = getAnalyzedIterations(s);
  // The slot of a record (its iteration, 0 outside the body) and the slot a
  // wait takes.
  auto waitSlot = [&](int64_t event, int iteration) {
    if (!recordInBody(event))
      return 0;
    return iteration > 0 ? iteration : iterations;
  };
  auto inIteration = [](int iteration) {
    return iteration > 0
               ? " in iteration " + std::to_string(iteration) + " of the loop"
               : std::string();
  };
  // Run the streams symbolically: each advances until it waits on an event
  // not yet recorded. If all stop before their end, the waits deadlock.
  std::vector<std::vector<Instance>> runs;
  for (size_t si = 0; si < s.streams_.size(); ++si)
    runs.push_back(unrollStream(s, si, /*withCopies=*/false));
  std::vector<size_t> position(s.streams_.size(), 0);
  std::vector<std::vector<bool>> recorded(
      s.numEvents_, std::vector<bool>(iterations + 1, false));
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t si = 0; si < s.streams_.size(); ++si) {
      const auto &list = s.streams_[si].instructions;
      size_t &pos = position[si];
      while (pos < runs[si].size()) {
        const Instance &instance = runs[si][pos];
        const Instruction &inst = list[instance.index];
        if (inst.kind == Instruction::Kind::Wait &&
            !recorded[inst.event][waitSlot(inst.event, instance.iteration)])
          break;
        if (inst.kind == Instruction::Kind::Record)
          recorded[inst.event][instance.iteration] = true;
        ++pos;
        progress = true;
      }
    }
  }
  for (size_t si = 0; si < s.streams_.size(); ++si) {
    if (position[si] == runs[si].size())
      continue;
    const Instance &instance = runs[si][position[si]];
    const Instruction &stuck = s.streams_[si].instructions[instance.index];
    const Edge &rec = *record[stuck.event];
    const Instruction &recorder =
        s.streams_[rec.stream].instructions[rec.index];
    std::string reason;
    if (rec.stream == si) {
      reason = "it is recorded later on the same stream, at " + recorder.path;
    } else {
      const Instance &blocked = runs[rec.stream][position[rec.stream]];
      const Instruction &blocker =
          s.streams_[rec.stream].instructions[blocked.index];
      reason = "its record at " + recorder.path + " comes after " +
               blocker.path + inIteration(blocked.iteration) +
               ", which waits on event " + std::to_string(blocker.event) +
               " and cannot go on";
    }
    return error(stuck.path, "the wait on event " +
                                 std::to_string(stuck.event) +
                                 inIteration(instance.iteration) +
                                 " can deadlock: " + reason);
  }
  return Status::ok();
}

StatusOr<Schedule> Schedule::parse(const std::string &text,
                                   const std::string &name) {
  // Bounded before anything walks the tree (the dump for the checksum, the
  // decoders).
  StatusOr<json> parsed = io::parseJson(text, name);
  if (!parsed.isOk())
    return parsed.status();
  const json &root = *parsed;
  Schedule schedule;
  schedule.name_ = name;
  schedule.checksum_ = computeCrc32(root.dump());
  ScheduleParser parser(schedule);
  try {
    ZERO_RETURN_IF_ERROR(parser.parse(root));
  } catch (const json::exception &e) {
    // The parser checks types before reading; this is a safety net.
    return ZERO_ERROR(kInvalidArgument,
                      name + ": malformed schedule: " + std::string(e.what()));
  }
  return schedule;
}

StatusOr<Instruction> decodeInstruction(const std::string &text,
                                        const std::string &path,
                                        const ValueTable &values,
                                        int64_t worldSize) {
  StatusOr<json> parsed = io::parseJson(text, path);
  if (!parsed.isOk())
    return parsed.status();
  const json &object = *parsed;
  Schedule context;
  context.values_ = values;
  context.worldSize_ = worldSize;
  context.grid_ = {worldSize};
  ScheduleParser parser(context);
  Instruction inst;
  ZERO_RETURN_IF_ERROR(parser.decodeComputeInstruction(object, path, inst));
  return inst;
}

StatusOr<Schedule> Schedule::load(const std::string &path) {
  StatusOr<std::string> text =
      io::readRegularFile(path, "the schedule", io::kMaxJsonBytes);
  if (!text.isOk())
    return text.status();
  return parse(*text, path);
}

int64_t Schedule::groupSize(const std::vector<int64_t> &gridAxes) const {
  if (gridAxes.empty())
    return worldSize_;
  int64_t size = 1;
  for (int64_t axis : gridAxes)
    size *= grid_[axis];
  return size;
}

std::vector<int64_t> Schedule::suffixGroupSizes() const {
  std::vector<int64_t> sizes;
  int64_t size = worldSize_;
  for (size_t axis = 0; axis + 1 < grid_.size(); ++axis) {
    size /= grid_[axis];
    sizes.push_back(size);
  }
  return sizes;
}

std::vector<GroupHop>
Schedule::groupHops(const std::vector<int64_t> &gridAxes) const {
  std::vector<GroupHop> hops;
  // From the last axis, whose coordinate weighs 1 in the in-group rank.
  int64_t stride = 1;
  for (int64_t axis = static_cast<int64_t>(grid_.size()); axis-- > 0;) {
    if (!gridAxes.empty() &&
        std::find(gridAxes.begin(), gridAxes.end(), axis) == gridAxes.end())
      continue;
    if (grid_[axis] > 1)
      hops.push_back({axis, grid_[axis], stride});
    stride *= grid_[axis];
  }
  std::reverse(hops.begin(), hops.end());
  return hops;
}

RankGroup Schedule::rankGroup(int64_t rank,
                              const std::vector<int64_t> &gridAxes) const {
  RankGroup group;
  group.size = groupSize(gridAxes);
  // Row-major coordinates: the last axis varies fastest.
  std::vector<int64_t> coordinates(grid_.size());
  for (size_t axis = grid_.size(); axis-- > 0;) {
    coordinates[axis] = rank % grid_[axis];
    rank /= grid_[axis];
  }
  for (size_t axis = 0; axis < grid_.size(); ++axis) {
    bool inGroup =
        gridAxes.empty() ||
        std::find(gridAxes.begin(), gridAxes.end(), axis) != gridAxes.end();
    int64_t &index = inGroup ? group.rank : group.color;
    index = index * grid_[axis] + coordinates[axis];
  }
  return group;
}

Status Schedule::checkLaunch(int worldSize, int64_t memoryLimit) const {
  if (worldSize != worldSize_)
    return ZERO_ERROR(kFailedPrecondition,
                      name_ + ": world_size: the schedule is compiled for " +
                          std::to_string(worldSize_) +
                          (worldSize_ == 1 ? " rank" : " ranks") + ", but " +
                          std::to_string(worldSize) +
                          (worldSize == 1 ? " was" : " were") + " launched");
  if (memoryLimit > 0 && memoryBytes() > memoryLimit)
    return ZERO_ERROR(
        kResourceExhausted,
        name_ + ": memory.arenas: the plan needs " +
            std::to_string(memoryBytes()) + " bytes of memory (device " +
            std::to_string(arenaBytes(MemorySpace::Device)) + " + host " +
            std::to_string(arenaBytes(MemorySpace::Host)) +
            "), but --memory-limit allows " + std::to_string(memoryLimit));
  return Status::ok();
}

} // namespace zero::runtime
