// See kernel_sequences.h.
#include "trace/analyses/kernel_sequences.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

namespace ladder {

std::string KernelSequence::pattern() const {
  std::string p = op;
  for (const std::string& k : kernels) p += "|" + k;
  return p;
}

namespace {

// The nesting depth of every host event on its thread (0: no parent), from host_order (parents first).
std::vector<int> depths(const TraceIndex& index) {
  std::vector<int> d(index.trace().events.size(), 0);
  for (int i : index.host_order()) {
    const int p = index.parent(i);
    d[static_cast<size_t>(i)] = p >= 0 ? d[static_cast<size_t>(p)] + 1 : 0;
  }
  return d;
}

}  // namespace

std::vector<KernelSequence> kernel_sequences(const TraceIndex& index, const std::string& operator_name,
                                             int min_pattern_len) {
  const Trace& t = index.trace();
  if (operator_name.empty()) return {};
  // The activities each call launched, and the calls of each process by start.
  std::unordered_map<int, std::vector<int>> launched;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (!is_gpu_activity(t.events[i].cat)) continue;
    if (const int l = index.launch_of(static_cast<int>(i)); l >= 0) launched[l].push_back(static_cast<int>(i));
  }
  std::map<int64_t, std::vector<std::pair<int64_t, int>>> calls;  // pid -> (ts, call)
  for (const auto& [call, acts] : launched) calls[index.event(call).pid].emplace_back(index.event(call).ts_ns, call);
  for (auto& [pid, v] : calls) std::sort(v.begin(), v.end());
  const std::vector<int> depth = depths(index);
  std::vector<int> candidates;
  int min_depth = std::numeric_limits<int>::max();
  for (int i : index.host_order()) {
    if (index.event(i).name.find(operator_name) == std::string::npos) continue;
    candidates.push_back(i);
    min_depth = std::min(min_depth, depth[static_cast<size_t>(i)]);
  }
  std::map<std::pair<std::string, std::vector<std::string>>, KernelSequence> by_pattern;
  for (int op : candidates) {
    if (depth[static_cast<size_t>(op)] != min_depth) continue;
    const Event& o = index.event(op);
    std::vector<int> acts;
    const auto& v = calls[o.pid];
    for (auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(o.ts_ns, -1));
         it != v.end() && it->first < o.end_ns(); ++it) {
      const std::vector<int>& a = launched[it->second];
      acts.insert(acts.end(), a.begin(), a.end());
    }
    if (static_cast<int>(acts.size()) < min_pattern_len) continue;
    std::stable_sort(acts.begin(), acts.end(),
                     [&](int a, int b) { return index.event(a).ts_ns < index.event(b).ts_ns; });
    std::vector<std::string> names;
    int64_t gpu = 0;
    for (int a : acts) {
      names.push_back(index.event(a).name);
      gpu += index.event(a).dur_ns;
    }
    KernelSequence& s = by_pattern[{index.event(op).name, names}];
    s.op = index.event(op).name;
    s.kernels = names;
    ++s.count;
    s.gpu_ns += gpu;
    s.cpu_ns += index.event(op).dur_ns;
  }
  std::vector<KernelSequence> out;
  for (auto& [key, s] : by_pattern) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), [](const KernelSequence& a, const KernelSequence& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.pattern() < b.pattern();
  });
  return out;
}

Table kernel_sequences_table(const std::vector<KernelSequence>& rows) {
  Table t;
  t.name = "kernel_sequences";
  const size_t pattern = t.add("pattern", TableColumn::Text), count = t.add("count", TableColumn::Int),
               gpu = t.add("GPU kernel duration (us)", TableColumn::Float),
               cpu = t.add("CPU op duration (us)", TableColumn::Float), n = t.add("kernels", TableColumn::Int);
  for (const KernelSequence& s : rows) {
    t.columns[pattern].texts.push_back(s.pattern());
    t.columns[count].ints.push_back(s.count);
    t.columns[gpu].floats.push_back(static_cast<double>(s.gpu_ns) / 1e3);
    t.columns[cpu].floats.push_back(static_cast<double>(s.cpu_ns) / 1e3);
    t.columns[n].ints.push_back(static_cast<int64_t>(s.kernels.size()));
  }
  return t;
}

}  // namespace ladder
