//===- TrainStep.h - the training-step function signature ------*- C++ -*-===//
//
// Declares the parameters and data of a model and creates `@train_step` with
// the signature of docs/TrainingStepIR.md: parameters (`zero.param`), then data
// (`zero.data`); results the loss (`zero.loss`), then one gradient per
// parameter (`zero.grad`) in parameter order and of the parameter's type.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TOOLS_ZERO_MODEL_TRAINSTEP_H
#define ZERO_TOOLS_ZERO_MODEL_TRAINSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir {
namespace zero_model {

class TrainStep {
public:
  explicit TrainStep(FloatType floatType) : floatType(floatType) {}

  FloatType getFloatType() const { return floatType; }

  /// Declares the next parameter, of the float type.
  void addParam(StringRef name, ArrayRef<int64_t> shape);
  /// Declares the next data argument; all data follows all parameters.
  /// `bound`, for integer data, is the exclusive upper bound of its values
  /// (`zero.data_bound`: the vocabulary, the classes).
  void addData(StringRef name, ArrayRef<int64_t> shape, Type elementType,
               std::optional<int64_t> bound = std::nullopt);

  /// Marks every parameter whose name matches one of the glob `patterns`
  /// `zero.frozen`: it gets no gradient (LoRA's frozen base weights). Call
  /// before `create`. Returns an error message for the first pattern that
  /// is invalid or matches no parameter.
  std::optional<std::string> freeze(ArrayRef<std::string> patterns);

  /// Number of scalars in all parameters.
  int64_t getNumParamElements() const;

  /// Creates `func.func @train_step` at the end of `module` and sets the
  /// insertion point of `b` to the start of its body.
  func::FuncOp create(OpBuilder &b, ModuleOp module, Location loc);

  /// The entry block arguments; only valid after `create`.
  Value param(StringRef name) const;
  Value data(StringRef name) const;

  /// Records the gradient of parameter `name`.
  void setGrad(StringRef name, Value grad);

  /// Returns the loss and the gradients; every parameter that is not frozen
  /// needs a gradient. The backward ops of frozen parameters alone go.
  void finish(OpBuilder &b, Location loc, Value loss);

private:
  struct Arg {
    std::string name;
    RankedTensorType type;
    std::optional<int64_t> bound;
    bool frozen = false;
  };

  FloatType floatType;
  SmallVector<Arg> params, dataArgs;
  llvm::StringMap<unsigned> paramIndex, dataIndex;
  SmallVector<Value> grads;
  func::FuncOp func;
  Block *entry = nullptr;
};

} // namespace zero_model
} // namespace mlir

#endif // ZERO_TOOLS_ZERO_MODEL_TRAINSTEP_H
