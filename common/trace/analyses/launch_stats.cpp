// See launch_stats.h.
#include "trace/analyses/launch_stats.h"

#include <algorithm>
#include <string>

namespace ladder {

bool hta_launch_name(const std::string& n) {
  return n == "cudaLaunchKernel" || n == "cudaLaunchKernelExC" || n == "cudaMemcpyAsync" || n == "cudaMemsetAsync";
}

namespace {

bool async_copy_or_set(const Event& e) {
  return e.name.rfind("cudaMemcpy", 0) == 0
             ? e.name.find("Async") != std::string::npos
             : e.name.rfind("cudaMemset", 0) == 0 && e.name.find("Async") != std::string::npos;
}

}  // namespace

std::vector<LaunchStat> launch_stats(const TraceIndex& index) {
  const Trace& t = index.trace();
  std::vector<LaunchStat> out;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event& a = t.events[i];
    if (!is_gpu_activity(a.cat)) continue;
    const int call = index.launch_of(static_cast<int>(i));
    if (call < 0) continue;
    const Event& c = index.event(call);
    if (!is_launch_call(c) && !async_copy_or_set(c)) continue;
    LaunchStat s;
    s.call = call, s.activity = static_cast<int>(i), s.step = index.step_of(call);
    s.correlation = a.correlation;
    s.cpu_ns = c.dur_ns, s.gpu_ns = a.dur_ns;
    s.delay_ns = std::max<int64_t>(0, a.ts_ns - c.end_ns());
    s.hta = hta_launch_name(c.name);
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(), [&](const LaunchStat& x, const LaunchStat& y) {
    const Event &a = index.event(x.call), &b = index.event(y.call);
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    return index.event(x.activity).ts_ns < index.event(y.activity).ts_ns;
  });
  return out;
}

Table launch_stats_table(const std::vector<LaunchStat>& rows, const TraceIndex& index) {
  Table t;
  t.name = "launch_stats";
  const size_t step = t.add("step", TableColumn::Text), corr = t.add("correlation", TableColumn::Int),
               name = t.add("name", TableColumn::Text), cpu = t.add("cpu_duration", TableColumn::Float),
               gpu = t.add("gpu_duration", TableColumn::Float), delay = t.add("launch_delay", TableColumn::Float),
               rt = t.add("runtime_outlier", TableColumn::Int), dl = t.add("delay_outlier", TableColumn::Int),
               shorter = t.add("gpu_shorter", TableColumn::Int), hta = t.add("hta", TableColumn::Int);
  for (const LaunchStat& r : rows) {
    t.columns[step].texts.push_back(r.step < 0 ? std::string() : index.steps()[static_cast<size_t>(r.step)].name);
    t.columns[corr].ints.push_back(r.correlation);
    t.columns[name].texts.push_back(index.event(r.activity).name);
    t.columns[cpu].floats.push_back(static_cast<double>(r.cpu_ns) / 1e3);
    t.columns[gpu].floats.push_back(static_cast<double>(r.gpu_ns) / 1e3);
    t.columns[delay].floats.push_back(static_cast<double>(r.delay_ns) / 1e3);
    t.columns[rt].ints.push_back(r.cpu_ns > kLaunchRuntimeCutoffNs);
    t.columns[dl].ints.push_back(r.delay_ns > kLaunchDelayCutoffNs);
    t.columns[shorter].ints.push_back(r.gpu_ns < r.cpu_ns);
    t.columns[hta].ints.push_back(r.hta);
  }
  return t;
}

}  // namespace ladder
