//===- ScheduleEmitter.cpp - rank step to schedule JSON -------------------===//
//
// Translates a rank step into the schedule of docs/ScheduleFormat.md:
//   1. the memory plan (zero::MemoryPlan, the plan zero-plan-memory recorded
//      on the IR, checked against those annotations) gives the buffers, the
//      program points and the buffer of every tensor;
//   2. every value gets an id (arguments, then the ops in program order, each
//      op's results before the values of its body);
//   3. the ops become instructions: compute ops, scalar ops, frees and
//      synchronization on the `compute` stream, collectives on `comm`, with
//      one event for "operands ready" and one for "collective done" each.
// Anything outside the format is an error at the op, argument or function
// that needs it, and nothing is written then.
//
//===----------------------------------------------------------------------===//

#include "zero/Target/Schedule/ScheduleEmitter.h"
#include "zero/runtime/GemmLayout.h"
#include "zero/runtime/OpSet.h"

#include "zero/Analysis/MemoryPlan.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::zero;

using json = nlohmann::ordered_json;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The schedule's name of an element type, or empty.
static StringRef getDtypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (type.isIndex())
    return "index";
  if (type.isSignlessInteger(64))
    return "i64";
  if (type.isSignlessInteger(32))
    return "i32";
  if (type.isSignlessInteger(1))
    return "i1";
  return "";
}

static bool isScalarType(Type type) { return !getDtypeName(type).empty(); }

static StringRef getCategoryName(BufferCategory category) {
  switch (category) {
  case BufferCategory::Parameter:
    return "parameter";
  case BufferCategory::Gradient:
    return "gradient";
  case BufferCategory::OptimizerState:
    return "optimizer_state";
  case BufferCategory::Input:
    return "input";
  case BufferCategory::Activation:
    return "activation";
  case BufferCategory::Communication:
    return "communication";
  }
  llvm_unreachable("unknown buffer category");
}

/// A float as a JSON number; "inf", "-inf" and "nan" as strings, which JSON
/// has no numbers for.
static json getFloatJson(const APFloat &value) {
  if (value.isNaN())
    return "nan";
  if (value.isInfinity())
    return value.isNegative() ? "-inf" : "inf";
  // f16, bf16 and f32 convert to double exactly.
  APFloat wide = value;
  bool losesInfo = false;
  wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return wide.convertToDouble();
}

static json getIntJson(const APInt &value) {
  // i1 true is 1, not -1.
  if (value.getBitWidth() == 1)
    return static_cast<int64_t>(value.getZExtValue());
  return value.getSExtValue();
}

/// A layout as the format writes it. The format carries every layout the
/// dialect accepts, but for this schedule's world size only (the runtime
/// refuses others): a layout for another world size is refused at `loc`.
static FailureOr<json> getLayoutJson(LayoutAttr layout, int64_t worldSize,
                                     Location loc) {
  if (layout.getWorldSize() != worldSize)
    return emitError(loc, "layout ")
           << layout << " is for " << layout.getWorldSize()
           << " ranks, but the function is compiled for " << worldSize
           << " (zero.world_size): the schedule cannot carry it";
  json result;
  result["shape"] = layout.getShape().vec();
  result["world_size"] = layout.getWorldSize();
  result["shard_numel"] = layout.getShardNumel();
  result["padded_numel"] = layout.getPaddedNumel();
  return result;
}

/// The layout of a parameter argument or a `zero.local_shard` of `func`:
/// cut across the world or, in a world of several nodes, across the ranks of
/// one node (getLayoutGridAxes; rank r holds shard r % world_size).
static FailureOr<json> getRankLayoutJson(func::FuncOp func, LayoutAttr layout,
                                         Location loc) {
  if (failed(getLayoutGridAxes(func, layout, loc)))
    return failure();
  return getLayoutJson(layout, layout.getWorldSize(), loc);
}

/// The format's op of this name (the runtime's op table, OpSet.def).
static const ::zero::runtime::OpInfo *lookupScheduleOp(StringRef name) {
  return ::zero::runtime::lookupOp(std::string_view(name.data(), name.size()));
}

/// The scalar ops of the format (docs/ScheduleFormat.md, "Scalar ops").
static bool isScheduleScalarOpName(StringRef name) {
  const ::zero::runtime::OpInfo *info = lookupScheduleOp(name);
  return info && info->placement == ::zero::runtime::OpPlacement::Scalar;
}

/// A scalar op of the format: a listed op on scalars only.
static bool isScheduleScalarOp(Operation *op) {
  return isScheduleScalarOpName(op->getName().getStringRef()) &&
         op->getNumRegions() == 0 &&
         llvm::all_of(op->getOperandTypes(), isScalarType) &&
         llvm::all_of(op->getResultTypes(), isScalarType);
}

/// zero.adam's and zero.sgd's optional unscale, clip and skip operands: a
/// true field for each one the op has (they follow its other operands in
/// this order), none otherwise.
static void addGradientScalingFields(Value scale, Value coef, Value skip,
                                     json &inst) {
  if (scale)
    inst["unscale"] = true;
  if (coef)
    inst["clip"] = true;
  if (skip)
    inst["skip"] = true;
}

/// `{"kind": ...}` for a parameter's `zero.init` string, or failure.
static FailureOr<json> parseInit(StringRef text) {
  json init;
  if (text == "zeros" || text == "ones" || text == "file") {
    init["kind"] = text.str();
    return init;
  }
  StringRef std = text;
  double value;
  if (!std.consume_front("normal(") || !std.consume_back(")") ||
      std.trim().getAsDouble(value) || !(value > 0) || !std::isfinite(value))
    return failure();
  init["kind"] = "normal";
  init["std"] = value;
  return init;
}

namespace {
struct TileJson {
  std::string param;
  std::vector<int64_t> shape, offset;
};
} // namespace

/// The `zero.tile` of a parameter of shape `tileShape`, or nullopt when it is
/// malformed or its block lies outside the weight.
static std::optional<TileJson> getTileJson(Attribute attr,
                                           ArrayRef<int64_t> tileShape) {
  auto dict = dyn_cast<DictionaryAttr>(attr);
  if (!dict || dict.size() != 3)
    return std::nullopt;
  auto param = dict.getAs<StringAttr>("param");
  auto shape = dict.getAs<DenseI64ArrayAttr>("shape");
  auto offset = dict.getAs<DenseI64ArrayAttr>("offset");
  if (!param || param.getValue().empty() || !shape || !offset ||
      shape.size() != 2 || offset.size() != 2 || tileShape.size() != 2)
    return std::nullopt;
  for (int d = 0; d < 2; ++d)
    if (offset[d] < 0 || offset[d] + tileShape[d] > shape[d])
      return std::nullopt;
  return TileJson{param.str(), shape.asArrayRef().vec(),
                  offset.asArrayRef().vec()};
}

/// GPT-2's initialization by name: biases zeros, LayerNorm weights ones,
/// everything else normal(0, 0.02).
static json getDefaultInit(StringRef name) {
  json init;
  auto [prefix, last] = name.rsplit('.');
  // The module owning the parameter: "ln_1" of "h.0.ln_1.weight", "ln_f" of
  // "ln_f.weight" (rsplit of a name without a dot gives no second part).
  StringRef module = prefix.contains('.') ? prefix.rsplit('.').second : prefix;
  if (name == "bias" || last == "bias") {
    init["kind"] = "zeros";
  } else if (last == "weight" && module.starts_with("ln_")) {
    init["kind"] = "ones";
  } else {
    init["kind"] = "normal";
    init["std"] = 0.02;
  }
  return init;
}

//===----------------------------------------------------------------------===//
// The plan recorded on the IR
//===----------------------------------------------------------------------===//

namespace {
/// Where a computed plan differs from the annotations of zero-plan-memory.
struct PlanMismatch {
  Location loc;
  std::string message;
};
} // namespace

static std::optional<PlanMismatch> findPlanMismatch(func::FuncOp func,
                                                    const MemoryPlan &plan) {
  auto arenas =
      func->getAttrOfType<DictionaryAttr>(ZeroDialect::getMemoryPlanAttrName());
  for (MemorySpace space : kMemorySpaces) {
    StringRef name = getMemorySpaceName(space);
    auto recorded = arenas.getAs<IntegerAttr>(name);
    int64_t planned = plan.getArenaSize(space);
    if (!recorded || recorded.getInt() != planned)
      return PlanMismatch{
          func.getLoc(),
          ("the " + name + " arena is " + Twine(planned) + " bytes, recorded " +
           (recorded ? Twine(recorded.getInt()) : Twine("none")))
              .str()};
  }
  for (BlockArgument arg : func.getArguments()) {
    auto recorded = func.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), ZeroDialect::getOffsetAttrName());
    const PlannedBuffer *buffer = plan.lookup(arg);
    if (recorded && buffer && recorded.getInt() != buffer->offset)
      return PlanMismatch{arg.getLoc(),
                          ("argument #" + Twine(arg.getArgNumber()) +
                           " is planned at offset " + Twine(buffer->offset) +
                           ", recorded " + Twine(recorded.getInt()))
                              .str()};
  }
  for (Operation *op : plan.getProgram()) {
    if (auto recorded = op->getAttrOfType<DenseI64ArrayAttr>(
            ZeroDialect::getOffsetsAttrName())) {
      for (OpResult result : op->getResults()) {
        int64_t i = result.getResultNumber();
        const PlannedBuffer *buffer = plan.lookup(result);
        int64_t planned = buffer ? buffer->offset : -1;
        if (i >= recorded.size() || recorded[i] != planned)
          return PlanMismatch{
              op->getLoc(),
              ("result #" + Twine(i) + " of '" + op->getName().getStringRef() +
               "' is planned at offset " + Twine(planned) + ", recorded " +
               (i < recorded.size() ? Twine(recorded[i]) : Twine("none")))
                  .str()};
      }
    }
    if (!isa<AsyncStartOpInterface>(op))
      continue;
    auto recorded =
        op->getAttrOfType<DenseI64ArrayAttr>(ZeroDialect::getStagingAttrName());
    const PlannedBuffer *staging = plan.getStagingBuffer(op);
    auto describe = [](std::optional<std::pair<int64_t, int64_t>> region) {
      return region ? llvm::formatv("{0} bytes at offset {1}", region->second,
                                    region->first)
                          .str()
                    : std::string("none");
    };
    std::optional<std::pair<int64_t, int64_t>> planned, annotated;
    if (staging)
      planned = {staging->offset, staging->size};
    if (recorded && recorded.size() == 2)
      annotated = {recorded[0], recorded[1]};
    if (planned != annotated || (recorded && recorded.size() != 2))
      return PlanMismatch{op->getLoc(), "the staging buffer of '" +
                                            op->getName().getStringRef().str() +
                                            "' is " + describe(planned) +
                                            ", recorded " +
                                            describe(annotated)};
  }
  return std::nullopt;
}

/// The plan of `func` with the options zero-plan-memory recorded, checked
/// against the offsets on the IR.
static FailureOr<MemoryPlan> computeRecordedPlan(func::FuncOp func) {
  FailureOr<MemoryPlanOptions> options = MemoryPlan::getRecordedOptions(func);
  if (failed(options))
    return failure();
  FailureOr<MemoryPlan> plan = MemoryPlan::compute(func, *options);
  if (failed(plan))
    return failure();
  std::optional<PlanMismatch> mismatch = findPlanMismatch(func, *plan);
  if (!mismatch)
    return plan;
  emitError(mismatch->loc)
      << "the memory plan recorded on the IR does not match the plan of the "
         "function: "
      << mismatch->message
      << "; was the step changed after zero-plan-memory? Run the pipeline "
         "(or --zero-plan-memory) again";
  return failure();
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

namespace {
class ScheduleEmitter {
public:
  ScheduleEmitter(func::FuncOp func, const MemoryPlan &plan, int64_t stage,
                  int64_t worldSize, SmallVector<int64_t, 2> grid)
      : func(func), plan(plan), stage(stage), worldSize(worldSize),
        grid(std::move(grid)), asmState(func) {}

  FailureOr<json> emit();

private:
  LogicalResult numberValues();
  LogicalResult addValue(Value value, bool inBody);

  /// The buffers, live ranges ending at the latest at `returnPoint`.
  json getBuffers(int64_t returnPoint) const;
  FailureOr<json> getArguments();
  FailureOr<json> getResults();
  LogicalResult emitInstructions(json &compute, json &comm, json &copy);
  FailureOr<json> translateComputeOp(Operation *op, json inst);
  FailureOr<json> translateBody(Operation *owner);
  LogicalResult addScalarOpFields(Operation *op, json &inst);
  /// The `gradients` record of optimizer op `op`, instruction `index` of
  /// the compute stream (docs/ScheduleFormat.md, "Gradient records").
  FailureOr<json> getGradientRecord(Operation *op, int64_t index);

  json getIds(ValueRange values) const {
    json ids = json::array();
    for (Value value : values)
      ids.push_back(valueIds.lookup(value));
    return ids;
  }
  int64_t getBufferId(const PlannedBuffer *buffer) const {
    return buffer - plan.getBuffers().data();
  }
  static json getSync(StringRef kind, int64_t point, Operation *op,
                      int64_t event) {
    json inst;
    inst["op"] = kind.str();
    inst["point"] = point;
    inst["loc"] = formatLocation(op->getLoc());
    inst["event"] = event;
    return inst;
  }

  func::FuncOp func;
  const MemoryPlan &plan;
  int64_t stage;
  int64_t worldSize;
  /// Whether a collective or a value is quantized, or a gather
  /// hierarchical (version 3).
  bool quantized = false;
  /// The process grid (getProcessGrid): [world_size] or [nodes, ranks].
  SmallVector<int64_t, 2> grid;
  AsmState asmState;

  llvm::DenseMap<Value, int64_t> valueIds;
  json values = json::array();
  int64_t numEvents = 0;
  /// The micro-step loop (docs/ScheduleFormat.md, "Loops"), if the step has
  /// one.
  json loops = json::array();
  /// One record per optimizer instruction.
  json gradients = json::array();
};
} // namespace

/// Ops that may appear in the body of the function.
static bool isTopLevelOp(Operation *op) {
  if (isScheduleScalarOp(op))
    return true;
  // A tensor constant is data for a buffer; scalar constants are registers.
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<DenseElementsAttr>(constant.getValue()) &&
           isa<RankedTensorType>(constant.getType());
  // The compute ops of the format are those of its op table.
  const ::zero::runtime::OpInfo *info =
      lookupScheduleOp(op->getName().getStringRef());
  if (info && info->placement == ::zero::runtime::OpPlacement::Compute)
    return true;
  // Ops that become collectives, synchronization, the loop or nothing.
  return isa<tensor::EmptyOp, AllGatherStartOp, ReduceScatterStartOp,
             AllReduceStartOp, SwapOutStartOp, SwapInStartOp, WaitOp, ReleaseOp,
             func::ReturnOp, scf::ForOp, scf::YieldOp>(op);
}

/// The micro-batch slice of the micro-step loop: `tensor.extract_slice` of
/// row block `iv` of a tensor, `iv` the loop's induction variable.
static bool isLoopSlice(tensor::ExtractSliceOp slice, scf::ForOp loop) {
  if (!loop)
    return false;
  auto sourceType = slice.getSourceType();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  if (offsets.empty() || offsets[0] != OpFoldResult(loop.getInductionVar()))
    return false;
  for (OpFoldResult offset : ArrayRef(offsets).drop_front())
    if (getConstantIntValue(offset) != 0)
      return false;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (size != (i == 0 ? 1 : sourceType.getDimSize(i)))
      return false;
  return llvm::all_of(slice.getStaticStrides(),
                      [](int64_t stride) { return stride == 1; });
}

static LogicalResult checkBody(Operation *owner) {
  Region &region = owner->getRegion(0);
  if (!region.hasOneBlock())
    return owner->emitOpError("has a body of ")
           << region.getBlocks().size()
           << " blocks; the schedule's bodies have one";
  for (Operation &op : region.front()) {
    if (isa<linalg::YieldOp>(op))
      continue;
    if (isScheduleScalarOp(&op) || isa<linalg::IndexOp>(op))
      continue;
    if (auto extract = dyn_cast<tensor::ExtractOp>(op);
        extract && extract.getTensor().getParentRegion() != &region)
      continue;
    return op.emitOpError("is not supported in the body of '")
           << owner->getName()
           << "' by the schedule: a body holds scalar arith and math ops, "
              "linalg.index and tensor.extract of a tensor defined outside "
              "it (docs/ScheduleFormat.md)";
  }
  return success();
}

/// Fails with an error at the first op the format cannot express.
static LogicalResult checkOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  scf::ForOp loop;
  for (Operation &each : func.front()) {
    ops.push_back(&each);
    if (auto forOp = dyn_cast<scf::ForOp>(each)) {
      if (loop)
        return forOp.emitOpError("is a second loop; the schedule has at most "
                                 "one, the micro-step loop");
      loop = forOp;
      for (Operation &inner : *forOp.getBody())
        ops.push_back(&inner);
    }
  }
  if (loop && (!loop.getStaticTripCount() || !loop.getConstantStep() ||
               *loop.getConstantStep() != 1 ||
               getConstantIntValue(loop.getLowerBound()) != 0))
    return loop.emitOpError("must run from 0 to a constant count in steps "
                            "of 1 to be the schedule's micro-step loop");
  if (loop)
    for (OpOperand &use : loop.getInductionVar().getUses())
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
          !slice || !isLoopSlice(slice, loop))
        return use.getOwner()->emitOpError(
            "reads the loop's induction variable; the schedule has it only as "
            "the row block of a micro-batch slice (tensor.extract_slice "
            "[%iv, 0, ...] [1, ...] [1, ...])");
  for (Operation *op : ops) {
    if (!isTopLevelOp(op)) {
      bool onTensors = isScheduleScalarOpName(op->getName().getStringRef());
      InFlightDiagnostic diag =
          op->emitOpError("is not supported by the schedule");
      if (onTensors)
        diag << ": it takes scalars only; elementwise math on tensors is a "
                "linalg.map";
      else
        diag << " (docs/ScheduleFormat.md lists the ops the runtime "
                "executes)";
      return failure();
    }
    if (isa<linalg::MapOp, linalg::ReduceOp, linalg::GenericOp>(op) &&
        failed(checkBody(op)))
      return failure();
  }
  return success();
}

LogicalResult ScheduleEmitter::addValue(Value value, bool inBody) {
  Type type = value.getType();
  if (isa<HandleType>(type))
    return success();
  Location loc = value.getLoc();
  json entry;
  // Dense ids: the loop's results share their sums' ids.
  entry["id"] = static_cast<int64_t>(values.size());
  if (auto tensor = dyn_cast<RankedTensorType>(type);
      tensor && !inBody && tensor.hasStaticShape() &&
      isScalarType(tensor.getElementType())) {
    const PlannedBuffer *buffer = plan.lookup(value);
    if (!buffer)
      return emitError(loc, "the memory plan has no buffer for this value");
    entry["kind"] = "tensor";
    entry["dtype"] = getDtypeName(tensor.getElementType()).str();
    entry["shape"] = tensor.getShape().vec();
    entry["buffer"] = getBufferId(buffer);
  } else if (isScalarType(type)) {
    entry["kind"] = "scalar";
    entry["dtype"] = getDtypeName(type).str();
  } else {
    return emitError(loc, "the schedule cannot hold a value of type ")
           << type
           << (inBody ? " in a body, which holds scalars only"
                      : ": tensors have static shapes and scalars are f32, "
                        "f64, bf16, f16, i64, i32, i1 or index");
  }
  std::string name;
  llvm::raw_string_ostream os(name);
  value.printAsOperand(os, asmState);
  entry["name"] = name;
  // A frozen parameter's shard stored as int8 blocks (version 3).
  if (auto stored = QuantizedAttr::ofType(type)) {
    entry["quantized"] = {{"bits", stored.getBits()},
                          {"block_size", stored.getBlockSize()}};
    quantized = true;
  }
  valueIds[value] = entry["id"].get<int64_t>();
  values.push_back(std::move(entry));
  return success();
}

LogicalResult ScheduleEmitter::numberValues() {
  for (BlockArgument arg : func.getArguments())
    if (failed(addValue(arg, /*inBody=*/false)))
      return failure();
  for (Operation *op : plan.getProgram()) {
    // The loop's results are its carried sums after the last iteration.
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (BlockArgument sum : loop.getRegionIterArgs())
        if (failed(addValue(sum, /*inBody=*/false)))
          return failure();
      for (OpResult result : loop.getResults())
        valueIds[result] =
            valueIds.lookup(loop.getTiedLoopRegionIterArg(result));
      continue;
    }
    for (Value result : op->getResults())
      if (failed(addValue(result, /*inBody=*/false)))
        return failure();
    // Named linalg ops have implicit bodies; only these are translated.
    if (!isa<linalg::MapOp, linalg::ReduceOp, linalg::GenericOp>(op))
      continue;
    Block &body = op->getRegion(0).front();
    for (BlockArgument arg : body.getArguments())
      if (failed(addValue(arg, /*inBody=*/true)))
        return failure();
    for (Operation &nested : body)
      for (Value result : nested.getResults())
        if (failed(addValue(result, /*inBody=*/true)))
          return failure();
  }
  return success();
}

json ScheduleEmitter::getBuffers(int64_t returnPoint) const {
  json buffers = json::array();
  for (auto [i, buffer] : llvm::enumerate(plan.getBuffers())) {
    json entry;
    entry["id"] = static_cast<int64_t>(i);
    entry["name"] = buffer.name;
    entry["category"] = getCategoryName(buffer.category).str();
    entry["role"] = buffer.role.str();
    entry["space"] = getMemorySpaceName(buffer.space).str();
    entry["offset"] = buffer.offset;
    entry["bytes"] = buffer.size;
    entry["live"] = {buffer.start, std::min(buffer.end, returnPoint)};
    buffers.push_back(std::move(entry));
  }
  return buffers;
}

FailureOr<json> ScheduleEmitter::getArguments() {
  json arguments = json::array();
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto param =
        func.getArgAttrOfType<StringAttr>(i, ZeroDialect::getParamAttrName());
    auto state =
        func.getArgAttrOfType<StringAttr>(i, ZeroDialect::getStateAttrName());
    auto data =
        func.getArgAttrOfType<StringAttr>(i, ZeroDialect::getDataAttrName());
    bool step = func.getArgAttr(i, ZeroDialect::getStepAttrName()) != nullptr;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return emitError(arg.getLoc(), "argument #")
             << i << " is not a tensor; the schedule's arguments are buffers";

    json entry;
    entry["value"] = valueIds.lookup(arg);
    if (state) {
      entry["kind"] = "state";
      entry["state"] = state.str();
      if (param)
        entry["param"] = param.str();
      json init;
      Attribute initial =
          func.getArgAttr(i, ZeroDialect::getInitialValueAttrName());
      if (auto value = dyn_cast_or_null<FloatAttr>(initial)) {
        init["kind"] = "value";
        init["value"] = getFloatJson(value.getValue());
      } else if (auto value = dyn_cast_or_null<IntegerAttr>(initial)) {
        init["kind"] = "value";
        init["value"] = getIntJson(value.getValue());
      } else if (initial) {
        return emitError(arg.getLoc(), "argument #")
               << i << " (state '" << state.getValue()
               << "'): 'zero.initial_value' must be a number, got " << initial;
      } else if (state.getValue() == "master" && param) {
        init["kind"] = "param";
      } else if (param &&
                 llvm::is_contained({"exp_avg", "exp_avg_sq", "max_exp_avg_sq",
                                     "momentum_buffer"},
                                    state.getValue())) {
        init["kind"] = "zeros";
      } else {
        return emitError(arg.getLoc(), "argument #")
               << i << ": the schedule does not know how to initialize state '"
               << state.getValue()
               << "' (master and the moments of a parameter start from it "
                  "and zeros; other states need 'zero.initial_value')";
      }
      entry["init"] = std::move(init);
    } else if (param) {
      auto layout = func.getArgAttrOfType<LayoutAttr>(
          i, ZeroDialect::getLayoutAttrName());
      if (!layout)
        return emitError(arg.getLoc(), "parameter '")
               << param.getValue() << "' (argument #" << i
               << ") has no 'zero.layout'; run the ZeRO pipeline first";
      // A shard stored quantized is one even where it has the full shape
      // (one rank, or a group of one).
      bool sharded =
          type.getShape() != layout.getShape() || QuantizedAttr::ofType(type);
      RankedTensorType expected =
          sharded ? layout.getShardType(type.getElementType())
                  : layout.getFullType(type.getElementType());
      // An offloaded shard keeps its shape in another memory space, a
      // frozen one stored quantized its elements.
      if (std::optional<MemorySpace> space = getMemorySpace(type))
        expected = getTensorTypeInSpace(expected, *space);
      if (auto stored = QuantizedAttr::ofType(type); stored && sharded)
        expected = expected.cloneWithEncoding(stored);
      if (type != expected)
        return emitError(arg.getLoc(), "parameter '")
               << param.getValue() << "' (argument #" << i << ") has type "
               << type << ", which is neither its shard nor its full tensor "
               << "under " << layout;
      // A tile of a weight (zero-tile-linear) is initialized and exported
      // as its block of the weight.
      std::optional<TileJson> tile;
      if (Attribute attr = func.getArgAttr(i, ZeroDialect::getTileAttrName())) {
        tile = getTileJson(attr, layout.getShape());
        if (!tile)
          return emitError(arg.getLoc(), "parameter '")
                 << param.getValue() << "' (argument #" << i
                 << "): 'zero.tile' must be {param = \"W\", offset = "
                    "array<i64: row, col>, shape = array<i64: K, N>} with the "
                    "block inside the weight, got "
                 << attr;
      }
      entry["kind"] = "param";
      entry["name"] = param.str();
      FailureOr<json> layoutJson =
          getRankLayoutJson(func, layout, arg.getLoc());
      if (failed(layoutJson))
        return failure();
      entry["layout"] = std::move(*layoutJson);
      entry["sharded"] = sharded;
      entry["persistent"] =
          func.getArgAttr(i, ZeroDialect::getPersistentAttrName()) != nullptr;
      if (Attribute attr = func.getArgAttr(i, ZeroDialect::getInitAttrName())) {
        auto text = dyn_cast<StringAttr>(attr);
        FailureOr<json> init =
            text ? parseInit(text.getValue()) : FailureOr<json>(failure());
        if (failed(init))
          return emitError(arg.getLoc(), "parameter '")
                 << param.getValue() << "' (argument #" << i
                 << "): 'zero.init' must be \"zeros\", \"ones\", "
                    "\"normal(STD)\" with STD > 0 or \"file\", got "
                 << attr;
        entry["init"] = std::move(*init);
      } else {
        entry["init"] = getDefaultInit(tile ? tile->param : param.getValue());
      }
      if (tile)
        entry["tile"] = {{"param", tile->param},
                         {"shape", tile->shape},
                         {"offset", tile->offset}};
    } else if (step) {
      entry["kind"] = "step";
      entry["init"] = {{"kind", "value"}, {"value", 0}};
    } else if (data) {
      entry["kind"] = "data";
      entry["name"] = data.str();
      if (Attribute attr =
              func.getArgAttr(i, ZeroDialect::getDataBoundAttrName())) {
        auto bound = dyn_cast<IntegerAttr>(attr);
        auto elementType = dyn_cast<IntegerType>(type.getElementType());
        if (!bound || bound.getValue().isNonPositive() ||
            bound.getValue().getSignificantBits() > 64 || !elementType ||
            !elementType.isSignless())
          return emitError(arg.getLoc(), "data argument '")
                 << data.getValue() << "' (argument #" << i
                 << "): 'zero.data_bound' must be a positive integer on "
                    "integer data, got "
                 << attr << " on " << type;
        // The values lie in [0, bound): bound - 1 must be a value of the
        // element type (signed, as the runtime reads it).
        unsigned width = elementType.getWidth();
        int64_t bound64 = bound.getValue().getSExtValue();
        if (width < 64 && uint64_t(bound64 - 1) >> (width - 1) != 0)
          return emitError(arg.getLoc(), "data argument '")
                 << data.getValue() << "' (argument #" << i
                 << "): 'zero.data_bound' is " << bound64 << " but its "
                 << elementType << " values are at most "
                 << ((uint64_t(1) << (width - 1)) - 1)
                 << "; the bound can be at most "
                 << (uint64_t(1) << (width - 1));
        entry["bound"] = bound64;
      } else if (type.getElementType().isSignlessInteger()) {
        return emitError(arg.getLoc(), "data argument '")
               << data.getValue() << "' (argument #" << i
               << ") is integer data without 'zero.data_bound': the runtime "
                  "needs the exclusive upper bound of its values (the "
                  "vocabulary, the classes)";
      }
    } else {
      return emitError(arg.getLoc(), "argument #")
             << i
             << " is neither a parameter, an optimizer state, the step nor "
                "data ('zero.param', 'zero.state', 'zero.step', 'zero.data')";
    }
    arguments.push_back(std::move(entry));
  }
  return arguments;
}

FailureOr<json> ScheduleEmitter::getResults() {
  // What an argument holds, so that a result can name the argument it
  // updates: (state, parameter, step).
  auto getKey = [](DictionaryAttr attrs) {
    auto param = attrs
                     ? attrs.getAs<StringAttr>(ZeroDialect::getParamAttrName())
                     : StringAttr();
    auto state = attrs
                     ? attrs.getAs<StringAttr>(ZeroDialect::getStateAttrName())
                     : StringAttr();
    bool step = attrs && attrs.get(ZeroDialect::getStepAttrName());
    return std::make_tuple(state ? state.str() : std::string(),
                           param ? param.str() : std::string(), step);
  };
  std::map<std::tuple<std::string, std::string, bool>, unsigned> arguments;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    arguments.try_emplace(getKey(func.getArgAttrDict(i)), i);

  Operation *terminator = func.front().getTerminator();
  json results = json::array();
  for (auto [i, operand] : llvm::enumerate(terminator->getOperands())) {
    if (!isa<RankedTensorType>(operand.getType()))
      return terminator->emitOpError("result #")
             << i << " is not a tensor; the schedule's results are buffers";
    json entry;
    entry["value"] = valueIds.lookup(operand);
    DictionaryAttr attrs = func.getResultAttrDict(i);
    auto key = getKey(attrs);
    if (attrs && attrs.get(ZeroDialect::getLossAttrName())) {
      entry["kind"] = "loss";
    } else if (auto it = arguments.find(key);
               it != arguments.end() &&
               (!std::get<0>(key).empty() || !std::get<1>(key).empty() ||
                std::get<2>(key))) {
      entry["kind"] = "update";
      entry["argument"] = it->second;
    } else {
      return func.emitOpError("result #")
             << i
             << " is neither the loss ('zero.loss') nor the update of an "
                "argument (the argument's 'zero.param', 'zero.state' or "
                "'zero.step')";
    }
    results.push_back(std::move(entry));
  }
  return results;
}

LogicalResult ScheduleEmitter::addScalarOpFields(Operation *op, json &inst) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = constant.getValue();
    if (auto floatAttr = dyn_cast<FloatAttr>(value)) {
      inst["value"] = getFloatJson(floatAttr.getValue());
      return success();
    }
    if (auto intAttr = dyn_cast<IntegerAttr>(value)) {
      inst["value"] = getIntJson(intAttr.getValue());
      return success();
    }
    auto dense = dyn_cast<DenseElementsAttr>(value);
    if (!dense)
      return op->emitOpError("has a value the schedule cannot hold: ") << value;
    bool isFloat = isa<FloatType>(dense.getElementType());
    auto getElement = [&](int64_t i) -> json {
      return isFloat ? getFloatJson(dense.getValues<APFloat>()[i])
                     : getIntJson(dense.getValues<APInt>()[i]);
    };
    if (dense.isSplat()) {
      inst["value"] = {{"splat", getElement(0)}};
      return success();
    }
    json data = json::array();
    for (int64_t i = 0, e = dense.getNumElements(); i < e; ++i)
      data.push_back(getElement(i));
    inst["value"] = {{"data", std::move(data)}};
    return success();
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op))
    inst["predicate"] = arith::stringifyCmpFPredicate(cmp.getPredicate()).str();
  else if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    inst["predicate"] = arith::stringifyCmpIPredicate(cmp.getPredicate()).str();
  return success();
}

FailureOr<json> ScheduleEmitter::translateBody(Operation *owner) {
  Block &block = owner->getRegion(0).front();
  json ops = json::array();
  for (Operation &op : block.without_terminator()) {
    json inst;
    inst["op"] = op.getName().getStringRef().str();
    inst["operands"] = getIds(op.getOperands());
    inst["results"] = getIds(op.getResults());
    if (auto index = dyn_cast<linalg::IndexOp>(op))
      inst["dim"] = index.getDim();
    else if (failed(addScalarOpFields(&op, inst)))
      return failure();
    ops.push_back(std::move(inst));
  }
  json body;
  body["arguments"] = getIds(block.getArguments());
  body["ops"] = std::move(ops);
  body["yield"] = getIds(block.getTerminator()->getOperands());
  return body;
}

/// Fails with an error naming `what` unless `values` is empty: the format
/// takes static sizes and offsets only.
static LogicalResult checkStatic(Operation *op, ValueRange values,
                                 StringRef what) {
  if (values.empty())
    return success();
  return op->emitOpError("has dynamic ")
         << what << "; the schedule takes static ones only";
}

/// The op's indexing maps as the schedule writes them: per operand, the
/// loop of each of its dimensions (projected permutations only).
static FailureOr<json> getIndexingMapsJson(linalg::LinalgOp op) {
  json maps = json::array();
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (map.getNumSymbols() != 0 || !map.isProjectedPermutation())
      return op->emitOpError("has indexing map ")
             << AffineMapAttr::get(map)
             << ", which is not a projected permutation; the schedule takes "
                "only those";
    json dims = json::array();
    for (AffineExpr expr : map.getResults())
      dims.push_back(cast<AffineDimExpr>(expr).getPosition());
    maps.push_back(std::move(dims));
  }
  return maps;
}

FailureOr<json> ScheduleEmitter::translateComputeOp(Operation *op, json inst) {
  inst["operands"] = getIds(op->getOperands());
  inst["results"] = getIds(op->getResults());

  // GEMMs on other indexing maps or casts than the format's: the default
  // maps, or A's or B's two loops swapped (zero-fold-transposes), which the
  // instruction carries as `indexing_maps`.
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      linalgOp && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op)) {
    if (linalgOp.hasUserDefinedMaps()) {
      FailureOr<json> maps = getIndexingMapsJson(linalgOp);
      if (failed(maps))
        return failure();
      // The runtime's reading of them (GemmLayout.h) decides what it takes.
      if (!::zero::runtime::readGemmMaps(
              maps->get<::zero::runtime::GemmMaps>(),
              isa<linalg::BatchMatmulOp>(op)))
        return op->emitOpError("with indexing maps other than the default "
                               "or A's or B's two loops swapped is not "
                               "supported by the schedule");
      inst["indexing_maps"] = std::move(*maps);
    }
    linalg::TypeFn castFn = isa<linalg::MatmulOp>(op)
                                ? cast<linalg::MatmulOp>(op).getCast()
                                : cast<linalg::BatchMatmulOp>(op).getCast();
    if (castFn != linalg::TypeFn::cast_signed)
      return op->emitOpError("with cast '")
             << linalg::stringifyTypeFn(castFn)
             << "' is not supported by the schedule";
    // f32 operands rounded to tf32 (the dialect verified the attribute).
    if (op->hasAttr(ZeroDialect::getRoundOperandsAttrName()))
      inst["round_operands"] = "tf32";
  }

  LogicalResult result =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](linalg::TransposeOp transpose) {
            inst["permutation"] = transpose.getPermutation().vec();
            return success();
          })
          .Case([&](linalg::BroadcastOp broadcast) {
            inst["dimensions"] = broadcast.getDimensions().vec();
            return success();
          })
          .Case([&](linalg::MapOp map) {
            FailureOr<json> body = translateBody(map);
            if (failed(body))
              return failure();
            inst["body"] = std::move(*body);
            return success();
          })
          .Case([&](linalg::ReduceOp reduce) {
            inst["dimensions"] = reduce.getDimensions().vec();
            FailureOr<json> body = translateBody(reduce);
            if (failed(body))
              return failure();
            inst["body"] = std::move(*body);
            return success();
          })
          .Case([&](linalg::GenericOp generic) -> LogicalResult {
            if (generic.getLibraryCallAttr())
              return generic.emitOpError(
                  "with a library call is not supported by the schedule");
            FailureOr<json> maps = getIndexingMapsJson(generic);
            if (failed(maps))
              return failure();
            inst["indexing_maps"] = std::move(*maps);
            json iterators = json::array();
            for (utils::IteratorType type : generic.getIteratorTypesArray())
              iterators.push_back(utils::stringifyIteratorType(type).str());
            inst["iterator_types"] = std::move(iterators);
            FailureOr<json> body = translateBody(generic);
            if (failed(body))
              return failure();
            inst["body"] = std::move(*body);
            return success();
          })
          .Case<tensor::ExtractSliceOp, tensor::InsertSliceOp>(
              [&](auto slice) -> LogicalResult {
                if (failed(checkStatic(slice, slice.getOffsets(), "offsets")) ||
                    failed(checkStatic(slice, slice.getSizes(), "sizes")) ||
                    failed(checkStatic(slice, slice.getStrides(), "strides")))
                  return failure();
                inst["offsets"] = slice.getStaticOffsets().vec();
                inst["sizes"] = slice.getStaticSizes().vec();
                inst["strides"] = slice.getStaticStrides().vec();
                return success();
              })
          .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
              [&](auto reshape) -> LogicalResult {
                if (reshape->getNumOperands() != 1)
                  return reshape.emitOpError(
                      "has a dynamic output shape; the schedule takes static "
                      "ones only");
                json reassociation = json::array();
                for (const ReassociationIndices &group :
                     reshape.getReassociationIndices())
                  reassociation.push_back(
                      std::vector<int64_t>(group.begin(), group.end()));
                inst["reassociation"] = std::move(reassociation);
                return success();
              })
          .Case([&](tensor::SplatOp splat) {
            return checkStatic(splat, splat.getDynamicSizes(), "sizes");
          })
          .Case([&](LocalShardOp shard) -> LogicalResult {
            FailureOr<json> layout =
                getRankLayoutJson(func, shard.getLayout(), shard.getLoc());
            if (failed(layout))
              return failure();
            inst["layout"] = std::move(*layout);
            return success();
          })
          .Case([&](AdamOp adam) {
            inst["beta1"] = adam.getBeta1().convertToDouble();
            inst["beta2"] = adam.getBeta2().convertToDouble();
            inst["eps"] = adam.getEps().convertToDouble();
            inst["weight_decay"] = adam.getWeightDecay().convertToDouble();
            inst["mode"] = stringifyAdamMode(adam.getMode()).str();
            inst["bias_correction"] = adam.getBiasCorrection();
            // The optional max_exp_avg_sq and beta1_value are operands;
            // amsgrad tells which one a seventh operand is, and the
            // scaling flags which of the last ones are there.
            inst["amsgrad"] = adam.getAmsgrad();
            addGradientScalingFields(adam.getGradScale(), adam.getGradCoef(),
                                     adam.getSkip(), inst);
            return success();
          })
          .Case([&](SgdOp sgd) {
            inst["momentum"] = sgd.getMomentum().convertToDouble();
            inst["dampening"] = sgd.getDampening().convertToDouble();
            inst["weight_decay"] = sgd.getWeightDecay().convertToDouble();
            inst["nesterov"] = sgd.getNesterov();
            addGradientScalingFields(sgd.getGradScale(), sgd.getGradCoef(),
                                     sgd.getSkip(), inst);
            return success();
          })
          .Default(
              [&](Operation *other) { return addScalarOpFields(other, inst); });
  if (failed(result))
    return failure();
  return inst;
}

FailureOr<json> ScheduleEmitter::getGradientRecord(Operation *op,
                                                   int64_t index) {
  // The runtime keeps the gradient of the slice that the op updates: follow
  // its param operand back to the argument, adding up the offsets of the
  // sub-group tiles. Everything on the way is 1-D past the flattening.
  Value param = op->getOperand(0);
  int64_t offset = 0;
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(param)) {
      if (arg.getOwner()->getParentOp() != func)
        break;
      unsigned number = arg.getArgNumber();
      auto name = func.getArgAttrOfType<StringAttr>(
          number, ZeroDialect::getParamAttrName());
      auto state = func.getArgAttrOfType<StringAttr>(
          number, ZeroDialect::getStateAttrName());
      if (!name || (state && state.getValue() != "master"))
        break;
      json record;
      record["instruction"] = index;
      record["param"] = name.str();
      record["argument"] = number;
      record["offset"] = offset;
      return record;
    }
    Operation *def = param.getDefiningOp();
    if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def)) {
      if (slice.getSourceType().getRank() != 1 ||
          ShapedType::isDynamic(slice.getStaticOffsets()[0]) ||
          slice.getStaticStrides()[0] != 1)
        break;
      offset += slice.getStaticOffsets()[0];
      param = slice.getSource();
    } else if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def);
               collapse && collapse.getResultType().getRank() == 1) {
      param = collapse.getSrc();
    } else if (auto shard = dyn_cast_or_null<LocalShardOp>(def)) {
      // The offset is within the rank's shard, where it stays.
      param = shard.getFull();
    } else if (auto wait = dyn_cast_or_null<WaitOp>(def);
               wait && isa_and_nonnull<SwapOutStartOp, SwapInStartOp>(
                           wait.getHandle().getDefiningOp())) {
      // A swap moves its operands unchanged, result i from operand i.
      param = wait.getHandle().getDefiningOp()->getOperand(
          cast<OpResult>(param).getResultNumber());
    } else {
      break;
    }
  }
  InFlightDiagnostic diag = op->emitOpError(
      "updates a tensor that the schedule's gradient record cannot trace to a "
      "parameter or its master weights (through 1-D tensor.extract_slice, "
      "tensor.collapse_shape, zero.local_shard and swaps): the trace ends at ");
  if (Operation *def = param.getDefiningOp())
    diag << "'" << def->getName() << "'";
  else
    diag << "a block argument";
  return diag;
}

LogicalResult ScheduleEmitter::emitInstructions(json &compute, json &comm,
                                                json &copy) {
  // The "collective done" event of each start op, waited for at its wait.
  llvm::DenseMap<Operation *, int64_t> doneEvents;
  scf::ForOp loop;
  int64_t loopBegin = 0;
  for (auto [index, op] : llvm::enumerate(plan.getProgram())) {
    int64_t point = index;
    if (isa<tensor::EmptyOp, func::ReturnOp>(op))
      continue;
    // The loop's body follows the loop op in the program; the runtime starts
    // the carried sums before it and takes the next ones at its end.
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      loop = forOp;
      loopBegin = point + 1;
      continue;
    }
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      json carried = json::array();
      for (auto [sum, init, next] :
           llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs(),
                     yield.getOperands()))
        carried.push_back({{"value", valueIds.lookup(sum)},
                           {"init", valueIds.lookup(init)},
                           {"next", valueIds.lookup(next)}});
      loops.push_back({{"count", loop.getStaticTripCount()->getSExtValue()},
                       {"begin", loopBegin},
                       {"end", point},
                       {"carried", std::move(carried)}});
      continue;
    }
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
        slice && isLoopSlice(slice, loop)) {
      json inst;
      inst["op"] = "loop_slice";
      inst["point"] = point;
      inst["loc"] = formatLocation(op->getLoc());
      inst["operands"] = getIds(slice.getSource());
      inst["results"] = getIds(slice.getResult());
      compute.push_back(std::move(inst));
      continue;
    }
    // A view needs no work when it shares its source's buffer range.
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) &&
        plan.lookup(op->getResult(0)) == plan.lookup(op->getOperand(0)))
      continue;

    json inst;
    inst["op"] = op->getName().getStringRef().str();
    inst["point"] = point;
    inst["loc"] = formatLocation(op->getLoc());

    if (auto wait = dyn_cast<WaitOp>(op)) {
      Operation *start = wait.getHandle().getDefiningOp();
      auto it = doneEvents.find(start);
      if (it == doneEvents.end())
        return wait.emitOpError("waits on a handle that no collective of the "
                                "function started");
      compute.push_back(getSync("wait", point, op, it->second));
      continue;
    }
    if (auto release = dyn_cast<ReleaseOp>(op)) {
      json free;
      free["op"] = "free";
      free["point"] = point;
      free["loc"] = inst["loc"];
      free["values"] = getIds(release.getTensors());
      compute.push_back(std::move(free));
      continue;
    }
    if (auto start = dyn_cast<AsyncStartOpInterface>(op)) {
      WaitOp wait = start.getWait();
      if (!wait)
        return op->emitOpError("has no 'zero.wait'");
      int64_t ready = numEvents++;
      int64_t done = numEvents++;
      doneEvents[op] = done;

      // Swaps run on the copy stream, collectives on the comm stream.
      bool swap = isa<SwapOutStartOp, SwapInStartOp>(op);
      json &stream = swap ? copy : comm;
      json collective;
      collective["op"] =
          llvm::TypeSwitch<Operation *, std::string>(op)
              .Case([](AllGatherStartOp) { return "all_gather"; })
              .Case([](ReduceScatterStartOp) { return "reduce_scatter"; })
              .Case([](AllReduceStartOp) { return "all_reduce"; })
              .Default([](Operation *) { return "swap"; });
      collective["point"] = point;
      collective["loc"] = inst["loc"];
      collective["operands"] = getIds(op->getOperands());
      collective["results"] = getIds(wait.getResults());
      ArrayAttr layouts;
      std::optional<ArrayRef<int16_t>> gridAxes;
      if (auto gather = dyn_cast<AllGatherStartOp>(op)) {
        layouts = gather.getLayouts();
        gridAxes = gather.getGridAxes();
        // qwZ (version 3): int8 values, one f32 scale per block.
        if (IntegerAttr block = gather.getQuantizeBlockSizeAttr()) {
          collective["quantize"] = {{"bits", 8},
                                    {"block_size", block.getInt()}};
          quantized = true;
        }
        // MiCS's hierarchical gather (version 3).
        if (gather.getHierarchical()) {
          collective["hierarchical"] = true;
          quantized = true;
        }
      } else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op)) {
        collective["reduction"] =
            stringifyReductionKind(scatter.getReduction()).str();
        layouts = scatter.getLayouts();
        gridAxes = scatter.getGridAxes();
        // qgZ (version 3): int4 values, one f32 scale per block.
        if (IntegerAttr block = scatter.getQuantizeBlockSizeAttr()) {
          collective["quantize"] = {{"bits", 4},
                                    {"block_size", block.getInt()}};
          quantized = true;
        }
      } else if (auto reduce = dyn_cast<AllReduceStartOp>(op)) {
        collective["reduction"] =
            stringifyReductionKind(reduce.getReduction()).str();
        gridAxes = reduce.getGridAxes();
      }
      // A group of ranks smaller than the world (version 3: the op's
      // verifier checked the axes against the grid, which then has two);
      // every axis is the world, written without them.
      if (gridAxes && gridAxes->size() < grid.size())
        collective["grid_axes"] = gridAxes->vec();
      const int64_t groupSize =
          getGroupSize(grid, gridAxes.value_or(ArrayRef<int16_t>()));
      if (layouts) {
        json layoutList = json::array();
        for (auto layout : layouts.getAsRange<LayoutAttr>()) {
          FailureOr<json> layoutJson =
              getLayoutJson(layout, groupSize, op->getLoc());
          if (failed(layoutJson))
            return failure();
          layoutList.push_back(std::move(*layoutJson));
        }
        collective["layouts"] = std::move(layoutList);
      }
      if (const PlannedBuffer *staging = plan.getStagingBuffer(op)) {
        json region;
        region["space"] = getMemorySpaceName(staging->space).str();
        region["offset"] = staging->offset;
        region["bytes"] = staging->size;
        collective["staging"] = std::move(region);
      }

      compute.push_back(getSync("record", point, op, ready));
      stream.push_back(getSync("wait", point, op, ready));
      stream.push_back(std::move(collective));
      stream.push_back(getSync("record", point, op, done));
      continue;
    }

    FailureOr<json> translated = translateComputeOp(op, std::move(inst));
    if (failed(translated))
      return failure();
    if (isa<AdamOp, SgdOp>(op)) {
      FailureOr<json> record =
          getGradientRecord(op, static_cast<int64_t>(compute.size()));
      if (failed(record))
        return failure();
      gradients.push_back(std::move(*record));
    }
    compute.push_back(std::move(*translated));
  }
  return success();
}

FailureOr<json> ScheduleEmitter::emit() {
  json compute = json::array();
  json comm = json::array();
  json copy = json::array();
  if (failed(numberValues()) || failed(emitInstructions(compute, comm, copy)))
    return failure();
  FailureOr<json> arguments = getArguments();
  if (failed(arguments))
    return failure();
  FailureOr<json> results = getResults();
  if (failed(results))
    return failure();

  json schedule;
  schedule["format"] = "zero-schedule";
  schedule["version"] =
      grid.size() > 1 || quantized ? kScheduleFormatVersion3
      : loops.empty() && copy.empty() &&
              !func->hasAttr(ZeroDialect::getNvmePathAttrName())
          ? kScheduleFormatVersion
          : kScheduleFormatVersion2;
  schedule["producer"] = "zero-opt";
  std::string source = "unknown";
  if (auto file = func.getLoc()->findInstanceOf<FileLineColLoc>())
    source = file.getFilename().str();
  schedule["source"] = source;
  schedule["function"] = func.getSymName().str();
  schedule["stage"] = stage;
  schedule["world_size"] = worldSize;
  // Node-major: the node, then the rank in it (version 3).
  schedule["topology"] = {{"grid", json(grid)}};
  json arenas;
  for (MemorySpace space : kMemorySpaces)
    arenas[getMemorySpaceName(space).str()] = plan.getArenaSize(space);
  schedule["memory"] = {{"alignment", plan.getOptions().alignment},
                        {"arenas", std::move(arenas)}};
  if (auto nvmePath =
          func->getAttrOfType<StringAttr>(ZeroDialect::getNvmePathAttrName()))
    schedule["memory"]["nvme_path"] = nvmePath.str();
  if (auto aio =
          func->getAttrOfType<DictionaryAttr>(ZeroDialect::getAioAttrName())) {
    json settings = json::object();
    // A BoolAttr is an i1 IntegerAttr: flags first.
    for (NamedAttribute entry : aio) {
      if (auto flag = dyn_cast<BoolAttr>(entry.getValue()))
        settings[entry.getName().str()] = flag.getValue();
      else if (auto integer = dyn_cast<IntegerAttr>(entry.getValue()))
        settings[entry.getName().str()] = integer.getInt();
    }
    schedule["memory"]["aio"] = std::move(settings);
  }
  // The runtime's program returns right after its last instruction. Views
  // that share their source's buffer emit none, so when the step ends with
  // such views (the shapes of its results) the plan's return lies later:
  // nothing runs in between, and buffers live to the runtime's return.
  int64_t returnPoint = 0;
  for (const json *stream : {&compute, &comm, &copy})
    for (const json &inst : *stream)
      returnPoint = std::max(returnPoint, inst["point"].get<int64_t>() + 1);
  schedule["buffers"] = getBuffers(returnPoint);
  schedule["values"] = std::move(values);
  schedule["arguments"] = std::move(*arguments);
  schedule["results"] = std::move(*results);
  schedule["streams"] = json::array({"compute", "comm"});
  if (!copy.empty())
    schedule["streams"].push_back("copy");
  schedule["events"] = numEvents;
  if (!loops.empty())
    schedule["loops"] = std::move(loops);
  if (auto fromFp32 = func->getAttrOfType<BoolAttr>(
          ZeroDialect::getLoadFromFp32WeightsAttrName()))
    schedule["checkpoint"] = {{"load_from_fp32_weights", fromFp32.getValue()}};
  schedule["instructions"] = {{"compute", std::move(compute)},
                              {"comm", std::move(comm)}};
  if (!copy.empty())
    schedule["instructions"]["copy"] = std::move(copy);
  // Always written, empty without an optimizer instruction: its absence
  // marks a schedule of an emitter before it.
  schedule["gradients"] = std::move(gradients);
  return schedule;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// One line per element of the lists of records (buffers, values,
/// instructions, ...), everything else on one line: readable, diffable and
/// easy to FileCheck, and the same bytes for the same IR.
static bool isRecordList(const json &value) {
  return value.is_array() && !value.empty() &&
         llvm::all_of(value, [](const json &e) { return e.is_object(); });
}

static bool holdsRecordList(const json &value) {
  return value.is_object() &&
         llvm::any_of(value, [](const json &e) { return isRecordList(e); });
}

static void printCompact(llvm::raw_ostream &os, const json &value) {
  if (value.is_object()) {
    os << '{';
    llvm::ListSeparator separator;
    for (const auto &item : value.items()) {
      os << separator << json(item.key()).dump() << ": ";
      printCompact(os, item.value());
    }
    os << '}';
    return;
  }
  if (value.is_array()) {
    os << '[';
    llvm::ListSeparator separator;
    for (const json &element : value) {
      os << separator;
      printCompact(os, element);
    }
    os << ']';
    return;
  }
  os << value.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Prints an object member by member and a record list record by record,
/// one level of `indent` (one space) deeper.
static void printExpanded(llvm::raw_ostream &os, const json &value,
                          unsigned indent) {
  bool object = value.is_object();
  os << (object ? "{\n" : "[\n");
  llvm::ListSeparator separator(",\n");
  for (const auto &item : value.items()) {
    os << separator;
    os.indent(indent + 1);
    if (!object) {
      printCompact(os, item.value());
      continue;
    }
    os << json(item.key()).dump() << ": ";
    if (isRecordList(item.value()) || holdsRecordList(item.value()))
      printExpanded(os, item.value(), indent + 1);
    else
      printCompact(os, item.value());
  }
  os << '\n';
  os.indent(indent);
  os << (object ? '}' : ']');
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

LogicalResult mlir::zero::translateToSchedule(func::FuncOp func,
                                              llvm::raw_ostream &os) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError("'@")
           << func.getSymName()
           << "' is not a rank step: the schedule needs a function with one "
              "block";
  auto stage =
      func->getAttrOfType<IntegerAttr>(ZeroDialect::getStageAttrName());
  auto worldSize =
      func->getAttrOfType<IntegerAttr>(ZeroDialect::getWorldSizeAttrName());
  auto arenas =
      func->getAttrOfType<DictionaryAttr>(ZeroDialect::getMemoryPlanAttrName());
  if (!stage || !worldSize || !arenas)
    return func.emitOpError("'@")
           << func.getSymName()
           << "' has not been through the ZeRO pipeline: the schedule needs "
              "the '"
           << (!stage       ? ZeroDialect::getStageAttrName()
               : !worldSize ? ZeroDialect::getWorldSizeAttrName()
                            : ZeroDialect::getMemoryPlanAttrName())
           << "' attribute; compile it with zero-opt --zero-stage=N (or "
              "--zero-pipeline) first";
  if (worldSize.getInt() < 1)
    return func.emitOpError("has 'zero.world_size' ")
           << worldSize.getInt() << "; it must be at least 1";

  if (failed(checkOps(func)))
    return failure();
  FailureOr<MemoryPlan> plan = computeRecordedPlan(func);
  if (failed(plan))
    return failure();
  if (auto attr = func->getAttrOfType<IntegerAttr>(
          ZeroDialect::getRanksPerNodeAttrName());
      attr && (attr.getInt() < 1 || worldSize.getInt() % attr.getInt() != 0))
    return func.emitOpError("has '")
           << ZeroDialect::getRanksPerNodeAttrName() << "' " << attr.getInt()
           << ", which does not divide 'zero.world_size' "
           << worldSize.getInt();
  ScheduleEmitter emitter(func, *plan, stage.getInt(), worldSize.getInt(),
                          *getProcessGrid(func));
  FailureOr<json> schedule = emitter.emit();
  if (failed(schedule))
    return failure();
  printExpanded(os, *schedule, 0);
  os << '\n';
  return success();
}

LogicalResult mlir::zero::translateModuleToSchedule(ModuleOp module,
                                                    llvm::raw_ostream &os,
                                                    StringRef entry) {
  FailureOr<func::FuncOp> func = lookupTrainStep(module, entry);
  if (failed(func))
    return failure();
  return mlir::zero::translateToSchedule(*func, os);
}
