//===- Trace.cpp - Chrome/Perfetto traces of a run ------------------------===//

#include "zero/runtime/Trace.h"

#include "IOSupport.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace zero::runtime {

using nlohmann::json;

static json argsToJson(const std::map<std::string, TraceArg> &args) {
  json value = json::object();
  for (const auto &[key, arg] : args)
    std::visit([&, &key = key](const auto &v) { value[key] = v; }, arg);
  return value;
}

static std::map<std::string, TraceArg> argsFromJson(const json &value) {
  std::map<std::string, TraceArg> args;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it->is_number_integer())
      args[it.key()] = it->get<int64_t>();
    else if (it->is_number())
      args[it.key()] = it->get<double>();
    else if (it->is_string())
      args[it.key()] = it->get<std::string>();
  }
  return args;
}

static json eventToJson(const TraceEvent &event) {
  json value = {{"name", event.name},  {"cat", event.category},
                {"rank", event.rank},  {"stream", event.stream},
                {"ts", event.startUs}, {"dur", event.durationUs}};
  if (!event.args.empty())
    value["args"] = argsToJson(event.args);
  return value;
}

Status writeChromeTrace(OutputFile &file,
                        const std::vector<TraceEvent> &events) {
  // Thread ids by sorted stream name, so that a stream has the same tid on
  // every rank and the viewer lists the streams in the same order.
  std::set<std::string> streamNames;
  std::map<int, std::set<std::string>> streamsOfRank;
  for (const TraceEvent &event : events) {
    streamNames.insert(event.stream);
    streamsOfRank[event.rank].insert(event.stream);
  }
  std::map<std::string, int> tids;
  for (const std::string &name : streamNames)
    tids.emplace(name, static_cast<int>(tids.size()) + 1);

  json traceEvents = json::array();
  for (const auto &[rank, streams] : streamsOfRank) {
    traceEvents.push_back(
        {{"name", "process_name"},
         {"ph", "M"},
         {"pid", rank},
         {"args", {{"name", "rank " + std::to_string(rank)}}}});
    traceEvents.push_back({{"name", "process_sort_index"},
                           {"ph", "M"},
                           {"pid", rank},
                           {"args", {{"sort_index", rank}}}});
    for (const std::string &stream : streams) {
      traceEvents.push_back({{"name", "thread_name"},
                             {"ph", "M"},
                             {"pid", rank},
                             {"tid", tids[stream]},
                             {"args", {{"name", stream}}}});
      traceEvents.push_back({{"name", "thread_sort_index"},
                             {"ph", "M"},
                             {"pid", rank},
                             {"tid", tids[stream]},
                             {"args", {{"sort_index", tids[stream]}}}});
    }
  }
  for (const TraceEvent &event : events) {
    json value = {{"name", event.name},
                  {"cat", event.category},
                  {"ph", "X"},
                  {"pid", event.rank},
                  {"tid", tids[event.stream]},
                  {"ts", event.startUs},
                  {"dur", event.durationUs}};
    if (!event.args.empty())
      value["args"] = argsToJson(event.args);
    traceEvents.push_back(std::move(value));
  }
  json trace = {{"traceEvents", std::move(traceEvents)},
                {"displayTimeUnit", "ms"}};

  std::string text;
  try {
    // Replace invalid UTF-8 in names rather than fail the whole trace.
    text = trace.dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const json::exception &error) {
    return ZERO_ERROR(kInvalidArgument,
                      file.path() +
                          ": cannot serialize the trace: " + error.what());
  }
  text += '\n';

  return file.write(text);
}

Status writeChromeTrace(const std::string &path,
                        const std::vector<TraceEvent> &events) {
  StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::open(path);
  if (!file.isOk())
    return file.status();
  ZERO_RETURN_IF_ERROR(writeChromeTrace(**file, events));
  return (*file)->commit();
}

std::string serializeTraceEvents(const std::vector<TraceEvent> &events) {
  json array = json::array();
  for (const TraceEvent &event : events)
    array.push_back(eventToJson(event));
  // CBOR: compact, and exact for the doubles.
  std::vector<std::uint8_t> bytes = json::to_cbor(array);
  return std::string(bytes.begin(), bytes.end());
}

StatusOr<std::vector<TraceEvent>>
deserializeTraceEvents(const std::string &bytes) {
  json array = json::from_cbor(bytes, /*strict=*/true,
                               /*allow_exceptions=*/false);
  if (array.is_discarded())
    return ZERO_ERROR(kInvalidArgument,
                      "trace events: not a serialized event list (" +
                          std::to_string(bytes.size()) + " bytes)");
  if (!array.is_array())
    return ZERO_ERROR(kInvalidArgument,
                      "trace events: expected an array, got " +
                          std::string(array.type_name()));
  std::vector<TraceEvent> events;
  events.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    const json &value = array[i];
    std::string where = "trace events[" + std::to_string(i) + "]";
    if (!value.is_object())
      return ZERO_ERROR(kInvalidArgument, where + ": expected an object");
    auto field = [&](const char *key,
                     bool (json::*isType)() const noexcept) -> const json * {
      auto it = value.find(key);
      return it != value.end() && ((*it).*isType)() ? &*it : nullptr;
    };
    const json *name = field("name", &json::is_string);
    const json *category = field("cat", &json::is_string);
    const json *rank = field("rank", &json::is_number_integer);
    const json *stream = field("stream", &json::is_string);
    const json *start = field("ts", &json::is_number);
    const json *duration = field("dur", &json::is_number);
    const char *missing = !name       ? "name"
                          : !category ? "cat"
                          : !rank     ? "rank"
                          : !stream   ? "stream"
                          : !start    ? "ts"
                          : !duration ? "dur"
                                      : nullptr;
    if (missing)
      return ZERO_ERROR(kInvalidArgument, where + ": '" + missing +
                                              "' is missing or has the wrong "
                                              "type");
    TraceEvent event;
    event.name = name->get<std::string>();
    event.category = category->get<std::string>();
    event.rank = rank->get<int>();
    event.stream = stream->get<std::string>();
    event.startUs = start->get<double>();
    event.durationUs = duration->get<double>();
    if (auto it = value.find("args"); it != value.end() && it->is_object())
      event.args = argsFromJson(*it);
    events.push_back(std::move(event));
  }
  return events;
}

} // namespace zero::runtime
