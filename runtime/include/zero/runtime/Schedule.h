//===- Schedule.h - a loaded, validated schedule ----------------*- C++ -*-===//
//
// The schedule (docs/ScheduleFormat.md, versions 1 to 3) is the only contract
// between the compiler and the runtime. Schedule::load reads it and checks
// every field before anything runs: a malformed schedule is an error that
// names the file and the JSON path of the offending field, never a crash or a
// wrong result in the middle of a run. The checks that need the launch (the
// MPI world size, the memory available) are in checkLaunch.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_SCHEDULE_H
#define ZERO_RUNTIME_SCHEDULE_H

#include "zero/runtime/Instruction.h"
#include "zero/runtime/Program.h"
#include "zero/runtime/Status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zero::runtime {

/// A buffer of the memory plan.
struct BufferInfo {
  int64_t id = -1;
  std::string name;
  std::string category;
  std::string role;
  MemorySpace space = MemorySpace::Device;
  int64_t offset = 0;
  int64_t bytes = 0;
  int64_t liveBegin = 0; // program points, both included
  int64_t liveEnd = 0;
};

/// How an argument starts before the first step.
struct InitSpec {
  /// File: no initializer; the values must come from a file
  /// (InitOptions::parameters, zero-run --init-from).
  enum class Kind { Normal, Zeros, Ones, Param, Value, File };
  Kind kind = Kind::Zeros;
  double std = 0;   // Normal
  double value = 0; // Value
};

/// A parameter that is one block of a larger 2-D weight (zero-tile-linear):
/// the weight's name and shape, and the block's first row and column.
/// Initialization and export treat the tile as that block of the weight.
struct TileInfo {
  std::string param;
  std::vector<int64_t> shape;
  std::vector<int64_t> offset;
};

struct ArgumentInfo {
  enum class Kind { Param, State, Step, Data };
  Kind kind = Kind::Data;
  int64_t value = -1;
  /// Param: the parameter's name; Data: the data argument's name; State:
  /// empty.
  std::string name;
  /// State: its kind (master, exp_avg, ..., loss_scale) and, for per-
  /// parameter states, the parameter's name and argument index.
  std::string state;
  std::string param;
  int64_t paramArgument = -1;
  /// Param: its layout, whether the argument is the rank's shard.
  PartitionLayout layout;
  bool sharded = false;
  bool persistent = false;
  InitSpec init;
  /// Param: the weight it is a tile of, if any.
  std::optional<TileInfo> tile;
  /// Data: the exclusive upper bound of integer data, 0 when absent.
  int64_t bound = 0;
};

struct ResultInfo {
  enum class Kind { Loss, Update };
  Kind kind = Kind::Loss;
  int64_t value = -1;
  int64_t argument = -1; // Update
};

/// Which gradient an optimizer instruction consumes (the schedule's
/// `gradients`, docs/ScheduleFormat.md, "Gradient records"): its grad
/// operand is elements [offset, offset + numel) of parameter `param`'s
/// gradient as the rank holds its optimizer states (its shard of the padded
/// flat parameter at stage 1 and up, the whole flat parameter at stage 0).
struct GradientRecord {
  /// The index of the zero.adam or zero.sgd instruction in the compute
  /// stream, and its grad operand.
  size_t instruction = 0;
  int64_t grad = -1;
  std::string param;
  /// The parameter's argument, and the argument the instruction updates
  /// (the parameter or its master weights).
  int64_t paramArgument = -1;
  int64_t argument = -1;
  int64_t offset = 0;
  int64_t numel = 0;
};

struct Stream {
  std::string name;
  std::vector<Instruction> instructions;
};

/// A rank's place in the group of a collective over some grid axes
/// (docs/ScheduleFormat.md, "Collectives"), as ShardToMPI splits: the ranks
/// of one `color` form the group, ranked by `rank`.
struct RankGroup {
  /// The row-major index of the rank's coordinates over the other axes.
  int64_t color = 0;
  /// The row-major index of the rank's coordinates over the group's axes.
  int64_t rank = 0;
  int64_t size = 1;
};

/// One hop of a collective taken one grid axis at a time (a quantized
/// reduce-scatter, a hierarchical all-gather): an axis of the collective's
/// group with more than one rank.
struct GroupHop {
  int64_t axis = 0;
  /// The ranks along the axis, its size in topology.grid.
  int64_t size = 1;
  /// What the axis' coordinate weighs in the in-group rank: the product of
  /// the grid sizes of the group's later axes.
  int64_t stride = 1;
};

/// A loop-carried tensor: `value` holds `init` when the loop starts and takes
/// `next` at the end of every iteration.
struct CarriedValue {
  int64_t value = -1;
  int64_t init = -1;
  int64_t next = -1;
};

/// The loop of a version-2 schedule: the instructions whose points lie in
/// [begin, end] run `count` times (docs/ScheduleFormat.md, "Loops").
struct LoopInfo {
  int64_t count = 1;
  int64_t begin = 0; // program points, both included
  int64_t end = 0;
  std::vector<CarriedValue> carried;
  /// Per stream: the body's instructions, [bodyBegin, bodyEnd) (contiguous,
  /// as points never decrease along a stream; empty where the stream has
  /// none, at the place where they would be).
  std::vector<size_t> bodyBegin;
  std::vector<size_t> bodyEnd;

  bool inBody(size_t stream, size_t index) const {
    return index >= bodyBegin[stream] && index < bodyEnd[stream];
  }
};

class Schedule {
public:
  /// Reads and validates the schedule at `path`; errors start with `path`.
  static StatusOr<Schedule> load(const std::string &path);
  /// Validates the schedule text `text`; errors start with `name`.
  static StatusOr<Schedule> parse(const std::string &text,
                                  const std::string &name);

  /// The checks that need the launch: the MPI world size, and the bytes the
  /// plan needs in memory against `memoryLimit` (0: unlimited).
  Status checkLaunch(int worldSize, int64_t memoryLimit) const;

  /// The file name given to load/parse, for messages.
  const std::string &name() const { return name_; }
  const std::string &source() const { return source_; }
  const std::string &function() const { return function_; }
  /// The CRC-32 of the schedule's JSON in a canonical form (keys sorted, no
  /// spaces), so that a checkpoint records which schedule wrote it.
  uint32_t checksum() const { return checksum_; }
  /// The format version: 1, or 2 for a schedule that may hold a loop.
  int64_t version() const { return version_; }
  int64_t stage() const { return stage_; }
  int64_t worldSize() const { return worldSize_; }
  /// Ranks per node, node-major: rank r is on node r / ranksPerNode()
  /// (topology.grid's last axis; worldSize() where the world is one node).
  int64_t ranksPerNode() const { return ranksPerNode_; }
  /// topology.grid: [world_size], [nodes, ranks per node] or [replica
  /// groups, nodes per group, ranks per node].
  const std::vector<int64_t> &grid() const { return grid_; }
  /// Where world rank `rank` stands among the ranks of a collective over
  /// `gridAxes` (Instruction::gridAxes; empty: every axis).
  RankGroup rankGroup(int64_t rank, const std::vector<int64_t> &gridAxes) const;
  /// The ranks of a collective over `gridAxes`: the product of their grid
  /// sizes.
  int64_t groupSize(const std::vector<int64_t> &gridAxes) const;
  /// The ranks of the groups over the grid's last axes but the whole world,
  /// largest first: over axes [1, n), [2, n), ..., [n - 1, n) of an n-axis
  /// grid (on [K, M, L]: M * L and L). A parameter's layout may be cut across
  /// them instead of the world (docs/ScheduleFormat.md, "Arguments").
  std::vector<int64_t> suffixGroupSizes() const;
  /// The hops of a collective over `gridAxes` (empty: every axis) taken one
  /// axis at a time, by increasing axis: the group's axes but those of one
  /// rank, where a hop would move nothing. A quantized reduce-scatter hops
  /// from the last, a hierarchical all-gather from the first
  /// (docs/ScheduleFormat.md, "Quantized reduce-scatters", "Collectives").
  std::vector<GroupHop> groupHops(const std::vector<int64_t> &gridAxes) const;
  int64_t alignment() const { return alignment_; }
  int64_t arenaBytes(MemorySpace space) const {
    return arenas_[static_cast<int>(space)];
  }
  /// The directory of the nvme arena's swap file that the step was compiled
  /// with (`memory.nvme_path`, version 2), empty if none.
  const std::string &nvmePath() const { return nvmePath_; }
  /// How the nvme arena's file is read and written (`memory.aio`, version
  /// 2; DeepSpeed's `aio` section): NvmeSwapOptions' fields of those names.
  struct AioSettings {
    int64_t blockSize = int64_t(1) << 20;
    int64_t queueDepth = 8;
    bool singleSubmit = false;
    bool overlapEvents = true;
  };
  const AioSettings &aio() const { return aio_; }
  /// Whether a run resumed from a checkpoint loads the fp32 master weights
  /// (`checkpoint.load_from_fp32_weights`; false: sets them from the
  /// checkpoint's 16-bit parameters).
  bool loadFromFp32Weights() const { return loadFromFp32Weights_; }
  /// The bytes the arenas of the device and host spaces take.
  int64_t memoryBytes() const {
    return arenaBytes(MemorySpace::Device) + arenaBytes(MemorySpace::Host);
  }
  const std::vector<BufferInfo> &buffers() const { return buffers_; }
  const ValueTable &values() const { return values_; }
  const std::vector<ArgumentInfo> &arguments() const { return arguments_; }
  const std::vector<ResultInfo> &results() const { return results_; }
  /// Streams in the order of `streams`; "compute" is always the first.
  const std::vector<Stream> &streams() const { return streams_; }
  int64_t numEvents() const { return numEvents_; }
  /// The loop, when the schedule has one (at most one).
  const std::optional<LoopInfo> &loop() const { return loop_; }
  /// Index of the loss result's value, -1 without one.
  int64_t lossValue() const { return lossValue_; }
  /// Whether the schedule has a `gradients` list (older ones have none),
  /// and its records in instruction order.
  bool hasGradientRecords() const { return hasGradientRecords_; }
  const std::vector<GradientRecord> &gradientRecords() const {
    return gradients_;
  }
  /// The elements of parameter argument `param`'s optimizer states on each
  /// rank: its shard at stage 1 and up, else the whole parameter.
  int64_t stateNumel(const ArgumentInfo &param) const {
    return stage_ >= 1 ? param.layout.shardNumel : param.layout.numel;
  }

  /// The buffer of tensor value `id`.
  const BufferInfo &bufferOf(int64_t id) const {
    return buffers_[values_.values[id].buffer];
  }
  /// "value 17 (%x)", for messages.
  std::string describeValue(int64_t id) const;
  /// "schedule.json: instructions.compute[12]: " with `field` appended to
  /// the path when given, for the messages of a backend.
  std::string where(const OpRecord &op, const std::string &field = "") const;

private:
  friend class ScheduleParser;
  friend StatusOr<Instruction> decodeInstruction(const std::string &,
                                                 const std::string &,
                                                 const ValueTable &, int64_t);
  std::string name_;
  std::string source_;
  std::string function_;
  uint32_t checksum_ = 0;
  int64_t version_ = 1;
  int64_t stage_ = 0;
  int64_t worldSize_ = 1;
  int64_t ranksPerNode_ = 1;
  std::vector<int64_t> grid_;
  int64_t alignment_ = 64;
  std::string nvmePath_;
  AioSettings aio_;
  bool loadFromFp32Weights_ = true;
  std::array<int64_t, kNumMemorySpaces> arenas_{};
  std::vector<BufferInfo> buffers_;
  ValueTable values_;
  std::vector<ArgumentInfo> arguments_;
  std::vector<ResultInfo> results_;
  std::vector<Stream> streams_;
  int64_t numEvents_ = 0;
  std::optional<LoopInfo> loop_;
  int64_t lossValue_ = -1;
  bool hasGradientRecords_ = false;
  std::vector<GradientRecord> gradients_;
};

/// Decodes one compute instruction written as JSON `text` against `values`,
/// as Schedule::load decodes those of a schedule; errors name `path`. For
/// tests and tools that build single ops.
StatusOr<Instruction> decodeInstruction(const std::string &text,
                                        const std::string &path,
                                        const ValueTable &values,
                                        int64_t worldSize = 1);

} // namespace zero::runtime

#endif // ZERO_RUNTIME_SCHEDULE_H
