// See ranks_figures.h.
#include "trace/analyses/ranks_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include "base/error.h"
#include "trace/analyses/communication.h"
#include "trace/model/json_read.h"

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
    // The step that launched it: its launch call's; else its own start (a CPU range; a trace without launch calls);
    // none for a kernel whose launch a trace with launch calls does not hold: it was launched before the capture
    // window, and its start may fall in a step that did not launch it.
    const auto it = e->correlation >= 0 ? launched_at.find(e->correlation) : launched_at.end();
    if (r.comm_kernels && !launched_at.empty() && it == launched_at.end()) {
      r.collectives.push_back(std::move(c));
      continue;
    }
    const int64_t launch = it != launched_at.end() ? it->second : e->ts_ns;
    auto s = std::upper_bound(r.steps.begin(), r.steps.end(), launch,
                              [](int64_t t, const RankFigures::Step& st) { return t < st.ts_ns; });
    if (s != r.steps.begin() && launch <= (s - 1)->end_ns) c.step = static_cast<int>(s - 1 - r.steps.begin());
    r.collectives.push_back(std::move(c));
  }
  std::stable_sort(r.collectives.begin(), r.collectives.end(),
                   [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  // A collective the trace names no group for takes its stream's, where the stream's others name exactly one.
  std::map<std::pair<int64_t, int64_t>, std::set<std::string>> stream_groups;
  for (const auto& c : r.collectives) {
    if (!c.group.empty()) stream_groups[{c.pid, c.tid}].insert(c.group);
  }
  for (auto& c : r.collectives) {
    const auto it = c.group.empty() ? stream_groups.find({c.pid, c.tid}) : stream_groups.end();
    if (it != stream_groups.end() && it->second.size() == 1) c.group = *it->second.begin();
  }
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

Table ranks_frame(const std::vector<RankFigures>& ranks, const RanksTable& t) {
  constexpr auto S = TableColumn::Text, I = TableColumn::Int, F = TableColumn::Float;
  Table out;
  out.name = "ranks";
  const std::pair<const char*, TableColumn::Type> columns[] = {{"step", S},
                                                               {"wall_us", F},
                                                               {"slowest", F},
                                                               {"straggler", F},
                                                               {"computation_us", F},
                                                               {"overlapping_us", F},
                                                               {"communication_us", F},
                                                               {"other_us", F},
                                                               {"comp_comm_overlap_pctg", F},
                                                               {"collectives", I},
                                                               {"unmatched", I},
                                                               {"wait_us", F},
                                                               {"arrived_last", I},
                                                               {"caused_wait_us", F},
                                                               {"rank", I}};
  for (const auto& [name, type] : columns) out.add(name, type);
  const double nan = std::nan("");
  // One row: the cell's figures, its times summed over `n` steps (1 for a step's own row) and divided by n.
  auto row = [&](const std::string& name, size_t r, const RankStepCell& c, double slowest, double straggler,
                 int64_t n) {
    auto us = [n](int64_t ns) { return static_cast<double>(ns) / static_cast<double>(n) / 1e3; };
    const CommCompSplit& s = c.split;
    const int64_t comm = s.communication_ns + s.overlapping_ns;
    const double overlap = ranks[r].comm_kernels && comm > 0
                               ? 100.0 * static_cast<double>(s.overlapping_ns) / static_cast<double>(comm)
                               : nan;
    out.columns[0].texts.push_back(name);
    const double floats[] = {
        us(s.wall_ns),          slowest,        straggler, us(s.computation_ns), us(s.overlapping_ns),
        us(s.communication_ns), us(s.other_ns), overlap};
    for (size_t k = 0; k < 8; ++k) out.columns[1 + k].floats.push_back(floats[k]);
    out.columns[9].ints.push_back(c.collectives);
    out.columns[10].ints.push_back(c.unmatched);
    out.columns[11].floats.push_back(us(c.wait_ns));
    out.columns[12].ints.push_back(c.arrived_last);
    out.columns[13].floats.push_back(us(c.caused_ns));
    out.columns[14].ints.push_back(ranks[r].rank);
  };
  for (size_t k = 0; k < t.steps.size(); ++k) {
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (!t.cells[k][r].present) continue;
      row(t.steps[k], r, t.cells[k][r], t.slowest[k] == static_cast<int>(r) ? 1.0 : 0.0,
          t.straggler[k] == static_cast<int>(r) ? 1.0 : 0.0, 1);
    }
  }
  if (t.steps.size() <= 1) return out;
  // The means: the steps' figures summed exactly, then divided once (RanksTable::mean holds whole nanoseconds).
  const std::string mean_name = fmt::format("mean of {}", t.steps.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    RankStepCell sum;
    int64_t n = 0;
    for (size_t k = 0; k < t.steps.size(); ++k) {
      const RankStepCell& c = t.cells[k][r];
      if (!c.present) continue;
      ++n;
      sum.split.wall_ns += c.split.wall_ns, sum.split.computation_ns += c.split.computation_ns;
      sum.split.overlapping_ns += c.split.overlapping_ns, sum.split.communication_ns += c.split.communication_ns;
      sum.split.other_ns += c.split.other_ns;
      sum.collectives += c.collectives, sum.arrived_last += c.arrived_last, sum.unmatched += c.unmatched;
      sum.wait_ns += c.wait_ns, sum.caused_ns += c.caused_ns;
    }
    if (n > 0) row(mean_name, r, sum, nan, nan, n);
  }
  return out;
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
