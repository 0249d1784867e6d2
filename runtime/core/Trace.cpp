//===- Trace.cpp - what each rank did when, for a timeline viewer ---------===//
#include "runtime/core/Trace.h"

#include <nlohmann/json.hpp>

#include <chrono>

namespace shardc::rt {

int64_t traceClockUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string traceJson(const std::vector<RankEvents> &ranks) {
  nlohmann::json events = nlohmann::json::array();
  for (const RankEvents &rank : ranks) {
    // A metadata event names the rank's row in the viewer.
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", rank.rank},
                      {"args", {{"name", "rank " + std::to_string(rank.rank)}}}});
    for (const TraceEvent &event : *rank.events) {
      nlohmann::json args = nlohmann::json::object();
      for (const auto &[key, value] : event.args)
        args[key] = value;
      events.push_back({{"name", event.name},
                        {"cat", event.category},
                        {"ph", "X"},
                        {"ts", event.startUs},
                        {"dur", event.durationUs},
                        {"pid", 0},
                        {"tid", rank.rank},
                        {"args", std::move(args)}});
    }
  }
  return nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump(1) +
         "\n";
}

} // namespace shardc::rt
