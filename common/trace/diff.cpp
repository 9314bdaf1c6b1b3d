// See diff.h.
#include "trace/diff.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "trace/index.h"
#include "trace/steps.h"
#include "trace/text.h"
#include "trace/work.h"

namespace ladder {

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
  return shortened(op + printable(kernel_display_name(name)), width - times.size()) + times;
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
