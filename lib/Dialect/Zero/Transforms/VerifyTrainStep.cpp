//===- VerifyTrainStep.cpp - check the training-step input contract ------===//
//
// Checks the contract of docs/TrainingStepIR.md on the input of the ZeRO
// pipeline, so that later passes can rely on it: one training-step function,
// uniquely named parameters, one scalar loss, one gradient of the
// parameter's type for every trainable parameter, and tensor sizes that fit
// int64 bytes.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Analysis/MemoryPlan.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROVERIFYTRAINSTEPPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

/// Parameters and gradients are statically shaped floating-point tensors.
bool isStaticFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         isa<FloatType>(tensor.getElementType());
}

/// The loss is a floating-point scalar: `f32` or `tensor<f32>`.
bool isScalarFloat(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getRank() == 0 && isa<FloatType>(tensor.getElementType());
  return isa<FloatType>(type);
}

/// Whether `type` is a tensor the memory plan can size whose bytes do not fit
/// int64. The passes and the runtime size every tensor in int64 bytes.
bool isOversizedTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         succeeded(getElementByteWidth(tensor.getElementType())) &&
         failed(getTensorByteSize(tensor));
}

struct ParamInfo {
  unsigned argIndex;
  Type type;
  bool frozen;
  std::optional<unsigned> gradResult;
};

/// Checks `func` against the contract. Reports every violation, not only the
/// first, and returns failure if there was one.
LogicalResult verifyTrainStep(func::FuncOp func, bool ignoreUnusedParameters) {
  bool valid = true;
  auto fail = [&](Location loc) {
    valid = false;
    return emitError(loc);
  };

  if (func.isExternal())
    return func.emitError("training step '@")
           << func.getSymName() << "' has no body";

  Block &entry = func.getBody().front();
  // The passes and the runtime count every tensor in int64 bytes.
  for (BlockArgument arg : entry.getArguments()) {
    if (!isOversizedTensor(arg.getType()))
      continue;
    InFlightDiagnostic diag = fail(arg.getLoc());
    if (auto name = func.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), ZeroDialect::getParamAttrName()))
      diag << "parameter '" << name.getValue() << "' (argument #"
           << arg.getArgNumber() << ")";
    else
      diag << "argument #" << arg.getArgNumber();
    diag << " has type " << arg.getType()
         << ", whose size does not fit int64 bytes";
  }
  func.walk([&](Operation *op) {
    for (OpResult result : op->getResults())
      if (isOversizedTensor(result.getType()))
        fail(op->getLoc()) << "result #" << result.getResultNumber() << " of '"
                           << op->getName() << "' has type " << result.getType()
                           << ", whose size does not fit int64 bytes";
  });

  llvm::StringMap<ParamInfo> params;
  SmallVector<StringRef> paramOrder;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    Location loc = entry.getArgument(i).getLoc();
    Attribute nameAttr = func.getArgAttr(i, ZeroDialect::getParamAttrName());
    Attribute frozenAttr = func.getArgAttr(i, ZeroDialect::getFrozenAttrName());
    if (frozenAttr && !isa<UnitAttr>(frozenAttr))
      fail(loc) << "argument #" << i << ": '"
                << ZeroDialect::getFrozenAttrName() << "' is a unit attribute";
    if (!nameAttr) {
      if (frozenAttr)
        fail(loc) << "argument #" << i << " is marked '"
                  << ZeroDialect::getFrozenAttrName()
                  << "' but is not a parameter (no '"
                  << ZeroDialect::getParamAttrName() << "')";
      continue;
    }
    auto name = dyn_cast<StringAttr>(nameAttr);
    if (!name || name.getValue().empty()) {
      fail(loc) << "argument #" << i << ": '" << ZeroDialect::getParamAttrName()
                << "' must be a non-empty string naming the parameter";
      continue;
    }
    Type type = func.getArgumentTypes()[i];
    if (!isStaticFloatTensor(type))
      fail(loc) << "parameter '" << name.getValue()
                << "' must be a statically shaped tensor of floats, got "
                << type;
    auto [it, inserted] = params.try_emplace(
        name.getValue(), ParamInfo{i, type, frozenAttr != nullptr, {}});
    if (!inserted) {
      unsigned first = it->second.argIndex;
      InFlightDiagnostic diag = fail(loc);
      diag << "parameter name '" << name.getValue()
           << "' is used by arguments #" << first << " and #" << i
           << "; parameter names must be unique";
      diag.attachNote(entry.getArgument(first).getLoc()) << "first used here";
      continue;
    }
    paramOrder.push_back(it->first());
  }

  std::optional<unsigned> lossResult;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    Type type = func.getResultTypes()[i];
    if (Attribute loss =
            func.getResultAttr(i, ZeroDialect::getLossAttrName())) {
      if (!isa<UnitAttr>(loss))
        fail(func.getLoc())
            << "result #" << i << ": '" << ZeroDialect::getLossAttrName()
            << "' is a unit attribute";
      else if (lossResult)
        fail(func.getLoc())
            << "results #" << *lossResult << " and #" << i
            << " are both marked '" << ZeroDialect::getLossAttrName()
            << "'; a training step has one loss";
      else if (!isScalarFloat(type))
        fail(func.getLoc()) << "loss (result #" << i
                            << ") must be a floating-point scalar (f32 or "
                               "tensor<f32>), got "
                            << type;
      else
        lossResult = i;
    }
    Attribute gradAttr = func.getResultAttr(i, ZeroDialect::getGradAttrName());
    if (!gradAttr)
      continue;
    auto name = dyn_cast<StringAttr>(gradAttr);
    if (!name || name.getValue().empty()) {
      fail(func.getLoc()) << "result #" << i << ": '"
                          << ZeroDialect::getGradAttrName()
                          << "' must be a non-empty string naming a parameter";
      continue;
    }
    auto it = params.find(name.getValue());
    if (it == params.end()) {
      fail(func.getLoc()) << "result #" << i << " is the gradient of '"
                          << name.getValue() << "', but no argument is marked '"
                          << ZeroDialect::getParamAttrName() << " = \""
                          << name.getValue() << "\"'";
      continue;
    }
    ParamInfo &param = it->second;
    if (param.gradResult) {
      fail(func.getLoc()) << "results #" << *param.gradResult << " and #" << i
                          << " are both the gradient of '" << name.getValue()
                          << "'";
      continue;
    }
    param.gradResult = i;
    if (param.frozen)
      fail(func.getLoc()) << "result #" << i << " is the gradient of '"
                          << name.getValue() << "', which is marked '"
                          << ZeroDialect::getFrozenAttrName() << "'";
    if (type != param.type)
      fail(func.getLoc()) << "gradient of '" << name.getValue() << "' (result #"
                          << i << ") has type " << type
                          << ", but the parameter (argument #" << param.argIndex
                          << ") has type " << param.type;
  }

  // Each fits, but the plan also sums them (and their gradients and states).
  std::optional<int64_t> paramBytes = 0;
  for (StringRef name : paramOrder) {
    auto type = dyn_cast<RankedTensorType>(params.find(name)->second.type);
    FailureOr<int64_t> bytes =
        type ? getTensorByteSize(type) : FailureOr<int64_t>(failure());
    if (succeeded(bytes) && paramBytes)
      paramBytes = llvm::checkedAdd(*paramBytes, *bytes);
  }
  if (!paramBytes)
    fail(func.getLoc()) << "the parameters of '@" << func.getSymName()
                        << "' total more than int64 bytes";

  if (!lossResult && valid)
    fail(func.getLoc()) << "training step '@" << func.getSymName()
                        << "' has no result marked '"
                        << ZeroDialect::getLossAttrName() << "'";

  for (StringRef name : paramOrder) {
    const ParamInfo &param = params.find(name)->second;
    if (!param.frozen && !param.gradResult)
      fail(entry.getArgument(param.argIndex).getLoc())
          << "parameter '" << name << "' (argument #" << param.argIndex
          << ") has no gradient: return one marked '"
          << ZeroDialect::getGradAttrName() << " = \"" << name
          << "\"' or mark the argument '" << ZeroDialect::getFrozenAttrName()
          << "'";
    // DeepSpeed trains a parameter that no op reads with a zero gradient,
    // unless told not to.
    BlockArgument arg = entry.getArgument(param.argIndex);
    if (!ignoreUnusedParameters && !param.frozen && arg.use_empty())
      fail(arg.getLoc()) << "parameter '" << name << "' (argument #"
                         << param.argIndex
                         << ") is read by no op, and "
                            "zero_optimization.ignore_unused_parameters is "
                            "false (DeepSpeed's default, true, trains it "
                            "with a zero gradient)";
  }
  return success(valid);
}

struct ZeroVerifyTrainStepPass
    : public zero::impl::ZeroVerifyTrainStepPassBase<ZeroVerifyTrainStepPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> step = lookupTrainStep(getOperation(), entry);
    if (failed(step) || failed(verifyTrainStep(*step, ignoreUnusedParameters)))
      signalPassFailure();
  }
};

} // namespace
