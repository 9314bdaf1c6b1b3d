// Views computed from a `Trace` through its TraceIndex: the per-step statistics, torch's key_averages() table, the
// regime table, and the work an op does. They give the same answers for a live run, one of our files, or a file
// torch.profiler wrote.
#pragma once

#include <string>
#include <vector>

#include "trace/index.h"
#include "trace/trace.h"

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

// "Per step: is the GPU waiting for the CPU, or the CPU for the GPU?": kernels, wall time, GPU busy time and its share,
// CPU time in launch calls and in synchronizing, one row per step.
std::string regime_table(const TraceIndex& index);

// The key_averages().table(sort_by="cuda_time_total") layout: Name, Self CPU %, Self CPU, CPU total %, CPU total,
// CPU time avg, Self CUDA, Self CUDA %, CUDA total, CUDA time avg, # of Calls, then the two footers.
// Self CPU = own time minus direct children (same thread, nested); an op's CUDA total = its kernels (matched by
// External id to the innermost op) plus its children's. ProfilerStep#k rows aggregate as "ProfilerStep*".
std::string summary_table(const TraceIndex& index, int row_limit = 100);
std::string summary_table(const Trace& trace, int row_limit = 100);

// Work an op does, derived from its recorded input dims and dtypes: FLOPs for GEMMs, bytes read + written for every
// op we know (mm, addmm, matmul, linear, add, mul, gelu, gelu_mul, and their aten:: names). false if unknown.
struct Work {
  double flops = 0;
  double bytes = 0;
};
bool op_work(const Event& cpu_op, Work* work);

// The cpu_op (innermost, by External id) that launched `gpu_event`, an element of trace.events, or null. Builds an
// index: in a loop, ask one TraceIndex (op_of) instead.
const Event* launching_op(const Trace& trace, const Event& gpu_event);

}  // namespace ladder
