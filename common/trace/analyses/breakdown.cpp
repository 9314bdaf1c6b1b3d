// See breakdown.h.
#include "trace/analyses/breakdown.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "trace/analyses/communication.h"
#include "trace/analyses/steps.h"

namespace ladder {

namespace {
bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
}  // namespace

const char* part_name(Part p) {
  static const char* const kNames[kParts] = {"Kernel",  "Memcpy",     "Memset",   "Communication",
                                             "Runtime", "DataLoader", "CPU Exec", "Other"};
  return kNames[static_cast<int>(p)];
}

Part part_of(const Event& e) {
  switch (e.cat) {
    case Cat::Kernel: return is_comm_kernel(e) ? Part::Communication : Part::Kernel;
    case Cat::GpuMemcpy: return Part::Memcpy;
    case Cat::GpuMemset: return Part::Memset;
    case Cat::CudaRuntime:
    case Cat::CudaDriver: return Part::Runtime;
    case Cat::CpuOp:
    case Cat::UserAnnotation:
      if (is_comm_range(e)) return Part::Communication;
      if (starts_with(e.name, "enumerate(DataLoader)") || starts_with(e.name, "enumerate(DataPipe)"))
        return Part::DataLoader;
      if (e.cat == Cat::UserAnnotation && starts_with(e.name, "ProfilerStep#")) return Part::Other;
      return Part::CpuExec;
    default: return Part::Other;
  }
}

Timeline::Timeline(const Trace& trace) {
  struct Edge {
    int64_t t;
    int8_t part;   // -1: none (a GPU activity counts for gpu/compute only through its flags)
    int8_t delta;  // +1 start, -1 end
    bool gpu, compute;
  };
  std::vector<Edge> edges;
  edges.reserve(trace.events.size() * 2);
  bool any_gpu = false;
  for (const Event& e : trace.events) {
    const Part p = part_of(e);
    const bool gpu = is_gpu_activity(e.cat);
    if (p == Part::Other && !gpu) continue;
    const bool compute = e.cat == Cat::Kernel && p == Part::Kernel;
    const auto part = static_cast<int8_t>(p);
    edges.push_back({e.ts_ns, part, +1, gpu, compute});
    edges.push_back({e.end_ns(), part, -1, gpu, compute});
    if (gpu) {
      gpu_first_ = any_gpu ? std::min(gpu_first_, e.ts_ns) : e.ts_ns;
      gpu_last_ = any_gpu ? std::max(gpu_last_, e.end_ns()) : e.end_ns();
      any_gpu = true;
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::array<int64_t, kParts> active{};
  int32_t gpu = 0, compute = 0;
  for (size_t i = 0; i < edges.size();) {
    const int64_t t = edges[i].t;
    for (; i < edges.size() && edges[i].t == t; ++i) {
      const Edge& x = edges[i];
      active[static_cast<size_t>(x.part)] += x.delta;
      if (x.gpu) gpu += x.delta;
      if (x.compute) compute += x.delta;
    }
    uint8_t win = static_cast<uint8_t>(Part::Other);
    for (int k = 0; k < kParts - 1; ++k) {
      if (active[static_cast<size_t>(k)] > 0) {
        win = static_cast<uint8_t>(k);
        break;
      }
    }
    const Segment s{t, win, gpu, compute};
    if (!segments_.empty() && segments_.back().part == s.part && segments_.back().gpu == s.gpu &&
        segments_.back().compute == s.compute)
      continue;  // the same state goes on
    segments_.push_back(s);
  }
}

TimeBreakdown Timeline::over(int64_t from, int64_t to) const {
  TimeBreakdown b;
  b.from_ns = from;
  b.to_ns = std::max(from, to);
  // The segment in effect at `from`: the last one starting at or before it (none: nothing has started yet).
  auto it = std::upper_bound(segments_.begin(), segments_.end(), from,
                             [](int64_t t, const Segment& s) { return t < s.start; });
  int64_t t = from;
  Segment now{from, static_cast<uint8_t>(Part::Other), 0, 0};
  if (it != segments_.begin()) now = *(it - 1);
  while (t < b.to_ns) {
    const int64_t next = it == segments_.end() ? b.to_ns : std::min(it->start, b.to_ns);
    const int64_t len = next - t;
    b.ns[now.part] += len;
    if (now.gpu > 0) b.gpu_busy_ns += len;
    b.gpu_summed_ns += len * now.gpu;
    if (now.compute > 0) b.compute_ns += len;
    if (it == segments_.end() || it->start >= b.to_ns) break;
    now = *it++;
    t = next;
  }
  return b;
}

std::vector<std::pair<std::string, TimeBreakdown>> step_breakdowns(const TraceIndex& index, int step) {
  check_step_index(index, step);
  const Timeline line(index.trace());
  std::vector<std::pair<std::string, TimeBreakdown>> rows;
  const auto& steps = index.steps();
  for (size_t k = 0; k < steps.size(); ++k) {
    if (step >= 0 && static_cast<int>(k) != step) continue;
    rows.emplace_back(steps[k].name, line.over(steps[k].ts_ns, steps[k].end_ns));
  }
  if (rows.empty()) throw TraceError("the trace holds no event: no step time to break down");
  if (rows.size() > 1) {  // the mean of the steps
    TimeBreakdown m;
    const auto n = static_cast<int64_t>(rows.size());
    for (const auto& [name, b] : rows) {
      m.to_ns += b.wall_ns();
      for (int p = 0; p < kParts; ++p) m.ns[p] += b.ns[p];
      m.gpu_busy_ns += b.gpu_busy_ns, m.gpu_summed_ns += b.gpu_summed_ns, m.compute_ns += b.compute_ns;
    }
    m.to_ns /= n;
    for (int p = 0; p < kParts; ++p) m.ns[p] /= n;
    m.gpu_busy_ns /= n, m.gpu_summed_ns /= n, m.compute_ns /= n;
    rows.emplace_back(fmt::format("mean of {}", n), m);
  }
  return rows;
}

}  // namespace ladder
