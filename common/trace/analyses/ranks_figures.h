// A folder of traces, one per rank of a distributed run, side by side (`ladder-trace ranks` prints it: ranks_view.h).
// Three questions:
//  1. Step time per rank, and which rank was the slowest in each step (the others wait for it at the next collective).
//  2. Communication against computation, as the TensorBoard profiler plugin's Distributed view defined them
//     (torch_tb_profiler/profiler/overall_parser.py, run_generator.py, before kineto removed the plugin):
//       computation   = the union of the computation's time in the step, minus the overlap
//       overlapping   = the time computation and communication ran at once
//       communication = the union of communication's time, minus the overlap
//       other         = the step's wall time minus the three (the CPU alone, or nothing)
//     with communication and computation as communication.h defines them, for everything that reads ranks: on a rank
//     with NCCL kernels, communication is those kernels and computation the other kernels (copies and sets are
//     neither), so overlap% is HTA's get_comm_comp_overlap; on a rank without (gloo), communication is its CPU
//     collective ranges (record_param_comms, nccl:*, gloo:*, c10d::*), computation its kernels, or its other CPU ops
//     on a rank that ran no kernel at all; there overlap% is "-", undefined, as HTA's NaN: no kernel to overlap.
//  3. Who waits for whom. A collective completes for all ranks only once the last one has arrived, so each rank
//     waits from its own arrival (its NCCL kernel's start; without NCCL kernels, its gloo:*/nccl:* range's start) to
//     the last arrival, and never past its own kernel's end. Collectives are matched across ranks by what identifies
//     them, never by their place in a step: by process group ("Process Group Name", which Kineto copies onto the
//     kernel) and the collective's "Seq" where the trace records one; else by their order in the process group,
//     counted from a point all ranks share: a rank's trace may begin a collective or more before another's, so each
//     rank's order is shifted to agree with the first rank's by the collectives' end times (a collective ends on every
//     rank at almost the same moment, when the last one has arrived and the data moved), and the spread of the ends
//     of every matched collective is printed as the check. A collective some ranks' traces hold and others' do not is
//     reported as unmatched, not guessed. A wait counts in the step that launched the collective (the launch call's
//     ProfilerStep#k on the CPU), whenever the kernel ran; a rank's waits in a step are the union of its waiting
//     intervals (two collectives on two streams can wait at once), so they never exceed the step's span from its CPU
//     start to the end of the GPU work it launched (the GPU can run behind the CPU: a wait may lie after the CPU
//     range). The straggler of a step is the rank the others waited for longest. Times are compared as the files
//     stamp them (the wall clock, CLOCK_REALTIME): ranks on one host share it, ranks on several hosts are as
//     comparable as their clocks are synchronized.
// The step of a figure is the rank's ProfilerStep#k range on the CPU, matched across ranks by name; a trace without
// ProfilerStep has one window over the whole trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/table.h"
#include "trace/model/ranks.h"
#include "trace/model/trace.h"

namespace ladder {

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
    int64_t ts_ns = 0, end_ns = 0;  // the CPU range
    int64_t work_end_ns = 0;        // the end of the step's GPU work (launched in it), or end_ns if that is later
  };
  std::vector<Step> steps;  // in time order
  Spans computation, communication, overlap;  // over the whole trace
  bool computation_is_cpu = false;            // the rank ran no kernel: its CPU ops stood for computation
  bool comm_kernels = false;                  // the rank ran NCCL kernels: overlap% is defined
  struct Collective {
    std::string name;
    // Its process group's name. A kernel whose launch fell before the capture window carries no args (Kineto copies
    // them from the launching op): it takes the group of the other collectives on its stream (a communicator has one
    // stream), and "" where none names one.
    std::string group;
    int64_t seq = -1;   // "Seq", -1 where the trace records none
    int64_t ts_ns = 0, end_ns = 0;
    int64_t pid = 0, tid = 0;  // where it ran: the kernel's device and stream, or the range's process and thread
    int step = -1;  // index in steps of the step that launched it, -1: none
  };
  std::vector<Collective> collectives;  // in start order
};
RankFigures rank_figures(const Trace& trace, int rank, const std::string& path);

// The Distributed view's four parts of one window of one rank (computation and communication without the overlap).
struct CommCompSplit {
  int64_t wall_ns = 0, computation_ns = 0, overlapping_ns = 0, communication_ns = 0, other_ns = 0;
};
CommCompSplit comm_comp_split(const RankFigures& r, int64_t from_ns, int64_t to_ns);

// One collective across ranks: per rank index in `ranks`, which of its collectives it is (-1: that rank's trace does
// not hold it). Complete when every rank that has collectives of the group holds it; only complete ones have waits.
struct MatchedCollective {
  std::string group;
  int64_t key = 0;               // the Seq, or the place in the group's order (the first rank's numbering)
  std::string name;              // the first holder's name for it
  std::vector<int> index;        // per rank index: into ranks[r].collectives, -1 none
  std::vector<int64_t> arrival;  // per rank index: the start, -1 none
  std::vector<int64_t> end;      // per rank index: the end, -1 none
  bool complete = false;
  bool names_agree = true;       // every holder names it the same (the same NCCL kernel or gloo range)
  int last = -1;                 // the rank index that arrived last (complete ones only)
  int64_t wait_ns(size_t r) const;  // min(last arrival, own end) - own arrival; 0 where incomplete or absent
  int64_t end_spread_ns() const;    // the latest end minus the earliest, over the holders
};
struct Matching {
  std::vector<MatchedCollective> collectives;  // in the order of the last arrival (incomplete ones: the first)
  bool by_seq = false;                         // every group matched by "Seq"
  int complete = 0, incomplete = 0;
  int64_t max_end_spread_ns = 0;               // over the complete ones: the check of the matching
  int name_mismatches = 0;                     // complete ones whose holders name them differently
};
Matching match_collectives(const std::vector<RankFigures>& ranks);

// The figures of the view's three tables, before any layout: per step (by name, in the order the first rank that has
// it ran it) and rank index.
struct RankStepCell {
  bool present = false;  // the rank has the step
  CommCompSplit split;
  int collectives = 0, arrived_last = 0, unmatched = 0;  // unmatched: held by some ranks' traces only
  int64_t wait_ns = 0;    // the union of the rank's waiting intervals
  int64_t caused_ns = 0;  // the waits of the others at the collectives this rank arrived last at
};
struct RanksTable {
  std::vector<std::string> steps;
  std::vector<std::vector<RankStepCell>> cells;  // [step][rank index]
  std::vector<int> slowest, straggler;  // per step: the rank index with the longest wall time, and the one the others
                                        // waited for longest; -1 none
  std::vector<RankStepCell> mean;  // per rank index: the mean over the steps it has (times; counts stay totals)
  Matching matching;
};
// `step`: "" for every step, "3" or "ProfilerStep#3" for one; a step no rank has is a TraceError naming the steps
// there are.
RanksTable ranks_table(const std::vector<RankFigures>& ranks, const std::string& step);

// The table as a typed table (table.h): what `ladder-trace ranks --csv` prints and the Python package's ranks()
// returns. One row per step and rank, then per rank the mean of its steps ("mean of N", only with more than one
// step): step, wall_us, slowest, straggler (1 for the step's slowest rank and its straggler, else 0; NaN in the mean
// rows), computation_us, overlapping_us, communication_us, other_us, comp_comm_overlap_pctg (HTA's
// get_comm_comp_overlap over the step, unrounded: NaN on a rank without NCCL kernels or a step without their time),
// collectives, unmatched, wait_us, arrived_last, caused_wait_us, rank (last, as in HTA's frames). Times in
// microseconds at full precision, the means exact (the sum of the steps' nanoseconds over their count); the counts of
// a mean row are the totals of its steps.
Table ranks_frame(const std::vector<RankFigures>& ranks, const RanksTable& table);

// Reads every trace of `folder` (a single file: rank 0, or the rank it says it is) and makes its figures, at most
// `threads` files at a time (0: one per core); each trace's events are dropped once its figures are made.
std::vector<RankFigures> load_rank_figures(const std::string& path, uint64_t max_json_bytes, int threads = 0);

}  // namespace ladder
