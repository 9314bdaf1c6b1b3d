// See ranks_timeline.h.
#include "trace/renderers/ranks_timeline.h"

#include <fmt/format.h>

#include <algorithm>

#include "trace/text/text.h"

namespace ladder {

namespace {

constexpr int kLabel = 26;

std::string us(int64_t ns) { return fmt::format("{:.1f}", static_cast<double>(ns) / 1e3); }

char mark(RankBar::Kind k) {
  switch (k) {
    case RankBar::Compute:
      return '#';
    case RankBar::Comm:
      return '=';
    case RankBar::Copy:
      return '-';
    case RankBar::Runtime:
      return ':';
    default:
      return '+';
  }
}

// Which mark wins a column: the wait, then communication, compute, copies, ranges, calls.
int rank_of_mark(char c) {
  switch (c) {
    case '~':
      return 6;
    case '=':
      return 5;
    case '#':
      return 4;
    case '-':
      return 3;
    case '+':
      return 2;
    case ':':
      return 1;
    default:
      return 0;
  }
}

}  // namespace

std::string ranks_timeline(const RanksPicture& p, int width) {
  const int cols = std::clamp(width, 60, 1000) - kLabel - 1;
  const int64_t t0 = p.from_ns, span = std::max<int64_t>(1, p.to_ns - p.from_ns);
  auto col = [&](int64_t t) {
    return std::clamp(static_cast<int>(static_cast<double>(t - t0) * cols / static_cast<double>(span)), 0, cols - 1);
  };
  auto paint = [&](std::string& row, int64_t a, int64_t b, char c) {
    for (int k = col(a), e = col(std::max(a, b - 1)); k <= e; ++k) {
      if (rank_of_mark(c) > rank_of_mark(row[static_cast<size_t>(k)])) row[static_cast<size_t>(k)] = c;
    }
  };
  std::string out = fmt::format("{} \u00b7 {} rank{} \u00b7 {} us, one column {} us\n", printable(p.step),
                                p.ranks.size(), p.ranks.size() == 1 ? "" : "s", us(span),
                                fmt::format("{:.2f}", static_cast<double>(span) / 1e3 / cols));
  out += p.straggler >= 0 ? fmt::format("straggler: rank {} (the others waited {} us for it in this step)\n",
                                        p.ranks[static_cast<size_t>(p.straggler)].rank, us(p.straggler_caused_ns))
                          : "no rank waited for another in this step\n";
  std::string axis(static_cast<size_t>(cols), ' ');
  for (int k = 0; k < cols; k += 20) {
    const std::string t = fmt::format("|{}", us(static_cast<int64_t>(static_cast<double>(span) * k / cols)));
    axis.replace(static_cast<size_t>(k), std::min(t.size(), static_cast<size_t>(cols - k)), t.substr(0, cols - k));
  }
  out += fmt::format("{:<{}} {}\n", "us from the first start", kLabel, axis);
  for (size_t r = 0; r < p.ranks.size(); ++r) {
    const RankLanes& rk = p.ranks[r];
    out += fmt::format("rank {}{}\n", rk.rank, static_cast<int>(r) == p.straggler ? "  (straggler)" : "");
    for (size_t l = 0; l < rk.lanes.size(); ++l) {
      const RankLane& lane = rk.lanes[l];
      if (!lane.gpu && lane.label.rfind("  depth ", 0) == 0 && lane.label != "  depth 1") continue;
      std::string row(static_cast<size_t>(cols), ' ');
      for (const RankBar& b : lane.bars) paint(row, b.ts_ns, b.end_ns, mark(b.kind));
      for (const RankJoin& j : p.joins) {
        if (j.lane[r] == static_cast<int>(l) && j.wait_ns[r] > 0)
          paint(row, j.arrival[r], j.arrival[r] + j.wait_ns[r], '~');
      }
      out += fmt::format("  {:<{}} {}\n", shortened(printable(lane.label), kLabel - 2), kLabel - 2, row);
    }
  }
  out +=
      "key: # compute kernel  = communication (NCCL kernel, gloo/nccl range)  ~ waiting for the last rank  "
      "- copy/set  + CPU range  : runtime call\n";
  if (!p.joins.empty()) {
    out += fmt::format("collectives of the step ({}), wait per rank in us, * arrived last:\n", p.joins.size());
    for (size_t k = 0; k < p.joins.size(); ++k) {
      const RankJoin& j = p.joins[k];
      std::string waits;
      for (size_t r = 0; r < p.ranks.size(); ++r)
        waits += fmt::format("  r{} {}{}", p.ranks[r].rank, us(j.wait_ns[r]), static_cast<int>(r) == j.last ? "*" : "");
      out += fmt::format("  {:>3} {:<40}{}\n", k + 1, shortened(printable(kernel_display_name(j.name)), 40), waits);
    }
  }
  if (p.unmatched > 0)
    out += fmt::format("{} collective{} of the step held by some ranks' traces only (not joined)\n", p.unmatched,
                       p.unmatched == 1 ? "" : "s");
  return out;
}

}  // namespace ladder
