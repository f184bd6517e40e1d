//===- Bucket.cpp - zero-bucket -------------------------------------------===//
//
// Merges collectives into buckets, as DeepSpeed's reduce_bucket_size and
// allgather_bucket_size do: one variadic start op per bucket, so that many
// small tensors travel in few large messages. Buckets are formed greedily in
// program order among collectives of one class (kind, reduction, world size,
// element type, attributes), and a collective only joins a bucket where
// moving it keeps every value defined before its use:
//
// - a bucket of parameter gathers starts at its first member's start: the
//   shards are function arguments, defined everywhere, and gathering early
//   is what prefetch wants anyway;
// - any other bucket (reductions, post-step gathers) starts at its last
//   member's start, where the last operand is ready; earlier members'
//   results must not be used, nor their operands released, before it.
//
// The merged wait directly follows the merged start, as every wait of the
// pipeline does before zero-schedule-prefetch moves waits.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "ScheduleUtils.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROBUCKETPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// What must agree for collectives to share a bucket.
struct BucketClass {
  OperationName name;
  Attribute reduction;
  int64_t worldSize;
  Type elementType;
  bool parameterGather;
  bool hasGrads;
  DictionaryAttr otherAttrs;
  /// The group of ranks (null: the whole world): only collectives over the
  /// same groups share a bucket.
  DenseI16ArrayAttr gridAxes;
  /// Quantized gathers (qwZ) and reduce-scatters (qgZ) share a bucket with
  /// those of the same blocks.
  IntegerAttr quantizeBlockSize;
  /// MiCS's hierarchical gathers share a bucket with each other only.
  bool hierarchical = false;

  bool operator==(const BucketClass &other) const {
    return name == other.name && reduction == other.reduction &&
           worldSize == other.worldSize && elementType == other.elementType &&
           parameterGather == other.parameterGather &&
           hasGrads == other.hasGrads && otherAttrs == other.otherAttrs &&
           gridAxes == other.gridAxes &&
           quantizeBlockSize == other.quantizeBlockSize &&
           hierarchical == other.hierarchical;
  }
};

struct Member {
  Operation *start;
  WaitOp wait;
  int64_t numel;
};

struct Bucket {
  explicit Bucket(const BucketClass &cls) : cls(cls) {}

  BucketClass cls;
  SmallVector<Member> members;
  int64_t numel = 0;
  /// Buckets started at their last member: the first op that reads a result
  /// of a member or releases an operand of a member; later members must
  /// start before it.
  Operation *firstUse = nullptr;
  /// Parameter gathers: the shards gathered so far (a shard is gathered at
  /// most once per bucket).
  llvm::SmallDenseSet<Value, 8> operands;
};

/// The class of a collective that may be bucketed, or nothing.
std::optional<BucketClass> classify(Operation *op, Block &body) {
  if (!isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp>(op))
    return std::nullopt;
  if (op->getNumOperands() == 0)
    return std::nullopt;
  Type elementType;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
    if (elementType && type.getElementType() != elementType)
      return std::nullopt;
    elementType = type.getElementType();
  }

  BucketClass cls{op->getName(), nullptr, 0,  elementType,
                  false,         false,   {}, nullptr, nullptr};
  ArrayAttr layouts;
  if (auto gather = dyn_cast<AllGatherStartOp>(op)) {
    layouts = gather.getLayouts();
    cls.parameterGather = isParameterGather(gather);
    cls.gridAxes = gather.getGridAxesAttr();
    cls.quantizeBlockSize = gather.getQuantizeBlockSizeAttr();
    cls.hierarchical = gather.getHierarchical();
  } else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op)) {
    layouts = scatter.getLayouts();
    cls.reduction = scatter.getReductionAttr();
    cls.gridAxes = scatter.getGridAxesAttr();
    cls.quantizeBlockSize = scatter.getQuantizeBlockSizeAttr();
  } else {
    cls.reduction = cast<AllReduceStartOp>(op).getReductionAttr();
    cls.gridAxes = cast<AllReduceStartOp>(op).getGridAxesAttr();
  }
  if (layouts && !layouts.empty())
    cls.worldSize = cast<LayoutAttr>(layouts[0]).getWorldSize();

  SmallVector<NamedAttribute> others;
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    if (attr.getName() == ZeroDialect::getGradsAttrName())
      cls.hasGrads = true;
    else
      others.push_back(attr);
  }
  cls.otherAttrs = DictionaryAttr::get(op->getContext(), others);
  return cls;
}

/// The earlier of two ops of one block; null stands for none.
Operation *earliest(Operation *a, Operation *b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return a->isBeforeInBlock(b) ? a : b;
}

struct ZeroBucketPass : public zero::impl::ZeroBucketPassBase<ZeroBucketPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step))
      return signalPassFailure();
    func::FuncOp func = *step;
    for (auto [name, value] :
         {std::pair<StringRef, int64_t>{"reduce-bucket-size", reduceBucketSize},
          {"allgather-bucket-size", allgatherBucketSize},
          {"param-gather-bucket-size", paramGatherBucketSize}})
      if (value < 0) {
        func.emitError("'zero-bucket': ")
            << name << " must be >= 0, got " << value;
        return signalPassFailure();
      }
    if (func.isExternal() || !func.getBody().hasOneBlock()) {
      func.emitError("'zero-bucket' expects a training step with one block");
      return signalPassFailure();
    }
    for (Block *block : getStepBlocks(func))
      bucketCollectives(*block);
  }

  /// Merges the collectives of one block of the step into buckets.
  void bucketCollectives(Block &body) {
    // Plan all buckets on the unchanged IR, then rewrite. Merging moves
    // parameter gathers up and other collectives down, so a check made on
    // the input stays true: parameter gathers read only arguments, and an
    // op that must follow a moved-down start is either fixed or moves down
    // too.
    SmallVector<Bucket> done;
    SmallVector<Bucket> open;
    for (Operation &op : body) {
      std::optional<BucketClass> cls = classify(&op, body);
      if (!cls)
        continue;
      WaitOp wait = getSameBlockWait(&op);
      if (!wait)
        continue;
      int64_t numel = 0;
      for (unsigned i = 0, e = op.getNumOperands(); i < e; ++i)
        numel += getOperandElements(&op, i);
      Member member{&op, wait, numel};

      auto *it =
          llvm::find_if(open, [&](const Bucket &b) { return b.cls == *cls; });
      if (it != open.end() && canJoin(*it, member)) {
        add(*it, member, body);
        continue;
      }
      if (it != open.end()) {
        done.push_back(std::move(*it));
        open.erase(it);
      }
      Bucket bucket(*cls);
      add(bucket, member, body);
      open.push_back(std::move(bucket));
    }
    llvm::append_range(done, std::move(open));

    for (Bucket &bucket : done)
      if (bucket.members.size() > 1)
        merge(bucket);
  }

  /// Stage-3 parameter gathers are fetched in buckets of at most
  /// `param-gather-bucket-size` elements (DeepSpeed's stage-3 prefetch
  /// granularity); `allgather-bucket-size` bounds the other all-gathers (the
  /// post-step gathers of stages 1-2, which DeepSpeed bounds by it).
  int64_t getLimit(const Bucket &bucket) const {
    if (bucket.cls.name.getStringRef() != AllGatherStartOp::getOperationName())
      return reduceBucketSize;
    return bucket.cls.parameterGather ? paramGatherBucketSize
                                      : allgatherBucketSize;
  }

  bool canJoin(const Bucket &bucket, const Member &member) const {
    int64_t limit = getLimit(bucket);
    // 0 means no merging at all, even of empty tensors.
    if (limit == 0 || bucket.numel + member.numel > limit)
      return false;
    if (bucket.cls.parameterGather)
      return llvm::none_of(member.start->getOperands(), [&](Value shard) {
        return bucket.operands.contains(shard);
      });
    return !bucket.firstUse || member.start->isBeforeInBlock(bucket.firstUse);
  }

  static void add(Bucket &bucket, const Member &member, Block &body) {
    bucket.members.push_back(member);
    bucket.numel += member.numel;
    if (bucket.cls.parameterGather) {
      bucket.operands.insert(member.start->operand_begin(),
                             member.start->operand_end());
      return;
    }
    for (Operation *user : member.wait->getUsers())
      bucket.firstUse =
          earliest(bucket.firstUse, body.findAncestorOpInBlock(*user));
    for (Value operand : member.start->getOperands())
      for (Operation *user : operand.getUsers()) {
        Operation *op = body.findAncestorOpInBlock(*user);
        if (op && isa<ReleaseOp, SwapOutStartOp>(op) &&
            member.start->isBeforeInBlock(op))
          bucket.firstUse = earliest(bucket.firstUse, op);
      }
  }

  /// Replaces the members of `bucket` by one start op and its wait.
  static void merge(Bucket &bucket) {
    Operation *first = bucket.members.front().start;
    Operation *anchor =
        bucket.cls.parameterGather ? first : bucket.members.back().start;
    OpBuilder b(anchor);
    MLIRContext *ctx = b.getContext();

    SmallVector<Value> operands;
    SmallVector<Attribute> layouts, grads;
    SmallVector<Location> locs;
    for (const Member &member : bucket.members) {
      llvm::append_range(operands, member.start->getOperands());
      locs.push_back(member.start->getLoc());
      if (auto gather = dyn_cast<AllGatherStartOp>(member.start))
        llvm::append_range(layouts, gather.getLayouts());
      if (auto scatter = dyn_cast<ReduceScatterStartOp>(member.start))
        llvm::append_range(layouts, scatter.getLayouts());
      if (auto names = member.start->getAttrOfType<ArrayAttr>(
              ZeroDialect::getGradsAttrName()))
        llvm::append_range(grads, names);
    }
    Location loc = b.getFusedLoc(locs);

    Operation *start;
    if (isa<AllGatherStartOp>(first))
      start = AllGatherStartOp::create(
          b, loc, operands, b.getArrayAttr(layouts), bucket.cls.gridAxes,
          bucket.cls.quantizeBlockSize, bucket.cls.hierarchical);
    else if (auto scatter = dyn_cast<ReduceScatterStartOp>(first))
      start = ReduceScatterStartOp::create(
          b, loc, operands, scatter.getReductionAttr(), b.getArrayAttr(layouts),
          bucket.cls.gridAxes, bucket.cls.quantizeBlockSize);
    else
      start = AllReduceStartOp::create(
          b, loc, operands, cast<AllReduceStartOp>(first).getReductionAttr(),
          bucket.cls.gridAxes);
    SmallVector<NamedAttribute> attrs(bucket.cls.otherAttrs.getValue());
    if (bucket.cls.hasGrads)
      attrs.emplace_back(StringAttr::get(ctx, ZeroDialect::getGradsAttrName()),
                         ArrayAttr::get(ctx, grads));
    start->setDiscardableAttrs(attrs);
    auto wait = WaitOp::create(b, loc, cast<AsyncStartOpInterface>(start));

    unsigned next = 0;
    for (const Member &member : bucket.members) {
      unsigned count = member.wait->getNumResults();
      member.wait->replaceAllUsesWith(wait->getResults().slice(next, count));
      next += count;
      member.wait->erase();
      member.start->erase();
    }
  }
};
} // namespace
