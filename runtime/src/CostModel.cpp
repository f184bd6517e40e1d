//===- CostModel.cpp - printing the cost model's explanation --------------===//
//
// The model itself is the CUDA backend's (cuda/CostModel.cpp); this is the
// part every build has.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/CostModel.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace zero::runtime {

std::string formatCostExplanation(const CostExplanation &explanation) {
  std::string text;
  char line[160];
  std::snprintf(line, sizeof(line), "%-22s %9s %12s %12s %10s\n",
                "category", "launches", "GFLOP", "GB", "ms");
  text += line;
  for (const auto &[name, c] : explanation.categories) {
    std::snprintf(line, sizeof(line), "%-22s %9lld %12.1f %12.3f %10.2f\n",
                  name.c_str(), static_cast<long long>(c.launches),
                  c.flops * 1e-9, c.bytes * 1e-9, c.ms);
    text += line;
  }
  std::snprintf(line, sizeof(line),
                "%-22s %9lld %12s %12s %10.2f  (%s; compute stream %.2f ms, "
                "comm %.2f ms)\n",
                "total", static_cast<long long>(explanation.launches), "", "",
                explanation.totalMs, explanation.device.c_str(),
                explanation.computeMs, explanation.commMs);
  text += line;
  return text;
}

std::string costExplanationToJson(const CostExplanation &explanation) {
  nlohmann::ordered_json categories = nlohmann::ordered_json::object();
  for (const auto &[name, c] : explanation.categories)
    categories[name] = {{"launches", c.launches},
                        {"flops", c.flops},
                        {"bytes", c.bytes},
                        {"ms", c.ms}};
  nlohmann::ordered_json json = {{"device", explanation.device},
                                 {"total_ms", explanation.totalMs},
                                 {"compute_ms", explanation.computeMs},
                                 {"comm_ms", explanation.commMs},
                                 {"launches", explanation.launches},
                                 {"categories", categories}};
  return json.dump(2) + "\n";
}

} // namespace zero::runtime
