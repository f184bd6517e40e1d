//===- StepLiveness.cpp - program points and tensor lifetimes -------------===//
//
// Every tracked tensor is live from its definition to its last use, where a
// use by a start op lasts until the wait on its handle, and a use inside the
// micro-step loop of a value from before it lasts until the loop's end.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepLiveness.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::zero;

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
  std::optional<int64_t> bytes;
  if (auto stored = QuantizedAttr::ofType(type); stored && numel)
    bytes = stored.getStorageBytes(*numel);
  else if (numel)
    bytes = llvm::checkedMul(*numel, *width);
  if (!bytes)
    return failure();
  return *bytes;
}

int64_t zero::getElementBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return 0;
  FailureOr<int64_t> width = getElementByteWidth(type.getElementType());
  return succeeded(width) ? *width : 0;
}

Operation *StepLiveness::getProgramOp(Operation &op) const {
  if (loop)
    if (Operation *inLoop = loop.getBody()->findAncestorOpInBlock(op))
      return inLoop;
  return block->findAncestorOpInBlock(op);
}

const StepLiveness::ValueLiveness *StepLiveness::lookup(Value value) const {
  auto it = values.find(value);
  return it == values.end() ? nullptr : &it->second;
}

int64_t StepLiveness::getUseEnd(OpOperand &use) const {
  Operation *user = getProgramOp(*use.getOwner());
  if (!user)
    return getLastPoint();
  int64_t end = getPoint(user);
  // The runtime reads a start op's operands until the wait.
  if (auto start = dyn_cast<AsyncStartOpInterface>(user))
    if (WaitOp wait = start.getWait())
      if (Operation *waitPoint = getProgramOp(*wait))
        end = std::max(end, getPoint(waitPoint));
  // A value from before the loop that the loop reads is read by every
  // iteration: it lives to the loop's end.
  if (loop && user->getBlock() == loop.getBody() &&
      !loop.getRegion().isAncestor(use.get().getParentRegion()))
    end = std::max(end, loopEnd);
  return end;
}

LogicalResult StepLiveness::addValue(Value value, int64_t def, Location loc) {
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
              "elements, and no encoding other than #zero.memory_space or "
              "#zero.quantized";
  int64_t lastUse = def;
  for (OpOperand &use : value.getUses())
    lastUse = std::max(lastUse, getUseEnd(use));
  values.insert({value, ValueLiveness{*size, *space, def, lastUse, value}});
  return success();
}

LogicalResult StepLiveness::build() {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError("the memory plan needs a function with one block");
  block = &func.front();
  auto addToProgram = [&](Operation &op) {
    pointOf[&op] = program.size();
    program.push_back(&op);
  };
  // The micro-step loop's body is placed once, right after the loop op
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

  for (BlockArgument arg : block->getArguments())
    if (failed(addValue(arg, 0, arg.getLoc())))
      return failure();
  for (Operation *op : program) {
    // A collective writes its results on the comm stream from its start op
    // on, not only from the wait: they are reserved from the start.
    int64_t def = getPoint(op);
    if (auto wait = dyn_cast<WaitOp>(op))
      if (Operation *start = wait.getHandle().getDefiningOp())
        if (start->getBlock() == op->getBlock())
          def = getPoint(start);
    // A running sum is written from the loop's start to its end.
    if (op == loop)
      for (BlockArgument sum : loop.getRegionIterArgs())
        if (failed(addValue(sum, def, loop.getLoc())))
          return failure();
    for (Value result : op->getResults())
      if (failed(addValue(result, def, op->getLoc())))
        return failure();
  }

  // Views share their source's memory and extend its lifetime; the loop's
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
    Interval &interval = intervals[info.root];
    if (info.root == value)
      interval.start = info.def;
    interval.end = std::max(interval.end, info.lastUse);
  }
  if (loop)
    for (BlockArgument sum : loop.getRegionIterArgs())
      if (values.count(sum))
        intervals[sum].end = std::max(intervals[sum].end, loopEnd);
  return success();
}

FailureOr<StepLiveness> StepLiveness::compute(func::FuncOp func) {
  StepLiveness liveness(func);
  if (failed(liveness.build()))
    return failure();
  return liveness;
}
