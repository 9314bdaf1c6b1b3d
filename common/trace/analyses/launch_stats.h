// Kernel launch statistics, per correlation id: how long the CPU spent in the call that launched a GPU activity, how
// long the activity ran, and how long it waited on the GPU after the call returned: traceinsight's (HTA's)
// get_cuda_kernel_launch_stats (hta/analyzers/cuda_kernel_analysis.py, cuda_kernel_launch_stats), with its outliers.
//   cpu_duration   the launch call's duration
//   gpu_duration   the activity's duration
//   launch_delay   the activity's start minus the call's end, 0 where negative (the GPU started it before the call
//                  returned)
// Outliers, with traceinsight's default cut-offs: a call longer than kLaunchRuntimeCutoffNs (50 us), a launch delay
// longer than kLaunchDelayCutoffNs (100 us), and an activity shorter than its call (the GPU finished before the CPU
// could have launched another: launch-bound).
// Which calls: traceinsight takes only calls named cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync and
// cudaMemsetAsync. cuBLASLt and Triton launch through the driver (cuLaunchKernelEx, cuLaunchKernel), and a CUDA graph
// through cudaGraphLaunch, so their kernels are not in traceinsight's table. Ours takes every launch call
// (trace.h's is_launch_call) and every async copy and set, and the column "hta" says which rows traceinsight has: the
// rows with hta = 1 are its table. A graph launch has one row per activity it ran, as every call with several
// activities does (traceinsight's inner join on the correlation does the same).
#pragma once

#include <cstdint>
#include <vector>

#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

constexpr int64_t kLaunchRuntimeCutoffNs = 50000;
constexpr int64_t kLaunchDelayCutoffNs = 100000;

struct LaunchStat {
  int call = -1, activity = -1;  // event indices
  int step = -1;                 // the call's step, -1 none
  int64_t correlation = -1;
  int64_t cpu_ns = 0, gpu_ns = 0, delay_ns = 0;
  bool hta = false;  // a call traceinsight counts
};

// In the order of the calls' start, then the activities'.
std::vector<LaunchStat> launch_stats(const TraceIndex& index);
// Whether traceinsight 0.6.1 counts a call of this name.
bool hta_launch_name(const std::string& name);

// As a table "launch_stats": step, correlation, name (the activity's), cpu_duration, gpu_duration, launch_delay (us),
// runtime_outlier, delay_outlier, gpu_shorter (0/1), hta (0/1).
Table launch_stats_table(const std::vector<LaunchStat>& rows, const TraceIndex& index);

}  // namespace ladder
