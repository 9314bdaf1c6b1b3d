// See ranks_lanes.h.
#include "trace/analyses/ranks_lanes.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <unordered_map>

#include "base/error.h"
#include "trace/analyses/communication.h"
#include "trace/model/json_read.h"
#include "trace/model/ranks.h"

namespace ladder {

namespace {

constexpr int kMaxDepth = 4;  // CPU rows per thread: the step, the module or autograd node, the op, its calls

bool is_step(const Event& e) { return e.cat == Cat::UserAnnotation && e.name.rfind("ProfilerStep#", 0) == 0; }

RankBar::Kind kind_of(const Event& e) {
  if (is_comm_kernel(e) || is_collective_range(e)) return RankBar::Comm;
  if (e.cat == Cat::Kernel) return RankBar::Compute;
  if (is_gpu_activity(e.cat)) return RankBar::Copy;
  if (is_api_call(e.cat)) return RankBar::Runtime;
  return RankBar::Range;
}

// Appends a bar, merged into the previous one when both are narrower than `res` and closer than it, of one kind.
void add_bar(std::vector<RankBar>& bars, const Event& e, int64_t from, int64_t to, int64_t res) {
  const int64_t a = std::max(e.ts_ns, from), b = std::min(e.end_ns(), to);
  if (b < a) return;
  const RankBar::Kind k = kind_of(e);
  if (!bars.empty()) {
    RankBar& p = bars.back();
    if (p.kind == k && b - a < res && p.end_ns - p.ts_ns < res * p.count && a - p.end_ns < res) {
      p.end_ns = std::max(p.end_ns, b), ++p.count, p.name.clear();
      return;
    }
  }
  bars.push_back({a, b, k, 1, e.name});
}

// The lanes of one rank in `step` ("" its last step): its window and its bars.
RankLanes lanes_of(const Trace& t, int rank, const std::string& path, const std::string& step, int64_t res,
                   std::string& step_found) {
  RankLanes out;
  out.rank = rank, out.path = path;
  const Event* st = nullptr;
  for (const Event& e : t.events) {
    if (is_step(e) && (step.empty() ? (!st || e.ts_ns > st->ts_ns) : e.name == step)) st = &e;
  }
  if (!st && !step.empty()) return out;  // this rank does not have it
  int64_t from = st ? st->ts_ns : INT64_MAX, to = st ? st->end_ns() : INT64_MIN;
  if (!st) {
    for (const Event& e : t.events) from = std::min(from, e.ts_ns), to = std::max(to, e.end_ns());
  }
  step_found = st ? st->name : "whole trace";
  // The GPU work the step launched counts in its window, however late it ran.
  std::unordered_map<int64_t, int64_t> launched;  // correlation -> launch start
  for (const Event& e : t.events) {
    if (is_api_call(e.cat) && e.correlation >= 0) launched.emplace(e.correlation, e.ts_ns);
  }
  const int64_t step_end = to;
  for (const Event& e : t.events) {
    if (!is_gpu_activity(e.cat) || e.correlation < 0) continue;
    auto it = launched.find(e.correlation);
    if (it != launched.end() && it->second >= from && it->second <= step_end) to = std::max(to, e.end_ns());
  }
  out.from_ns = from, out.to_ns = to;
  if (res <= 0) res = std::max<int64_t>(1, (to - from) / 4000);

  // CPU: per thread, by nesting depth; GPU: per device and stream. Events in time order, the outer one first.
  std::vector<const Event*> in;
  for (const Event& e : t.events) {
    const bool host = e.cat == Cat::CpuOp || e.cat == Cat::UserAnnotation || is_api_call(e.cat);
    if ((host || is_gpu_activity(e.cat)) && e.end_ns() >= from && e.ts_ns <= to) in.push_back(&e);
  }
  std::stable_sort(in.begin(), in.end(), [](const Event* a, const Event* b) {
    return a->ts_ns != b->ts_ns ? a->ts_ns < b->ts_ns : a->dur_ns > b->dur_ns;
  });
  std::map<std::pair<int64_t, int64_t>, std::vector<std::vector<RankBar>>> cpu;  // (pid, tid) -> rows by depth
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> open;              // (pid, tid) -> ends of the stack
  std::map<std::pair<int64_t, int64_t>, std::vector<RankBar>> gpu;               // (device, stream) -> bars
  for (const Event* e : in) {
    const std::pair<int64_t, int64_t> lane{e->pid, e->tid};
    if (is_gpu_activity(e->cat)) {
      add_bar(gpu[lane], *e, from, to, res);
      continue;
    }
    auto& stack = open[lane];
    while (!stack.empty() && stack.back() <= e->ts_ns) stack.pop_back();
    const size_t depth = stack.size();
    stack.push_back(e->end_ns());
    if (depth >= static_cast<size_t>(kMaxDepth)) continue;
    auto& rows = cpu[lane];
    if (rows.size() <= depth) rows.resize(depth + 1);
    add_bar(rows[depth], *e, from, to, res);
  }
  for (auto& [lane, rows] : cpu) {
    const auto name = t.thread_names.find(lane.second);
    const std::string thread =
        fmt::format("thread {}{}", lane.second,
                    name != t.thread_names.end() && name->second.find(std::to_string(lane.second)) == std::string::npos
                        ? " (" + name->second + ")"
                        : "");
    for (size_t d = 0; d < rows.size(); ++d) {
      out.lanes.push_back(
          {d == 0 ? thread : fmt::format("  depth {}", d), false, lane.first, lane.second, std::move(rows[d])});
    }
  }
  for (auto& [lane, bars] : gpu) {
    out.lanes.push_back(
        {fmt::format("GPU {} stream {}", lane.first, lane.second), true, lane.first, lane.second, std::move(bars)});
  }
  return out;
}

}  // namespace

RanksPicture ranks_picture(const std::string& path, const std::string& step, uint64_t max_json_bytes,
                           int64_t resolution_ns, int threads) {
  std::vector<RankTrace> traces = load_ranks_or_file(path, max_json_bytes, threads);
  const std::string want =
      !step.empty() && std::all_of(step.begin(), step.end(), ::isdigit) ? "ProfilerStep#" + step : step;
  RanksPicture pic;
  const size_t n = traces.size();
  pic.ranks.resize(n);
  pic.figures.resize(n);
  std::vector<std::string> found(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      pic.figures[i] = rank_figures(traces[i].trace, traces[i].rank, traces[i].path);
      pic.ranks[i] = lanes_of(traces[i].trace, traces[i].rank, traces[i].path, want, resolution_ns, found[i]);
      traces[i].trace = Trace{};
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t k = std::min<size_t>(n, threads > 0 ? static_cast<unsigned>(threads) : cores);
  std::vector<std::thread> pool;
  for (size_t j = 1; j < k; ++j) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();

  // The step: the one asked for, or the last step, which every rank must agree on.
  for (size_t i = 0; i < n; ++i) {
    if (found[i].empty()) continue;
    if (pic.step.empty()) pic.step = found[i];
    if (found[i] != pic.step)
      throw TraceError(fmt::format("the ranks' last steps differ (rank {}: {}, rank {}: {}): pass --step",
                                   pic.figures[0].rank, found[0], pic.figures[i].rank, found[i]));
  }
  if (pic.step.empty()) {
    std::string list;
    for (const auto& s : pic.figures[0].steps) list += (list.empty() ? "" : ", ") + s.name;
    throw TraceError(fmt::format("no step {} in any rank (steps of rank {}: {})", want, pic.figures[0].rank,
                                 list.empty() ? "none" : list));
  }
  bool first = true;
  for (const RankLanes& r : pic.ranks) {
    if (r.lanes.empty()) continue;
    pic.from_ns = first ? r.from_ns : std::min(pic.from_ns, r.from_ns);
    pic.to_ns = first ? r.to_ns : std::max(pic.to_ns, r.to_ns);
    first = false;
  }

  // The step's collectives, as `ranks` matches them: launched in this step on some rank.
  const Matching m = match_collectives(pic.figures);
  std::vector<int64_t> caused(n, 0);
  for (const MatchedCollective& c : m.collectives) {
    bool in_step = false;
    for (size_t r = 0; r < n; ++r) {
      if (c.index[r] < 0) continue;
      const int s = pic.figures[r].collectives[static_cast<size_t>(c.index[r])].step;
      in_step = in_step || (s >= 0 && pic.figures[r].steps[static_cast<size_t>(s)].name == pic.step);
    }
    if (!in_step) continue;
    if (!c.complete) {
      ++pic.unmatched;
      continue;
    }
    RankJoin j;
    j.name = c.name;
    j.last = c.last;
    j.lane.assign(n, -1), j.arrival = c.arrival, j.end = c.end, j.wait_ns.assign(n, 0);
    for (size_t r = 0; r < n; ++r) {
      const auto& col = pic.figures[r].collectives[static_cast<size_t>(c.index[r])];
      const auto& lanes = pic.ranks[r].lanes;
      // The kernel's stream, or (a rank without NCCL kernels) the first row of the range's thread.
      const bool gpu = pic.figures[r].comm_kernels;
      for (size_t l = 0; l < lanes.size() && j.lane[r] < 0; ++l) {
        if (lanes[l].gpu == gpu && lanes[l].pid == col.pid && lanes[l].tid == col.tid) j.lane[r] = static_cast<int>(l);
      }
      j.wait_ns[r] = c.wait_ns(r);
      caused[static_cast<size_t>(c.last)] += j.wait_ns[r];
    }
    pic.joins.push_back(std::move(j));
  }
  for (size_t r = 0; r < n; ++r) {
    if (caused[r] > 0 && (pic.straggler < 0 || caused[r] > caused[static_cast<size_t>(pic.straggler)]))
      pic.straggler = static_cast<int>(r);
  }
  if (pic.straggler >= 0) pic.straggler_caused_ns = caused[static_cast<size_t>(pic.straggler)];
  return pic;
}

}  // namespace ladder
