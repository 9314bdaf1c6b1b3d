#include "trace/views.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>

#include "trace/error.h"

namespace ladder {

namespace {

// Draws [name---] from column c0 to c1 (inclusive) on `row`, or #'s when the name does not fit. Columns past either
// edge are pulled in: a zero-length event exactly at the step's end lands on the last column, not one past it.
void draw(std::string& row, int c0, int c1, const std::string& name) {
  const int last = static_cast<int>(row.size()) - 1;
  if (last < 0) return;
  c0 = std::clamp(c0, 0, last);
  c1 = std::clamp(c1, c0, last);
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
  if (width < 4) width = 4;
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

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

int terminal_width() {
  // Clamped to --width's range: $COLUMNS comes from the environment, and a row is allocated per column.
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long w = std::strtol(c, &end, 10);
    if (end != c && w >= 40) return static_cast<int>(std::min(w, 1000L));
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) {
    return std::min<int>(ws.ws_col, 1000);
  }
  return 100;
}

int find_step(const TraceIndex& index, const std::string& step, const std::string& trace_name) {
  const auto& steps = index.steps();
  if (step.empty()) return -1;
  const std::string want = step.find_first_not_of("0123456789") == std::string::npos ? "ProfilerStep#" + step : step;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].event >= 0 && steps[k].name == want) return static_cast<int>(k);
  }
  std::string there;
  for (const auto& s : steps) {
    if (s.event >= 0) there += (there.empty() ? "" : ", ") + printable(s.name);
  }
  throw TraceError(fmt::format("no step '{}' in {}: {}", printable(step), trace_name,
                               there.empty() ? "it has no ProfilerStep (one window over the whole trace)"
                                             : "its steps are " + there));
}

std::string timeline(const Trace& trace, int step, int width) {
  const TraceIndex index(trace);
  const std::vector<StepStats> steps = step_stats(index);
  if (steps.empty()) return "(this trace holds no events)\n";
  if (step < 0 || step >= static_cast<int>(steps.size())) step = static_cast<int>(steps.size()) - 1;
  const StepStats& s = steps[step];
  const int label = 12;
  width = std::clamp(width, 40, 1000);
  const int cols = std::max(width - label, 20);
  // The axis covers the step on the CPU lane and whatever its kernels ran past it.
  int64_t t0 = s.ts_ns, t1 = s.ts_ns + s.dur_ns;
  for (const Event* g : s.gpu_events) t1 = std::max(t1, g->end_ns());
  const double span = static_cast<double>(t1) - static_cast<double>(t0) > 4e18 ? 4e18 : static_cast<double>(t1 - t0);
  const double ns_per_col = std::max<double>(1.0, span / cols);
  // Clamped in double before the cast: a time far outside the axis (a hostile file's) must not overflow the int.
  auto col = [&](int64_t t) {
    int64_t d = 0;
    const double c = __builtin_sub_overflow(t, t0, &d) ? (t < t0 ? -1.0 : cols) : static_cast<double>(d) / ns_per_col;
    return static_cast<int>(std::clamp(c, -1.0, static_cast<double>(cols)));
  };

  // CPU: one block of rows per thread that did anything in the step (backward runs on autograd threads), each with
  // its ranges by nesting depth (depth 0 = the forward's range, deeper = ops) and a row of its runtime/driver calls.
  // Python frames (with_stack) are left out, as torch's table leaves them out.
  const int step_event = index.steps()[static_cast<size_t>(step)].event;
  std::vector<const Event*> cpu;
  for (const Event& e : trace.events) {
    if (!is_tree_event(e) || is_overhead_event(e) || e.pid != trace.pid) continue;
    if (e.ts_ns < s.ts_ns || e.end_ns() > s.ts_ns + s.dur_ns) continue;
    if (step_event >= 0 && &e == &trace.events[static_cast<size_t>(step_event)]) continue;  // the step itself
    if (e.ts_ns == s.ts_ns && e.dur_ns == s.dur_ns && e.name == s.name) continue;
    cpu.push_back(&e);
  }
  std::sort(cpu.begin(), cpu.end(), [](const Event* a, const Event* b) {
    return std::make_tuple(a->tid, a->ts_ns, -a->dur_ns) < std::make_tuple(b->tid, b->ts_ns, -b->dur_ns);
  });
  struct Block {
    int64_t tid = 0;
    std::vector<std::string> range_rows;
    std::string calls;
  };
  std::vector<Block> blocks;
  std::vector<const Event*> open;  // enclosing ranges, to find each range's depth
  for (const Event* e : cpu) {
    if (blocks.empty() || blocks.back().tid != e->tid) {
      blocks.push_back(Block{e->tid, {}, std::string(cols, ' ')});
      open.clear();
    }
    Block& b = blocks.back();
    if (is_api_call(e->cat)) {
      draw(b.calls, col(e->ts_ns), col(e->end_ns()), is_launch_call(*e) ? "launch" : printable(e->name));
      continue;
    }
    while (!open.empty() && open.back()->end_ns() < e->end_ns()) open.pop_back();
    const size_t depth = open.size();
    if (b.range_rows.size() <= depth) b.range_rows.emplace_back(cols, ' ');
    draw(b.range_rows[depth], col(e->ts_ns), col(e->end_ns()), printable(e->name));
    open.push_back(e);
  }

  // GPU: one row per stream (two streams' kernels at once must not hide each other); each kernel is a letter
  // repeated over its span, named in the key below. Letters are never reused: past 62 names, '?' stands for the rest.
  static const std::string kLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::map<std::pair<int64_t, int64_t>, std::string> gpu_rows;  // (device, stream) -> row
  std::string key;
  std::map<std::string, char> letter;
  bool out_of_letters = false;
  for (const Event* g : s.gpu_events) {
    auto it = letter.find(g->name);
    if (it == letter.end()) {
      const char c = letter.size() < kLetters.size() ? kLetters[letter.size()] : '?';
      if (c == '?') out_of_letters = true;
      it = letter.emplace(g->name, c).first;
    }
    std::string& row = gpu_rows.try_emplace({g->pid, g->tid}, std::string(cols, ' ')).first->second;
    const int c0 = std::clamp(col(g->ts_ns), 0, cols - 1), c1 = std::clamp(col(g->end_ns()), c0, cols - 1);
    for (int c = c0; c <= c1; ++c) row[c] = it->second;
    key += fmt::format("  {} {:>9.1f} us  {}\n", it->second, g->dur_ns / 1e3,
                       short_kernel(printable(kernel_display_name(g->name)), static_cast<size_t>(width - 18)));
  }
  if (out_of_letters) key += fmt::format("  ? stands for every kernel name past the first {}\n", kLetters.size());

  std::string out =
      index.whole_trace() ? "No ProfilerStep in this trace: drawn as one window over the whole trace.\n" : "";
  out += fmt::format("{} on one axis: {:.1f} us across, {:.2f} us per character\n", printable(s.name),
                     (t1 - t0) / 1e3, ns_per_col / 1e3);
  for (const Block& b : blocks) {
    if (blocks.size() > 1) out += fmt::format("CPU thread {}:\n", b.tid);
    for (size_t d = 0; d < b.range_rows.size(); ++d) {
      out += fmt::format("{:<{}}{}\n", d == 0 ? "CPU forward" : d < 8 ? "    ops" : "", label, b.range_rows[d]);
    }
    out += fmt::format("{:<{}}{}\n", "    calls", label, b.calls);
  }
  if (blocks.empty()) out += fmt::format("{:<{}}{}\n", "    calls", label, std::string(cols, ' '));
  if (gpu_rows.empty()) out += fmt::format("{:<{}}{}\n", "GPU", label, std::string(cols, ' '));
  for (const auto& [lane, row] : gpu_rows) {
    const std::string name = gpu_rows.size() == 1 ? "GPU" : fmt::format("GPU s{}", lane.second);
    out += fmt::format("{:<{}}{}\n", name, label, row);
  }
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
  bool whole_trace = false;
  std::string step_name;  // the one step compared, when one was chosen
  double step_us = 0, busy_us = 0, kernels = 0, bytes = 0;
  bool bytes_known = true;
  std::map<std::string, KernelSummary> kernels_by_name;
  std::vector<std::string> order;  // first appearance in a step
};

// Means over every step of `t`, or the one step named `step` ("3" = ProfilerStep#3). Linear in the events.
TraceSummary summarize(const Trace& t, const std::string& step, const std::string& trace_name) {
  TraceSummary s;
  const TraceIndex index(t);
  std::vector<StepStats> steps = step_stats(index);
  s.whole_trace = index.whole_trace();
  const int chosen = find_step(index, step, trace_name);
  if (chosen >= 0) {
    steps = {steps[static_cast<size_t>(chosen)]};
    s.step_name = steps[0].name;
  }
  s.steps = static_cast<int>(steps.size());
  if (steps.empty()) return s;
  for (const StepStats& st : steps) {
    s.step_us += st.dur_ns / 1e3;
    s.busy_us += st.gpu_busy_ns / 1e3;
    for (const Event* g : st.gpu_events) {
      if (g->cat != Cat::Kernel) continue;
      s.kernels += 1;
      KernelSummary& k = s.kernels_by_name[g->name];
      if (k.count == 0) s.order.push_back(g->name);  // first time this name is seen
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
  const std::string op = k.op.empty() ? "" : "[" + printable(k.op) + "] ";
  const std::string times = k.count > 1 ? fmt::format(" x{}", k.count) : "";
  return short_kernel(op + printable(kernel_display_name(name)), width - times.size()) + times;
}

}  // namespace

std::string diff_traces(const Trace& a, const Trace& b, const std::string& name_a, const std::string& name_b,
                        const std::string& step) {
  const TraceSummary sa = summarize(a, step, printable(name_a)), sb = summarize(b, step, printable(name_b));
  std::string out;
  for (const auto* t : {&sa, &sb}) {
    if (t->whole_trace) {
      out += fmt::format("{} has no ProfilerStep: its whole trace is one window, compared as one step\n",
                         printable(t == &sa ? name_a : name_b));
    }
  }
  if (!sa.step_name.empty()) {
    out += fmt::format("{} of {} and of {}\n", printable(sa.step_name), printable(name_a), printable(name_b));
  } else {
    out += fmt::format("per step, mean over {} steps of {} and {} of {}\n", sa.steps, printable(name_a), sb.steps,
                       printable(name_b));
  }
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
