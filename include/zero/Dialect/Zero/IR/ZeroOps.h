//===- ZeroOps.h - zero dialect ops, types and attributes -------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROOPS_H
#define ZERO_DIALECT_ZERO_IR_ZEROOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "zero/Dialect/Zero/IR/ZeroEnums.h.inc"

namespace mlir {
namespace zero {
/// The bytes of `numel` elements block-quantized to `bits`-bit values with
/// one f32 scale per block of `block` elements (the last may be shorter):
/// ZeRO++'s packed shard, a quantized collective's operand and a
/// #zero.quantized tensor alike; nothing on overflow or a block below 1.
std::optional<int64_t> getPackedBlockBytes(int64_t numel, int64_t block,
                                           int64_t bits);
} // namespace zero
} // namespace mlir

#define GET_ATTRDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOpsTypes.h.inc"

namespace mlir {
namespace zero {

/// The runtime's communication and memory state, which collectives, waits,
/// releases and swaps act on (see ZeroOps.td).
struct RuntimeResource : public SideEffects::Resource::Base<RuntimeResource> {
  StringRef getName() final { return "<zero runtime>"; }
};

/// The memory space of a tensor type: its `#zero.memory_space` encoding, or
/// `device` when it has none. Empty for any other encoding.
std::optional<MemorySpace> getMemorySpace(RankedTensorType type);

/// `type` in memory space `space`: without encoding for `device`, else with
/// `#zero.memory_space<space>` as encoding.
RankedTensorType getTensorTypeInSpace(RankedTensorType type, MemorySpace space);

/// The process grid of the rank step `func` (its `zero.world_size`,
/// `zero.ranks_per_node` and `zero.mics_shard_size`): `[world_size]`,
/// `[nodes, ranks_per_node]` where the ranks are on several nodes, or
/// `[world_size / S, S / ranks_per_node, ranks_per_node]` where MiCS's
/// groups of S ranks span several nodes. The last axis is always the ranks
/// of one node. Empty before zero-partition.
std::optional<SmallVector<int64_t, 2>> getProcessGrid(Operation *func);

/// The ranks of `grid` in one group of a collective over `axes` (all axes
/// when empty): the product of their sizes.
int64_t getGroupSize(ArrayRef<int64_t> grid, ArrayRef<int16_t> axes);

/// The grid axes a collective over tensors of `layout` runs on in the step
/// `func`: null (the whole world) for a layout cut across every rank, else
/// the trailing axes whose group has the layout's world size (the ranks of
/// a node, or of a MiCS group of several nodes: consecutive ranks,
/// replicated across the other axes, rank r holding shard
/// r % world_size). Emits an error at `loc` and fails for any other world
/// size.
FailureOr<DenseI16ArrayAttr> getLayoutGridAxes(Operation *func,
                                               LayoutAttr layout, Location loc);

/// The grid axes across which the shards of `layout` are replicated: null
/// for a layout cut across the whole world, else the grid's axes that
/// getLayoutGridAxes leaves out (the leading ones).
DenseI16ArrayAttr getReplicaGridAxes(Operation *func, LayoutAttr layout);

/// The element count of `shape`, or nothing for a dynamic or negative size
/// or a count that overflows int64. Every element count and byte size the
/// compiler computes starts from this, never from the wrapping
/// `ShapedType::getNumElements`.
std::optional<int64_t> getCheckedNumElements(ArrayRef<int64_t> shape);

namespace detail {
/// Checks that the handle of a start op is consumed by exactly one wait.
LogicalResult verifyAsyncStartOp(Operation *op);
} // namespace detail

// The interface's getWait returns one; declared with the ops below.
class WaitOp;

} // namespace zero
} // namespace mlir

#include "zero/Dialect/Zero/IR/ZeroInterfaces.h.inc"

#define GET_OP_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOps.h.inc"

#endif // ZERO_DIALECT_ZERO_IR_ZEROOPS_H
