// See ranks_view.h.
#include "trace/ranks_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <thread>

#include "base/error.h"
#include "trace/json_read.h"
#include "trace/text.h"

namespace ladder {

namespace {
bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
}  // namespace

bool is_comm_kernel(const Event& e) { return e.cat == Cat::Kernel && starts_with(e.name, "nccl"); }

bool is_cpu_collective(const Event& e) {
  return (e.cat == Cat::CpuOp || e.cat == Cat::UserAnnotation) &&
         (starts_with(e.name, "gloo:") || starts_with(e.name, "nccl:"));
}

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
  std::vector<std::pair<int64_t, int64_t>> kernels, cpu_ops, comm;
  std::vector<const Event*> comm_kernels, cpu_collectives;
  int64_t first = 0, last = 0;
  for (const Event& e : trace.events) {
    first = &e == &trace.events.front() ? e.ts_ns : std::min(first, e.ts_ns);
    last = &e == &trace.events.front() ? e.end_ns() : std::max(last, e.end_ns());
    if (e.cat == Cat::UserAnnotation && starts_with(e.name, "ProfilerStep#")) {
      r.steps.push_back({e.name, e.ts_ns, e.end_ns()});
    } else if (is_comm_kernel(e)) {
      comm.emplace_back(e.ts_ns, e.end_ns());
      comm_kernels.push_back(&e);
    } else if (e.cat == Cat::Kernel) {
      kernels.emplace_back(e.ts_ns, e.end_ns());
    } else if (is_cpu_collective(e)) {
      comm.emplace_back(e.ts_ns, e.end_ns());
      cpu_collectives.push_back(&e);
    } else if (e.cat == Cat::CpuOp || e.cat == Cat::UserAnnotation) {
      cpu_ops.emplace_back(e.ts_ns, e.end_ns());
    }
  }
  std::sort(r.steps.begin(), r.steps.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  if (r.steps.empty() && !trace.events.empty()) r.steps.push_back({"whole trace", first, last});
  r.computation_is_cpu = kernels.empty();
  r.computation = Spans::of(r.computation_is_cpu ? std::move(cpu_ops) : std::move(kernels));
  r.communication = Spans::of(std::move(comm));
  r.overlap = r.computation.intersect(r.communication);

  const std::vector<const Event*>& arrivals = comm_kernels.empty() ? cpu_collectives : comm_kernels;
  for (const Event* e : arrivals) r.collectives.push_back({e->name, e->ts_ns, e->end_ns(), -1});
  std::stable_sort(r.collectives.begin(), r.collectives.end(),
                   [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  for (auto& c : r.collectives) {
    auto it = std::upper_bound(r.steps.begin(), r.steps.end(), c.ts_ns,
                               [](int64_t t, const RankFigures::Step& s) { return t < s.ts_ns; });
    if (it != r.steps.begin() && c.ts_ns <= (it - 1)->end_ns) c.step = static_cast<int>(it - 1 - r.steps.begin());
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
  if (arrival[r] < 0 || last < 0) return 0;
  return arrival[static_cast<size_t>(last)] - arrival[r];
}

std::vector<MatchedCollective> match_collectives(const std::vector<RankFigures>& ranks) {
  std::map<std::pair<std::string, int>, MatchedCollective> by_key;  // (name, occurrence)
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::map<std::string, int> seen;
    for (const auto& c : ranks[r].collectives) {
      const int k = seen[c.name]++;
      MatchedCollective& m = by_key[{c.name, k}];
      if (m.arrival.empty()) {
        m.name = c.name, m.occurrence = k;
        m.arrival.assign(ranks.size(), -1);
        m.step.assign(ranks.size(), -1);
      }
      m.arrival[r] = c.ts_ns;
      m.step[r] = c.step;
    }
  }
  std::vector<MatchedCollective> out;
  for (auto& [key, m] : by_key) {
    for (size_t r = 0; r < m.arrival.size(); ++r) {
      if (m.arrival[r] >= 0 && (m.last < 0 || m.arrival[r] > m.arrival[static_cast<size_t>(m.last)]))
        m.last = static_cast<int>(r);
    }
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const MatchedCollective& a, const MatchedCollective& b) {
    return a.arrival[static_cast<size_t>(a.last)] < b.arrival[static_cast<size_t>(b.last)];
  });
  return out;
}

namespace {

std::string us(int64_t ns) { return fmt::format("{:.1f}", ns / 1e3); }

// One (step, rank) cell of every table.
struct Cell {
  bool present = false;
  CommCompSplit split;
  int collectives = 0, arrived_last = 0;
  int64_t wait_ns = 0, caused_ns = 0;  // caused: the waits of the others at the collectives this rank arrived last at
};

}  // namespace

std::string ranks_view(const std::vector<RankFigures>& ranks, const std::string& step, OutputFormat format) {
  // The steps, by name, in the order the first rank that has them ran them.
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
  const size_t n_ranks = ranks.size(), n_steps = names.size();
  std::vector<std::vector<Cell>> cells(n_steps, std::vector<Cell>(n_ranks));
  for (size_t r = 0; r < n_ranks; ++r) {
    for (size_t k = 0; k < n_steps; ++k) {
      for (const auto& s : ranks[r].steps) {
        if (s.name != names[k]) continue;
        cells[k][r].present = true;
        cells[k][r].split = comm_comp_split(ranks[r], s.ts_ns, s.end_ns);
        break;
      }
    }
  }
  for (const MatchedCollective& m : match_collectives(ranks)) {
    for (size_t r = 0; r < n_ranks; ++r) {
      if (m.arrival[r] < 0 || m.step[r] < 0) continue;
      const auto it = std::find(names.begin(), names.end(), ranks[r].steps[static_cast<size_t>(m.step[r])].name);
      if (it == names.end()) continue;
      Cell& c = cells[static_cast<size_t>(it - names.begin())][r];
      ++c.collectives;
      c.wait_ns += m.wait_ns(r);
      if (static_cast<int>(r) == m.last) {
        ++c.arrived_last;
        for (size_t o = 0; o < n_ranks; ++o) c.caused_ns += m.wait_ns(o);
      }
    }
  }
  // Per step, the slowest rank: the longest wall time.
  std::vector<int> slowest(n_steps, -1);
  for (size_t k = 0; k < n_steps; ++k) {
    for (size_t r = 0; r < n_ranks; ++r) {
      if (cells[k][r].present &&
          (slowest[k] < 0 || cells[k][r].split.wall_ns > cells[k][static_cast<size_t>(slowest[k])].split.wall_ns))
        slowest[k] = static_cast<int>(r);
    }
  }
  // Per rank, the mean over the steps it has (only with more than one step).
  std::vector<Cell> mean(n_ranks);
  std::vector<int> present(n_ranks, 0);
  for (size_t r = 0; r < n_ranks; ++r) {
    for (size_t k = 0; k < n_steps; ++k) {
      const Cell& c = cells[k][r];
      if (!c.present) continue;
      ++present[r];
      Cell& m = mean[r];
      m.present = true;
      m.split.wall_ns += c.split.wall_ns, m.split.computation_ns += c.split.computation_ns;
      m.split.overlapping_ns += c.split.overlapping_ns, m.split.communication_ns += c.split.communication_ns;
      m.split.other_ns += c.split.other_ns;
      m.collectives += c.collectives, m.arrived_last += c.arrived_last;
      m.wait_ns += c.wait_ns, m.caused_ns += c.caused_ns;
    }
    if (present[r] == 0) continue;
    const int64_t n = present[r];
    Cell& m = mean[r];
    m.split.wall_ns /= n, m.split.computation_ns /= n, m.split.overlapping_ns /= n;
    m.split.communication_ns /= n, m.split.other_ns /= n;
    m.wait_ns /= n, m.caused_ns /= n;  // collectives and arrived_last stay totals: counts, not times
  }
  const bool with_mean = n_steps > 1;
  const std::string mean_name = fmt::format("mean of {}", n_steps);

  if (format != OutputFormat::Text) {
    OutputTable t;
    t.columns = {"step",        "rank",      "wall_us",          "slowest",  "computation_us", "overlapping_us",
                 "communication_us", "other_us", "collectives", "wait_us",  "arrived_last",   "caused_wait_us"};
    t.numeric.assign(t.columns.size(), true);
    t.numeric[0] = false;
    auto row = [&](const std::string& name, size_t r, const Cell& c, const std::string& slow) {
      t.rows.push_back({name, std::to_string(ranks[r].rank), us(c.split.wall_ns), slow, us(c.split.computation_ns),
                        us(c.split.overlapping_ns), us(c.split.communication_ns), us(c.split.other_ns),
                        std::to_string(c.collectives), us(c.wait_ns), std::to_string(c.arrived_last),
                        us(c.caused_ns)});
    };
    for (size_t k = 0; k < n_steps; ++k) {
      for (size_t r = 0; r < n_ranks; ++r) {
        if (cells[k][r].present) row(names[k], r, cells[k][r], slowest[k] == static_cast<int>(r) ? "1" : "0");
      }
    }
    if (with_mean) {
      for (size_t r = 0; r < n_ranks; ++r) {
        if (mean[r].present) row(mean_name, r, mean[r], "");
      }
    }
    return format == OutputFormat::Csv ? to_csv(t) : to_json(t);
  }

  std::string out = fmt::format("{} rank{}:", n_ranks, n_ranks == 1 ? "" : "s");
  for (const RankFigures& r : ranks)
    out += fmt::format(" {}={}", r.rank, printable(std::filesystem::path(r.path).filename().string()));
  out += "\n\nStep time per rank, us (the step's wall time on the CPU; * the slowest rank)\n";
  const bool wide = n_ranks <= 8;  // a column per rank; more ranks: the fastest and the slowest only
  out += fmt::format("  {:<18}", "step");
  if (wide) {
    for (const RankFigures& r : ranks) out += fmt::format(" {:>11}", fmt::format("rank {}", r.rank));
  } else {
    out += fmt::format(" {:>11} {:>11}", "fastest", "mean");
  }
  out += fmt::format(" {:>8} {:>11}\n", "slowest", "slow-fast");
  for (size_t k = 0; k < n_steps; ++k) {
    out += fmt::format("  {:<18}", shortened(printable(names[k]), 18));
    int64_t lo = -1, hi = 0, sum = 0, n = 0;
    for (size_t r = 0; r < n_ranks; ++r) {
      const Cell& c = cells[k][r];
      if (c.present) {
        lo = lo < 0 ? c.split.wall_ns : std::min(lo, c.split.wall_ns);
        hi = std::max(hi, c.split.wall_ns);
        sum += c.split.wall_ns, ++n;
      }
      if (wide)
        out += fmt::format(" {:>11}", c.present ? us(c.split.wall_ns) + (slowest[k] == static_cast<int>(r) ? "*" : " ")
                                                : std::string("- "));
    }
    if (!wide) out += fmt::format(" {:>11} {:>11}", us(lo), us(n ? sum / n : 0));
    const std::string slow = slowest[k] >= 0 ? std::to_string(ranks[static_cast<size_t>(slowest[k])].rank) : "-";
    out += fmt::format(" {:>8} {:>11}\n", slow, us(lo < 0 ? 0 : hi - lo));
  }

  out += "\nComputation and communication per rank, us (the TensorBoard plugin's Distributed view: computation = "
         "kernels,\nnot NCCL's, minus the overlap; overlapping = both at once; communication = NCCL kernels and "
         "gloo:*/nccl:* ranges\nminus the overlap; other = the rest of the step)\n";
  out += fmt::format("  {:<18} {:>5} {:>10} {:>12} {:>12} {:>14} {:>10} {:>9}\n", "step", "rank", "wall",
                     "computation", "overlapping", "communication", "other", "overlap%");
  auto split_row = [&](const std::string& name, size_t r, const Cell& c) {
    const CommCompSplit& s = c.split;
    const int64_t comm = s.communication_ns + s.overlapping_ns;
    out += fmt::format("  {:<18} {:>5} {:>10} {:>12} {:>12} {:>14} {:>10} {:>9}\n", shortened(printable(name), 18),
                       ranks[r].rank, us(s.wall_ns), us(s.computation_ns), us(s.overlapping_ns),
                       us(s.communication_ns), us(s.other_ns),
                       comm > 0 ? fmt::format("{:.1f}%", 100.0 * s.overlapping_ns / comm) : "-");
  };
  for (size_t k = 0; k < n_steps; ++k) {
    for (size_t r = 0; r < n_ranks; ++r) {
      if (cells[k][r].present) split_row(names[k], r, cells[k][r]);
    }
  }
  if (with_mean) {
    for (size_t r = 0; r < n_ranks; ++r) {
      if (mean[r].present) split_row(mean_name, r, mean[r]);
    }
  }
  bool cpu_computation = false;
  for (const RankFigures& r : ranks) cpu_computation = cpu_computation || r.computation_is_cpu;
  if (cpu_computation) out += "  (a rank that ran no kernel has its CPU ops as computation, as the plugin counts it)\n";
  out += "  overlap%: overlapping / (overlapping + communication), HTA's comm/comp overlap for the step\n";

  out += "\nWaiting in collectives, us (a collective ends for all once the last rank arrives: each rank waits from its "
         "own\narrival to the last one's; collectives matched across ranks by name and order)\n";
  bool any = false;
  for (const RankFigures& r : ranks) any = any || !r.collectives.empty();
  if (!any) return out + "  no collective in any rank (no nccl* kernel, no gloo:* or nccl:* range)\n";
  out += fmt::format("  {:<18} {:>5} {:>11} {:>10} {:>13} {:>18}\n", "step", "rank", "collectives", "waited",
                     "arrived last", "made others wait");
  auto wait_row = [&](const std::string& name, size_t r, const Cell& c) {
    out += fmt::format("  {:<18} {:>5} {:>11} {:>10} {:>13} {:>18}\n", shortened(printable(name), 18), ranks[r].rank,
                       c.collectives, us(c.wait_ns), c.arrived_last, us(c.caused_ns));
  };
  for (size_t k = 0; k < n_steps; ++k) {
    for (size_t r = 0; r < n_ranks; ++r) {
      if (cells[k][r].present) wait_row(names[k], r, cells[k][r]);
    }
  }
  if (with_mean) {
    for (size_t r = 0; r < n_ranks; ++r) {
      if (mean[r].present) wait_row(mean_name, r, mean[r]);
    }
    out += "  (mean rows: times per step; collectives and arrived last: all steps together)\n";
  }
  out += "  (arrivals compared as the files stamp them: ranks on several hosts only as well as their clocks agree)\n";
  return out;
}

std::vector<RankFigures> load_rank_figures(const std::string& path, uint64_t max_json_bytes, int threads) {
  std::vector<RankTrace> traces;
  if (path != "-" && std::filesystem::is_directory(path)) {
    traces = load_ranks(path, max_json_bytes, threads);
  } else {
    Trace t = load_trace(path, max_json_bytes);
    const int r = rank_of(t, path);
    traces.push_back(RankTrace{r < 0 ? 0 : r, path, std::move(t)});
  }
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
