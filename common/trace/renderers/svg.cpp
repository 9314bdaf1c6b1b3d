// See svg.h. The picture is built in three passes: choose the events (window, focus), lay them out in lanes and rows,
// then write the SVG text. Every number is written with a fixed precision, so the bytes depend on the trace alone.
#include "trace/renderers/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "trace/analyses/steps.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

// Layout, in pixels. Labels are monospace, so a label's width is known without a font: chars * kCharW.
constexpr double kMargin = 12, kRowH = 20, kBarH = 16, kLaneHead = 20, kLaneGap = 10;
constexpr double kCharW = 6.7;  // 11 px monospace is 6.6 px per character in every common font; a little to spare

// Colors: mid-light fills under near-black text, on a white background: readable on GitHub's light and dark pages.
const char* const kStyle =
    "text{fill:#1a1a1a}"
    ".t{font:bold 15px sans-serif}.s{font:12px sans-serif}.h{font:bold 12px sans-serif}"
    ".l{font:11px monospace}.x{font:11px sans-serif;fill:#444}"
    "rect{stroke:#4d4d4d;stroke-width:0.5}.g{stroke:#e4e4e4;stroke-width:1}.ax{stroke:#444;stroke-width:1}"
    ".ar{stroke:#c0392b;stroke-width:1;fill:none;opacity:0.7}"
    ".ra{fill:#b9cdee}.op{fill:#a8d8a0}.la{fill:#f5b45f}.sy{fill:#ef8f8f}.ap{fill:#d6d6d6}.ov{fill:#ececec}"
    ".cp{fill:#d7b5ee}.ms{fill:#f2e39a}.ga{fill:#e8e8e8}.m{fill:#8a8a8a}"
    ".k0{fill:#7fb8e6}.k1{fill:#f4a582}.k2{fill:#6fb3c4}.k3{fill:#a9a2d6}.k4{fill:#dba765}"
    ".k5{fill:#8fd3d0}.k6{fill:#f2a0c0}.k7{fill:#c2c27a}.k8{fill:#a9b8f5}.k9{fill:#e6b88a}";
constexpr int kKernelColors = 10;

// A duration as a reader reads it: 3 significant figures, in us (ms from 10 ms on).
std::string dur_text(int64_t ns) {
  const double us = static_cast<double>(ns) / 1e3;
  if (us < 10) return fmt::format("{:.2f} us", us);
  if (us < 1000) return fmt::format("{:.1f} us", us);
  if (us < 10000) return fmt::format("{:.0f} us", us);
  return fmt::format("{:.1f} ms", us / 1e3);
}

std::string with_commas(int64_t n) {
  std::string s = std::to_string(n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

// The fill class of a bar: what kind of event it is. Kernels get a color per name (k0..k9, in order of appearance).
std::string fill_class(const Event& e, std::map<std::string, int>& kernel_color) {
  switch (e.cat) {
    case Cat::UserAnnotation: return "ra";
    case Cat::CpuOp: return "op";
    case Cat::CudaRuntime:
    case Cat::CudaDriver: return is_launch_call(e) ? "la" : is_sync_call(e) ? "sy" : "ap";
    case Cat::Kernel: {
      const int next = static_cast<int>(kernel_color.size());
      return "k" + std::to_string(kernel_color.emplace(e.name, next).first->second % kKernelColors);
    }
    case Cat::GpuMemcpy: return "cp";
    case Cat::GpuMemset: return "ms";
    case Cat::GpuUserAnnotation: return "ga";
    default: return "ov";
  }
}

std::string display_name(const Event& e) {
  return e.cat == Cat::Kernel ? kernel_display_name(e.name) : e.name;
}

// `name` in `cols` columns: whole when it fits, else without its namespace, cut to fit.
std::string fitted(const std::string& name, size_t cols) {
  return display_width(name) <= cols ? name : shortened(without_namespace(name), cols);
}

struct Lane {
  bool gpu = false;
  int64_t pid = 0, tid = 0;
  std::vector<std::vector<int>> rows;  // event indices per row, in time order after layout
};

// Which host event `focus` names in [t0, t1]: "NAME" the first, "NAME#K" the K-th (1-based), in time order.
int find_focus(const TraceIndex& index, const std::string& focus, int64_t t0, int64_t t1, const std::string& where) {
  std::string name = focus;
  int nth = 1;
  auto matches = [&](const std::string& want) {
    std::vector<int> found;
    for (const int i : index.host_order()) {
      const Event& e = index.event(i);
      if (e.name == want && !is_overhead_event(e) && e.ts_ns >= t0 && e.ts_ns <= t1) found.push_back(i);
    }
    return found;
  };
  std::vector<int> found = matches(focus);
  const size_t hash = focus.rfind('#');
  if (found.empty() && hash != std::string::npos && hash + 1 < focus.size() &&
      focus.find_first_not_of("0123456789", hash + 1) == std::string::npos && focus.size() - hash <= 7) {
    name = focus.substr(0, hash);
    nth = std::stoi(focus.substr(hash + 1));
    found = matches(name);
  }
  if (nth < 1 || static_cast<size_t>(nth) > found.size()) {
    throw TraceError(fmt::format("--focus {}: {} holds {} event{} named '{}'", printable(focus), where, found.size(),
                                 found.size() == 1 ? "" : "s", printable(name)));
  }
  return found[static_cast<size_t>(nth - 1)];
}

// What the picture shows: [t0, t1] of the trace, a sentence saying what that is, and which events are drawn.
struct Shown {
  int64_t first = 0, t0 = 0, t1 = 0;  // the trace's first event; the window
  std::string what;
  bool window = false;  // --from/--to
  int focus = -1;       // --focus: the op
  std::vector<char> keep;
};

// 1. The window: a step (to the end of its last GPU activity), a window in us, or one op's subtree.
Shown choose_window(const TraceIndex& index, const SvgOptions& opt) {
  const Trace& trace = index.trace();
  Shown w;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (const Event& e : trace.events) {
    first = std::min(first, e.ts_ns);
    last = std::max(last, e.end_ns());
  }
  w.first = first;
  w.t0 = first;
  w.t1 = last;
  w.window = opt.from_us || opt.to_us;
  if (w.window) {
    if (!opt.step.empty()) throw UsageError("--step and --from/--to: give one or the other");
    auto at = [&](double us) {
      if (!std::isfinite(us) || us < 0 || us > 1e12) throw UsageError(fmt::format("--from/--to: {} us is out of range", us));
      return first + static_cast<int64_t>(std::llround(us * 1e3));
    };
    w.t0 = opt.from_us ? at(*opt.from_us) : first;
    w.t1 = opt.to_us ? at(*opt.to_us) : last;
    if (w.t1 <= w.t0) throw UsageError("--from/--to: the window is empty (--to must be after --from)");
    w.what = fmt::format("{:.1f} us to {:.1f} us from the trace's start", (w.t0 - first) / 1e3, (w.t1 - first) / 1e3);
  } else {
    int k = find_step(index, opt.step, opt.title.empty() ? "the trace" : opt.title);
    if (k < 0) k = static_cast<int>(index.steps().size()) - 1;
    const TraceIndex::Step& s = index.steps()[static_cast<size_t>(k)];
    w.t0 = s.ts_ns;
    w.t1 = s.end_ns;
    for (const int g : index.gpu_activities(k)) w.t1 = std::max(w.t1, index.event(g).end_ns());
    w.what = index.whole_trace() ? "the whole trace (it has no ProfilerStep)" : s.name;
  }
  return w;
}

// The events drawn: host tree events and GPU lanes overlapping the window; with --focus, one subtree (and the window
// becomes the op's, to the end of the GPU work it launched).
void choose_events(const TraceIndex& index, const std::string& focus_name, Shown& w) {
  const int n = static_cast<int>(index.trace().events.size());
  std::vector<char>& keep = w.keep;
  keep.assign(static_cast<size_t>(n), 0);
  if (focus_name.empty()) {
    for (int i = 0; i < n; ++i) {
      const Event& e = index.event(i);
      const bool drawn = is_gpu_cat(e.cat) || (is_tree_event(e) && !is_overhead_event(e));
      if (drawn && e.end_ns() >= w.t0 && e.ts_ns <= w.t1) keep[static_cast<size_t>(i)] = 1;
    }
    return;
  }
  const int focus = w.focus = find_focus(index, focus_name, w.t0, w.t1, w.what);
  std::vector<char> in(static_cast<size_t>(n), 0);
  for (const int i : index.host_order()) {  // parents come before their children
    if (i == focus || (index.parent(i) >= 0 && in[static_cast<size_t>(index.parent(i))]))
      in[static_cast<size_t>(i)] = 1;
  }
  const Event& f = index.event(focus);
  w.t0 = f.ts_ns;
  w.t1 = f.end_ns();
  for (int i = 0; i < n; ++i) {
    const Event& e = index.event(i);
    if (in[static_cast<size_t>(i)] && !is_overhead_event(e)) keep[static_cast<size_t>(i)] = 1;
    if (!is_gpu_activity(e.cat)) continue;
    const int from = index.launch_of(i) >= 0 ? index.launch_of(i) : index.op_of(i);
    if (from >= 0 && in[static_cast<size_t>(from)]) {
      keep[static_cast<size_t>(i)] = 1;
      w.t1 = std::max(w.t1, e.end_ns());
    }
  }
  w.what = fmt::format("{} in {}", printable(focus_name), w.what);
}

// 2. Lanes: CPU threads (the trace's own process first, then by first event), then GPU streams by device and id; in a
// CPU lane a row per depth of kept ancestors, in a GPU lane row 0 the annotations' spans (when there are any), 1 the
// work; each row in time order.
std::vector<Lane> lay_out_lanes(const TraceIndex& index, const std::vector<char>& keep) {
  const Trace& trace = index.trace();
  const int n = static_cast<int>(trace.events.size());
  std::map<std::tuple<int, int64_t, int64_t>, Lane> lanes;  // (gpu, pid, tid)
  std::map<std::pair<int64_t, int64_t>, int64_t> first_ts;   // CPU lanes: when each thread first appears
  std::vector<int> depth(static_cast<size_t>(n), 0);  // kept ancestors: the parent's, and the parent if it is kept
  for (const int i : index.host_order()) {             // parents come before their children
    const int p = index.parent(i);
    if (p >= 0) depth[static_cast<size_t>(i)] = depth[static_cast<size_t>(p)] + (keep[static_cast<size_t>(p)] ? 1 : 0);
  }
  for (int i = 0; i < n; ++i) {
    if (!keep[static_cast<size_t>(i)]) continue;
    const Event& e = index.event(i);
    const bool gpu = is_gpu_cat(e.cat);
    Lane& lane = lanes[{gpu ? 1 : 0, e.pid, e.tid}];
    lane.gpu = gpu;
    lane.pid = e.pid;
    lane.tid = e.tid;
    const size_t row = gpu ? (e.cat == Cat::GpuUserAnnotation ? 0 : 1) : static_cast<size_t>(depth[static_cast<size_t>(i)]);
    if (lane.rows.size() <= row) lane.rows.resize(row + 1);
    lane.rows[row].push_back(i);
    if (!gpu) {
      auto [it, added] = first_ts.emplace(std::make_pair(e.pid, e.tid), e.ts_ns);
      if (!added) it->second = std::min(it->second, e.ts_ns);
    }
  }
  std::vector<Lane> order;
  for (auto& [key, lane] : lanes) {
    lane.rows.erase(std::remove_if(lane.rows.begin(), lane.rows.end(), [](const auto& r) { return r.empty(); }),
                    lane.rows.end());
    for (auto& r : lane.rows) {
      std::stable_sort(r.begin(), r.end(), [&](int a, int b) { return index.event(a).ts_ns < index.event(b).ts_ns; });
    }
    order.push_back(std::move(lane));
  }
  std::stable_sort(order.begin(), order.end(), [&](const Lane& a, const Lane& b) {
    if (a.gpu != b.gpu) return !a.gpu;
    if (a.gpu) return std::tie(a.pid, a.tid) < std::tie(b.pid, b.tid);
    const bool ma = a.pid == trace.pid, mb = b.pid == trace.pid;
    if (ma != mb) return ma;
    return std::make_tuple(first_ts[{a.pid, a.tid}], a.pid, a.tid) <
           std::make_tuple(first_ts[{b.pid, b.tid}], b.pid, b.tid);
  });
  return order;
}

// 3. Drawing: the SVG text of the lanes, the arrows from launch calls to their work, the legend, as they are drawn.
struct Drawing {
  explicit Drawing(const TraceIndex& i) : index(i) {}
  const TraceIndex& index;
  double x0 = 0, x1 = 0, px_per_ns = 0;
  int64_t v0 = 0, v1 = 0;  // the window, with a little room at both ends
  fmt::memory_buffer bars, labels, arrows, legend_svg;
  std::map<std::string, int> kernel_color;
  std::map<std::string, int> key_of;  // names listed in the legend: their number
  struct Listed {
    std::string name, fill;
  };
  std::vector<Listed> legend;
  std::map<int, std::pair<double, double>> launch_at;     // drawn launch calls: x and the bottom of their bar
  std::vector<std::tuple<int, double, double>> launched;  // drawn GPU work with a launch call: event, x, top
  int64_t merged_gpu = 0, merged_cpu = 0;
  double y = 78;  // below the title, the notes and the axis

  // x of a time, clamped to the plot (a hostile trace's far-off times must not become huge numbers).
  double X(int64_t t) const {
    return std::clamp(x0 + (static_cast<double>(t) - static_cast<double>(v0)) * px_per_ns, x0, x1);
  }

  // The label of a bar from a to b: the name and the measured duration when both fit; else the name's number in the
  // legend, then as much of the name as fits (its namespace dropped first). A number drawn is always listed, and the
  // reverse. "" when nothing fits, or the bar starts under the previous label of its row.
  std::string label(const Event& e, const std::string& fill, double a, double b, double label_end) {
    const std::string name = display_name(e), dur = dur_text(e.dur_ns);
    const size_t room = b - a - 6 > 0 ? static_cast<size_t>((b - a - 6) / kCharW) : 0;
    const bool clear = a + 3 >= label_end;  // never over the previous label of the row: no label, no number taken
    if (clear && display_width(name) + 1 + dur.size() <= room) return name + " " + dur;
    if (!clear) return "";
    const auto it = key_of.find(name);
    const int number = it != key_of.end() ? it->second : static_cast<int>(key_of.size()) + 1;
    const std::string key = fmt::format("[{}]", number);
    if (key.size() > room) return "";
    if (it == key_of.end()) {
      key_of.emplace(name, number);
      legend.push_back({name, fill});
    }
    return key.size() + 1 + 6 <= room ? key + " " + fitted(name, room - key.size() - 1) : key;
  }

  void row(const std::vector<int>& events, bool gpu);
  void lanes(const std::vector<Lane>& order, int64_t pid);
  void launch_arrows();
  void legend_rows(const std::vector<char>& keep);
};

void Drawing::row(const std::vector<int>& events, bool gpu) {
  const double top = y + (kRowH - kBarH) / 2;
  // A run of bars each narrower than a pixel is one grey bar: the picture stays small and the eye sees the run.
  std::vector<int> run;
  double run_x0 = 0, run_x1 = -1e9, label_end = -1e9;
  auto flush = [&] {
    if (run.size() == 1) {  // a run of one was drawn as itself: it keeps its arrow
      const Event& e = index.event(run[0]);
      if (is_launch_call(e)) launch_at[run[0]] = {run_x0, top + kBarH};
      if (is_gpu_activity(e.cat) && index.launch_of(run[0]) >= 0) launched.emplace_back(run[0], run_x0, top);
    }
    if (run.size() > 1) {
      fmt::format_to(std::back_inserter(bars),
                     "<rect class=\"m\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\"/>\n", run_x0, top,
                     std::max(1.0, run_x1 - run_x0), kBarH);
      (gpu ? merged_gpu : merged_cpu) += static_cast<int64_t>(run.size());
    }
    run.clear();
  };
  for (const int i : events) {
    const Event& e = index.event(i);
    const double a = X(std::max(e.ts_ns, v0)), b = X(std::min(e.end_ns(), v1));
    const std::string fill = fill_class(e, kernel_color);
    if (b - a < 1.0) {
      if (!run.empty() && a > run_x1 + 1.0) flush();
      if (run.empty()) run_x0 = a;
      run.push_back(i);
      run_x1 = std::max(run_x1, std::max(b, a + 1.0));
      if (run.size() == 1) {  // alone it is drawn as itself, a pixel wide; the next one in the run hides it
        fmt::format_to(std::back_inserter(bars),
                       "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"1\" height=\"{}\"/>\n", fill, a, top,
                       kBarH);
      }
      continue;
    }
    flush();
    fmt::format_to(std::back_inserter(bars),
                   "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\"/>\n", fill, a, top,
                   b - a, kBarH);
    if (is_launch_call(e)) launch_at[i] = {a, top + kBarH};
    if (is_gpu_activity(e.cat) && index.launch_of(i) >= 0) launched.emplace_back(i, a, top);
    const std::string text = label(e, fill, a, b, label_end);
    if (!text.empty()) {
      fmt::format_to(std::back_inserter(labels), "<text class=\"l\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", a + 3,
                     top + 12, xml_text(text));
      label_end = a + 3 + static_cast<double>(display_width(text)) * kCharW;
    }
  }
  flush();
}

void Drawing::lanes(const std::vector<Lane>& order, int64_t pid) {
  for (const Lane& lane : order) {
    const std::string head = lane.gpu ? fmt::format("GPU {} \u00b7 stream {}", lane.pid, lane.tid)
                                      : fmt::format("CPU thread {}{}", lane.tid,
                                                    lane.pid == pid && lane.tid == pid ? " (main)" : "");
    fmt::format_to(std::back_inserter(labels), "<text class=\"h\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x0,
                   y + 14, xml_text(head));
    y += kLaneHead;
    for (const auto& r : lane.rows) {
      row(r, lane.gpu);
      y += kRowH;
    }
    y += kLaneGap;
  }
}

void Drawing::launch_arrows() {
  for (const auto& [g, gx, gtop] : launched) {
    const auto it = launch_at.find(index.launch_of(g));
    if (it == launch_at.end()) continue;
    const auto [lx, lbottom] = it->second;
    fmt::format_to(std::back_inserter(arrows), "<path class=\"ar\" d=\"M{:.1f} {:.1f}L{:.1f} {:.1f}\" marker-end=\"url(#h)\"/>\n",
                   lx, lbottom, gx, gtop);
  }
}

// The legend: the colors, then every name that did not fit on its bar, with its count and total time.
void Drawing::legend_rows(const std::vector<char>& keep) {
  y += 8;
  const std::pair<const char*, const char*> kinds[] = {
      {"ra", "range"}, {"op", "op"}, {"la", "launch call"}, {"sy", "sync call"}, {"ap", "other runtime call"},
      {"k0", "kernel (a color per name)"}, {"cp", "memcpy"}, {"ms", "memset"}, {"m", "merged: narrower than a pixel"}};
  double lx = x0;
  for (const auto& [cls, text] : kinds) {
    fmt::format_to(std::back_inserter(legend_svg),
                   "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"12\"/>"
                   "<text class=\"s\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                   cls, lx, y, lx + 18, y + 11, text);
    lx += 18 + std::strlen(text) * 6.5 + 16;
  }
  fmt::format_to(std::back_inserter(legend_svg),
                 "<path class=\"ar\" d=\"M{:.1f} {:.1f}L{:.1f} {:.1f}\" marker-end=\"url(#h)\"/>"
                 "<text class=\"s\" x=\"{:.1f}\" y=\"{:.1f}\">launch call to its work</text>\n",
                 lx, y + 2, lx + 14, y + 12, lx + 20, y + 11);
  y += 22;
  // Each listed name's count and total over every drawn event of that name, so the figures do not depend on which
  // bars were too narrow for their label.
  std::map<std::string, std::pair<int64_t, int64_t>> drawn;  // name: count, total ns
  for (size_t i = 0; i < keep.size(); ++i) {
    if (!keep[i]) continue;
    const Event& e = index.event(static_cast<int>(i));
    const auto it = key_of.find(display_name(e));
    if (it == key_of.end()) continue;
    auto& [count, total] = drawn[it->first];
    count += 1;
    total += e.dur_ns;
  }
  for (size_t k = 0; k < legend.size(); ++k) {
    const Listed& l = legend[k];
    const auto [count, total] = drawn[l.name];
    const std::string figures = fmt::format(" \u00d7{}, {} total", count, dur_text(total));
    const std::string head = fmt::format("[{}] ", k + 1);
    const double cols = (x1 - x0 - 18) / kCharW - static_cast<double>(head.size() + display_width(figures));
    fmt::format_to(std::back_inserter(legend_svg),
                   "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"12\"/>"
                   "<text class=\"l\" x=\"{:.1f}\" y=\"{:.1f}\">{}{}{}</text>\n",
                   l.fill, x0, y, x0 + 18, y + 10, head,
                   xml_text(fitted(l.name, cols > 8 ? static_cast<size_t>(cols) : 8)), figures);
    y += 16;
  }
}

// The axis: ticks at 1, 2 or 5 times a power of ten us from the window's start, with light grid lines down the lanes.
void draw_axis(fmt::memory_buffer& axis, const Drawing& d, int64_t t0, int64_t t1, double lanes_end) {
  const double axis_y = 62;
  fmt::format_to(std::back_inserter(axis), "<line class=\"ax\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>\n",
                 d.x0, axis_y, d.x1, axis_y);
  for (const AxisTick& tick : time_axis_ticks(t1 - t0, 10)) {
    fmt::format_to(std::back_inserter(axis),
                   "<line class=\"g\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
                   "<line class=\"ax\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{3}\"/>"
                   "<text class=\"x\" x=\"{0:.1f}\" y=\"{4}\" text-anchor=\"{5}\">{6}</text>\n",
                   d.X(t0 + tick.offset_ns), axis_y, lanes_end, axis_y + 5, axis_y - 4,
                   tick.offset_ns == 0 ? "start" : "middle", tick.label);
  }
}

// The notes under the title: how long the window is, and what was merged.
std::string notes(const Shown& w, const Drawing& d) {
  std::string note =
      fmt::format("{} from start to end{}", dur_text(w.t1 - w.t0),
                  w.focus >= 0 ? " (the op and the GPU work it launched)" : " (to the end of its GPU work)");
  if (w.window) note = fmt::format("{} window", dur_text(w.t1 - w.t0));
  if (d.merged_gpu + d.merged_cpu > 0) {
    std::vector<std::string> parts;
    if (d.merged_gpu > 0) parts.push_back(with_commas(d.merged_gpu) + " GPU activities");
    if (d.merged_cpu > 0) parts.push_back(with_commas(d.merged_cpu) + " CPU events");
    note += fmt::format(" \u00b7 {} narrower than a pixel drawn merged (grey)",
                        parts.size() == 2 ? parts[0] + " and " + parts[1] : parts[0]);
  }
  return note;
}

}  // namespace

std::string trace_svg(const TraceIndex& index, const SvgOptions& opt) {
  const Trace& trace = index.trace();
  if (opt.width < 400 || opt.width > 20000) throw UsageError("--width: between 400 and 20000 pixels");
  if (trace.events.empty()) throw TraceError("the trace holds no events");
  Shown w = choose_window(index, opt);
  choose_events(index, opt.focus, w);
  const std::vector<Lane> order = lay_out_lanes(index, w.keep);

  Drawing d(index);
  const double W = opt.width;
  d.x0 = kMargin;
  d.x1 = W - kMargin;
  // A little room at both ends, so that the first and last bars do not touch the frame.
  const int64_t pad = std::max<int64_t>(1, (w.t1 - w.t0) / 50);
  d.v0 = w.t0 - pad;
  d.v1 = w.t1 + pad;
  d.px_per_ns = (d.x1 - d.x0) / static_cast<double>(d.v1 - d.v0);
  d.lanes(order, trace.pid);
  d.launch_arrows();
  const double lanes_end = d.y;
  d.legend_rows(w.keep);
  const double H = d.y + 8;
  fmt::memory_buffer axis;
  draw_axis(axis, d, w.t0, w.t1, lanes_end);

  // The title and the notes: what is drawn, and what was merged.
  const std::string title = opt.title.empty() ? w.what : opt.title + " \u00b7 " + w.what;
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out),
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\">\n"
                 "<style>{2}</style>\n"
                 "<defs><marker id=\"h\" viewBox=\"0 0 6 6\" refX=\"6\" refY=\"3\" markerWidth=\"6\" markerHeight=\"6\" "
                 "orient=\"auto\"><path d=\"M0 0L6 3L0 6z\" fill=\"#c0392b\"/></marker></defs>\n"
                 "<rect x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" fill=\"#ffffff\" stroke=\"none\"/>\n"
                 "<text class=\"t\" x=\"{3}\" y=\"22\">{4}</text>\n<text class=\"s\" x=\"{3}\" y=\"40\">{5}</text>\n",
                 W, H, kStyle, d.x0, xml_text(title), xml_text(notes(w, d)));
  for (const auto* part : {&axis, &d.bars, &d.arrows, &d.labels, &d.legend_svg}) out.append(*part);
  fmt::format_to(std::back_inserter(out), "</svg>\n");
  return fmt::to_string(out);
}

}  // namespace ladder
