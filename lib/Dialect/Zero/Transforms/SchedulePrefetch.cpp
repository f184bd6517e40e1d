//===- SchedulePrefetch.cpp - zero-schedule-prefetch ----------------------===//
//
// Decides when every collective starts and is waited for, relative to the
// compute stream, whose order never changes. The body is seen as its fixed
// ops (everything but start ops and waits, in order) with a gap before each
// of them; starts and waits are placed into gaps ("slots"):
//
// - without overlap-comm every wait directly follows its start;
// - with it, every wait sinks to the gap of the first use of its results
//   (gradient reductions and post-step gathers: at the latest where the
//   next but one of their kind starts, two in flight as DeepSpeed's
//   alternating buckets),
//   reductions and post-step gathers start right after their operands are
//   produced, and parameter gathers start early (prefetch), in issue order,
//   while at most prefetch-bucket-size gathered elements are in flight;
// - in both modes, gathered-and-unreleased parameter elements never exceed
//   max-live-parameters: parameters kept gathered across a gap where the cap
//   is exceeded are released and gathered again (or gathered later, out of
//   their bucket), and an op whose own parameters exceed the cap is an error.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "ScheduleUtils.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>
#include <tuple>
#include <utility>

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROSCHEDULEPREFETCHPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

constexpr unsigned kNone = std::numeric_limits<unsigned>::max();

/// A start op and its wait, both in the body.
struct AsyncPair {
  Operation *start;
  WaitOp wait;
  bool paramGather = false;
  /// Position of the start among all ops of the body (a tie-breaker).
  unsigned order = 0;
  unsigned startSlot = 0;
  unsigned waitSlot = 0;
  /// Parameter gathers: the gathered full elements.
  int64_t numel = 0;
};

/// A parameter gathered by a parameter gather: one result of its wait.
struct Gathered {
  Value value;
  unsigned pair = 0;
  unsigned index = 0;
  int64_t numel = 0;
  /// Fixed index of its release, or the number of fixed ops (never).
  unsigned release = 0;
  /// Fixed indices of its uses other than releases, sorted.
  SmallVector<unsigned> uses;
  /// Read by a start op: kept gathered, never split.
  bool pinned = false;
};

/// The body as fixed ops with slots between them (slot k is just before
/// fixed op k), and where every start and wait goes.
struct Timeline {
  Block *body = nullptr;
  SmallVector<Operation *> fixed;
  DenseMap<Operation *, unsigned> fixedIndex;
  SmallVector<AsyncPair> pairs;
  DenseMap<Operation *, unsigned> pairOf;
  SmallVector<Gathered> gathered;
  /// Gathered-and-unreleased parameter elements at every fixed op, with
  /// every parameter gather started in the slot of its wait.
  SmallVector<int64_t> live;

  unsigned size() const { return fixed.size(); }

  /// Where `user` reads a value: the fixed index of its ancestor in the
  /// body, or the slot of a start op.
  unsigned usePos(Operation *user) const {
    Operation *op = body->findAncestorOpInBlock(*user);
    auto it = fixedIndex.find(op);
    if (it != fixedIndex.end())
      return it->second;
    const AsyncPair &pair = pairs[pairOf.lookup(op)];
    return op == pair.start ? pair.startSlot : pair.waitSlot;
  }

  bool isMovable(Operation *op) const { return pairOf.contains(op); }
};

/// With overlap, reductions and post-step gathers start as soon as their
/// operands exist; swaps stay where they are.
bool startsEarly(Operation *start) {
  return isa<ReduceScatterStartOp, AllReduceStartOp, AllGatherStartOp>(start);
}

/// The latest slot a wait may take: the first use of its results, the
/// first release of an operand of its start (the runtime reads operands
/// until the wait), the terminator.
unsigned latestWaitSlot(const Timeline &t, const AsyncPair &pair,
                        unsigned inputSlot) {
  unsigned slot = t.size() - 1;
  for (Operation *user : pair.wait->getUsers())
    slot = std::min(slot, t.usePos(user));
  for (Value operand : pair.start->getOperands())
    for (Operation *user : operand.getUsers()) {
      auto it = t.fixedIndex.find(t.body->findAncestorOpInBlock(*user));
      if (it != t.fixedIndex.end() && isa<ReleaseOp>(it->first) &&
          it->second >= inputSlot)
        slot = std::min(slot, it->second);
    }
  return slot;
}

/// Orders `chain` by start slot and waits each pair, at the latest, where
/// the pair `inFlight` places later starts: at most `inFlight` of them run
/// at once.
void limitInFlight(Timeline &t, SmallVector<unsigned> &chain,
                   unsigned inFlight) {
  llvm::stable_sort(chain, [&](unsigned a, unsigned b) {
    return std::make_pair(t.pairs[a].startSlot, t.pairs[a].order) <
           std::make_pair(t.pairs[b].startSlot, t.pairs[b].order);
  });
  for (size_t i = 0; i + inFlight < chain.size(); ++i) {
    AsyncPair &pair = t.pairs[chain[i]];
    unsigned limit = t.pairs[chain[i + inFlight]].startSlot;
    pair.waitSlot = std::max(pair.startSlot, std::min(pair.waitSlot, limit));
  }
}

/// Builds the timeline of `body`; parameter gathers start where they are
/// waited for.
Timeline buildTimeline(Block &body, bool overlap) {
  Timeline t;
  t.body = &body;
  SmallVector<unsigned> inputSlots;
  unsigned order = 0;
  for (Operation &op : body) {
    ++order;
    if (isa<AsyncStartOpInterface>(op)) {
      if (WaitOp wait = getSameBlockWait(&op)) {
        AsyncPair pair;
        pair.start = &op;
        pair.wait = wait;
        pair.order = order;
        auto gather = dyn_cast<AllGatherStartOp>(op);
        pair.paramGather = gather && isParameterGather(gather);
        if (pair.paramGather)
          for (unsigned i = 0, e = op.getNumOperands(); i < e; ++i)
            pair.numel += getOperandElements(&op, i);
        t.pairOf[&op] = t.pairs.size();
        t.pairOf[wait] = t.pairs.size();
        t.pairs.push_back(pair);
        inputSlots.push_back(t.fixed.size());
        continue;
      }
    }
    if (auto wait = dyn_cast<WaitOp>(op))
      if (t.pairOf.contains(wait.getHandle().getDefiningOp()))
        continue;
    t.fixedIndex[&op] = t.fixed.size();
    t.fixed.push_back(&op);
  }

  // Starts other than parameter gathers: at their input slot, or with
  // overlap right after their operands are produced.
  for (auto [pair, inputSlot] : llvm::zip(t.pairs, inputSlots)) {
    if (pair.paramGather)
      continue;
    pair.startSlot = inputSlot;
    if (!overlap || !startsEarly(pair.start))
      continue;
    unsigned slot = 0;
    bool hoistable = true;
    for (Value operand : pair.start->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        continue;
      Operation *op = body.findAncestorOpInBlock(*def);
      if (!op)
        continue;
      auto it = t.fixedIndex.find(op);
      if (it == t.fixedIndex.end()) {
        hoistable = false;
        break;
      }
      slot = std::max(slot, it->second + 1);
    }
    if (hoistable)
      pair.startSlot = std::min(slot, inputSlot);
  }

  // Waits: at once without overlap, else as late as allowed. A parameter
  // gather is needed at its first use; it starts there until prefetched.
  for (auto [pair, inputSlot] : llvm::zip(t.pairs, inputSlots)) {
    unsigned latest = latestWaitSlot(t, pair, inputSlot);
    if (pair.paramGather) {
      pair.startSlot = pair.waitSlot = latest;
      continue;
    }
    pair.waitSlot = overlap ? std::max(latest, pair.startSlot) : pair.startSlot;
  }

  // Gradient reductions are double-buffered, as DeepSpeed's overlap_comm
  // alternates two buckets: a reduction is waited for, at the latest, where
  // the reduction after the next one starts, so that the full gradients it
  // reads do not all stay alive to the end of the backward pass. Post-step
  // gathers of the updated parameters are chained the same way: each holds
  // a staging buffer of the whole bucket until its wait, and all of them
  // waited at the return would hold one per bucket (2 Psi at stages 1-2).
  if (overlap) {
    SmallVector<unsigned> reductions, postStepGathers;
    for (auto [p, pair] : llvm::enumerate(t.pairs)) {
      if (isa<ReduceScatterStartOp, AllReduceStartOp>(pair.start) &&
          pair.start->hasAttr(ZeroDialect::getGradsAttrName()))
        reductions.push_back(p);
      else if (isa<AllGatherStartOp>(pair.start) && !pair.paramGather)
        postStepGathers.push_back(p);
    }
    limitInFlight(t, reductions, /*inFlight=*/2);
    limitInFlight(t, postStepGathers, /*inFlight=*/2);
  }

  // Gathered parameters and the live elements at every fixed op.
  t.live.assign(t.size(), 0);
  for (auto [p, pair] : llvm::enumerate(t.pairs)) {
    if (!pair.paramGather)
      continue;
    for (auto [i, value] : llvm::enumerate(pair.wait->getResults())) {
      Gathered g;
      g.value = value;
      g.pair = p;
      g.index = i;
      g.numel = getOperandElements(pair.start, i);
      g.release = t.size();
      for (Operation *user : value.getUsers()) {
        Operation *op = body.findAncestorOpInBlock(*user);
        unsigned pos = t.usePos(user);
        if (isa<ReleaseOp>(op))
          g.release = std::min(g.release, pos);
        else
          g.uses.push_back(pos);
        if (t.isMovable(op))
          g.pinned = true;
      }
      llvm::sort(g.uses);
      for (unsigned k = pair.startSlot; k < t.size() && k <= g.release; ++k)
        t.live[k] += g.numel;
      t.gathered.push_back(std::move(g));
    }
  }
  return t;
}

bool isLiveAt(const Timeline &t, const Gathered &g, unsigned k) {
  return t.pairs[g.pair].startSlot <= k && k <= g.release;
}

bool isUsedAt(const Gathered &g, unsigned k) {
  return llvm::is_contained(g.uses, k);
}

/// The parameter gathers in issue order: by the slot where they are needed,
/// then by input order.
SmallVector<unsigned> getIssueOrder(const Timeline &t) {
  SmallVector<unsigned> order;
  for (auto [p, pair] : llvm::enumerate(t.pairs))
    if (pair.paramGather)
      order.push_back(p);
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return std::make_pair(t.pairs[a].waitSlot, t.pairs[a].order) <
           std::make_pair(t.pairs[b].waitSlot, t.pairs[b].order);
  });
  return order;
}

/// Gathers shard `index` of `gather` alone, before `before`.
Value gatherAlone(AllGatherStartOp gather, unsigned index, Operation *before) {
  OpBuilder b(before);
  auto start = AllGatherStartOp::create(
      b, gather.getLoc(), gather.getShards()[index],
      b.getArrayAttr({gather.getLayouts()[index]}), gather.getGridAxesAttr(),
      gather.getQuantizeBlockSizeAttr(), gather.getHierarchical());
  return WaitOp::create(b, gather.getLoc(), start).getResult(0);
}

struct ZeroSchedulePrefetchPass
    : public zero::impl::ZeroSchedulePrefetchPassBase<
          ZeroSchedulePrefetchPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step))
      return signalPassFailure();
    func::FuncOp func = *step;
    for (auto [name, value] : {std::pair<StringRef, int64_t>{
                                   "prefetch-bucket-size", prefetchBucketSize},
                               {"max-live-parameters", maxLiveParameters}})
      if (value < 0) {
        func.emitError("'zero-schedule-prefetch': ")
            << name << " must be >= 0, got " << value;
        return signalPassFailure();
      }
    if (func.isExternal() || !func.getBody().hasOneBlock()) {
      func.emitError(
          "'zero-schedule-prefetch' expects a training step with one block");
      return signalPassFailure();
    }
    // The micro-step loop's body is scheduled on its own: its gathers and
    // reductions repeat with it.
    for (Block *body : getStepBlocks(func)) {
      if (failed(enforceLiveCap(*body)))
        return signalPassFailure();
      Timeline t = buildTimeline(*body, overlapComm);
      prefetch(t);
      emit(t);
    }
  }

  /// Rewrites the body until gathered-and-unreleased parameters stay within
  /// max-live-parameters at every op, parameter gathers started where they
  /// are waited for. At the first op where they exceed it, the parameters
  /// the op does not use are evicted, farthest next use first (Belady),
  /// until the op fits: one used before is released after its last use
  /// before the op and gathered again before its next use; one not used yet
  /// (gathered early with its bucket) is taken out of the bucket and
  /// gathered before its first use. A rewrite lowers the live elements at
  /// that op and raises them nowhere, so the scan moves forward.
  LogicalResult enforceLiveCap(Block &body) {
    for (unsigned iteration = 0;; ++iteration) {
      Timeline t = buildTimeline(body, overlapComm);
      unsigned k = 0;
      while (k < t.size() && t.live[k] <= maxLiveParameters)
        ++k;
      if (k == t.size())
        return success();
      if (iteration > 100000)
        return t.fixed[k]->emitError("'zero-schedule-prefetch' did not "
                                     "converge under max-live-parameters");

      int64_t needed = 0;
      SmallVector<const Gathered *> neededBy;
      SmallVector<std::pair<unsigned, const Gathered *>> candidates;
      for (const Gathered &g : t.gathered) {
        if (!isLiveAt(t, g, k))
          continue;
        if (isUsedAt(g, k) || g.pinned) {
          needed += g.numel;
          neededBy.push_back(&g);
        } else if (g.numel > 0) {
          const unsigned *next = llvm::upper_bound(g.uses, k);
          candidates.push_back({next == g.uses.end() ? kNone : *next, &g});
        }
      }
      if (needed > maxLiveParameters) {
        InFlightDiagnostic diag =
            t.fixed[k]->emitError("this op needs ")
            << needed
            << " gathered parameter elements at once, more than "
               "max-live-parameters = "
            << static_cast<int64_t>(maxLiveParameters) << ":";
        for (auto [i, g] : llvm::enumerate(neededBy)) {
          auto gather = cast<AllGatherStartOp>(t.pairs[g->pair].start);
          diag << (i ? ", '" : " '")
               << getShardName(gather.getShards()[g->index]) << "' ("
               << g->numel << ")";
        }
        return failure();
      }

      // Farthest next use first, then the largest; stable otherwise. Evict
      // until op `k` fits, one parameter per gather op before rebuilding.
      llvm::stable_sort(candidates, [](auto a, auto b) {
        return std::make_pair(a.first, a.second->numel) >
               std::make_pair(b.first, b.second->numel);
      });
      int64_t live = t.live[k];
      llvm::SmallDenseSet<unsigned> touched;
      for (auto [nextUse, g] : candidates) {
        if (live <= maxLiveParameters || !touched.insert(g->pair).second)
          break;
        evict(t, *g, k);
        live -= g->numel;
      }
    }
  }

  /// Ends the life of `g` before fixed op `k`, which does not use it.
  static void evict(const Timeline &t, const Gathered &g, unsigned k) {
    auto gather = cast<AllGatherStartOp>(t.pairs[g.pair].start);
    WaitOp oldWait = t.pairs[g.pair].wait;
    Value value = g.value;
    const unsigned *next = llvm::upper_bound(g.uses, k);
    Operation *nextUser = next == g.uses.end() ? nullptr : t.fixed[*next];
    SmallVector<std::pair<ReleaseOp, unsigned>> releases;
    for (Operation *user : value.getUsers())
      if (auto release = dyn_cast<ReleaseOp>(user))
        releases.push_back({release, t.fixedIndex.lookup(release)});

    if (!g.uses.empty() && g.uses.front() < k) {
      // Used before: release after that use, gather again before the next
      // one, which reads the new value as do the releases after `k`.
      if (nextUser) {
        Value again = gatherAlone(gather, g.index, nextUser);
        value.replaceUsesWithIf(again, [&](OpOperand &use) {
          auto it =
              t.fixedIndex.find(t.body->findAncestorOpInBlock(*use.getOwner()));
          return it != t.fixedIndex.end() && it->second > k;
        });
      } else {
        for (auto [release, index] : releases)
          if (index > k)
            dropFromRelease(release, value);
      }
      Operation *lastUser = t.fixed[*std::prev(next)];
      OpBuilder b(lastUser->getContext());
      b.setInsertionPointAfter(lastUser);
      ReleaseOp::create(b, gather.getLoc(), ValueRange{value});
      return;
    }

    // Not used yet (gathered early with its bucket): gather it on its own
    // before its first use, and the rest of the bucket without it.
    if (nextUser) {
      value.replaceAllUsesWith(gatherAlone(gather, g.index, nextUser));
    } else {
      for (auto [release, index] : releases)
        dropFromRelease(release, value);
    }
    SmallVector<Value> shards;
    SmallVector<Attribute> layouts;
    for (auto [i, shard, layout] :
         llvm::enumerate(gather.getShards(), gather.getLayouts()))
      if (i != g.index) {
        shards.push_back(shard);
        layouts.push_back(layout);
      }
    if (!shards.empty()) {
      OpBuilder b(gather);
      auto start = AllGatherStartOp::create(
          b, gather.getLoc(), shards, b.getArrayAttr(layouts),
          gather.getGridAxesAttr(), gather.getQuantizeBlockSizeAttr(),
          gather.getHierarchical());
      start->setDiscardableAttrs(gather->getDiscardableAttrDictionary());
      auto wait = WaitOp::create(b, oldWait.getLoc(), start);
      unsigned next = 0;
      for (auto [i, result] : llvm::enumerate(oldWait.getResults()))
        if (i != g.index)
          result.replaceAllUsesWith(wait.getResult(next++));
    }
    oldWait->erase();
    gather->erase();
  }

  /// Chooses the start slot of every parameter gather, in issue order (the
  /// order in which they are needed): the earliest slot, not before the
  /// previous gather's start nor before the release of an earlier gather of
  /// the same shard, such that at every fixed op it then spans the gathers
  /// in flight stay within prefetch-bucket-size and the live parameters
  /// within max-live-parameters.
  void prefetch(Timeline &t) {
    if (!overlapComm || prefetchBucketSize == 0)
      return;

    // Releases of each shard's gathered copies.
    DenseMap<Value, SmallVector<unsigned>> releasesOfShard;
    for (const Gathered &g : t.gathered) {
      Value shard = t.pairs[g.pair].start->getOperand(g.index);
      releasesOfShard[shard].push_back(g.release);
    }

    SmallVector<int64_t> inFlight(t.size(), 0);
    unsigned previous = 0;
    for (unsigned p : getIssueOrder(t)) {
      AsyncPair &pair = t.pairs[p];
      unsigned need = pair.waitSlot;
      unsigned lowest = previous;
      for (Value shard : pair.start->getOperands()) {
        for (unsigned release : releasesOfShard[shard])
          if (release < need)
            lowest = std::max(lowest, release + 1);
        // hpZ's secondary shard exists after the op that cuts it.
        if (Operation *def = shard.getDefiningOp())
          if (Operation *op = t.body->findAncestorOpInBlock(*def);
              op && t.fixedIndex.contains(op))
            lowest = std::max(lowest, t.fixedIndex.lookup(op) + 1);
      }
      unsigned slot = need;
      while (slot > lowest &&
             inFlight[slot - 1] + pair.numel <= prefetchBucketSize &&
             t.live[slot - 1] + pair.numel <= maxLiveParameters)
        --slot;
      for (unsigned k = slot; k < need; ++k) {
        inFlight[k] += pair.numel;
        t.live[k] += pair.numel;
      }
      pair.startSlot = slot;
      previous = slot;
    }
  }

  /// Reorders the body: the fixed ops in their order, before each of them
  /// the starts and waits of its slot: first the waits of earlier starts
  /// (in the order of their starts), then each start that is waited in this
  /// slot directly followed by its wait, then the starts waited later (both
  /// lists: other collectives in input order, then parameter gathers in
  /// issue order). An op always follows the ops it reads.
  void emit(Timeline &t) {
    SmallVector<unsigned> gatherRank(t.pairs.size(), 0);
    for (auto [rank, p] : llvm::enumerate(getIssueOrder(t)))
      gatherRank[p] = rank;

    // A start and its wait in one slot stay together; otherwise the start
    // or the wait is a unit of its own.
    enum Phase : unsigned { Wait, Pair, Start };
    struct Unit {
      SmallVector<Operation *, 2> ops;
      unsigned pair;
      Phase phase;
    };
    SmallVector<SmallVector<Unit>> slots(t.size());
    for (auto [p, pair] : llvm::enumerate(t.pairs)) {
      unsigned index = p;
      if (!overlapComm || pair.startSlot == pair.waitSlot) {
        slots[pair.startSlot].push_back({{pair.start, pair.wait}, index, Pair});
        continue;
      }
      slots[pair.startSlot].push_back({{pair.start}, index, Start});
      slots[pair.waitSlot].push_back({{pair.wait}, index, Wait});
    }

    DenseMap<Operation *, unsigned> emitted;
    SmallVector<Operation *> sequence;
    auto emitOp = [&](Operation *op) {
      emitted[op] = sequence.size();
      sequence.push_back(op);
    };
    auto key = [&](const Unit &u) {
      const AsyncPair &pair = t.pairs[u.pair];
      if (u.phase == Wait)
        return std::make_tuple(u.phase, 0u, emitted.lookup(pair.start));
      if (pair.paramGather)
        return std::make_tuple(u.phase, 1u, gatherRank[u.pair]);
      return std::make_tuple(u.phase, 0u, pair.order);
    };
    auto isReady = [&](const Unit &u) {
      for (Operation *op : u.ops)
        for (Value operand : op->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (def && def->getBlock() == t.body && !emitted.contains(def) &&
              !llvm::is_contained(u.ops, def))
            return false;
        }
      return true;
    };

    for (unsigned k = 0; k < t.size(); ++k) {
      SmallVector<Unit> &pending = slots[k];
      while (!pending.empty()) {
        auto best = pending.end();
        for (auto it = pending.begin(); it != pending.end(); ++it)
          if (isReady(*it) && (best == pending.end() || key(*it) < key(*best)))
            best = it;
        // Unreachable for a valid body; keep the remaining order then.
        if (best == pending.end())
          best = pending.begin();
        for (Operation *op : best->ops)
          emitOp(op);
        pending.erase(best);
      }
      emitOp(t.fixed[k]);
    }

    for (Operation *op : sequence)
      op->moveBefore(t.body, t.body->end());
  }
};
} // namespace
