//===- OpSet.h - the schedule format's ops and their fields -----*- C++ -*-===//
//
// OpSet.def lists the ops once; this header turns the list into an enum and
// a table with each op's placement and fields. It is header-only and needs
// nothing but the standard library, so the compiler's emitter reads the same
// table as the runtime's decoder and backends.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPSET_H
#define ZERO_RUNTIME_OPSET_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace zero::runtime {

enum class OpCode : uint8_t {
#define ZERO_OP(Code, Name, Placement, ...) Code,
#include "zero/runtime/OpSet.def"
};

/// Where an op may appear (OpSet.def).
enum class OpPlacement : uint8_t { Compute, Scalar, Body, Comm, Sync };

/// The fields an op carries besides op, point, loc, operands and results.
enum class Field : uint8_t {
  Permutation,
  Dimensions,
  Body,
  IndexingMaps,
  RoundOperands,
  IteratorTypes,
  Offsets,
  Sizes,
  Strides,
  Reassociation,
  Value,
  Predicate,
  Layout,
  Beta1,
  Beta2,
  Eps,
  WeightDecay,
  Mode,
  BiasCorrection,
  Amsgrad,
  Unscale,
  Clip,
  Skip,
  Momentum,
  Dampening,
  Nesterov,
  Dim,
};

/// How a field is written in JSON and held once decoded (Instruction.h).
enum class FieldKind : uint8_t {
  Int,         // int64_t
  Number,      // double
  Bool,        // bool
  String,      // std::string
  IntList,     // std::vector<int64_t>
  IntListList, // std::vector<std::vector<int64_t>>
  StringList,  // std::vector<std::string>
  Constant,    // ConstantValue
  Layout,      // PartitionLayout
  Body,        // RegionBody
};

struct FieldInfo {
  Field field;
  std::string_view name;
  FieldKind kind;
};

inline constexpr FieldInfo kFieldInfos[] = {
    {Field::Permutation, "permutation", FieldKind::IntList},
    {Field::Dimensions, "dimensions", FieldKind::IntList},
    {Field::Body, "body", FieldKind::Body},
    {Field::IndexingMaps, "indexing_maps", FieldKind::IntListList},
    {Field::RoundOperands, "round_operands", FieldKind::String},
    {Field::IteratorTypes, "iterator_types", FieldKind::StringList},
    {Field::Offsets, "offsets", FieldKind::IntList},
    {Field::Sizes, "sizes", FieldKind::IntList},
    {Field::Strides, "strides", FieldKind::IntList},
    {Field::Reassociation, "reassociation", FieldKind::IntListList},
    {Field::Value, "value", FieldKind::Constant},
    {Field::Predicate, "predicate", FieldKind::String},
    {Field::Layout, "layout", FieldKind::Layout},
    {Field::Beta1, "beta1", FieldKind::Number},
    {Field::Beta2, "beta2", FieldKind::Number},
    {Field::Eps, "eps", FieldKind::Number},
    {Field::WeightDecay, "weight_decay", FieldKind::Number},
    {Field::Mode, "mode", FieldKind::String},
    {Field::BiasCorrection, "bias_correction", FieldKind::Bool},
    {Field::Amsgrad, "amsgrad", FieldKind::Bool},
    {Field::Unscale, "unscale", FieldKind::Bool},
    {Field::Clip, "clip", FieldKind::Bool},
    {Field::Skip, "skip", FieldKind::Bool},
    {Field::Momentum, "momentum", FieldKind::Number},
    {Field::Dampening, "dampening", FieldKind::Number},
    {Field::Nesterov, "nesterov", FieldKind::Bool},
    {Field::Dim, "dim", FieldKind::Int},
};

inline constexpr const FieldInfo &getFieldInfo(Field field) {
  return kFieldInfos[static_cast<size_t>(field)];
}

/// How many operands and results an op takes (OpSet.def): a range each,
/// kAnyNumber for no upper bound.
inline constexpr uint32_t kAnyNumber = UINT32_MAX;
struct OpArity {
  uint32_t minOperands, maxOperands, minResults, maxResults;

  constexpr bool admitsOperands(size_t n) const {
    return n >= minOperands && n <= maxOperands;
  }
  constexpr bool admitsResults(size_t n) const {
    return n >= minResults && n <= maxResults;
  }
};

/// A field of an op in OpSet.def: `Name`, or `optional(Name)` for one an
/// instruction may leave out.
struct OpField {
  Field field;
  bool optional = false;
  constexpr OpField(Field f, bool isOptional = false)
      : field(f), optional(isOptional) {}
};

struct OpInfo {
  OpCode code;
  std::string_view name;
  OpPlacement placement;
  OpArity arity;
  std::array<Field, 10> fields;
  uint8_t numFields;
  /// Bit i: fields[i] may be left out.
  uint16_t optionalFields;

  constexpr const Field *beginFields() const { return fields.data(); }
  constexpr const Field *endFields() const { return fields.data() + numFields; }
  constexpr bool hasField(Field field) const {
    for (uint8_t i = 0; i < numFields; ++i)
      if (fields[i] == field)
        return true;
    return false;
  }
  constexpr bool isOptionalField(Field field) const {
    for (uint8_t i = 0; i < numFields; ++i)
      if (fields[i] == field)
        return (optionalFields >> i) & 1;
    return false;
  }
  /// Ops of the compute stream: compute ops and scalar ops.
  constexpr bool isComputeStreamOp() const {
    return placement == OpPlacement::Compute ||
           placement == OpPlacement::Scalar;
  }
  /// Ops of a region body.
  constexpr bool isBodyOp() const {
    return placement == OpPlacement::Scalar || placement == OpPlacement::Body ||
           code == OpCode::Extract;
  }
};

namespace detail {
constexpr OpArity makeArity(uint32_t minOperands, uint32_t maxOperands,
                            uint32_t minResults, uint32_t maxResults) {
  return {minOperands, maxOperands, minResults, maxResults};
}

constexpr OpInfo makeOpInfo(OpCode code, std::string_view name,
                            OpPlacement placement, OpArity arity,
                            std::initializer_list<OpField> fields) {
  OpInfo info{code, name, placement, arity, {}, 0, 0};
  for (OpField field : fields) {
    if (field.optional)
      info.optionalFields |= static_cast<uint16_t>(1u << info.numFields);
    info.fields[info.numFields++] = field.field;
  }
  return info;
}

constexpr OpField optional(Field field) { return OpField(field, true); }

/// The field names unqualified, for the expansion of OpSet.def.
struct OpSetNames {
  static constexpr Field Permutation = Field::Permutation,
                         Dimensions = Field::Dimensions, Body = Field::Body,
                         IndexingMaps = Field::IndexingMaps,
                         RoundOperands = Field::RoundOperands,
                         IteratorTypes = Field::IteratorTypes,
                         Offsets = Field::Offsets, Sizes = Field::Sizes,
                         Strides = Field::Strides,
                         Reassociation = Field::Reassociation,
                         Value = Field::Value, Predicate = Field::Predicate,
                         Layout = Field::Layout, Beta1 = Field::Beta1,
                         Beta2 = Field::Beta2, Eps = Field::Eps,
                         WeightDecay = Field::WeightDecay, Mode = Field::Mode,
                         BiasCorrection = Field::BiasCorrection,
                         Amsgrad = Field::Amsgrad, Unscale = Field::Unscale,
                         Clip = Field::Clip, Skip = Field::Skip,
                         Momentum = Field::Momentum,
                         Dampening = Field::Dampening,
                         Nesterov = Field::Nesterov, Dim = Field::Dim;
  static constexpr uint32_t N = kAnyNumber;
  static constexpr OpPlacement Compute = OpPlacement::Compute,
                               Scalar = OpPlacement::Scalar,
                               Comm = OpPlacement::Comm,
                               Sync = OpPlacement::Sync;
};

struct OpSetTable : OpSetNames {
  // `Body` names both a field and a placement; the placement is spelled out.
  static constexpr OpPlacement BodyPlacement = OpPlacement::Body;
  static constexpr OpInfo ops[] = {
#define ZERO_OP(Code, Name, Placement, Arity, ...)                             \
  makeOpInfo(OpCode::Code, Name, ZERO_OP_PLACEMENT_##Placement,                \
             makeArity Arity, {__VA_ARGS__}),
#define ZERO_OP_PLACEMENT_Compute Compute
#define ZERO_OP_PLACEMENT_Scalar Scalar
#define ZERO_OP_PLACEMENT_Body BodyPlacement
#define ZERO_OP_PLACEMENT_Comm Comm
#define ZERO_OP_PLACEMENT_Sync Sync
#include "zero/runtime/OpSet.def"
#undef ZERO_OP_PLACEMENT_Compute
#undef ZERO_OP_PLACEMENT_Scalar
#undef ZERO_OP_PLACEMENT_Body
#undef ZERO_OP_PLACEMENT_Comm
#undef ZERO_OP_PLACEMENT_Sync
  };
};
} // namespace detail

/// Every op of the format, indexed by OpCode.
inline constexpr const auto &kOpInfos = detail::OpSetTable::ops;
inline constexpr size_t kNumOps = std::size(detail::OpSetTable::ops);

inline constexpr const OpInfo &getOpInfo(OpCode code) {
  return kOpInfos[static_cast<size_t>(code)];
}

/// The op named `name`, or null when the format has none.
inline const OpInfo *lookupOp(std::string_view name) {
  for (const OpInfo &info : kOpInfos)
    if (info.name == name)
      return &info;
  return nullptr;
}

} // namespace zero::runtime

#endif // ZERO_RUNTIME_OPSET_H
