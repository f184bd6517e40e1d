//===- MemoryPlan.cpp - static memory plan of a rank step -----------------===//
//
// Builds the plan in four steps:
//   1. liveness: every tracked tensor is live from its definition to its last
//      use, where a use by a start op lasts until the wait on its handle;
//   2. buffers: views (expand/collapse_shape) share their source's buffer;
//      updated residents, gradient accumulations and destination-style
//      results written in place reuse an existing buffer; everything else
//      gets a new one;
//   3. contiguous gradient regions group the operands of each reduction, and
//      collectives whose bucket needs a flat buffer get a staging buffer;
//   4. offsets per memory space: residents packed first, then transients by
//      the interval allocator (best fit in program order).
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/MemoryPlan.h"

#include "zero/Analysis/IntervalAllocator.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <map>

using namespace mlir;
using namespace mlir::zero;

static constexpr MemorySpace kSpaces[] = {MemorySpace::Device,
                                          MemorySpace::Host, MemorySpace::Nvme};

StringRef zero::getBufferCategoryName(BufferCategory category) {
  switch (category) {
  case BufferCategory::Parameter:
    return "parameters";
  case BufferCategory::Gradient:
    return "gradients";
  case BufferCategory::OptimizerState:
    return "optimizer states";
  case BufferCategory::Input:
    return "inputs";
  case BufferCategory::Activation:
    return "activations";
  case BufferCategory::Communication:
    return "communication buffers";
  }
  llvm_unreachable("unknown buffer category");
}

StringRef zero::getMemorySpaceName(MemorySpace space) {
  switch (space) {
  case MemorySpace::Device:
    return "device";
  case MemorySpace::Host:
    return "host";
  case MemorySpace::Nvme:
    return "nvme";
  }
  llvm_unreachable("unknown memory space");
}

FailureOr<int64_t> zero::getElementByteWidth(Type elementType) {
  if (elementType.isIntOrFloat())
    return static_cast<int64_t>(
        llvm::divideCeil(elementType.getIntOrFloatBitWidth(), 8));
  if (elementType.isIndex())
    return 8;
  if (auto complex = dyn_cast<ComplexType>(elementType)) {
    FailureOr<int64_t> part = getElementByteWidth(complex.getElementType());
    if (failed(part))
      return failure();
    return 2 * *part;
  }
  return failure();
}

FailureOr<int64_t> zero::getTensorByteSize(RankedTensorType type) {
  if (!type.hasStaticShape())
    return failure();
  FailureOr<int64_t> width = getElementByteWidth(type.getElementType());
  if (failed(width))
    return failure();
  std::optional<int64_t> numel = getCheckedNumElements(type.getShape());
  std::optional<int64_t> bytes =
      numel ? llvm::checkedMul(*numel, *width) : std::nullopt;
  if (!bytes)
    return failure();
  return *bytes;
}

/// "file:line:col" for file locations, the name of a NameLoc.
static std::string formatLocation(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn())
        .str();
  return "unknown";
}

static std::string describeOp(Operation *op) {
  return (op->getName().getStringRef() + " at " + formatLocation(op->getLoc()))
      .str();
}

/// Bytes of one element of `value`'s tensor type; 0 if it cannot be sized.
static int64_t getElementBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return 0;
  FailureOr<int64_t> width = getElementByteWidth(type.getElementType());
  return succeeded(width) ? *width : 0;
}

/// Bytes of the flat buffer of a collective start (docs/ScheduleFormat.md,
/// "Collectives"), or nullopt when the runtime can hand its single, unpadded
/// operand to MPI as it is: an all-gather or reduce-scatter holds every
/// rank's padded shards, an all-reduce its operands packed. Failure when the
/// size does not fit int64.
static FailureOr<std::optional<int64_t>> getStagingBytes(Operation *op) {
  ArrayAttr layouts;
  if (auto gather = dyn_cast<AllGatherStartOp>(op))
    layouts = gather.getLayouts();
  else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op))
    layouts = scatter.getLayouts();
  else if (!isa<AllReduceStartOp>(op))
    return std::optional<int64_t>();

  std::optional<int64_t> bytes = 0;
  if (!layouts) {
    if (op->getNumOperands() <= 1)
      return std::optional<int64_t>();
    for (Value tensor : op->getOperands()) {
      FailureOr<int64_t> size =
          getTensorByteSize(cast<RankedTensorType>(tensor.getType()));
      if (failed(size) || !(bytes = llvm::checkedAdd(*bytes, *size)))
        return failure();
    }
    return bytes;
  }

  bool padded = false;
  for (auto [tensor, attr] : llvm::zip_equal(op->getOperands(), layouts)) {
    auto layout = cast<LayoutAttr>(attr);
    padded |= layout.getPaddedNumel() != layout.getNumel();
    std::optional<int64_t> size =
        llvm::checkedMul(layout.getPaddedNumel(), getElementBytes(tensor));
    if (!size || !(bytes = llvm::checkedAdd(*bytes, *size)))
      return failure();
  }
  if (op->getNumOperands() <= 1 && !padded)
    return std::optional<int64_t>();
  return bytes;
}

//===----------------------------------------------------------------------===//
// Building the plan
//===----------------------------------------------------------------------===//

namespace mlir {
namespace zero {
class MemoryPlanBuilder {
public:
  explicit MemoryPlanBuilder(MemoryPlan &plan) : plan(plan) {}

  LogicalResult build();

private:
  struct ValueInfo {
    int64_t size;
    MemorySpace space;
    int64_t def;
    int64_t lastUse;
    /// The value whose buffer this one views (itself if not a view).
    Value root;
  };
  /// A value and its views: one lifetime.
  struct Group {
    int64_t start = 0;
    int64_t end = 0;
  };

  LogicalResult collectValues();
  LogicalResult addValue(Value value, int64_t def, Location loc);
  int64_t getUseEnd(OpOperand &use);
  void assignBuffers();
  void classifyTransients();
  LogicalResult formGradientRegions();
  LogicalResult addStagingBuffers();
  LogicalResult checkArenaBounds();
  void allocate();

  unsigned addBuffer(BufferCategory category, std::string name, Value root,
                     Operation *op, Location loc, bool resident);
  void assign(Value root, unsigned buffer);
  /// The gradient name of result `index` of `wait`, if it waits on a
  /// gradient reduction.
  std::optional<StringRef> getGradientName(WaitOp wait, unsigned index);

  /// The op of the program that `op` is or is nested in; null outside.
  Operation *getProgramOp(Operation &op) {
    if (loop)
      if (Operation *inLoop = loop.getBody()->findAncestorOpInBlock(op))
        return inLoop;
    return block->findAncestorOpInBlock(op);
  }

  MemoryPlan &plan;
  Block *block = nullptr;
  /// The micro-step loop, if any: its body's ops follow the loop op in the
  /// program, and its terminator is the end of every iteration.
  scf::ForOp loop;
  int64_t loopEnd = -1;
  int64_t lastPoint = 0;
  llvm::DenseMap<Operation *, int64_t> pointOf;
  llvm::MapVector<Value, ValueInfo> values;
  llvm::DenseMap<Value, Group> groups;
  llvm::DenseMap<Value, unsigned> bufferOfRoot;
  /// Per buffer: the last use of the values assigned so far.
  SmallVector<int64_t> valueEnd;
};
} // namespace zero
} // namespace mlir

int64_t MemoryPlanBuilder::getUseEnd(OpOperand &use) {
  Operation *user = getProgramOp(*use.getOwner());
  if (!user)
    return lastPoint;
  int64_t end = pointOf.lookup(user);
  // The runtime reads a start op's operands until the wait.
  if (auto start = dyn_cast<AsyncStartOpInterface>(user))
    for (Operation *handleUser : start.getAsyncHandle().getUsers())
      if (Operation *wait = getProgramOp(*handleUser))
        end = std::max(end, pointOf.lookup(wait));
  // A value from before the loop that the loop reads is read by every
  // iteration: it lives to the loop's end.
  if (loop && user->getBlock() == loop.getBody() &&
      !loop.getRegion().isAncestor(use.get().getParentRegion()))
    end = std::max(end, loopEnd);
  return end;
}

LogicalResult MemoryPlanBuilder::addValue(Value value, int64_t def,
                                          Location loc) {
  if (!isa<TensorType>(value.getType()))
    return success();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  FailureOr<int64_t> size =
      type ? getTensorByteSize(type) : FailureOr<int64_t>(failure());
  std::optional<MemorySpace> space;
  if (type)
    space = getMemorySpace(type);
  if (failed(size) && type && type.hasStaticShape() &&
      succeeded(getElementByteWidth(type.getElementType())))
    return emitError(loc, "the size in bytes of a value of type ")
           << value.getType() << " does not fit int64";
  if (failed(size) || !space)
    return emitError(loc, "cannot plan the memory of a value of type ")
           << value.getType()
           << ": the memory plan needs static shapes, integer or float "
              "elements, and no encoding other than #zero.memory_space";
  int64_t lastUse = def;
  for (OpOperand &use : value.getUses())
    lastUse = std::max(lastUse, getUseEnd(use));
  values.insert({value, ValueInfo{*size, *space, def, lastUse, value}});
  return success();
}

LogicalResult MemoryPlanBuilder::collectValues() {
  func::FuncOp func = plan.func;
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError("the memory plan needs a function with one block");
  block = &func.front();
  auto addToProgram = [&](Operation &op) {
    pointOf[&op] = plan.program.size();
    plan.program.push_back(&op);
  };
  // The micro-step loop's body is planned once, right after the loop op
  // (where the runtime starts the loop's sums); its terminator is where each
  // iteration ends and the next sums are taken.
  for (Operation &op : *block) {
    addToProgram(op);
    auto forOp = dyn_cast<scf::ForOp>(op);
    if (!forOp)
      continue;
    if (loop)
      return forOp.emitError("the memory plan handles one micro-step loop; "
                             "this is a second one");
    loop = forOp;
    for (Operation &inner : *forOp.getBody())
      addToProgram(inner);
    loopEnd = pointOf[forOp.getBody()->getTerminator()];
  }
  lastPoint = plan.program.size() - 1;

  for (BlockArgument arg : block->getArguments())
    if (failed(addValue(arg, 0, arg.getLoc())))
      return failure();
  for (Operation *op : plan.program) {
    // A collective writes its results on the comm stream from its start op
    // on, not only from the wait: they are reserved from the start.
    int64_t def = pointOf[op];
    if (auto wait = dyn_cast<WaitOp>(op))
      if (Operation *start = wait.getHandle().getDefiningOp())
        if (start->getBlock() == op->getBlock())
          def = pointOf.lookup(start);
    // A running sum is written from the loop's start to its end.
    if (op == loop)
      for (BlockArgument sum : loop.getRegionIterArgs())
        if (failed(addValue(sum, def, loop.getLoc())))
          return failure();
    for (Value result : op->getResults())
      if (failed(addValue(result, def, op->getLoc())))
        return failure();
  }

  // Views share their source's buffer and extend its lifetime; the loop's
  // results are its running sums.
  for (auto &[value, info] : values) {
    Operation *op = value.getDefiningOp();
    Value source;
    if (op && isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      source = op->getOperand(0);
    else if (op && op == loop)
      source = loop.getTiedLoopRegionIterArg(cast<OpResult>(value));
    if (source) {
      auto it = values.find(source);
      if (it != values.end())
        info.root = it->second.root;
    }
    Group &group = groups[info.root];
    if (info.root == value)
      group.start = info.def;
    group.end = std::max(group.end, info.lastUse);
  }
  if (loop)
    for (BlockArgument sum : loop.getRegionIterArgs())
      if (values.count(sum))
        groups[sum].end = std::max(groups[sum].end, loopEnd);
  return success();
}

unsigned MemoryPlanBuilder::addBuffer(BufferCategory category, std::string name,
                                      Value root, Operation *op, Location loc,
                                      bool resident) {
  const ValueInfo &info = values.find(root)->second;
  PlannedBuffer buffer(loc);
  buffer.name = std::move(name);
  buffer.category = category;
  buffer.space = info.space;
  buffer.size = info.size;
  buffer.resident = resident;
  buffer.start = resident ? 0 : info.def;
  buffer.end = lastPoint;
  buffer.op = op;
  plan.buffers.push_back(std::move(buffer));
  valueEnd.push_back(-1);
  return plan.buffers.size() - 1;
}

void MemoryPlanBuilder::assign(Value root, unsigned buffer) {
  bufferOfRoot[root] = buffer;
  valueEnd[buffer] = std::max(valueEnd[buffer], groups[root].end);
}

std::optional<StringRef> MemoryPlanBuilder::getGradientName(WaitOp wait,
                                                            unsigned index) {
  Operation *start = wait.getHandle().getDefiningOp();
  if (!start || !isa<ReduceScatterStartOp, AllReduceStartOp>(start))
    return std::nullopt;
  auto names = start->getAttrOfType<ArrayAttr>(ZeroDialect::getGradsAttrName());
  if (!names || index >= names.size())
    return std::nullopt;
  auto name = dyn_cast<StringAttr>(names[index]);
  if (!name)
    return std::nullopt;
  return name.getValue();
}

void MemoryPlanBuilder::assignBuffers() {
  func::FuncOp func = plan.func;
  StringRef paramAttr = ZeroDialect::getParamAttrName();
  StringRef stateAttr = ZeroDialect::getStateAttrName();

  // Residents: one buffer per tensor argument, in argument order.
  std::map<std::pair<std::string, std::string>, unsigned> residentByKey;
  for (BlockArgument arg : block->getArguments()) {
    if (!values.count(arg))
      continue;
    unsigned i = arg.getArgNumber();
    auto param = func.getArgAttrOfType<StringAttr>(i, paramAttr);
    auto state = func.getArgAttrOfType<StringAttr>(i, stateAttr);
    auto data =
        func.getArgAttrOfType<StringAttr>(i, ZeroDialect::getDataAttrName());
    BufferCategory category = BufferCategory::Input;
    std::string name = data ? data.str() : llvm::formatv("arg{0}", i).str();
    if (state) {
      // Per-parameter states are "w.exp_avg"; others (the loss scale) have
      // no parameter.
      category = BufferCategory::OptimizerState;
      name = param ? (param.getValue() + "." + state.getValue()).str()
                   : state.str();
    } else if (param) {
      category = BufferCategory::Parameter;
      name = param.str();
    }
    unsigned buffer = addBuffer(category, name, arg, nullptr, arg.getLoc(),
                                /*resident=*/true);
    assign(arg, buffer);
    if (param || state)
      residentByKey.try_emplace({state ? state.str() : std::string(),
                                 param ? param.str() : std::string()},
                                buffer);
  }

  // A result marked like an argument updates that argument's buffer.
  llvm::DenseMap<Value, unsigned> tiedRoots;
  Operation *terminator = block->getTerminator();
  for (auto [i, operand] : llvm::enumerate(terminator->getOperands())) {
    if (i >= func.getNumResults())
      break;
    auto param = func.getResultAttrOfType<StringAttr>(i, paramAttr);
    auto state = func.getResultAttrOfType<StringAttr>(i, stateAttr);
    auto it = values.find(operand);
    if ((!param && !state) || it == values.end())
      continue;
    auto resident = residentByKey.find({state ? state.str() : std::string(),
                                        param ? param.str() : std::string()});
    if (resident != residentByKey.end())
      tiedRoots.try_emplace(it->second.root, resident->second);
  }

  llvm::StringMap<unsigned> gradientBuffers;
  for (Operation *op : plan.program) {
    int64_t point = pointOf[op];
    if (op == loop)
      for (BlockArgument sum : loop.getRegionIterArgs())
        if (values.count(sum))
          assign(sum, addBuffer(BufferCategory::Activation,
                                "micro-step sum " +
                                    std::to_string(sum.getArgNumber() - 1),
                                sum, op, op->getLoc(), /*resident=*/false));
    for (OpResult result : op->getResults()) {
      auto it = values.find(result);
      if (it == values.end() || it->second.root != result)
        continue;
      const ValueInfo &info = it->second;
      const Group &group = groups[result];

      // An updated resident may be written into its argument's buffer once
      // the old value is dead (or dies at this op, which updates it).
      auto tied = tiedRoots.find(result);
      if (tied != tiedRoots.end()) {
        unsigned buffer = tied->second;
        const PlannedBuffer &resident = plan.buffers[buffer];
        if (resident.space == info.space && info.size <= resident.size &&
            group.start >= valueEnd[buffer]) {
          assign(result, buffer);
          continue;
        }
      }

      // Reduced gradients of one parameter share one resident buffer (the
      // accumulation buffer), as long as their lifetimes do not overlap.
      if (auto wait = dyn_cast<WaitOp>(op)) {
        if (std::optional<StringRef> name =
                getGradientName(wait, result.getResultNumber())) {
          auto [entry, inserted] = gradientBuffers.try_emplace(*name, 0);
          if (inserted) {
            entry->second =
                addBuffer(BufferCategory::Gradient, (*name + ".grad").str(),
                          result, op, op->getLoc(), /*resident=*/true);
            assign(result, entry->second);
            continue;
          }
          PlannedBuffer &gradient = plan.buffers[entry->second];
          if (gradient.space == info.space &&
              group.start > valueEnd[entry->second]) {
            gradient.size = std::max(gradient.size, info.size);
            assign(result, entry->second);
            continue;
          }
        }
      }

      // A destination-style op writes in place into an init that dies here.
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
        if (OpOperand *init = dps.getTiedOpOperand(result)) {
          auto initInfo = values.find(init->get());
          if (initInfo != values.end()) {
            unsigned buffer = bufferOfRoot.lookup(initInfo->second.root);
            const PlannedBuffer &candidate = plan.buffers[buffer];
            bool readElsewhere =
                llvm::any_of(op->getOpOperands(), [&](OpOperand &operand) {
                  if (&operand == init)
                    return false;
                  auto other = values.find(operand.get());
                  return other != values.end() &&
                         bufferOfRoot.lookup(other->second.root) == buffer;
                });
            if (!candidate.resident && valueEnd[buffer] == point &&
                candidate.space == info.space && candidate.size == info.size &&
                !readElsewhere) {
              // Named after the last writer: the matmul, not its init.
              plan.buffers[buffer].name = describeOp(op);
              assign(result, buffer);
              continue;
            }
          }
        }
      }

      assign(result, addBuffer(BufferCategory::Activation, describeOp(op),
                               result, op, op->getLoc(),
                               /*resident=*/false));
    }
  }

  for (auto [buffer, end] : llvm::enumerate(valueEnd))
    if (!plan.buffers[buffer].resident)
      plan.buffers[buffer].end = end;
  for (auto &[value, info] : values)
    plan.bufferOf[value] = bufferOfRoot.lookup(info.root);
}

void MemoryPlanBuilder::classifyTransients() {
  // Wait results of collectives and swaps, and tensors a start op reads,
  // are communication buffers for their whole life.
  for (auto &[value, info] : values) {
    PlannedBuffer &buffer = plan.buffers[plan.bufferOf[value]];
    if (buffer.resident)
      continue;
    if (info.root == value && value.getDefiningOp() == buffer.op) {
      if (auto wait = dyn_cast_or_null<WaitOp>(buffer.op)) {
        Operation *start = wait.getHandle().getDefiningOp();
        unsigned index = cast<OpResult>(value).getResultNumber();
        // The name of the resident this wait result comes from, if any.
        std::string source;
        if (start && index < start->getNumOperands())
          if (const PlannedBuffer *from = plan.lookup(start->getOperand(index));
              from && from->resident)
            source = from->name;
        buffer.category = BufferCategory::Communication;
        if (isa_and_nonnull<AllGatherStartOp>(start)) {
          buffer.role = "gathered";
          if (!source.empty())
            buffer.name = "gathered " + source;
        } else if (isa_and_nonnull<SwapInStartOp, SwapOutStartOp>(start)) {
          buffer.role = "swapped";
          if (!source.empty())
            buffer.name = "swapped " + source;
        } else {
          buffer.role = "reduced";
          if (std::optional<StringRef> name = getGradientName(wait, index))
            buffer.name = ("reduced " + *name + ".grad").str();
        }
        continue;
      }
    }
    bool inFlight = llvm::any_of(value.getUsers(), [&](Operation *user) {
      return isa<AsyncStartOpInterface>(getProgramOp(*user));
    });
    if (inFlight && buffer.role.empty()) {
      buffer.category = BufferCategory::Communication;
      buffer.role = "in flight";
    }
  }
}

LogicalResult MemoryPlanBuilder::formGradientRegions() {
  if (!plan.options.contiguousGradients)
    return success();
  int64_t alignment = plan.options.alignment;
  for (Operation *op : plan.program) {
    if (!isa<ReduceScatterStartOp, AllReduceStartOp>(op) ||
        !op->hasAttr(ZeroDialect::getGradsAttrName()))
      continue;
    GradientRegion region{op, MemorySpace::Device, 0, 0, 0, 0, {}};
    for (Value operand : op->getOperands()) {
      auto it = plan.bufferOf.find(operand);
      if (it == plan.bufferOf.end())
        continue;
      PlannedBuffer &buffer = plan.buffers[it->second];
      if (buffer.resident || buffer.region >= 0 ||
          (!region.buffers.empty() && buffer.space != region.space))
        continue;
      if (region.buffers.empty()) {
        region.space = buffer.space;
        region.start = buffer.start;
        region.end = buffer.end;
      }
      buffer.region = plan.regions.size();
      region.buffers.push_back(it->second);
      // Every member starts aligned, as every buffer does: a member's bytes
      // are rounded up to the alignment before the next one.
      std::optional<int64_t> size =
          llvm::checkedAdd(region.size, alignTo(buffer.size, alignment));
      if (!size)
        return op->emitError("the gradients this op reduces total more than "
                             "int64 bytes");
      region.size = *size;
      region.start = std::min(region.start, buffer.start);
      region.end = std::max(region.end, buffer.end);
    }
    if (region.buffers.empty())
      continue;
    // The members are reserved for the whole life of the bucket.
    for (unsigned buffer : region.buffers) {
      plan.buffers[buffer].start = region.start;
      plan.buffers[buffer].end = region.end;
    }
    plan.regions.push_back(std::move(region));
  }
  return success();
}

LogicalResult MemoryPlanBuilder::addStagingBuffers() {
  for (Operation *op : plan.program) {
    FailureOr<std::optional<int64_t>> staging = getStagingBytes(op);
    if (failed(staging))
      return op->emitError(
          "the staging buffer of this collective needs more than int64 bytes");
    std::optional<int64_t> bytes = *staging;
    if (!bytes)
      continue;
    // Reserved while the collective runs: from the start to its wait.
    int64_t point = pointOf[op], end = point;
    for (Operation *user : op->getResult(0).getUsers())
      if (Operation *wait = getProgramOp(*user))
        end = std::max(end, pointOf.lookup(wait));
    // Collectives with layouts read device tensors; an all-reduce stages
    // where its operands live.
    MemorySpace space = MemorySpace::Device;
    auto it = values.find(op->getOperand(0));
    if (it != values.end())
      space = it->second.space;

    PlannedBuffer buffer(op->getLoc());
    buffer.name = "staging " + describeOp(op);
    buffer.category = BufferCategory::Communication;
    buffer.role = "staging";
    buffer.space = space;
    buffer.size = *bytes;
    buffer.start = point;
    buffer.end = end;
    buffer.op = op;
    plan.stagingOf[op] = plan.buffers.size();
    plan.buffers.push_back(std::move(buffer));
  }
  return success();
}

/// Every offset the allocator hands out, and so every arena, is below the
/// sum over the space's buffers of their size plus the alignment: an interval
/// goes into a free block or on top of the arena's aligned end. That sum over
/// all spaces fitting int64 makes every sum of buffer sizes the allocation
/// and the report make fit.
LogicalResult MemoryPlanBuilder::checkArenaBounds() {
  int64_t alignment = plan.options.alignment;
  // One alignment more for the aligned base of each space's transients.
  std::optional<int64_t> bound = std::size(kSpaces) * alignment;
  for (const PlannedBuffer &buffer : plan.buffers) {
    std::optional<int64_t> padded = llvm::checkedAdd(buffer.size, alignment);
    bound = padded ? llvm::checkedAdd(*bound, *padded) : std::nullopt;
    if (!bound)
      return plan.func.emitError(
          "the buffers of the memory plan total more than int64 bytes");
  }
  return success();
}

void MemoryPlanBuilder::allocate() {
  int64_t alignment = plan.options.alignment;
  for (MemorySpace space : kSpaces) {
    // Residents first, packed in order: their offsets do not depend on the
    // rest of the step.
    int64_t residentEnd = 0;
    for (PlannedBuffer &buffer : plan.buffers) {
      if (!buffer.resident || buffer.space != space)
        continue;
      buffer.offset = alignTo(residentEnd, alignment);
      residentEnd = buffer.offset + buffer.size;
    }

    // Then one interval per transient buffer or gradient region.
    SmallVector<LiveInterval> intervals;
    SmallVector<std::pair<bool, unsigned>> owners; // (is region, index)
    for (auto [i, buffer] : llvm::enumerate(plan.buffers)) {
      if (buffer.resident || buffer.space != space || buffer.region >= 0)
        continue;
      intervals.push_back({buffer.size, buffer.start, buffer.end});
      owners.push_back({false, static_cast<unsigned>(i)});
    }
    for (auto [i, region] : llvm::enumerate(plan.regions)) {
      if (region.space != space)
        continue;
      intervals.push_back({region.size, region.start, region.end});
      owners.push_back({true, static_cast<unsigned>(i)});
    }
    IntervalAllocation allocation = allocateIntervals(
        intervals, alignment, alignTo(residentEnd, alignment));

    int64_t arena = residentEnd;
    for (auto [owner, interval, start] :
         llvm::zip_equal(owners, intervals, allocation.offsets)) {
      int64_t offset = start;
      if (interval.size > 0)
        arena = std::max(arena, offset + interval.size);
      if (!owner.first) {
        plan.buffers[owner.second].offset = offset;
        continue;
      }
      GradientRegion &region = plan.regions[owner.second];
      region.offset = offset;
      for (unsigned buffer : region.buffers) {
        plan.buffers[buffer].offset = offset;
        offset += alignTo(plan.buffers[buffer].size, alignment);
      }
    }
    plan.arenaSizes[static_cast<unsigned>(space)] = arena;
  }
}

LogicalResult MemoryPlanBuilder::build() {
  if (failed(collectValues()))
    return failure();
  assignBuffers();
  classifyTransients();
  if (failed(formGradientRegions()) || failed(addStagingBuffers()) ||
      failed(checkArenaBounds()))
    return failure();
  allocate();
  return success();
}

FailureOr<MemoryPlan> MemoryPlan::compute(func::FuncOp func,
                                          const MemoryPlanOptions &options) {
  assert(options.alignment > 0 &&
         (options.alignment & (options.alignment - 1)) == 0 &&
         "alignment must be a power of two");
  MemoryPlan plan(func, options);
  if (failed(MemoryPlanBuilder(plan).build()))
    return failure();
  return plan;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

const PlannedBuffer *MemoryPlan::lookup(Value value) const {
  auto it = bufferOf.find(value);
  return it == bufferOf.end() ? nullptr : &buffers[it->second];
}

const PlannedBuffer *MemoryPlan::getStagingBuffer(Operation *startOp) const {
  auto it = stagingOf.find(startOp);
  return it == stagingOf.end() ? nullptr : &buffers[it->second];
}

static bool matches(const PlannedBuffer &buffer,
                    std::optional<MemorySpace> space,
                    std::optional<BufferCategory> category) {
  return (!space || buffer.space == *space) &&
         (!category || buffer.category == *category);
}

int64_t MemoryPlan::getLiveBytes(int64_t point,
                                 std::optional<MemorySpace> space,
                                 std::optional<BufferCategory> category) const {
  int64_t bytes = 0;
  for (const PlannedBuffer &buffer : buffers)
    if (matches(buffer, space, category) && buffer.start <= point &&
        point <= buffer.end)
      bytes += buffer.size;
  return bytes;
}

MemoryPlan::Peak
MemoryPlan::getMaxLive(std::optional<MemorySpace> space,
                       std::optional<BufferCategory> category) const {
  SmallVector<int64_t> delta(program.size() + 1, 0);
  for (const PlannedBuffer &buffer : buffers) {
    if (!matches(buffer, space, category))
      continue;
    delta[buffer.start] += buffer.size;
    delta[buffer.end + 1] -= buffer.size;
  }
  Peak peak;
  int64_t live = 0;
  for (int64_t point = 0, e = program.size(); point < e; ++point) {
    live += delta[point];
    if (live > peak.bytes)
      peak = {live, point};
  }
  return peak;
}

int64_t MemoryPlan::getResidentBytes(BufferCategory category,
                                     std::optional<MemorySpace> space) const {
  int64_t bytes = 0;
  for (const PlannedBuffer &buffer : buffers)
    if (buffer.resident && matches(buffer, space, category))
      bytes += buffer.size;
  return bytes;
}

SmallVector<unsigned> MemoryPlan::getLiveBuffers(MemorySpace space,
                                                 int64_t point) const {
  SmallVector<unsigned> live;
  for (auto [i, buffer] : llvm::enumerate(buffers))
    if (buffer.space == space && buffer.start <= point && point <= buffer.end)
      live.push_back(i);
  llvm::stable_sort(live, [&](unsigned a, unsigned b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].offset < buffers[b].offset;
  });
  return live;
}

//===----------------------------------------------------------------------===//
// Annotating the IR
//===----------------------------------------------------------------------===//

void MemoryPlan::annotate() const {
  MLIRContext *ctx = func.getContext();
  Builder builder(ctx);
  SmallVector<NamedAttribute> arenas;
  for (MemorySpace space : kSpaces)
    arenas.push_back(
        builder.getNamedAttr(getMemorySpaceName(space),
                             builder.getI64IntegerAttr(getArenaSize(space))));
  func->setAttr(ZeroDialect::getMemoryPlanAttrName(),
                builder.getDictionaryAttr(arenas));
  func->setAttr(
      ZeroDialect::getMemoryPlanOptionsAttrName(),
      builder.getDictionaryAttr(
          {builder.getNamedAttr("alignment",
                                builder.getI64IntegerAttr(options.alignment)),
           builder.getNamedAttr(
               "contiguous_gradients",
               builder.getBoolAttr(options.contiguousGradients))}));

  // All argument attributes at once: setArgAttr copies the attributes of
  // every argument, which is quadratic over a step's thousands of arguments.
  SmallVector<DictionaryAttr> argAttrs;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    NamedAttrList attrs(func.getArgAttrDict(i));
    if (const PlannedBuffer *buffer = lookup(arg)) {
      attrs.set(ZeroDialect::getOffsetAttrName(),
                builder.getI64IntegerAttr(buffer->offset));
      if (buffer->space == MemorySpace::Device)
        attrs.erase(ZeroDialect::getSpaceAttrName());
      else
        attrs.set(ZeroDialect::getSpaceAttrName(),
                  MemorySpaceAttr::get(ctx, buffer->space));
    }
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  func.setAllArgAttrs(argAttrs);

  for (Operation *op : program) {
    if (isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp>(op)) {
      if (const PlannedBuffer *staging = getStagingBuffer(op))
        op->setAttr(
            ZeroDialect::getStagingAttrName(),
            builder.getDenseI64ArrayAttr({staging->offset, staging->size}));
      else
        op->removeAttr(ZeroDialect::getStagingAttrName());
    }

    SmallVector<int64_t> offsets;
    SmallVector<Attribute> spaces;
    bool planned = false, offDevice = false;
    for (Value result : op->getResults()) {
      const PlannedBuffer *buffer = lookup(result);
      offsets.push_back(buffer ? buffer->offset : -1);
      MemorySpace space = buffer ? buffer->space : MemorySpace::Device;
      spaces.push_back(MemorySpaceAttr::get(ctx, space));
      planned |= buffer != nullptr;
      offDevice |= space != MemorySpace::Device;
    }
    if (!planned)
      continue;
    op->setAttr(ZeroDialect::getOffsetsAttrName(),
                builder.getDenseI64ArrayAttr(offsets));
    if (!offDevice) {
      op->removeAttr(ZeroDialect::getSpaceAttrName());
    } else if (llvm::all_equal(spaces)) {
      op->setAttr(ZeroDialect::getSpaceAttrName(), spaces.front());
    } else {
      op->setAttr(ZeroDialect::getSpaceAttrName(),
                  builder.getArrayAttr(spaces));
    }
  }
}

//===----------------------------------------------------------------------===//
// Report and budget
//===----------------------------------------------------------------------===//

/// `sum += a * b`, or clears `sum` if that overflows int64 or it already did.
static void addProduct(std::optional<int64_t> &sum, int64_t a, int64_t b = 1) {
  std::optional<int64_t> product = llvm::checkedMul(a, b);
  sum = sum && product ? llvm::checkedAdd(*sum, *product) : std::nullopt;
}

/// How many times `op` runs per step: the trip count of the micro-step loop
/// around it, if any.
static int64_t getTripCount(Operation *op) {
  // The step has at most one loop (the plan refuses a second).
  if (auto loop = op->getParentOfType<scf::ForOp>())
    if (std::optional<APInt> count = loop.getStaticTripCount())
      return count->getSExtValue();
  return 1;
}

FailureOr<MemoryPlanOptions> MemoryPlan::getRecordedOptions(func::FuncOp func) {
  MemoryPlanOptions options;
  auto recorded = func->getAttrOfType<DictionaryAttr>(
      ZeroDialect::getMemoryPlanOptionsAttrName());
  if (!recorded)
    return func.emitError("the step has no '")
           << ZeroDialect::getMemoryPlanOptionsAttrName()
           << "': run zero-plan-memory (or the pipeline) first";
  auto alignment = recorded.getAs<IntegerAttr>("alignment");
  auto contiguous = recorded.getAs<BoolAttr>("contiguous_gradients");
  if (!alignment || !contiguous || recorded.size() != 2 ||
      alignment.getInt() <= 0 || !llvm::isPowerOf2_64(alignment.getInt()))
    return func.emitError("'") << ZeroDialect::getMemoryPlanOptionsAttrName()
                               << "' must be {alignment = <a power of two>, "
                                  "contiguous_gradients = <bool>}, got "
                               << recorded;
  options.alignment = alignment.getInt();
  options.contiguousGradients = contiguous.getValue();
  return options;
}

FailureOr<CommunicationVolume>
zero::computeCommunicationVolume(func::FuncOp func, int64_t worldSize) {
  std::optional<int64_t> allGather = 0, reduceScatter = 0, allReduce = 0,
                         sent = 0, swapOut = 0, swapIn = 0;
  // A ring moves (N-1)/N of the padded bucket through every rank.
  auto addRing = [&](std::optional<int64_t> paddedBytes, int64_t ranks,
                     int64_t passes) {
    std::optional<int64_t> perRank =
        paddedBytes ? llvm::checkedMul(passes, *paddedBytes / ranks)
                    : std::nullopt;
    if (!perRank)
      sent = std::nullopt;
    else
      addProduct(sent, ranks - 1, *perRank);
  };
  auto paddedBytesOf = [](ValueRange tensors, ArrayAttr layouts) {
    std::optional<int64_t> bytes = 0;
    for (auto [tensor, attr] : llvm::zip(tensors, layouts))
      addProduct(bytes, cast<LayoutAttr>(attr).getPaddedNumel(),
                 getElementBytes(tensor));
    return bytes;
  };
  auto ranksOf = [](ArrayAttr layouts) {
    return layouts.empty() ? 1 : cast<LayoutAttr>(layouts[0]).getWorldSize();
  };
  auto addBytesOf = [](std::optional<int64_t> &sum, Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape() ||
        failed(getElementByteWidth(type.getElementType())))
      return;
    FailureOr<int64_t> size = getTensorByteSize(type);
    if (failed(size))
      sum = std::nullopt;
    else
      addProduct(sum, *size);
  };
  auto count = [&](Operation *op) {
    if (auto gather = dyn_cast<AllGatherStartOp>(op)) {
      // The full tensors of the layouts, padding dropped.
      for (auto [shard, layout] :
           llvm::zip(gather.getShards(), gather.getLayouts())) {
        auto type = cast<RankedTensorType>(shard.getType());
        FailureOr<int64_t> width = getElementByteWidth(type.getElementType());
        if (succeeded(width))
          addProduct(allGather, cast<LayoutAttr>(layout).getNumel(), *width);
      }
      addRing(paddedBytesOf(gather.getShards(), gather.getLayouts()),
              ranksOf(gather.getLayouts()), 1);
    } else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op)) {
      for (Value tensor : scatter.getTensors())
        addBytesOf(reduceScatter, tensor);
      addRing(paddedBytesOf(scatter.getTensors(), scatter.getLayouts()),
              ranksOf(scatter.getLayouts()), 1);
    } else if (auto reduce = dyn_cast<AllReduceStartOp>(op)) {
      // A reduce-scatter followed by an all-gather.
      std::optional<int64_t> bytes = 0;
      for (Value tensor : reduce.getTensors())
        addBytesOf(bytes, tensor);
      if (!bytes) {
        allReduce = std::nullopt;
        return;
      }
      addProduct(allReduce, 2, *bytes);
      // The ring cuts the bucket into N equal chunks: P rounded up to a
      // multiple of N.
      int64_t ranks = std::max<int64_t>(worldSize, 1);
      addRing(llvm::checkedMul(llvm::divideCeilSigned(*bytes, ranks), ranks),
              ranks, 2);
    } else if (auto swapOutOp = dyn_cast<SwapOutStartOp>(op)) {
      for (Value tensor : swapOutOp.getTensors())
        addBytesOf(swapOut, tensor);
    } else if (auto swapInOp = dyn_cast<SwapInStartOp>(op)) {
      for (Value tensor : swapInOp.getTensors())
        addBytesOf(swapIn, tensor);
    }
  };
  // A collective of the micro-step loop runs once per iteration.
  func.walk([&](Operation *op) {
    std::array<std::optional<int64_t> *, 6> sums{
        &allGather, &reduceScatter, &allReduce, &sent, &swapOut, &swapIn};
    std::array<std::optional<int64_t>, 6> before;
    for (auto [sum, old] : llvm::zip(sums, before))
      old = *sum;
    count(op);
    int64_t times = getTripCount(op);
    if (times == 1)
      return;
    for (auto [sum, old] : llvm::zip(sums, before)) {
      if (!*sum || !old)
        continue;
      std::optional<int64_t> repeated = *old;
      addProduct(repeated, **sum - *old, times);
      *sum = repeated;
    }
  });
  std::optional<int64_t> total = allGather;
  if (reduceScatter)
    addProduct(total, *reduceScatter);
  if (allReduce)
    addProduct(total, *allReduce);
  if (!total || !reduceScatter || !allReduce || !sent || !swapOut || !swapIn)
    return func.emitError("the communication volume of a step does not fit "
                          "int64 bytes");
  CommunicationVolume volume;
  volume.allGather = *allGather;
  volume.reduceScatter = *reduceScatter;
  volume.allReduce = *allReduce;
  volume.sent = volume.received = *sent;
  volume.swapOut = *swapOut;
  volume.swapIn = *swapIn;
  return volume;
}

/// The parameter arguments of `func` (not their optimizer states).
static SmallVector<BlockArgument> getParameterArguments(func::FuncOp func) {
  SmallVector<BlockArgument> params;
  if (func.isExternal())
    return params;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, ZeroDialect::getParamAttrName()) &&
        !func.getArgAttr(i, ZeroDialect::getStateAttrName()))
      params.push_back(arg);
  }
  return params;
}

/// Elements of the full parameter of argument `arg`, or nothing if they do
/// not fit int64.
static std::optional<int64_t> getFullNumel(func::FuncOp func,
                                           BlockArgument arg) {
  if (auto layout = func.getArgAttrOfType<LayoutAttr>(
          arg.getArgNumber(), ZeroDialect::getLayoutAttrName()))
    return layout.getNumel();
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return getCheckedNumElements(type.getShape());
}

std::optional<int64_t> zero::countParameters(func::FuncOp func) {
  std::optional<int64_t> count = 0;
  for (BlockArgument arg : getParameterArguments(func)) {
    std::optional<int64_t> numel = getFullNumel(func, arg);
    count = numel && count ? llvm::checkedAdd(*count, *numel) : std::nullopt;
  }
  return count;
}

/// Bytes of the full model's parameters in their own element types, or
/// nothing if they do not fit int64.
static std::optional<int64_t> getFullParameterBytes(func::FuncOp func) {
  std::optional<int64_t> bytes = 0;
  for (BlockArgument arg : getParameterArguments(func)) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    FailureOr<int64_t> width = getElementByteWidth(type.getElementType());
    if (failed(width))
      continue;
    std::optional<int64_t> numel = getFullNumel(func, arg);
    if (!numel)
      return std::nullopt;
    addProduct(bytes, *numel, *width);
  }
  return bytes;
}

/// Bytes of the full (unreduced) gradient of every parameter that a gradient
/// reduction names, once per parameter: what stages 0-1 hold whole until the
/// accumulation boundary. Nothing if they do not fit int64.
static std::optional<int64_t> getFullGradientBytes(func::FuncOp func) {
  llvm::StringMap<int64_t> bytesByName;
  bool overflow = false;
  func.walk([&](Operation *start) {
    if (!isa<ReduceScatterStartOp, AllReduceStartOp>(start))
      return;
    auto names =
        start->getAttrOfType<ArrayAttr>(ZeroDialect::getGradsAttrName());
    if (!names)
      return;
    for (auto [name, operand] :
         llvm::zip(names.getAsValueRange<StringAttr>(), start->getOperands())) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || !type.hasStaticShape() ||
          failed(getElementByteWidth(type.getElementType())))
        continue;
      FailureOr<int64_t> size = getTensorByteSize(type);
      overflow |= failed(size);
      int64_t &bytes = bytesByName[name];
      bytes = std::max(bytes, size.value_or(0));
    }
  });
  if (overflow)
    return std::nullopt;
  std::optional<int64_t> total = 0;
  for (const auto &entry : bytesByName)
    addProduct(total, entry.getValue());
  return total;
}

FailureOr<int64_t> zero::parseByteSize(StringRef text) {
  StringRef rest = text.trim();
  StringRef whole = rest.take_while(llvm::isDigit);
  rest = rest.drop_front(whole.size());
  StringRef fraction;
  if (rest.consume_front(".")) {
    fraction = rest.take_while(llvm::isDigit);
    rest = rest.drop_front(fraction.size());
  }
  if (whole.empty() && fraction.empty())
    return failure();
  rest = rest.ltrim();
  static const std::pair<StringRef, unsigned __int128> units[] = {
      {"", 1},
      {"b", 1},
      {"kb", 1000},
      {"mb", 1000ull * 1000},
      {"gb", 1000ull * 1000 * 1000},
      {"tb", 1000ull * 1000 * 1000 * 1000},
      {"kib", 1ull << 10},
      {"mib", 1ull << 20},
      {"gib", 1ull << 30},
      {"tib", 1ull << 40}};
  std::string unit = rest.lower();
  const auto *found = llvm::find_if(
      units, [&](const auto &entry) { return entry.first == unit; });
  if (found == std::end(units))
    return failure();
  // Exact decimal arithmetic: 1.5GB is 1500000000 bytes.
  if (whole.size() > 19 || fraction.size() > 18)
    return failure();
  unsigned __int128 integer = 0, numerator = 0, denominator = 1;
  for (char c : whole)
    integer = integer * 10 + (c - '0');
  for (char c : fraction) {
    numerator = numerator * 10 + (c - '0');
    denominator *= 10;
  }
  unsigned __int128 bytes =
      integer * found->second + numerator * found->second / denominator;
  if (bytes > static_cast<unsigned __int128>(INT64_MAX))
    return failure();
  return static_cast<int64_t>(bytes);
}

/// "512 bytes", "1.50 KiB".
static std::string formatShortByteSize(int64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes == 1)
    return "1 byte";
  if (bytes < 1024)
    return llvm::formatv("{0} bytes", bytes).str();
  double scaled = bytes;
  unsigned unit = 0;
  for (scaled /= 1024; scaled >= 1024 && unit + 1 < std::size(units); ++unit)
    scaled /= 1024;
  return llvm::formatv("{0:F2} {1}", scaled, units[unit]).str();
}

std::string zero::formatByteSize(int64_t bytes) {
  if (bytes < 1024)
    return formatShortByteSize(bytes);
  return llvm::formatv("{0} ({1} bytes)", formatShortByteSize(bytes), bytes)
      .str();
}

LogicalResult MemoryPlan::writeReport(raw_ostream &os, int64_t stage,
                                      int64_t worldSize) const {
  using Category = BufferCategory;
  // Sums of buffers fit int64 (checkArenaBounds); the full-model sizes and
  // the communication volume are checked here.
  int64_t parameters = getResidentBytes(Category::Parameter);
  // Stages 0-1 hold each full gradient until the accumulation boundary (the
  // plan counts it as a buffer in flight to its reduction); stages 2-3 keep
  // only the reduced shard. The model states count what ZeRO's formulas
  // count: 2 bytes per element of a 16-bit gradient, whole or sharded.
  std::optional<int64_t> gradients = stage <= 1
                                         ? getFullGradientBytes(func)
                                         : getResidentBytes(Category::Gradient);
  int64_t states = getResidentBytes(Category::OptimizerState);
  Peak devicePeak = getMaxLive(MemorySpace::Device);
  FailureOr<CommunicationVolume> volume =
      computeCommunicationVolume(func, worldSize);
  if (failed(volume))
    return failure();
  std::optional<int64_t> fullParameterBytes = getFullParameterBytes(func);
  std::optional<int64_t> numParameters = countParameters(func);
  std::optional<int64_t> modelStates = parameters;
  if (gradients)
    addProduct(modelStates, *gradients);
  addProduct(modelStates, states);
  if (!gradients || !fullParameterBytes || !numParameters || !modelStates)
    return func.emitError("the model's size for the memory report does not "
                          "fit int64 bytes");

  llvm::json::OStream json(os, /*IndentSize=*/2);
  auto writePoint = [&](int64_t point) {
    Operation *op = program[point];
    json.attribute("point", point);
    json.attribute("op", op->getName().getStringRef());
    json.attribute("loc", formatLocation(op->getLoc()));
  };
  json.object([&] {
    json.attribute("stage", stage);
    json.attribute("world_size", worldSize);
    json.attribute("num_parameters", *numParameters);
    json.attributeObject("per_rank_bytes", [&] {
      json.attribute("parameters", parameters);
      json.attribute("gradients", *gradients);
      json.attribute("optimizer_states", states);
      json.attribute("model_states", *modelStates);
      json.attribute("inputs", getResidentBytes(Category::Input));
      json.attribute("activations_peak",
                     getMaxLive(std::nullopt, Category::Activation).bytes);
      json.attribute("communication_buffers_peak",
                     getMaxLive(std::nullopt, Category::Communication).bytes);
      json.attribute("max_live", devicePeak.bytes);
      json.attribute("peak", getArenaSize(MemorySpace::Device));
    });
    json.attributeObject("communication_bytes_per_step", [&] {
      json.attribute("all_gather", volume->allGather);
      json.attribute("reduce_scatter", volume->reduceScatter);
      json.attribute("all_reduce", volume->allReduce);
      json.attribute("total", volume->getCollectiveTotal());
      json.attribute("sent", volume->sent);
      json.attribute("received", volume->received);
      json.attribute("full_parameter_bytes", *fullParameterBytes);
      if (*fullParameterBytes > 0)
        json.attribute("ratio_to_parameter_bytes",
                       static_cast<double>(volume->getCollectiveTotal()) /
                           *fullParameterBytes);
    });
    json.attributeObject("swap_bytes_per_step", [&] {
      json.attribute("swap_out", volume->swapOut);
      json.attribute("swap_in", volume->swapIn);
    });
    json.attributeObject("memory_spaces", [&] {
      for (MemorySpace space : kSpaces) {
        json.attributeObject(getMemorySpaceName(space), [&] {
          json.attribute("arena", getArenaSize(space));
          json.attribute("parameters",
                         getResidentBytes(Category::Parameter, space));
          json.attribute("gradients",
                         getResidentBytes(Category::Gradient, space));
          json.attribute("optimizer_states",
                         getResidentBytes(Category::OptimizerState, space));
          json.attribute("inputs", getResidentBytes(Category::Input, space));
          json.attribute("activations_peak",
                         getMaxLive(space, Category::Activation).bytes);
          json.attribute("communication_buffers_peak",
                         getMaxLive(space, Category::Communication).bytes);
          json.attribute("max_live", getMaxLive(space).bytes);
        });
      }
    });
    json.attributeObject("peak_at", [&] { writePoint(devicePeak.point); });
    json.attributeArray("live_at_peak", [&] {
      SmallVector<unsigned> live =
          getLiveBuffers(MemorySpace::Device, devicePeak.point);
      for (unsigned index : ArrayRef(live).take_front(10)) {
        const PlannedBuffer &buffer = buffers[index];
        json.object([&] {
          json.attribute("name", buffer.name);
          json.attribute("category", getBufferCategoryName(buffer.category));
          if (!buffer.role.empty())
            json.attribute("role", buffer.role);
          json.attribute("bytes", buffer.size);
          json.attribute("offset", buffer.offset);
        });
      }
    });
    json.attributeArray("contiguous_gradient_buckets", [&] {
      for (const GradientRegion &region : regions) {
        json.object([&] {
          json.attribute("op", describeOp(region.startOp));
          json.attribute("space", getMemorySpaceName(region.space));
          json.attribute("offset", region.offset);
          json.attribute("bytes", region.size);
          json.attribute("first_point", region.start);
          json.attribute("last_point", region.end);
        });
      }
    });
    json.attributeObject("options", [&] {
      json.attribute("contiguous_gradients", options.contiguousGradients);
      json.attribute("alignment", options.alignment);
    });
  });
  os << "\n";
  return success();
}

LogicalResult MemoryPlan::checkDeviceBudget(int64_t budget) const {
  int64_t needed = getArenaSize(MemorySpace::Device);
  if (needed <= budget)
    return success();
  Peak peak = getMaxLive(MemorySpace::Device);
  Operation *peakOp = program[peak.point];

  // The category with the most bytes live at the peak.
  int64_t byCategory[kNumBufferCategories] = {};
  SmallVector<unsigned> live = getLiveBuffers(MemorySpace::Device, peak.point);
  for (unsigned index : live)
    byCategory[static_cast<unsigned>(buffers[index].category)] +=
        buffers[index].size;
  unsigned dominant = 0;
  for (unsigned c = 1; c < kNumBufferCategories; ++c)
    if (byCategory[c] > byCategory[dominant])
      dominant = c;

  std::string contributors;
  llvm::raw_string_ostream list(contributors);
  llvm::interleaveComma(ArrayRef(live).take_front(5), list, [&](unsigned i) {
    list << buffers[i].name << " " << formatShortByteSize(buffers[i].size);
  });
  if (live.size() > 5)
    list << ", and " << live.size() - 5 << " more";

  // Reported at the peak op: the step's signature, the function's own line,
  // can be tens of kilobytes long.
  InFlightDiagnostic diag =
      peakOp->emitError()
      << "the plan needs " << formatByteSize(needed) << " of device memory, "
      << formatByteSize(needed - budget) << " more than the budget of "
      << formatByteSize(budget) << "; the peak (at '" << peakOp->getName()
      << "' " << formatLocation(peakOp->getLoc()) << ") is dominated by "
      << getBufferCategoryName(static_cast<BufferCategory>(dominant)) << " ("
      << formatShortByteSize(byCategory[dominant]) << " of "
      << formatShortByteSize(peak.bytes) << " live): " << contributors;
  diag.attachNote() << "in the training step '@" << func.getSymName() << "'";
  return failure();
}
