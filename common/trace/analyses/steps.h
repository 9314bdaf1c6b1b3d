// The steps of a trace (ProfilerStep#k) and what the regime question needs of each: kernels, wall time, GPU busy
// time, CPU time in launch and sync calls (steps_table.h prints them). The same answers for a live run, one of our
// files, or torch's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/index.h"
#include "trace/model/trace.h"

namespace ladder {

// One ProfilerStep#k of a trace, with what the regime question needs.
struct StepStats {
  std::string name;              // "ProfilerStep#2"
  int64_t ts_ns = 0, dur_ns = 0;  // the step's wall time on the CPU lane
  int kernels = 0;                // kernels launched from inside the step (by correlation/External id, else by time)
  int64_t gpu_busy_ns = 0;        // union of the GPU activities' intervals (kernels, memcpy, memset)
  int64_t launch_ns = 0;          // time in launch calls (cudaLaunchKernel*, cuLaunchKernel*, cudaGraphLaunch)
  int64_t sync_ns = 0;            // time in cudaDeviceSynchronize/cudaStreamSynchronize
  std::vector<const Event*> gpu_events;  // in time order
};
std::vector<StepStats> step_stats(const TraceIndex& index);
std::vector<StepStats> step_stats(const Trace& trace);

// The index in index.steps() of the step named `step`: "3" means ProfilerStep#3, a full name matches itself; -1 if
// `step` is empty. Throws TraceError naming `trace_name` and listing the steps there are when there is no such step.
int find_step(const TraceIndex& index, const std::string& step, const std::string& trace_name);

// A view's step argument: -1 (every step) or an index in index.steps(), else UsageError (a program calling a view
// with a step the trace does not hold gets one line, not a read past the steps).
void check_step_index(const TraceIndex& index, int k);

// The events of step k alone (an index in index.steps(), checked as check_step_index does): the host events that start
// in it, the GPU work its launches put on the GPU, and its [memory] records; the rest of the trace as it is. What
// `ladder-trace summary --step` tabulates (torch's key_averages() of a profiler whose schedule recorded that step).
Trace step_trace(const TraceIndex& index, int k);

}  // namespace ladder
