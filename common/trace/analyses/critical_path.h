// The critical path of a step: the chain of CPU time, launches and GPU activities that sets how long the step's work
// took, from the step's start to its end: the end of the last GPU activity it launched, or the end of its CPU range
// when that is later (then the whole path is cpu_bound: the GPU finished first). Ours, simpler than traceinsight's
// (hta/analyzers/critical_path_analysis.py builds a graph of every op, launch, kernel and synchronization and takes its
// longest path); it walks back from the end:
//   - from a GPU activity A on its stream: if the activity before it on the stream (in the same step) ended at or
//     after A's launch call returned, A waited for it: the path goes to it, and the gap between them is
//     gpu_kernel_kernel_overhead;
//   - else A waited for its launch: the path goes to the launch call, the time from the call's return to A's start is
//     gpu_kernel_launch_overhead, and everything from the step's start to the call's return is cpu_bound (the CPU's
//     work up to that launch; we do not split it further).
// Each activity on the path is gpu_compute_bound (gpu_communication_bound for a collective's kernel). The categories
// are traceinsight's bound_by names; its path starts where its graph's longest path starts, so where the GPU ran
// behind the CPU its path holds no cpu_bound time and ours does: the GPU parts (compute, kernel-kernel overhead)
// are the ones to compare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

struct PathEdge {
  int step = 0;
  int event = -1;  // the activity (its run, or the gap before it), or the launch call; -1: the CPU before the launch
  std::string bound_by;  // "cpu_bound", "gpu_kernel_launch_overhead", "gpu_kernel_kernel_overhead",
                         // "gpu_compute_bound", "gpu_communication_bound"
  int64_t ns = 0;
};

// Per step (`step` >= 0: that one), its path from the start to the end, in time order.
std::vector<PathEdge> critical_path(const TraceIndex& index, int step = -1);

// As a table "critical_path": step, event (its name; "" for the CPU's time), bound_by, duration (us).
Table critical_path_table(const std::vector<PathEdge>& edges, const TraceIndex& index);

}  // namespace ladder
