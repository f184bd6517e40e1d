//===- ZeroDialect.cpp - zero dialect -------------------------------------===//

#include "zero/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zero;

#include "zero/Dialect/Zero/IR/ZeroOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOpsTypes.cpp.inc"

void ZeroDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "zero/Dialect/Zero/IR/ZeroOps.cpp.inc"
      >();
}

/// The seed is the scalar float constant 1 (by name: the dialect does not
/// depend on arith's).
static LogicalResult verifyBackwardSeed(Operation *op, NamedAttribute attr) {
  auto value = op->getAttrOfType<FloatAttr>("value");
  if (!isa<UnitAttr>(attr.getValue()) ||
      op->getName().getStringRef() != "arith.constant" || !value ||
      !value.getValue().isExactlyValue(1.0))
    return op->emitOpError()
           << "'" << attr.getName().getValue()
           << "' marks the scalar float arith.constant 1.0 that seeds the "
              "backward pass, as a unit attribute";
  return success();
}

LogicalResult ZeroDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == getBackwardSeedAttrName())
    return verifyBackwardSeed(op, attr);
  if (attr.getName() != getRoundOperandsAttrName())
    return success();
  auto type = dyn_cast<TypeAttr>(attr.getValue());
  if (!type || !isa<FloatTF32Type>(type.getValue()))
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be the type tf32, got "
                             << attr.getValue();
  auto isF32 = [](Value v) {
    auto shaped = dyn_cast<ShapedType>(v.getType());
    return shaped && shaped.getElementType().isF32();
  };
  // By name: the dialect does not depend on linalg's.
  StringRef name = op->getName().getStringRef();
  if ((name != "linalg.matmul" && name != "linalg.batch_matmul") ||
      !llvm::all_of(op->getOperands(), isF32))
    return op->emitOpError()
           << "'" << attr.getName().getValue()
           << "' applies to a linalg.matmul or linalg.batch_matmul of f32 "
              "operands and init";
  return success();
}

void ZeroDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "zero/Dialect/Zero/IR/ZeroOpsTypes.cpp.inc"
      >();
}
