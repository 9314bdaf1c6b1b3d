// See ranks_view.h.
#include "trace/renderers/ranks_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "trace/renderers/table_records.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

std::string us(int64_t ns) { return fmt::format("{:.1f}", ns / 1e3); }

}  // namespace

std::string matching_note(const std::vector<RankFigures>& ranks, const Matching& m) {
  std::string out = fmt::format(
      "  {} collective{} matched across ranks by {}; their ends agree within {} us\n", m.complete,
      m.complete == 1 ? "" : "s",
      m.by_seq ? "process group and Seq" : "process group and order (each rank's order aligned by the ends)",
      us(m.max_end_spread_ns));
  if (m.max_end_spread_ns > 1000000)
    out += fmt::format("  warning: matched collectives end up to {} us apart (on one host they end within tens of us): "
                       "these traces may not be one run, or their clocks disagree\n",
                       us(m.max_end_spread_ns));
  if (m.name_mismatches > 0)
    out += fmt::format("  warning: {} matched collective{} named differently on different ranks: the order may not "
                       "agree\n", m.name_mismatches, m.name_mismatches == 1 ? " is" : "s are");
  if (m.incomplete == 0) return out;
  // Per rank, the collectives only some ranks' traces hold: usually the edges of the capture windows.
  for (size_t r = 0; r < ranks.size(); ++r) {
    int count = 0;
    int64_t first = -1, last = -1;
    for (const MatchedCollective& c : m.collectives) {
      if (c.complete || c.index[r] < 0) continue;
      ++count;
      first = first < 0 ? c.arrival[r] : std::min(first, c.arrival[r]);
      last = std::max(last, c.arrival[r]);
    }
    if (count == 0) continue;
    const int64_t t0 = ranks[r].steps.empty() ? 0 : ranks[r].steps.front().ts_ns;
    out += fmt::format("  unmatched: rank {} holds {} collective{} that some other rank's trace lacks (starting {} to {} "
                       "us from its first step): no wait counted for them\n",
                       ranks[r].rank, count, count == 1 ? "" : "s", us(first - t0), us(last - t0));
  }
  return out;
}

namespace {

// HTA's comm/comp overlap: the share of the NCCL kernels' time that computation ran beside; "-" (HTA's NaN) on a
// rank without NCCL kernels or a step without their time.
std::string overlap_pct(const RankFigures& rank, const CommCompSplit& s) {
  const int64_t comm = s.communication_ns + s.overlapping_ns;
  if (!rank.comm_kernels || comm <= 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * s.overlapping_ns / comm);
}

// Each present cell as row(name, rank index, cell, step index or -1 for the means): the steps', then the means' (only
// with more than one step).
template <typename Row>
void for_each_cell(const RanksTable& t, size_t n_ranks, const Row& row) {
  for (size_t k = 0; k < t.steps.size(); ++k) {
    for (size_t r = 0; r < n_ranks; ++r) {
      if (t.cells[k][r].present) row(t.steps[k], r, t.cells[k][r], static_cast<int>(k));
    }
  }
  if (t.steps.size() <= 1) return;
  const std::string mean_name = fmt::format("mean of {}", t.steps.size());
  for (size_t r = 0; r < n_ranks; ++r) {
    if (t.mean[r].present) row(mean_name, r, t.mean[r], -1);
  }
}

// Step time per rank: a column per rank (up to 8; more: the fastest and the mean), the slowest and the straggler.
std::string step_time_text(const std::vector<RankFigures>& ranks, const RanksTable& t) {
  const size_t n_ranks = ranks.size();
  std::string out = "\n\nStep time per rank, us (the step's wall time on the CPU; * the slowest rank; straggler: the "
                    "rank the others\nwaited for longest in the step's collectives)\n";
  const bool wide = n_ranks <= 8;  // a column per rank; more ranks: the fastest and the slowest only
  out += fmt::format("  {:<18}", "step");
  if (wide) {
    for (const RankFigures& r : ranks) out += fmt::format(" {:>11}", fmt::format("rank {}", r.rank));
  } else {
    out += fmt::format(" {:>11} {:>11}", "fastest", "mean");
  }
  out += fmt::format(" {:>8} {:>11} {:>10}\n", "slowest", "slow-fast", "straggler");
  for (size_t k = 0; k < t.steps.size(); ++k) {
    out += fmt::format("  {:<18}", shortened(printable(t.steps[k]), 18));
    int64_t lo = -1, hi = 0, sum = 0, n = 0;
    for (size_t r = 0; r < n_ranks; ++r) {
      const RankStepCell& c = t.cells[k][r];
      if (c.present) {
        lo = lo < 0 ? c.split.wall_ns : std::min(lo, c.split.wall_ns);
        hi = std::max(hi, c.split.wall_ns);
        sum += c.split.wall_ns, ++n;
      }
      const bool slowest = t.slowest[k] == static_cast<int>(r);
      if (wide)
        out += fmt::format(" {:>11}", c.present ? us(c.split.wall_ns) + (slowest ? "*" : " ") : std::string("- "));
    }
    if (!wide) out += fmt::format(" {:>11} {:>11}", us(lo), us(n ? sum / n : 0));
    const std::string slow = t.slowest[k] >= 0 ? std::to_string(ranks[static_cast<size_t>(t.slowest[k])].rank) : "-";
    const std::string strag =
        t.straggler[k] >= 0 ? std::to_string(ranks[static_cast<size_t>(t.straggler[k])].rank) : "-";
    out += fmt::format(" {:>8} {:>11} {:>10}\n", slow, us(lo < 0 ? 0 : hi - lo), strag);
  }
  return out;
}

// Computation and communication per rank, as the TensorBoard plugin's Distributed view splits a step.
std::string split_text(const std::vector<RankFigures>& ranks, const RanksTable& t) {
  std::string out =
      "\nComputation and communication per rank, us (the TensorBoard plugin's Distributed view: computation = "
      "kernels,\nnot NCCL's, minus the overlap; overlapping = both at once; communication = NCCL kernels (a rank "
      "without:\nrecord_param_comms, nccl:*, gloo:*, c10d::* ranges) minus the overlap; other = the rest of the "
      "step)\n";
  out += fmt::format("  {:<18} {:>5} {:>10} {:>12} {:>12} {:>14} {:>10} {:>9}\n", "step", "rank", "wall",
                     "computation", "overlapping", "communication", "other", "overlap%");
  for_each_cell(t, ranks.size(), [&](const std::string& name, size_t r, const RankStepCell& c, int) {
    const CommCompSplit& s = c.split;
    out += fmt::format("  {:<18} {:>5} {:>10} {:>12} {:>12} {:>14} {:>10} {:>9}\n", shortened(printable(name), 18),
                       ranks[r].rank, us(s.wall_ns), us(s.computation_ns), us(s.overlapping_ns), us(s.communication_ns),
                       us(s.other_ns), overlap_pct(ranks[r], s));
  });
  bool cpu_computation = false;
  for (const RankFigures& r : ranks) cpu_computation = cpu_computation || r.computation_is_cpu;
  if (cpu_computation) out += "  (a rank that ran no kernel has its CPU ops as computation, as the plugin counts it)\n";
  out += "  overlap%: overlapping / (overlapping + communication), HTA's comm/comp overlap for the step; - without "
         "NCCL kernels\n";
  return out;
}

// Waiting in collectives per rank, and how the collectives were matched.
std::string wait_text(const std::vector<RankFigures>& ranks, const RanksTable& t) {
  std::string out = "\nWaiting in collectives, us (a collective ends for all once the last rank arrives: each rank "
                    "waits from its own\narrival to the last one's, in the step that launched it)\n";
  bool any = false;
  for (const RankFigures& r : ranks) any = any || !r.collectives.empty();
  if (!any) return out + "  no collective in any rank (no nccl* kernel, no gloo:* or nccl:* range)\n";
  out += fmt::format("  {:<18} {:>5} {:>11} {:>10} {:>10} {:>13} {:>18}\n", "step", "rank", "collectives",
                     "unmatched", "waited", "arrived last", "made others wait");
  for_each_cell(t, ranks.size(), [&](const std::string& name, size_t r, const RankStepCell& c, int) {
    out += fmt::format("  {:<18} {:>5} {:>11} {:>10} {:>10} {:>13} {:>18}\n", shortened(printable(name), 18),
                       ranks[r].rank, c.collectives, c.unmatched, us(c.wait_ns), c.arrived_last, us(c.caused_ns));
  });
  if (t.steps.size() > 1) out += "  (mean rows: times per step; collectives and arrived last: all steps together)\n";
  out += "  (waited: the union of the rank's waits at the collectives its step launched: within the step's span to "
         "the end\n  of its GPU work, which can run past the step's CPU range)\n";
  out += matching_note(ranks, t.matching);
  out += "  (arrivals compared as the files stamp them: ranks on several hosts only as well as their clocks agree)\n";
  return out;
}

}  // namespace

std::string ranks_view(const std::vector<RankFigures>& ranks, const std::string& step, OutputFormat format) {
  const RanksTable t = ranks_table(ranks, step);
  if (format != OutputFormat::Text) return table_records(ranks_frame(ranks, t), format);
  std::string out = fmt::format("{} rank{}:", ranks.size(), ranks.size() == 1 ? "" : "s");
  for (const RankFigures& r : ranks)
    out += fmt::format(" {}={}", r.rank, printable(std::filesystem::path(r.path).filename().string()));
  return out + step_time_text(ranks, t) + split_text(ranks, t) + wait_text(ranks, t);
}

}  // namespace ladder
