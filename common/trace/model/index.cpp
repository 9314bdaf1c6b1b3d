#include "trace/model/index.h"

#include <algorithm>
#include <tuple>

namespace ladder {

namespace {
bool is_host_range(Cat c) { return c == Cat::UserAnnotation || c == Cat::CpuOp; }
bool is_host_event(const Event& e) { return !is_gpu_cat(e.cat); }
}  // namespace

// What torch's key_averages() builds its tree from: ops, user ranges, runtime/driver calls, and the profiler's own
// overhead events. Not the python_function events of with_stack=True: torch leaves them out of the tree, and nesting
// ops under them (or them under ops: a Python frame may end after the op that opened inside it) is what printed
// negative self times. The reader keeps no "cat" string for what it does not know, so a Cat::Other event is told
// apart by its lane: the overhead lane has pid -1, Python frames sit on the thread that ran them.
bool is_overhead_event(const Event& e) { return e.cat == Cat::Other && e.pid < 0; }
bool is_tree_event(const Event& e) {
  return !is_gpu_cat(e.cat) && (e.cat != Cat::Other || is_overhead_event(e));
}

TraceIndex::TraceIndex(const Trace& trace) : trace_(&trace) {
  const std::vector<Event>& ev = trace.events;
  const int n = static_cast<int>(ev.size());
  step_.assign(n, -1);
  launch_.assign(n, -1);
  op_.assign(n, -1);
  parent_.assign(n, -1);

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
  api_by_corr.reserve(static_cast<size_t>(n) / 4);
  host_by_ext_.reserve(static_cast<size_t>(n) / 4);
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
  // ranges still open. An event that only partly overlaps the top of the stack closes it: no nesting. Python frames
  // stay out (see is_tree_event). Each event is pushed and popped once: linear after the sort.
  //
  // The profiler's overhead events ("Activity Buffer Request": CUPTI asking for a buffer) are written on a lane of
  // their own, but torch's tree (EventList._populate_cpu_children) files them with the profiled thread's ops, the one
  // that runs the steps, and nests them by the same rule: a long one closes the ops it only partly overlaps and takes
  // the later ones under it as children. So do we, on the thread of the first ProfilerStep. A trace without steps
  // files each under the innermost range that holds it, on whichever thread holds it deepest (below).
  //
  // A runtime or driver call takes, in torch's tree, the thread of the host range that launched it (the one whose
  // External id it carries: Kineto's linked activity); one that no range launched (no External id: the autograd
  // engine's cudaStreamWaitEvent between two backward ops, NCCL's watchdog polling cudaEventQuery) takes the thread
  // that collected the trace (torch's setKinetoTID: RecordFunction::currentThreadId()), taken as the one that runs the
  // steps (a call of another process keeps its own thread). There, in the middle of a step, it is the step's child:
  // on rank 1 of the 2-GPU DDP recording, 14 such calls of the autograd thread (22.9 us) came off ProfilerStep*'s
  // Self CPU, 7.359ms -> 7.336ms as torch's table says.
  const bool steps_thread = !whole_trace_ && !steps_.empty();
  const int64_t main_pid = steps_thread ? ev[steps_[0].event].pid : 0;
  const int64_t main_tid = steps_thread ? ev[steps_[0].event].tid : 0;
  std::vector<int> order, overhead;
  std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int>> keys;  // (pid, tid) of the walk, start, -dur
  for (int i = 0; i < n; ++i) {
    const Event& e = ev[i];
    if (is_overhead_event(e) && !steps_thread) {
      overhead.push_back(i);
    } else if (is_tree_event(e)) {
      int64_t pid = e.pid, tid = e.tid;
      if (is_overhead_event(e)) {
        pid = main_pid, tid = main_tid;
      } else if (steps_thread && is_api_call(e.cat) && e.pid == main_pid) {
        const int launcher = e.external_id >= 0 ? find(host_by_ext_, e.external_id) : -1;
        pid = launcher >= 0 ? ev[launcher].pid : main_pid;
        tid = launcher >= 0 ? ev[launcher].tid : main_tid;
      }
      keys.emplace_back(pid, tid, e.ts_ns, -e.dur_ns, i);
    }
  }
  // Sorted on compact keys, not through indices into the (large) events: a cache miss per comparison otherwise.
  std::sort(keys.begin(), keys.end());
  order.reserve(keys.size() + overhead.size());
  std::vector<int> stack;
  std::vector<size_t> thread_begin;  // where each thread's run starts in `order`
  for (size_t k = 0; k < keys.size(); ++k) {
    const int i = std::get<4>(keys[k]);
    const Event& e = ev[i];
    if (k == 0 || std::get<0>(keys[k - 1]) != std::get<0>(keys[k]) || std::get<1>(keys[k - 1]) != std::get<1>(keys[k])) {
      stack.clear();
      thread_begin.push_back(k);
    }
    if (is_overhead_event(e)) {  // what it interrupted: the innermost open range that holds its start
      for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        if (ev[*it].end_ns() > e.ts_ns) {
          interrupted_[i] = *it;
          break;
        }
      }
    }
    while (!stack.empty() && !(ev[stack.back()].ts_ns <= e.ts_ns && e.end_ns() <= ev[stack.back()].end_ns())) {
      stack.pop_back();
    }
    if (!stack.empty()) parent_[i] = stack.back();
    stack.push_back(i);
    order.push_back(i);
  }
  thread_begin.push_back(order.size());
  for (int i : overhead) {
    const Event& e = ev[i];
    int best = -1;
    for (size_t t = 0; t + 1 < thread_begin.size(); ++t) {
      const auto first = order.begin() + static_cast<long>(thread_begin[t]);
      const auto last = order.begin() + static_cast<long>(thread_begin[t + 1]);
      auto it = std::upper_bound(first, last, e.ts_ns, [&](int64_t v, int j) { return v < ev[j].ts_ns; });
      if (it == first) continue;
      int j = *(it - 1);  // the last event to start at or before e: e's innermost holder is it or one of its parents
      while (j >= 0 && !(ev[j].ts_ns <= e.ts_ns && e.end_ns() <= ev[j].end_ns())) j = parent_[j];
      if (j >= 0 && (best < 0 || ev[j].ts_ns > ev[best].ts_ns)) best = j;
    }
    parent_[i] = best;
    if (best >= 0) interrupted_[i] = best;
  }
  order.insert(order.end(), overhead.begin(), overhead.end());
  // Children lists from the parents, flat: one count, one prefix sum, one fill (no vector per event).
  child_begin_.assign(static_cast<size_t>(n) + 1, 0);
  for (int i : order) {
    if (parent_[i] >= 0) child_begin_[static_cast<size_t>(parent_[i]) + 1]++;
  }
  for (int i = 0; i < n; ++i) child_begin_[i + 1] += child_begin_[i];
  child_list_.resize(static_cast<size_t>(child_begin_[n]));
  std::vector<int> fill(child_begin_.begin(), child_begin_.end() - 1);
  for (int i : order) {
    if (parent_[i] >= 0) child_list_[static_cast<size_t>(fill[parent_[i]]++)] = i;
  }
  {  // By start, longest first; ties keep the thread order above (a parent before its equal-span child).
    std::vector<std::tuple<int64_t, int64_t, size_t, int>> keys;
    keys.reserve(order.size());
    for (size_t k = 0; k < order.size(); ++k) keys.emplace_back(ev[order[k]].ts_ns, -ev[order[k]].dur_ns, k, order[k]);
    std::sort(keys.begin(), keys.end());
    for (size_t k = 0; k < keys.size(); ++k) order[k] = std::get<3>(keys[k]);
  }
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
