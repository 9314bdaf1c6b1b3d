// What bounds each step of a trace, measured, and which rung of the ladder teaches the fix (`ladder-trace advise`
// prints it: advice_view.h). Each finding is one line: what it is, the figure it rests on, and the rung. A finding is
// made only from a figure the trace gives; where the figure is under its threshold there is no finding.
//
// The findings, each from an analysis there is, and the rung that answers it:
//   launch-bound        the GPU idle with nothing queued, waiting for the CPU to launch      -> 01, 02's CUDA Graphs
//   gpu-bound           the GPU computing most of the step (kernels that are not communication: exposed
//                       communication is a finding of its own): only its kernels' speed shortens it -> 01 (size 4096)
//   elementwise-chain   memory-bound elementwise kernels back to back on a stream: bytes moved
//                       and % of the bandwidth; fusing them removes the tensors between them -> 03 (fusion), 04
//   epilogue-candidate  one memory-bound elementwise kernel right after a GEMM on its stream -> 04 (epilogue)
//   gemm-below-peak     a GEMM far below its peak TFLOP/s                                    -> 04
//   held-for-backward   memory the forward leaves allocated for the backward                 -> 06 (its --mode)
//   exposed-communication  communication that no computation overlapped (a folder of ranks)  -> 07 (overlap)
//   slowest-rank        the rank whose step took longest, and by how much                    -> 07
//   straggler           the rank the others waited for at the collectives                    -> 07
//
// "Waiting for the host" (launch-bound): a moment of the step at which no GPU activity ran and none was queued, that
// is, none whose launch call had returned and which had not started yet. It is the part of the GPU's idle time that
// only a faster CPU side (fewer launches, one graph launch) can fill. traceinsight's host wait (idle_time.h) counts
// whole gaps between kernels of one stream instead; both are printed by the Python frames.
//
// "Held for the backward": in a profile_memory trace, the allocator's level ("Total Allocated", memory.h's rules) when
// the step's backward starts (its first autograd::engine::evaluate_function op, or a range whose name holds
// "backward" or "bwd") above its level at the step's start, per GPU: everything the forward made and still holds, the
// tensors kept for the backward and the forward's output alike.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/peaks.h"
#include "trace/analyses/ranks_figures.h"
#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

// Every threshold of the advice, in one place, with why it has its value.
struct AdviceThresholds {
  // launch-bound: the GPU idle for at least half the step, and at least half of that idle with nothing queued. Half:
  // then removing the launch overhead at most halves the step, the least that changes what bounds it.
  double idle_share = 0.5;
  double host_wait_share = 0.5;
  // gpu-bound: the GPU computing 80% of the step or more. Past 80% the CPU side can at most take a fifth off; the
  // kernels are what is left to make faster.
  double busy_share = 0.8;
  // elementwise-chain, epilogue-candidate: the kernels take 5% of the step's wall time or more: fusing them can save at
  // most their time, and under 5% that is about the step-to-step spread of the committed traces (1-3%) and no more.
  // (Of the wall time, not the GPU's: in a launch-bound step the kernels' own speed is not what bounds it.)
  double elementwise_share = 0.05;
  // gemm-below-peak: under half of the GPU's datasheet peak, and 10% of the step's wall time or more. cuBLAS's GEMMs at
  // the ladder's shapes reach 65-77% of it (chapter 03, 01 at 4096); under half is a shape or a kernel to change.
  double gemm_peak_share = 0.5;
  double gemm_time_share = 0.1;
  // held-for-backward: what the forward leaves allocated is 25% or more of the step's peak above its start. Then the
  // held tensors, not the backward's own temporaries, set the peak; they also grow with the number of layers.
  double held_share = 0.25;
  // exposed-communication: communication that no computation overlapped, 10% of the step or more (as the GEMM rule:
  // under it, overlapping saves less than the step-to-step spread of 07's traces).
  double exposed_share = 0.1;
  // slowest-rank: the slowest rank's step 5% longer than the fastest's, or more (the spread between steps of one rank
  // in 07's traces is about that).
  double rank_spread = 0.05;
};

struct Finding {
  int rank = -1;  // -1: one trace, not a folder of ranks
  int step = -1;  // index in the trace's steps
  std::string step_name;
  std::string kind;             // "launch-bound", ...
  double figure = 0;            // the measured figure the finding rests on, in `unit`
  std::string unit;             // "us", "MB", "%"
  double share = std::nan("");  // the figure's share of the step, %, where it has one
  std::string detail;           // one line: what was measured
  std::string rung;             // where the ladder teaches the fix
};

// The findings of each step (`step` >= 0: that one only), in step order, then in the order of the list above.
// `peak`: the GPU's, from peaks.h (tflops/gbps 0: no GEMM or bandwidth figure against it).
std::vector<Finding> advise(const TraceIndex& index, int step, const Peak& peak,
                            const AdviceThresholds& th = AdviceThresholds{});

// The findings of a folder of ranks: per step, exposed communication per rank, the slowest rank, the straggler.
std::vector<Finding> advise_ranks(const std::vector<RankFigures>& ranks, const RanksTable& table,
                                  const AdviceThresholds& th = AdviceThresholds{});

// A whole trace or folder, as `ladder-trace advise` shows it: each rank's findings (with its rank when `folder`), and
// for a folder the ranks' findings too, each step's together in the order the ranks ran the steps. `step`: "" for every
// step, "3" or "ProfilerStep#3" for one (find_step's words). The indexes' traces must be the ranks' (rank, path).
struct RankIndex {
  int rank = 0;
  std::string path;
  const TraceIndex* index = nullptr;
};
std::vector<Finding> advise_all(const std::vector<RankIndex>& ranks, bool folder, const std::string& step,
                                const AdviceThresholds& th = AdviceThresholds{});

// As a table "advice": step, finding, figure, unit, share (%), detail, rung, and rank last for a folder. share: of
// the step's wall time; of the step's peak above its start for held memory.
Table advice_table(const std::vector<Finding>& findings);

}  // namespace ladder
