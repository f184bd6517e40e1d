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
//   erased.
// - With cpu-checkpointing, the kept inputs of the recomputation that ops
//   compute (not arguments) move to host memory after their last forward
//   use and back right before their first backward use.
//
// The clones compute the same ops on the same operands, so the step gives
// the same bits; only the values' lifetimes change.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

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

/// Calls `fn` on every value `op` reads: its operands and the values its
/// regions use from above.
void forEachInput(Operation *op, function_ref<void(Value)> fn) {
  for (Value operand : op->getOperands())
    fn(operand);
  op->walk([&](Operation *nested) {
    if (nested == op)
      return;
    for (Value operand : nested->getOperands())
      if (!op->isAncestor(operand.getParentRegion()->getParentOp()))
        fn(operand);
  });
}

/// The ops of consecutive segment ids that are checkpointed together.
struct Segment {
  /// The first and last zero.segment id of the group.
  int64_t first, last;
  /// In block order.
  SmallVector<Operation *> ops;
  DenseSet<Operation *> opSet;
};

class Checkpointer {
public:
  Checkpointer(func::FuncOp func, int64_t numberCheckpoints,
               bool cpuCheckpointing)
      : func(func), body(func.front()), numberCheckpoints(numberCheckpoints),
        cpuCheckpointing(cpuCheckpointing) {}

  LogicalResult run();

private:
  LogicalResult collectSegments();
  LogicalResult collectForwardOps();
  /// The op of the step's body that holds `op` (itself at the top level).
  Operation *getTopLevel(Operation *op) const {
    return body.findAncestorOpInBlock(*op);
  }
  /// Whether a use by `user` (top level, outside `segment`) belongs to the
  /// forward pass.
  bool isForwardUse(OpOperand &use, Operation *user) const;
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

LogicalResult Checkpointer::collectSegments() {
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
           << "', so there is nothing to checkpoint: mark the forward ops of "
              "each layer with '"
           << attrName << " = <layer> : i64' (zero-model does)";

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
  std::optional<unsigned> loss;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, ZeroDialect::getLossAttrName()))
      loss = i;
  if (!loss)
    return func.emitError() << kPassName << ": no result is marked '"
                            << ZeroDialect::getLossAttrName()
                            << "', so the forward pass is unknown";
  lossIndex = *loss;
  Operation *terminator = body.getTerminator();
  SmallVector<Operation *> worklist;
  auto visit = [&](Value value) {
    if (Operation *def = value.getDefiningOp())
      if (Operation *top = getTopLevel(def))
        if (forward.insert(top).second)
          worklist.push_back(top);
  };
  visit(terminator->getOperand(lossIndex));
  while (!worklist.empty())
    forEachInput(worklist.pop_back_val(), visit);
  return success();
}

bool Checkpointer::isForwardUse(OpOperand &use, Operation *user) const {
  if (user == body.getTerminator())
    return use.getOwner() == user && use.getOperandNumber() == lossIndex;
  return forward.contains(user) || marked.contains(user);
}

LogicalResult Checkpointer::recompute(Segment &segment) {
  // The values backward ops read, and their uses there.
  llvm::SetVector<Value> recomputed;
  SmallVector<OpOperand *> backwardUses;
  Operation *firstUser = nullptr;
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
        backwardUses.push_back(use);
        Operation *user = getTopLevel(use->getOwner());
        if (!firstUser || user->isBeforeInBlock(firstUser))
          firstUser = user;
      }
    }
  }
  if (recomputed.empty())
    return success();

  // The segment ops that compute them, transitively.
  DenseSet<Operation *> needed;
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
      if (isa<RankedTensorType>(value.getType()))
        keptInputs.insert(value);
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

  // Clone them, in order, right before the first backward use.
  OpBuilder builder(firstUser);
  IRMapping mapping;
  for (Operation *op : segment.ops) {
    if (!needed.contains(op))
      continue;
    Operation *clone = builder.clone(*op, mapping);
    clone->removeAttr(ZeroDialect::getSegmentAttrName());
  }
  for (OpOperand *use : backwardUses)
    use->set(mapping.lookup(use->get()));

  // The originals that only the backward pass read.
  for (Operation *op : llvm::reverse(segment.ops)) {
    if (op->use_empty() && (!op->isRegistered() || isMemoryEffectFree(op))) {
      marked.erase(op);
      forward.erase(op);
      op->erase();
    }
  }
  return success();
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

/// The zero.wait of an async start.
static Operation *getWait(Operation *start) {
  return *start->getResult(0).getUsers().begin();
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
    Operation *wait = getWait(outs[i]);
    Operation *next = outs[i + 1];
    if (llvm::all_of(wait->getUsers(), [&](Operation *user) {
          return next->isBeforeInBlock(getTopLevel(user));
        }))
      wait->moveBefore(next);
  }
  // A swap-in's start moves up to the previous swap-in's wait: the copy runs
  // during the previous segment's backward ops.
  for (size_t i = 1; i < ins.size(); ++i) {
    Operation *previous = getWait(ins[i - 1]);
    Operation *host = getTopLevel(ins[i]->getOperand(0).getDefiningOp());
    if (host && host->isBeforeInBlock(previous))
      ins[i]->moveAfter(previous);
  }
}

LogicalResult Checkpointer::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << kPassName << ": the step must have a single block";
  if (failed(collectSegments()) || failed(collectForwardOps()))
    return failure();
  for (Segment &segment : segments)
    if (failed(recompute(segment)))
      return failure();
  if (cpuCheckpointing) {
    for (Value value : keptInputs)
      offload(value);
    overlapSwaps();
  }
  return success();
}

struct CheckpointActivationsPass
    : public zero::impl::ZeroCheckpointActivationsPassBase<
          CheckpointActivationsPass> {
  using Base::Base;

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
    if (failed(Checkpointer(*func, numberCheckpoints, cpuCheckpointing).run()))
      return signalPassFailure();
  }
};

} // namespace
