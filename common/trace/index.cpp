#include "trace/index.h"

#include <algorithm>
#include <tuple>

namespace ladder {

namespace {
bool is_host_range(Cat c) { return c == Cat::UserAnnotation || c == Cat::CpuOp; }
bool is_host_event(const Event& e) { return !is_gpu_cat(e.cat); }
}  // namespace

TraceIndex::TraceIndex(const Trace& trace) : trace_(&trace) {
  const std::vector<Event>& ev = trace.events;
  const int n = static_cast<int>(ev.size());
  step_.assign(n, -1);
  launch_.assign(n, -1);
  op_.assign(n, -1);
  parent_.assign(n, -1);
  children_.resize(n);

  // Steps. They do not overlap (each ends before the next begins), so a binary search by start time finds one.
  for (int i = 0; i < n; ++i) {
    const Event& e = ev[i];
    if (e.cat == Cat::UserAnnotation && e.name.rfind("ProfilerStep#", 0) == 0) {
      steps_.push_back(Step{e.name, i, e.ts_ns, e.end_ns()});
    }
  }
  std::sort(steps_.begin(), steps_.end(), [](const Step& a, const Step& b) { return a.ts_ns < b.ts_ns; });
  if (steps_.empty() && n > 0) {
    whole_trace_ = true;
    Step all{"whole trace", -1, ev[0].ts_ns, ev[0].end_ns()};
    for (const Event& e : ev) {
      all.ts_ns = std::min(all.ts_ns, e.ts_ns);
      all.end_ns = std::max(all.end_ns, e.end_ns());
    }
    steps_.push_back(all);
  }
  gpu_of_step_.resize(steps_.size());

  // Links by correlation (API call <-> GPU activity) and External id (host range that owns it).
  std::unordered_map<int64_t, int> api_by_corr;
  for (int i = 0; i < n; ++i) {
    const Event& e = ev[i];
    if (is_api_call(e.cat) && e.correlation >= 0) api_by_corr.emplace(e.correlation, i);
    if (is_host_range(e.cat) && e.external_id >= 0) host_by_ext_.emplace(e.external_id, i);
  }
  std::unordered_map<int64_t, int> op_by_ext;
  for (int i = 0; i < n; ++i) {
    if (ev[i].cat == Cat::CpuOp && ev[i].external_id >= 0) op_by_ext.emplace(ev[i].external_id, i);
  }
  auto find = [](const std::unordered_map<int64_t, int>& m, int64_t key) {
    auto it = m.find(key);
    return it == m.end() ? -1 : it->second;
  };

  // Host events: the step by time, on any thread of the process that ran the steps.
  const int64_t step_pid = !whole_trace_ && !steps_.empty() ? ev[steps_[0].event].pid : -1;
  for (int i = 0; i < n; ++i) {
    const Event& e = ev[i];
    if (!is_host_event(e)) continue;
    if (whole_trace_ || e.pid == step_pid) step_[i] = step_at(e.ts_ns);
    if (is_api_call(e.cat)) op_[i] = find(op_by_ext, e.external_id);
  }
  // GPU activities: the step of the call that launched them, else of their op, else the step they ran in.
  for (int i = 0; i < n; ++i) {
    const Event& e = ev[i];
    if (!is_gpu_activity(e.cat)) continue;
    if (e.correlation >= 0) launch_[i] = find(api_by_corr, e.correlation);
    int64_t ext = e.external_id;
    if (ext < 0 && launch_[i] >= 0) ext = ev[launch_[i]].external_id;
    op_[i] = find(op_by_ext, ext);
    const int host = launch_[i] >= 0 ? launch_[i] : find(host_by_ext_, ext);
    step_[i] = host >= 0 ? step_[host] : step_at(e.ts_ns);
    if (step_[i] >= 0) gpu_of_step_[step_[i]].push_back(i);
  }
  for (std::vector<int>& g : gpu_of_step_) {
    std::stable_sort(g.begin(), g.end(), [&](int a, int b) { return ev[a].ts_ns < ev[b].ts_ns; });
  }

  // Nesting, per thread: walk each thread's events by start (longest first at equal starts) with a stack of the
  // ranges still open. An event that only partly overlaps the top of the stack closes it: no nesting.
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    if (is_host_event(ev[i])) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const Event &x = ev[a], &y = ev[b];
    return std::make_tuple(x.pid, x.tid, x.ts_ns, -x.dur_ns, a) < std::make_tuple(y.pid, y.tid, y.ts_ns, -y.dur_ns, b);
  });
  std::vector<int> stack;
  for (size_t k = 0; k < order.size(); ++k) {
    const int i = order[k];
    const Event& e = ev[i];
    if (k > 0 && (ev[order[k - 1]].pid != e.pid || ev[order[k - 1]].tid != e.tid)) stack.clear();
    while (!stack.empty() && !(ev[stack.back()].ts_ns <= e.ts_ns && e.end_ns() <= ev[stack.back()].end_ns())) {
      stack.pop_back();
    }
    if (!stack.empty()) {
      parent_[i] = stack.back();
      children_[stack.back()].push_back(i);
    }
    stack.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return std::make_tuple(ev[a].ts_ns, -ev[a].dur_ns) < std::make_tuple(ev[b].ts_ns, -ev[b].dur_ns);
  });
  host_order_ = std::move(order);
}

int TraceIndex::step_at(int64_t t) const {
  auto it = std::upper_bound(steps_.begin(), steps_.end(), t, [](int64_t v, const Step& s) { return v < s.ts_ns; });
  if (it == steps_.begin()) return -1;
  --it;
  return t <= it->end_ns ? static_cast<int>(it - steps_.begin()) : -1;
}

int TraceIndex::host_with_external_id(int64_t ext) const {
  auto it = host_by_ext_.find(ext);
  return it == host_by_ext_.end() ? -1 : it->second;
}

}  // namespace ladder
