//===- ZeroOps.cpp - zero dialect ops -------------------------------------===//

#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::zero;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::optional<MemorySpace> mlir::zero::getMemorySpace(RankedTensorType type) {
  Attribute encoding = type.getEncoding();
  if (!encoding)
    return MemorySpace::Device;
  if (auto space = dyn_cast<MemorySpaceAttr>(encoding))
    return space.getValue();
  // Stored quantized (frozen parameters) on the device.
  if (isa<QuantizedAttr>(encoding))
    return MemorySpace::Device;
  return std::nullopt;
}

RankedTensorType mlir::zero::getTensorTypeInSpace(RankedTensorType type,
                                                  MemorySpace space) {
  Attribute encoding;
  if (space != MemorySpace::Device)
    encoding = MemorySpaceAttr::get(type.getContext(), space);
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               encoding);
}

/// Parses an enum case as a bare keyword, as `sum` in
/// `zero.all_reduce_start sum %x`, where the attribute itself would print as
/// `#zero.reduction<sum>`.
template <typename AttrT, typename EnumT = decltype(AttrT().getValue())>
static ParseResult parseEnumKeyword(OpAsmParser &parser, AttrT &attr,
                                    StringRef what) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> value = symbolizeEnum<EnumT>(keyword);
  if (!value)
    return parser.emitError(loc)
           << "unknown " << what << " '" << keyword << "'";
  attr = AttrT::get(parser.getContext(), *value);
  return success();
}

static ParseResult parseReductionKind(OpAsmParser &parser,
                                      ReductionKindAttr &attr) {
  return parseEnumKeyword(parser, attr, "reduction");
}

static void printReductionKind(OpAsmPrinter &printer, Operation *,
                               ReductionKindAttr attr) {
  printer << stringifyEnum(attr.getValue());
}

static ParseResult parseMemorySpace(OpAsmParser &parser,
                                    MemorySpaceAttr &attr) {
  return parseEnumKeyword(parser, attr, "memory space");
}

static void printMemorySpace(OpAsmPrinter &printer, Operation *,
                             MemorySpaceAttr attr) {
  printer << stringifyEnum(attr.getValue());
}

/// A bucket holds at least one tensor: an empty collective or swap would
/// still cost a launch and a synchronization.
static LogicalResult verifyNonEmpty(Operation *op, ValueRange tensors) {
  if (tensors.empty())
    return op->emitOpError("expects at least one tensor");
  return success();
}

/// Checks the layouts of a collective: one per tensor, one world size.
static LogicalResult verifyLayouts(Operation *op, ValueRange tensors,
                                   ArrayAttr layouts) {
  if (failed(verifyNonEmpty(op, tensors)))
    return failure();
  if (layouts.size() != tensors.size())
    return op->emitOpError("expects one layout per tensor, but has ")
           << layouts.size() << " layouts for " << tensors.size() << " tensors";
  auto first = cast<LayoutAttr>(layouts[0]);
  for (auto [i, attr] : llvm::enumerate(layouts)) {
    auto layout = cast<LayoutAttr>(attr);
    if (layout.getWorldSize() != first.getWorldSize())
      return op->emitOpError("layout #")
             << i << " has world_size " << layout.getWorldSize()
             << ", but layout #0 has " << first.getWorldSize()
             << "; all layouts of one collective have the same world size";
  }
  return success();
}

std::optional<SmallVector<int64_t, 2>> zero::getProcessGrid(Operation *func) {
  auto worldSize =
      func->getAttrOfType<IntegerAttr>(ZeroDialect::getWorldSizeAttrName());
  if (!worldSize)
    return std::nullopt;
  auto ranksPerNode =
      func->getAttrOfType<IntegerAttr>(ZeroDialect::getRanksPerNodeAttrName());
  int64_t n = worldSize.getInt();
  if (!ranksPerNode || ranksPerNode.getInt() <= 0 ||
      ranksPerNode.getInt() >= n || n % ranksPerNode.getInt() != 0)
    return SmallVector<int64_t, 2>{n};
  int64_t perNode = ranksPerNode.getInt();
  auto mics =
      func->getAttrOfType<IntegerAttr>(ZeroDialect::getMicsShardSizeAttrName());
  if (mics && mics.getInt() > perNode && mics.getInt() < n &&
      n % mics.getInt() == 0 && mics.getInt() % perNode == 0)
    return SmallVector<int64_t, 2>{n / mics.getInt(), mics.getInt() / perNode,
                                   perNode};
  return SmallVector<int64_t, 2>{n / perNode, perNode};
}

int64_t zero::getGroupSize(ArrayRef<int64_t> grid, ArrayRef<int16_t> axes) {
  if (axes.empty())
    return llvm::product_of(grid);
  int64_t size = 1;
  for (int16_t axis : axes)
    size *= grid[axis];
  return size;
}

/// The first axis of the trailing axes of `grid` whose group has `ranks`
/// ranks, if one other than the whole grid does.
static std::optional<int16_t> getTrailingGroupStart(ArrayRef<int64_t> grid,
                                                    int64_t ranks) {
  int64_t size = 1;
  for (int16_t axis = grid.size() - 1; axis > 0; --axis) {
    size *= grid[axis];
    if (size == ranks)
      return axis;
  }
  return std::nullopt;
}

/// The axes `[first, last]` of a grid, as a `grid_axes` attribute.
static DenseI16ArrayAttr getAxisRange(MLIRContext *ctx, int16_t first,
                                      int16_t last) {
  SmallVector<int16_t, 3> axes;
  for (int16_t axis = first; axis <= last; ++axis)
    axes.push_back(axis);
  return DenseI16ArrayAttr::get(ctx, axes);
}

FailureOr<DenseI16ArrayAttr>
zero::getLayoutGridAxes(Operation *func, LayoutAttr layout, Location loc) {
  std::optional<SmallVector<int64_t, 2>> grid = getProcessGrid(func);
  if (!grid || layout.getWorldSize() == llvm::product_of(*grid))
    return DenseI16ArrayAttr();
  if (std::optional<int16_t> first =
          getTrailingGroupStart(*grid, layout.getWorldSize()))
    return getAxisRange(func->getContext(), *first, grid->size() - 1);
  InFlightDiagnostic diag = emitError(loc, "layout ")
                            << layout << " is for " << layout.getWorldSize()
                            << " ranks, but the step is compiled for "
                            << llvm::product_of(*grid) << " (zero.world_size)";
  if (grid->size() == 2)
    diag << " in nodes of " << grid->back()
         << "; a layout is cut across the world or the ranks of one node";
  if (grid->size() == 3)
    diag << " in MiCS groups of " << (*grid)[1] * (*grid)[2] << " in nodes of "
         << grid->back()
         << "; a layout is cut across the world, a MiCS group or the ranks of "
            "one node";
  return diag;
}

DenseI16ArrayAttr zero::getReplicaGridAxes(Operation *func, LayoutAttr layout) {
  std::optional<SmallVector<int64_t, 2>> grid = getProcessGrid(func);
  if (!grid)
    return {};
  std::optional<int16_t> first =
      getTrailingGroupStart(*grid, layout.getWorldSize());
  if (!first || layout.getWorldSize() == llvm::product_of(*grid))
    return {};
  return getAxisRange(func->getContext(), 0, *first - 1);
}

/// Checks a collective's `grid_axes` against the process grid of the step
/// it is in (when it has one), and that its layouts cut tensors for the
/// group: their world size is the group's size.
static LogicalResult verifyGridAxes(Operation *op,
                                    std::optional<ArrayRef<int16_t>> axes,
                                    std::optional<ArrayAttr> layouts) {
  if (!axes) {
    auto func = op->getParentOfType<FunctionOpInterface>();
    std::optional<SmallVector<int64_t, 2>> grid =
        func ? getProcessGrid(func) : std::nullopt;
    if (!grid || !layouts || layouts->empty())
      return success();
    int64_t layoutRanks = cast<LayoutAttr>((*layouts)[0]).getWorldSize();
    if (layoutRanks != llvm::product_of(*grid))
      return op->emitOpError("layouts have world_size ")
             << layoutRanks << ", but without grid_axes the collective runs "
             << "over the whole world of " << llvm::product_of(*grid)
             << " ranks";
    return success();
  }
  if (axes->empty())
    return op->emitOpError("has empty grid_axes; leave them out for the "
                           "whole world");
  for (auto [i, axis] : llvm::enumerate(*axes))
    if (axis < 0 || (i > 0 && axis <= (*axes)[i - 1]))
      return op->emitOpError("grid_axes must be strictly increasing axes "
                             ">= 0, got [")
             << llvm::interleaved(*axes) << "]";
  auto func = op->getParentOfType<FunctionOpInterface>();
  std::optional<SmallVector<int64_t, 2>> grid =
      func ? getProcessGrid(func) : std::nullopt;
  if (!grid)
    return success();
  if (axes->back() >= static_cast<int64_t>(grid->size()))
    return op->emitOpError("grid_axes [")
           << llvm::interleaved(*axes) << "] name an axis the step's grid ["
           << llvm::interleaved(*grid) << "] does not have";
  int64_t groupSize = getGroupSize(*grid, *axes);
  if (layouts && !layouts->empty() &&
      cast<LayoutAttr>((*layouts)[0]).getWorldSize() != groupSize)
    return op->emitOpError("layouts have world_size ")
           << cast<LayoutAttr>((*layouts)[0]).getWorldSize()
           << ", but the group of grid_axes [" << llvm::interleaved(*axes)
           << "] on the grid [" << llvm::interleaved(*grid) << "] has "
           << groupSize << " ranks";
  return success();
}

/// Checks that operand `i` of a collective has the type `layout` expects:
/// the shard or the full tensor of the operand's element type.
static LogicalResult verifyLayoutOperands(Operation *op, ValueRange tensors,
                                          ArrayAttr layouts, bool shards) {
  for (auto [i, tensor, attr] : llvm::enumerate(tensors, layouts)) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto layout = cast<LayoutAttr>(attr);
    RankedTensorType expected = shards
                                    ? layout.getShardType(type.getElementType())
                                    : layout.getFullType(type.getElementType());
    // A shard stored quantized (#zero.quantized) has the same elements.
    if (shards && QuantizedAttr::ofType(type))
      type = type.dropEncoding();
    if (type != expected)
      return op->emitOpError("operand #")
             << i << " has type " << type << ", but its layout expects "
             << expected;
  }
  return success();
}

/// Fills `types` with the shards (`shards`) or full tensors of `layouts`, with
/// the element types of `tensors`.
static LogicalResult getLayoutTypes(ValueRange tensors, ArrayAttr layouts,
                                    bool shards, SmallVectorImpl<Type> &types) {
  if (layouts.size() != tensors.size())
    return failure();
  for (auto [tensor, attr] : llvm::zip_equal(tensors, layouts)) {
    Type elementType = cast<ShapedType>(tensor.getType()).getElementType();
    auto layout = cast<LayoutAttr>(attr);
    types.push_back(shards ? layout.getShardType(elementType)
                           : layout.getFullType(elementType));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AsyncStartOpInterface
//===----------------------------------------------------------------------===//

LogicalResult mlir::zero::detail::verifyAsyncStartOp(Operation *op) {
  Value handle = op->getResult(0);
  if (handle.use_empty())
    return op->emitOpError("handle never waited");
  if (!handle.hasOneUse())
    return op->emitOpError("handle has ")
           << llvm::range_size(handle.getUses())
           << " uses; it must be waited exactly once";
  Operation *user = *handle.user_begin();
  if (!isa<WaitOp>(user))
    return op->emitOpError("handle must be consumed by 'zero.wait', but is "
                           "used by '")
           << user->getName() << "'";
  return success();
}

WaitOp AsyncStartOpInterface::getWait() {
  Value handle = getAsyncHandle();
  if (!handle.hasOneUse())
    return {};
  return dyn_cast<WaitOp>(*handle.user_begin());
}

#include "zero/Dialect/Zero/IR/ZeroInterfaces.cpp.inc"

namespace {
/// One hop of a collective run axis by axis: over `axis` of the step's grid,
/// among `size` ranks.
struct GroupHop {
  int16_t axis;
  int64_t size;
};
} // namespace

/// The hops of a collective over `gridAxes` (all when absent) among
/// `groupSize` ranks, in grid order: the group's axes but those of one
/// rank, where a hop would move nothing. None for a group of one rank.
static SmallVector<GroupHop, 2>
getGroupHops(Operation *op, std::optional<ArrayRef<int16_t>> gridAxes,
             int64_t groupSize) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  std::optional<SmallVector<int64_t, 2>> grid =
      func ? getProcessGrid(func) : std::nullopt;
  SmallVector<GroupHop, 2> hops;
  auto addHop = [&](int16_t axis, int64_t size) {
    if (size > 1)
      hops.push_back({axis, size});
  };
  if (!grid) {
    addHop(0, groupSize);
  } else if (gridAxes) {
    for (int16_t axis : *gridAxes)
      addHop(axis, (*grid)[axis]);
  } else {
    for (int16_t axis = 0; axis < static_cast<int16_t>(grid->size()); ++axis)
      addHop(axis, (*grid)[axis]);
  }
  return hops;
}

//===----------------------------------------------------------------------===//
// AllGatherStartOp
//===----------------------------------------------------------------------===//

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyLayouts(*this, getShards(), getLayouts())) ||
      failed(verifyGridAxes(*this, getGridAxes(), getLayouts())))
    return failure();
  if (IntegerAttr block = getQuantizeBlockSizeAttr()) {
    if (block.getInt() < 1)
      return emitOpError("quantize_block_size must be at least 1, got ")
             << block.getInt();
    for (auto [i, shard] : llvm::enumerate(getShards())) {
      Type type = cast<ShapedType>(shard.getType()).getElementType();
      if (!type.isF32() && !type.isBF16() && !type.isF16())
        return emitOpError("quantizes operand #")
               << i << " of element type " << type
               << "; quantized gathers carry f32, bf16 or f16";
    }
  }
  // A shard stored quantized is sent as it is: in blocks of its own size.
  for (auto [i, shard] : llvm::enumerate(getShards()))
    if (auto stored = QuantizedAttr::ofType(shard.getType());
        stored &&
        (!getQuantizeBlockSizeAttr() ||
         getQuantizeBlockSizeAttr().getInt() != stored.getBlockSize()))
      return emitOpError("operand #")
             << i << " is stored quantized in blocks of "
             << stored.getBlockSize()
             << "; it must be gathered with quantize_block_size = "
             << stored.getBlockSize();
  return verifyLayoutOperands(*this, getShards(), getLayouts(),
                              /*shards=*/true);
}

/// The bytes of one shard of every layout block-quantized to `bits`-bit
/// values with one f32 scale per `block` elements (the runtime's packed
/// block or chunk, docs/ScheduleFormat.md); nothing on overflow.
static std::optional<int64_t> getPackedShardBytes(ArrayAttr layouts,
                                                  int64_t block, int bits) {
  std::optional<int64_t> bytes = 0;
  for (auto layout : layouts.getAsRange<LayoutAttr>()) {
    std::optional<int64_t> shard =
        getPackedBlockBytes(layout.getShardNumel(), block, bits);
    bytes = bytes && shard ? llvm::checkedAdd(*bytes, *shard) : std::nullopt;
  }
  return bytes;
}

std::optional<int64_t> AllGatherStartOp::getQuantizedBytesPerRank() {
  IntegerAttr blockAttr = getQuantizeBlockSizeAttr();
  if (!blockAttr || blockAttr.getInt() < 1)
    return std::nullopt;
  return getPackedShardBytes(getLayouts(), blockAttr.getInt(), /*bits=*/8);
}

std::optional<SmallVector<std::pair<int16_t, int64_t>, 2>>
AllGatherStartOp::getHierarchicalHopBytes() {
  if (!getHierarchical() || getLayouts().empty())
    return std::nullopt;
  // A rank's block: packed (qwZ) or its padded shards.
  std::optional<int64_t> held = getQuantizedBytesPerRank();
  if (!getQuantizeBlockSize()) {
    held = 0;
    for (auto [shard, layout] : llvm::zip(getShards(), getLayouts())) {
      Type element = cast<ShapedType>(shard.getType()).getElementType();
      std::optional<int64_t> bytes =
          element.isIntOrFloat()
              ? llvm::checkedMul(cast<LayoutAttr>(layout).getShardNumel(),
                                 int64_t(llvm::divideCeil(
                                     element.getIntOrFloatBitWidth(), 8)))
              : std::nullopt;
      held = held && bytes ? llvm::checkedAdd(*held, *bytes) : std::nullopt;
    }
  }
  if (!held)
    return std::nullopt;
  // Each hop passes on every block the rank holds to its n - 1 peers.
  SmallVector<std::pair<int16_t, int64_t>, 2> hopBytes;
  int64_t groupSize = cast<LayoutAttr>(getLayouts()[0]).getWorldSize();
  for (GroupHop hop : getGroupHops(*this, getGridAxes(), groupSize)) {
    std::optional<int64_t> sent = llvm::checkedMul(hop.size - 1, *held);
    held = llvm::checkedMul(*held, hop.size);
    if (!sent || !held)
      return std::nullopt;
    hopBytes.push_back({hop.axis, *sent});
  }
  return hopBytes;
}

LogicalResult AllGatherStartOp::getAwaitedTypes(SmallVectorImpl<Type> &types) {
  return getLayoutTypes(getShards(), getLayouts(), /*shards=*/false, types);
}

//===----------------------------------------------------------------------===//
// ReduceScatterStartOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyLayouts(*this, getTensors(), getLayouts())) ||
      failed(verifyGridAxes(*this, getGridAxes(), getLayouts())))
    return failure();
  if (IntegerAttr block = getQuantizeBlockSizeAttr()) {
    // Two int4 values share a byte: an odd block would split one.
    if (block.getInt() < 2 || block.getInt() % 2 != 0)
      return emitOpError("quantize_block_size must be even and at least 2 "
                         "(int4 values are packed two to a byte), got ")
             << block.getInt();
    if (getReduction() != ReductionKind::Sum &&
        getReduction() != ReductionKind::Avg)
      return emitOpError("a quantized reduce-scatter reduces with sum or "
                         "avg, not ")
             << stringifyReductionKind(getReduction());
    for (auto [i, tensor] : llvm::enumerate(getTensors())) {
      Type type = cast<ShapedType>(tensor.getType()).getElementType();
      if (!type.isF32() && !type.isBF16() && !type.isF16())
        return emitOpError("quantizes operand #")
               << i << " of element type " << type
               << "; quantized reduce-scatters carry f32, bf16 or f16";
    }
  }
  return verifyLayoutOperands(*this, getTensors(), getLayouts(),
                              /*shards=*/false);
}

std::optional<int64_t> ReduceScatterStartOp::getQuantizedChunkBytes() {
  IntegerAttr blockAttr = getQuantizeBlockSizeAttr();
  if (!blockAttr || blockAttr.getInt() < 1)
    return std::nullopt;
  return getPackedShardBytes(getLayouts(), blockAttr.getInt(), /*bits=*/4);
}

std::optional<SmallVector<std::pair<int16_t, int64_t>, 2>>
ReduceScatterStartOp::getQuantizedHopBytes() {
  std::optional<int64_t> chunk = getQuantizedChunkBytes();
  if (!chunk || getLayouts().empty())
    return std::nullopt;
  // A rank holds every chunk of its group before the first hop; each hop
  // keeps those of its coordinate and sends the others' to their ranks.
  int64_t held = cast<LayoutAttr>(getLayouts()[0]).getWorldSize();
  SmallVector<std::pair<int16_t, int64_t>, 2> hopBytes;
  // The last axis (a node's ranks) first: the most chunks stay in the node.
  // (A named vector: reverse() of a temporary would not keep it alive.)
  SmallVector<GroupHop, 2> hops = getGroupHops(*this, getGridAxes(), held);
  for (GroupHop hop : llvm::reverse(hops)) {
    held /= hop.size;
    // n - 1 peers receive m / n chunks each.
    std::optional<int64_t> sent = llvm::checkedMul(hop.size - 1, *chunk);
    if (sent)
      sent = llvm::checkedMul(*sent, held);
    if (!sent)
      return std::nullopt;
    hopBytes.push_back({hop.axis, *sent});
  }
  return hopBytes;
}

std::optional<int64_t> ReduceScatterStartOp::getQuantizedStagingBytes() {
  std::optional<int64_t> chunk = getQuantizedChunkBytes();
  if (!chunk || getLayouts().empty())
    return std::nullopt;
  const int64_t group = cast<LayoutAttr>(getLayouts()[0]).getWorldSize();
  // The chunks kept after the first hop (all of them without a hop), as f32
  // partial sums.
  // The first hop is over the last of the group's axes.
  SmallVector<GroupHop, 2> hops = getGroupHops(*this, getGridAxes(), group);
  const int64_t kept = hops.empty() ? group : group / hops.back().size;
  std::optional<int64_t> shardNumel = 0;
  for (auto layout : getLayouts().getAsRange<LayoutAttr>())
    shardNumel = shardNumel
                     ? llvm::checkedAdd(*shardNumel, layout.getShardNumel())
                     : std::nullopt;
  std::optional<int64_t> sums =
      shardNumel ? llvm::checkedMul(*shardNumel, kept) : std::nullopt;
  if (sums)
    sums = llvm::checkedMul(*sums, int64_t(4));
  std::optional<int64_t> packed = llvm::checkedMul(*chunk, group);
  if (packed)
    packed = llvm::checkedMul(*packed, int64_t(2));
  return sums && packed ? llvm::checkedAdd(*sums, *packed) : std::nullopt;
}

LogicalResult
ReduceScatterStartOp::getAwaitedTypes(SmallVectorImpl<Type> &types) {
  return getLayoutTypes(getTensors(), getLayouts(), /*shards=*/true, types);
}

//===----------------------------------------------------------------------===//
// AllReduceStartOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceStartOp::verify() {
  if (failed(verifyNonEmpty(*this, getTensors())))
    return failure();
  return verifyGridAxes(*this, getGridAxes(), std::nullopt);
}

LogicalResult AllReduceStartOp::getAwaitedTypes(SmallVectorImpl<Type> &types) {
  llvm::append_range(types, getTensors().getTypes());
  return success();
}

//===----------------------------------------------------------------------===//
// SwapOutStartOp / SwapInStartOp
//===----------------------------------------------------------------------===//

/// The memory space of operand `i` of a swap; fails on a foreign encoding.
static FailureOr<MemorySpace> getOperandSpace(Operation *op, unsigned i,
                                              RankedTensorType type) {
  std::optional<MemorySpace> space = getMemorySpace(type);
  if (!space)
    return op->emitOpError("operand #")
           << i << " has encoding " << type.getEncoding()
           << "; swaps take tensors without encoding or with a "
              "#zero.memory_space";
  return *space;
}

LogicalResult SwapOutStartOp::verify() {
  if (failed(verifyNonEmpty(*this, getTensors())))
    return failure();
  MemorySpace target = getTarget();
  if (target == MemorySpace::Device)
    return emitOpError("cannot swap out to device memory; the target must be "
                       "host or nvme");
  for (auto [i, type] : llvm::enumerate(getTensors().getTypes())) {
    FailureOr<MemorySpace> space =
        getOperandSpace(*this, i, cast<RankedTensorType>(type));
    if (failed(space))
      return failure();
    if (*space == target)
      return emitOpError("operand #")
             << i << " already lives in " << stringifyEnum(target) << " memory";
  }
  return success();
}

LogicalResult SwapOutStartOp::getAwaitedTypes(SmallVectorImpl<Type> &types) {
  for (Type type : getTensors().getTypes())
    types.push_back(
        getTensorTypeInSpace(cast<RankedTensorType>(type), getTarget()));
  return success();
}

LogicalResult SwapInStartOp::verify() {
  if (failed(verifyNonEmpty(*this, getTensors())))
    return failure();
  for (auto [i, type] : llvm::enumerate(getTensors().getTypes())) {
    FailureOr<MemorySpace> space =
        getOperandSpace(*this, i, cast<RankedTensorType>(type));
    if (failed(space))
      return failure();
    if (*space == MemorySpace::Device)
      return emitOpError("operand #")
             << i
             << " lives in device memory; only host or nvme tensors "
                "can be swapped in";
  }
  return success();
}

LogicalResult SwapInStartOp::getAwaitedTypes(SmallVectorImpl<Type> &types) {
  for (Type type : getTensors().getTypes())
    types.push_back(getTensorTypeInSpace(cast<RankedTensorType>(type),
                                         MemorySpace::Device));
  return success();
}

//===----------------------------------------------------------------------===//
// WaitOp
//===----------------------------------------------------------------------===//

LogicalResult WaitOp::verify() {
  auto start = getHandle().getDefiningOp<AsyncStartOpInterface>();
  if (!start)
    return emitOpError("handle must be the result of a zero start op");
  SmallVector<Type> expected;
  // An invalid start op reports its own error.
  if (failed(start.getAwaitedTypes(expected)))
    return success();
  if (expected.size() != getNumResults())
    return emitOpError("has ")
           << getNumResults() << " results, but '" << start->getName()
           << "' yields " << expected.size();
  for (auto [i, result, type] : llvm::enumerate(getResults(), expected))
    if (result.getType() != type)
      return emitOpError("result #")
             << i << " has type " << result.getType() << ", but '"
             << start->getName() << "' yields " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// Result names
//===----------------------------------------------------------------------===//

// Printed IR names a handle after what it starts and a wait's results after
// what the wait delivers: `%gather = zero.all_gather_start ...` and
// `%full = zero.wait %gather`. None of the names is one an upstream op
// gives its results (linalg.reduce's is `%reduced`).

void AllGatherStartOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getHandle(), "gather");
}

void ReduceScatterStartOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getHandle(), "scatter");
}

void AllReduceStartOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getHandle(), "all_reduce");
}

void SwapOutStartOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getHandle(), "swap_out");
}

void SwapInStartOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getHandle(), "swap_in");
}

void WaitOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  Operation *start = getHandle().getDefiningOp();
  if (!start)
    return;
  StringRef name;
  if (isa<AllGatherStartOp>(start))
    name = "full";
  else if (isa<ReduceScatterStartOp>(start))
    name = "scattered";
  else if (isa<AllReduceStartOp>(start))
    name = "all_reduced";
  else if (isa<SwapOutStartOp>(start))
    name = "swapped_out";
  else if (isa<SwapInStartOp>(start))
    name = "swapped_in";
  else
    return;
  // Named once: a bucket's results print as one group, `%full:3`.
  if (getNumResults() > 0)
    setNameFn(getResult(0), name);
}

void LocalShardOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getShard(), "shard");
}

//===----------------------------------------------------------------------===//
// ReleaseOp
//===----------------------------------------------------------------------===//

LogicalResult ReleaseOp::verify() {
  return verifyNonEmpty(*this, getTensors());
}

//===----------------------------------------------------------------------===//
// LocalShardOp
//===----------------------------------------------------------------------===//

LogicalResult LocalShardOp::verify() {
  Type elementType = getFull().getType().getElementType();
  RankedTensorType fullType = getLayout().getFullType(elementType);
  if (getFull().getType() != fullType)
    return emitOpError("operand has type ")
           << getFull().getType() << ", but its layout expects " << fullType;
  RankedTensorType shardType = getLayout().getShardType(elementType);
  if (getShard().getType() != shardType)
    return emitOpError("result has type ")
           << getShard().getType() << ", but its layout expects " << shardType;
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

/// Checks the tensors of an optimizer step: `param` is a float tensor, the
/// states have its type, and `grad` has its shape and memory space with any
/// float element type (mixed precision).
static LogicalResult
verifyOptimizerState(Operation *op, Value param, Value grad,
                     ArrayRef<std::pair<StringRef, Value>> states) {
  auto paramType = cast<RankedTensorType>(param.getType());
  if (!isa<FloatType>(paramType.getElementType()))
    return op->emitOpError("param must have a floating-point element type, "
                           "but has type ")
           << paramType;

  auto checkLikeParam = [&](StringRef name, Value value,
                            bool sameElementType) -> LogicalResult {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getShape() != paramType.getShape())
      return op->emitOpError() << name << " must have the shape of param ("
                               << paramType << "), but has type " << type;
    if (!isa<FloatType>(type.getElementType()))
      return op->emitOpError()
             << name << " must have a floating-point element type, but has "
             << "type " << type;
    if (sameElementType && type.getElementType() != paramType.getElementType())
      return op->emitOpError()
             << name << " must have the element type of param ("
             << paramType.getElementType() << "), but has type " << type;
    if (type.getEncoding() != paramType.getEncoding())
      return op->emitOpError()
             << name << " must live in the memory space of param (" << paramType
             << "), but has type " << type;
    return success();
  };

  if (failed(checkLikeParam("grad", grad, /*sameElementType=*/false)))
    return failure();
  for (auto [name, state] : states)
    if (failed(checkLikeParam(name, state, /*sameElementType=*/true)))
      return failure();
  return success();
}

/// Prints `value` as short as it reads back exactly ("0.9", not
/// "9.000000e-01").
static std::string formatDouble(double value) {
  SmallString<16> str;
  APFloat(value).toString(str);
  return std::string(str);
}

static LogicalResult verifyNonNegative(Operation *op, StringRef name,
                                       double value) {
  // Written to also reject NaN.
  if (!(value >= 0.0))
    return op->emitOpError()
           << name << " must be non-negative, but is " << formatDouble(value);
  return success();
}

LogicalResult AdamOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  // Each state result has its operand's type; amsgrad adds the fourth.
  types.push_back(adaptor.getParam().getType());
  types.push_back(adaptor.getExpAvg().getType());
  types.push_back(adaptor.getExpAvgSq().getType());
  if (Value maxExpAvgSq = adaptor.getMaxExpAvgSq())
    types.push_back(maxExpAvgSq.getType());
  return success();
}

LogicalResult AdamOp::verify() {
  // The custom syntax ties the two; the generic form can split them.
  if (getAmsgrad() && !getMaxExpAvgSq())
    return emitOpError("amsgrad needs the max_exp_avg_sq operand");
  if (!getAmsgrad() && getMaxExpAvgSq())
    return emitOpError("has a max_exp_avg_sq operand but not amsgrad");
  SmallVector<std::pair<StringRef, Value>> states{
      {"exp_avg", getExpAvg()}, {"exp_avg_sq", getExpAvgSq()}};
  if (Value maxExpAvgSq = getMaxExpAvgSq())
    states.push_back({"max_exp_avg_sq", maxExpAvgSq});
  if (failed(verifyOptimizerState(*this, getParam(), getGrad(), states)))
    return failure();
  for (auto [name, beta] :
       {std::pair<StringRef, double>{"beta1", getBeta1().convertToDouble()},
        std::pair<StringRef, double>{"beta2", getBeta2().convertToDouble()}})
    if (!(beta >= 0.0 && beta < 1.0))
      return emitOpError() << name << " must be in [0, 1), but is "
                           << formatDouble(beta);
  double eps = getEps().convertToDouble();
  if (!(eps > 0.0))
    return emitOpError() << "eps must be positive, but is "
                         << formatDouble(eps);
  return verifyNonNegative(*this, "weight_decay",
                           getWeightDecay().convertToDouble());
}

LogicalResult SgdOp::verify() {
  if (failed(verifyOptimizerState(*this, getParam(), getGrad(),
                                  {{"momentum_buffer", getMomentumBuffer()}})))
    return failure();
  double momentum = getMomentum().convertToDouble();
  double dampening = getDampening().convertToDouble();
  if (failed(verifyNonNegative(*this, "momentum", momentum)) ||
      failed(verifyNonNegative(*this, "dampening", dampening)) ||
      failed(verifyNonNegative(*this, "weight_decay",
                               getWeightDecay().convertToDouble())))
    return failure();
  // As PyTorch: Nesterov momentum needs a momentum and no dampening.
  if (getNesterov() && (momentum <= 0.0 || dampening != 0.0))
    return emitOpError("nesterov requires momentum > 0 and dampening == 0");
  return success();
}

LogicalResult AnyNonFiniteOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  // The float types a schedule holds, whose infinities and NaNs are all
  // exponent bits set.
  for (auto [index, input] : llvm::enumerate(getInputs()))
    if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(
            cast<RankedTensorType>(input.getType()).getElementType()))
      return emitOpError() << "input " << index
                           << " must be a tensor of f16, bf16, f32 or f64, "
                              "but is "
                           << input.getType();
  return success();
}

#define GET_OP_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOps.cpp.inc"
