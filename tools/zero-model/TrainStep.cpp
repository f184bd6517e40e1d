//===- TrainStep.cpp - the training-step function signature --------------===//

#include "TrainStep.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/GlobPattern.h"

using namespace mlir;
using namespace mlir::zero_model;
using mlir::zero::ZeroDialect;

void TrainStep::addParam(StringRef name, ArrayRef<int64_t> shape) {
  auto [it, inserted] = paramIndex.try_emplace(name, params.size());
  if (!inserted)
    llvm::report_fatal_error("zero-model: parameter '" + name +
                             "' declared twice");
  params.push_back({name.str(), RankedTensorType::get(shape, floatType)});
}

void TrainStep::addData(StringRef name, ArrayRef<int64_t> shape,
                        Type elementType, std::optional<int64_t> bound) {
  dataIndex.try_emplace(name, dataArgs.size());
  dataArgs.push_back(
      {name.str(), RankedTensorType::get(shape, elementType), bound});
}

std::optional<std::string> TrainStep::freeze(ArrayRef<std::string> patterns) {
  for (const std::string &text : patterns) {
    llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(text);
    if (!pattern) {
      std::string message = llvm::toString(pattern.takeError());
      return "--freeze '" + text + "' is not a glob pattern: " + message;
    }
    bool matched = false;
    for (Arg &param : params)
      if (pattern->match(param.name))
        param.frozen = matched = true;
    if (!matched)
      return "--freeze '" + text +
             "' matches no parameter (they are named "
             "like '" +
             params.back().name + "')";
  }
  return std::nullopt;
}

int64_t TrainStep::getNumParamElements() const {
  int64_t count = 0;
  for (const Arg &param : params)
    count += param.type.getNumElements();
  return count;
}

func::FuncOp TrainStep::create(OpBuilder &b, ModuleOp module, Location loc) {
  SmallVector<Type> argTypes, resultTypes;
  resultTypes.push_back(RankedTensorType::get({}, floatType));
  for (const Arg &param : params) {
    argTypes.push_back(param.type);
    if (!param.frozen)
      resultTypes.push_back(param.type);
  }
  for (const Arg &data : dataArgs)
    argTypes.push_back(data.type);

  b.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(b, loc, "train_step",
                              b.getFunctionType(argTypes, resultTypes));
  unsigned numParams = params.size();
  unsigned gradResult = 1;
  for (auto [i, param] : llvm::enumerate(params)) {
    func.setArgAttr(i, ZeroDialect::getParamAttrName(),
                    b.getStringAttr(param.name));
    if (param.frozen)
      func.setArgAttr(i, ZeroDialect::getFrozenAttrName(), b.getUnitAttr());
    else
      func.setResultAttr(gradResult++, ZeroDialect::getGradAttrName(),
                         b.getStringAttr(param.name));
  }
  for (auto [i, data] : llvm::enumerate(dataArgs)) {
    func.setArgAttr(numParams + i, ZeroDialect::getDataAttrName(),
                    b.getStringAttr(data.name));
    // The runtime draws synthetic ids below it and checks real ones.
    if (data.bound)
      func.setArgAttr(numParams + i, ZeroDialect::getDataBoundAttrName(),
                      b.getI64IntegerAttr(*data.bound));
  }
  func.setResultAttr(0, ZeroDialect::getLossAttrName(), b.getUnitAttr());

  // Name the block arguments' locations after the parameters and data, for
  // diagnostics and `--mlir-print-debuginfo`.
  SmallVector<Location> argLocs;
  for (const Arg &arg : llvm::concat<const Arg>(params, dataArgs))
    argLocs.push_back(NameLoc::get(b.getStringAttr(arg.name)));
  entry = b.createBlock(&func.getBody(), {}, argTypes, argLocs);
  b.setInsertionPointToStart(entry);
  grads.assign(numParams, Value());
  return func;
}

Value TrainStep::param(StringRef name) const {
  auto it = paramIndex.find(name);
  if (it == paramIndex.end())
    llvm::report_fatal_error("zero-model: no parameter '" + name + "'");
  return entry->getArgument(it->second);
}

Value TrainStep::data(StringRef name) const {
  auto it = dataIndex.find(name);
  if (it == dataIndex.end())
    llvm::report_fatal_error("zero-model: no data argument '" + name + "'");
  return entry->getArgument(params.size() + it->second);
}

void TrainStep::setGrad(StringRef name, Value grad) {
  auto it = paramIndex.find(name);
  if (it == paramIndex.end())
    llvm::report_fatal_error("zero-model: gradient of unknown parameter '" +
                             name + "'");
  grads[it->second] = grad;
}

void TrainStep::finish(OpBuilder &b, Location loc, Value loss) {
  SmallVector<Value> results = {loss};
  for (auto [param, grad] : llvm::zip_equal(params, grads)) {
    if (!grad)
      llvm::report_fatal_error("zero-model: no gradient for parameter '" +
                               Twine(param.name) + "'");
    if (!param.frozen)
      results.push_back(grad);
  }
  func::ReturnOp::create(b, loc, results);
  // The gradients of frozen parameters, and what only they read.
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(entry->getOperations())))
    if (isOpTriviallyDead(&op))
      op.erase();
}
