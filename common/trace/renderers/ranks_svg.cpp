// See ranks_svg.h.
#include "trace/renderers/ranks_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "trace/text/text.h"

namespace ladder {

namespace {

constexpr double kLeft = 210, kRight = 20, kLane = 16, kGpuLane = 20, kGroupGap = 14, kTop = 78;
constexpr const char* kStyle =
    "text{fill:#1a1a1a}.t{font:bold 15px sans-serif}.s{font:12px sans-serif}.h{font:bold 12px sans-serif}"
    ".l{font:11px monospace}.x{font:11px sans-serif;fill:#444}.band{fill:#f4f6f9}.ax{stroke:#444;stroke-width:1}"
    ".g{stroke:#e4e4e4;stroke-width:1}rect{stroke:#4d4d4d;stroke-width:0.4}"
    ".ra{fill:#b9cdee}.rt{fill:#d6d6d6}.co{fill:#7fb8e6}.cm{fill:#f58518}.cp{fill:#d7b5ee}.mg{fill:#8a8a8a}"
    ".w{fill:#d62728;fill-opacity:0.45;stroke:none}.j{stroke:#333;stroke-width:1.2;fill:none;stroke-dasharray:3 2}";

std::string us(int64_t ns) { return fmt::format("{:.1f}", static_cast<double>(ns) / 1e3); }

const char* css(RankBar::Kind k, int count) {
  if (count > 1) return "mg";
  switch (k) {
    case RankBar::Range:
      return "ra";
    case RankBar::Runtime:
      return "rt";
    case RankBar::Compute:
      return "co";
    case RankBar::Comm:
      return "cm";
    default:
      return "cp";
  }
}

double lane_height(const RankLane& l) { return l.gpu ? kGpuLane : kLane; }

}  // namespace

std::string ranks_svg(const RanksPicture& p, const std::string& title, int width) {
  const double W = std::clamp(width, 400, 20000), x0 = kLeft, x1 = W - kRight;
  const int64_t t0 = p.from_ns, span = std::max<int64_t>(1, p.to_ns - p.from_ns);
  auto X = [&](int64_t t) { return x0 + (x1 - x0) * static_cast<double>(t - t0) / static_cast<double>(span); };

  // Lane positions: per rank, a header row, then its lanes.
  std::vector<std::vector<double>> lane_y(p.ranks.size());
  double y = kTop;
  std::vector<double> group_top(p.ranks.size()), group_bottom(p.ranks.size());
  for (size_t r = 0; r < p.ranks.size(); ++r) {
    group_top[r] = y;
    y += 18;
    for (const RankLane& l : p.ranks[r].lanes) {
      lane_y[r].push_back(y);
      y += lane_height(l);
    }
    group_bottom[r] = y;
    y += kGroupGap;
  }
  const double legend_y = y + 6, H = legend_y + 40;

  fmt::memory_buffer out;
  auto put = [&](auto&&... args) { fmt::format_to(std::back_inserter(out), std::forward<decltype(args)>(args)...); };
  const std::string straggler = p.straggler >= 0 ? fmt::format("straggler: rank {} (the others waited {} us for it)",
                                                               p.ranks[p.straggler].rank, us(p.straggler_caused_ns))
                                                 : std::string("no rank waited for another");
  put("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\">"
      "\n<style>{2}</style>\n<rect x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" fill=\"#ffffff\" "
      "stroke=\"none\"/>\n",
      W, H, kStyle);
  put("<text class=\"t\" x=\"12\" y=\"22\">{} \u00b7 {} \u00b7 {} rank{} \u00b7 {}</text>\n", xml_text(title),
      xml_text(p.step), p.ranks.size(), p.ranks.size() == 1 ? "" : "s", xml_text(straggler));
  put("<text class=\"s\" x=\"12\" y=\"40\">{} us on one clock (CLOCK_REALTIME of each rank's host); {} collective{} "
      "joined across ranks{}</text>\n",
      us(span), p.joins.size(), p.joins.size() == 1 ? "" : "s",
      p.unmatched ? fmt::format(", {} held by some ranks only (not joined)", p.unmatched) : "");
  // The time axis: ticks at 1, 2 or 5 times a power of ten us (text.h, as every picture's axis), grid lines down the
  // lanes.
  put("<line class=\"ax\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n", x0, kTop - 8, x1, kTop - 8);
  for (const AxisTick& tick : time_axis_ticks(span, 10)) {
    put("<line class=\"g\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/><text class=\"x\" "
        "x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"{4}\">{5}</text>\n",
        X(t0 + tick.offset_ns), kTop - 8, y - kGroupGap, kTop - 14, tick.offset_ns == 0 ? "start" : "middle",
        tick.label);
  }
  for (size_t r = 0; r < p.ranks.size(); ++r) {
    const RankLanes& rk = p.ranks[r];
    const bool strag = static_cast<int>(r) == p.straggler;
    put("<g class=\"rank\" data-rank=\"{}\">\n", rk.rank);
    put("<rect class=\"band\" x=\"4\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.1f}\" stroke=\"none\"/>\n",
        group_top[r], W - 8, group_bottom[r] - group_top[r]);
    put("<text class=\"h\" x=\"8\" y=\"{:.1f}\">rank {}{}</text>\n", group_top[r] + 13, rk.rank,
        strag ? " \u00b7 straggler: the others wait for it" : "");
    if (rk.lanes.empty())
      put("<text class=\"s\" x=\"{:.1f}\" y=\"{:.1f}\">no {} in this rank's trace</text>\n", x0, group_top[r] + 13,
          xml_text(p.step));
    for (size_t l = 0; l < rk.lanes.size(); ++l) {
      const RankLane& lane = rk.lanes[l];
      const double ly = lane_y[r][l], h = lane_height(lane) - 3;
      put("<text class=\"l\" x=\"12\" y=\"{:.1f}\">{}</text>\n", ly + h - 2,
          xml_text(shortened(printable(lane.label), 28)));
      for (const RankBar& b : lane.bars) {
        const double a = X(b.ts_ns), w = std::max(0.5, X(b.end_ns) - a);
        put("<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\"><title>{}: {} us"
            "</title></rect>\n",
            css(b.kind, b.count), a, ly, w, h,
            b.count > 1 ? fmt::format("{} events narrower than a pixel", b.count) : xml_text(b.name),
            us(b.end_ns - b.ts_ns));
      }
    }
    // This rank's waits, on its collectives' lanes.
    for (const RankJoin& j : p.joins) {
      if (j.lane[r] < 0 || j.wait_ns[r] <= 0) continue;
      const double ly = lane_y[r][static_cast<size_t>(j.lane[r])], a = X(j.arrival[r]);
      put("<rect class=\"w\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\"><title>rank {} waits {} us "
          "for rank {}</title></rect>\n",
          a, ly - 2, std::max(0.5, X(j.arrival[r] + j.wait_ns[r]) - a), kGpuLane + 1, rk.rank, us(j.wait_ns[r]),
          p.ranks[static_cast<size_t>(j.last)].rank);
    }
    put("</g>\n");
  }
  // Each collective joined across ranks through its ends.
  for (const RankJoin& j : p.joins) {
    std::string pts;
    for (size_t r = 0; r < p.ranks.size(); ++r) {
      if (j.lane[r] < 0) continue;
      const RankLane& lane = p.ranks[r].lanes[static_cast<size_t>(j.lane[r])];
      pts += fmt::format("{}{:.2f},{:.1f}", pts.empty() ? "" : " ", X(j.end[r]),
                         lane_y[r][static_cast<size_t>(j.lane[r])] + (lane_height(lane) - 3) / 2);
    }
    put("<polyline class=\"j\" points=\"{}\"><title>{}: rank {} arrived last</title></polyline>\n", pts,
        xml_text(j.name), p.ranks[static_cast<size_t>(j.last)].rank);
  }
  // The legend.
  struct Key {
    const char* css;
    const char* text;
  };
  const Key keys[] = {{"ra", "CPU range or op"},      {"rt", "CUDA runtime/driver call"},
                      {"co", "compute kernel"},       {"cm", "communication (NCCL)"},
                      {"cp", "copy or set"},          {"mg", "merged (under 1 px)"},
                      {"w", "wait for the last rank"}};
  double lx = 12;
  for (const Key& k : keys) {
    put("<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\"/><text class=\"x\" x=\"{:.1f}\" "
        "y=\"{:.1f}\">{}</text>\n",
        k.css, lx, legend_y, lx + 18, legend_y + 9, k.text);
    lx += 30 + 6.3 * static_cast<double>(std::char_traits<char>::length(k.text));
  }
  put("<line class=\"j\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/><text class=\"x\" x=\"{3:.1f}\" "
      "y=\"{4:.1f}\">a collective joined across ranks</text>\n",
      12.0, legend_y + 23, 32.0, 36.0, legend_y + 27);
  put("</svg>\n");
  return fmt::to_string(out);
}

}  // namespace ladder
