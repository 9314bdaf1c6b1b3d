// See advice.h.
#include "trace/analyses/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>
#include <utility>

#include "trace/analyses/breakdown.h"
#include "trace/analyses/kernel_table.h"
#include "trace/analyses/memory.h"
#include "trace/analyses/steps.h"
#include "trace/analyses/work.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : std::nan(""); }
double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }
std::string name_of(const std::string& kernel) { return printable(shortened(kernel_display_name(kernel), 60)); }

// A kernel (or all of one name in a step) with the work the trace says it did: the kernels view's rules
// (kernel_table.h), for one step at a time from work worked out once for the whole trace.
struct KRow {
  std::string name, op;  // op: the launching op's name, "" when none
  bool copy = false, tensor_cores = false, flops_known = false;
  int calls = 0, rated = 0;
  int64_t total_ns = 0, rated_ns = 0;
  double bytes = 0, flops = 0;
};
struct KTable {
  std::vector<KRow> rows;
  int64_t gpu_ns = 0;
  size_t activities = 0;
};

// The work of every GPU activity, -1 bytes where unknown: a copy's or set's own bytes; a kernel's, its op's when the op
// launched this one kernel (work.h), with the FLOPs torch recorded for the op where the shapes give none.
struct ActWork {
  double bytes = -1, flops = 0;
};
std::vector<ActWork> activity_work(const TraceIndex& index) {
  const Trace& t = index.trace();
  std::unordered_map<int, int> kernels_per_op;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events[i].cat != Cat::Kernel) continue;
    if (const int op = index.op_of(static_cast<int>(i)); op >= 0) ++kernels_per_op[op];
  }
  std::vector<ActWork> out(t.events.size());
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (!is_gpu_activity(e.cat) || e.dur_ns <= 0) continue;
    if (e.cat != Cat::Kernel) {
      if (e.gpu.bytes > 0) out[i].bytes = static_cast<double>(e.gpu.bytes);
      continue;
    }
    const int op = index.op_of(static_cast<int>(i));
    if (op < 0 || kernels_per_op[op] != 1) continue;
    const Event& o = index.event(op);
    Work w;
    if (!o.input_dims().empty() && op_work(o, &w)) {
      out[i] = ActWork{w.bytes, w.flops > 0 ? w.flops : o.flops > 0 ? static_cast<double>(o.flops) : 0};
    } else if (o.flops > 0) {
      out[i] = ActWork{0, static_cast<double>(o.flops)};
    }
  }
  return out;
}

// Step k's activities, one row each in start order (`all`) and by name, the longest first.
void step_rows(const TraceIndex& index, int k, const std::vector<ActWork>& work, KTable& all, KTable& by_name) {
  std::map<std::pair<int, std::string>, size_t> row_of;
  for (int i : index.gpu_activities(k)) {
    const Event& e = index.event(i);
    KRow r;
    r.name = e.name;
    const int op = index.op_of(i);
    if (op >= 0) r.op = index.event(op).name;
    r.copy = e.cat != Cat::Kernel;
    r.tensor_cores = !r.copy && kernel_uses_tensor_cores(e.name, op >= 0 ? &index.event(op) : nullptr);
    r.calls = 1;
    r.total_ns = e.dur_ns;
    const ActWork& w = work[static_cast<size_t>(i)];
    if (w.bytes >= 0) {
      r.rated = 1, r.rated_ns = e.dur_ns, r.bytes = w.bytes, r.flops = w.flops, r.flops_known = w.flops > 0;
    }
    all.rows.push_back(r);
    all.gpu_ns += e.dur_ns;
    ++all.activities;
    const auto [it, fresh] = row_of.emplace(std::make_pair(static_cast<int>(e.cat), e.name), by_name.rows.size());
    if (fresh) {
      by_name.rows.push_back(r);
      continue;
    }
    KRow& b = by_name.rows[it->second];
    b.calls += 1, b.total_ns += r.total_ns, b.rated += r.rated, b.rated_ns += r.rated_ns;
    b.bytes += r.bytes, b.flops += r.flops, b.flops_known = b.flops_known || r.flops_known;
  }
  by_name.gpu_ns = all.gpu_ns, by_name.activities = all.activities;
  std::stable_sort(by_name.rows.begin(), by_name.rows.end(),
                   [](const KRow& a, const KRow& b) { return a.total_ns > b.total_ns; });
}

bool is_elementwise(const KRow& r) {
  return !r.copy && r.rated > 0 && !r.flops_known && !r.tensor_cores && r.bytes > 0;
}
bool is_gemm(const KRow& r) { return !r.copy && (r.flops_known || r.tensor_cores); }

// The peak a kernel is rated against: the tensor cores' when its name says it uses them, or when it ran faster than
// the CUDA cores can (a hand-written kernel's name does not say: chapter 04's GEMM); else the CUDA cores' FP32 peak.
double peak_for(const KRow& r, double tflops, const Peak& peak) {
  return r.tensor_cores || peak.fp32_tflops <= 0 || tflops > peak.fp32_tflops ? peak.tflops : peak.fp32_tflops;
}

// The time the GPU ran something or had something queued: each activity from the moment its launch call returned (or
// its own start, if earlier) to its end.
Spans busy_or_queued(const TraceIndex& index) {
  const Trace& t = index.trace();
  std::vector<std::pair<int64_t, int64_t>> v;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event& a = t.events[i];
    if (!is_gpu_activity(a.cat)) continue;
    int64_t from = a.ts_ns;
    if (const int l = index.launch_of(static_cast<int>(i)); l >= 0) from = std::min(from, index.event(l).end_ns());
    v.emplace_back(from, std::max(from, a.end_ns()));
  }
  return Spans::of(std::move(v));
}

struct StepWindow {
  int k = 0;
  std::string name;
  int64_t ts = 0, end = 0;
  TimeBreakdown b;
};

void launch_and_gpu_bound(const StepWindow& s, const TraceIndex& index, const Spans& covered,
                          const AdviceThresholds& th, const KTable& by_name, const Peak& peak,
                          std::vector<Finding>& out) {
  const int64_t wall = s.end - s.ts;
  if (wall <= 0) return;
  const int64_t idle = s.b.gpu_idle_ns();
  const int64_t host_wait = wall - covered.length_in(s.ts, s.end);
  Finding f;
  f.step = s.k, f.step_name = s.name;
  // A step that ran nothing on the GPU is not waiting for launches: it has no GPU side to bound.
  if (by_name.activities > 0 && idle >= th.idle_share * static_cast<double>(wall) &&
      host_wait >= th.host_wait_share * static_cast<double>(idle)) {
    f.kind = "launch-bound";
    f.figure = us(host_wait), f.unit = "us", f.share = pct(static_cast<double>(host_wait), static_cast<double>(wall));
    f.detail = fmt::format(
        "GPU idle {:.1f}% of the step ({:.1f} of {:.1f} us), {:.1f} us of it with nothing queued "
        "(waiting for the CPU to launch); {} kernel{} ran {:.1f} us",
        pct(static_cast<double>(idle), static_cast<double>(wall)), us(idle), us(wall), us(host_wait),
        by_name.activities, by_name.activities == 1 ? "" : "s", us(s.b.gpu_busy_ns));
    // A step whose work was launched as a CUDA graph has taken 02's answer already: what is left is the CPU around it.
    bool graph = false;
    for (int i : index.gpu_activities(s.k)) {
      const int l = index.launch_of(i);
      graph = graph || (l >= 0 && index.event(l).name.find("GraphLaunch") != std::string::npos);
    }
    f.rung = graph ? "01 (launch overhead); 02 (already one graph launch: the CPU's work around it is what is left)"
                   : "01 (launch overhead); 02 (CUDA Graphs)";
    out.push_back(f);
  } else if (s.b.compute_ns >= th.busy_share * static_cast<double>(wall)) {
    f.kind = "gpu-bound";
    f.figure = us(s.b.compute_ns), f.unit = "us";
    f.share = pct(static_cast<double>(s.b.compute_ns), static_cast<double>(wall));
    f.detail =
        fmt::format("GPU computing {:.1f}% of the step ({:.1f} of {:.1f} us)", f.share, us(s.b.compute_ns), us(wall));
    if (!by_name.rows.empty() && by_name.gpu_ns > 0) {
      const KRow& top = by_name.rows.front();
      f.detail += fmt::format("; the largest, {}, {:.1f}% of the GPU time", name_of(top.name),
                              pct(static_cast<double>(top.total_ns), static_cast<double>(by_name.gpu_ns)));
      if (top.flops_known && top.rated_ns > 0 && peak.tflops > 0) {
        const double tflops = top.flops / static_cast<double>(top.rated_ns) / 1e3;
        const double rate_peak = peak_for(top, tflops, peak);
        f.detail += fmt::format(" at {:.1f} TFLOP/s, {:.1f}% of peak", tflops, pct(tflops, rate_peak));
      }
    }
    f.rung = "01 (compute-bound, as at size 4096: only faster or fewer kernels shorten the step)";
    out.push_back(f);
  }
}

// Runs of memory-bound elementwise kernels on each stream (copies and sets between them do not break a run).
void elementwise(const StepWindow& s, const TraceIndex& index, const KTable& all, int64_t wall, const Peak& peak,
                 const AdviceThresholds& th, std::vector<Finding>& out) {
  const std::vector<int>& acts = index.gpu_activities(s.k);
  if (acts.size() != all.rows.size() || wall <= 0) return;
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> streams;
  for (size_t j = 0; j < acts.size(); ++j) {
    if (all.rows[j].copy) continue;
    streams[{index.event(acts[j]).pid, index.event(acts[j]).tid}].push_back(j);
  }
  for (const auto& [key, v] : streams) {
    for (size_t a = 0; a < v.size();) {
      if (!is_elementwise(all.rows[v[a]])) {
        ++a;
        continue;
      }
      size_t b = a;
      while (b < v.size() && is_elementwise(all.rows[v[b]])) ++b;
      int64_t ns = 0;
      double bytes = 0;
      std::string names;
      for (size_t j = a; j < b; ++j) {
        const KRow& r = all.rows[v[j]];
        ns += r.total_ns;
        bytes += r.bytes;
        names += (j > a ? ", " : "") +
                 (r.op.empty() ? name_of(r.name)
                               : printable(r.op) + " (" + printable(shortened(kernel_display_name(r.name), 40)) + ")");
      }
      const bool after_gemm = a > 0 && is_gemm(all.rows[v[a - 1]]);
      const double share = static_cast<double>(ns) / static_cast<double>(wall);
      if ((b - a >= 2 || after_gemm) && share >= th.elementwise_share && ns > 0) {
        Finding f;
        f.step = s.k, f.step_name = s.name;
        f.kind = b - a >= 2 ? "elementwise-chain" : "epilogue-candidate";
        f.figure = us(ns), f.unit = "us", f.share = 100.0 * share;
        const double gbps = bytes / static_cast<double>(ns);
        const std::string bw =
            peak.gbps > 0 ? fmt::format(", {:.1f}% of the {:.0f} GB/s peak", pct(gbps, peak.gbps), peak.gbps) : "";
        if (b - a >= 2) {
          f.detail = fmt::format(
              "{} memory-bound kernels back to back on stream {}: {}; {:.1f} us, {:.1f}% of the "
              "step, {:.1f} MB moved at {:.0f} GB/s{}",
              b - a, key.second, names, us(ns), f.share, bytes / 1e6, gbps, bw);
          f.rung = "03 (fuse them: one kernel, no tensor between them); 04 (into the GEMM's epilogue)";
        } else {
          f.detail = fmt::format(
              "{} right after a GEMM on stream {}: {:.1f} us, {:.1f}% of the step, {:.1f} MB "
              "moved at {:.0f} GB/s{}",
              names, key.second, us(ns), f.share, bytes / 1e6, gbps, bw);
          f.rung = "04 (apply it in the GEMM's epilogue: its input never goes to memory)";
        }
        out.push_back(f);
      }
      a = b;
    }
  }
}

void gemms(const StepWindow& s, const KTable& by_name, int64_t wall, const Peak& peak, const AdviceThresholds& th,
           std::vector<Finding>& out) {
  if (wall <= 0) return;
  for (const KRow& r : by_name.rows) {
    if (!r.flops_known || r.rated_ns <= 0 || r.copy) continue;
    if (peak.tflops <= 0) continue;
    const double tflops = r.flops / static_cast<double>(r.rated_ns) / 1e3;
    const double rate_peak = peak_for(r, tflops, peak);
    const double share = static_cast<double>(r.total_ns) / static_cast<double>(wall);
    if (tflops >= th.gemm_peak_share * rate_peak || share < th.gemm_time_share) continue;
    Finding f;
    f.step = s.k, f.step_name = s.name;
    f.kind = "gemm-below-peak";
    f.figure = 100.0 * tflops / rate_peak, f.unit = "% of peak", f.share = 100.0 * share;
    f.detail = fmt::format(
        "{} ({} call{}): {:.1f} TFLOP/s, {:.1f}% of the {:.1f} TFLOP/s peak{}, {:.1f}% of the "
        "step",
        name_of(r.name), r.calls, r.calls == 1 ? "" : "s", tflops, f.figure, rate_peak,
        rate_peak == peak.tflops ? "" : " (FP32, no tensor cores)", f.share);
    f.rung = "04 (a GEMM of its own: tiles, pipeline, epilogue)";
    out.push_back(f);
  }
}

bool backward_start(const Event& e) {
  if (e.cat != Cat::CpuOp && e.cat != Cat::UserAnnotation) return false;
  if (e.name.rfind("autograd::engine::evaluate_function", 0) == 0) return true;
  if (e.cat != Cat::UserAnnotation) return false;
  std::string n = e.name;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return n.find("backward") != std::string::npos || n.find("bwd") != std::string::npos;
}

// Per step, the start of its backward (the first host event that begins it), -1 where none.
std::vector<int64_t> backward_starts(const TraceIndex& index) {
  const Trace& t = index.trace();
  std::vector<int64_t> out(index.steps().size(), -1);
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    const int k = index.step_of(static_cast<int>(i));
    if (k < 0 || is_gpu_cat(e.cat) || !backward_start(e)) continue;
    int64_t& b = out[static_cast<size_t>(k)];
    if (b < 0 || e.ts_ns < b) b = e.ts_ns;
  }
  return out;
}

// The allocator's level on each device ("Total Allocated" after each [memory] record: memory.h's rules), by time:
// the level at a moment is the one after the device's last record before it, or before its first record (that
// record's total less its Bytes).
struct Levels {
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> by_device;  // (type, id) -> (ts, level)
  static Levels of(const Trace& t) {
    Levels l;
    std::vector<size_t> order(t.memory.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return t.memory[a].ts_ns < t.memory[b].ts_ns; });
    for (size_t i : order) {
      const MemoryRecord& m = t.memory[i];
      if (m.device_type == 0 || m.total_allocated < 0) continue;  // the GPU's, where the trace has the totals
      auto& v = l.by_device[{m.device_type, m.device_id}];
      if (v.empty()) v.emplace_back(INT64_MIN, m.total_allocated - m.bytes);
      v.emplace_back(m.ts_ns, m.total_allocated);
    }
    return l;
  }
};

void held(const StepWindow& s, int64_t bwd, const Levels& levels, const AdviceThresholds& th,
          std::vector<Finding>& out) {
  if (bwd < 0) return;
  for (const auto& entry : levels.by_device) {  // (not a structured binding: C++17 lambdas cannot capture one)
    const std::pair<int, int>& device = entry.first;
    const std::vector<std::pair<int64_t, int64_t>>& v = entry.second;
    // The level before the step (records at its start are in it, as memory.h's windows hold both ends), before the
    // backward, and the step's peak.
    auto before = [&](int64_t t) {
      auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(t, INT64_MIN));
      return std::prev(it)->second;  // v.front() is at INT64_MIN: there is always one before
    };
    const int64_t start = before(s.ts), kept = before(bwd) - start;
    int64_t peak = start;
    for (auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(s.ts, INT64_MIN));
         it != v.end() && it->first <= s.end; ++it)
      peak = std::max(peak, it->second);
    const int64_t rise = peak - start;
    if (kept <= 0 || rise <= 0 || static_cast<double>(kept) < th.held_share * static_cast<double>(rise)) continue;
    Finding f;
    f.step = s.k, f.step_name = s.name;
    f.kind = "held-for-backward";
    f.figure = static_cast<double>(kept) / 1e6, f.unit = "MB";
    f.share = pct(static_cast<double>(kept), static_cast<double>(rise));
    f.detail = fmt::format(
        "{}: {:.1f} MB allocated in the forward still held when the backward starts, {:.1f}% of the "
        "step's peak above its start ({:.1f} MB)",
        memory_device_name(device.first, device.second), f.figure, f.share, static_cast<double>(rise) / 1e6);
    f.rung = "06 (--mode fused, epilogue, recompute: keep less, or make it again in the backward)";
    out.push_back(f);
  }
}

}  // namespace

std::vector<Finding> advise(const TraceIndex& index, int step, const Peak& peak, const AdviceThresholds& th) {
  check_step_index(index, step);
  std::vector<Finding> out;
  if (index.steps().empty()) return out;
  const auto breakdowns = step_breakdowns(index, -1);
  const Spans covered = busy_or_queued(index);
  const std::vector<ActWork> work = activity_work(index);
  const std::vector<int64_t> backward = backward_starts(index);
  const Levels levels = Levels::of(index.trace());
  for (int k = 0; k < static_cast<int>(index.steps().size()); ++k) {
    if (step >= 0 && k != step) continue;
    const TraceIndex::Step& st = index.steps()[static_cast<size_t>(k)];
    const StepWindow s{k, st.name, st.ts_ns, st.end_ns, breakdowns[static_cast<size_t>(k)].second};
    KTable all, by_name;
    step_rows(index, k, work, all, by_name);
    launch_and_gpu_bound(s, index, covered, th, by_name, peak, out);
    elementwise(s, index, all, s.end - s.ts, peak, th, out);
    gemms(s, by_name, s.end - s.ts, peak, th, out);
    held(s, backward[static_cast<size_t>(k)], levels, th, out);
  }
  return out;
}

namespace {

// ": 2 x ncclDevKernel_AllReduce_Sum_bf16_RING_LL": the collectives the rank launched in the step, by name.
std::string collectives_of(const RankFigures& r, const std::string& step) {
  std::map<std::string, int> n;
  for (const RankFigures::Collective& c : r.collectives) {
    if (c.step >= 0 && static_cast<size_t>(c.step) < r.steps.size() &&
        r.steps[static_cast<size_t>(c.step)].name == step)
      ++n[c.name];
  }
  std::string out;
  for (const auto& [name, count] : n) out += fmt::format("{}{} x {}", out.empty() ? ": " : ", ", count, name_of(name));
  return out;
}

}  // namespace

std::vector<Finding> advise_ranks(const std::vector<RankFigures>& ranks, const RanksTable& table,
                                  const AdviceThresholds& th) {
  std::vector<Finding> out;
  for (size_t s = 0; s < table.steps.size(); ++s) {
    const auto& cells = table.cells[s];
    int64_t fastest = -1, slowest = -1;
    for (size_t r = 0; r < cells.size() && r < ranks.size(); ++r) {
      const RankStepCell& c = cells[r];
      if (!c.present || c.split.wall_ns <= 0) continue;
      fastest = fastest < 0 ? c.split.wall_ns : std::min(fastest, c.split.wall_ns);
      slowest = std::max(slowest, c.split.wall_ns);
      const double exposed = static_cast<double>(c.split.communication_ns);
      if (exposed < th.exposed_share * static_cast<double>(c.split.wall_ns)) continue;
      Finding f;
      f.rank = ranks[r].rank, f.step_name = table.steps[s], f.step = static_cast<int>(s);
      f.kind = "exposed-communication";
      f.figure = us(c.split.communication_ns), f.unit = "us";
      f.share = pct(exposed, static_cast<double>(c.split.wall_ns));
      const double overlap = c.split.overlapping_ns + c.split.communication_ns > 0
                                 ? pct(static_cast<double>(c.split.overlapping_ns),
                                       static_cast<double>(c.split.overlapping_ns + c.split.communication_ns))
                                 : std::nan("");
      f.detail = fmt::format(
          "{:.1f} us of communication with no computation beside it, {:.1f}% of the step "
          "({:.1f} us){}; {:.1f}% of the communication overlapped; waited {:.1f} us for other ranks",
          f.figure, f.share, us(c.split.wall_ns), collectives_of(ranks[r], table.steps[s]), overlap, us(c.wait_ns));
      f.rung = "07 (--mode overlap: chunks, a stream of their own)";
      out.push_back(f);
    }
    if (table.slowest[s] >= 0 && fastest > 0 &&
        static_cast<double>(slowest - fastest) >= th.rank_spread * static_cast<double>(fastest)) {
      Finding f;
      f.rank = ranks[static_cast<size_t>(table.slowest[s])].rank, f.step_name = table.steps[s];
      f.step = static_cast<int>(s);
      f.kind = "slowest-rank";
      f.figure = us(slowest - fastest), f.unit = "us",
      f.share = pct(static_cast<double>(slowest - fastest), static_cast<double>(slowest));
      f.detail = fmt::format("rank {}'s step took {:.1f} us, {:.1f} us more than the fastest rank's", f.rank,
                             us(slowest), f.figure);
      f.rung = "07 (the straggler: who waits for whom)";
      out.push_back(f);
    }
    if (table.straggler[s] >= 0) {
      const RankStepCell& c = cells[static_cast<size_t>(table.straggler[s])];
      if (c.caused_ns > 0) {
        Finding f;
        f.rank = ranks[static_cast<size_t>(table.straggler[s])].rank, f.step_name = table.steps[s];
        f.step = static_cast<int>(s);
        f.kind = "straggler";
        f.figure = us(c.caused_ns), f.unit = "us";
        f.detail = fmt::format(
            "the other ranks waited {:.1f} us in all for rank {} at the {} collective{} it "
            "arrived last at",
            f.figure, f.rank, c.arrived_last, c.arrived_last == 1 ? "" : "s");
        f.rung = "07 (the straggler: who waits for whom)";
        out.push_back(f);
      }
    }
  }
  return out;
}

std::vector<Finding> advise_all(const std::vector<RankIndex>& ranks, bool folder, const std::string& step,
                                const AdviceThresholds& th) {
  std::vector<Finding> findings;
  std::vector<RankFigures> figures;
  for (const RankIndex& r : ranks) {
    const Trace& t = r.index->trace();
    const int k = find_step(*r.index, step, r.path);
    const Peak peak = t.devices.empty() ? Peak{} : peak_of(t.devices.front().name);
    for (Finding& f : advise(*r.index, k, peak, th)) {
      if (folder) f.rank = r.rank;
      findings.push_back(std::move(f));
    }
    if (folder) figures.push_back(rank_figures(t, r.rank, r.path));
  }
  if (!folder) return findings;
  const RanksTable table = ranks_table(figures, step);
  for (Finding& f : advise_ranks(figures, table, th)) findings.push_back(std::move(f));
  auto order = [&](const Finding& f) {
    const auto at = std::find(table.steps.begin(), table.steps.end(), f.step_name);
    return std::make_pair(at - table.steps.begin(), f.rank);
  };
  std::stable_sort(findings.begin(), findings.end(),
                   [&](const Finding& x, const Finding& y) { return order(x) < order(y); });
  return findings;
}

Table advice_table(const std::vector<Finding>& findings) {
  Table t;
  t.name = "advice";
  const size_t step = t.add("step", TableColumn::Text), kind = t.add("finding", TableColumn::Text),
               fig = t.add("figure", TableColumn::Float), unit = t.add("unit", TableColumn::Text),
               share = t.add("share (%)", TableColumn::Float), detail = t.add("detail", TableColumn::Text),
               rung = t.add("rung", TableColumn::Text);
  const bool ranks = std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.rank >= 0; });
  const size_t rank = ranks ? t.add("rank", TableColumn::Int) : 0;
  for (const Finding& f : findings) {
    t.columns[step].texts.push_back(f.step_name);
    t.columns[kind].texts.push_back(f.kind);
    t.columns[fig].floats.push_back(f.figure);
    t.columns[unit].texts.push_back(f.unit);
    t.columns[share].floats.push_back(f.share);
    t.columns[detail].texts.push_back(f.detail);
    t.columns[rung].texts.push_back(f.rung);
    if (ranks) t.columns[rank].ints.push_back(f.rank);
  }
  return t;
}

}  // namespace ladder
