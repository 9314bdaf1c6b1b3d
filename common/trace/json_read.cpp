// Reading a trace file, ours or one torch.profiler wrote, back into the event model (see trace.h).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "trace/error.h"
#include "trace/trace.h"

namespace ladder {

namespace {



using json = nlohmann::json;

// Microseconds as a double -> integer nanoseconds, without the rounding error of llround(v * 1000) on large values:
// the whole microseconds are exact in a double, and so is v - floor(v); only the fraction needs rounding.
int64_t us_to_ns(double us) {
  const double whole = std::floor(us);
  return static_cast<int64_t>(whole) * 1000 + std::llround((us - whole) * 1000.0);
}

int64_t get_int(const json& obj, const char* key, int64_t fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return fallback;
  if (it->is_number_float()) return std::llround(it->get<double>());
  return it->get<int64_t>();
}

double get_double(const json& obj, const char* key, double fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return fallback;
  return it->get<double>();
}

// [[1024, 32], [64, 32], []]: one list per input; anything that is not a list of numbers becomes an empty list.
std::vector<std::vector<int64_t>> get_int_lists(const json& obj, const char* key) {
  std::vector<std::vector<int64_t>> out;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return out;
  for (const json& item : *it) {
    std::vector<int64_t> v;
    if (item.is_array()) {
      for (const json& x : item) {
        if (x.is_number()) v.push_back(x.is_number_float() ? std::llround(x.get<double>()) : x.get<int64_t>());
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

void get_triple(const json& obj, const char* key, int out[3]) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return;
  for (size_t i = 0; i < 3 && i < it->size(); ++i) {
    if ((*it)[i].is_number()) out[i] = (*it)[i].get<int>();
  }
}

Event parse_event(const json& j, int64_t base) {
  Event e;
  e.cat = cat_from_name(j.value("cat", ""));
  e.name = j.value("name", "");
  e.pid = j["pid"].get<int64_t>();
  e.tid = j["tid"].get<int64_t>();
  e.ts_ns = base + us_to_ns(j["ts"].get<double>());
  e.dur_ns = std::max<int64_t>(0, us_to_ns(j["dur"].get<double>()));
  auto ait = j.find("args");
  if (ait == j.end() || !ait->is_object()) return e;
  const json& a = *ait;
  e.external_id = get_int(a, "External id", -1);
  e.correlation = get_int(a, "correlation", -1);
  e.cbid = get_int(a, "cbid", -1);
  GpuArgs& g = e.gpu;
  g.device = static_cast<int>(get_int(a, "device", is_gpu_cat(e.cat) ? e.pid : 0));
  g.context = static_cast<int>(get_int(a, "context", 0));
  g.stream = static_cast<int>(get_int(a, "stream", is_gpu_cat(e.cat) ? e.tid : 0));
  g.registers_per_thread = static_cast<int>(get_int(a, "registers per thread", 0));
  g.shared_memory = static_cast<int>(get_int(a, "shared memory", 0));
  g.blocks_per_sm = get_double(a, "blocks per SM", 0);
  g.warps_per_sm = get_double(a, "warps per SM", 0);
  get_triple(a, "grid", g.grid);
  get_triple(a, "block", g.block);
  g.est_occupancy_pct = static_cast<int>(get_int(a, "est. achieved occupancy %", 0));
  g.bytes = get_int(a, "bytes", 0);
  e.input_dims = get_int_lists(a, "Input Dims");
  e.input_strides = get_int_lists(a, "Input Strides");
  auto tit = a.find("Input type");
  if (tit != a.end() && tit->is_array()) {
    for (const json& t : *tit) e.input_types.push_back(t.is_string() ? t.get<std::string>() : std::string());
  }
  return e;
}

DeviceProps parse_device(const json& d) {
  DeviceProps p;
  p.id = static_cast<int>(get_int(d, "id", 0));
  p.name = d.value("name", "");
  p.total_global_mem = get_int(d, "totalGlobalMem", 0);
  p.compute_major = static_cast<int>(get_int(d, "computeMajor", 0));
  p.compute_minor = static_cast<int>(get_int(d, "computeMinor", 0));
  p.max_threads_per_block = static_cast<int>(get_int(d, "maxThreadsPerBlock", 0));
  p.max_threads_per_sm = static_cast<int>(get_int(d, "maxThreadsPerMultiprocessor", 0));
  p.regs_per_block = static_cast<int>(get_int(d, "regsPerBlock", 0));
  p.warp_size = static_cast<int>(get_int(d, "warpSize", 0));
  p.shared_mem_per_block = get_int(d, "sharedMemPerBlock", 0);
  p.num_sms = static_cast<int>(get_int(d, "numSms", 0));
  p.regs_per_sm = static_cast<int>(get_int(d, "regsPerMultiprocessor", 0));
  p.shared_mem_per_block_optin = get_int(d, "sharedMemPerBlockOptin", 0);
  p.shared_mem_per_sm = get_int(d, "sharedMemPerMultiprocessor", 0);
  return p;
}

}  // namespace

Trace load_trace(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw TraceError("cannot read trace " + path + ": " + std::strerror(errno));
  json doc;
  try {
    doc = json::parse(f);
  } catch (const json::exception& ex) {
    throw TraceError("trace " + path + " is not valid JSON: " + ex.what());
  }
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    throw TraceError("trace " + path + " has no \"traceEvents\" list: not a Chrome/Kineto trace");
  }

  Trace trace;
  trace.base_time_ns = get_int(doc, "baseTimeNanoseconds", 0);
  trace.name = doc.value("traceName", "");
  static const std::set<std::string> kLayoutKeys = {"schemaVersion",       "deviceProperties", "displayTimeUnit",
                                                    "baseTimeNanoseconds", "traceEvents",      "traceName"};
  for (const auto& [key, value] : doc.items()) {
    if (!kLayoutKeys.count(key)) trace.metadata[key] = value.dump();
  }
  if (doc.contains("deviceProperties") && doc["deviceProperties"].is_array()) {
    for (const json& d : doc["deviceProperties"]) {
      if (d.is_object()) trace.devices.push_back(parse_device(d));
    }
  }

  std::map<int64_t, std::string> process_names;
  int64_t meta_ts = -1;
  try {
    for (const json& j : doc["traceEvents"]) {
      if (!j.is_object()) continue;
      const std::string ph = j.value("ph", "");
      // Kineto's bookkeeping lanes ("Spans", "Traces", "") have string pids: not part of the program.
      auto pid = j.find("pid"), tid = j.find("tid");
      if (pid == j.end() || tid == j.end() || !pid->is_number_integer() || !tid->is_number_integer()) continue;
      if (ph == "M") {
        if (j.value("name", "") == "process_name" && j.contains("args") && j["args"].contains("name") &&
            j["args"]["name"].is_string()) {
          process_names[pid->get<int64_t>()] = j["args"]["name"].get<std::string>();
        }
        if (j.contains("ts") && j["ts"].is_number() && meta_ts < 0) meta_ts = us_to_ns(j["ts"].get<double>());
        continue;
      }
      if (ph != "X") continue;  // flows are derived from correlation ids, instants carry no duration
      if (!j.contains("ts") || !j["ts"].is_number() || !j.contains("dur") || !j["dur"].is_number()) continue;
      trace.events.push_back(parse_event(j, trace.base_time_ns));
    }
  } catch (const json::exception& ex) {
    throw TraceError("trace " + path + ": malformed event: " + ex.what());
  }

  // The CPU process is the one the host ranges live on.
  for (const Event& e : trace.events) {
    if (e.cat == Cat::UserAnnotation || e.cat == Cat::CpuOp) {
      trace.pid = e.pid;
      break;
    }
  }
  if (process_names.count(trace.pid)) trace.process_name = process_names[trace.pid];
  int64_t lo = 0, hi = 0;
  for (const Event& e : trace.events) {
    if (lo == 0 || e.ts_ns < lo) lo = e.ts_ns;
    hi = std::max(hi, e.end_ns());
  }
  trace.window_start_ns = meta_ts >= 0 ? trace.base_time_ns + meta_ts : lo;
  trace.window_end_ns = hi;
  return trace;
}


}  // namespace ladder
