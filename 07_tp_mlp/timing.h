// The forwards timed side by side in one run, on every rank at once, and the all-reduce of the same bytes alone: the
// figures the chapter's table prints (timing_table), so "does TP pay here?" is answered by this run on these GPUs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "07_tp_mlp/nccl_comm.h"
#include "07_tp_mlp/world.h"
#include "gpu/stream.h"
#include "gpu/tensor.h"
#include "trace/model/trace.h"

namespace ch07 {

// Each figure per rank (index = rank), in microseconds: time_eager and time_replays fill in this rank's alone (one
// value each), share_timings every rank's.
struct Timings {
  int runs = 0;
  std::string flush_words;          // what GpuTimer flushes before each run
  std::vector<double> one_gpu, tp;  // the unsharded forward on each rank's GPU alone; --mode tp
  std::vector<std::pair<int, std::vector<double>>> overlap;  // (chunks, per rank)
  std::vector<double> sp;                                    // --mode sp
  std::vector<double> fused;  // --mode fused; empty when it cannot run here (fused_note says why)
  std::string fused_note;
  // The same forwards replayed from CUDA graphs (captured once: no host work between their kernels); empty when a
  // capture failed, and then graph_note says why.
  std::vector<double> tp_graph;
  std::vector<std::pair<int, std::vector<double>>> overlap_graph;
  std::vector<double> sp_graph, fused_graph;
  std::string graph_note;
  std::vector<double> all_reduce_alone;      // an all-reduce of y's bytes, nothing else running
  std::vector<double> all_reduce_plain;      // the same outside an NCCL window (NCCL's ring), when y is in one
  std::vector<double> nccl_kernel_in_trace;  // the mean NCCL kernel of the profiled mode's active steps
  int nccl_kernels_per_step = 0;
  std::vector<std::pair<int64_t, int64_t>> nccl_kernels;  // (start, end) of this rank's, in the trace
  // The same kernels from the last rank's arrival on: per collective, the kernel of the rank that started it last
  // (the ranks stamp with one clock), which waits for no one; their mean. 0 when the ranks' traces hold different
  // counts of NCCL kernels.
  double nccl_transfer_in_trace = 0;
};

// The forwards a run times, each on this rank's compute stream.
struct Forwards {
  std::function<void()> one_gpu, tp, sp;
  std::function<void()> fused;  // empty when --mode fused cannot run here
  std::function<void(int chunks)> overlap;
  int chunks = 2;                           // the run's --chunks
  const ladder::Tensor* y = nullptr;        // summed into itself by the all-reduce timed alone
  const ladder::Tensor* y_plain = nullptr;  // the same bytes outside an NCCL window, when y is in one
};

// tp, overlap at each chunk count of the table, sp and fused, captured into CUDA graphs on this rank: local work (a
// capture records NCCL's kernels, it runs none). When a capture fails, no graphs and `note` says why.
struct Graphs {
  std::vector<std::unique_ptr<ladder::CudaGraph>> graphs;
  std::string note;
};
Graphs capture_graphs(const Forwards& f);

// This rank's figures, one value in each vector, in two calls: every rank calls them together (the forwards'
// collectives need every rank). time_eager: every forward timed with GpuTimer (the median of the same count of runs on
// every rank: the ranks wait for each other in every collective, so a different count would hang one); it also runs
// each forward at each chunk count once before any is captured into a graph.
Timings time_eager(const Forwards& f);
// time_replays: the graphs replayed (`graphs`: nullptr when any rank's capture failed), the all-reduce of y alone on
// the compute stream (and of y_plain), and the profiled mode's NCCL kernels read from `trace`.
void time_replays(Timings& t, const Forwards& f, const Graphs* graphs, const Communicator& comm,
                  const ladder::Trace& trace);

// Every rank's figures, from each rank's own (time_forwards's): one MPI exchange per figure.
Timings share_timings(const World& world, Timings mine);

// The table rank 0 prints: each forward (the slowest rank's median, every rank's in brackets) against the one-GPU
// forward, and the all-reduce of y inside the profiled mode against the same bytes alone, with nccl-tests' algbw and
// busbw (busbw = algbw x 2(n-1)/n for an all-reduce).
std::string timing_table(const Timings& t, int ranks, int64_t rows, int64_t dim, const std::string& mode, int chunks,
                         const std::string& gpu_name);

}  // namespace ch07
