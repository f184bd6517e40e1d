//===- MemoryPlan.cpp - static memory plan of a rank step -----------------===//
//
// Builds the plan in four steps:
//   1. liveness (StepLiveness.h): every tracked tensor is live from its
//      definition to its last use, where a use by a start op lasts until the
//      wait on its handle;
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

std::string zero::formatLocation(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn())
        .str();
  if (auto name = loc->findInstanceOf<NameLoc>())
    return name.getName().str();
  return "unknown";
}

std::string zero::describeOp(Operation *op) {
  return (op->getName().getStringRef() + " at " + formatLocation(op->getLoc()))
      .str();
}

/// Bytes of the flat buffer of a collective start (docs/ScheduleFormat.md,
/// "Collectives"; for quantized collectives, what their packing needs), or
/// nullopt when the runtime can hand its single, unpadded
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
  // qwZ: every rank's packed block (int8 values and scales) lies in the
  // staging buffer too.
  if (auto gather = dyn_cast<AllGatherStartOp>(op))
    if (gather.getQuantizeBlockSize()) {
      std::optional<int64_t> packed = gather.getQuantizedBytesPerRank();
      packed = packed ? llvm::checkedMul(
                            *packed, cast<LayoutAttr>(layouts[0]).getWorldSize())
                      : std::nullopt;
      if (!packed)
        return failure();
      return std::optional<int64_t>(std::max(*bytes, *packed));
    }
  // qgZ: the f32 partial sums and the packed chunks of the all-to-alls,
  // which need no flat bucket.
  if (auto scatter = dyn_cast<ReduceScatterStartOp>(op))
    if (scatter.getQuantizeBlockSize()) {
      std::optional<int64_t> staging = scatter.getQuantizedStagingBytes();
      if (!staging)
        return failure();
      return staging;
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
  explicit MemoryPlanBuilder(MemoryPlan &plan)
      : plan(plan), liveness(plan.liveness), values(liveness.getValues()),
        loop(liveness.getLoop()) {}

  LogicalResult build();

private:
  using ValueInfo = StepLiveness::ValueLiveness;

  void assignBuffers();
  void classifyTransients();
  LogicalResult formGradientRegions();
  LogicalResult addStagingBuffers();
  LogicalResult checkArenaBounds();
  void allocate();
  /// Places the buffers of `space`; returns the arena's size.
  int64_t allocate(MemorySpace space, Placement placement);

  unsigned addBuffer(BufferCategory category, std::string name, Value root,
                     Operation *op, Location loc, bool resident);
  void assign(Value root, unsigned buffer);
  /// The gradient name of result `index` of `wait`, if it waits on a
  /// gradient reduction.
  std::optional<StringRef> getGradientName(WaitOp wait, unsigned index);

  MemoryPlan &plan;
  const StepLiveness &liveness;
  const llvm::MapVector<Value, ValueInfo> &values;
  /// The micro-step loop, if any: its body's ops follow the loop op in the
  /// program, and its terminator is the end of every iteration.
  scf::ForOp loop;
  llvm::DenseMap<Value, unsigned> bufferOfRoot;
  /// Per buffer: the last use of the values assigned so far.
  SmallVector<int64_t> valueEnd;
};
} // namespace zero
} // namespace mlir

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
  buffer.end = liveness.getLastPoint();
  buffer.op = op;
  plan.buffers.push_back(std::move(buffer));
  valueEnd.push_back(-1);
  return plan.buffers.size() - 1;
}

void MemoryPlanBuilder::assign(Value root, unsigned buffer) {
  bufferOfRoot[root] = buffer;
  valueEnd[buffer] = std::max(valueEnd[buffer], liveness.getInterval(root).end);
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
  for (BlockArgument arg : func.getArguments()) {
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
  Operation *terminator = func.front().getTerminator();
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
  for (Operation *op : plan.getProgram()) {
    int64_t point = liveness.getPoint(op);
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
      StepLiveness::Interval interval = liveness.getInterval(result);

      // An updated resident may be written into its argument's buffer once
      // the old value is dead (or dies at this op, which updates it).
      auto tied = tiedRoots.find(result);
      if (tied != tiedRoots.end()) {
        unsigned buffer = tied->second;
        const PlannedBuffer &resident = plan.buffers[buffer];
        if (resident.space == info.space && info.size <= resident.size &&
            interval.start >= valueEnd[buffer]) {
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
              interval.start > valueEnd[entry->second]) {
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
    // hpZ's secondary partition: a rank's shard of a gathered parameter
    // that later gathers read.
    if (auto shard = dyn_cast_or_null<LocalShardOp>(value.getDefiningOp());
        shard && info.root == value &&
        llvm::any_of(value.getUsers(), [](Operation *user) {
          return isa<AllGatherStartOp>(user);
        })) {
      buffer.category = BufferCategory::Communication;
      buffer.role = "secondary";
      // Named after the parameter whose gather it cuts.
      if (auto wait = shard.getFull().getDefiningOp<WaitOp>())
        if (Operation *start = wait.getHandle().getDefiningOp()) {
          unsigned index = cast<OpResult>(shard.getFull()).getResultNumber();
          if (const PlannedBuffer *from =
                  index < start->getNumOperands()
                      ? plan.lookup(start->getOperand(index))
                      : nullptr;
              from && from->resident)
            buffer.name = "secondary " + from->name;
        }
      continue;
    }
    bool inFlight = llvm::any_of(value.getUsers(), [&](Operation *user) {
      return isa<AsyncStartOpInterface>(liveness.getProgramOp(*user));
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
  for (Operation *op : plan.getProgram()) {
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
  for (Operation *op : plan.getProgram()) {
    FailureOr<std::optional<int64_t>> staging = getStagingBytes(op);
    if (failed(staging))
      return op->emitError(
          "the staging buffer of this collective needs more than int64 bytes");
    std::optional<int64_t> bytes = *staging;
    if (!bytes)
      continue;
    // Reserved while the collective runs: from the start to its wait.
    int64_t point = liveness.getPoint(op), end = point;
    if (WaitOp wait = cast<AsyncStartOpInterface>(op).getWait())
      if (Operation *waitPoint = liveness.getProgramOp(*wait))
        end = std::max(end, liveness.getPoint(waitPoint));
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
  std::optional<int64_t> bound = std::size(kMemorySpaces) * alignment;
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
  MemoryPlanOptions &options = plan.options;
  for (MemorySpace space : kMemorySpaces) {
    bool recorded = llvm::is_contained(options.largestFirst, space);
    int64_t arena = allocate(space, recorded ? Placement::LargestFirst
                                             : Placement::InProgramOrder);
    // Over the budget in program order: largest first may leave fewer holes.
    std::optional<int64_t> budget =
        options.budgets[static_cast<unsigned>(space)];
    if (recorded || !budget || arena <= *budget)
      continue;
    if (allocate(space, Placement::LargestFirst) < arena)
      options.largestFirst.push_back(space);
    else
      allocate(space, Placement::InProgramOrder);
  }
}

int64_t MemoryPlanBuilder::allocate(MemorySpace space, Placement placement) {
  int64_t alignment = plan.options.alignment;
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
      intervals, alignment, alignTo(residentEnd, alignment), placement);

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
  return arena;
}

LogicalResult MemoryPlanBuilder::build() {
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
  FailureOr<StepLiveness> liveness = StepLiveness::compute(func);
  if (failed(liveness))
    return failure();
  MemoryPlan plan(std::move(*liveness), options);
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

SmallVector<int64_t>
MemoryPlan::getLiveBytesByPoint(std::optional<MemorySpace> space,
                                std::optional<BufferCategory> category) const {
  SmallVector<int64_t> live(getNumPoints() + 1, 0);
  for (const PlannedBuffer &buffer : buffers) {
    if (!matches(buffer, space, category))
      continue;
    live[buffer.start] += buffer.size;
    live[buffer.end + 1] -= buffer.size;
  }
  // The differences summed up in place.
  for (int64_t point = 1, e = getNumPoints(); point < e; ++point)
    live[point] += live[point - 1];
  live.pop_back();
  return live;
}

MemoryPlan::Peak
MemoryPlan::getMaxLive(std::optional<MemorySpace> space,
                       std::optional<BufferCategory> category) const {
  Peak peak;
  for (auto [point, live] :
       llvm::enumerate(getLiveBytesByPoint(space, category)))
    if (live > peak.bytes)
      peak = {live, static_cast<int64_t>(point)};
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

int64_t MemoryPlan::getRoleBytes(StringRef role) const {
  int64_t bytes = 0;
  for (const PlannedBuffer &buffer : buffers)
    if (buffer.role == role)
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

/// The options as zero-plan-memory records them on the step.
static SmallVector<NamedAttribute>
getRecordedOptionEntries(Builder &builder, const MemoryPlanOptions &options) {
  SmallVector<NamedAttribute> entries = {
      builder.getNamedAttr("alignment",
                           builder.getI64IntegerAttr(options.alignment)),
      builder.getNamedAttr("contiguous_gradients",
                           builder.getBoolAttr(options.contiguousGradients))};
  if (!options.largestFirst.empty()) {
    SmallVector<Attribute> spaces;
    for (MemorySpace space : options.largestFirst)
      spaces.push_back(builder.getStringAttr(getMemorySpaceName(space)));
    entries.push_back(
        builder.getNamedAttr("largest_first", builder.getArrayAttr(spaces)));
  }
  return entries;
}

void MemoryPlan::annotate() const {
  MLIRContext *ctx = func.getContext();
  Builder builder(ctx);
  SmallVector<NamedAttribute> arenas;
  for (MemorySpace space : kMemorySpaces)
    arenas.push_back(
        builder.getNamedAttr(getMemorySpaceName(space),
                             builder.getI64IntegerAttr(getArenaSize(space))));
  func->setAttr(ZeroDialect::getMemoryPlanAttrName(),
                builder.getDictionaryAttr(arenas));
  func->setAttr(
      ZeroDialect::getMemoryPlanOptionsAttrName(),
      builder.getDictionaryAttr(getRecordedOptionEntries(builder, options)));

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

  for (Operation *op : getProgram()) {
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
  auto largestFirst = recorded.getAs<ArrayAttr>("largest_first");
  bool valid = alignment && contiguous &&
               recorded.size() == 2u + (largestFirst != nullptr) &&
               alignment.getInt() > 0 &&
               llvm::isPowerOf2_64(alignment.getInt());
  if (valid && largestFirst) {
    for (Attribute entry : largestFirst) {
      auto name = dyn_cast<StringAttr>(entry);
      std::optional<MemorySpace> space =
          name ? symbolizeMemorySpace(name.getValue()) : std::nullopt;
      valid &= space.has_value();
      if (space)
        options.largestFirst.push_back(*space);
    }
  }
  if (!valid)
    return func.emitError("'") << ZeroDialect::getMemoryPlanOptionsAttrName()
                               << "' must be {alignment = <a power of two>, "
                                  "contiguous_gradients = <bool>[, "
                                  "largest_first = [<memory space>, ...]]}, "
                                  "got "
                               << recorded;
  options.alignment = alignment.getInt();
  options.contiguousGradients = contiguous.getValue();
  return options;
}
