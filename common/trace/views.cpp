#include "trace/views.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace ladder {

namespace {

// Draws [name---] from column c0 to c1 (inclusive) on `row`, or #'s when the name does not fit.
void draw(std::string& row, int c0, int c1, const std::string& name) {
  c0 = std::max(c0, 0);
  c1 = std::min(c1, static_cast<int>(row.size()) - 1);
  if (c1 < c0) c1 = c0;
  const int len = c1 - c0 + 1;
  if (len < 4 || static_cast<int>(name.size()) + 2 > len) {
    for (int c = c0; c <= c1; ++c) row[c] = '#';
    return;
  }
  std::string cell = "[" + name;
  cell.resize(len - 1, '-');
  cell += ']';
  row.replace(c0, len, cell);
}

std::string short_kernel(const std::string& name, size_t width) {
  return name.size() <= width ? name : name.substr(0, width - 3) + "...";
}

}  // namespace

// A demangled kernel name without what a reader does not need in a table: the return type, anonymous namespaces and
// the parameter list ("void ch01::(anonymous namespace)::add_bias_plain<float>(const float*, ...)" ->
// "ch01::add_bias_plain<float>").
std::string kernel_display_name(std::string name) {
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  for (size_t p; (p = name.find("(anonymous namespace)::")) != std::string::npos;) name.erase(p, 23);
  if (!name.empty() && name.back() == ')') {
    int depth = 0;  // find the '(' that opens the parameter list, skipping template arguments
    for (size_t i = 0; i < name.size(); ++i) {
      if (name[i] == '<') ++depth;
      if (name[i] == '>') --depth;
      if (name[i] == '(' && depth == 0 && i > 0 && name[i - 1] != ' ') {  // "Memset (Device)" keeps its words
        name.erase(i);
        break;
      }
    }
  }
  return name;
}

int terminal_width() {
  if (const char* c = std::getenv("COLUMNS")) {
    const int w = std::atoi(c);
    if (w >= 40) return w;
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 100;
}

std::string timeline(const Trace& trace, int step, int width) {
  const TraceIndex index(trace);
  const std::vector<StepStats> steps = step_stats(index);
  if (steps.empty()) return "(this trace holds no events)\n";
  if (step < 0 || step >= static_cast<int>(steps.size())) step = static_cast<int>(steps.size()) - 1;
  const StepStats& s = steps[step];
  const int label = 12;
  const int cols = std::max(width - label, 20);
  // The axis covers the step on the CPU lane and whatever its kernels ran past it.
  int64_t t0 = s.ts_ns, t1 = s.ts_ns + s.dur_ns;
  for (const Event* g : s.gpu_events) t1 = std::max(t1, g->end_ns());
  const double ns_per_col = std::max<double>(1.0, double(t1 - t0) / cols);
  auto col = [&](int64_t t) { return static_cast<int>((t - t0) / ns_per_col); };

  // CPU rows by nesting depth inside the step: depth 1 = the forward's range, deeper = ops; calls get their own row.
  std::vector<const Event*> cpu;
  for (const Event& e : trace.events) {
    if (is_gpu_cat(e.cat) || e.cat == Cat::Other || e.pid != trace.pid) continue;
    if (e.ts_ns < s.ts_ns || e.end_ns() > s.ts_ns + s.dur_ns) continue;
    if (e.ts_ns == s.ts_ns && e.dur_ns == s.dur_ns && e.name == s.name) continue;  // the step itself
    cpu.push_back(&e);
  }
  std::sort(cpu.begin(), cpu.end(), [](const Event* a, const Event* b) {
    return a->ts_ns != b->ts_ns ? a->ts_ns < b->ts_ns : a->dur_ns > b->dur_ns;
  });
  std::vector<std::string> range_rows;
  std::string calls(cols, ' ');
  std::vector<const Event*> open;  // enclosing ranges, to find each range's depth
  for (const Event* e : cpu) {
    if (is_api_call(e->cat)) {
      draw(calls, col(e->ts_ns), col(e->end_ns()), is_launch_call(*e) ? "launch" : e->name);
      continue;
    }
    while (!open.empty() && open.back()->end_ns() < e->end_ns()) open.pop_back();
    const size_t depth = open.size();
    if (range_rows.size() <= depth) range_rows.emplace_back(cols, ' ');
    draw(range_rows[depth], col(e->ts_ns), col(e->end_ns()), e->name);
    open.push_back(e);
  }

  // GPU row: each kernel is a letter repeated over its span, named in the key below.
  std::string gpu(cols, ' ');
  std::string key;
  std::map<std::string, char> letter;
  for (const Event* g : s.gpu_events) {
    auto it = letter.find(g->name);
    if (it == letter.end()) {
      const char c = static_cast<char>('A' + letter.size() % 26);
      it = letter.emplace(g->name, c).first;
    }
    const int c0 = std::max(0, col(g->ts_ns)), c1 = std::min(cols - 1, std::max(c0, col(g->end_ns())));
    for (int c = c0; c <= c1; ++c) gpu[c] = it->second;
    key += fmt::format("  {} {:>9.1f} us  {}\n", it->second, g->dur_ns / 1e3,
                       short_kernel(kernel_display_name(g->name), width - 18));
  }

  std::string out = index.whole_trace() ? "No ProfilerStep in this trace: drawn as one window over the whole trace.\n" : "";
  out += fmt::format("{} on one axis: {:.1f} us across, {:.2f} us per character\n", s.name,
                                (t1 - t0) / 1e3, ns_per_col / 1e3);
  const char* names[] = {"forward", "ops", "ops", "ops", "ops", "ops", "ops", "ops"};
  for (size_t d = 0; d < range_rows.size(); ++d) {
    out += fmt::format("{:<{}}{}\n", d == 0 ? "CPU " + std::string(names[0]) : d < 8 ? std::string("    ") + names[d] : "",
                       label, range_rows[d]);
  }
  out += fmt::format("{:<{}}{}\n", "    calls", label, calls);
  out += fmt::format("{:<{}}{}\n", "GPU", label, gpu);
  out += key;
  return out;
}

namespace {

struct KernelSummary {
  std::string op;         // the op that launched it ("" if unknown)
  int count = 0;          // per step
  double us = 0;          // per step, summed
  double bytes = 0;       // per step, where known
  bool bytes_known = true;
};
struct TraceSummary {
  int steps = 0;
  double step_us = 0, busy_us = 0, kernels = 0, bytes = 0;
  bool bytes_known = true;
  std::map<std::string, KernelSummary> kernels_by_name;
  std::vector<std::string> order;  // first appearance in a step
};

TraceSummary summarize(const Trace& t) {
  TraceSummary s;
  const TraceIndex index(t);
  const std::vector<StepStats> steps = step_stats(index);
  s.steps = static_cast<int>(steps.size());
  if (steps.empty()) return s;
  for (const StepStats& st : steps) {
    s.step_us += st.dur_ns / 1e3;
    s.busy_us += st.gpu_busy_ns / 1e3;
    for (const Event* g : st.gpu_events) {
      if (g->cat != Cat::Kernel) continue;
      s.kernels += 1;
      KernelSummary& k = s.kernels_by_name[g->name];
      if (k.count == 0 && std::find(s.order.begin(), s.order.end(), g->name) == s.order.end()) s.order.push_back(g->name);
      k.count += 1;
      k.us += g->dur_ns / 1e3;
      Work w;
      const int op_i = index.op_of(static_cast<int>(g - t.events.data()));
      const Event* op = op_i >= 0 ? &t.events[op_i] : nullptr;
      if (op && k.op.empty()) k.op = op->name;
      if (op && op_work(*op, &w)) {
        k.bytes += w.bytes;
        s.bytes += w.bytes;
      } else {
        k.bytes_known = false;
        s.bytes_known = false;
      }
    }
  }
  const double n = s.steps;
  s.step_us /= n;
  s.busy_us /= n;
  s.kernels /= n;
  s.bytes /= n;
  for (auto& [name, k] : s.kernels_by_name) {
    k.us /= n;
    k.bytes /= n;
    k.count = static_cast<int>(k.count / n + 0.5);
  }
  return s;
}

std::string mb(double bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

// "[gelu] void ch03::gelu_vec_kernel<2, false>(...)": the op first, since long kernel names often differ only late.
std::string label(const std::string& name, const KernelSummary& k, size_t width) {
  const std::string op = k.op.empty() ? "" : "[" + k.op + "] ";
  const std::string times = k.count > 1 ? fmt::format(" x{}", k.count) : "";
  return short_kernel(op + kernel_display_name(name), width - times.size()) + times;
}

}  // namespace

std::string diff_traces(const Trace& a, const Trace& b, const std::string& name_a, const std::string& name_b) {
  const TraceSummary sa = summarize(a), sb = summarize(b);
  std::string out = fmt::format("per step, mean over {} steps of {} and {} of {}\n", sa.steps, name_a, sb.steps, name_b);
  const size_t w = 60;
  for (const std::string& name : sa.order) {
    if (!sb.kernels_by_name.count(name)) {
      const KernelSummary& k = sa.kernels_by_name.at(name);
      out += fmt::format("  - {:<{}} {:>9.1f} us{}\n", label(name, k, w), w, k.us,
                         k.bytes_known ? "  " + mb(k.bytes) : "");
    }
  }
  for (const std::string& name : sb.order) {
    if (!sa.kernels_by_name.count(name)) {
      const KernelSummary& k = sb.kernels_by_name.at(name);
      out += fmt::format("  + {:<{}} {:>9.1f} us{}\n", label(name, k, w), w, k.us,
                         k.bytes_known ? "  " + mb(k.bytes) : "");
    }
  }
  for (const std::string& name : sa.order) {
    auto it = sb.kernels_by_name.find(name);
    if (it == sb.kernels_by_name.end()) continue;
    const KernelSummary &ka = sa.kernels_by_name.at(name), &kb = it->second;
    out += fmt::format("  = {:<{}} {:>9.1f} us -> {:>9.1f} us{}\n", label(name, ka, w), w, ka.us, kb.us,
                       ka.count != kb.count ? fmt::format("  ({}x -> {}x)", ka.count, kb.count) : "");
  }
  out += fmt::format("  kernels per step    {:>9.0f}    -> {:>9.0f}\n", sa.kernels, sb.kernels);
  out += fmt::format("  GPU busy per step   {:>9.1f} us -> {:>9.1f} us  ({:+.1f}%)\n", sa.busy_us, sb.busy_us,
                     sa.busy_us > 0 ? 100.0 * (sb.busy_us - sa.busy_us) / sa.busy_us : 0.0);
  out += fmt::format("  step wall time      {:>9.1f} us -> {:>9.1f} us  ({:+.1f}%)\n", sa.step_us, sb.step_us,
                     sa.step_us > 0 ? 100.0 * (sb.step_us - sa.step_us) / sa.step_us : 0.0);
  if (sa.bytes_known && sb.bytes_known) {
    out += fmt::format("  bytes moved by kernels {:>9} -> {:>9}  ({:+.1f} MB)\n", mb(sa.bytes), mb(sb.bytes),
                       (sb.bytes - sa.bytes) / 1e6);
  } else {
    out += "  bytes moved: not derivable (the trace lacks the ops' input shapes)\n";
  }
  return out;
}

}  // namespace ladder
