//===- LoopSpace.cpp - the loop nest of map, reduce and generic -----------===//

#include "ops/LoopSpace.h"

namespace zero::runtime::ops {

std::vector<int64_t> getRowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

static LoopOperand makeOperand(const ValueInfo &value,
                               std::vector<int64_t> strides) {
  LoopOperand operand;
  operand.value = value.id;
  operand.dtype = value.dtype;
  operand.strides = std::move(strides);
  operand.numel = value.numel;
  return operand;
}

LoopSpace lowerToLoopSpace(const OpRecord &op, const ValueTable &values) {
  LoopSpace space;
  const std::vector<int64_t> &operands = op.operands;
  auto value = [&](size_t j) -> const ValueInfo & {
    return values.values[operands[j]];
  };
  const size_t numInputs = operands.size() - op.results.size();
  switch (op.code()) {
  case OpCode::Map: {
    const ValueInfo &init = value(operands.size() - 1);
    space.loopSizes = init.shape;
    space.isReduction.assign(init.shape.size(), false);
    const std::vector<int64_t> strides = getRowMajorStrides(init.shape);
    for (size_t i = 0; i < numInputs; ++i)
      space.inputs.push_back(makeOperand(value(i), strides));
    space.outputs.push_back(makeOperand(init, strides));
    break;
  }
  case OpCode::Reduce: {
    const ValueInfo &input = value(0);
    const size_t rank = input.shape.size();
    space.loopSizes = input.shape;
    space.isReduction.assign(rank, false);
    for (int64_t dim : op.fields.getIntList(Field::Dimensions))
      space.isReduction[dim] = true;
    std::vector<int64_t> kept;
    for (size_t d = 0; d < rank; ++d)
      if (!space.isReduction[d])
        kept.push_back(input.shape[d]);
    const std::vector<int64_t> inStrides = getRowMajorStrides(input.shape);
    const std::vector<int64_t> keptStrides = getRowMajorStrides(kept);
    std::vector<int64_t> outStrides;
    for (size_t d = 0, k = 0; d < rank; ++d)
      outStrides.push_back(space.isReduction[d] ? 0 : keptStrides[k++]);
    for (size_t j = 0; j < operands.size(); ++j)
      (j < numInputs ? space.inputs : space.outputs)
          .push_back(
              makeOperand(value(j), j < numInputs ? inStrides : outStrides));
    break;
  }
  case OpCode::Generic: {
    const std::vector<std::vector<int64_t>> &maps =
        op.fields.getIntListList(Field::IndexingMaps);
    for (const std::string &type :
         op.fields.getStringList(Field::IteratorTypes))
      space.isReduction.push_back(type == "reduction");
    const size_t numLoops = space.isReduction.size();
    space.loopSizes.assign(numLoops, 0);
    for (size_t j = 0; j < operands.size(); ++j) {
      const ValueInfo &operand = value(j);
      const std::vector<int64_t> tensorStrides =
          getRowMajorStrides(operand.shape);
      std::vector<int64_t> strides(numLoops, 0);
      for (size_t dim = 0; dim < maps[j].size(); ++dim) {
        strides[maps[j][dim]] = tensorStrides[dim];
        space.loopSizes[maps[j][dim]] = operand.shape[dim];
      }
      (j < numInputs ? space.inputs : space.outputs)
          .push_back(makeOperand(operand, std::move(strides)));
    }
    break;
  }
  default:
    break;
  }
  return space;
}

} // namespace zero::runtime::ops
