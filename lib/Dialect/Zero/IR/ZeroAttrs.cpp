//===- ZeroAttrs.cpp - zero dialect attributes ----------------------------===//

#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::zero;

#include "zero/Dialect/Zero/IR/ZeroEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroAttrs.cpp.inc"

void ZeroDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zero/Dialect/Zero/IR/ZeroAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

std::optional<int64_t> zero::getCheckedNumElements(ArrayRef<int64_t> shape) {
  std::optional<int64_t> numel = 1;
  for (int64_t size : shape) {
    if (size < 0)
      return std::nullopt;
    numel = llvm::checkedMul(*numel, size);
    if (!numel)
      return std::nullopt;
  }
  return numel;
}

int64_t LayoutAttr::getDefaultPaddedNumel(ArrayRef<int64_t> shape,
                                          int64_t worldSize) {
  // Invalid inputs get a value that the verifier rejects with a clear reason.
  std::optional<int64_t> numel = getCheckedNumElements(shape);
  if (!numel || worldSize < 1)
    return numel.value_or(0);
  std::optional<int64_t> padded =
      llvm::checkedMul(llvm::divideCeilSigned(*numel, worldSize), worldSize);
  return padded.value_or(*numel);
}

int64_t LayoutAttr::getNumel() const {
  return *getCheckedNumElements(getShape());
}

int64_t LayoutAttr::getShardNumel() const {
  return getPaddedNumel() / getWorldSize();
}

RankedTensorType LayoutAttr::getFullType(Type elementType) const {
  return RankedTensorType::get(getShape(), elementType);
}

RankedTensorType LayoutAttr::getShardType(Type elementType) const {
  return RankedTensorType::get({getShardNumel()}, elementType);
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, int64_t worldSize,
                                 int64_t paddedNumel) {
  if (worldSize < 1)
    return emitError() << "world_size must be at least 1, but is " << worldSize;
  if (llvm::any_of(shape, [](int64_t size) { return size < 0; }))
    return emitError() << "shape must have static, non-negative sizes";
  std::optional<int64_t> numel = getCheckedNumElements(shape);
  if (!numel)
    return emitError() << "element count of the shape overflows int64";
  if (paddedNumel < *numel)
    return emitError() << "padded_numel " << paddedNumel
                       << " is smaller than the element count " << *numel;
  if (paddedNumel % worldSize != 0)
    return emitError() << "padded_numel " << paddedNumel
                       << " is not a multiple of world_size " << worldSize;
  return success();
}

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  int64_t worldSize;
  if (parser.parseLess() || parser.parseKeyword("shape") ||
      parser.parseEqual() ||
      parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square,
          [&] { return parser.parseInteger(shape.emplace_back()); }) ||
      parser.parseComma() || parser.parseKeyword("world_size") ||
      parser.parseEqual() || parser.parseInteger(worldSize))
    return {};
  std::optional<int64_t> paddedNumel;
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("padded_numel") || parser.parseEqual() ||
       parser.parseInteger(paddedNumel.emplace())))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(), shape,
      worldSize, paddedNumel.value_or(getDefaultPaddedNumel(shape, worldSize)));
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << "<shape = [";
  llvm::interleaveComma(getShape(), printer);
  printer << "], world_size = " << getWorldSize();
  // The default is implied, so that equal layouts print alike.
  if (getPaddedNumel() != getDefaultPaddedNumel(getShape(), getWorldSize()))
    printer << ", padded_numel = " << getPaddedNumel();
  printer << ">";
}

//===----------------------------------------------------------------------===//
// QuantizedAttr
//===----------------------------------------------------------------------===//

std::optional<int64_t> zero::getPackedBlockBytes(int64_t numel, int64_t block,
                                                 int64_t bits) {
  if (numel < 0 || block < 1 || bits < 1)
    return std::nullopt;
  std::optional<int64_t> scales =
      llvm::checkedMul(llvm::divideCeilSigned(numel, block), int64_t(4));
  std::optional<int64_t> valueBits = llvm::checkedMul(numel, bits);
  if (!scales || !valueBits)
    return std::nullopt;
  return llvm::checkedAdd(*scales, llvm::divideCeilSigned(*valueBits, 8));
}

LogicalResult
QuantizedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t bits, int64_t blockSize) {
  // Stored quantized values are int8, as qwZ's gathers send them.
  if (bits != 8)
    return emitError() << "#zero.quantized stores 8-bit values, got bits = "
                       << bits;
  if (blockSize < 1)
    return emitError() << "#zero.quantized block_size must be at least 1, "
                          "got "
                       << blockSize;
  return success();
}

QuantizedAttr QuantizedAttr::ofType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<QuantizedAttr>(tensor.getEncoding())
                : QuantizedAttr();
}
