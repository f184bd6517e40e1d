//===- Instruction.h - the decoded instructions of a schedule ---*- C++ -*-===//
//
// What Schedule::load turns the JSON of an instruction into: typed and
// backend-neutral, every field of the op present with the kind OpSet.h gives
// it, every value id defined. A backend prepares these
// (Device::prepare); nothing past the decoder reads JSON.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_INSTRUCTION_H
#define ZERO_RUNTIME_INSTRUCTION_H

#include "zero/runtime/Layout.h"
#include "zero/runtime/OpSet.h"
#include "zero/runtime/Program.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace zero::runtime {

/// The memory spaces of the plan.
enum class MemorySpace { Device = 0, Host = 1, Nvme = 2 };
constexpr int kNumMemorySpaces = 3;
const char *getMemorySpaceName(MemorySpace space);

/// A region of an arena.
struct Region {
  MemorySpace space = MemorySpace::Device;
  int64_t offset = 0;
  int64_t bytes = 0;
};

enum class ReduceOp { Sum, Avg, Max, Min };
const char *getReduceOpName(ReduceOp op);

/// A number as the schedule writes it: a JSON integer or boolean (exact), or
/// a float (a JSON number, or "inf", "-inf", "nan"). The element type that
/// gives it meaning is the backend's to apply.
struct Number {
  bool isInteger = false;
  int64_t i = 0;    // isInteger
  double f = 0;     // the value as a double (also for integers)
  std::string text; // as written, for messages
};

/// arith.constant's `value`: one number, {"splat": x} or {"data": [...]}.
struct ConstantValue {
  enum class Form { Number, Splat, Elements };
  Form form = Form::Number;
  std::vector<Number> elements; // one for Number and Splat
};

struct RegionBody;

/// A decoded field; the alternative is the field's FieldKind (OpSet.h).
using FieldValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                 std::vector<std::vector<int64_t>>, std::vector<std::string>,
                 ConstantValue, PartitionLayout,
                 std::shared_ptr<const RegionBody>>;

/// The fields of one op. The decoder stores every field the op's OpInfo
/// lists, with the kind it has, so the getters cannot fail on a decoded op.
class OpFields {
public:
  bool has(Field field) const { return find(field) != nullptr; }
  void set(Field field, FieldValue value);

  int64_t getInt(Field field) const { return get<int64_t>(field); }
  double getNumber(Field field) const { return get<double>(field); }
  bool getBool(Field field) const { return get<bool>(field); }
  const std::string &getString(Field field) const {
    return get<std::string>(field);
  }
  const std::vector<int64_t> &getIntList(Field field) const {
    return get<std::vector<int64_t>>(field);
  }
  const std::vector<std::vector<int64_t>> &getIntListList(Field field) const {
    return get<std::vector<std::vector<int64_t>>>(field);
  }
  const std::vector<std::string> &getStringList(Field field) const {
    return get<std::vector<std::string>>(field);
  }
  const ConstantValue &getConstant(Field field) const {
    return get<ConstantValue>(field);
  }
  const PartitionLayout &getLayout(Field field) const {
    return get<PartitionLayout>(field);
  }
  const RegionBody &getBody(Field field) const {
    return *get<std::shared_ptr<const RegionBody>>(field);
  }

private:
  const FieldValue *find(Field field) const;
  template <typename T> const T &get(Field field) const {
    return std::get<T>(*find(field));
  }
  std::vector<std::pair<Field, FieldValue>> fields_;
};

/// An op of the compute stream or of a region body.
struct OpRecord {
  const OpInfo *info = nullptr;
  /// The op's name ("linalg.matmul").
  std::string op;
  std::vector<int64_t> operands;
  std::vector<int64_t> results;
  OpFields fields;
  /// "instructions.compute[12]" or, in a body,
  /// "instructions.compute[12].body.ops[3]", for messages.
  std::string path;

  OpCode code() const { return info->code; }
};

/// The region of linalg.map, linalg.reduce and linalg.generic: one block
/// whose arguments are scalars and whose ops are scalar ops, linalg.index and
/// tensor.extract.
struct RegionBody {
  std::vector<int64_t> arguments;
  std::vector<OpRecord> ops;
  std::vector<int64_t> yield;
};

/// One instruction of a stream.
struct Instruction : OpRecord {
  enum class Kind {
    Compute,
    Record,
    Wait,
    Free,
    /// Copies the block of operand 0 that the loop's iteration selects
    /// into result 0 (docs/ScheduleFormat.md, "Loops").
    LoopSlice,
    AllGather,
    ReduceScatter,
    AllReduce,
    /// Copies operand i into result i, from one memory space to another
    /// (docs/ScheduleFormat.md, "Swaps"), on the copy stream.
    Swap
  };
  Kind kind = Kind::Compute;
  int64_t point = 0;
  std::string loc;
  /// Derived by the loader, not in the file: a linalg.fill of a zero
  /// constant whose result only a later linalg.matmul or
  /// linalg.batch_matmul of its stream and loop region reads, as its init;
  /// and that GEMM. Devices skip such a fill and compute the GEMM without
  /// reading its init (BLAS's beta = 0): the same sums, up to the sign of a
  /// zero result.
  bool skippedZeroFill = false;
  bool zeroInit = false;
  int64_t event = -1;          // Record, Wait
  std::vector<int64_t> values; // Free
  // Collectives.
  std::vector<PartitionLayout> layouts;
  ReduceOp reduction = ReduceOp::Sum;
  std::optional<Region> staging;
  /// Elements of one rank's block of the flat bucket (all-gather,
  /// reduce-scatter: the sum of the shards) or of the whole bucket
  /// (all-reduce).
  int64_t bucketNumel = 0;
  DType dtype = DType::F32;
  /// The topology.grid axes whose ranks the collective runs among, strictly
  /// increasing (`grid_axes`, version 3); empty: the whole world.
  std::vector<int64_t> gridAxes;
  /// An all_gather over its group's axes one at a time, the first first
  /// (`hierarchical`, version 3; MiCS's hierarchical all-gather): same
  /// result as the flat gather (docs/ScheduleFormat.md, "Collectives").
  bool hierarchical = false;
  /// A quantized collective (`quantize`, version 3). An all_gather (ZeRO++
  /// qwZ): each rank block-quantizes its shards into `packedBytes` bytes of
  /// the staging region, and the packed blocks are gathered. A
  /// reduce_scatter (qgZ): int4 chunks of `packedBytes` bytes go through one
  /// all-to-all per grid axis of the group, reduced in f32 in between
  /// (docs/ScheduleFormat.md, "Quantized all-gathers" and "Quantized
  /// reduce-scatters").
  struct Quantization {
    int64_t bits = 8;
    int64_t blockSize = 1;
    /// All-gather: P, one rank's packed block, all operands' f32 scales then
    /// all their int8 values. Reduce-scatter: C, one packed chunk, all
    /// operands' f32 scales then all their int4 values.
    int64_t packedBytes = 0;
    /// Reduce-scatter: the f32 partial sums at the start of the staging
    /// region, 4 * M * S bytes (M chunks kept after the first hop); the
    /// packed chunks to send and those received follow, G * C bytes each.
    int64_t sumsBytes = 0;
  };
  std::optional<Quantization> quantize;

  /// Runs one hop per axis of its group (Schedule::groupHops): a quantized
  /// reduce_scatter or a hierarchical all_gather.
  bool hopsByAxis() const {
    return hierarchical || (quantize && kind == Kind::ReduceScatter);
  }
  bool isCollective() const {
    return kind == Kind::AllGather || kind == Kind::ReduceScatter ||
           kind == Kind::AllReduce;
  }
  /// "instructions.comm[3] (all_gather at model.mlir:12:3)".
  std::string describe() const;
};

} // namespace zero::runtime

#endif // ZERO_RUNTIME_INSTRUCTION_H
