// See critical_path.h.
#include "trace/analyses/critical_path.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "trace/analyses/communication.h"
#include "trace/analyses/steps.h"

namespace ladder {

std::vector<PathEdge> critical_path(const TraceIndex& index, int step) {
  check_step_index(index, step);
  std::vector<PathEdge> out;
  for (int k = 0; k < static_cast<int>(index.steps().size()); ++k) {
    if (step >= 0 && k != step) continue;
    const TraceIndex::Step& s = index.steps()[static_cast<size_t>(k)];
    // The step's activities by stream, in start order, and where each one is in its stream.
    std::map<std::pair<int64_t, int64_t>, std::vector<int>> streams;
    std::unordered_map<int, int> before;  // an activity -> the one before it on its stream in the step, or -1
    int last = -1;
    for (int i : index.gpu_activities(k)) {
      std::vector<int>& v = streams[{index.event(i).pid, index.event(i).tid}];
      before[i] = v.empty() ? -1 : v.back();
      v.push_back(i);
      if (last < 0 || index.event(i).end_ns() > index.event(last).end_ns()) last = i;
    }
    std::vector<PathEdge> path;  // from the end back
    // The path covers [step start, end) once: each edge takes the time from where it starts to `cursor`, the start of
    // the edge after it (an activity that overlaps the next one on its stream counts up to that one's start).
    int64_t cursor = last >= 0 ? index.event(last).end_ns() : s.end_ns;
    auto add = [&](int event, const char* bound_by, int64_t from) {
      from = std::max(from, s.ts_ns);
      if (from < cursor) path.push_back(PathEdge{k, event, bound_by, cursor - from});
      cursor = std::min(cursor, from);
    };
    if (last < 0) add(-1, "cpu_bound", s.ts_ns);
    for (int cur = last; cur >= 0;) {
      const Event& a = index.event(cur);
      add(cur, is_comm_kernel(a) ? "gpu_communication_bound" : "gpu_compute_bound", a.ts_ns);
      const int prev = before[cur];
      const int launch = index.launch_of(cur);
      if (prev >= 0 && (launch < 0 || index.event(prev).end_ns() >= index.event(launch).end_ns())) {
        add(cur, "gpu_kernel_kernel_overhead", index.event(prev).end_ns());
        cur = prev;
        continue;
      }
      if (launch >= 0) add(launch, "gpu_kernel_launch_overhead", index.event(launch).ts_ns);
      add(-1, "cpu_bound", s.ts_ns);
      break;
    }
    out.insert(out.end(), path.rbegin(), path.rend());
  }
  return out;
}

Table critical_path_table(const std::vector<PathEdge>& edges, const TraceIndex& index) {
  Table t;
  t.name = "critical_path";
  const size_t step = t.add("step", TableColumn::Text), event = t.add("event", TableColumn::Text),
               bound = t.add("bound_by", TableColumn::Text), dur = t.add("duration", TableColumn::Float);
  for (const PathEdge& e : edges) {
    t.columns[step].texts.push_back(index.steps()[static_cast<size_t>(e.step)].name);
    t.columns[event].texts.push_back(e.event >= 0 ? index.event(e.event).name : std::string());
    t.columns[bound].texts.push_back(e.bound_by);
    t.columns[dur].floats.push_back(static_cast<double>(e.ns) / 1e3);
  }
  return t;
}

}  // namespace ladder
