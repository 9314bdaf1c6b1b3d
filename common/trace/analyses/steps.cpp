// See steps.h.
#include "trace/analyses/steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "base/error.h"
#include "trace/text/text.h"

namespace ladder {

std::vector<StepStats> step_stats(const TraceIndex& index) {
  const Trace& trace = index.trace();
  std::vector<StepStats> out;
  for (const TraceIndex::Step& s : index.steps()) {
    StepStats st;
    st.name = s.name;
    st.ts_ns = s.ts_ns;
    st.dur_ns = s.end_ns - s.ts_ns;
    out.push_back(st);
  }
  // Launch and sync calls count for the step they were made in, if they also ended in it.
  for (int i = 0; i < static_cast<int>(trace.events.size()); ++i) {
    const Event& e = trace.events[i];
    const int k = index.step_of(i);
    if (k < 0 || !is_api_call(e.cat) || e.end_ns() > index.steps()[k].end_ns) continue;
    if (is_launch_call(e)) out[k].launch_ns += e.dur_ns;
    if (is_sync_call(e)) out[k].sync_ns += e.dur_ns;
  }
  for (size_t k = 0; k < out.size(); ++k) {
    StepStats& st = out[k];
    for (int i : index.gpu_activities(static_cast<int>(k))) {
      st.gpu_events.push_back(&trace.events[i]);
      if (trace.events[i].cat == Cat::Kernel) st.kernels++;
    }
    // Busy time is the union of the intervals: two overlapping kernels (two streams) do not count twice.
    int64_t covered_until = INT64_MIN;
    for (const Event* g : st.gpu_events) {
      const int64_t start = std::max(g->ts_ns, covered_until);
      if (g->end_ns() > start) st.gpu_busy_ns += g->end_ns() - start;
      covered_until = std::max(covered_until, g->end_ns());
    }
  }
  return out;
}

std::vector<StepStats> step_stats(const Trace& trace) { return step_stats(TraceIndex(trace)); }

void check_step_index(const TraceIndex& index, int k) {
  if (k < -1 || k >= static_cast<int>(index.steps().size())) {
    throw UsageError(fmt::format("step index {}: the trace holds {} step{}", k, index.steps().size(),
                                 index.steps().size() == 1 ? "" : "s"));
  }
}

int find_step(const TraceIndex& index, const std::string& step, const std::string& trace_name) {
  const auto& steps = index.steps();
  if (step.empty()) return -1;
  const std::string want = step.find_first_not_of("0123456789") == std::string::npos ? "ProfilerStep#" + step : step;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].event >= 0 && steps[k].name == want) return static_cast<int>(k);
  }
  std::string there;
  for (const auto& s : steps) {
    if (s.event >= 0) there += (there.empty() ? "" : ", ") + printable(s.name);
  }
  throw TraceError(fmt::format("no step '{}' in {}: {}", printable(step), trace_name,
                               there.empty() ? "it has no ProfilerStep (one window over the whole trace)"
                                             : "its steps are " + there));
}

Trace step_trace(const TraceIndex& index, int k) {
  check_step_index(index, k);
  if (k < 0) throw UsageError("step_trace: a step, not -1");
  Trace t = index.trace();
  const auto& s = index.steps()[static_cast<size_t>(k)];
  t.events.clear();
  const auto& all = index.trace().events;
  for (size_t i = 0; i < all.size(); ++i) {
    const Event& e = all[i];
    const bool in = is_gpu_activity(e.cat) ? index.step_of(static_cast<int>(i)) == k
                                           : e.ts_ns >= s.ts_ns && e.ts_ns <= s.end_ns;
    if (in) t.events.push_back(e);
  }
  t.memory.clear();
  for (const MemoryRecord& m : index.trace().memory) {
    if (m.ts_ns >= s.ts_ns && m.ts_ns <= s.end_ns) t.memory.push_back(m);
  }
  return t;
}

}  // namespace ladder
