// See key_averages.h. Everything here follows torch's profiler code (EventList, _build_table, _format_time): where
// torch does something surprising, the comment says what and why we do the same.
#include "trace/key_averages.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "trace/text.h"

namespace ladder {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

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
  const int64_t q = div_round(part_ns * 10000, total_ns);  // hundredths of a percent
  const char* sign = q < 0 ? "-" : "";
  const int64_t a = q < 0 ? -q : q;
  return fmt::format("{}{}.{:02d}%", sign, a / 100, static_cast<int>(a % 100));
}

}  // namespace

std::string summary_table(const Trace& trace, int row_limit) { return summary_table(TraceIndex(trace), row_limit); }

std::string summary_table(const TraceIndex& index, int row_limit) {
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
  std::vector<char> folded(ev.size(), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int i = *it, p = index.parent(i);
    if (p < 0 || ev[p].name != ev[i].name || index.children(p).size() != 1) continue;
    folded[i] = 1;
    self_cpu[p] += self_cpu[i];
    self_cuda[p] = self_cuda[i];
    cuda_total[p] = cuda_total[i];
  }

  // Rows: one per (name, kind); ProfilerStep#k steps share "ProfilerStep*". A user range shows twice, as torch
  // does: once for its CPU range and once for its span on the GPU lane.
  struct Row {
    std::string key;
    int64_t self_cpu = 0, cpu_total = 0, self_cuda = 0, cuda_total = 0, calls = 0;
    bool device = false;  // kernel/memcpy/memset: counts toward "Self CUDA time total"
    std::tuple<bool, int64_t, int64_t, int> first;  // where torch's walk meets the row first (see below)
  };
  std::vector<Row> rows;
  // Keyed by views of the names in the trace (no string copied per event), one map per kind.
  std::unordered_map<std::string_view, size_t> row_of[3];
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
    auto [pos, inserted] = row_of[kind].emplace(key, rows.size());
    if (inserted) {
      rows.push_back(Row{});
      rows.back().key = std::string(key);
      rows.back().device = kind == 1;
      rows.back().first = first;
    }
    Row& r = rows[pos->second];
    r.first = std::min(r.first, first);
    r.calls++;
    r.self_cuda += self_cuda[i];
    r.cuda_total += cuda_total[i];
    if (kind == 0) {
      r.self_cpu += self_cpu[i];
      r.cpu_total += e.dur_ns;
      total_self_cpu += self_cpu[i];
    }
    if (kind == 1) total_self_cuda += e.dur_ns;
    if (self_cuda[i] > 0) any_device_time = true;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.first < b.first; });
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.cuda_total > b.cuda_total; });
  if (row_limit >= 0 && static_cast<int>(rows.size()) > row_limit) rows.resize(row_limit);

  // Layout of torch's _build_table: right-aligned cells, two spaces after each, names cut at 52 + "...".
  constexpr size_t kMaxName = 55;
  size_t longest = 0;
  for (const Row& r : rows) longest = std::max(longest, printable(r.key).size());
  const size_t name_w = std::min(longest + 4, kMaxName);
  std::vector<std::string> headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (any_device_time) {
    for (const char* h : {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"}) headers.push_back(h);
  }
  headers.push_back("# of Calls");

  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) out += fmt::format("{:>{}}  ", cells[c], c == 0 ? name_w : 12);
    out += "\n";
  };
  std::string rule = std::string(name_w, '-') + "  ";
  for (size_t c = 1; c < headers.size(); ++c) rule += std::string(12, '-') + "  ";
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
                                      format_share(r.cpu_total, total_self_cpu),
                                      format_time(r.cpu_total),
                                      format_time(r.cpu_total, r.calls)};
    if (any_device_time) {
      cells.push_back(format_time(r.self_cuda));
      cells.push_back(format_share(r.self_cuda, total_self_cuda));
      cells.push_back(format_time(r.cuda_total));
      cells.push_back(format_time(r.cuda_total, r.calls));
    }
    cells.push_back(std::to_string(r.calls));
    line(cells);
  }
  out += rule;
  out += "Self CPU time total: " + format_time(total_self_cpu) + "\n";
  if (any_device_time) out += "Self CUDA time total: " + format_time(total_self_cuda) + "\n";
  return out;
}

}  // namespace ladder
