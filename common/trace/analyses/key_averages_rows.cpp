// See key_averages_rows.h. Everything here follows torch's profiler code (EventList, _build_table, _format_time):
// where torch does something surprising, the comment says what and why we do the same. The layout is key_averages.cpp.
#include "trace/analyses/key_averages_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.h"
#include "trace/analyses/memory.h"
#include "trace/analyses/torch_flops.h"

namespace ladder {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A c10d collective's record function (see below): async in torch's table.
bool is_collective(const Event& e) {
  return e.cat == Cat::UserAnnotation && (starts_with(e.name, "gloo:") || starts_with(e.name, "nccl:"));
}

// Which c10::DeviceType torch's table counts as CPU memory and which as device memory (profiler.py
// _cpu_memory_usage / _device_memory_usage): CPU, MKLDNN, IDEEP; CUDA, HIP, PrivateUse1.
bool cpu_device_type(int t) { return t == 0 || t == 2 || t == 5; }
bool gpu_device_type(int t) { return t == 1 || t == 6 || t == 20; }

// Python's str() of a list of shapes: "[[256, 512], [], []]" (torch's Input Shapes column and grouping key).
std::string shapes_text(const Event& e) {
  std::string out = "[";
  for (size_t k = 0; k < e.input_dims().size(); ++k) {
    out += k ? ", [" : "[";
    for (size_t d = 0; d < e.input_dims()[k].size(); ++d) out += fmt::format("{}{}", d ? ", " : "", e.input_dims()[k][d]);
    out += "]";
  }
  return out + "]";
}

// The position of the sort key in table_sort_keys(), torch's newer "device_" spelling taken as "cuda_".
int sort_key_of(const std::string& given) {
  const std::vector<std::string>& keys = table_sort_keys();
  std::string sort_by = given;
  if (sort_by.rfind("device_", 0) == 0 || sort_by.rfind("self_device_", 0) == 0) {
    sort_by.replace(sort_by.find("device"), 6, "cuda");  // torch's newer spelling of the same keys
  }
  const auto key_at = std::find(keys.begin(), keys.end(), sort_by);
  if (key_at == keys.end()) {
    std::string all;
    for (const std::string& k : keys) all += (all.empty() ? "" : ", ") + k;
    throw UsageError("unknown sort key '" + given + "': torch's keys are " + all);
  }
  return static_cast<int>(key_at - keys.begin());
}

std::regex filter_of(const std::string& filter) {
  try {
    return std::regex(filter, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    throw UsageError("--filter '" + filter + "' is not a regular expression: " + e.what());
  }
}

// Per event: self CPU, own GPU work, and CUDA total (own GPU work plus the children's CUDA totals).
struct OpTimes {
  std::vector<int64_t> self_cpu, self_cuda, cuda_total;
  // The same as torch's Python floats compute them, where the trace says when torch's profiler started (else empty):
  // each event's start and end in microseconds from that start (profiler.py: start_us=rel_start_ns / 1000), its time
  // (end - start), and its CUDA total (FunctionEvent.device_time_total: its kernels' times summed, plus its children's
  // totals summed). torch's averages are these summed and divided in floats: their last digit can be one below the
  // exact quotient's (611.509us over 2 calls: 305.754us), and these sums give it.
  std::vector<double> start_us, end_us, us, cuda_total_us;
};

// Where torch's profiler meets an event, in ns: Kineto widens a GPU-lane annotation by 1 ns on each side when it
// writes it, torch reads the span itself.
std::pair<int64_t, int64_t> torch_span_ns(const Event& e) {
  if (e.cat == Cat::GpuUserAnnotation && e.dur_ns >= 2) return {e.ts_ns + 1, e.end_ns() - 1};
  return {e.ts_ns, e.end_ns()};
}

// OpTimes' float figures, from the integer ones' structure: kernels to the op that launched them (or the op an overhead
// event interrupted), totals summed up the tree, children in order.
void torch_float_times(const TraceIndex& index, OpTimes& t) {
  const Trace& trace = index.trace();
  if (!trace.profiler_start_ns) return;
  const std::vector<Event>& ev = trace.events;
  const int64_t t0 = *trace.profiler_start_ns;
  t.start_us.assign(ev.size(), 0);
  t.end_us.assign(ev.size(), 0);
  t.us.assign(ev.size(), 0);
  t.cuda_total_us.assign(ev.size(), 0);
  for (size_t i = 0; i < ev.size(); ++i) {
    const auto [s, e] = torch_span_ns(ev[i]);
    // Python's int / int is the correctly rounded quotient, as is this below 2^53 ns (104 days)
    t.start_us[i] = static_cast<double>(s - t0) / 1000.0;
    t.end_us[i] = static_cast<double>(e - t0) / 1000.0;
    t.us[i] = t.end_us[i] - t.start_us[i];
  }
  std::vector<double> kernels(ev.size(), 0.0);  // per host event: its kernels' times, summed in order
  std::unordered_map<int64_t, double> kernel_us_by_ext;
  for (size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (!is_gpu_cat(e.cat)) continue;
    t.cuda_total_us[i] = t.us[i];
    if (!is_gpu_activity(e.cat)) continue;
    const int h = index.host_with_external_id(e.external_id);
    if (h >= 0) kernels[h] += t.us[i];
    if (e.external_id >= 0) kernel_us_by_ext[e.external_id] += t.us[i];
  }
  for (size_t i = 0; i < ev.size(); ++i) {
    if (!is_overhead_event(ev[i])) continue;
    const int p = index.interrupted(static_cast<int>(i));
    if (p < 0 || ev[p].external_id < 0) continue;
    auto it = kernel_us_by_ext.find(ev[p].external_id);
    if (it != kernel_us_by_ext.end()) kernels[i] = it->second;
  }
  const std::vector<int>& order = index.host_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    double children = 0;
    for (int c : index.children(*it)) children += t.cuda_total_us[c];
    t.cuda_total_us[*it] = kernels[*it] + children;
  }
}

OpTimes op_times(const TraceIndex& index) {
  const std::vector<Event>& ev = index.trace().events;
  OpTimes t;
  t.self_cpu.assign(ev.size(), 0);
  t.self_cuda.assign(ev.size(), 0);
  t.cuda_total.assign(ev.size(), 0);
  std::vector<int64_t>&self_cpu = t.self_cpu, &self_cuda = t.self_cuda, &cuda_total = t.cuda_total;
  for (size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (e.cat == Cat::GpuUserAnnotation) {
      // Kineto widens these spans by 1 ns on each side when it writes them, so viewers nest the kernels inside;
      // torch's table counts the span itself, from the first kernel's start to the last one's end.
      self_cuda[i] = cuda_total[i] = std::max<int64_t>(0, e.dur_ns - 2);
    } else if (is_gpu_cat(e.cat)) {
      self_cuda[i] = cuda_total[i] = e.dur_ns;
      if (is_gpu_activity(e.cat)) {
        // The kernel's time also counts for the innermost host range that launched it.
        const int h = index.host_with_external_id(e.external_id);
        if (h >= 0) self_cuda[h] += e.dur_ns;
      }
    } else if (is_tree_event(e)) {
      self_cpu[i] += e.dur_ns;
      // c10d's collectives ("gloo:all_reduce", "nccl:all_reduce") are record functions that the thread completing
      // the work ends: Kineto marks them async, which the file does not say. torch leaves async events out of its
      // tree (EventList._populate_cpu_children): one is nobody's child, so its parent (record_param_comms) keeps its
      // time as self CPU, and has no children of its own, so what nests in it is its parent's child instead. And it
      // gives an async event no self CPU time (FunctionEvent.self_cpu_time_total). Its CPU total stays.
      if (is_collective(e)) {
        self_cpu[i] = 0;
        continue;
      }
      int p = index.parent(static_cast<int>(i));
      while (p >= 0 && is_collective(ev[p])) p = index.parent(p);
      if (p >= 0) self_cpu[p] -= e.dur_ns;
    }
  }
  // An overhead event carries, in torch's memory though not in the file, the correlation of the op it interrupted:
  // torch credits it with that op's kernels too (and the op's CUDA total then counts them twice, through it).
  std::unordered_map<int64_t, int64_t> kernel_ns_by_ext;
  for (const Event& e : ev) {
    if (is_gpu_activity(e.cat) && e.external_id >= 0) kernel_ns_by_ext[e.external_id] += e.dur_ns;
  }
  for (size_t i = 0; i < ev.size(); ++i) {
    if (!is_overhead_event(ev[i])) continue;
    const int p = index.interrupted(static_cast<int>(i));
    if (p < 0 || ev[p].external_id < 0) continue;
    auto it = kernel_ns_by_ext.find(ev[p].external_id);
    if (it != kernel_ns_by_ext.end()) self_cuda[i] = it->second;
  }
  // Children come after their parents in host_order(), so one backwards pass sums the subtrees.
  const std::vector<int>& order = index.host_order();
  for (int i : order) cuda_total[i] = self_cuda[i];
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (index.parent(*it) >= 0) cuda_total[index.parent(*it)] += cuda_total[*it];
  }
  torch_float_times(index, t);
  return t;
}

// Memory (profile_memory=True), as torch's _parse_kineto_results fills it: every CPU-side event takes the [memory]
// records stamped inside it, ends included, on any thread; self = that minus what its direct children took.
struct MemoryTaken {
  std::vector<int64_t> cpu, gpu, self_cpu, self_gpu;
  std::vector<const MemoryRecord*> recs;  // by time
  std::vector<int64_t> taken;             // per record: how many events took it
};

MemoryTaken op_memory(const TraceIndex& index) {
  const std::vector<Event>& ev = index.trace().events;
  const std::vector<int>& order = index.host_order();
  MemoryTaken mem;
  std::vector<int64_t>&mem_cpu = mem.cpu, &mem_gpu = mem.gpu, &taken = mem.taken;
  std::vector<int64_t>&self_mem_cpu = mem.self_cpu, &self_mem_gpu = mem.self_gpu;
  std::vector<const MemoryRecord*>& recs = mem.recs;
  mem_cpu.assign(ev.size(), 0);
  mem_gpu.assign(ev.size(), 0);
  for (const MemoryRecord& r : index.trace().memory) recs.push_back(&r);
  std::stable_sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->ts_ns < b->ts_ns; });
  std::vector<int64_t> pre_cpu(recs.size() + 1, 0), pre_gpu(recs.size() + 1, 0);
  taken.assign(recs.size() + 1, 0);
  for (size_t k = 0; k < recs.size(); ++k) {
    pre_cpu[k + 1] = add_bytes(pre_cpu[k], cpu_device_type(recs[k]->device_type) ? recs[k]->bytes : 0);
    pre_gpu[k + 1] = add_bytes(pre_gpu[k], gpu_device_type(recs[k]->device_type) ? recs[k]->bytes : 0);
  }
  if (!recs.empty()) {
    for (int i : order) {
      auto lo = std::lower_bound(recs.begin(), recs.end(), ev[i].ts_ns, [](auto* m, int64_t t) { return m->ts_ns < t; });
      auto hi = std::upper_bound(recs.begin(), recs.end(), ev[i].end_ns(), [](int64_t t, auto* m) { return t < m->ts_ns; });
      const size_t a = static_cast<size_t>(lo - recs.begin()), b = static_cast<size_t>(hi - recs.begin());
      if (a >= b) continue;
      mem_cpu[i] = add_bytes(pre_cpu[b], -pre_cpu[a]);
      mem_gpu[i] = add_bytes(pre_gpu[b], -pre_gpu[a]);
      taken[a]++;  // records a..b-1 are taken: a difference array, summed below
      taken[b]--;
    }
    for (size_t k = 1; k < taken.size(); ++k) taken[k] += taken[k - 1];
  }
  self_mem_cpu = mem_cpu;
  self_mem_gpu = mem_gpu;
  for (int i : order) {
    for (int c : index.children(i)) {
      self_mem_cpu[i] = add_bytes(self_mem_cpu[i], -mem_cpu[c]);
      self_mem_gpu[i] = add_bytes(self_mem_gpu[i], -mem_gpu[c]);
    }
  }
  return mem;
}

// torch's EventList._remove_dup_nodes: an op whose only child has its own name (aten::sum calling aten::sum, one
// overload dispatching to another) is one op. The child's row goes; its self time joins the parent's, and its
// kernels replace the parent's. Deepest first, so a chain folds into its top. Which events are folded.
std::vector<char> fold_duplicates(const TraceIndex& index, OpTimes& t, MemoryTaken& m) {
  const std::vector<Event>& ev = index.trace().events;
  const std::vector<int>& order = index.host_order();
  std::vector<int64_t>&self_cpu = t.self_cpu, &self_cuda = t.self_cuda, &cuda_total = t.cuda_total;
  std::vector<int64_t>&self_mem_cpu = m.self_cpu, &self_mem_gpu = m.self_gpu;
  std::vector<char> folded(ev.size(), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int i = *it, p = index.parent(i);
    if (p < 0 || ev[p].name != ev[i].name || index.children(p).size() != 1) continue;
    folded[i] = 1;
    self_cpu[p] += self_cpu[i];
    self_mem_cpu[p] = add_bytes(self_mem_cpu[p], self_mem_cpu[i]);  // the parent's memory holds the child's already
    self_mem_gpu[p] = add_bytes(self_mem_gpu[p], self_mem_gpu[i]);
    self_cuda[p] = self_cuda[i];
    cuda_total[p] = cuda_total[i];
    if (!t.cuda_total_us.empty()) t.cuda_total_us[p] = t.cuda_total_us[i];
  }
  return folded;
}

// Rows: one per (name, kind); ProfilerStep#k steps share "ProfilerStep*". A user range shows twice, as torch does:
// once for its CPU range and once for its span on the GPU lane.
struct RowBuilder {
  struct Met {
    KeyAveragesRow row;
    std::tuple<bool, int64_t, int64_t, int> first;  // where torch's walk meets the row first (see add_events)
  };
  std::vector<Met> rows;
  // Keyed by views of the names in the trace (no string copied per event), one map per kind.
  std::unordered_map<std::string_view, size_t> row_of[3];
  std::map<std::pair<std::string, std::string>, size_t> row_of_shapes[3];  // group_by_input_shape: (name, shapes)
  int64_t total_self_cpu = 0, total_self_cuda = 0;
  bool any_device_time = false;

  // The row of `key` (with `shapes` when grouping by them), made if new.
  Met& row(int kind, std::string_view key, std::string shapes, bool by_shape,
           const std::tuple<bool, int64_t, int64_t, int>& first) {
    bool inserted = false;
    size_t at = 0;
    if (by_shape) {
      auto [pos, fresh] = row_of_shapes[kind].emplace(std::make_pair(std::string(key), shapes), rows.size());
      at = pos->second;
      inserted = fresh;
    } else {
      auto [pos, fresh] = row_of[kind].emplace(key, rows.size());
      at = pos->second;
      inserted = fresh;
    }
    if (inserted) {
      rows.push_back(Met{});
      rows.back().row.name = std::string(key);
      rows.back().row.input_shapes = std::move(shapes);
      rows.back().row.device = kind == 1;
      rows.back().row.gpu_lane = kind != 0;
      rows.back().first = first;
    }
    return rows[at];
  }

  void add_events(const TraceIndex& index, bool by_shape, const OpTimes& t, const MemoryTaken& m,
                  const std::vector<char>& folded) {
    const std::vector<Event>& ev = index.trace().events;
    const auto& meta = index.trace().metadata;
    const auto wf = meta.find("with_flops");  // "with_flops": 1 at the top level of a with_flops=True trace
    const bool with_flops = wf != meta.end() && wf->second != "0" && wf->second != "false";
    // torch meets the events by start, longest first (profiler.py sorts them so), and sums each row's floats in that
    // order; the integer sums do not mind it.
    std::vector<int> walk(ev.size());
    for (int i = 0; i < static_cast<int>(ev.size()); ++i) walk[i] = i;
    const bool floats = !t.us.empty();
    if (floats) {
      std::stable_sort(walk.begin(), walk.end(), [&](int a, int b) {
        return std::make_pair(t.start_us[a], -t.end_us[a]) < std::make_pair(t.start_us[b], -t.end_us[b]);
      });
    }
    for (const int i : walk) {
      const Event& e = ev[i];
      if (!is_gpu_cat(e.cat) && (!is_tree_event(e) || folded[i])) continue;  // Python frames: not in key_averages()
      const int kind = e.cat == Cat::GpuUserAnnotation ? 2 : is_gpu_activity(e.cat) ? 1 : 0;
      // Steps share one row, on the CPU lane and on the GPU lane alike (torch 2.11 writes ProfilerStep#k spans there).
      const bool step = starts_with(e.name, "ProfilerStep#") && kind != 1;
      const std::string_view key = step ? std::string_view("ProfilerStep*") : std::string_view(e.name);
      // Torch lists rows in the order it meets events (by start, longest first; GPU-lane annotations last), and a
      // stable sort by CUDA total keeps that order among equals: remember where each row was met first, sort by it.
      const auto first = std::make_tuple(kind == 2, e.ts_ns, -e.dur_ns, i);
      Met& met = row(kind, key, by_shape ? shapes_text(e) : std::string(), by_shape, first);
      met.first = std::min(met.first, first);
      KeyAveragesRow& r = met.row;
      r.calls++;
      r.async = r.async || is_collective(e);
      r.self_cuda_ns += t.self_cuda[i];
      r.cuda_total_ns += t.cuda_total[i];
      if (floats) r.torch_cuda_total_us += t.cuda_total_us[i];
      if (kind == 0) {
        r.self_cpu_ns += t.self_cpu[i];
        r.cpu_total_ns += e.dur_ns;
        if (floats) r.torch_cpu_total_us += t.us[i];
        total_self_cpu += t.self_cpu[i];
        // torch's FLOPs of the op: the "flops" the trace holds for it, else, in a trace recorded with_flops=True
        // (which holds none), what torch computed from its inputs at profile time (torch_flops.h).
        if (e.flops > 0) {
          r.flops += static_cast<double>(e.flops);
        } else if (with_flops && e.cat == Cat::CpuOp) {
          r.flops += torch_flops(e);
        }
        r.cpu_memory = add_bytes(r.cpu_memory, m.cpu[i]);
        r.self_cpu_memory = add_bytes(r.self_cpu_memory, m.self_cpu[i]);
        r.cuda_memory = add_bytes(r.cuda_memory, m.gpu[i]);
        r.self_cuda_memory = add_bytes(r.self_cuda_memory, m.self_gpu[i]);
      }
      if (kind == 1) total_self_cuda += e.dur_ns;
      if (t.self_cuda[i] > 0) any_device_time = true;
    }
  }

  // The records no event took: torch makes each a zero-length "[memory]" event of its own, one row for them all.
  void add_untaken_memory(const MemoryTaken& m, int events) {
    for (size_t k = 0; k < m.recs.size(); ++k) {
      if (m.taken[k] > 0) continue;
      const MemoryRecord& rec = *m.recs[k];
      KeyAveragesRow& r = row(0, "[memory]", "[]", false, std::make_tuple(false, rec.ts_ns, int64_t{0}, events)).row;
      r.calls++;
      const int64_t c = cpu_device_type(rec.device_type) ? rec.bytes : 0;
      const int64_t g = gpu_device_type(rec.device_type) ? rec.bytes : 0;
      r.cpu_memory = add_bytes(r.cpu_memory, c);
      r.self_cpu_memory = add_bytes(r.self_cpu_memory, c);
      r.cuda_memory = add_bytes(r.cuda_memory, g);
      r.self_cuda_memory = add_bytes(r.self_cuda_memory, g);
    }
  }
};

// The row's value of the sort key. torch sorts by its float sums: two rows of equal totals in ns (two kernels of
// 2.015us each) come in the order of their float sums (2.0150000000000001 before 2.0149999999999997), not as met.
double sort_value(const KeyAveragesRow& r, int sort_key, bool floats) {
  if (floats) {
    const double calls = static_cast<double>(r.calls);
    if (sort_key == 0) return r.torch_cpu_total_us;
    if (sort_key == 2) return r.torch_cuda_total_us;
    if (sort_key == 9) return r.calls ? r.torch_cpu_total_us / calls : 0;
    if (sort_key == 10) return r.calls ? r.torch_cuda_total_us / calls : 0;
  }
  switch (sort_key) {
    case 0: return static_cast<double>(r.cpu_total_ns);
    case 1: return static_cast<double>(r.self_cpu_ns);
    case 2: return static_cast<double>(r.cuda_total_ns);
    case 3: return static_cast<double>(r.self_cuda_ns);
    case 4: return static_cast<double>(r.cpu_memory);
    case 5: return static_cast<double>(r.self_cpu_memory);
    case 6: return static_cast<double>(r.cuda_memory);
    case 7: return static_cast<double>(r.self_cuda_memory);
    case 8: return static_cast<double>(r.calls);
    case 9: return r.calls ? static_cast<double>(r.cpu_total_ns) / static_cast<double>(r.calls) : 0;
    default: return r.calls ? static_cast<double>(r.cuda_total_ns) / static_cast<double>(r.calls) : 0;
  }
}

// torch's "Total FLOPs" column (with_flops=True): scaled by the smallest positive sum of all rows, before the row
// limit, to FLOPs, KFLOPs, ... PFLOPs (_build_table's auto_scale_flops).
void scale_flops(KeyAverages& out) {
  double min_flops = 0;
  for (const KeyAveragesRow& r : out.rows) {
    if (r.flops > 0 && (min_flops == 0 || r.flops < min_flops)) min_flops = r.flops;
  }
  if (min_flops > 0) {
    static const char* const kFlopUnits[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
    const double log_flops = std::max(0.0, std::min(std::log10(min_flops) / 3, 5.0));
    out.flops_scale = std::pow(10.0, std::floor(log_flops) * -3.0);
    out.flops_header = std::string("Total ") + kFlopUnits[static_cast<int>(log_flops)];
  }
}

}  // namespace

const std::vector<std::string>& table_sort_keys() {
  static const std::vector<std::string> keys = {
      "cpu_time_total",   "self_cpu_time_total",   "cuda_time_total",   "self_cuda_time_total",
      "cpu_memory_usage", "self_cpu_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage",
      "count",            "cpu_time",              "cuda_time"};
  return keys;
}

KeyAverages key_averages(const TraceIndex& index, const KeyAveragesOptions& opt) {
  const int sort_key = sort_key_of(opt.sort_by);
  const std::regex filter = opt.filter.empty() ? std::regex() : filter_of(opt.filter);
  OpTimes times = op_times(index);
  MemoryTaken memory = op_memory(index);
  const std::vector<char> folded = fold_duplicates(index, times, memory);
  RowBuilder b;
  b.add_events(index, opt.group_by_input_shape, times, memory, folded);
  b.add_untaken_memory(memory, static_cast<int>(index.trace().events.size()));

  std::sort(b.rows.begin(), b.rows.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // Python's sorted(reverse=True) is stable: equal keys keep the order torch met them in.
  const bool floats = !times.us.empty();
  std::stable_sort(b.rows.begin(), b.rows.end(), [&](const auto& x, const auto& y) {
    return sort_value(x.row, sort_key, floats) > sort_value(y.row, sort_key, floats);
  });
  KeyAverages out;
  for (RowBuilder::Met& m : b.rows) out.rows.push_back(std::move(m.row));
  out.self_cpu_total_ns = b.total_self_cpu;
  out.self_cuda_total_ns = b.total_self_cuda;
  out.device_time = b.any_device_time;
  out.torch_floats = floats;
  out.memory = index.trace().profile_memory;
  // torch: the CUDA pair only when some row's self CUDA memory is positive
  for (const KeyAveragesRow& r : out.rows) out.device_memory = out.device_memory || r.self_cuda_memory > 0;
  out.device_memory = out.device_memory && out.device_time;
  scale_flops(out);
  if (!opt.filter.empty()) {
    out.rows.erase(std::remove_if(out.rows.begin(), out.rows.end(),
                                  [&](const KeyAveragesRow& r) { return !std::regex_search(r.name, filter); }),
                   out.rows.end());
  }
  if (opt.row_limit >= 0 && static_cast<int>(out.rows.size()) > opt.row_limit) out.rows.resize(opt.row_limit);
  return out;
}

Table key_averages_frame(const KeyAverages& t, bool by_shape) {
  Table out;
  out.name = "summary";
  constexpr auto F = TableColumn::Float, I = TableColumn::Int, S = TableColumn::Text;
  const size_t name = out.add("Name", S);
  const size_t shapes = by_shape ? out.add("Input Shapes", S) : 0;
  std::vector<size_t> c;
  for (const char* h : {"Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "Self CUDA",
                        "Self CUDA %", "CUDA total", "CUDA time avg"})
    c.push_back(out.add(h, F));
  std::vector<size_t> mem;
  for (const char* h : {"CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem", "# of Calls"}) {
    mem.push_back(out.add(h, I));
  }
  const size_t flops = out.add("Total FLOPs", F), device = out.add("device", S);
  const double nan = std::nan("");
  auto us = [](int64_t ns) { return static_cast<double>(ns) / 1e3; };
  auto share = [&](int64_t part, int64_t total) {
    return total == 0 ? nan : 100.0 * static_cast<double>(part) / static_cast<double>(total);
  };
  for (const KeyAveragesRow& r : t.rows) {
    out.columns[name].texts.push_back(r.name);
    if (by_shape) out.columns[shapes].texts.push_back(r.input_shapes);
    const double calls = r.calls ? static_cast<double>(r.calls) : nan;
    const double v[] = {share(r.self_cpu_ns, t.self_cpu_total_ns), us(r.self_cpu_ns),
                        r.async ? 0.0 : share(r.cpu_total_ns, t.self_cpu_total_ns), us(r.cpu_total_ns),
                        us(r.cpu_total_ns) / calls, us(r.self_cuda_ns), share(r.self_cuda_ns, t.self_cuda_total_ns),
                        us(r.cuda_total_ns), us(r.cuda_total_ns) / calls};
    for (size_t k = 0; k < c.size(); ++k) out.columns[c[k]].floats.push_back(v[k]);
    const int64_t m[] = {r.cpu_memory, r.self_cpu_memory, r.cuda_memory, r.self_cuda_memory, r.calls};
    for (size_t k = 0; k < mem.size(); ++k) out.columns[mem[k]].ints.push_back(m[k]);
    out.columns[flops].floats.push_back(r.flops > 0 ? r.flops : nan);
    out.columns[device].texts.push_back(r.gpu_lane ? "CUDA" : "CPU");
  }
  return out;
}

}  // namespace ladder
