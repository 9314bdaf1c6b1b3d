// See hta_window.h.
#include "trace/analyses/hta_window.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <unordered_set>

#include "trace/analyses/communication.h"

namespace ladder {

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// The length of the union of [ts, end) over `v`.
int64_t union_ns(std::vector<const Event*> v) {
  std::sort(v.begin(), v.end(), [](const Event* a, const Event* b) { return a->ts_ns < b->ts_ns; });
  int64_t total = 0, from = 0, to = std::numeric_limits<int64_t>::min();
  for (const Event* e : v) {
    if (e->ts_ns > to) {  // HTA merges intervals that touch (ts <= the running end), as this does
      if (to != std::numeric_limits<int64_t>::min()) total += to - from;
      from = e->ts_ns, to = e->end_ns();
    } else {
      to = std::max(to, e->end_ns());
    }
  }
  return to == std::numeric_limits<int64_t>::min() ? 0 : total + (to - from);
}

}  // namespace

std::vector<const Event*> hta_kept_activities(const Trace& trace) {
  std::vector<const Event*> gpu;
  std::set<std::string> step_names;
  int64_t last_step = std::numeric_limits<int64_t>::min();
  for (const Event& e : trace.events) {
    if (is_gpu_activity(e.cat)) {
      gpu.push_back(&e);
    } else if (e.name.find("ProfilerStep") != std::string::npos) {
      step_names.insert(e.name);
      last_step = std::max(last_step, e.ts_ns);
    }
  }
  if (step_names.size() < 2) return gpu;
  std::unordered_set<int64_t> launched;  // correlations of host events that start before the last step
  for (const Event& e : trace.events) {
    if (!is_gpu_activity(e.cat) && e.correlation >= 0 && e.ts_ns < last_step) launched.insert(e.correlation);
  }
  std::vector<const Event*> kept;
  for (const Event* e : gpu) {
    if (e->correlation >= 0 && launched.count(e->correlation)) kept.push_back(e);
  }
  return kept;
}

bool hta_is_compute(const Event& e) {
  const std::string& n = e.name;
  if (is_comm_kernel(e)) return false;  // communication (communication.h: HTA's ^nccl.*Kernel takes the same kernels)
  if (starts_with(n, "Memcpy") || starts_with(n, "Memset") || starts_with(n, "dma")) return false;  // memory
  return n.find("Memcpy") == std::string::npos && n.find("Sync") == std::string::npos;
}

HtaTemporal hta_temporal_breakdown(const std::vector<const Event*>& activities) {
  HtaTemporal t;
  if (activities.empty()) return t;
  int64_t first = activities.front()->ts_ns, last = activities.front()->end_ns();
  std::vector<const Event*> compute;
  for (const Event* e : activities) {
    first = std::min(first, e->ts_ns);
    last = std::max(last, e->end_ns());
    if (hta_is_compute(*e)) compute.push_back(e);
  }
  t.span_ns = last - first;
  t.idle_ns = t.span_ns - union_ns(activities);
  t.compute_ns = union_ns(compute);
  t.non_compute_ns = t.span_ns - t.idle_ns - t.compute_ns;
  return t;
}

}  // namespace ladder
