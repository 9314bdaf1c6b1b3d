// A structural checker for Chrome/Kineto trace JSON, written from the rules Perfetto's importer applies:
//  - every "X" slice has a numeric ts and a dur >= 0;
//  - "X" slices on one (pid, tid) nest strictly: two slices either contain one another or do not overlap. No
//    allowance, on any lane: Perfetto drops a slice that partly overlaps the one before it on its row
//    (slice_drop_overlapping_complete_event), so a kernel that starts before the previous one on its stream ended
//    must be on a row of its own (the writer's overlap rows, trace/model/overlap.h);
//  - a flow start "s" lies inside an "X" slice on its own pid/tid (else Perfetto drops the arrow);
//  - a flow end "f" with "bp":"e" sits at the start of an "X" slice on its pid/tid (the kernel it points at);
//  - flow ids are not reused, and (for our traces) every "s" has its "f" and the other way round.
// Events with string pids or tids (Kineto's bookkeeping lanes) are ignored. Used by the CPU tests on our traces and
// on torch.profiler's, and by the GPU test on a live one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace ladder::testing {

// Microseconds (as a JSON double) to integer ns, exact for the ts of a Kineto trace (see json_write.cpp).
inline int64_t json_us_to_ns(double us) {
  const double whole = std::floor(us);
  return static_cast<int64_t>(whole) * 1000 + std::llround((us - whole) * 1000.0);
}

// How Perfetto turns a JSON ts or dur into ns: the double times 1000, rounded (checked on its v52 trace processor).
// From a large base that is 1 ns off for some values (a double's step at 7.9e12 us is 0.98 ns), which is enough to
// make two touching slices overlap; the checker reads times the same way so that it sees what Perfetto sees.
inline int64_t perfetto_ns(double us) { return std::llround(us * 1000.0); }

struct CheckOptions {
  // torch.profiler writes an "s" on cudaDeviceSynchronize with no "f", and an "f" on cudaFuncGetAttributes with no
  // "s": allowed for its traces, not for ours.
  bool allow_unpaired_flows = false;
};

// Returns one line per problem found; empty means the trace passes.
inline std::vector<std::string> check_trace(const nlohmann::json& doc, CheckOptions opt = {}) {
  std::vector<std::string> problems;
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    return {"no traceEvents list"};
  }
  struct Slice {
    int64_t ts, end;
    std::string name;
  };
  using Lane = std::pair<int64_t, int64_t>;
  std::map<Lane, std::vector<Slice>> lanes;
  struct Flow {
    char ph;
    int64_t id, pid, tid, ts;
  };
  std::vector<Flow> flows;
  for (const auto& e : doc["traceEvents"]) {
    if (!e.is_object()) {
      problems.push_back("an event is not an object");
      continue;
    }
    if (!e.contains("pid") || !e.contains("tid") || !e["pid"].is_number_integer() || !e["tid"].is_number_integer()) {
      continue;
    }
    const std::string ph = e.value("ph", "");
    const Lane lane{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
    if (ph == "X") {
      if (!e.contains("ts") || !e["ts"].is_number() || !e.contains("dur") || !e["dur"].is_number()) {
        problems.push_back("X event '" + e.value("name", "") + "' lacks a numeric ts or dur");
        continue;
      }
      const int64_t ts = perfetto_ns(e["ts"].get<double>()), dur = perfetto_ns(e["dur"].get<double>());
      if (dur < 0) problems.push_back("X event '" + e.value("name", "") + "' has a negative dur");
      lanes[lane].push_back(Slice{ts, ts + dur, e.value("name", "")});
    } else if (ph == "s" || ph == "f") {
      if (!e.contains("id") || !e["id"].is_number_integer() || !e.contains("ts") || !e["ts"].is_number()) {
        problems.push_back("flow event without a numeric id or ts");
        continue;
      }
      if (e.value("cat", "") != "ac2g" || e.value("name", "") != "ac2g") problems.push_back("flow not named ac2g");
      if (ph == "f" && e.value("bp", "") != "e") problems.push_back("flow end without \"bp\": \"e\"");
      flows.push_back(
          Flow{ph[0], e["id"].get<int64_t>(), lane.first, lane.second, perfetto_ns(e["ts"].get<double>())});
    }
  }

  // Strict nesting per lane: walk slices by start (longest first), keeping the chain of open ancestors.
  for (auto& [lane, slices] : lanes) {
    std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      return std::make_tuple(a.ts, -(a.end - a.ts)) < std::make_tuple(b.ts, -(b.end - b.ts));
    });
    std::vector<const Slice*> open;
    for (const Slice& s : slices) {
      while (!open.empty() && open.back()->end <= s.ts) open.pop_back();
      if (!open.empty() && s.end > open.back()->end) {
        problems.push_back("slices overlap without nesting on pid " + std::to_string(lane.first) + " tid " +
                           std::to_string(lane.second) + ": '" + open.back()->name + "' and '" + s.name + "'");
      }
      open.push_back(&s);
    }
  }

  // Flows: where they sit, and that ids pair up.
  std::map<int64_t, int> starts, ends;
  for (const Flow& f : flows) {
    const auto it = lanes.find({f.pid, f.tid});
    bool ok = false;
    if (it != lanes.end()) {
      for (const Slice& s : it->second) {
        if (f.ph == 's' ? (s.ts <= f.ts && f.ts <= s.end) : s.ts == f.ts) ok = true;
      }
    }
    const std::string what = std::string(1, f.ph) + " flow " + std::to_string(f.id);
    if (!ok) {
      problems.push_back(
          what + (f.ph == 's' ? " is not inside a slice on its pid/tid" : " does not start a slice on its pid/tid"));
    }
    (f.ph == 's' ? starts : ends)[f.id]++;
  }
  for (const auto& [id, n] : starts) {
    if (n > 1) problems.push_back("flow id " + std::to_string(id) + " starts " + std::to_string(n) + " times");
    if (!ends.count(id) && !opt.allow_unpaired_flows) {
      problems.push_back("flow id " + std::to_string(id) + " has no end");
    }
  }
  for (const auto& [id, n] : ends) {
    if (n > 1) problems.push_back("flow id " + std::to_string(id) + " ends " + std::to_string(n) + " times");
    if (!starts.count(id) && !opt.allow_unpaired_flows) {
      problems.push_back("flow id " + std::to_string(id) + " has no start");
    }
  }
  return problems;
}

}  // namespace ladder::testing
