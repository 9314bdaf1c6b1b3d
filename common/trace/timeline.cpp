// See timeline.h.
#include "trace/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "trace/index.h"
#include "trace/steps.h"
#include "trace/text.h"

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

}  // namespace

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
                       shortened(printable(kernel_display_name(g->name)), static_cast<size_t>(width - 18)));
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

}  // namespace ladder
