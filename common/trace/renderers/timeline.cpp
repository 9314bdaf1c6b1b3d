// See timeline.h.
#include "trace/renderers/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "trace/analyses/steps.h"
#include "trace/model/index.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

// What the legend under the timeline must explain: the names cut to fit and whether any range was drawn as '#'.
struct Marks {
  std::map<std::string, std::set<std::string>> cut;  // label drawn -> the full names it stood for
  bool narrow = false;
};

// One row of a lane, and where its last drawing ended: a range must start after it, never on it.
struct Row {
  std::string text;
  int end = -1;           // the last column drawn on
  bool end_mark = false;  // that column holds a '#', which may stand for several ranges
};

// "aten::linear" -> "linear": the name a reader says, when the whole one does not fit.
std::string local_name(const std::string& name) {
  const size_t p = name.rfind("::");
  return p == std::string::npos || p + 2 >= name.size() ? name : name.substr(p + 2);
}

// `name` in k characters. A CUDA call's name is CamelCase, and its capitals tell the calls apart where little room is
// left: "cudaLaunchKernel" LK, "cuLaunchKernelEx" LKE, "cudaMemsetAsync" MA, "cudaGraphLaunch" GL. Otherwise, and with
// 7 or more characters, its start and end around a '~' ("cudaLaunchKernelExC" in 7: "cud~ExC", "linear" in 5:
// "li~ar"); under 3 characters, its first letters.
std::string cut(const std::string& name, int k) {
  if (static_cast<int>(name.size()) <= k) return name;
  std::string capitals;
  for (const char c : name) {
    if (c >= 'A' && c <= 'Z') capitals += c;
  }
  if (k < 7 && capitals.size() >= 2 && name[0] >= 'a' && name[0] <= 'z') {
    return capitals.substr(0, static_cast<size_t>(k));
  }
  if (k < 3) return name.substr(0, static_cast<size_t>(k));
  const int tail = (k - 1) / 2, head = k - 1 - tail;
  return name.substr(0, static_cast<size_t>(head)) + "~" + name.substr(name.size() - static_cast<size_t>(tail));
}

// A cut of `name` in k characters that stands for no other name in this timeline ("cudaLaunchKernel" and
// "cuLaunchKernelEx" are both LK in 2: the second gets KE, the last capitals, or L2), so a reader can tell every cut
// label apart; "" when none is left.
std::string unique_cut(const std::string& name, int k, Marks& marks) {
  const std::string local = local_name(name);
  std::vector<std::string> tries = {cut(local, k), cut(name, k)};
  std::string capitals;
  for (const char c : local) {
    if (c >= 'A' && c <= 'Z') capitals += c;
  }
  if (static_cast<int>(capitals.size()) > k) tries.push_back(capitals.substr(capitals.size() - static_cast<size_t>(k)));
  const std::string head = tries.front().substr(0, static_cast<size_t>(std::max(k - 1, 0)));
  for (char d = '2'; d <= '9'; ++d) tries.push_back(head + d);
  for (const std::string& t : tries) {
    const auto it = marks.cut.find(t);
    if (it == marks.cut.end() || it->second.count(name)) return t;
  }
  return "";
}

// Draws a range over columns c0..c1 of `row` as [name---]; where the name does not fit, as [local name] or a cut of
// it ("[li~ar]"), and under 3 columns as '#'. Columns past either edge are pulled in: a zero-length event exactly at
// the step's end lands on the last column, not one past it. A range that rounding puts on the column where the
// previous one ends starts one column later; one with no column of its own left joins a '#' already there.
void draw(Row& row, int c0, int c1, const std::string& name, Marks& marks) {
  const int last = static_cast<int>(row.text.size()) - 1;
  if (last < 0) return;
  c0 = std::clamp(c0, 0, last);
  c1 = std::clamp(c1, c0, last);
  if (c0 <= row.end) {
    if (c1 <= row.end && (row.end_mark || row.end == last)) return;
    c0 = row.end + 1;
    c1 = std::max(c1, c0);
  }
  const int len = c1 - c0 + 1;
  std::string label;
  if (static_cast<int>(name.size()) + 2 <= len) {
    label = name;
  } else if (len >= 3) {
    label = unique_cut(name, len - 2, marks);
    if (!label.empty()) marks.cut[label].insert(name);
  }
  row.end = c1;
  row.end_mark = label.empty();
  if (label.empty()) {
    row.text.replace(static_cast<size_t>(c0), static_cast<size_t>(len), static_cast<size_t>(len), '#');
    marks.narrow = true;
    return;
  }
  std::string cell = "[" + label;
  cell.resize(static_cast<size_t>(len - 1), '-');
  cell += ']';
  row.text.replace(static_cast<size_t>(c0), static_cast<size_t>(len), cell);
}

// "12.3 us", or "18.6 ms" from 10 ms on.
std::string duration(int64_t ns) {
  return ns < 10000000 ? fmt::format("{:.1f} us", ns / 1e3) : fmt::format("{:.1f} ms", ns / 1e6);
}

// How a CPU block is headed: by thread id, with its name where the file gives one ("thread 446 (pt_autograd_0)" is
// shown as 446 (pt_autograd_0)), and which thread is the main one (on Linux the main thread's id is the process id).
std::string thread_heading(const Trace& trace, int64_t tid) {
  std::string out = fmt::format("CPU thread {}", tid);
  auto it = trace.thread_names.find(tid);
  if (it != trace.thread_names.end()) {
    const std::string prefix = fmt::format("thread {} (", tid);
    const std::string& n = it->second;
    const bool wrapped = n.rfind(prefix, 0) == 0 && n.size() > prefix.size() + 1 && n.back() == ')';
    out += fmt::format(" ({})", printable(wrapped ? n.substr(prefix.size(), n.size() - prefix.size() - 1) : n));
  }
  if (tid == trace.pid) out += ", the main thread";
  return out;
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
  // The main thread's block first, then the others by thread id.
  auto order = [&](const Event* e) { return std::make_tuple(e->tid != trace.pid, e->tid, e->ts_ns, -e->dur_ns); };
  std::sort(cpu.begin(), cpu.end(), [&](const Event* a, const Event* b) { return order(a) < order(b); });
  struct Block {
    int64_t tid = 0;
    std::vector<Row> range_rows;
    Row calls;
  };
  Marks marks;
  std::vector<Block> blocks;
  std::vector<const Event*> open;  // enclosing ranges, to find each range's depth
  for (const Event* e : cpu) {
    if (blocks.empty() || blocks.back().tid != e->tid) {
      blocks.push_back(Block{e->tid, {}, Row{std::string(cols, ' ')}});
      open.clear();
    }
    Block& b = blocks.back();
    if (is_api_call(e->cat)) {  // each call by its own name: cudaLaunchKernel is not cuLaunchKernelEx
      draw(b.calls, col(e->ts_ns), col(e->end_ns()), printable(e->name), marks);
      continue;
    }
    while (!open.empty() && open.back()->end_ns() < e->end_ns()) open.pop_back();
    const size_t depth = open.size();
    if (b.range_rows.size() <= depth) b.range_rows.push_back(Row{std::string(cols, ' ')});
    draw(b.range_rows[depth], col(e->ts_ns), col(e->end_ns()), printable(e->name), marks);
    open.push_back(e);
  }

  // GPU: one row per stream (two streams' kernels at once must not hide each other); each kernel is a letter
  // repeated over its span, named in the key below, once per name with how many ran and their total time. Letters
  // are never reused: past 62 names, '?' stands for the rest.
  static const std::string kLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::map<std::pair<int64_t, int64_t>, std::string> gpu_rows;  // (device, stream) -> row
  struct Kernels {
    char letter;
    int64_t count = 0, total_ns = 0;
  };
  std::map<std::string, Kernels> kernels;
  std::vector<std::string> names_in_order;
  for (const Event* g : s.gpu_events) {
    auto it = kernels.find(g->name);
    if (it == kernels.end()) {
      const char c = kernels.size() < kLetters.size() ? kLetters[kernels.size()] : '?';
      it = kernels.emplace(g->name, Kernels{c}).first;
      names_in_order.push_back(g->name);
    }
    ++it->second.count;
    it->second.total_ns += g->dur_ns;
    std::string& row = gpu_rows.try_emplace({g->pid, g->tid}, std::string(cols, ' ')).first->second;
    const int c0 = std::clamp(col(g->ts_ns), 0, cols - 1), c1 = std::clamp(col(g->end_ns()), c0, cols - 1);
    for (int c = c0; c <= c1; ++c) row[c] = it->second.letter;
  }

  std::string out =
      index.whole_trace() ? "No ProfilerStep in this trace: drawn as one window over the whole trace.\n" : "";
  out += fmt::format("{} on one axis: {:.1f} us across, {:.2f} us per character\n", printable(s.name), (t1 - t0) / 1e3,
                     ns_per_col / 1e3);
  for (const Block& b : blocks) {
    out += thread_heading(trace, b.tid) + "\n";
    for (size_t d = 0; d < b.range_rows.size(); ++d) {
      out += fmt::format("{:<{}}{}\n", d == 0 ? "  ranges" : d < 8 ? "  ops" : "", label, b.range_rows[d].text);
    }
    out += fmt::format("{:<{}}{}\n", "  calls", label, b.calls.text);
  }
  if (blocks.empty()) out += fmt::format("{:<{}}{}\n", "  calls", label, std::string(cols, ' '));
  if (gpu_rows.empty()) out += fmt::format("{:<{}}{}\n", "GPU", label, std::string(cols, ' '));
  for (const auto& [lane, row] : gpu_rows) {
    const std::string name = gpu_rows.size() == 1 ? "GPU" : fmt::format("GPU s{}", lane.second);
    out += fmt::format("{:<{}}{}\n", name, label, row);
  }

  // The legend: what each mark means, then the names behind the cut labels and the letters.
  const size_t name_width = static_cast<size_t>(std::max(width - 30, 20));
  if (!blocks.empty()) {
    out +=
        "Key to the CPU rows: [name---] is a range over its time. ranges: the outermost of a thread;\n"
        "  ops: one row per level inside them; calls: CUDA runtime and driver calls.\n";
  }
  if (!marks.cut.empty()) {
    out += "  A range too narrow for its name shows it cut (~: letters left out; a CUDA call: its capitals):\n";
    // Every mark drawn is listed (each stands for one name): the rows' width bounds how many there can be.
    for (const auto& [label, names] : marks.cut) {
      std::string full;
      for (const std::string& name : names) full += (full.empty() ? "" : ", ") + name;
      const size_t room = static_cast<size_t>(std::max(width - 7 - static_cast<int>(label.size()), 20));
      out += fmt::format("    [{}] {}\n", label, shortened(full, room));
    }
  }
  if (marks.narrow)
    out += "  # is a range too narrow for any name (under 3 characters); one # may stand for several.\n";
  if (!kernels.empty()) {
    out += "Key to the GPU rows: a letter per kernel name, over its time; how many ran, their total time:\n";
  }
  int64_t rest_count = 0, rest_ns = 0, rest_names = 0;
  for (const std::string& name : names_in_order) {
    const Kernels& k = kernels.at(name);
    if (k.letter == '?') {
      rest_count += k.count;
      rest_ns += k.total_ns;
      ++rest_names;
      continue;
    }
    out += fmt::format("  {} {:>7} {:>10} total  {}\n", k.letter, fmt::format("x{}", k.count), duration(k.total_ns),
                       shortened(printable(kernel_display_name(name)), name_width));
  }
  if (rest_names) {
    const std::string what = fmt::format("{} more kernel names: ? stands for every kernel name past the first {}",
                                         rest_names, kLetters.size());
    out += fmt::format("  ? {:>7} {:>10} total  {}\n", fmt::format("x{}", rest_count), duration(rest_ns), what);
  }
  return out;
}

}  // namespace ladder
