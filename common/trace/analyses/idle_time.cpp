// See idle_time.h.
#include "trace/analyses/idle_time.h"

#include <algorithm>
#include <map>
#include <utility>

#include "trace/analyses/hta_window.h"

namespace ladder {

const char* idle_category_name(IdleCategory c) {
  switch (c) {
    case IdleCategory::HostWait:
      return "host_wait";
    case IdleCategory::KernelWait:
      return "kernel_wait";
    case IdleCategory::Other:
      return "other";
  }
  return "other";
}

namespace {

using StreamKey = std::pair<int64_t, int64_t>;  // device, stream

// The activities of each stream in start order (equal starts: as given).
std::map<StreamKey, std::vector<int>> by_stream(const TraceIndex& index, const std::vector<int>& acts) {
  std::map<StreamKey, std::vector<int>> out;
  for (int i : acts) out[{index.event(i).pid, index.event(i).tid}].push_back(i);
  for (auto& [key, v] : out) {
    std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return index.event(a).ts_ns < index.event(b).ts_ns; });
  }
  return out;
}

// The gap before activity `cur`, after `prev` on its stream, and its category.
IdleCategory category(const TraceIndex& index, int prev, int cur, int64_t kernel_wait_ns, int64_t* gap) {
  const Event& p = index.event(prev);
  const Event& c = index.event(cur);
  *gap = c.ts_ns - p.end_ns();
  const int launch = index.launch_of(cur);
  if (launch >= 0 && index.event(launch).ts_ns > p.end_ns()) return IdleCategory::HostWait;
  return *gap < kernel_wait_ns ? IdleCategory::KernelWait : IdleCategory::Other;
}

}  // namespace

std::vector<StreamIdle> idle_time(const TraceIndex& index, int64_t kernel_wait_ns) {
  const Trace& t = index.trace();
  std::vector<StreamIdle> out;
  // The whole trace, over the activities traceinsight keeps.
  std::vector<int> kept;
  for (const Event* e : hta_kept_activities(t)) kept.push_back(static_cast<int>(e - t.events.data()));
  for (const auto& [key, v] : by_stream(index, kept)) {
    StreamIdle row;
    row.device = key.first, row.stream = key.second;
    for (size_t j = 1; j < v.size(); ++j) {
      int64_t gap = 0;
      const int c = static_cast<int>(category(index, v[j - 1], v[j], kernel_wait_ns, &gap));
      row.ns[c] += gap;
      ++row.gaps[c];
    }
    out.push_back(row);
  }
  // Per step, over every activity: each gap in the step of the activity after it.
  std::vector<int> all, step_of(t.events.size(), -1);
  for (int k = 0; k < static_cast<int>(index.steps().size()); ++k) {
    for (int i : index.gpu_activities(k)) step_of[static_cast<size_t>(i)] = k;
  }
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (is_gpu_activity(t.events[i].cat)) all.push_back(static_cast<int>(i));
  }
  std::map<std::pair<int, StreamKey>, StreamIdle> steps;
  for (const auto& [key, v] : by_stream(index, all)) {
    for (size_t j = 0; j < v.size(); ++j) {
      const int k = step_of[static_cast<size_t>(v[j])];
      if (k < 0) continue;
      StreamIdle& row = steps[{k, key}];
      row.step = k, row.device = key.first, row.stream = key.second;
      if (j == 0) continue;
      int64_t gap = 0;
      const int c = static_cast<int>(category(index, v[j - 1], v[j], kernel_wait_ns, &gap));
      row.ns[c] += gap;
      ++row.gaps[c];
    }
  }
  for (auto& [key, row] : steps) out.push_back(row);
  return out;
}

Table idle_time_table(const std::vector<StreamIdle>& rows, const TraceIndex& index) {
  Table t;
  t.name = "idle_time";
  const size_t step = t.add("step", TableColumn::Text), stream = t.add("stream", TableColumn::Int),
               cat = t.add("idle_category", TableColumn::Text), time = t.add("idle_time", TableColumn::Float),
               ratio = t.add("idle_time_ratio", TableColumn::Float), gaps = t.add("gaps", TableColumn::Int);
  for (const StreamIdle& r : rows) {
    const int64_t total = r.total_ns();
    for (int c = 0; c < 3; ++c) {
      t.columns[step].texts.push_back(r.step < 0 ? std::string("all")
                                                 : index.steps()[static_cast<size_t>(r.step)].name);
      t.columns[stream].ints.push_back(r.stream);
      t.columns[cat].texts.push_back(idle_category_name(static_cast<IdleCategory>(c)));
      t.columns[time].floats.push_back(static_cast<double>(r.ns[c]) / 1e3);
      t.columns[ratio].floats.push_back(total != 0 ? static_cast<double>(r.ns[c]) / static_cast<double>(total)
                                                   : std::nan(""));
      t.columns[gaps].ints.push_back(r.gaps[c]);
    }
  }
  return t;
}

}  // namespace ladder
