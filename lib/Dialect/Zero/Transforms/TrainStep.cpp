//===- TrainStep.cpp - finding the training step --------------------------===//

#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::zero;

bool zero::isTrainStepCandidate(func::FuncOp func) {
  auto hasZeroAttr = [](DictionaryAttr attrs) {
    return attrs && llvm::any_of(attrs, [](NamedAttribute attr) {
             return attr.getName().strref().starts_with("zero.");
           });
  };
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (hasZeroAttr(func.getArgAttrDict(i)))
      return true;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (hasZeroAttr(func.getResultAttrDict(i)))
      return true;
  return false;
}

FailureOr<func::FuncOp> zero::lookupTrainStep(ModuleOp module,
                                              StringRef entry) {
  if (!entry.empty()) {
    if (auto func = module.lookupSymbol<func::FuncOp>(entry))
      return func;
    module.emitError("no function '@")
        << entry << "' (named by the entry option)";
    return failure();
  }
  SmallVector<func::FuncOp> marked, candidates;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func->hasAttr(ZeroDialect::getTrainStepAttrName()))
      marked.push_back(func);
    if (isTrainStepCandidate(func))
      candidates.push_back(func);
  }
  if (marked.size() == 1)
    return marked.front();
  if (candidates.size() == 1)
    return candidates.front();
  if (candidates.empty()) {
    module.emitError("no training-step function: no func.func has an "
                     "argument or result marked 'zero.param', 'zero.loss' "
                     "or 'zero.grad'");
    return failure();
  }
  InFlightDiagnostic diag = module.emitError()
                            << candidates.size()
                            << " candidate training-step functions; choose "
                               "one with --zero-entry=NAME";
  for (func::FuncOp func : candidates)
    diag.attachNote(func.getLoc())
        << "candidate '@" << func.getSymName() << "'";
  return failure();
}

FailureOr<RankInfo> zero::getRankInfo(func::FuncOp func, StringRef passName) {
  auto stage =
      func->getAttrOfType<IntegerAttr>(ZeroDialect::getStageAttrName());
  auto worldSize =
      func->getAttrOfType<IntegerAttr>(ZeroDialect::getWorldSizeAttrName());
  if (!stage || !worldSize) {
    func.emitError("'") << passName << "' needs the '"
                        << ZeroDialect::getStageAttrName() << "' and '"
                        << ZeroDialect::getWorldSizeAttrName()
                        << "' attributes that 'zero-partition' writes; run "
                           "it first";
    return failure();
  }
  int64_t ranksPerNode = worldSize.getInt();
  if (auto attr = func->getAttrOfType<IntegerAttr>(
          ZeroDialect::getRanksPerNodeAttrName())) {
    ranksPerNode = attr.getInt();
    if (ranksPerNode < 1 || worldSize.getInt() % ranksPerNode != 0) {
      func.emitError("'") << ZeroDialect::getRanksPerNodeAttrName() << "' ("
                          << ranksPerNode << ") must divide '"
                          << ZeroDialect::getWorldSizeAttrName() << "' ("
                          << worldSize.getInt() << ")";
      return failure();
    }
  }
  return RankInfo{stage.getInt(), worldSize.getInt(), ranksPerNode};
}

FailureOr<PartitionedTrainStep>
zero::lookupPartitionedTrainStep(ModuleOp module, StringRef entry,
                                 StringRef passName) {
  FailureOr<func::FuncOp> func = lookupTrainStep(module, entry);
  if (failed(func))
    return failure();
  FailureOr<RankInfo> rank = getRankInfo(*func, passName);
  if (failed(rank))
    return failure();
  for (const ParamArg &param : getParamArgs(*func))
    if (!param.layout) {
      func->emitError("'") << passName << "': parameter '" << param.name
                           << "' has no '" << ZeroDialect::getLayoutAttrName()
                           << "'; run 'zero-partition' first";
      return failure();
    }
  return PartitionedTrainStep{*func, *rank};
}

bool zero::hasScaledBackward(func::FuncOp func) {
  return llvm::any_of(llvm::seq(func.getNumArguments()), [&](unsigned i) {
    return func.getArgAttr(i, ZeroDialect::getScalesBackwardAttrName());
  });
}

SmallVector<ParamArg> zero::getParamArgs(func::FuncOp func) {
  SmallVector<ParamArg> params;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto name =
        func.getArgAttrOfType<StringAttr>(i, ZeroDialect::getParamAttrName());
    if (!name || func.getArgAttr(i, ZeroDialect::getStateAttrName()))
      continue;
    params.push_back(
        {func.getArgument(i), name.getValue(),
         func.getArgAttrOfType<LayoutAttr>(i, ZeroDialect::getLayoutAttrName()),
         func.getArgAttr(i, ZeroDialect::getPersistentAttrName()) != nullptr,
         func.getArgAttr(i, ZeroDialect::getFrozenAttrName()) != nullptr});
  }
  return params;
}

void zero::forEachInput(Operation *op, function_ref<void(Value)> fn) {
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

FailureOr<ForwardPass> zero::getForwardPass(func::FuncOp func,
                                            StringRef passName) {
  std::optional<unsigned> loss;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, ZeroDialect::getLossAttrName()))
      loss = i;
  if (!loss)
    return func.emitError() << passName << ": no result is marked '"
                            << ZeroDialect::getLossAttrName()
                            << "', so the forward pass is unknown";
  ForwardPass forward{*loss, {}};
  Block &body = func.getBody().front();
  SmallVector<Operation *> worklist;
  auto visit = [&](Value value) {
    if (Operation *def = value.getDefiningOp())
      if (Operation *top = body.findAncestorOpInBlock(*def))
        if (forward.ops.insert(top).second)
          worklist.push_back(top);
  };
  visit(body.getTerminator()->getOperand(*loss));
  while (!worklist.empty())
    forEachInput(worklist.pop_back_val(), visit);
  return forward;
}

void zero::updateFunctionType(func::FuncOp func) {
  Block &body = func.getBody().front();
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 body.getTerminator()->getOperandTypes()));
}

Operation *zero::getStepLevelOp(Operation *op) {
  while (Operation *parent = op->getParentOp()) {
    if (isa<func::FuncOp, scf::ForOp>(parent))
      return op;
    op = parent;
  }
  return op;
}

SmallVector<Block *> zero::getStepBlocks(func::FuncOp func) {
  Block &body = func.getBody().front();
  SmallVector<Block *> blocks{&body};
  for (auto loop : body.getOps<scf::ForOp>())
    blocks.push_back(loop.getBody());
  return blocks;
}

TrainStepShape zero::inferTrainStepShape(ModuleOp module, StringRef entry) {
  TrainStepShape shape;
  // Without a step there is nothing to infer; the pipeline reports it.
  ScopedDiagnosticHandler silence(module.getContext(),
                                  [](Diagnostic &) { return success(); });
  FailureOr<func::FuncOp> step = lookupTrainStep(module, entry);
  if (failed(step))
    return shape;

  llvm::DenseMap<int64_t, int64_t> dimCount;
  for (const ParamArg &param : getParamArgs(*step)) {
    auto type = dyn_cast<RankedTensorType>(param.arg.getType());
    if (!type)
      continue;
    for (int64_t dim : type.getShape())
      if (!ShapedType::isDynamic(dim))
        ++dimCount[dim];
    if (!llvm::is_contained(shape.paramElementTypes, type.getElementType()))
      shape.paramElementTypes.push_back(type.getElementType());
  }
  int64_t bestCount = 0;
  for (auto [dim, count] : dimCount)
    if (count > bestCount || (count == bestCount && dim > shape.hiddenSize)) {
      shape.hiddenSize = dim;
      bestCount = count;
    }

  for (unsigned i = 0, e = step->getNumArguments(); i < e; ++i) {
    if (!step->getArgAttr(i, ZeroDialect::getDataAttrName()))
      continue;
    auto type = dyn_cast<RankedTensorType>(step->getArgumentTypes()[i]);
    if (type && type.getRank() > 0 && !type.isDynamicDim(0)) {
      shape.microBatchSize = type.getDimSize(0);
      break;
    }
  }
  return shape;
}
