//===- Gemm.cpp - linalg.matmul and batch_matmul as GEMMs -----------------===//

#include "Gemm.h"

#include <string>
#include <vector>

namespace zero::runtime {

namespace {

using Maps = std::vector<std::vector<int64_t>>;

std::string formatMaps(const Maps &maps) {
  std::string text = "[";
  for (size_t i = 0; i < maps.size(); ++i) {
    text += i ? ", [" : "[";
    for (size_t j = 0; j < maps[i].size(); ++j)
      text += (j ? ", " : "") + std::to_string(maps[i][j]);
    text += "]";
  }
  return text + "]";
}

} // namespace

StatusOr<GemmLayout> getGemmLayout(const OpRecord &inst) {
  if (!inst.fields.has(Field::IndexingMaps))
    return GemmLayout();
  const bool batched = inst.code() == OpCode::BatchMatmul;
  const Maps &maps = inst.fields.getIntListList(Field::IndexingMaps);
  if (std::optional<GemmLayout> layout = readGemmMaps(maps, batched))
    return *layout;
  return ZERO_ERROR(kInvalidArgument,
                    "indexing_maps " + formatMaps(maps) +
                        " are not a GEMM's: expected " +
                        formatMaps(getDefaultGemmMaps(batched)) +
                        " with A's or B's two loops swapped at most");
}

StatusOr<bool> roundsOperandsToTf32(const OpRecord &inst) {
  if (!inst.fields.has(Field::RoundOperands))
    return false;
  const std::string &type = inst.fields.getString(Field::RoundOperands);
  if (type == "tf32")
    return true;
  return ZERO_ERROR(kInvalidArgument, "round_operands '" + type +
                                          "': the one rounding a GEMM takes "
                                          "is 'tf32'");
}

GemmShape getGemmShape(const OpRecord &inst, const ValueTable &values) {
  GemmShape shape;
  StatusOr<GemmLayout> layout = getGemmLayout(inst);
  if (layout.isOk())
    shape.layout = *layout;
  const ValueInfo &a = values.values[inst.operands[0]];
  const ValueInfo &c = values.values[inst.operands[2]];
  const size_t o = inst.code() == OpCode::BatchMatmul ? 1 : 0;
  shape.batch = o ? a.shape[0] : 1;
  shape.m = c.shape[o];
  shape.n = c.shape[o + 1];
  shape.k = a.shape[shape.layout.transposeA ? o : o + 1];
  return shape;
}

} // namespace zero::runtime
