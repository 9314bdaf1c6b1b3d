#include "07_tp_mlp/timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include "chapter/gpu_timer.h"
#include "gpu/stream.h"

namespace ch07 {

namespace {

constexpr int kRuns = 50;

// ncclKernel_* (before NCCL 2.19), ncclDevKernel_* (its ring and tree), ncclSymkDevKernel_* (its symmetric kernels).
bool is_nccl_kernel(const ladder::Event& e) { return e.cat == ladder::Cat::Kernel && e.name.rfind("nccl", 0) == 0; }

double slowest(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

std::string per_rank(const std::vector<double>& v) {
  std::string s;
  for (double us : v) s += fmt::format("{}{:.1f}", s.empty() ? "" : " / ", us);
  return s;
}

// Collective k is the k-th NCCL kernel on every rank (one communicator, one stream); the rank that starts it last
// waits for no one, so its kernel is the transfer alone. The mean over k, in us; 0 when the counts differ.
double transfer_from_last_arrival(const World& world, std::vector<std::pair<int64_t, int64_t>> mine) {
  std::sort(mine.begin(), mine.end());
  std::string packed;
  for (const auto& [start, end] : mine) packed += fmt::format("{} {} ", start, end);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> all;
  for (const std::string& s : world.all_gather(packed)) {
    all.emplace_back();
    std::istringstream in(s);
    for (int64_t start = 0, end = 0; in >> start >> end;) all.back().push_back({start, end});
    if (all.back().size() != mine.size()) return 0;
  }
  if (mine.empty()) return 0;
  double sum = 0;
  for (size_t k = 0; k < mine.size(); ++k) {
    size_t last = 0;
    for (size_t r = 1; r < all.size(); ++r) last = all[r][k].first > all[last][k].first ? r : last;
    sum += (all[last][k].second - all[last][k].first) / 1e3;
  }
  return sum / static_cast<double>(mine.size());
}

}  // namespace

namespace {

// The overlap chunk counts of the table: 2, 4, 8 and the run's.
std::set<int> chunk_counts(int chunks) { return {2, 4, 8, chunks}; }

// fn's median over exactly kRuns runs (budget 0: the same count on every rank), as this rank's one value.
std::vector<double> median_of(const ladder::GpuTimer& timer, const std::function<void()>& fn) {
  return {timer.time(fn, kRuns, 0).median_us()};
}

}  // namespace

Graphs capture_graphs(const Forwards& f) {
  Graphs g;
  try {
    g.graphs.push_back(std::make_unique<ladder::CudaGraph>(f.tp));
    for (int c : chunk_counts(f.chunks)) g.graphs.push_back(std::make_unique<ladder::CudaGraph>([&] { f.overlap(c); }));
    g.graphs.push_back(std::make_unique<ladder::CudaGraph>(f.sp));
    if (f.fused) g.graphs.push_back(std::make_unique<ladder::CudaGraph>(f.fused));
  } catch (const std::exception& e) {
    g.graphs.clear();
    g.note = e.what();
  }
  return g;
}

Timings time_eager(const Forwards& f) {
  const ladder::GpuTimer timer;
  Timings t;
  t.runs = kRuns;
  t.flush_words = timer.flush_words();
  t.one_gpu = median_of(timer, f.one_gpu);
  t.tp = median_of(timer, f.tp);
  for (int c : chunk_counts(f.chunks)) t.overlap.push_back({c, median_of(timer, [&] { f.overlap(c); })});
  t.sp = median_of(timer, f.sp);
  if (f.fused) t.fused = median_of(timer, f.fused);
  return t;
}

void time_replays(Timings& t, const Forwards& f, const Graphs* graphs, const Communicator& comm,
                  const ladder::Trace& trace) {
  const ladder::GpuTimer timer;
  if (graphs) {
    size_t g = 0;
    t.tp_graph = median_of(timer, [&] { graphs->graphs[0]->launch(); });
    for (int c : chunk_counts(f.chunks)) {
      const ladder::CudaGraph& graph = *graphs->graphs[++g];
      t.overlap_graph.push_back({c, median_of(timer, [&] { graph.launch(); })});
    }
    const ladder::CudaGraph& sp_graph = *graphs->graphs[++g];
    t.sp_graph = median_of(timer, [&] { sp_graph.launch(); });
    if (f.fused) {
      const ladder::CudaGraph& fused_graph = *graphs->graphs[++g];
      t.fused_graph = median_of(timer, [&] { fused_graph.launch(); });
    }
  }
  // y is summed into itself again and again here: its values are spent (they were checked before), its bytes are not.
  t.all_reduce_alone = median_of(timer, [&] { comm.all_reduce_sum(*f.y, ladder::current_stream()); });
  if (f.y_plain)
    t.all_reduce_plain = median_of(timer, [&] { comm.all_reduce_sum(*f.y_plain, ladder::current_stream()); });
  comm.sync();

  double sum = 0;
  int n = 0, steps = 0;
  for (const ladder::Event& e : trace.events) {
    if (is_nccl_kernel(e)) sum += e.dur_ns / 1e3, ++n, t.nccl_kernels.push_back({e.ts_ns, e.ts_ns + e.dur_ns});
    if (e.cat == ladder::Cat::UserAnnotation && e.name.rfind("ProfilerStep#", 0) == 0) ++steps;
  }
  t.nccl_kernel_in_trace = {n ? sum / n : 0.0};
  t.nccl_kernels_per_step = steps ? n / steps : 0;
}

Timings share_timings(const World& world, Timings t) {
  // Which figures exist is the same on every rank (the same options, the same agreed graph capture).
  const auto share = [&](std::vector<double>& v) {
    if (!v.empty()) v = world.all_gather(v.front());
  };
  for (std::vector<double>* v : {&t.one_gpu, &t.tp, &t.sp, &t.fused, &t.tp_graph, &t.sp_graph, &t.fused_graph,
                                 &t.all_reduce_alone, &t.all_reduce_plain, &t.nccl_kernel_in_trace})
    share(*v);
  for (auto& [c, v] : t.overlap) share(v);
  for (auto& [c, v] : t.overlap_graph) share(v);
  t.nccl_transfer_in_trace = transfer_from_last_arrival(world, t.nccl_kernels);
  return t;
}

std::string timing_table(const Timings& t, int ranks, int64_t rows, int64_t dim, const std::string& mode, int chunks,
                         const std::string& gpu_name) {
  std::string out = fmt::format(
      "Forward time on {} ranks ({}), CUDA events around the forward on each rank's compute stream, median of {} "
      "runs per rank, {}; the slowest rank's median, every rank's in brackets:\n",
      ranks, gpu_name, t.runs, t.flush_words);
  const double one = slowest(t.one_gpu);
  auto row = [&](const std::string& name, const std::vector<double>& v) {
    out += fmt::format("  {:<48} {:>9.1f} us  {:>5.2f}x one GPU   [{}]\n", name, slowest(v), one / slowest(v),
                       per_rank(v));
  };
  row("one GPU (04's forward, all of H)", t.one_gpu);
  row(fmt::format("tp ({} GPUs)", ranks), t.tp);
  for (const auto& [c, v] : t.overlap)
    row(fmt::format("overlap ({} GPUs, {} chunks){}", ranks, c, c == chunks ? " *" : ""), v);
  row(fmt::format("sp ({} GPUs)", ranks), t.sp);
  if (!t.fused.empty())
    row(fmt::format("fused ({} GPUs)", ranks), t.fused);
  else
    out += fmt::format("  (no fused row: {})\n", t.fused_note);
  if (!t.tp_graph.empty()) {
    row(fmt::format("tp ({} GPUs), CUDA graph", ranks), t.tp_graph);
    for (const auto& [c, v] : t.overlap_graph)
      row(fmt::format("overlap ({} GPUs, {} chunks), CUDA graph{}", ranks, c, c == chunks ? " *" : ""), v);
    row(fmt::format("sp ({} GPUs), CUDA graph", ranks), t.sp_graph);
    if (!t.fused_graph.empty()) row(fmt::format("fused ({} GPUs), CUDA graph", ranks), t.fused_graph);
  } else {
    out += fmt::format("  (no CUDA graph rows: capturing the forward failed: {})\n", t.graph_note);
  }
  out += "  (* the --chunks of this run; CUDA graph: the same forward captured once and replayed, no host work)\n";

  const double bytes = static_cast<double>(rows * dim * 2);
  auto bw = [&](double us) {
    const double algbw = bytes / (us * 1e3);  // bytes per ns = GB/s
    return fmt::format("algbw {:.1f} GB/s, busbw {:.1f} GB/s", algbw, algbw * 2.0 * (ranks - 1) / ranks);
  };
  const double alone = slowest(t.all_reduce_alone);
  out += fmt::format("\nAll-reduce of y ({:.1f} MB of bf16, {} x {}){} alone, timed as above: {:.1f} us, {}   [{}]\n",
                     bytes / 1e6, rows, dim, t.all_reduce_plain.empty() ? "" : " in an NCCL window", alone, bw(alone),
                     per_rank(t.all_reduce_alone));
  if (!t.all_reduce_plain.empty()) {
    const double plain = slowest(t.all_reduce_plain);
    out += fmt::format("  the same outside an NCCL window (NCCL's ring): {:.1f} us, {}   [{}]\n", plain, bw(plain),
                       per_rank(t.all_reduce_plain));
  }
  const double inside = slowest(t.nccl_kernel_in_trace);
  if (mode == "tp") {
    out += fmt::format(
        "All-reduce of y inside tp: its NCCL kernel in the trace, mean of the active steps: {:.1f} us, "
        "{}, {:.2f}x alone   [{}]\n",
        inside, bw(inside), inside / alone, per_rank(t.nccl_kernel_in_trace));
  } else {
    out += fmt::format(
        "{}: {} NCCL kernels per step in the trace, each {:.1f} us on the mean ({:.1f} us per step against {:.1f} "
        "us for y's all-reduce alone)   [{}]\n",
        mode == "sp"      ? "The all-gather of x and the reduce-scatter of y inside sp"
        : mode == "fused" ? "The all-gather of x and the reduction of the slots inside fused"
                          : "All-reduces inside overlap",
        t.nccl_kernels_per_step, inside, inside * t.nccl_kernels_per_step, alone, per_rank(t.nccl_kernel_in_trace));
  }
  if (t.nccl_transfer_in_trace > 0) {
    const double x = t.nccl_transfer_in_trace;
    const std::string what = mode == "tp"
                                 ? fmt::format("{:.1f} us, {}, {:.2f}x alone", x, bw(x), x / alone)
                                 : fmt::format("{:.1f} us each, {:.1f} us per step", x, x * t.nccl_kernels_per_step);
    out += fmt::format(
        "  the same kernels from the last rank's arrival (per collective, the kernel of the rank that started it "
        "last, which waits for no one): {}; the rest is waiting for the last rank\n",
        what);
  }
  out += "(busbw = algbw x 2(n-1)/n: nccl-tests' bus bandwidth of an all-reduce, comparable across rank counts)\n";
  return out;
}

}  // namespace ch07
