// Views computed from a `Trace` through its TraceIndex: the per-step statistics, torch's key_averages() table, the
// regime table, and the work an op does. Everything here works on the event model only, so it gives the same answers
// for a live run, one of our files, or a file torch.profiler wrote.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "trace/analysis.h"
#include "trace/views.h"  // printable()

namespace ladder {

const char* cat_name(Cat cat) {
  switch (cat) {
    case Cat::UserAnnotation:
      return "user_annotation";
    case Cat::CpuOp:
      return "cpu_op";
    case Cat::CudaRuntime:
      return "cuda_runtime";
    case Cat::CudaDriver:
      return "cuda_driver";
    case Cat::Kernel:
      return "kernel";
    case Cat::GpuMemcpy:
      return "gpu_memcpy";
    case Cat::GpuMemset:
      return "gpu_memset";
    case Cat::GpuUserAnnotation:
      return "gpu_user_annotation";
    case Cat::Other:
      break;
  }
  return "other";
}

Cat cat_from_name(const std::string& name) {
  static const std::map<std::string, Cat> kCats = {
      {"user_annotation", Cat::UserAnnotation},
      {"cpu_op", Cat::CpuOp},
      {"cuda_runtime", Cat::CudaRuntime},
      {"cuda_driver", Cat::CudaDriver},
      {"kernel", Cat::Kernel},
      {"gpu_memcpy", Cat::GpuMemcpy},
      {"gpu_memset", Cat::GpuMemset},
      {"gpu_user_annotation", Cat::GpuUserAnnotation},
  };
  auto it = kCats.find(name);
  return it == kCats.end() ? Cat::Other : it->second;
}

bool is_gpu_cat(Cat cat) { return is_gpu_activity(cat) || cat == Cat::GpuUserAnnotation; }
bool is_gpu_activity(Cat cat) { return cat == Cat::Kernel || cat == Cat::GpuMemcpy || cat == Cat::GpuMemset; }
bool is_api_call(Cat cat) { return cat == Cat::CudaRuntime || cat == Cat::CudaDriver; }

bool is_launch_call(const Event& e) {
  if (!is_api_call(e.cat)) return false;
  static const char* const kPrefixes[] = {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cuLaunchKernel",
                                          "cuLaunchCooperativeKernel", "cudaGraphLaunch", "cuGraphLaunch",
                                          "__cudaLaunchKernel"};
  for (const char* p : kPrefixes) {
    if (e.name.rfind(p, 0) == 0) return true;
  }
  return false;
}

bool is_sync_call(const Event& e) {
  static const char* const kNames[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                                       "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize"};
  if (!is_api_call(e.cat)) return false;
  for (const char* n : kNames) {
    if (e.name == n) return true;
  }
  return false;
}

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

// Bytes of one element of a dtype as torch names it in "Input type"; 0 if unknown.
int64_t dtype_bytes(const std::string& t) {
  static const std::map<std::string, int64_t> kSizes = {
      {"float", 4},
      {"c10::BFloat16", 2},
      {"c10::Half", 2},
      {"double", 8},
      {"int", 4},
      {"long int", 8},
      {"short int", 2},
      {"signed char", 1},
      {"unsigned char", 1},
      {"bool", 1},
      {"c10::Float8_e4m3fn", 1},
      {"c10::Float8_e5m2", 1},
      {"c10::complex<float>", 8},
  };
  auto it = kSizes.find(t);
  return it == kSizes.end() ? 0 : it->second;
}

// In double: "Input Dims" come from the file, and a product of hostile dims must not overflow an int64. A negative
// dim (not a shape) makes the count negative, which the callers reject.
double numel(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

}  // namespace

// ---- step statistics -------------------------------------------------------------------------------------------

std::vector<StepStats> step_stats(const TraceIndex& index) {
  const Trace& trace = index.trace();
  std::vector<StepStats> out;
  for (const TraceIndex::Step& s : index.steps()) {
    StepStats st;
    st.name = s.name;
    st.ts_ns = s.ts_ns;
    st.dur_ns = s.end_ns - s.ts_ns;
    out.push_back(st);
  }
  // Launch and sync calls count for the step they were made in, if they also ended in it.
  for (int i = 0; i < static_cast<int>(trace.events.size()); ++i) {
    const Event& e = trace.events[i];
    const int k = index.step_of(i);
    if (k < 0 || !is_api_call(e.cat) || e.end_ns() > index.steps()[k].end_ns) continue;
    if (is_launch_call(e)) out[k].launch_ns += e.dur_ns;
    if (is_sync_call(e)) out[k].sync_ns += e.dur_ns;
  }
  for (size_t k = 0; k < out.size(); ++k) {
    StepStats& st = out[k];
    for (int i : index.gpu_activities(static_cast<int>(k))) {
      st.gpu_events.push_back(&trace.events[i]);
      if (trace.events[i].cat == Cat::Kernel) st.kernels++;
    }
    // Busy time is the union of the intervals: two overlapping kernels (two streams) do not count twice.
    int64_t covered_until = INT64_MIN;
    for (const Event* g : st.gpu_events) {
      const int64_t start = std::max(g->ts_ns, covered_until);
      if (g->end_ns() > start) st.gpu_busy_ns += g->end_ns() - start;
      covered_until = std::max(covered_until, g->end_ns());
    }
  }
  return out;
}

std::vector<StepStats> step_stats(const Trace& trace) { return step_stats(TraceIndex(trace)); }

std::string regime_table(const TraceIndex& index) {
  std::string out = "Per step: is the GPU waiting for the CPU, or the CPU for the GPU?\n";
  if (index.whole_trace()) out += "(no ProfilerStep in this trace: one window over the whole trace)\n";
  out += fmt::format("  {:<16} {:>8} {:>11} {:>11} {:>7} {:>12} {:>11}\n", "step", "kernels", "wall", "GPU busy",
                     "busy", "CPU launch", "CPU sync");
  for (const StepStats& s : step_stats(index)) {
    out += fmt::format("  {:<16} {:>8} {:>9.1f}us {:>9.1f}us {:>6.1f}% {:>10.1f}us {:>9.1f}us\n", printable(s.name),
                       s.kernels,
                       s.dur_ns / 1e3, s.gpu_busy_ns / 1e3, s.dur_ns ? 100.0 * s.gpu_busy_ns / s.dur_ns : 0.0,
                       s.launch_ns / 1e3, s.sync_ns / 1e3);
  }
  return out;
}

// ---- the key_averages() table ------------------------------------------------------------------------------------

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

// ---- work per op ---------------------------------------------------------------------------------------------------

bool op_work(const Event& op, Work* work) {
  std::string name = op.name;
  if (starts_with(name, "aten::")) name = name.substr(6);  // torch's names and ours
  if (starts_with(name, "ladder::")) name = name.substr(8);  // our ops that aten has no counterpart for
  const auto& dims = op.input_dims;
  const auto& types = op.input_types;
  if (dims.empty() || types.size() < dims.size()) return false;
  // Bytes of input i; 0 for inputs that are not tensors of a known dtype (torch writes "Scalar" or "").
  auto in_bytes = [&](size_t i) {
    return i < dims.size() ? numel(dims[i]) * static_cast<double>(dtype_bytes(types[i])) : 0.0;
  };
  auto elem = [&](size_t i) { return static_cast<double>(dtype_bytes(types[i])); };
  auto finite = [](double x) { return x >= 0 && x < 1e300; };

  // GEMMs: C[M,N] = A[M,K] @ B[K,N] does M*N*K multiply-adds = 2*M*N*K FLOPs, reads A and B (and a bias) once and
  // writes C once; that is the least traffic any kernel can have, so achieved GB/s against it is a lower bound.
  // Everything in double (dims come from the file: no overflow), and no shape with a zero or negative extent.
  auto gemm = [&](double m, double n, double k, double read_bytes, size_t out_dtype_input) {
    if (!(m > 0 && n > 0 && k > 0) || elem(out_dtype_input) == 0 || !finite(read_bytes)) return false;
    work->flops = 2.0 * m * n * k;
    work->bytes = read_bytes + m * n * elem(out_dtype_input);
    return finite(work->flops) && finite(work->bytes);
  };
  auto d = [](int64_t v) { return static_cast<double>(v); };
  if (name == "mm" && dims.size() == 2 && dims[0].size() == 2 && dims[1].size() == 2) {
    if (dims[0][1] != dims[1][0]) return false;
    return gemm(d(dims[0][0]), d(dims[1][1]), d(dims[0][1]), in_bytes(0) + in_bytes(1), 0);
  }
  if (name == "addmm" && dims.size() >= 3 && dims[1].size() == 2 && dims[2].size() == 2) {
    if (dims[1][1] != dims[2][0]) return false;  // addmm(bias, a, b)
    return gemm(d(dims[1][0]), d(dims[2][1]), d(dims[1][1]), in_bytes(0) + in_bytes(1) + in_bytes(2), 1);
  }
  if (name == "matmul" && dims.size() == 2 && dims[0].size() >= 2 && dims[1].size() == 2) {
    // A [..., M, K] folds its leading dimensions into the rows, as matmul does before calling mm.
    const int64_t k = dims[0].back();
    if (k != dims[1][0] || k <= 0) return false;  // k = 0 would divide by zero below
    return gemm(numel(dims[0]) / d(k), d(dims[1][1]), d(k), in_bytes(0) + in_bytes(1), 0);
  }
  if (name == "linear" && dims.size() >= 2 && !dims[0].empty() && dims[1].size() == 2) {
    // y = x @ W^T (+ b), W stored [out, in] like nn.Linear.
    const int64_t k = dims[0].back();
    if (k != dims[1][1] || k <= 0) return false;
    double read = in_bytes(0) + in_bytes(1);
    if (dims.size() >= 3) read += in_bytes(2);
    return gemm(numel(dims[0]) / d(k), d(dims[1][0]), d(k), read, 0);
  }
  if (name == "geglu_gemm" && dims.size() == 3 && !dims[0].empty() && dims[1].size() == 2 && dims[2] == dims[1]) {
    // 04's gelu(x @ W_gate^T) * (x @ W_up^T): two GEMMs' FLOPs, x and both weights read once, m [rows, hidden] written.
    const int64_t k = dims[0].back(), hidden = dims[1][0];
    if (k != dims[1][1] || k <= 0) return false;
    if (!gemm(numel(dims[0]) / d(k), 2 * d(hidden), d(k), in_bytes(0) + in_bytes(1) + in_bytes(2), 0)) return false;
    work->bytes -= numel(dims[0]) / d(k) * d(hidden) * elem(0);  // m is half as wide as the two GEMMs' outputs
    return true;
  }
  if (name == "add" || name == "mul" || name == "gelu" || name == "gelu_mul") {
    // Elementwise: every input read once, the output (as large as the largest input, dtype of the first) written
    // once. No FLOP count: these ops are about memory.
    if (elem(0) == 0) return false;
    double read = 0, out_numel = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (numel(dims[i]) < 0) return false;
      read += in_bytes(i);
      if (dtype_bytes(types[i]) > 0) out_numel = std::max(out_numel, numel(dims[i]));
    }
    work->flops = 0;
    work->bytes = read + out_numel * elem(0);
    return finite(work->bytes);
  }
  return false;
}

const Event* launching_op(const Trace& trace, const Event& gpu_event) {
  const int i = static_cast<int>(&gpu_event - trace.events.data());
  if (i < 0 || i >= static_cast<int>(trace.events.size())) return nullptr;
  const TraceIndex index(trace);
  const int op = index.op_of(i);
  return op >= 0 ? &trace.events[op] : nullptr;
}

}  // namespace ladder
