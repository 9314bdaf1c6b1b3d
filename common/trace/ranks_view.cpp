// See ranks_view.h.
#include "trace/ranks_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <thread>
#include <unordered_map>

#include "base/error.h"
#include "trace/communication.h"
#include "trace/json_read.h"
#include "trace/text.h"

namespace ladder {

Spans Spans::of(std::vector<std::pair<int64_t, int64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  Spans s;
  for (const auto& [a, b] : iv) {
    if (!s.v.empty() && a <= s.v.back().second) {
      s.v.back().second = std::max(s.v.back().second, b);
    } else {
      s.v.emplace_back(a, b);
    }
  }
  return s;
}

int64_t Spans::length_in(int64_t from, int64_t to) const {
  // The first span that ends after `from`, then every one that starts before `to`.
  auto it = std::upper_bound(v.begin(), v.end(), from, [](int64_t t, const auto& s) { return t < s.second; });
  int64_t total = 0;
  for (; it != v.end() && it->first < to; ++it) total += std::min(it->second, to) - std::max(it->first, from);
  return total;
}

Spans Spans::intersect(const Spans& o) const {
  Spans out;
  for (size_t i = 0, j = 0; i < v.size() && j < o.v.size();) {
    const int64_t a = std::max(v[i].first, o.v[j].first), b = std::min(v[i].second, o.v[j].second);
    if (a < b) out.v.emplace_back(a, b);
    (v[i].second < o.v[j].second) ? ++i : ++j;
  }
  return out;
}

RankFigures rank_figures(const Trace& trace, int rank, const std::string& path) {
  RankFigures r;
  r.rank = rank;
  r.path = path;
  std::vector<std::pair<int64_t, int64_t>> kernels, cpu_ops, comm_kernels, comm_ranges;
  std::vector<const Event*> nccl, cpu_collectives;
  std::unordered_map<int64_t, int64_t> launched_at;  // correlation -> the launch call's start
  int64_t first = 0, last = 0;
  for (const Event& e : trace.events) {
    first = &e == &trace.events.front() ? e.ts_ns : std::min(first, e.ts_ns);
    last = &e == &trace.events.front() ? e.end_ns() : std::max(last, e.end_ns());
    if (is_api_call(e.cat) && e.correlation >= 0) launched_at.emplace(e.correlation, e.ts_ns);
    if (e.cat == Cat::UserAnnotation && e.name.rfind("ProfilerStep#", 0) == 0) {
      r.steps.push_back({e.name, e.ts_ns, e.end_ns()});
    } else if (is_comm_kernel(e)) {
      comm_kernels.emplace_back(e.ts_ns, e.end_ns());
      nccl.push_back(&e);
    } else if (e.cat == Cat::Kernel) {
      kernels.emplace_back(e.ts_ns, e.end_ns());
    } else if (is_comm_range(e)) {
      comm_ranges.emplace_back(e.ts_ns, e.end_ns());
      if (is_collective_range(e)) cpu_collectives.push_back(&e);
    } else if (e.cat == Cat::CpuOp || e.cat == Cat::UserAnnotation) {
      cpu_ops.emplace_back(e.ts_ns, e.end_ns());
    }
  }
  std::sort(r.steps.begin(), r.steps.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  if (r.steps.empty() && !trace.events.empty()) r.steps.push_back({"whole trace", first, last});
  r.computation_is_cpu = kernels.empty() && comm_kernels.empty();
  r.comm_kernels = !comm_kernels.empty();
  r.computation = Spans::of(r.computation_is_cpu ? std::move(cpu_ops) : std::move(kernels));
  r.communication = Spans::of(r.comm_kernels ? std::move(comm_kernels) : std::move(comm_ranges));
  r.overlap = r.computation.intersect(r.communication);

  const std::vector<const Event*>& arrivals = r.comm_kernels ? nccl : cpu_collectives;
  for (const Event* e : arrivals) {
    RankFigures::Collective c;
    c.name = e->name;
    if (e->process_group >= 0 && static_cast<size_t>(e->process_group) < trace.process_groups.size())
      c.group = trace.process_groups[static_cast<size_t>(e->process_group)];
    c.seq = e->seq;
    c.ts_ns = e->ts_ns, c.end_ns = e->end_ns();
    c.pid = e->pid, c.tid = e->tid;
    // The step that launched it: its launch call's, else (a CPU range, or no launch call in the trace) its own start.
    const auto it = e->correlation >= 0 ? launched_at.find(e->correlation) : launched_at.end();
    const int64_t launch = it != launched_at.end() ? it->second : e->ts_ns;
    auto s = std::upper_bound(r.steps.begin(), r.steps.end(), launch,
                              [](int64_t t, const RankFigures::Step& st) { return t < st.ts_ns; });
    if (s != r.steps.begin() && launch <= (s - 1)->end_ns) c.step = static_cast<int>(s - 1 - r.steps.begin());
    r.collectives.push_back(std::move(c));
  }
  std::stable_sort(r.collectives.begin(), r.collectives.end(),
                   [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  // Each step's span to the end of the GPU work it launched.
  for (auto& st : r.steps) st.work_end_ns = st.end_ns;
  for (const Event& e : trace.events) {
    if (!is_gpu_activity(e.cat) || e.correlation < 0) continue;
    const auto it = launched_at.find(e.correlation);
    if (it == launched_at.end()) continue;
    auto s = std::upper_bound(r.steps.begin(), r.steps.end(), it->second,
                              [](int64_t t, const RankFigures::Step& st) { return t < st.ts_ns; });
    if (s != r.steps.begin() && it->second <= (s - 1)->end_ns)
      (s - 1)->work_end_ns = std::max((s - 1)->work_end_ns, e.end_ns());
  }
  return r;
}

CommCompSplit comm_comp_split(const RankFigures& r, int64_t from, int64_t to) {
  CommCompSplit s;
  s.wall_ns = std::max<int64_t>(0, to - from);
  const int64_t comp = r.computation.length_in(from, to), comm = r.communication.length_in(from, to);
  s.overlapping_ns = r.overlap.length_in(from, to);
  s.computation_ns = comp - s.overlapping_ns;
  s.communication_ns = comm - s.overlapping_ns;
  s.other_ns = s.wall_ns - s.computation_ns - s.overlapping_ns - s.communication_ns;
  return s;
}

int64_t MatchedCollective::wait_ns(size_t r) const {
  if (!complete || arrival[r] < 0 || last < 0) return 0;
  return std::max<int64_t>(0, std::min(arrival[static_cast<size_t>(last)], end[r]) - arrival[r]);
}

int64_t MatchedCollective::end_spread_ns() const {
  int64_t lo = -1, hi = -1;
  for (int64_t e : end) {
    if (e < 0) continue;
    lo = lo < 0 ? e : std::min(lo, e);
    hi = std::max(hi, e);
  }
  return lo < 0 ? 0 : hi - lo;
}

namespace {

// The shift that puts rank `r`'s collectives of one group (own order 0, 1, ...) in `ref`'s numbering: for each of
// them, the place of the reference collective whose end is nearest to its end, minus its own place; the most common
// of these. O(n log n).
int64_t order_shift(const std::vector<const RankFigures::Collective*>& ref,
                    const std::vector<const RankFigures::Collective*>& r) {
  std::vector<std::pair<int64_t, int64_t>> ends;  // (end, place in ref)
  ends.reserve(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) ends.emplace_back(ref[i]->end_ns, static_cast<int64_t>(i));
  std::sort(ends.begin(), ends.end());
  std::map<int64_t, int64_t> votes;
  for (size_t i = 0; i < r.size(); ++i) {
    auto it = std::lower_bound(ends.begin(), ends.end(), std::make_pair(r[i]->end_ns, int64_t{-1}));
    if (it == ends.end() || (it != ends.begin() && r[i]->end_ns - (it - 1)->first < it->first - r[i]->end_ns)) --it;
    ++votes[it->second - static_cast<int64_t>(i)];
  }
  int64_t best = 0, most = -1;
  for (const auto& [shift, n] : votes) {
    if (n > most) best = shift, most = n;
  }
  return best;
}

}  // namespace

Matching match_collectives(const std::vector<RankFigures>& ranks) {
  const size_t n = ranks.size();
  // Per group, per rank: its collectives of that group in start order.
  std::map<std::string, std::vector<std::vector<const RankFigures::Collective*>>> groups;
  for (size_t r = 0; r < n; ++r) {
    for (const auto& c : ranks[r].collectives) {
      auto& g = groups[c.group];
      g.resize(n);
      g[r].push_back(&c);
    }
  }
  Matching out;
  out.by_seq = !groups.empty();
  for (auto& [name, per_rank] : groups) {
    bool seq = true;
    for (const auto& v : per_rank) {
      for (const auto* c : v) seq = seq && c->seq >= 0;
    }
    out.by_seq = out.by_seq && seq;
    size_t ref = 0;
    while (per_rank[ref].empty()) ++ref;
    std::map<int64_t, MatchedCollective> by_key;
    size_t holders = 0;
    for (size_t r = 0; r < n; ++r) {
      if (per_rank[r].empty()) continue;
      ++holders;
      const int64_t shift = seq ? 0 : order_shift(per_rank[ref], per_rank[r]);
      for (size_t i = 0; i < per_rank[r].size(); ++i) {
        const RankFigures::Collective* c = per_rank[r][i];
        const int64_t key = seq ? c->seq : static_cast<int64_t>(i) + shift;
        MatchedCollective& m = by_key[key];
        if (m.index.empty()) {
          m.group = name, m.key = key, m.name = c->name;
          m.index.assign(n, -1), m.arrival.assign(n, -1), m.end.assign(n, -1);
        }
        if (m.index[r] >= 0) continue;  // a repeated Seq: the first one stands
        m.index[r] = static_cast<int>(c - ranks[r].collectives.data());
        m.arrival[r] = c->ts_ns, m.end[r] = c->end_ns;
        m.names_agree = m.names_agree && m.name == c->name;
      }
    }
    for (auto& [key, m] : by_key) {
      size_t have = 0;
      for (size_t r = 0; r < n; ++r) {
        if (m.index[r] < 0) continue;
        ++have;
        if (m.last < 0 || m.arrival[r] > m.arrival[static_cast<size_t>(m.last)]) m.last = static_cast<int>(r);
      }
      m.complete = have == holders && holders > 1;
      if (m.complete) {
        ++out.complete;
        out.max_end_spread_ns = std::max(out.max_end_spread_ns, m.end_spread_ns());
        if (!m.names_agree) ++out.name_mismatches;
      } else {
        ++out.incomplete;
        m.last = -1;
      }
      out.collectives.push_back(std::move(m));
    }
  }
  auto when = [](const MatchedCollective& m) {
    int64_t t = -1;
    for (int64_t a : m.arrival) {
      if (a >= 0) t = m.last >= 0 ? std::max(t, a) : (t < 0 ? a : std::min(t, a));
    }
    return t;
  };
  std::stable_sort(out.collectives.begin(), out.collectives.end(),
                   [&](const MatchedCollective& a, const MatchedCollective& b) { return when(a) < when(b); });
  return out;
}

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
    out += fmt::format("  unmatched: rank {} holds {} collective{} that other ranks' traces do not (starting {} to {} "
                       "us from its first step): no wait counted for them\n",
                       ranks[r].rank, count, count == 1 ? "" : "s", us(first - t0), us(last - t0));
  }
  return out;
}

namespace {

// The steps, by name, in the order the first rank that has them ran them; only `step` when one is given.
std::vector<std::string> step_names(const std::vector<RankFigures>& ranks, const std::string& step) {
  std::vector<std::string> names;
  for (const RankFigures& r : ranks) {
    for (const auto& s : r.steps) {
      if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
    }
  }
  if (!step.empty()) {
    const std::string want = std::all_of(step.begin(), step.end(), ::isdigit) ? "ProfilerStep#" + step : step;
    if (std::find(names.begin(), names.end(), want) == names.end()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      throw TraceError(fmt::format("no step {} in any rank (steps: {})", want, list.empty() ? "none" : list));
    }
    names = {want};
  }
  return names;
}

// Each matched collective counted in the cell of the step that launched it, with the waits it made.
void count_collectives(const std::vector<RankFigures>& ranks, RanksTable& t) {
  const size_t n_ranks = ranks.size();
  std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> waits(
      t.steps.size(), std::vector<std::vector<std::pair<int64_t, int64_t>>>(n_ranks));  // the waiting intervals
  for (const MatchedCollective& m : t.matching.collectives) {
    for (size_t r = 0; r < n_ranks; ++r) {
      if (m.index[r] < 0) continue;
      const int st = ranks[r].collectives[static_cast<size_t>(m.index[r])].step;
      if (st < 0) continue;
      const auto it = std::find(t.steps.begin(), t.steps.end(), ranks[r].steps[static_cast<size_t>(st)].name);
      if (it == t.steps.end()) continue;
      const size_t k = static_cast<size_t>(it - t.steps.begin());
      RankStepCell& c = t.cells[k][r];
      ++c.collectives;
      if (!m.complete) {
        ++c.unmatched;
        continue;
      }
      if (m.wait_ns(r) > 0) waits[k][r].emplace_back(m.arrival[r], m.arrival[r] + m.wait_ns(r));
      if (static_cast<int>(r) == m.last) {
        ++c.arrived_last;
        for (size_t o = 0; o < n_ranks; ++o) c.caused_ns += m.wait_ns(o);
      }
    }
  }
  for (size_t k = 0; k < t.steps.size(); ++k) {
    for (size_t r = 0; r < n_ranks; ++r) {
      t.cells[k][r].wait_ns = Spans::of(std::move(waits[k][r])).length_in(INT64_MIN, INT64_MAX);
    }
  }
}

// Per rank, the mean over the steps it has.
std::vector<RankStepCell> mean_cells(const RanksTable& t, size_t n_ranks) {
  std::vector<RankStepCell> mean(n_ranks);
  std::vector<int> present(n_ranks, 0);
  for (size_t r = 0; r < n_ranks; ++r) {
    for (size_t k = 0; k < t.steps.size(); ++k) {
      const RankStepCell& c = t.cells[k][r];
      if (!c.present) continue;
      ++present[r];
      RankStepCell& m = mean[r];
      m.present = true;
      m.split.wall_ns += c.split.wall_ns, m.split.computation_ns += c.split.computation_ns;
      m.split.overlapping_ns += c.split.overlapping_ns, m.split.communication_ns += c.split.communication_ns;
      m.split.other_ns += c.split.other_ns;
      m.collectives += c.collectives, m.arrived_last += c.arrived_last, m.unmatched += c.unmatched;
      m.wait_ns += c.wait_ns, m.caused_ns += c.caused_ns;
    }
    if (present[r] == 0) continue;
    const int64_t n = present[r];
    RankStepCell& m = mean[r];
    m.split.wall_ns /= n, m.split.computation_ns /= n, m.split.overlapping_ns /= n;
    m.split.communication_ns /= n, m.split.other_ns /= n;
    m.wait_ns /= n, m.caused_ns /= n;  // collectives and arrived_last stay totals: counts, not times
  }
  return mean;
}

}  // namespace

RanksTable ranks_table(const std::vector<RankFigures>& ranks, const std::string& step) {
  RanksTable t;
  t.steps = step_names(ranks, step);
  const size_t n_ranks = ranks.size(), n_steps = t.steps.size();
  t.cells.assign(n_steps, std::vector<RankStepCell>(n_ranks));
  for (size_t r = 0; r < n_ranks; ++r) {
    for (size_t k = 0; k < n_steps; ++k) {
      for (const auto& s : ranks[r].steps) {
        if (s.name != t.steps[k]) continue;
        t.cells[k][r].present = true;
        t.cells[k][r].split = comm_comp_split(ranks[r], s.ts_ns, s.end_ns);
        break;
      }
    }
  }
  t.matching = match_collectives(ranks);
  count_collectives(ranks, t);
  // Per step, the slowest rank (the longest wall time) and the straggler (the rank the others waited for longest).
  t.slowest.assign(n_steps, -1);
  t.straggler.assign(n_steps, -1);
  for (size_t k = 0; k < n_steps; ++k) {
    for (size_t r = 0; r < n_ranks; ++r) {
      const RankStepCell& c = t.cells[k][r];
      if (c.present &&
          (t.slowest[k] < 0 || c.split.wall_ns > t.cells[k][static_cast<size_t>(t.slowest[k])].split.wall_ns))
        t.slowest[k] = static_cast<int>(r);
      if (c.caused_ns > 0 &&
          (t.straggler[k] < 0 || c.caused_ns > t.cells[k][static_cast<size_t>(t.straggler[k])].caused_ns))
        t.straggler[k] = static_cast<int>(r);
    }
  }
  t.mean = mean_cells(t, n_ranks);
  return t;
}

namespace {

// HTA's comm/comp overlap: the share of the NCCL kernels' time that computation ran beside; undefined (HTA's NaN: "-"
// in the text, empty in CSV, null in JSON) on a rank without NCCL kernels or a step without their time.
std::string overlap_pct(const RankFigures& rank, const CommCompSplit& s, const char* unit) {
  const int64_t comm = s.communication_ns + s.overlapping_ns;
  if (!rank.comm_kernels || comm <= 0) return std::string(*unit ? "-" : "");
  return fmt::format("{:.1f}{}", 100.0 * s.overlapping_ns / comm, unit);
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

// One record per step and rank, then per rank the mean.
OutputTable ranks_records(const std::vector<RankFigures>& ranks, const RanksTable& t) {
  OutputTable out;
  out.columns = {"step",           "rank",           "wall_us",          "slowest",  "straggler",
                 "computation_us", "overlapping_us", "communication_us", "other_us", "overlap_pct",
                 "collectives",    "unmatched",      "wait_us",          "arrived_last", "caused_wait_us"};
  out.numeric.assign(out.columns.size(), true);
  out.numeric[0] = false;
  for_each_cell(t, ranks.size(), [&](const std::string& name, size_t r, const RankStepCell& c, int k) {
    const std::string slow = k < 0 ? "" : t.slowest[static_cast<size_t>(k)] == static_cast<int>(r) ? "1" : "0";
    const std::string strag = k < 0 ? "" : t.straggler[static_cast<size_t>(k)] == static_cast<int>(r) ? "1" : "0";
    out.rows.push_back({name, std::to_string(ranks[r].rank), us(c.split.wall_ns), slow, strag,
                        us(c.split.computation_ns), us(c.split.overlapping_ns), us(c.split.communication_ns),
                        us(c.split.other_ns), overlap_pct(ranks[r], c.split, ""), std::to_string(c.collectives),
                        std::to_string(c.unmatched), us(c.wait_ns), std::to_string(c.arrived_last), us(c.caused_ns)});
  });
  return out;
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
                       ranks[r].rank, us(s.wall_ns), us(s.computation_ns), us(s.overlapping_ns),
                       us(s.communication_ns), us(s.other_ns), overlap_pct(ranks[r], s, "%"));
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
  if (format != OutputFormat::Text) {
    const OutputTable records = ranks_records(ranks, t);
    return format == OutputFormat::Csv ? to_csv(records) : to_json(records);
  }
  std::string out = fmt::format("{} rank{}:", ranks.size(), ranks.size() == 1 ? "" : "s");
  for (const RankFigures& r : ranks)
    out += fmt::format(" {}={}", r.rank, printable(std::filesystem::path(r.path).filename().string()));
  return out + step_time_text(ranks, t) + split_text(ranks, t) + wait_text(ranks, t);
}

std::vector<RankFigures> load_rank_figures(const std::string& path, uint64_t max_json_bytes, int threads) {
  std::vector<RankTrace> traces = load_ranks_or_file(path, max_json_bytes, threads);
  std::vector<RankFigures> out(traces.size());
  std::vector<std::string> notes(traces.size());
  std::vector<char> empty(traces.size(), 0);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < traces.size();) {
      out[i] = rank_figures(traces[i].trace, traces[i].rank, traces[i].path);
      notes[i] = traces[i].trace.load_note;
      empty[i] = traces[i].trace.events.empty();
      traces[i].trace = Trace{};  // its events are no longer needed
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t n = std::min<size_t>(traces.size(), threads > 0 ? static_cast<unsigned>(threads) : cores);
  std::vector<std::thread> pool;
  for (size_t k = 1; k < n; ++k) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (size_t i = 0; i < traces.size(); ++i) {
    if (!notes[i].empty()) fmt::print(stderr, "note: {}\n", notes[i]);
    if (empty[i])
      throw TraceError("trace " + traces[i].path + " has no events (no \"ph\": \"X\" event with an integer pid)");
  }
  return out;
}

}  // namespace ladder
