// Frequent kernel sequences: the GPU activities each op launched, in the order they ran, grouped by (op, sequence) and
// counted, with their total GPU and CPU time: traceinsight's (HTA's) get_frequent_cuda_kernel_sequences
// (hta/analyzers/cuda_kernel_analysis.py). A sequence that recurs is where fusing pays: every occurrence saves.
// As traceinsight defines it:
//  - the ops are the host events whose name holds `operator_name` (a substring: "aten::linear", "ProfilerStep"), of
//    those only the shallowest (the least nesting depth on their thread, over the whole trace: an op inside another
//    such op is not counted again), and only those that launched at least `min_pattern_len` activities;
//  - an op's activities are those launched by calls that started while it ran, on any thread of its process (so a
//    ProfilerStep's hold the backward's kernels, launched from the autograd thread, as traceinsight's do), by start;
//    its pattern is its name, then theirs, joined by "|";
//  - GPU kernel duration: the activities' durations summed, over every occurrence; CPU op duration: the ops'.
//  - rows by count, most first, then by pattern.
// Differences: traceinsight reads only what it keeps of the trace (hta_window.h: the last step's ops are dropped), so
// on a trace with steps its rows lack the last step's ops; ours count every op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

struct KernelSequence {
  std::string op;                    // the op's name
  std::vector<std::string> kernels;  // the activities' names, by start
  int count = 0;
  int64_t gpu_ns = 0, cpu_ns = 0;
  std::string pattern() const;  // op|kernel|kernel...
};

std::vector<KernelSequence> kernel_sequences(const TraceIndex& index, const std::string& operator_name,
                                             int min_pattern_len = 3);

// As a table "kernel_sequences": pattern, count, GPU kernel duration (us), CPU op duration (us), kernels (how many
// activities in the pattern) — traceinsight's column names.
Table kernel_sequences_table(const std::vector<KernelSequence>& rows);

}  // namespace ladder
