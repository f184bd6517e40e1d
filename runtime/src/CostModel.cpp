//===- CostModel.cpp - printing the cost model's explanation --------------===//
//
// The model itself is the CUDA backend's (cuda/CostModel.cpp); this is the
// part every build has.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/CostModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace zero::runtime {

std::string formatCostExplanation(const CostExplanation &explanation,
                                  size_t heaviest) {
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
  if (heaviest == 0 || explanation.plan.empty())
    return text;
  // The launches that take the longest, longest first (stream order among
  // equals): where the step's time goes.
  std::vector<const CostLaunch *> order;
  for (const CostLaunch &launch : explanation.plan)
    order.push_back(&launch);
  std::stable_sort(
      order.begin(), order.end(),
      [](const CostLaunch *a, const CostLaunch *b) { return a->ms > b->ms; });
  order.resize(std::min(order.size(), heaviest));
  std::snprintf(line, sizeof(line),
                "\nthe %zu heaviest launches\n%10s %-16s %9s  %s\n",
                order.size(), "ms", "category", "GB", "first instruction");
  text += line;
  for (const CostLaunch *launch : order) {
    std::string what = launch->path + " " + launch->op;
    if (launch->points.size() > 1)
      what += " and " + std::to_string(launch->points.size() - 1) + " more";
    if (launch->times > 1)
      what += ", " + std::to_string(launch->times) + " times";
    if (!launch->loc.empty())
      what += " at " + launch->loc;
    std::snprintf(line, sizeof(line), "%10.3f %-16s %9.3f  ", launch->ms,
                  launch->category.c_str(), launch->bytes * 1e-9);
    text += line + what + "\n";
  }
  return text;
}

std::string costExplanationToJson(const CostExplanation &explanation) {
  auto figures = [](const std::vector<DeviceFigure> &list) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const DeviceFigure &figure : list)
      object[figure.name] = figure.value;
    return object;
  };
  nlohmann::ordered_json categories = nlohmann::ordered_json::object();
  for (const auto &[name, c] : explanation.categories)
    categories[name] = {{"launches", c.launches},
                        {"flops", c.flops},
                        {"bytes", c.bytes},
                        {"ms", c.ms}};
  nlohmann::ordered_json plan = nlohmann::ordered_json::array();
  for (const CostLaunch &launch : explanation.plan)
    plan.push_back({{"category", launch.category},
                    {"path", launch.path},
                    {"op", launch.op},
                    {"loc", launch.loc},
                    {"points", launch.points},
                    {"times", launch.times},
                    {"bytes", launch.bytes},
                    {"ms", launch.ms},
                    {"fixed_ms", launch.fixedMs},
                    {"bound", launch.bound}});
  nlohmann::ordered_json json = {{"device", explanation.device},
                                 {"total_ms", explanation.totalMs},
                                 {"compute_ms", explanation.computeMs},
                                 {"comm_ms", explanation.commMs},
                                 {"launches", explanation.launches},
                                 {"figures", figures(explanation.figures)},
                                 {"settings", figures(explanation.settings)},
                                 {"categories", categories},
                                 {"plan", plan}};
  return json.dump(2) + "\n";
}

} // namespace zero::runtime
