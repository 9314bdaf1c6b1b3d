// See memory_svg.h. Each device's panel: the allocated level as a solid step line (a record changes it, nothing
// between records does), the reserved level dashed, the allocated peak marked and written, grid lines with sizes, and
// a shared time axis in us from the window's start. A curve with more records than pixels keeps, per pixel column,
// its first, lowest, highest and last point, so every peak still shows.
#include "trace/renderers/memory_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "trace/analyses/memory.h"
#include "trace/analyses/steps.h"
#include "trace/renderers/sizes.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

constexpr double kPanelH = 150, kPanelGap = 46;

// The timeline picture's look (trace/renderers/svg.cpp): the same fonts, text color and axis strokes.
const char* const kStyle =
    "text{fill:#1a1a1a}"
    ".t{font:bold 15px sans-serif}.s{font:12px sans-serif}.h{font:bold 12px sans-serif}"
    ".x{font:11px sans-serif;fill:#444}"
    ".g{stroke:#e4e4e4;stroke-width:1}.ax{stroke:#444;stroke-width:1}.st{fill:#f3f6fb;stroke:none}"
    ".al{stroke:#2f6db5;stroke-width:1.5;fill:none}.re{stroke:#d9822b;stroke-width:1.5;fill:none;stroke-dasharray:5 3}"
    ".pk{fill:#c0392b;stroke:none}";

// The points drawn: all of them when they fit, else per pixel column the first, lowest, highest and last.
std::vector<MemoryPoint> thinned(const std::vector<MemoryPoint>& curve, bool reserved, int64_t t0, double ns_per_px) {
  std::vector<MemoryPoint> in;
  for (const MemoryPoint& p : curve) {
    if (!reserved || p.reserved >= 0) in.push_back(p);
  }
  auto v = [&](const MemoryPoint& p) { return reserved ? p.reserved : p.allocated; };
  std::vector<MemoryPoint> out;
  size_t i = 0;
  while (i < in.size()) {
    const int64_t col = static_cast<int64_t>(static_cast<double>(in[i].ts_ns - t0) / ns_per_px);
    size_t j = i, lo = i, hi = i;
    for (; j < in.size() && static_cast<int64_t>(static_cast<double>(in[j].ts_ns - t0) / ns_per_px) == col; ++j) {
      if (v(in[j]) < v(in[lo])) lo = j;
      if (v(in[j]) > v(in[hi])) hi = j;
    }
    if (j - i <= 4) {
      for (size_t k = i; k < j; ++k) out.push_back(in[k]);
    } else {
      std::vector<size_t> keep = {i, lo, hi, j - 1};
      std::sort(keep.begin(), keep.end());
      keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
      for (const size_t k : keep) out.push_back(in[k]);
    }
    i = j;
  }
  return out;
}

}  // namespace

std::string memory_svg(const TraceIndex& index, const SvgOptions& opt) {
  if (opt.width < 400 || opt.width > 20000) throw UsageError("--width: between 400 and 20000 pixels");
  if (opt.from_us || opt.to_us || !opt.focus.empty()) {
    throw UsageError("--memory draws a step (--step) or every record: --from, --to and --focus are for the timeline");
  }
  if (index.trace().memory.empty()) {
    throw TraceError("the trace holds no [memory] record: record it with torch.profiler.profile(profile_memory=True)");
  }
  const int k = find_step(index, opt.step, opt.title.empty() ? "the trace" : opt.title);
  const MemoryReport rep = memory_report(index, k, k < 0);
  if (rep.windows.empty()) throw TraceError(fmt::format("{} holds no [memory] record", index.steps()[static_cast<size_t>(k)].name));
  const auto& steps = index.steps();
  int64_t t0 = std::numeric_limits<int64_t>::max(), t1 = std::numeric_limits<int64_t>::min();
  for (const MemoryWindow& w : rep.windows) {
    t0 = std::min(t0, w.curve.front().ts_ns);
    t1 = std::max(t1, w.curve.back().ts_ns);
  }
  if (k >= 0) t0 = steps[static_cast<size_t>(k)].ts_ns, t1 = steps[static_cast<size_t>(k)].end_ns;
  if (t1 <= t0) t1 = t0 + 1;
  const double W = opt.width, x0 = 96, x1 = W - 24;
  const double ns_per_px = static_cast<double>(t1 - t0) / (x1 - x0);
  auto X = [&](int64_t ts) { return x0 + static_cast<double>(ts - t0) / ns_per_px; };

  fmt::memory_buffer body;
  auto put = [&](auto&&... args) { fmt::format_to(std::back_inserter(body), std::forward<decltype(args)>(args)...); };
  double y = 70;
  // The steps the window holds, as light bands behind every panel (drawn once the height is known: collected here).
  std::vector<std::pair<double, double>> bands;
  std::vector<std::pair<double, std::string>> band_names;
  if (k < 0 && !index.whole_trace()) {
    for (const TraceIndex::Step& s : steps) {
      if (s.end_ns < t0 || s.ts_ns > t1) continue;
      bands.emplace_back(X(std::max(s.ts_ns, t0)), X(std::min(s.end_ns, t1)));
      band_names.emplace_back(X(std::max(s.ts_ns, t0)), s.name);
    }
  }
  const double panels_top = y;
  for (const MemoryWindow& w : rep.windows) {
    int64_t lo = w.curve.front().allocated, hi = lo;
    for (const MemoryPoint& p : w.curve) {
      lo = std::min(lo, p.allocated);
      hi = std::max({hi, p.allocated, p.reserved});
      if (p.reserved >= 0) lo = std::min(lo, p.reserved);
    }
    if (hi <= lo) hi = lo + 1;
    const double top = y + 18, bottom = top + kPanelH;
    auto Y = [&](int64_t v) { return bottom - static_cast<double>(v - lo) / static_cast<double>(hi - lo) * kPanelH; };
    put("<text class=\"h\" x=\"{:.1f}\" y=\"{:.1f}\">{} \u00b7 peak allocated {} \u00b7 peak reserved {}</text>\n", x0,
        y + 12, xml_text(w.device), size_text(static_cast<double>(w.peak_allocated)),
        w.peak_reserved >= 0 ? size_text(static_cast<double>(w.peak_reserved)) : "not in the trace");
    // Grid lines with their sizes, about four, at 1, 2 or 5 times a power of ten bytes: round in decimal units.
    const double step_b = tick_step(static_cast<double>(hi - lo), 4);
    const double first_b = std::ceil(static_cast<double>(lo) / step_b) * step_b;
    for (int i = 0; i <= 20; ++i) {  // counted, not summed: v += step could stand still on a large level
      const double v = first_b + i * step_b;
      if (v > static_cast<double>(hi) + 0.5) break;
      const double gy = bottom - (v - static_cast<double>(lo)) / static_cast<double>(hi - lo) * kPanelH;
      put("<line class=\"g\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>"
          "<text class=\"x\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
          x0, gy, x1, gy, x0 - 6, gy + 4, size_tick(v, step_b));
    }
    put("<line class=\"ax\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
        "<line class=\"ax\" x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{3:.1f}\" y2=\"{2:.1f}\"/>\n",
        x0, top, bottom, x1);
    // The curves: a step line through every (thinned) point, held to the window's end.
    for (const bool reserved : {true, false}) {
      const std::vector<MemoryPoint> pts = thinned(w.curve, reserved, t0, ns_per_px);
      if (pts.empty()) continue;
      auto v = [&](const MemoryPoint& p) { return reserved ? p.reserved : p.allocated; };
      fmt::memory_buffer d;
      fmt::format_to(std::back_inserter(d), "M{:.1f} {:.1f}", X(pts.front().ts_ns), Y(v(pts.front())));
      for (size_t i = 1; i < pts.size(); ++i) {
        fmt::format_to(std::back_inserter(d), "H{:.1f}V{:.1f}", X(pts[i].ts_ns), Y(v(pts[i])));
      }
      fmt::format_to(std::back_inserter(d), "H{:.1f}", x1);
      put("<path class=\"{}\" d=\"{}\"/>\n", reserved ? "re" : "al", fmt::to_string(d));
    }
    // The allocated peak, marked and written beside it (to its left when it is near the right edge).
    const double px = X(w.peak_ts_ns), py = Y(w.peak_allocated);
    const std::string label = fmt::format("peak {} at {:.1f} us", size_text(static_cast<double>(w.peak_allocated)),
                                          static_cast<double>(w.peak_ts_ns - t0) / 1e3);
    const bool left = px + 8 + static_cast<double>(label.size()) * 6.5 > x1;
    put("<circle class=\"pk\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"/>"
        "<text class=\"s\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>\n",
        px, py, left ? px - 6 : px + 6, std::max(top + 10, py - 6), left ? "end" : "start", xml_text(label));
    y = bottom + kPanelGap - 18;
  }
  const double panels_end = y;

  // The time axis, under the last panel, in us from the window's start.
  fmt::memory_buffer axis;
  const double axis_y = panels_end + 4;
  for (const AxisTick& tick : time_axis_ticks(t1 - t0, 10)) {
    fmt::format_to(std::back_inserter(axis),
                   "<line class=\"ax\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
                   "<text class=\"x\" x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"{4}\">{5}</text>\n",
                   X(t0 + tick.offset_ns), axis_y - 4, axis_y + 1, axis_y + 14,
                   tick.offset_ns == 0 ? "start" : "middle", tick.label);
  }
  double y_end = axis_y + 30;
  // The legend.
  fmt::format_to(std::back_inserter(axis),
                 "<path class=\"al\" d=\"M{0:.1f} {1:.1f}H{2:.1f}\"/><text class=\"s\" x=\"{3:.1f}\" y=\"{4:.1f}\">"
                 "allocated (Total Allocated after each [memory] record)</text>\n"
                 "<path class=\"re\" d=\"M{5:.1f} {1:.1f}H{6:.1f}\"/><text class=\"s\" x=\"{7:.1f}\" y=\"{4:.1f}\">"
                 "reserved (Total Reserved)</text>\n",
                 x0, y_end - 4, x0 + 24, x0 + 30, y_end, x0 + 380, x0 + 404, x0 + 410);
  const double H = y_end + 12;

  fmt::memory_buffer out;
  const std::string what = k >= 0 ? steps[static_cast<size_t>(k)].name
                           : index.whole_trace() ? "the whole trace (it has no ProfilerStep)"
                                                 : "every [memory] record";
  const std::string title = "memory \u00b7 " + (opt.title.empty() ? what : opt.title + " \u00b7 " + what);
  const std::string note = fmt::format("{} records over {:.1f} us{}", rep.records, static_cast<double>(t1 - t0) / 1e3,
                                       bands.empty() ? "" : "; shaded: the ProfilerSteps");
  fmt::format_to(std::back_inserter(out),
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\">\n"
                 "<style>{2}</style>\n"
                 "<rect x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" fill=\"#ffffff\" stroke=\"none\"/>\n"
                 "<text class=\"t\" x=\"{3}\" y=\"22\">{4}</text>\n<text class=\"s\" x=\"{3}\" y=\"40\">{5}</text>\n",
                 W, H, kStyle, 12, xml_text(title), xml_text(note));
  for (size_t i = 0; i < bands.size(); ++i) {
    fmt::format_to(std::back_inserter(out),
                   "<rect class=\"st\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>"
                   "<text class=\"x\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                   bands[i].first, panels_top - 8, std::max(1.0, bands[i].second - bands[i].first), panels_end - panels_top + 8,
                   band_names[i].first + 2, panels_top - 10, xml_text(band_names[i].second));
  }
  out.append(body);
  out.append(axis);
  fmt::format_to(std::back_inserter(out), "</svg>\n");
  return fmt::to_string(out);
}

}  // namespace ladder
