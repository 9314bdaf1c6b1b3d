// See overlap.h. One walk per (device, stream) in start order, remembering the activity that ends last so far.
#include "trace/model/overlap.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <tuple>

namespace ladder {

namespace {

// GPU activities grouped by (device, stream), each group in start order (longest first at equal starts).
std::map<std::pair<int64_t, int64_t>, std::vector<const Event*>> by_stream(const Trace& trace) {
  std::map<std::pair<int64_t, int64_t>, std::vector<const Event*>> lanes;
  for (const Event& e : trace.events) {
    if (is_gpu_activity(e.cat)) lanes[{e.pid, e.gpu.stream}].push_back(&e);
  }
  for (auto& [lane, v] : lanes) {
    std::stable_sort(v.begin(), v.end(), [](const Event* a, const Event* b) {
      return std::make_tuple(a->ts_ns, -a->dur_ns) < std::make_tuple(b->ts_ns, -b->dur_ns);
    });
  }
  return lanes;
}

}  // namespace

std::vector<Overlap> find_overlaps(const Trace& trace) {
  std::vector<Overlap> out;
  for (const auto& [lane, v] : by_stream(trace)) {
    const Event* last = nullptr;  // the one that ends last among those seen
    for (const Event* e : v) {
      if (last && e->ts_ns < last->end_ns()) out.push_back(Overlap{last, e, last->end_ns() - e->ts_ns});
      if (!last || e->end_ns() > last->end_ns()) last = e;
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Overlap& a, const Overlap& b) { return a.event->ts_ns < b.event->ts_ns; });
  return out;
}

std::map<const Event*, int> overlap_rows(const Trace& trace) {
  std::map<const Event*, int> rows;
  for (const auto& [lane, v] : by_stream(trace)) {
    // In start order, each activity takes the lowest row whose last slice has ended. The rows still busy sit in a
    // min-heap by end time; those that ended by the activity's start move to a min-heap of free row numbers. Each
    // activity is pushed and popped a bounded number of times: O(n log n), where scanning every row was O(n x rows).
    std::vector<int64_t> row_end;  // end of the last slice on each row
    std::vector<char> is_free;     // row r is in `free` (a row ends twice at one time when a slice has no duration)
    using Busy = std::pair<int64_t, int>;  // (end, row)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::priority_queue<int, std::vector<int>, std::greater<>> free;
    for (const Event* e : v) {
      while (!busy.empty() && busy.top().first <= e->ts_ns) {
        const auto [end, r] = busy.top();
        busy.pop();
        if (end == row_end[static_cast<size_t>(r)] && !is_free[static_cast<size_t>(r)]) {
          free.push(r);
          is_free[static_cast<size_t>(r)] = 1;
        }  // else a stale entry: the row was taken again since
      }
      int r;
      if (!free.empty()) {
        r = free.top();
        free.pop();
        is_free[static_cast<size_t>(r)] = 0;
        row_end[static_cast<size_t>(r)] = e->end_ns();
      } else if (static_cast<int>(row_end.size()) < kMaxOverlapRows) {
        r = static_cast<int>(row_end.size());
        row_end.push_back(e->end_ns());
        is_free.push_back(0);
      } else {
        // Every row is busy: the last one takes it and stays busy until the later of the two ends.
        r = kMaxOverlapRows - 1;
        row_end[static_cast<size_t>(r)] = std::max(row_end[static_cast<size_t>(r)], e->end_ns());
      }
      busy.push({row_end[static_cast<size_t>(r)], r});
      if (r > 0) rows[e] = r;
    }
  }
  return rows;
}

int64_t overlap_row_tid(int64_t stream, int row) { return stream + int64_t{row} * 1000000; }

namespace {

// Correlation ids of work launched by a cudaGraphLaunch (or cuGraphLaunch) that this trace holds.
std::set<int64_t> graph_correlations(const Trace& trace) {
  std::set<int64_t> out;
  for (const Event& e : trace.events) {
    if (is_api_call(e.cat) && e.name.find("GraphLaunch") != std::string::npos) out.insert(e.correlation);
  }
  return out;
}

const char* kWhyGraph = "CUPTI's timestamps, not concurrency, since the graph orders them";
const char* kWhyOther = "programmatic dependent launch lets a kernel start early; without it, CUPTI's timestamps";

std::string arg_text(const std::set<int64_t>& graph, const Overlap& o) {
  const bool replay = graph.count(o.event->correlation) && graph.count(o.previous->correlation);
  return fmt::format("starts {} ns before {} on stream {} ends; {}", o.ns, o.previous->name, o.event->gpu.stream,
                     replay ? std::string("both replayed from a CUDA graph: ") + kWhyGraph : std::string(kWhyOther));
}

}  // namespace

std::string overlap_arg(const Trace& trace, const Overlap& o) { return arg_text(graph_correlations(trace), o); }

std::map<const Event*, std::string> overlap_args(const Trace& trace) {
  const std::set<int64_t> graph = graph_correlations(trace);  // once: a trace may hold many overlaps
  std::map<const Event*, std::string> out;
  for (const Overlap& o : find_overlaps(trace)) out[o.event] = arg_text(graph, o);
  return out;
}

std::string overlap_note(const Trace& trace) {
  const std::vector<Overlap> found = find_overlaps(trace);
  if (found.empty()) return "";
  const std::set<int64_t> graph = graph_correlations(trace);
  int64_t lo = found[0].ns, hi = found[0].ns;
  bool all_replayed = true;
  for (const Overlap& o : found) {
    lo = std::min(lo, o.ns);
    hi = std::max(hi, o.ns);
    all_replayed = all_replayed && graph.count(o.event->correlation) && graph.count(o.previous->correlation);
  }
  size_t activities = 0;
  for (const Event& e : trace.events) activities += is_gpu_activity(e.cat) ? 1 : 0;
  // Not every one of them moves: one that overlaps an activity already moved to an overlap row still nests on its own
  // row, and stays there. The note counts what the reader will see on the overlap rows.
  size_t moved = 0;
  std::set<int64_t> streams_moved;
  for (const auto& [e, row] : overlap_rows(trace)) {
    if (row == 0) continue;
    ++moved;
    streams_moved.insert(e->gpu.stream);
  }
  std::string rows;
  for (int64_t s : streams_moved) rows += fmt::format("{}\"stream {} (overlapped)\"", rows.empty() ? "" : ", ", s);
  const std::string shown =
      moved == found.size()
          ? fmt::format("Perfetto shows them on the row {}", rows)
          : fmt::format("Perfetto shows {} of them on the row {}, and {} on {} own row, since what {} overlap{} "
                        "was moved away",
                        moved, rows, found.size() - moved, found.size() - moved == 1 ? "its" : "their",
                        found.size() - moved == 1 ? "it" : "they", found.size() - moved == 1 ? "s" : "");
  return fmt::format("note: {} of {} GPU activities start {} before the previous one on their stream ends ({}); {}",
                     found.size(), activities, lo == hi ? fmt::format("{} ns", lo) : fmt::format("{} to {} ns", lo, hi),
                     all_replayed ? std::string("in a graph replay: ") + kWhyGraph : std::string(kWhyOther), shown);
}

}  // namespace ladder
