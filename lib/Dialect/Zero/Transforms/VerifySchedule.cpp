//===- VerifySchedule.cpp - prove a rank's schedule safe ------------------===//
//
// Checks the rank step that the ZeRO pipeline produced (docs/Passes.md, "The
// rank step") for schedules that would misbehave at run time: a tensor used
// after its release or swap-out, released twice, released while a collective
// or swap still reads it, a release of a tensor the rank holds for the whole
// step, a wait that does not run exactly once per start, and a collective
// whose execution depends on a value that may differ between ranks. The IR is
// never changed; every violation is reported, then the pass fails.
//
// Program order is the order of the function body. An op nested in a region
// takes its parent's position; an op may run "after" another if it comes
// later in the same block, is reachable from it in a CFG region, or shares
// with it a region that may run repeatedly (a loop body, or the region of an
// op the verifier cannot reason about) that does not also define the tensor in
// question (a loop body that defines the tensor makes a fresh one on every
// iteration). docs/Passes.md (`--zero-verify-schedule`) lists the rules.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROVERIFYSCHEDULEPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

//===----------------------------------------------------------------------===//
// Naming
//===----------------------------------------------------------------------===//

/// The kind of transfer a start op begins, as the diagnostics name it.
StringRef getTransferName(Operation *start) {
  return llvm::TypeSwitch<Operation *, StringRef>(start)
      .Case<AllGatherStartOp>([](auto) { return "all-gather"; })
      .Case<ReduceScatterStartOp>([](auto) { return "reduce-scatter"; })
      .Case<AllReduceStartOp>([](auto) { return "all-reduce"; })
      .Case<SwapOutStartOp>([](auto) { return "swap-out"; })
      .Case<SwapInStartOp>([](auto) { return "swap-in"; })
      .Default([](auto) { return "transfer"; });
}

/// Collectives must run on every rank in the same order; swaps are local.
bool isCollective(Operation *op) {
  return isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp>(op);
}

/// The ops that use `value`, each once, in use-list order.
llvm::SetVector<Operation *> getUsers(Value value) {
  llvm::SetVector<Operation *> users;
  users.insert_range(value.getUsers());
  return users;
}

/// The argument of the training step, if `value` is one.
std::optional<std::pair<func::FuncOp, unsigned>> getStepArgument(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return std::nullopt;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getBody().front())
    return std::nullopt;
  return std::make_pair(func, arg.getArgNumber());
}

/// Names an argument of the training step by its role in the contract.
std::string describeArgument(func::FuncOp func, unsigned index) {
  auto str = [&](StringRef name) {
    auto attr = func.getArgAttrOfType<StringAttr>(index, name);
    return attr ? attr.getValue() : StringRef();
  };
  StringRef data = str(ZeroDialect::getDataAttrName());
  StringRef param = str(ZeroDialect::getParamAttrName());
  StringRef state = str(ZeroDialect::getStateAttrName());
  if (!data.empty())
    return ("data argument '" + data + "'").str();
  if (!state.empty())
    return ("optimizer state '" + state + "' of '" + param + "'").str();
  if (!param.empty())
    return ("parameter '" + param + "'").str();
  if (func.getArgAttr(index, ZeroDialect::getStepAttrName()))
    return "the step counter";
  return "argument #" + std::to_string(index);
}

/// Names a tensor for the lifetime diagnostics: by where it comes from.
std::string describeTensor(Value value) {
  if (auto arg = getStepArgument(value))
    return describeArgument(arg->first, arg->second);
  if (auto arg = dyn_cast<BlockArgument>(value))
    return ("a block argument of '" +
            arg.getOwner()->getParentOp()->getName().getStringRef() + "'")
        .str();
  auto result = cast<OpResult>(value);
  Operation *def = result.getOwner();
  if (auto wait = dyn_cast<WaitOp>(def)) {
    Operation *start = wait.getHandle().getDefiningOp();
    if (auto gather = dyn_cast_or_null<AllGatherStartOp>(start)) {
      if (auto arg =
              getStepArgument(gather.getShards()[result.getResultNumber()]))
        if (auto name = arg->first.getArgAttrOfType<StringAttr>(
                arg->second, ZeroDialect::getParamAttrName()))
          return ("gathered parameter '" + name.getValue() + "'").str();
      return "a gathered tensor";
    }
    if (start)
      return ("the result of a " + getTransferName(start)).str();
  }
  if (def->getNumResults() == 1)
    return ("the result of '" + def->getName().getStringRef() + "'").str();
  return ("result #" + Twine(result.getResultNumber()) + " of '" +
          def->getName().getStringRef() + "'")
      .str();
}

//===----------------------------------------------------------------------===//
// Program order
//===----------------------------------------------------------------------===//

/// Whether `to` is reachable from `from` through the region successors of
/// `op` (at least one edge).
bool isRegionReachable(RegionBranchOpInterface op, Region *from, Region *to) {
  SmallVector<Region *> worklist{from};
  llvm::SmallPtrSet<Region *, 4> visited;
  while (!worklist.empty()) {
    SmallVector<RegionSuccessor> successors;
    op.getSuccessorRegions(*worklist.pop_back_val(), successors);
    for (RegionSuccessor successor : successors) {
      Region *region = successor.getSuccessor();
      if (!region)
        continue;
      if (region == to)
        return true;
      if (visited.insert(region).second)
        worklist.push_back(region);
    }
  }
  return false;
}

/// Whether `to` is reachable from `from` through CFG edges (at least one),
/// without entering `avoid`.
bool isBlockReachable(Block *from, Block *to, Block *avoid) {
  SmallVector<Block *> worklist{from};
  llvm::SmallPtrSet<Block *, 8> visited;
  while (!worklist.empty()) {
    for (Block *successor : worklist.pop_back_val()->getSuccessors()) {
      if (successor == avoid)
        continue;
      if (successor == to)
        return true;
      if (visited.insert(successor).second)
        worklist.push_back(successor);
    }
  }
  return false;
}

/// Whether the ops of `region` may run several times per run of the step:
/// a loop body, a CFG cycle, or the region of an op we cannot reason about.
bool isRepeating(Region *region) {
  Operation *parent = region->getParentOp();
  if (auto branch = dyn_cast<RegionBranchOpInterface>(parent)) {
    if (branch.isRepetitiveRegion(region->getRegionNumber()))
      return true;
  } else if (!isa<FunctionOpInterface>(parent)) {
    return true;
  }
  if (region->hasOneBlock())
    return false;
  return llvm::any_of(region->getBlocks(), [](Block &block) {
    return isBlockReachable(&block, &block, nullptr);
  });
}

/// The innermost op whose region holds `op`, may run repeatedly, and lies
/// inside the region that defines `value`; null if none.
Operation *getRepeatingAncestor(Operation *op, Value value) {
  Region *defRegion = value.getParentRegion();
  for (Region *region = op->getParentRegion(); region && region != defRegion;
       region = region->getParentRegion()) {
    if (isRepeating(region))
      return region->getParentOp();
    if (isa<FunctionOpInterface>(region->getParentOp()))
      break;
  }
  return nullptr;
}

/// Whether `later` may run after `first` while `value` (which dominates both)
/// still holds the same instance. Sound, not exact: it may answer yes for
/// paths that never run.
bool mayRunAfter(Operation *first, Operation *later, Value value) {
  // The innermost region that holds both.
  llvm::SmallPtrSet<Region *, 8> firstRegions;
  for (Region *r = first->getParentRegion(); r; r = r->getParentRegion())
    firstRegions.insert(r);
  Region *common = later->getParentRegion();
  while (common && !firstRegions.contains(common))
    common = common->getParentRegion();
  if (!common)
    return true;

  // A repeated region that does not define `value` runs both again.
  Region *defRegion = value.getParentRegion();
  for (Region *r = common; r && r != defRegion; r = r->getParentRegion()) {
    if (isRepeating(r))
      return true;
    if (isa<FunctionOpInterface>(r->getParentOp()))
      break;
  }

  Operation *firstAncestor = common->findAncestorOpInRegion(*first);
  Operation *laterAncestor = common->findAncestorOpInRegion(*later);
  if (firstAncestor == laterAncestor && first != later) {
    // `later` holds `first` in a region: its operands are read before.
    if (laterAncestor == later)
      return false;
    if (firstAncestor == first)
      return true;
    // Both in different regions of one op: may control pass from one to the
    // other?
    auto regionOf = [&](Operation *op) {
      Region *r = op->getParentRegion();
      while (r->getParentOp() != firstAncestor)
        r = r->getParentRegion();
      return r;
    };
    auto branch = dyn_cast<RegionBranchOpInterface>(firstAncestor);
    return !branch ||
           isRegionReachable(branch, regionOf(first), regionOf(later));
  }

  Block *block = firstAncestor->getBlock();
  if (block == laterAncestor->getBlock() && first != later &&
      firstAncestor->isBeforeInBlock(laterAncestor))
    return true;
  // Otherwise only a CFG path can lead there; entering the block that
  // defines `value` makes a new instance.
  Block *defBlock = common == defRegion ? value.getParentBlock() : nullptr;
  return isBlockReachable(block, laterAncestor->getBlock(), defBlock);
}

//===----------------------------------------------------------------------===//
// Uniformity
//===----------------------------------------------------------------------===//

/// Why a value may differ between ranks: the root it derives from.
struct Origin {
  std::string what;
  Location loc;
};

/// Which values of the step may differ between ranks. Absent values are
/// uniform (the same on every rank). A forward analysis to a fixpoint: a value
/// only ever goes from uniform to non-uniform.
class Uniformity {
public:
  explicit Uniformity(func::FuncOp func) {
    seedArguments(func);
    do {
      changed = false;
      visitRegion(func.getBody());
    } while (changed);
  }

  /// Why `value` may differ between ranks, or null if it is uniform.
  const Origin *lookup(Value value) const {
    auto it = origins.find(value);
    return it == origins.end() ? nullptr : &it->second;
  }

  /// The operands of `op` (or of a terminator in one of its regions) that
  /// decide how often and which of its regions run, with a label each.
  static void
  getControlOperands(Operation *op,
                     SmallVectorImpl<std::pair<OpOperand *, std::string>> &out);

private:
  void set(Value value, std::optional<Origin> origin) {
    if (origin && origins.try_emplace(value, std::move(*origin)).second)
      changed = true;
  }
  std::optional<Origin> get(Value value) const {
    if (const Origin *origin = lookup(value))
      return *origin;
    return std::nullopt;
  }
  std::optional<Origin> join(ValueRange values) const {
    for (Value value : values)
      if (const Origin *origin = lookup(value))
        return *origin;
    return std::nullopt;
  }

  void seedArguments(func::FuncOp func);
  void visitRegion(Region &region);
  void visitOp(Operation *op);
  void visitRegionBranchOp(RegionBranchOpInterface op);

  /// Everything the results of a region op could depend on: its operands,
  /// the operands of every terminator in its regions.
  std::optional<Origin> joinAll(Operation *op) const {
    if (auto origin = join(op->getOperands()))
      return origin;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>())
          if (auto origin = join(block.back().getOperands()))
            return origin;
    return std::nullopt;
  }

  DenseMap<Value, Origin> origins;
  bool changed = false;
};

void Uniformity::seedArguments(func::FuncOp func) {
  Block &entry = func.getBody().front();
  // Parameters the rank holds whole are replicas, the same on every rank.
  llvm::StringMap<ArrayRef<int64_t>> fullShapes;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto name =
        func.getArgAttrOfType<StringAttr>(i, ZeroDialect::getParamAttrName());
    auto layout =
        func.getArgAttrOfType<LayoutAttr>(i, ZeroDialect::getLayoutAttrName());
    if (name && layout && !func.getArgAttr(i, ZeroDialect::getStateAttrName()))
      fullShapes[name.getValue()] = layout.getShape();
  }
  for (BlockArgument arg : entry.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, ZeroDialect::getStepAttrName()))
      continue;
    auto name =
        func.getArgAttrOfType<StringAttr>(i, ZeroDialect::getParamAttrName());
    std::string what = describeArgument(func, i);
    if (name && !func.getArgAttr(i, ZeroDialect::getDataAttrName())) {
      auto it = fullShapes.find(name.getValue());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (it != fullShapes.end()) {
        // The full shape: a parameter (or its state) replicated on all ranks.
        if (type && type.getShape() == it->second)
          continue;
        what = "the rank's shard of " + what;
      }
    }
    set(arg, Origin{what, arg.getLoc()});
  }
}

void Uniformity::visitRegion(Region &region) {
  // Several blocks: which of them run, and with what, depends on every
  // branch.
  std::optional<Origin> cfgOrigin;
  if (!region.hasOneBlock())
    for (Block &block : region)
      if (!block.empty() && !cfgOrigin)
        cfgOrigin = join(block.back().getOperands());
  for (Block &block : region) {
    if (!block.isEntryBlock())
      for (BlockArgument arg : block.getArguments())
        set(arg, cfgOrigin);
    for (Operation &op : block)
      visitOp(&op);
  }
}

void Uniformity::getControlOperands(
    Operation *op, SmallVectorImpl<std::pair<OpOperand *, std::string>> &out) {
  auto branch = dyn_cast<RegionBranchOpInterface>(op);
  if (!branch)
    return;
  // Operands forwarded to a region or to the results carry data, not control.
  llvm::DenseSet<OpOperand *> forwarded;
  SmallVector<RegionSuccessor> successors;
  branch.getSuccessorRegions(RegionBranchPoint::parent(), successors);
  for (RegionSuccessor successor : successors) {
    OperandRange operands = branch.getEntrySuccessorOperands(successor);
    if (operands.empty())
      continue;
    for (OpOperand &operand : op->getOpOperands())
      if (operand.getOperandNumber() >= operands.getBeginOperandIndex() &&
          operand.getOperandNumber() <
              operands.getBeginOperandIndex() + operands.size())
        forwarded.insert(&operand);
  }
  auto loop = dyn_cast<LoopLikeOpInterface>(op);
  auto label = [&](OpOperand &operand) -> std::string {
    if (loop) {
      auto matches = [&](std::optional<SmallVector<OpFoldResult>> bounds) {
        return bounds && llvm::any_of(*bounds, [&](OpFoldResult bound) {
                 return dyn_cast<Value>(bound) == operand.get();
               });
      };
      if (matches(loop.getLoopLowerBounds()))
        return "lower bound";
      if (matches(loop.getLoopUpperBounds()))
        return "upper bound";
      if (matches(loop.getLoopSteps()))
        return "step";
    }
    if (operand.get().getType().isInteger(1))
      return "condition";
    return "operand #" + std::to_string(operand.getOperandNumber());
  };
  for (OpOperand &operand : op->getOpOperands())
    if (!forwarded.contains(&operand))
      out.emplace_back(&operand, label(operand));

  // Likewise for the terminators that branch between regions (scf.condition).
  for (Region &region : op->getRegions()) {
    for (Block &block : region) {
      auto terminator = dyn_cast_or_null<RegionBranchTerminatorOpInterface>(
          block.empty() ? nullptr : &block.back());
      if (!terminator)
        continue;
      llvm::DenseSet<OpOperand *> forwardedHere;
      SmallVector<RegionSuccessor> successors;
      branch.getSuccessorRegions(RegionBranchPoint(terminator), successors);
      for (RegionSuccessor successor : successors) {
        OperandRange operands = terminator.getSuccessorOperands(successor);
        if (operands.empty())
          continue;
        for (OpOperand &operand : terminator->getOpOperands())
          if (operand.getOperandNumber() >= operands.getBeginOperandIndex() &&
              operand.getOperandNumber() <
                  operands.getBeginOperandIndex() + operands.size())
            forwardedHere.insert(&operand);
      }
      for (OpOperand &operand : terminator->getOpOperands())
        if (!forwardedHere.contains(&operand))
          out.emplace_back(&operand,
                           "'" + terminator->getName().getStringRef().str() +
                               "' " + label(operand));
    }
  }
}

void Uniformity::visitRegionBranchOp(RegionBranchOpInterface op) {
  SmallVector<std::pair<OpOperand *, std::string>> control;
  getControlOperands(op, control);
  std::optional<Origin> controlOrigin;
  for (auto &[operand, label] : control)
    if ((controlOrigin = get(operand->get())))
      break;
  // In a CFG region, every branch decides what flows out.
  for (Region &region : op->getRegions())
    if (!controlOrigin && !region.hasOneBlock())
      for (Block &block : region)
        if (!controlOrigin && !block.empty())
          controlOrigin = join(block.back().getOperands());

  // Each region input and result: the control, joined with every value that
  // flows into it.
  DenseMap<Value, SmallVector<Value>> inputs;
  auto addEdges = [&](OperandRange operands, RegionSuccessor successor) {
    for (auto [operand, input] :
         llvm::zip(operands, successor.getSuccessorInputs()))
      inputs[input].push_back(operand);
  };
  SmallVector<RegionSuccessor> successors;
  op.getSuccessorRegions(RegionBranchPoint::parent(), successors);
  for (RegionSuccessor successor : successors)
    addEdges(op.getEntrySuccessorOperands(successor), successor);
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (auto terminator = dyn_cast_or_null<RegionBranchTerminatorOpInterface>(
              block.empty() ? nullptr : &block.back())) {
        successors.clear();
        op.getSuccessorRegions(RegionBranchPoint(terminator), successors);
        for (RegionSuccessor successor : successors)
          addEdges(terminator.getSuccessorOperands(successor), successor);
      }
  auto flowOrigin = [&](Value value) -> std::optional<Origin> {
    if (controlOrigin)
      return controlOrigin;
    auto it = inputs.find(value);
    if (it != inputs.end())
      return join(it->second);
    return joinAll(op);
  };

  // Induction variables depend on the bounds only.
  llvm::SmallPtrSet<Value, 4> inductionVars;
  if (auto loop = dyn_cast<LoopLikeOpInterface>(op.getOperation()))
    if (auto ivs = loop.getLoopInductionVars())
      inductionVars.insert(ivs->begin(), ivs->end());

  for (Region &region : op->getRegions()) {
    if (region.empty())
      continue;
    for (BlockArgument arg : region.front().getArguments()) {
      if (inductionVars.contains(arg)) {
        if (controlOrigin)
          set(arg, controlOrigin);
        continue;
      }
      set(arg, flowOrigin(arg));
    }
    visitRegion(region);
  }
  for (Value result : op->getResults())
    set(result, flowOrigin(result));
}

void Uniformity::visitOp(Operation *op) {
  if (auto wait = dyn_cast<WaitOp>(op)) {
    Operation *start = wait.getHandle().getDefiningOp();
    // Every rank receives the same gathered or reduced tensors.
    if (isa_and_nonnull<AllGatherStartOp, AllReduceStartOp>(start))
      return;
    // A swap moves a tensor, so it keeps its origin.
    if (isa_and_nonnull<SwapOutStartOp, SwapInStartOp>(start)) {
      for (auto [result, operand] :
           llvm::zip(wait.getResults(), start->getOperands()))
        set(result, get(operand));
      return;
    }
    for (Value result : wait.getResults())
      set(result, Origin{"the rank's shard of a reduce-scatter",
                         start ? start->getLoc() : op->getLoc()});
    return;
  }
  if (isa<LocalShardOp>(op)) {
    set(op->getResult(0),
        Origin{"the rank's shard from 'zero.local_shard'", op->getLoc()});
    return;
  }
  if (auto branch = dyn_cast<RegionBranchOpInterface>(op)) {
    visitRegionBranchOp(branch);
    return;
  }
  // Pure computation on uniform values is uniform; anything that reads state
  // we do not model may differ.
  bool pure = isMemoryEffectFree(op);
  for (Region &region : op->getRegions()) {
    std::optional<Origin> argOrigin =
        pure ? join(op->getOperands())
             : Origin{("a block argument of '" + op->getName().getStringRef() +
                       "'")
                          .str(),
                      op->getLoc()};
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        set(arg, argOrigin);
    visitRegion(region);
  }
  std::optional<Origin> origin =
      pure ? joinAll(op)
           : Origin{
                 ("the result of '" + op->getName().getStringRef() + "'").str(),
                 op->getLoc()};
  for (Value result : op->getResults())
    set(result, origin);
}

//===----------------------------------------------------------------------===//
// The checks
//===----------------------------------------------------------------------===//

class ScheduleVerifier {
public:
  explicit ScheduleVerifier(func::FuncOp func) : func(func), uniformity(func) {}

  LogicalResult verify() {
    SmallVector<ReleaseOp> releases;
    SmallVector<Operation *> starts, calls;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      unsigned index = order.size();
      order[op] = index;
      if (auto release = dyn_cast<ReleaseOp>(op))
        releases.push_back(release);
      else if (isa<AsyncStartOpInterface>(op))
        starts.push_back(op);
      else if (isa<CallOpInterface>(op))
        calls.push_back(op);
    });
    for (ReleaseOp release : releases)
      checkRelease(release);
    for (Operation *start : starts)
      checkStart(start);
    for (Operation *call : calls)
      if (mayStartCollectives(call))
        checkUniformExecution(call, "call to a function that starts "
                                    "collectives");
    return success(!hasErrors);
  }

private:
  InFlightDiagnostic error(Operation *op) {
    hasErrors = true;
    return op->emitError();
  }

  void checkRelease(ReleaseOp release);
  void checkStart(Operation *start);
  void checkUniformExecution(Operation *op, const Twine &what);
  bool mayStartCollectives(Operation *op);

  func::FuncOp func;
  Uniformity uniformity;
  DenseMap<Operation *, unsigned> order;
  DenseMap<Operation *, bool> startsCollectives;
  bool hasErrors = false;
};

void ScheduleVerifier::checkRelease(ReleaseOp release) {
  for (auto [index, tensor] : llvm::enumerate(release.getTensors())) {
    std::string name = describeTensor(tensor);

    // Only what the rank gathered or swapped in for a while can be released.
    auto wait = tensor.getDefiningOp<WaitOp>();
    Operation *source = wait ? wait.getHandle().getDefiningOp() : nullptr;
    if (!isa_and_nonnull<AllGatherStartOp, SwapInStartOp>(source)) {
      InFlightDiagnostic diag = error(release);
      diag << "cannot release " << name
           << ": the rank holds it for the whole step; only the results of "
              "an all-gather or a swap-in can be released";
      diag.attachNote(tensor.getLoc()) << "defined here";
    }

    // Released twice: by one op, by another op, or by one op in a loop.
    if (llvm::is_contained(release.getTensors().take_front(index), tensor))
      error(release) << name << " is released twice by one 'zero.release'";
    for (Operation *user : getUsers(tensor)) {
      auto other = dyn_cast<ReleaseOp>(user);
      if (!other || other == release || !mayRunAfter(release, other, tensor))
        continue;
      // Each pair once, at the second release in program order.
      if (mayRunAfter(other, release, tensor) && order[other] < order[release])
        continue;
      InFlightDiagnostic diag = error(other);
      diag << name << " is released twice";
      diag.attachNote(release.getLoc()) << "first released here";
    }
    if (Operation *loop = getRepeatingAncestor(release, tensor)) {
      InFlightDiagnostic diag = error(release);
      diag << name << " is released again each time '" << loop->getName()
           << "' repeats its region, but is defined outside it";
      diag.attachNote(loop->getLoc()) << "the repeating op";
    }

    // Use after release.
    for (Operation *user : getUsers(tensor)) {
      if (isa<ReleaseOp>(user) || !mayRunAfter(release, user, tensor))
        continue;
      InFlightDiagnostic diag = error(user);
      diag << "'" << user->getName() << "' uses " << name
           << " after its release";
      diag.attachNote(release.getLoc()) << "released here";
    }

    // Released while a collective or swap still reads it.
    for (Operation *reader : getUsers(tensor)) {
      auto readerStart = dyn_cast<AsyncStartOpInterface>(reader);
      if (!readerStart)
        continue;
      WaitOp readerWait = readerStart.getWait();
      if (!readerWait || !mayRunAfter(reader, release, tensor) ||
          !mayRunAfter(release, readerWait, tensor))
        continue;
      StringRef kind = getTransferName(reader);
      InFlightDiagnostic diag = error(release);
      diag << name << " is released while the " << kind
           << " that reads it is in flight";
      diag.attachNote(reader->getLoc()) << "the " << kind << " starts here";
      diag.attachNote(readerWait.getLoc()) << "and completes here";
    }
  }
}

void ScheduleVerifier::checkStart(Operation *start) {
  StringRef kind = getTransferName(start);
  WaitOp wait = cast<AsyncStartOpInterface>(start).getWait();
  if (!wait)
    return; // The op verifier reports it.

  // A wait elsewhere could run never or several times per start.
  if (wait->getBlock() != start->getBlock()) {
    InFlightDiagnostic diag = error(wait);
    diag << "'zero.wait' of the " << kind
         << " is not in the block of its start op, so it may not run "
            "exactly once per start";
    diag.attachNote(start->getLoc()) << "the " << kind << " starts here";
  }

  // A swapped-out tensor's device buffer is freed when the swap completes.
  if (isa<SwapOutStartOp>(start)) {
    for (Value tensor : start->getOperands()) {
      for (Operation *user : getUsers(tensor)) {
        if (!mayRunAfter(wait, user, tensor))
          continue;
        InFlightDiagnostic diag = error(user);
        diag << "'" << user->getName() << "' uses " << describeTensor(tensor)
             << " after its swap-out completed";
        diag.attachNote(wait.getLoc())
            << "the swap-out completes here and frees the device buffer";
      }
    }
  }

  if (isCollective(start))
    checkUniformExecution(start, "collective '" +
                                     start->getName().getStringRef() + "'");
}

bool ScheduleVerifier::mayStartCollectives(Operation *op) {
  auto call = dyn_cast<CallOpInterface>(op);
  if (!call)
    return isCollective(op);
  auto [it, inserted] = startsCollectives.try_emplace(op, false);
  if (!inserted)
    return it->second; // Recursion: the other paths decide.
  Operation *callee = call.resolveCallable();
  // An unknown callee might start anything.
  bool result = true;
  if (callee)
    result = callee
                 ->walk([&](Operation *nested) {
                   return mayStartCollectives(nested) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
                 })
                 .wasInterrupted();
  startsCollectives[op] = result;
  return result;
}

void ScheduleVerifier::checkUniformExecution(Operation *op, const Twine &what) {
  auto report = [&](Operation *at, const Twine &where, const Origin &origin) {
    InFlightDiagnostic diag = error(op);
    diag << what << " may not run on every rank: it is " << where
         << " depends on " << origin.what;
    diag.attachNote(at->getLoc()) << "here";
    diag.attachNote(origin.loc) << origin.what << " is defined here";
  };
  for (Operation *child = op;; child = child->getParentOp()) {
    Region *region = child->getParentRegion();
    Operation *parent = region->getParentOp();

    // Past the entry block of a CFG region, which blocks run depends on the
    // branches.
    if (!child->getBlock()->isEntryBlock()) {
      for (Block &block : *region) {
        if (block.empty())
          continue;
        Operation *terminator = &block.back();
        auto branch = dyn_cast<BranchOpInterface>(terminator);
        for (OpOperand &operand : terminator->getOpOperands()) {
          bool forwarded = branch && branch.getSuccessorBlockArgument(
                                         operand.getOperandNumber());
          const Origin *origin = uniformity.lookup(operand.get());
          if (forwarded || !origin)
            continue;
          report(terminator,
                 "in a block reached through '" +
                     terminator->getName().getStringRef() + "', whose " +
                     "operand #" + Twine(operand.getOperandNumber()),
                 *origin);
          return;
        }
      }
    }
    if (isa<FunctionOpInterface>(parent))
      return;
    if (!isa<RegionBranchOpInterface>(parent)) {
      InFlightDiagnostic diag = error(op);
      diag << what << " may not run on every rank: it is inside '"
           << parent->getName()
           << "', whose regions the verifier cannot reason about";
      diag.attachNote(parent->getLoc()) << "here";
      return;
    }
    SmallVector<std::pair<OpOperand *, std::string>> control;
    Uniformity::getControlOperands(parent, control);
    for (auto &[operand, label] : control) {
      if (const Origin *origin = uniformity.lookup(operand->get())) {
        report(parent,
               "inside '" + parent->getName().getStringRef() + "', whose " +
                   label,
               *origin);
        return;
      }
    }
  }
}

struct ZeroVerifySchedulePass
    : public zero::impl::ZeroVerifySchedulePassBase<ZeroVerifySchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    markAllAnalysesPreserved();
    FailureOr<func::FuncOp> func = lookupTrainStep(getOperation(), entry);
    if (failed(func))
      return signalPassFailure();
    if (func->isExternal()) {
      func->emitError("training step '@")
          << func->getSymName() << "' has no body";
      return signalPassFailure();
    }
    if (failed(ScheduleVerifier(*func).verify()))
      signalPassFailure();
  }
};

} // namespace
