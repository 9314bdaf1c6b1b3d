// `ladder-trace ranks`: a folder of traces, one per rank of a distributed run, side by side. Three questions:
//  1. Step time per rank, and which rank was the slowest in each step (the others wait for it at the next collective).
//  2. Communication against computation, as the TensorBoard profiler plugin's Distributed view defined them
//     (torch_tb_profiler/profiler/overall_parser.py, run_generator.py, before kineto removed the plugin):
//       computation   = the union of the computation's time in the step, minus the overlap
//       overlapping   = the time computation and communication ran at once
//       communication = the union of communication's time, minus the overlap
//       other         = the step's wall time minus the three (the CPU alone, or nothing)
//     where computation is the kernels that are not communication (copies and sets are neither, as in the plugin),
//     or, on a rank that ran no kernel at all, its CPU ops; and communication is NCCL's kernels (nccl*, which covers
//     ncclKernel_* and ncclDevKernel_*) and the CPU ranges torch records for a collective, gloo:* and nccl:*
//     (gloo:all_reduce runs on gloo's worker threads: gloo has no GPU side). Like the plugin, this does not count
//     c10d::allreduce_ and its kin: those only hand the work to the backend and return.
//  3. Who waits for whom. A collective completes for all ranks only once the last one has arrived, so each rank
//     waits from its own arrival to the last arrival. A rank's collectives are its NCCL kernels if it has any, else
//     its gloo:*/nccl:* ranges; its arrival is the start of one. The k-th collective of a name on one rank is matched
//     with the k-th of that name on every other rank (collectives run in the same order on every rank of a group).
//     Times are compared as the files stamp them (the wall clock, CLOCK_REALTIME): ranks on one host share it, ranks
//     on several hosts are as comparable as their clocks are synchronized.
// The step of a figure is the rank's ProfilerStep#k range on the CPU, matched across ranks by name; a trace without
// ProfilerStep has one window over the whole trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/output_table.h"
#include "trace/ranks.h"
#include "trace/trace.h"

namespace ladder {

// Which side an event is on in the Distributed view.
bool is_comm_kernel(const Event& e);     // a kernel named nccl*
bool is_cpu_collective(const Event& e);  // a cpu_op or user_annotation named gloo:* or nccl:*

// A union of time intervals: sorted, disjoint, touching ones merged.
struct Spans {
  std::vector<std::pair<int64_t, int64_t>> v;  // [from, to)
  static Spans of(std::vector<std::pair<int64_t, int64_t>> intervals);
  int64_t length_in(int64_t from, int64_t to) const;  // the time inside [from, to) that the union covers
  Spans intersect(const Spans& o) const;
};

// One rank's figures, everything the view needs of its trace: the trace itself can be dropped once this is made.
struct RankFigures {
  int rank = 0;
  std::string path;
  struct Step {
    std::string name;
    int64_t ts_ns = 0, end_ns = 0;
  };
  std::vector<Step> steps;  // in time order
  Spans computation, communication, overlap;  // over the whole trace
  bool computation_is_cpu = false;            // the rank ran no kernel: its CPU ops stood for computation
  struct Collective {
    std::string name;
    int64_t ts_ns = 0, end_ns = 0;
    int step = -1;  // index in steps, -1: outside every step
  };
  std::vector<Collective> collectives;  // in start order
};
RankFigures rank_figures(const Trace& trace, int rank, const std::string& path);

// The Distributed view's four parts of one window of one rank (computation and communication without the overlap).
struct CommCompSplit {
  int64_t wall_ns = 0, computation_ns = 0, overlapping_ns = 0, communication_ns = 0, other_ns = 0;
};
CommCompSplit comm_comp_split(const RankFigures& r, int64_t from_ns, int64_t to_ns);

// Per collective matched across ranks: each rank's wait (last arrival - its own arrival), by rank index in `ranks`.
struct MatchedCollective {
  std::string name;
  int occurrence = 0;              // the k-th of this name
  std::vector<int64_t> arrival;    // per rank index; -1 where that rank has no k-th collective of this name
  std::vector<int> step;           // per rank index: the step (in that rank's steps) it started in, -1 none
  int last = -1;                   // the rank index that arrived last
  int64_t wait_ns(size_t r) const;  // 0 where the rank has none
};
std::vector<MatchedCollective> match_collectives(const std::vector<RankFigures>& ranks);

// The view: the three tables as text; OutputFormat::Csv / Json: one record per step and rank (and per rank, the mean
// of the steps) with step, rank, wall_us, slowest, computation_us, overlapping_us, communication_us, other_us,
// collectives, wait_us, arrived_last, caused_wait_us. `step`: "" for every step, "3" or "ProfilerStep#3" for one;
// a step no rank has is a TraceError naming the steps there are.
std::string ranks_view(const std::vector<RankFigures>& ranks, const std::string& step, OutputFormat format);

// Reads every trace of `folder` (a single file: rank 0, or the rank it says it is) and makes its figures, at most
// `threads` files at a time (0: one per core); each trace's events are dropped once its figures are made.
std::vector<RankFigures> load_rank_figures(const std::string& path, uint64_t max_json_bytes, int threads = 0);

}  // namespace ladder
