// See key_averages.h. Everything here follows torch's profiler code (EventList, _build_table, _format_time): where
// torch does something surprising, the comment says what and why we do the same.
#include "trace/key_averages.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <regex>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "trace/memory.h"
#include "trace/text.h"

namespace ladder {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A c10d collective's record function (see below): async in torch's table.
bool is_collective(const Event& e) {
  return e.cat == Cat::UserAnnotation && (starts_with(e.name, "gloo:") || starts_with(e.name, "nccl:"));
}

// num / den rounded to the nearest integer, halves away from zero.
int64_t div_round(int64_t num, int64_t den) {
  const bool neg = (num < 0) != (den < 0);
  const int64_t a = num < 0 ? -num : num, b = den < 0 ? -den : den;
  const int64_t q = (a + b / 2) / b;
  return neg ? -q : q;
}

// q / 1000 with exactly three decimals ("12.345").
std::string thousandths(int64_t q) {
  const char* sign = q < 0 ? "-" : "";
  if (q < 0) q = -q;
  return fmt::format("{}{}.{:03d}", sign, q / 1000, static_cast<int>(q % 1000));
}

// torch's _format_time ("1.234s", "1.234ms", "1.234us") of (num / den) nanoseconds. The rounding is done exactly on
// integers: through doubles, an average such as 19930 ns / 4 calls = 4.9825 us would round down or up depending on
// float noise.
std::string format_time(int64_t num_ns, int64_t den = 1) {
  if (num_ns >= den * 1000000000) return thousandths(div_round(num_ns, den * 1000000)) + "s";
  if (num_ns >= den * 1000000) return thousandths(div_round(num_ns, den * 1000)) + "ms";
  return thousandths(div_round(num_ns, den)) + "us";
}

// torch's _format_time_share: a percentage with two decimals, "NaN" when there is nothing to share.
std::string format_share(int64_t part_ns, int64_t total_ns) {
  if (total_ns == 0) return "NaN";
  if (part_ns > INT64_MAX / 10000 || part_ns < -INT64_MAX / 10000) {  // past 10 days: exact hundredths would overflow
    return fmt::format("{:.2f}%", 100.0 * static_cast<double>(part_ns) / static_cast<double>(total_ns));
  }
  const int64_t q = div_round(part_ns * 10000, total_ns);  // hundredths of a percent
  const char* sign = q < 0 ? "-" : "";
  const int64_t a = q < 0 ? -q : q;
  return fmt::format("{}{}.{:02d}%", sign, a / 100, static_cast<int>(a % 100));
}

// torch's _format_memory: binary units, two decimals, plain bytes below 1 KB ("-8 B", "16.02 MB").
std::string format_memory(int64_t b) {
  const double kb = 1024.0, mb = kb * 1024, gb = mb * 1024;
  const double a = std::abs(static_cast<double>(b));
  if (a >= gb) return fmt::format("{:.2f} GB", static_cast<double>(b) / gb);
  if (a >= mb) return fmt::format("{:.2f} MB", static_cast<double>(b) / mb);
  if (a >= kb) return fmt::format("{:.2f} KB", static_cast<double>(b) / kb);
  return fmt::format("{} B", b);
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

}  // namespace

const std::vector<std::string>& table_sort_keys() {
  static const std::vector<std::string> keys = {
      "cpu_time_total",   "self_cpu_time_total",   "cuda_time_total",   "self_cuda_time_total",
      "cpu_memory_usage", "self_cpu_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage",
      "count",            "cpu_time",              "cuda_time"};
  return keys;
}

std::string summary_table(const Trace& trace, int row_limit) { return summary_table(TraceIndex(trace), row_limit); }

std::string summary_table(const TraceIndex& index, int row_limit) {
  TableOptions o;
  o.row_limit = row_limit;
  return summary_table(index, o);
}

std::string summary_table(const TraceIndex& index, const TableOptions& opt) {
  const std::vector<std::string>& keys = table_sort_keys();
  std::string sort_by = opt.sort_by;
  if (sort_by.rfind("device_", 0) == 0 || sort_by.rfind("self_device_", 0) == 0) {
    sort_by.replace(sort_by.find("device"), 6, "cuda");  // torch's newer spelling of the same keys
  }
  const auto key_at = std::find(keys.begin(), keys.end(), sort_by);
  if (key_at == keys.end()) {
    std::string all;
    for (const std::string& k : keys) all += (all.empty() ? "" : ", ") + k;
    throw UsageError("unknown sort key '" + opt.sort_by + "': torch's keys are " + all);
  }
  const int sort_key = static_cast<int>(key_at - keys.begin());
  std::regex filter;
  if (!opt.filter.empty()) {
    try {
      filter = std::regex(opt.filter, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      throw UsageError("--filter '" + opt.filter + "' is not a regular expression: " + e.what());
    }
  }
  const std::vector<Event>& ev = index.trace().events;
  // Per event: self CPU, own GPU work, and CUDA total (own GPU work plus the children's CUDA totals).
  std::vector<int64_t> self_cpu(ev.size(), 0), self_cuda(ev.size(), 0), cuda_total(ev.size(), 0);
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
      self_cpu[i] = e.dur_ns;
      for (int c : index.children(static_cast<int>(i))) self_cpu[i] -= ev[c].dur_ns;
      // c10d's collectives ("gloo:all_reduce", "nccl:all_reduce") are record functions that the thread completing
      // the work ends: Kineto marks them async, which the file does not say, and torch gives async events no self
      // CPU time (FunctionEvent.self_cpu_time_total). Their CPU total stays.
      if (is_collective(e)) self_cpu[i] = 0;
    }
  }
  // An overhead event carries, in torch's memory though not in the file, the correlation of the op it interrupted:
  // torch credits it with that op's kernels too (and the op's CUDA total then counts them twice, through it).
  std::unordered_map<int64_t, int64_t> kernel_ns_by_ext;
  for (const Event& e : ev) {
    if (is_gpu_activity(e.cat) && e.external_id >= 0) kernel_ns_by_ext[e.external_id] += e.dur_ns;
  }
  for (size_t i = 0; i < ev.size(); ++i) {
    const int p = index.parent(static_cast<int>(i));
    if (!is_overhead_event(ev[i]) || p < 0 || ev[p].external_id < 0) continue;
    auto it = kernel_ns_by_ext.find(ev[p].external_id);
    if (it != kernel_ns_by_ext.end()) self_cuda[i] = it->second;
  }
  // Children come after their parents in host_order(), so one backwards pass sums the subtrees.
  const std::vector<int>& order = index.host_order();
  for (int i : order) cuda_total[i] = self_cuda[i];
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (index.parent(*it) >= 0) cuda_total[index.parent(*it)] += cuda_total[*it];
  }

  // torch's EventList._remove_dup_nodes: an op whose only child has its own name (aten::sum calling aten::sum, one
  // overload dispatching to another) is one op. The child's row goes; its self time joins the parent's, and its
  // kernels replace the parent's. Deepest first, so a chain folds into its top.
  // Memory (profile_memory=True), as torch's _parse_kineto_results fills it: every CPU-side event takes the [memory]
  // records stamped inside it, ends included, on any thread; self = that minus what its direct children took.
  const Trace& tr = index.trace();
  std::vector<int64_t> mem_cpu(ev.size(), 0), mem_gpu(ev.size(), 0), self_mem_cpu, self_mem_gpu;
  std::vector<const MemoryRecord*> recs;
  for (const MemoryRecord& m : tr.memory) recs.push_back(&m);
  std::stable_sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->ts_ns < b->ts_ns; });
  std::vector<int64_t> pre_cpu(recs.size() + 1, 0), pre_gpu(recs.size() + 1, 0), taken(recs.size() + 1, 0);
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
  }

  // Rows: one per (name, kind); ProfilerStep#k steps share "ProfilerStep*". A user range shows twice, as torch
  // does: once for its CPU range and once for its span on the GPU lane.
  struct Row {
    std::string key, shapes;
    int64_t self_cpu = 0, cpu_total = 0, self_cuda = 0, cuda_total = 0, calls = 0;
    int64_t cpu_mem = 0, self_cpu_mem = 0, cuda_mem = 0, self_cuda_mem = 0;
    double flops = 0;     // the "flops" with_flops=True recorded on its ops, summed (torch's FunctionEventAvg.flops)
    bool async = false;   // torch prints "0" for an async row's CPU total %
    bool device = false;  // kernel/memcpy/memset: counts toward "Self CUDA time total"
    std::tuple<bool, int64_t, int64_t, int> first;  // where torch's walk meets the row first (see below)
  };
  std::vector<Row> rows;
  // Keyed by views of the names in the trace (no string copied per event), one map per kind.
  std::unordered_map<std::string_view, size_t> row_of[3];
  std::map<std::pair<std::string, std::string>, size_t> row_of_shapes[3];  // group_by_input_shape: (name, shapes)
  int64_t total_self_cpu = 0, total_self_cuda = 0;
  bool any_device_time = false;
  for (int i = 0; i < static_cast<int>(ev.size()); ++i) {
    const Event& e = ev[i];
    if (!is_gpu_cat(e.cat) && (!is_tree_event(e) || folded[i])) continue;  // Python frames: not in key_averages()
    const int kind = e.cat == Cat::GpuUserAnnotation ? 2 : is_gpu_activity(e.cat) ? 1 : 0;
    // Steps share one row, on the CPU lane and on the GPU lane alike (torch 2.11 writes ProfilerStep#k spans there).
    const bool step = starts_with(e.name, "ProfilerStep#") && kind != 1;
    const std::string_view key = step ? std::string_view("ProfilerStep*") : std::string_view(e.name);
    // Torch lists rows in the order it meets events (by start, longest first; GPU-lane annotations last), and a stable
    // sort by CUDA total keeps that order among equals: remember where each row was met first, sort by it below.
    const auto first = std::make_tuple(kind == 2, e.ts_ns, -e.dur_ns, i);
    bool inserted = false;
    size_t at = 0;
    std::string shapes;
    if (opt.group_by_input_shape) {
      shapes = shapes_text(e);
      auto [pos, fresh] = row_of_shapes[kind].emplace(std::make_pair(std::string(key), shapes), rows.size());
      at = pos->second;
      inserted = fresh;
    } else {
      auto [pos, fresh] = row_of[kind].emplace(key, rows.size());
      at = pos->second;
      inserted = fresh;
    }
    if (inserted) {
      rows.push_back(Row{});
      rows.back().key = std::string(key);
      rows.back().shapes = shapes;
      rows.back().device = kind == 1;
      rows.back().first = first;
    }
    Row& r = rows[at];
    r.first = std::min(r.first, first);
    r.calls++;
    r.async = r.async || is_collective(e);
    r.self_cuda += self_cuda[i];
    r.cuda_total += cuda_total[i];
    if (kind == 0) {
      r.self_cpu += self_cpu[i];
      r.cpu_total += e.dur_ns;
      total_self_cpu += self_cpu[i];
      if (e.flops > 0) r.flops += static_cast<double>(e.flops);
      r.cpu_mem = add_bytes(r.cpu_mem, mem_cpu[i]);
      r.self_cpu_mem = add_bytes(r.self_cpu_mem, self_mem_cpu[i]);
      r.cuda_mem = add_bytes(r.cuda_mem, mem_gpu[i]);
      r.self_cuda_mem = add_bytes(r.self_cuda_mem, self_mem_gpu[i]);
    }
    if (kind == 1) total_self_cuda += e.dur_ns;
    if (self_cuda[i] > 0) any_device_time = true;
  }
  // The records no event took: torch makes each a zero-length "[memory]" event of its own, one row for them all.
  for (size_t k = 0; k < recs.size(); ++k) {
    if (taken[k] > 0) continue;
    auto [pos, fresh] = row_of[0].emplace("[memory]", rows.size());
    if (fresh) {
      rows.push_back(Row{});
      rows.back().key = "[memory]";
      rows.back().shapes = "[]";
      rows.back().first = std::make_tuple(false, recs[k]->ts_ns, int64_t{0}, static_cast<int>(ev.size()));
    }
    Row& r = rows[pos->second];
    r.calls++;
    const int64_t c = cpu_device_type(recs[k]->device_type) ? recs[k]->bytes : 0;
    const int64_t g = gpu_device_type(recs[k]->device_type) ? recs[k]->bytes : 0;
    r.cpu_mem = add_bytes(r.cpu_mem, c);
    r.self_cpu_mem = add_bytes(r.self_cpu_mem, c);
    r.cuda_mem = add_bytes(r.cuda_mem, g);
    r.self_cuda_mem = add_bytes(r.self_cuda_mem, g);
  }
  const bool memory = tr.profile_memory;
  bool device_memory = false;  // torch: the CUDA pair only when some row's self CUDA memory is positive
  for (const Row& r : rows) device_memory = device_memory || r.self_cuda_mem > 0;
  device_memory = device_memory && any_device_time;
  auto sort_value = [sort_key](const Row& r) -> double {
    switch (sort_key) {
      case 0: return static_cast<double>(r.cpu_total);
      case 1: return static_cast<double>(r.self_cpu);
      case 2: return static_cast<double>(r.cuda_total);
      case 3: return static_cast<double>(r.self_cuda);
      case 4: return static_cast<double>(r.cpu_mem);
      case 5: return static_cast<double>(r.self_cpu_mem);
      case 6: return static_cast<double>(r.cuda_mem);
      case 7: return static_cast<double>(r.self_cuda_mem);
      case 8: return static_cast<double>(r.calls);
      case 9: return r.calls ? static_cast<double>(r.cpu_total) / static_cast<double>(r.calls) : 0;
      default: return r.calls ? static_cast<double>(r.cuda_total) / static_cast<double>(r.calls) : 0;
    }
  };
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.first < b.first; });
  // Python's sorted(reverse=True) is stable: equal keys keep the order torch met them in.
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const Row& a, const Row& b) { return sort_value(a) > sort_value(b); });
  // torch's "Total FLOPs" column (with_flops=True): scaled by the smallest positive sum of all rows, before the row
  // limit, to FLOPs, KFLOPs, ... PFLOPs (_build_table's auto_scale_flops).
  double min_flops = 0;
  for (const Row& r : rows) {
    if (r.flops > 0 && (min_flops == 0 || r.flops < min_flops)) min_flops = r.flops;
  }
  double flops_scale = 1;
  std::string flops_header;
  if (min_flops > 0) {
    static const char* const kFlopUnits[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
    const double log_flops = std::max(0.0, std::min(std::log10(min_flops) / 3, 5.0));
    flops_scale = std::pow(10.0, std::floor(log_flops) * -3.0);
    flops_header = std::string("Total ") + kFlopUnits[static_cast<int>(log_flops)];
  }
  if (!opt.filter.empty()) {
    rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const Row& r) { return !std::regex_search(r.key, filter); }),
               rows.end());
  }
  if (opt.row_limit >= 0 && static_cast<int>(rows.size()) > opt.row_limit) rows.resize(opt.row_limit);

  if (opt.format != OutputFormat::Text) {
    // Numbers for a program: times in microseconds as torch sums them, memory in bytes; no rounding, no units.
    OutputTable rec;
    rec.columns = {"name"};
    if (opt.group_by_input_shape) rec.columns.push_back("input_shapes");
    for (const char* c : {"calls", "self_cpu_us", "cpu_total_us", "self_cuda_us", "cuda_total_us", "cpu_memory_bytes",
                          "self_cpu_memory_bytes", "cuda_memory_bytes", "self_cuda_memory_bytes"})
      rec.columns.push_back(c);
    if (!flops_header.empty()) rec.columns.push_back("flops");
    rec.numeric.assign(rec.columns.size(), true);
    rec.numeric[0] = false;
    if (opt.group_by_input_shape) rec.numeric[1] = false;
    auto us = [](int64_t ns) { return fmt::format("{}.{:03d}", ns / 1000, static_cast<int>(std::abs(ns % 1000))); };
    for (const Row& r : rows) {
      std::vector<std::string> cells = {r.key};
      if (opt.group_by_input_shape) cells.push_back(r.shapes);
      for (const std::string& v :
           {std::to_string(r.calls), us(r.self_cpu), us(r.cpu_total), us(r.self_cuda), us(r.cuda_total),
            memory ? std::to_string(r.cpu_mem) : "", memory ? std::to_string(r.self_cpu_mem) : "",
            memory ? std::to_string(r.cuda_mem) : "", memory ? std::to_string(r.self_cuda_mem) : ""})
        cells.push_back(v);
      if (!flops_header.empty()) cells.push_back(r.flops > 0 ? fmt::format("{:.0f}", r.flops) : "");
      rec.rows.push_back(std::move(cells));
    }
    return opt.format == OutputFormat::Csv ? to_csv(rec) : to_json(rec);
  }

  // Layout of torch's _build_table: right-aligned cells, two spaces after each, names cut at 52 + "...".
  const size_t kMaxName = static_cast<size_t>(std::max(opt.name_width, 8));
  size_t longest = 0;
  for (const Row& r : rows) longest = std::max(longest, printable(r.key).size());
  const size_t name_w = std::min(longest + 4, kMaxName);
  std::vector<std::string> headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (any_device_time) {
    for (const char* h : {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"}) headers.push_back(h);
  }
  if (memory) {
    headers.push_back("CPU Mem");
    headers.push_back("Self CPU Mem");
  }
  if (memory && device_memory) {
    headers.push_back("CUDA Mem");
    headers.push_back("Self CUDA Mem");
  }
  headers.push_back("# of Calls");
  // torch: the shapes column is as wide as its longest cell plus 4, at most 80, and cells are cut to it.
  size_t shapes_w = 0;
  if (opt.group_by_input_shape) {
    headers.push_back("Input Shapes");
    for (const Row& r : rows) shapes_w = std::max(shapes_w, r.shapes.size() + 4);
    shapes_w = std::min<size_t>(shapes_w, 80);
  }
  const size_t shapes_col = headers.size() - 1;  // the Input Shapes column, when there is one
  if (!flops_header.empty()) headers.push_back(flops_header);

  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool shapes = opt.group_by_input_shape && c == shapes_col;
      out += fmt::format("{:>{}}  ", cells[c], c == 0 ? name_w : shapes ? shapes_w : 12);
    }
    out += "\n";
  };
  std::string rule = std::string(name_w, '-') + "  ";
  for (size_t c = 1; c < headers.size(); ++c) {
    rule += std::string(opt.group_by_input_shape && c == shapes_col ? shapes_w : 12, '-') + "  ";
  }
  rule += "\n";

  out += rule;
  line(headers);
  out += rule;
  for (const Row& r : rows) {
    std::string name = printable(r.key);  // a name from the file: control bytes escaped, never sent raw
    if (name.size() >= kMaxName - 3) name = name.substr(0, kMaxName - 3) + "...";
    std::vector<std::string> cells = {name,
                                      format_share(r.self_cpu, total_self_cpu),
                                      format_time(r.self_cpu),
                                      r.async ? "0" : format_share(r.cpu_total, total_self_cpu),
                                      format_time(r.cpu_total),
                                      format_time(r.cpu_total, r.calls)};
    if (any_device_time) {
      cells.push_back(format_time(r.self_cuda));
      cells.push_back(format_share(r.self_cuda, total_self_cuda));
      cells.push_back(format_time(r.cuda_total));
      cells.push_back(format_time(r.cuda_total, r.calls));
    }
    if (memory) {
      cells.push_back(format_memory(r.cpu_mem));
      cells.push_back(format_memory(r.self_cpu_mem));
    }
    if (memory && device_memory) {
      cells.push_back(format_memory(r.cuda_mem));
      cells.push_back(format_memory(r.self_cuda_mem));
    }
    cells.push_back(std::to_string(r.calls));
    if (opt.group_by_input_shape) cells.push_back(printable(r.shapes).substr(0, shapes_w));
    if (!flops_header.empty()) cells.push_back(r.flops > 0 ? fmt::format("{:8.3f}", r.flops * flops_scale) : "--");
    line(cells);
  }
  out += rule;
  out += "Self CPU time total: " + format_time(total_self_cpu) + "\n";
  if (any_device_time) out += "Self CUDA time total: " + format_time(total_self_cuda) + "\n";
  return out;
}

}  // namespace ladder
