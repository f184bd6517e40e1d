//===- CheckpointActivations.cpp - zero-checkpoint-activations ------------===//
//
// Activation checkpointing (Megatron's --checkpoint-activations, DeepSpeed's
// activation_checkpointing): the values a segment (a layer) computes in the
// forward pass are not kept for the backward pass; the backward pass
// recomputes them from the segment's inputs, which are kept.
//
// - Forward ops are the ops the loss depends on, and the marked ops; the
//   other ops of the step are the backward pass.
// - A segment's value that a forward op outside the segment reads (its
//   output: the next segment's input, or the final LayerNorm's) stays as it
//   is. Every other value of the segment that a backward op reads is
//   recomputed: the ops that compute it (and the segment ops they need, in
//   their original order) are cloned right before the first backward op
//   that reads any of them, and the backward ops read the clones.
// - Originals left without uses (values only the backward pass read) are
//   erased; an op without results (there for its effects) stays.
// - With cpu-checkpointing, the kept inputs of the recomputation that ops
//   compute (not arguments) move to host memory after their last forward
//   use and back right before their first backward use.
//
// The clones compute the same ops on the same operands, so the step gives
// the same bits; only the values' lifetimes change.
//
// With `auto`, only some segments are recomputed: the fewest, cheapest in
// FLOPs per byte they free first, for which the passes of `fit-pipeline`
// (the rest of the ZeRO pipeline, ending in the memory plan and its budget
// check) accept a copy of the step. The plan depends on every later pass, so
// it is measured on copies rather than predicted.
//
// The function records what was recomputed (`zero.recompute`) for the
// memory report and the budget error.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "zero/Analysis/StepLiveness.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <map>

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROCHECKPOINTACTIVATIONSPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

constexpr StringLiteral kPassName = "zero-checkpoint-activations";

/// Saturates instead of overflowing: FLOPs only inform.
int64_t addFlops(int64_t a, int64_t b) {
  return llvm::checkedAdd(a, b).value_or(std::numeric_limits<int64_t>::max());
}
int64_t mulFlops(int64_t a, int64_t b) {
  return llvm::checkedMul(a, b).value_or(std::numeric_limits<int64_t>::max());
}

/// The FLOPs of `op` alone (not of the ops nested in it): for a linalg op,
/// its iteration points times the ops of its body other than the yield,
/// constants and `linalg.index` (linalg.matmul: M N K points of a multiply
/// and an add, 2 M N K; linalg.fill, transpose, broadcast: 0); for an
/// `arith` or `math` op on tensors, one per result element; 0 for any other
/// op (tensor.* ops move data; scalar ops only run inside the bodies
/// counted above), unregistered ops included (`--allow-unregistered-dialect`:
/// what they compute is unknown, and they have no dialect).
int64_t countFlops(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    int64_t points = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(range))
        return 0;
      points = mulFlops(points, range);
    }
    int64_t bodyOps = 0;
    for (Operation &nested : linalgOp.getBlock()->without_terminator())
      if (!isa<arith::ConstantOp, linalg::IndexOp>(nested))
        ++bodyOps;
    return mulFlops(points, bodyOps);
  }
  if (isa<arith::ConstantOp>(op) ||
      !isa_and_present<arith::ArithDialect, math::MathDialect>(
          op->getDialect()))
    return 0;
  int64_t flops = 0;
  for (Value result : op->getResults())
    if (auto type = dyn_cast<RankedTensorType>(result.getType());
        type && type.hasStaticShape())
      flops = addFlops(flops, type.getNumElements());
  return flops;
}

/// The FLOPs of every op of `func`.
int64_t countFlops(func::FuncOp func) {
  int64_t flops = 0;
  func.walk([&](Operation *op) { flops = addFlops(flops, countFlops(op)); });
  return flops;
}

/// The ops of consecutive segment ids that are checkpointed together.
struct Segment {
  /// The first and last zero.segment id of the group.
  int64_t first, last;
  /// In block order.
  SmallVector<Operation *> ops;
  DenseSet<Operation *> opSet;
};

/// What recomputing one segment takes.
struct Recomputation {
  /// The segment's values that backward ops read.
  llvm::SetVector<Value> values;
  /// Their uses there.
  SmallVector<OpOperand *> backwardUses;
  /// The first backward op (in program order) that reads one of them.
  Operation *firstUser = nullptr;
  /// The segment ops that compute them, transitively.
  DenseSet<Operation *> needed;
};

/// For the automatic choice: the bytes of a segment's values that the
/// backward pass reads (kept across the forward pass unless recomputed),
/// and the FLOPs of the ops that recompute them.
struct SegmentCost {
  unsigned index;
  int64_t bytes = 0, flops = 0;
};

class Checkpointer {
public:
  Checkpointer(func::FuncOp func, int64_t numberCheckpoints,
               bool cpuCheckpointing)
      : func(func), body(func.front()), numberCheckpoints(numberCheckpoints),
        cpuCheckpointing(cpuCheckpointing) {}

  /// Finds the segments and the forward pass. `noSegments` ends the error
  /// for a step without segments.
  LogicalResult initialize(StringRef noSegments);
  ArrayRef<Segment> getSegments() const { return segments; }
  /// The cost of each segment, in segment order.
  FailureOr<SmallVector<SegmentCost>> estimate();
  /// Recomputes the segments whose entry of `selected` is true, every one if
  /// `selected` is empty.
  LogicalResult run(ArrayRef<bool> selected);

private:
  LogicalResult collectSegments(StringRef noSegments);
  LogicalResult collectForwardOps();
  /// The op of the step's body that holds `op` (itself at the top level).
  Operation *getTopLevel(Operation *op) const {
    return body.findAncestorOpInBlock(*op);
  }
  /// Whether a use by `user` (top level, outside `segment`) belongs to the
  /// forward pass.
  bool isForwardUse(OpOperand &use, Operation *user) const;
  /// What recomputing `segment` takes; fails where it cannot be recomputed.
  LogicalResult analyze(Segment &segment, Recomputation &recomputation);
  LogicalResult recompute(Segment &segment);
  /// Moves `value` to host memory after its last forward use and back
  /// before its first backward use (cpu_checkpointing).
  void offload(Value value);
  /// Overlaps the copies of `offload` with compute.
  void overlapSwaps();

  func::FuncOp func;
  Block &body;
  int64_t numberCheckpoints;
  bool cpuCheckpointing;
  /// The activations the recomputation reads from outside its segment.
  llvm::SetVector<Value> keptInputs;
  unsigned lossIndex = 0;
  SmallVector<Segment> segments;
  DenseSet<Operation *> marked;
  DenseSet<Operation *> forward;
};

LogicalResult Checkpointer::collectSegments(StringRef noSegments) {
  std::map<int64_t, SmallVector<Operation *>> byId;
  StringRef attrName = ZeroDialect::getSegmentAttrName();
  WalkResult walk = func.walk([&](Operation *op) {
    Attribute attr = op->getAttr(attrName);
    if (!attr)
      return WalkResult::advance();
    auto id = dyn_cast<IntegerAttr>(attr);
    if (!id || !id.getType().isInteger()) {
      op->emitError() << kPassName << ": '" << attrName
                      << "' must be an integer (the segment's index), got "
                      << attr;
      return WalkResult::interrupt();
    }
    if (op->getBlock() != &body) {
      op->emitError() << kPassName << ": '" << attrName
                      << "' marks an op nested in a region; only ops of the "
                         "step's body form segments";
      return WalkResult::interrupt();
    }
    byId[id.getInt()].push_back(op);
    marked.insert(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (byId.empty())
    return func.emitError()
           << kPassName << ": no op of the step carries '" << attrName
           << "', so " << noSegments << ": mark the forward ops of "
           << "each layer with '" << attrName
           << " = <layer> : i64' (zero-model does)";

  // Group the ids in increasing order: n ids into K groups of consecutive
  // ids, the first n mod K groups one id larger.
  int64_t n = byId.size();
  int64_t groups = numberCheckpoints > 0 ? std::min(numberCheckpoints, n) : n;
  int64_t size = n / groups, larger = n % groups;
  int64_t index = 0;
  for (auto &[id, ops] : byId) {
    int64_t group = index < larger * (size + 1)
                        ? index / (size + 1)
                        : larger + (index - larger * (size + 1)) / size;
    if (group == static_cast<int64_t>(segments.size()))
      segments.push_back({id, id, {}, {}});
    Segment &segment = segments.back();
    segment.last = id;
    segment.ops.append(ops.begin(), ops.end());
    segment.opSet.insert(ops.begin(), ops.end());
    ++index;
  }
  for (Segment &segment : segments)
    llvm::sort(segment.ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
  return success();
}

LogicalResult Checkpointer::collectForwardOps() {
  FailureOr<ForwardPass> pass = getForwardPass(func, kPassName);
  if (failed(pass))
    return failure();
  lossIndex = pass->lossIndex;
  forward = std::move(pass->ops);
  return success();
}

bool Checkpointer::isForwardUse(OpOperand &use, Operation *user) const {
  if (user == body.getTerminator())
    return use.getOwner() == user && use.getOperandNumber() == lossIndex;
  return forward.contains(user) || marked.contains(user);
}

LogicalResult Checkpointer::analyze(Segment &segment,
                                    Recomputation &recomputation) {
  // The values backward ops read, and their uses there.
  llvm::SetVector<Value> &recomputed = recomputation.values;
  Operation *&firstUser = recomputation.firstUser;
  for (Operation *op : segment.ops) {
    for (Value result : op->getResults()) {
      SmallVector<OpOperand *> uses;
      bool output = false;
      for (OpOperand &use : result.getUses()) {
        Operation *user = getTopLevel(use.getOwner());
        if (segment.opSet.contains(user))
          continue;
        if (isForwardUse(use, user)) {
          output = true;
          break;
        }
        uses.push_back(&use);
      }
      if (output || uses.empty())
        continue;
      recomputed.insert(result);
      for (OpOperand *use : uses) {
        recomputation.backwardUses.push_back(use);
        Operation *user = getTopLevel(use->getOwner());
        if (!firstUser || user->isBeforeInBlock(firstUser))
          firstUser = user;
      }
    }
  }
  if (recomputed.empty())
    return success();

  // The segment ops that compute them, transitively.
  DenseSet<Operation *> &needed = recomputation.needed;
  SmallVector<Operation *> worklist;
  auto need = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (def && segment.opSet.contains(def) && needed.insert(def).second)
      worklist.push_back(def);
  };
  for (Value value : recomputed)
    need(value);
  while (!worklist.empty())
    forEachInput(worklist.pop_back_val(), need);

  auto describe = [&](InFlightDiagnostic &diag) {
    diag << " (segment " << segment.first;
    if (segment.last != segment.first)
      diag << "-" << segment.last;
    diag << ")";
  };
  for (Operation *op : segment.ops) {
    if (!needed.contains(op))
      continue;
    if (op->isRegistered() && !isMemoryEffectFree(op)) {
      InFlightDiagnostic diag = op->emitError()
                                << kPassName
                                << ": cannot recompute an op with memory "
                                   "effects";
      describe(diag);
      return diag;
    }
    LogicalResult dominated = success();
    forEachInput(op, [&](Value value) {
      Operation *def = value.getDefiningOp();
      if (!def || needed.contains(def) || failed(dominated))
        return;
      Operation *top = getTopLevel(def);
      if (top && !top->isBeforeInBlock(firstUser)) {
        InFlightDiagnostic diag =
            op->emitError() << kPassName
                            << ": cannot recompute this op before the first "
                               "backward use of its segment's values";
        describe(diag);
        diag << ": it reads a value defined after that use";
        diag.attachNote(firstUser->getLoc()) << "the first backward use";
        dominated = diag;
      }
    });
    if (failed(dominated))
      return failure();
  }
  return success();
}

LogicalResult Checkpointer::recompute(Segment &segment) {
  Recomputation recomputation;
  if (failed(analyze(segment, recomputation)))
    return failure();
  if (recomputation.values.empty())
    return success();

  // Clone them, in order, right before the first backward use.
  OpBuilder builder(recomputation.firstUser);
  IRMapping mapping;
  for (Operation *op : segment.ops) {
    if (!recomputation.needed.contains(op))
      continue;
    forEachInput(op, [&](Value value) {
      Operation *def = value.getDefiningOp();
      if (def && !recomputation.needed.contains(def) &&
          isa<RankedTensorType>(value.getType()))
        keptInputs.insert(value);
    });
    Operation *clone = builder.clone(*op, mapping);
    clone->removeAttr(ZeroDialect::getSegmentAttrName());
  }
  for (OpOperand *use : recomputation.backwardUses)
    use->set(mapping.lookup(use->get()));

  // The originals that only the backward pass read. An op without results
  // is there for what else it does (an unregistered one is not known to be
  // free of effects): it stays.
  for (Operation *op : llvm::reverse(segment.ops)) {
    if (op->getNumResults() != 0 && op->use_empty() &&
        (!op->isRegistered() || isMemoryEffectFree(op))) {
      marked.erase(op);
      forward.erase(op);
      op->erase();
    }
  }
  return success();
}

FailureOr<SmallVector<SegmentCost>> Checkpointer::estimate() {
  SmallVector<SegmentCost> costs;
  for (auto [index, segment] : llvm::enumerate(segments)) {
    Recomputation recomputation;
    if (failed(analyze(segment, recomputation)))
      return failure();
    SegmentCost &cost = costs.emplace_back();
    cost.index = index;
    for (Value value : recomputation.values)
      if (auto type = dyn_cast<RankedTensorType>(value.getType()))
        if (FailureOr<int64_t> bytes = getTensorByteSize(type);
            succeeded(bytes))
          cost.bytes = addFlops(cost.bytes, *bytes);
    for (Operation *op : segment.ops)
      if (recomputation.needed.contains(op))
        op->walk([&](Operation *nested) {
          cost.flops = addFlops(cost.flops, countFlops(nested));
        });
  }
  return costs;
}

void Checkpointer::offload(Value value) {
  Operation *lastForward = nullptr, *firstBackward = nullptr;
  SmallVector<OpOperand *> backwardUses;
  for (OpOperand &use : value.getUses()) {
    Operation *user = getTopLevel(use.getOwner());
    if (isForwardUse(use, user)) {
      if (!lastForward || lastForward->isBeforeInBlock(user))
        lastForward = user;
      continue;
    }
    backwardUses.push_back(&use);
    if (!firstBackward || user->isBeforeInBlock(firstBackward))
      firstBackward = user;
  }
  Operation *def = getTopLevel(value.getDefiningOp());
  if (!lastForward)
    lastForward = def;
  // Only what is kept across the boundary of the two passes.
  if (!firstBackward || lastForward == body.getTerminator() ||
      !lastForward->isBeforeInBlock(firstBackward))
    return;
  // Adjacent here; overlapSwaps moves them apart.
  OpBuilder b(func.getContext());
  b.setInsertionPointAfter(lastForward);
  auto out =
      SwapOutStartOp::create(b, value.getLoc(), value, MemorySpace::Host);
  Value onHost = WaitOp::create(b, value.getLoc(), out).getResult(0);
  b.setInsertionPoint(firstBackward);
  auto in = SwapInStartOp::create(b, value.getLoc(),
                                  HandleType::get(func.getContext()), onHost);
  Value onDevice = WaitOp::create(b, value.getLoc(), in).getResult(0);
  for (OpOperand *use : backwardUses)
    use->set(onDevice);
}

void Checkpointer::overlapSwaps() {
  SmallVector<Operation *> outs, ins;
  for (Operation &op : body) {
    if (isa<SwapOutStartOp>(op))
      outs.push_back(&op);
    else if (isa<SwapInStartOp>(op))
      ins.push_back(&op);
  }
  // A swap-out's wait, which frees the device buffer, moves down to the next
  // swap-out's start: the copy runs during the next layer's forward ops.
  for (size_t i = 0; i + 1 < outs.size(); ++i) {
    Operation *wait = cast<AsyncStartOpInterface>(outs[i]).getWait();
    Operation *next = outs[i + 1];
    if (llvm::all_of(wait->getUsers(), [&](Operation *user) {
          return next->isBeforeInBlock(getTopLevel(user));
        }))
      wait->moveBefore(next);
  }
  // A swap-in's start moves up to the previous swap-in's wait: the copy runs
  // during the previous segment's backward ops.
  for (size_t i = 1; i < ins.size(); ++i) {
    Operation *previous = cast<AsyncStartOpInterface>(ins[i - 1]).getWait();
    Operation *host = getTopLevel(ins[i]->getOperand(0).getDefiningOp());
    if (host && host->isBeforeInBlock(previous))
      ins[i]->moveAfter(previous);
  }
}

LogicalResult Checkpointer::initialize(StringRef noSegments) {
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << kPassName << ": the step must have a single block";
  return failure(failed(collectSegments(noSegments)) ||
                 failed(collectForwardOps()));
}

LogicalResult Checkpointer::run(ArrayRef<bool> selected) {
  for (auto [index, segment] : llvm::enumerate(segments))
    if ((selected.empty() || selected[index]) && failed(recompute(segment)))
      return failure();
  if (cpuCheckpointing) {
    for (Value value : keptInputs)
      offload(value);
    overlapSwaps();
  }
  return success();
}

/// Records on `func` what the pass recomputed (docs/Passes.md, "The report"):
/// the segment ids of `selected` (every segment if empty) and the FLOPs of
/// the step before (`before`) and now. A step checkpointed before keeps its
/// first count and adds the new recomputation.
void annotate(func::FuncOp func, StringRef choice, ArrayRef<Segment> segments,
              ArrayRef<bool> selected, int64_t before,
              std::optional<int64_t> trialPlans, bool fits) {
  MLIRContext *context = func.getContext();
  StringRef name = ZeroDialect::getRecomputeAttrName();
  llvm::SetVector<int64_t> ids;
  int64_t numSegments = 0, stepFlops = before, recomputeFlops = 0;
  for (auto [index, segment] : llvm::enumerate(segments)) {
    numSegments += segment.last - segment.first + 1;
    if (selected.empty() || selected[index])
      for (int64_t id = segment.first; id <= segment.last; ++id)
        ids.insert(id);
  }
  if (auto old = func->getAttrOfType<DictionaryAttr>(name)) {
    if (auto flops = old.getAs<IntegerAttr>("step_flops"))
      stepFlops = flops.getInt();
    if (auto flops = old.getAs<IntegerAttr>("recompute_flops"))
      recomputeFlops = flops.getInt();
    if (auto oldIds = old.getAs<DenseI64ArrayAttr>("segments"))
      ids.insert(oldIds.asArrayRef().begin(), oldIds.asArrayRef().end());
  }
  recomputeFlops = addFlops(recomputeFlops, countFlops(func) - before);
  SmallVector<int64_t> sorted = ids.takeVector();
  llvm::sort(sorted);
  Builder b(context);
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("choice", b.getStringAttr(choice)),
      b.getNamedAttr("segments", b.getDenseI64ArrayAttr(sorted)),
      b.getNamedAttr("num_segments", b.getI64IntegerAttr(numSegments)),
      b.getNamedAttr("step_flops", b.getI64IntegerAttr(stepFlops)),
      b.getNamedAttr("recompute_flops", b.getI64IntegerAttr(recomputeFlops))};
  if (trialPlans) {
    entries.push_back(
        b.getNamedAttr("trial_plans", b.getI64IntegerAttr(*trialPlans)));
    entries.push_back(b.getNamedAttr("fits", b.getBoolAttr(fits)));
  }
  func->setAttr(name, b.getDictionaryAttr(entries));
}

struct CheckpointActivationsPass
    : public zero::impl::ZeroCheckpointActivationsPassBase<
          CheckpointActivationsPass> {
  using Base::Base;

  /// Builds the passes that `auto` measures candidate steps with, when the
  /// ZeRO pipeline gives them (instead of the textual fit-pipeline).
  std::function<void(OpPassManager &)> buildFitPipeline;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    if (!automatic || !hasFitPipeline())
      return;
    if (FailureOr<OpPassManager> fit = getFitPipeline(llvm::nulls());
        succeeded(fit))
      fit->getDependentDialects(registry);
  }

  ZeroCheckpointActivationsPassOptions getOptions() const {
    ZeroCheckpointActivationsPassOptions options;
    options.entry = entry;
    options.numberCheckpoints = numberCheckpoints;
    options.cpuCheckpointing = cpuCheckpointing;
    options.automatic = automatic;
    options.fitPipeline = fitPipeline;
    return options;
  }

  bool hasFitPipeline() const {
    return buildFitPipeline || !fitPipeline.empty();
  }

  FailureOr<OpPassManager> getFitPipeline(llvm::raw_ostream &errors) const {
    if (!buildFitPipeline)
      return parsePassPipeline(fitPipeline, errors);
    OpPassManager fit(ModuleOp::getOperationName());
    buildFitPipeline(fit);
    return fit;
  }

  void runOnOperation() override {
    if (numberCheckpoints < 0) {
      getOperation().emitError()
          << kPassName << ": number-checkpoints must be at least 0, got "
          << static_cast<int64_t>(numberCheckpoints);
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> func = lookupTrainStep(getOperation(), entry);
    if (failed(func))
      return signalPassFailure();
    int64_t before = countFlops(*func);
    Checkpointer checkpointer(*func, numberCheckpoints, cpuCheckpointing);
    if (!automatic) {
      if (failed(checkpointer.initialize("there is nothing to checkpoint")) ||
          failed(checkpointer.run({})))
        return signalPassFailure();
      annotate(*func, "all", checkpointer.getSegments(), {}, before,
               std::nullopt, true);
      return;
    }
    if (failed(chooseAutomatically(*func, checkpointer, before)))
      return signalPassFailure();
  }

  /// Recomputes the fewest segments, cheapest first, with which the passes
  /// of `fit-pipeline` accept a copy of the module.
  LogicalResult chooseAutomatically(func::FuncOp func,
                                    Checkpointer &checkpointer,
                                    int64_t before) {
    ModuleOp module = getOperation();
    if (!hasFitPipeline())
      return module.emitError()
             << kPassName
             << ": auto chooses the segments that make the memory plan fit "
                "a device memory budget, and there is none: give "
                "--zero-device-memory (the pipeline's device-memory) with the "
                "ZeRO pipeline, or the passes that plan and check the step "
                "as fit-pipeline";
    std::string parseErrors;
    llvm::raw_string_ostream parseStream(parseErrors);
    FailureOr<OpPassManager> fit = getFitPipeline(parseStream);
    if (failed(fit))
      return module.emitError()
             << kPassName << ": invalid fit-pipeline: " << parseErrors;
    if (failed(checkpointer.initialize("there are no segments to choose "
                                       "from")))
      return failure();
    FailureOr<SmallVector<SegmentCost>> costs = checkpointer.estimate();
    if (failed(costs))
      return failure();

    // The candidates, fewest FLOPs per byte freed first. Ties keep segment
    // order: an earlier segment's values are held longer (to its backward
    // ops, the last to run), so recomputing it lowers more of the step.
    SmallVector<SegmentCost> order;
    for (const SegmentCost &cost : *costs)
      if (cost.bytes > 0)
        order.push_back(cost);
    llvm::stable_sort(order, [](const SegmentCost &a, const SegmentCost &b) {
      return static_cast<__int128>(a.flops) * b.bytes <
             static_cast<__int128>(b.flops) * a.bytes;
    });
    auto select = [&](size_t k) {
      SmallVector<bool> selected(costs->size(), false);
      for (const SegmentCost &cost : ArrayRef(order).take_front(k))
        selected[cost.index] = true;
      return selected;
    };

    // Whether the step with the first k candidates recomputed passes the
    // fit pipeline. Its budget errors are expected: silenced. Any other
    // error is the step's, which recomputation does not fix: the real
    // pipeline reports it.
    int64_t trialPlans = 0;
    bool otherError = false;
    auto fits = [&](size_t k) {
      ++trialPlans;
      MLIRContext *context = module.getContext();
      ScopedDiagnosticHandler silence(context, [&](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error &&
            !StringRef(diag.str()).contains("more than the budget of"))
          otherError = true;
        return success();
      });
      OwningOpRef<ModuleOp> copy = module.clone();
      FailureOr<func::FuncOp> copyFunc = lookupTrainStep(*copy, entry);
      if (failed(copyFunc))
        return false;
      Checkpointer trial(*copyFunc, numberCheckpoints, cpuCheckpointing);
      if (failed(trial.initialize("")) || failed(trial.run(select(k))))
        return false;
      PassManager pm(context, ModuleOp::getOperationName());
      static_cast<OpPassManager &>(pm) = *fit;
      return succeeded(pm.run(*copy));
    };

    // The plan mostly shrinks as more is recomputed: the smallest k that
    // fits, by bisection between nothing and every candidate. Not always:
    // recomputing the last segments can keep inputs (GPT's causal mask)
    // alive into the backward pass for nothing, so when every candidate
    // does not fit, fewer are tried one by one before giving up.
    size_t chosen = 0;
    bool fitsAll = fits(0);
    if (!fitsAll && !otherError) {
      chosen = order.size();
      fitsAll = !order.empty() && fits(order.size());
      if (!fitsAll) {
        for (size_t k = 1; k < order.size() && !fitsAll; ++k)
          if (fits(k)) {
            chosen = k;
            fitsAll = true;
          }
      } else {
        size_t lo = 1, hi = order.size();
        while (lo < hi) {
          size_t mid = lo + (hi - lo) / 2;
          if (fits(mid))
            hi = mid;
          else
            lo = mid + 1;
        }
        chosen = hi;
      }
    }
    SmallVector<bool> selected = select(chosen);
    if (failed(checkpointer.run(selected)))
      return failure();
    annotate(func, "auto", checkpointer.getSegments(), selected, before,
             trialPlans, fitsAll);
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::zero::createZeroCheckpointActivationsPass(
    ZeroCheckpointActivationsPassOptions options,
    std::function<void(OpPassManager &)> buildFitPipeline) {
  auto pass = std::make_unique<CheckpointActivationsPass>(std::move(options));
  pass->buildFitPipeline = std::move(buildFitPipeline);
  return pass;
}

std::optional<ZeroCheckpointActivationsPassOptions>
mlir::zero::getZeroCheckpointActivationsOptions(const Pass &pass) {
  if (pass.getTypeID() != TypeID::get<CheckpointActivationsPass>())
    return std::nullopt;
  return static_cast<const CheckpointActivationsPass &>(pass).getOptions();
}
