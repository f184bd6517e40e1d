//===- Json.cpp - the one parser of the runtime's untrusted JSON ----------===//

#include "Json.h"

#include <set>
#include <vector>

namespace zero::runtime::io {

using nlohmann::json;

namespace {
/// Thrown out of the parser's callback to stop at the first violation: the
/// parser unwinds cleanly (it holds its state in RAII members).
struct Refusal {
  std::string reason;
};
} // namespace

StatusOr<json> parseJson(const std::string &text, const std::string &name,
                         const std::string &what, const JsonLimits &limits) {
  auto refuse = [&](const std::string &reason) {
    return ZERO_ERROR(kInvalidArgument, name + ": " + what + ": " + reason);
  };
  if (text.size() > limits.maxBytes)
    return refuse(std::to_string(text.size()) + " bytes, more than the " +
                  std::to_string(limits.maxBytes) + " bytes allowed");
  // One set of keys per open object, where duplicates are refused.
  std::vector<std::set<std::string>> openObjects;
  auto callback = [&](int depth, json::parse_event_t event,
                      json &parsed) -> bool {
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start:
      // `depth` counts the containers around this one.
      if (depth >= limits.maxDepth)
        throw Refusal{"nested deeper than " + std::to_string(limits.maxDepth) +
                      " levels of arrays and objects"};
      if (event == json::parse_event_t::object_start &&
          limits.rejectDuplicateKeys)
        openObjects.emplace_back();
      break;
    case json::parse_event_t::object_end:
      if (limits.rejectDuplicateKeys && !openObjects.empty())
        openObjects.pop_back();
      break;
    case json::parse_event_t::key:
      if (limits.rejectDuplicateKeys && !openObjects.empty() &&
          !openObjects.back().insert(parsed.get<std::string>()).second)
        throw Refusal{"the key '" + parsed.get<std::string>() +
                      "' appears twice in one object"};
      break;
    default:
      break;
    }
    return true;
  };
  try {
    return json::parse(text, callback, /*allow_exceptions=*/true);
  } catch (const Refusal &refusal) {
    return refuse(refusal.reason);
  } catch (const json::exception &error) {
    return refuse(error.what());
  }
}

} // namespace zero::runtime::io
